// A checkpoint opened for reading, whatever its layout: one safetensors file, a directory of safetensors
// shards (with `model.safetensors.index.json` naming the shard of every tensor, or else every *.safetensors
// file in it), or a raw BF16 file of a given shape. Files are memory-mapped; TensorViews stay valid for
// the WeightSource's lifetime.
//
// Tensor order (it decides the store's order for --all-tensors): shards in file-name order, and inside a
// file by data offset. Tensor names are unique across shards (checked).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/json_io.h"
#include "exec/mapped_file.h"
#include "exec/safetensors.h"

namespace moesim::exec {

class WeightSource {
 public:
  // `raw_shape` given => `path` is a raw BF16 file of that shape. Throws moesim::Error naming the file.
  static WeightSource open(const std::string& path,
                           const std::optional<std::vector<uint64_t>>& raw_shape = {});

  const std::string& path() const { return path_; }
  const std::string& format() const { return format_; }  // "safetensors", "safetensors-sharded", "raw-bf16"
  const std::vector<TensorView>& tensors() const { return tensors_; }
  const TensorView* find(const std::string& name) const;  // nullptr when absent
  const Json& metadata() const { return metadata_; }      // __metadata__ of the first shard
  uint64_t total_elements() const;

 private:
  std::string path_;
  std::string format_;
  std::vector<std::shared_ptr<MappedFile>> maps_;
  std::vector<TensorView> tensors_;
  std::map<std::string, size_t> by_name_;
  Json metadata_ = Json::object();
  void add(TensorView t);
};

}  // namespace moesim::exec
