#include "traces/export_oracle_general.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <vector>

#include "base/atomic_file.h"
#include "base/error.h"

namespace moesim::traces {
namespace {

// Calls out(bytes, n) with consecutive chunks of the encoded trace.
template <typename Out>
void encode(const LookupStream& s, std::span<const uint64_t> expert_bytes, Out&& out) {
  if constexpr (std::endian::native != std::endian::little)
    throw Error("oracleGeneral export: little-endian hosts only");
  std::vector<uint32_t> size(s.layers, 1);
  for (uint32_t l = 0; l < s.layers && !expert_bytes.empty(); ++l) {
    const uint64_t b = expert_bytes[std::min<size_t>(l, expert_bytes.size() - 1)];
    if (b == 0 || b > UINT32_MAX)
      throw Error("oracleGeneral export: expert size of layer " + std::to_string(l) + " (" + std::to_string(b) +
                  " bytes) does not fit its u32 obj_size");
    size[l] = static_cast<uint32_t>(b);
  }
  // Next request number per lookup: a backward scan over the lookups.
  const size_t n = s.lookups();
  std::vector<int64_t> next(n);
  {
    std::vector<int64_t> last(size_t{s.layers} * s.experts, -1);
    for (size_t i = n; i-- > 0;) {
      next[i] = last[s.key[i]];
      last[s.key[i]] = static_cast<int64_t>(i) + 1;  // 1-based request number
    }
  }
  constexpr size_t kChunk = 1 << 16;  // records per write
  std::vector<unsigned char> buf(kChunk * kOracleGeneralRecordBytes);
  size_t filled = 0;
  for (size_t inv = 0; inv < s.invocations(); ++inv) {
    const uint32_t t = static_cast<uint32_t>(inv), layer_size = size[s.inv_layer[inv]];
    for (uint32_t i = s.inv_begin[inv]; i < s.inv_begin[inv + 1]; ++i) {
      unsigned char* r = buf.data() + filled * kOracleGeneralRecordBytes;
      const uint64_t id = s.key[i];
      std::memcpy(r, &t, 4);
      std::memcpy(r + 4, &id, 8);
      std::memcpy(r + 12, &layer_size, 4);
      std::memcpy(r + 16, &next[i], 8);
      if (++filled == kChunk) {
        out(buf.data(), filled * kOracleGeneralRecordBytes);
        filled = 0;
      }
    }
  }
  if (filled) out(buf.data(), filled * kOracleGeneralRecordBytes);
}

}  // namespace

std::string oracle_general_bytes(const LookupStream& s, std::span<const uint64_t> expert_bytes) {
  std::string out;
  out.reserve(s.lookups() * kOracleGeneralRecordBytes);
  encode(s, expert_bytes, [&](const void* p, size_t n) { out.append(static_cast<const char*>(p), n); });
  return out;
}

void write_oracle_general(const LookupStream& s, std::span<const uint64_t> expert_bytes, const std::string& path) {
  AtomicFile f(path);
  encode(s, expert_bytes, [&](const void* p, size_t n) { f.write(p, n); });
  f.commit();
}

}  // namespace moesim::traces
