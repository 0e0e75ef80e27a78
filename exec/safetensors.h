// The safetensors checkpoint format (huggingface/safetensors): an 8-byte little-endian header length N,
// N bytes of JSON {name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {str: str}},
// then the data section; offsets are relative to the start of the data section (byte 8 + N).
//
// parse_safetensors() validates everything before any offset is trusted: N within the file, the JSON well
// formed and an object, no duplicate names, every entry exactly {dtype, shape, data_offsets}, a known dtype,
// shape dimensions that do not overflow, begin <= end <= data size, end - begin == prod(shape) * dtype size,
// and no two tensors overlapping. Errors are moesim::Error "FILE: at byte OFFSET: tensor 'NAME': ...".
// moesim reads BF16, F16 and F32 values; other known dtypes (I64, F64, U8, ...) are parsed and validated so
// a checkpoint holding them still opens, but their values cannot be cast to BF16.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/json_io.h"
#include "core/model_spec.h"

namespace moesim::exec {

struct TensorView {
  std::string name;
  std::string dtype_name;       // as written in the file: "BF16", "F32", "I64", ...
  std::optional<DType> dtype;   // set for BF16, F16, F32 (the dtypes moesim reads)
  std::vector<uint64_t> shape;  // may be empty (a scalar)
  uint64_t elements = 0;
  const uint8_t* data = nullptr;  // into the mapped file; not aligned
  uint64_t size_bytes = 0;
  std::string file;          // the file that holds it
  uint64_t file_offset = 0;  // absolute byte offset of the data in `file`
};

struct SafetensorsImage {
  std::vector<TensorView> tensors;  // in order of data offset
  Json metadata = Json::object();   // "__metadata__", empty when absent
  uint64_t data_start = 0;          // 8 + N
};

// Parses and validates a whole safetensors file held in memory; `origin` names it in errors. Tensor data
// pointers point into [data, data + size).
SafetensorsImage parse_safetensors(const uint8_t* data, size_t size, const std::string& origin);

// Element size of a safetensors dtype name; 0 when unknown.
uint32_t safetensors_dtype_size(const std::string& dtype_name);
const char* safetensors_dtype_name(DType d);  // "BF16", "F16", "F32"

// Casts a tensor's values to BF16 (round to nearest even, kernels/bf16.h); BF16 input is copied unchanged.
// `out` holds t.elements values. Throws moesim::Error naming the tensor when its dtype is not BF16/F16/F32.
void tensor_to_bf16(const TensorView& t, uint16_t* out);

// Streaming writer: the header is written by the constructor (offsets follow the entries' order, packed
// without gaps), then each tensor's bytes in order with write(), then commit(). Output goes through
// AtomicFile, so an error leaves no partial file.
struct SafetensorsEntry {
  std::string name;
  DType dtype = DType::BF16;
  std::vector<uint64_t> shape;
  uint64_t size_bytes() const;
};

class SafetensorsWriter {
 public:
  SafetensorsWriter(const std::string& path, std::vector<SafetensorsEntry> entries, const Json& metadata);
  ~SafetensorsWriter();
  SafetensorsWriter(const SafetensorsWriter&) = delete;
  SafetensorsWriter& operator=(const SafetensorsWriter&) = delete;

  // Appends bytes of the current tensor (may be called several times per tensor; sizes are checked).
  void write(const void* data, size_t size);
  void commit();  // throws when not every tensor was fully written

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace moesim::exec
