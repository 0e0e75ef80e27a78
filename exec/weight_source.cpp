#include "exec/weight_source.h"

#include <algorithm>
#include <filesystem>
#include <set>

#include "base/error.h"
#include "base/json_schema.h"
#include "exec/raw_weights.h"

namespace moesim::exec {
namespace fs = std::filesystem;

void WeightSource::add(TensorView t) {
  if (by_name_.count(t.name))
    throw Error(t.file + ": tensor '" + t.name + "' also appears in " + tensors_[by_name_[t.name]].file);
  by_name_[t.name] = tensors_.size();
  tensors_.push_back(std::move(t));
}

const TensorView* WeightSource::find(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &tensors_[it->second];
}

uint64_t WeightSource::total_elements() const {
  uint64_t n = 0;
  for (const auto& t : tensors_) n += t.elements;
  return n;
}

WeightSource WeightSource::open(const std::string& path,
                                const std::optional<std::vector<uint64_t>>& raw_shape) {
  WeightSource w;
  w.path_ = path;
  std::error_code ec;
  if (raw_shape) {
    w.format_ = "raw-bf16";
    auto m = std::make_shared<MappedFile>(path);
    TensorView t;
    t.name = kRawTensorName;
    t.dtype_name = "BF16";
    t.dtype = DType::BF16;
    t.shape = *raw_shape;
    t.elements = 1;
    for (auto d : t.shape) t.elements *= d;
    t.size_bytes = t.elements * 2;
    if (m->size() != t.size_bytes)
      throw binary_input_error(path, m->size(), "--raw-shape " + format_shape(t.shape),
                               "file is " + std::to_string(m->size()) +
                                   " bytes; a BF16 tensor of that shape is " + std::to_string(t.size_bytes));
    t.data = m->data();
    t.file = path;
    w.maps_.push_back(m);
    w.add(std::move(t));
    return w;
  }

  std::vector<std::string> shards;
  std::map<std::string, std::string> weight_map;  // tensor -> shard file (sharded checkpoints only)
  fs::path index_path;
  if (fs::is_directory(path, ec)) {
    index_path = fs::path(path) / "model.safetensors.index.json";
    if (!fs::exists(index_path, ec)) {
      index_path.clear();
      for (const auto& e : fs::directory_iterator(path, ec))
        if (e.is_regular_file() && e.path().extension() == ".safetensors")
          shards.push_back(e.path().string());
      std::sort(shards.begin(), shards.end());
      if (shards.empty())
        throw Error(path + ": directory holds neither model.safetensors.index.json nor *.safetensors files");
    }
  } else if (path.size() > 11 && path.ends_with(".index.json")) {
    index_path = path;
  } else {
    shards.push_back(path);
  }

  if (!index_path.empty()) {
    const std::string ip = index_path.string();
    const Json idx = load_json_file(ip);
    // The index is Hugging Face's format, not ours: keys besides these two are left alone.
    const JsonAt root(idx, ip);
    if (!idx.is_object()) root.expected("an object with a \"weight_map\" (a safetensors index)");
    const JsonAt wmap = root["weight_map"].object();
    std::set<std::string> files;
    for (auto it = idx["weight_map"].begin(); it != idx["weight_map"].end(); ++it) {
      const JsonAt entry = wmap[it.key()];
      const std::string f = entry.string();
      // Shard names are plain file names next to the index: refuse paths that escape the folder.
      if (f.empty() || f.find('/') != std::string::npos || f == "." || f == "..")
        entry.fail("'" + f + "' is not a plain file name (a shard next to the index)");
      weight_map[it.key()] = f;
      files.insert(f);
    }
    if (weight_map.empty()) wmap.expected("a non-empty map of tensor -> shard file");
    for (const auto& f : files) shards.push_back((index_path.parent_path() / f).string());
    if (auto meta = root.find("metadata")) w.metadata_ = meta->object().json();
  }
  w.format_ = shards.size() == 1 && weight_map.empty() ? "safetensors" : "safetensors-sharded";

  for (const auto& s : shards) {
    auto m = std::make_shared<MappedFile>(s);
    SafetensorsImage img = parse_safetensors(m->data(), m->size(), s);
    if (w.maps_.empty() && !img.metadata.empty() && weight_map.empty()) w.metadata_ = img.metadata;
    w.maps_.push_back(m);
    const std::string base = fs::path(s).filename().string();
    for (auto& t : img.tensors) {
      if (!weight_map.empty()) {
        auto it = weight_map.find(t.name);
        if (it == weight_map.end())
          throw Error(s + ": tensor '" + t.name + "' is not listed in the index's weight_map");
        if (it->second != base)
          throw Error(s + ": tensor '" + t.name + "' is mapped to shard " + it->second + " in the index");
      }
      w.add(std::move(t));
    }
  }
  for (const auto& [name, file] : weight_map)
    if (!w.by_name_.count(name))
      throw Error(index_path.string() + ": weight_map lists tensor '" + name + "' but shard " + file +
                  " does not hold it");
  return w;
}

}  // namespace moesim::exec
