#include "serving/zipmoe_loads.h"

#include <algorithm>
#include <cmath>

#include "base/error.h"

namespace moesim::serving {
namespace {

bool has_sm(ExpertState s) {
  return s == ExpertState::kCompressed || s == ExpertState::kSM;
}
bool has_e(ExpertState s) {
  return s == ExpertState::kCompressed || s == ExpertState::kE;
}

class ZipMoeLoads final : public LoadLayout {
 public:
  ZipMoeLoads(const TensorLayout& layout, bool fused) : layout_(layout), fused_(fused) {
    if (!layout.compressed) throw Error("zipmoe loads: the layout must be the compressed split");
  }

  uint32_t shards() const override { return std::max(layout_.shards, 1u); }

  void add_load(const TensorLoad& load, OpGraph& g, std::vector<uint32_t>& tails) const override {
    const bool full = load.to == ExpertState::kFull;
    if (load.from == ExpertState::kFull) throw Error("zipmoe loads: a full tensor has nothing to load");
    // Parts to read: a load to F reads what the cache does not hold; a partial prefetch what it will hold
    // and does not.
    const bool read_e = !has_e(load.from) && (full || has_e(load.to));
    const bool read_sm = !has_sm(load.from) && (full || has_sm(load.to));
    auto make = [&](OpKind k, uint64_t b) {
      Op o = load.base;
      o.kind = k;
      o.resource = k == OpKind::kRecover ? load.recover_on : default_resource(k);
      o.bytes = b;
      return o;
    };
    const auto sm =
        static_cast<uint64_t>(std::llround(static_cast<double>(load.bytes) * layout_.sm_fraction));
    const uint64_t e_raw = load.bytes - sm;
    const uint32_t k = shards();
    thread_local std::vector<uint32_t> parts;  // the ops that the transfer or recovery joins
    parts.clear();
    for (uint32_t s = 0; s < k; ++s) {
      const uint64_t raw = e_raw / k + (s < e_raw % k ? 1 : 0);
      const auto compressed = static_cast<uint64_t>(std::ceil(static_cast<double>(raw) * layout_.e_ratio));
      Op r = make(OpKind::kSsdRead, compressed);
      r.shard = static_cast<uint16_t>(s);
      r.part = TensorPart::kE;
      if (!full) {  // kept compressed: the read alone
        if (read_e) g.add(r, load.roots);
        continue;
      }
      Op dc = make(OpKind::kDecompress, raw);
      dc.shard = static_cast<uint16_t>(s);
      dc.part = TensorPart::kE;
      if (read_e && fused_) {                               // the worker reads the shard itself (§4)
        dc.read_bytes = std::max<uint64_t>(compressed, 1);  // an empty shard still has its chunk to read
        parts.push_back(g.add(dc, load.roots));
      } else if (read_e) {
        const uint32_t read = g.add(r, load.roots);
        parts.push_back(g.add(dc, {read}));
      } else {
        parts.push_back(g.add(dc, load.roots));
      }
    }
    if (read_sm) {
      Op r = make(OpKind::kSsdRead, sm);
      r.part = TensorPart::kSm;
      parts.push_back(g.add(r, load.roots));
    }
    if (!full) return;
    if (load.recover_on == ResourceClass::kGpu) {
      const uint32_t xfer = g.add(make(OpKind::kTransfer, load.bytes), parts);
      tails.push_back(g.add(make(OpKind::kRecover, load.bytes), {xfer}));
    } else {  // recovered on the CPU, then made visible to the GPU
      const uint32_t rec = g.add(make(OpKind::kRecover, load.bytes), parts);
      tails.push_back(
          load.compute_on == ResourceClass::kGpu ? g.add(make(OpKind::kTransfer, load.bytes), {rec}) : rec);
    }
  }

 private:
  TensorLayout layout_;
  bool fused_;
};

}  // namespace

std::shared_ptr<const LoadLayout> zipmoe_loads(const TensorLayout& layout, bool fused_e_reads) {
  return std::make_shared<ZipMoeLoads>(layout, fused_e_reads);
}

}  // namespace moesim::serving
