#include "core/model_spec.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <tuple>

#include "base/error.h"
#include "base/json_schema.h"
#include "core/data_dir.h"

namespace moesim {

uint32_t dtype_size(DType d) {
  return d == DType::F32 ? 4 : 2;
}

const char* dtype_name(DType d) {
  switch (d) {
    case DType::BF16:
      return "bf16";
    case DType::F16:
      return "f16";
    case DType::F32:
      return "f32";
  }
  return "?";
}

DType parse_dtype(const std::string& s) {
  std::string l(s);
  std::transform(l.begin(), l.end(), l.begin(), [](unsigned char c) { return std::tolower(c); });
  if (l == "bf16" || l == "bfloat16") return DType::BF16;
  if (l == "f16" || l == "fp16" || l == "float16") return DType::F16;
  if (l == "f32" || l == "fp32" || l == "float32") return DType::F32;
  throw Error("unknown dtype '" + s + "' (use bf16, f16, f32)");
}

uint64_t ExpertTensor::elements() const {
  uint64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

bool preset_has(const Json& j, const char* key) {
  return j.is_object() && j.contains(key);
}

namespace {

// A number written bare or as {"value": V, "source": S} (docs/model-format.md).
JsonAt preset_value(const JsonAt& f) {
  if (!f.json().is_object()) return f;
  f.only_keys({"value", "source", "assumption"});
  for (const char* k : {"source", "assumption"})
    if (auto p = f.find(k)) (void)p->string();
  return f["value"];
}

// The counts of a model, with their bounds: lo, and hi where a field is stored in 32 bits or feeds a
// product (bytes per expert) that must not overflow.
struct CountSpec {
  const char* key;
  bool required;
  uint64_t lo, hi;
};
constexpr uint64_t kMaxDim = uint64_t{1} << 32;
constexpr CountSpec kCounts[] = {
    {"num_layers", true, 1, 65535},
    {"moe_layers", true, 1, 65535},
    {"routed_experts", true, 1, 65535},
    {"shared_experts", false, 0, 65535},
    {"top_k", true, 1, 65535},
    {"hidden_size", true, 1, kMaxDim},
    {"expert_intermediate_size", true, 1, kMaxDim},
    {"shared_expert_intermediate_size", false, 0, kMaxDim},
    {"attention_params_per_layer", false, 0, uint64_t{1} << 48},
    {"num_attention_heads", false, 0, 65535},
    {"num_key_value_heads", false, 0, 65535},
    {"head_dim", false, 0, 65535},
    {"kv_lora_rank", false, 0, 65535},
    {"qk_rope_head_dim", false, 0, 65535},
    {"sliding_window", false, 0, 0xffffffffu},
    {"sliding_window_layers", false, 0, 65535},
    {"linear_attention_layers", false, 0, 65535},
    {"linear_attention_state_elements", false, 0, uint64_t{1} << 40},
    {"vocab_size", false, 0, kMaxDim},
    {"first_dense_layers", false, 0, 65535},
    {"dense_intermediate_size", false, 0, kMaxDim},
    {"norm_elements_per_layer", false, 0, uint64_t{1} << 40},
};
constexpr std::string_view kDescriptive[] = {"name", "display_name", "source", "notes", "quantization"};

// A storage type written bare ("q4_k") or as {"value": "q4_k", "source": S}.
StorageType storage_at(const JsonAt& f) {
  const JsonAt v = preset_value(f);
  try {
    return parse_storage_type(v.string());
  } catch (const Error& e) {
    v.fail(e.what());
  }
}

// The type a row of `row` elements can be stored in: a GGUF block type whose block does not divide the row
// falls back as llama.cpp does, then to f16 (storage_type.h).
StorageType fit_row(StorageType t, uint64_t row) {
  if (!t.is_block_format() || row % t.block_elements() == 0) return t;
  if (t.is_gguf()) t = gguf_fallback(t);
  if (t.is_block_format() && row % t.block_elements() != 0) t = StorageType{StorageKind::F16, 0};
  return t;
}

// Bytes of `elements` weights laid out in rows of `row` (a last partial row stored on its own).
uint64_t bytes_in_rows(StorageType t, uint64_t elements, uint64_t row) {
  if (elements == 0) return 0;
  if (row == 0 || row > elements) row = elements;
  const uint64_t whole = elements / row * row, rest = elements - whole;
  return fit_row(t, row).bytes(whole, row) + (rest ? fit_row(t, rest).bytes(rest, rest) : 0);
}

bool is_plain(StorageType t) {
  return t.kind == StorageKind::BF16 || t.kind == StorageKind::F16 || t.kind == StorageKind::F32;
}

uint32_t plain_size(StorageType t) {
  return t.kind == StorageKind::F32 ? 4 : 2;
}

}  // namespace

double preset_number(const Json& j, const char* key, const std::string& origin) {
  const double d = preset_value(JsonAt(j, origin)[key]).number();
  if (d < 0) preset_value(JsonAt(j, origin)[key]).expected("a non-negative number");
  return d;
}

namespace {

// The counts that bound each other: top-k within the experts, KV heads within the heads, layer kinds within
// the layers.
void check_counts(const ModelSpec& m, const JsonAt& root) {
  if (m.moe_layers > m.num_layers)
    preset_value(root["moe_layers"]).fail("exceeds num_layers (" + std::to_string(m.num_layers) + ")");
  if (m.top_k > m.routed_experts)
    preset_value(root["top_k"]).fail("exceeds routed_experts (" + std::to_string(m.routed_experts) + ")");
  if (m.num_key_value_heads > m.num_attention_heads)
    preset_value(root["num_key_value_heads"])
        .fail("exceeds num_attention_heads (" + std::to_string(m.num_attention_heads) + ")");
  if (m.sliding_window_layers + m.linear_attention_layers > m.num_layers)
    preset_value(root[m.sliding_window_layers ? "sliding_window_layers" : "linear_attention_layers"])
        .fail("sliding_window_layers + linear_attention_layers exceed num_layers (" +
              std::to_string(m.num_layers) + ")");
  if (m.sliding_window_layers > 0 && m.sliding_window == 0)
    preset_value(root["sliding_window_layers"]).fail("is given without a sliding_window");
  if (m.first_dense_layers > m.num_layers - m.moe_layers)
    preset_value(root["first_dense_layers"])
        .fail("exceeds the layers without routed experts (num_layers - moe_layers = " +
              std::to_string(m.num_layers - m.moe_layers) + ")");
}

// weight_types (each defaulting to dtype) and the mix's name.
void read_weight_types(ModelSpec& m, const JsonAt& root) {
  const StorageType plain{m.dtype == DType::F32   ? StorageKind::F32
                          : m.dtype == DType::F16 ? StorageKind::F16
                                                  : StorageKind::BF16,
                          0};
  m.weight_types = {plain, plain, plain, plain, std::nullopt, plain};
  if (auto w = root.find("weight_types")) {
    w->object().only_keys({"experts", "dense", "embedding", "lm_head", "router", "norms"});
    for (auto [k, t] : {std::pair{"experts", &m.weight_types.experts},
                        {"dense", &m.weight_types.dense},
                        {"embedding", &m.weight_types.embedding},
                        {"lm_head", &m.weight_types.lm_head},
                        {"norms", &m.weight_types.norms}})
      if (w->has(k)) *t = storage_at((*w)[k]);
    if (w->has("router")) m.weight_types.router = storage_at((*w)["router"]);
    if (!is_plain(m.weight_types.norms))
      preset_value((*w)["norms"])
          .fail("norms are stored as f32, f16 or bf16, not " + m.weight_types.norms.name());
  }
  if (auto q = root.find("quantization")) m.quantization = q->string();
  if (auto t = root.find("totals")) (void)t->object();
}

// A block type must hold a tensor's rows whole (GGUF cannot store a partial block).
void check_rows(const JsonAt& at, StorageType t, uint64_t row) {
  if (t.is_block_format() && row % t.block_elements() != 0)
    preset_value(at).fail(t.name() + " stores rows in blocks of " + std::to_string(t.block_elements()) +
                          " elements; this tensor's rows (its last dimension) hold " + std::to_string(row));
}

// An object of expert tensor names -> storage types, into `types` (indexed like expert_tensors).
// Routed experts' rows are checked whole; a shared expert's rows have its own width and are fitted as the
// dense weights are.
void read_tensor_types(const ModelSpec& m, const JsonAt& at, std::vector<std::optional<StorageType>>& types,
                       const std::string& layer, bool check) {
  at.object();
  std::vector<std::string_view> names;
  for (const auto& t : m.expert_tensors) names.push_back(t.name);
  at.only_keys(names);
  types.resize(m.expert_tensors.size());
  for (size_t i = 0; i < m.expert_tensors.size(); ++i) {
    if (!at.has(m.expert_tensors[i].name)) continue;
    const JsonAt v = at[m.expert_tensors[i].name];
    if (types[i]) preset_value(v).fail("MoE layer " + layer + "'s type for this tensor is given twice");
    types[i] = storage_at(v);
    if (check) check_rows(v, *types[i], m.expert_tensors[i].shape.back());
  }
}

// layer_overrides: [{"layers": [MoE layer indices], "experts": {tensor: type}, "shared_experts": {tensor:
// type}, "attention": {"q"|"k"|"v"|"o": type}, "source": S}]; a layer's tensor is given at most once.
void read_layer_overrides(ModelSpec& m, const JsonAt& root) {
  const auto list = root.find("layer_overrides");
  if (!list) return;
  list->array();
  m.layer_types.assign(m.moe_layers, LayerTypes{});
  for (size_t e = 0; e < list->size(); ++e) {
    const JsonAt entry = (*list)[e];
    entry.object().only_keys({"layers", "experts", "shared_experts", "attention", "source", "assumption"});
    for (const char* k : {"source", "assumption"})
      if (auto p = entry.find(k)) (void)p->string();
    const JsonAt layers = entry["layers"];
    if (layers.size() == 0) layers.expected("a non-empty array of MoE layer indices");
    if (entry.has("shared_experts") && m.shared_experts == 0)
      entry["shared_experts"].fail("the model has no shared experts (shared_experts is 0)");
    if (entry.has("attention") &&
        (m.kv_lora_rank > 0 || m.num_attention_heads == 0 || m.num_key_value_heads == 0 || m.head_dim == 0))
      entry["attention"].fail(
          "per-layer attention types need the MHA/GQA shape (num_attention_heads, num_key_value_heads, "
          "head_dim; not MLA)");
    for (size_t i = 0; i < layers.size(); ++i) {
      const uint64_t l = layers[i].integer(0, m.moe_layers - 1);
      LayerTypes& lt = m.layer_types[l];
      const std::string name = std::to_string(l);
      if (auto x = entry.find("experts")) read_tensor_types(m, *x, lt.experts, name, true);
      if (auto x = entry.find("shared_experts")) read_tensor_types(m, *x, lt.shared, name, false);
      if (auto a = entry.find("attention")) {
        a->object().only_keys({"q", "k", "v", "o"});
        for (auto [k, t] : {std::pair{"q", &lt.q}, {"k", &lt.k}, {"v", &lt.v}, {"o", &lt.o}})
          if (a->has(k)) {
            if (*t)
              preset_value((*a)[k]).fail("MoE layer " + name + "'s type for this tensor is given twice");
            *t = storage_at((*a)[k]);
          }
      }
    }
  }
  // The overridden attention projections must lie within the layer's attention weights.
  const uint64_t qo = m.hidden_size * m.num_attention_heads * m.head_dim,
                 kv = m.hidden_size * m.num_key_value_heads * m.head_dim;
  for (const auto& lt : m.layer_types) {
    const uint64_t given = (lt.q ? qo : 0) + (lt.k ? kv : 0) + (lt.v ? kv : 0) + (lt.o ? qo : 0);
    if (given > m.attention_params_per_layer)
      root["layer_overrides"].fail("its attention projections hold " + std::to_string(given) +
                                   " elements, more than attention_params_per_layer (" +
                                   std::to_string(m.attention_params_per_layer) + ")");
  }
  bool any = false;
  for (const auto& lt : m.layer_types) any |= !lt.empty();
  if (!any) m.layer_types.clear();
}

}  // namespace

ModelSpec model_from_json(const Json& j, const std::string& origin) {
  const JsonAt root(j, origin);
  if (!j.is_object())
    root.expected("an object (a model: num_layers, moe_layers, routed_experts, ..., expert_tensors)");
  std::vector<std::string_view> known(std::begin(kDescriptive), std::end(kDescriptive));
  for (const auto& c : kCounts) known.push_back(c.key);
  for (const char* k : {"architecture", "dtype", "expert_tensors", "tie_word_embeddings", "weight_types",
                        "totals", "layer_overrides"})
    known.push_back(k);
  root.only_keys(known);
  for (auto k : kDescriptive)
    if (auto s = root.find(k)) (void)s->string();
  auto count = [&](const char* key) -> uint64_t {
    for (const auto& c : kCounts)
      if (std::string_view(c.key) == key) {
        if (!c.required && !root.has(key)) return 0;
        return preset_value(root[key]).integer(c.lo, c.hi);
      }
    return 0;
  };
  ModelSpec m;
  m.raw = j;
  m.origin = origin;
  m.name = j.value("name", std::filesystem::path(origin).stem().string());
  m.display_name = j.value("display_name", m.name);
  m.architecture =
      root.has("architecture") ? root["architecture"].string_of({"decoder", "encoder-decoder"}) : "decoder";
  m.num_layers = static_cast<uint32_t>(count("num_layers"));
  m.moe_layers = static_cast<uint32_t>(count("moe_layers"));
  m.routed_experts = static_cast<uint32_t>(count("routed_experts"));
  m.shared_experts = static_cast<uint32_t>(count("shared_experts"));
  m.top_k = static_cast<uint32_t>(count("top_k"));
  m.hidden_size = count("hidden_size");
  m.expert_intermediate_size = count("expert_intermediate_size");
  m.shared_expert_intermediate_size = count("shared_expert_intermediate_size");
  m.attention_params_per_layer = count("attention_params_per_layer");
  m.num_attention_heads = static_cast<uint32_t>(count("num_attention_heads"));
  m.num_key_value_heads = static_cast<uint32_t>(count("num_key_value_heads"));
  m.head_dim = static_cast<uint32_t>(count("head_dim"));
  m.kv_lora_rank = static_cast<uint32_t>(count("kv_lora_rank"));
  m.qk_rope_head_dim = static_cast<uint32_t>(count("qk_rope_head_dim"));
  m.sliding_window = static_cast<uint32_t>(count("sliding_window"));
  m.sliding_window_layers = static_cast<uint32_t>(count("sliding_window_layers"));
  m.linear_attention_layers = static_cast<uint32_t>(count("linear_attention_layers"));
  m.linear_attention_state_elements = count("linear_attention_state_elements");
  m.vocab_size = count("vocab_size");
  m.first_dense_layers = static_cast<uint32_t>(count("first_dense_layers"));
  m.dense_intermediate_size = count("dense_intermediate_size");
  m.norm_elements_per_layer = count("norm_elements_per_layer");
  if (root.has("tie_word_embeddings"))
    m.tie_word_embeddings = preset_value(root["tie_word_embeddings"]).boolean();
  if (auto d = root.find("dtype")) {
    try {
      m.dtype = parse_dtype(d->string());
    } catch (const Error& e) {
      d->fail(e.what());
    }
  }
  read_weight_types(m, root);
  check_counts(m, root);
  const JsonAt tensors = root["expert_tensors"];
  if (tensors.size() == 0) tensors.expected("a non-empty array of {name, shape}");
  uint64_t elements = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const JsonAt t = tensors[i];
    t.only_keys({"name", "shape", "type"});
    ExpertTensor et;
    et.name = t["name"].string();
    if (et.name.empty()) t["name"].expected("a tensor name such as \"gate_proj\"");
    const JsonAt shape = t["shape"];
    if (shape.size() == 0) shape.expected("a non-empty array of dimensions");
    uint64_t n = 1;
    for (size_t k = 0; k < shape.size(); ++k) {
      et.shape.push_back(shape[k].integer(1, kMaxDim));
      // Bytes per expert are elements x 4 at most: keep them far from 2^64.
      if (et.shape.back() > (uint64_t{1} << 50) / n) shape.fail("the tensor has more than 2^50 elements");
      n *= et.shape.back();
    }
    if (t.has("type")) {
      et.type = storage_at(t["type"]);
      check_rows(t["type"], *et.type, et.shape.back());
    }
    elements += n;
    if (elements > (uint64_t{1} << 50)) tensors.fail("an expert has more than 2^50 elements");
    m.expert_tensors.push_back(std::move(et));
  }
  read_layer_overrides(m, root);
  return m;
}

ModelSpec load_model(const std::string& name_or_path) {
  std::string path = resolve_preset("models", name_or_path);
  return model_from_json(load_json_file(path), path);
}

uint64_t ModelSpec::expert_elements() const {
  uint64_t n = 0;
  for (const auto& t : expert_tensors) n += t.elements();
  return n;
}

bool LayerTypes::empty() const {
  auto none = [](const std::vector<std::optional<StorageType>>& types) {
    return std::none_of(types.begin(), types.end(), [](const auto& t) { return t.has_value(); });
  };
  return none(experts) && none(shared) && !q && !k && !v && !o;
}

StorageType ModelSpec::tensor_type(size_t i, uint32_t layer) const {
  if (layer < layer_types.size() && i < layer_types[layer].experts.size() && layer_types[layer].experts[i])
    return *layer_types[layer].experts[i];
  return tensor_type(expert_tensors[i]);
}

uint64_t ModelSpec::bytes_per_expert(uint32_t layer) const {
  uint64_t b = 0;
  for (size_t i = 0; i < expert_tensors.size(); ++i) {
    const auto& t = expert_tensors[i];
    b += bytes_in_rows(tensor_type(i, layer), t.elements(), t.shape.back());
  }
  return b;
}

uint64_t ModelSpec::all_experts_bytes() const {
  uint64_t b = 0;
  for (uint32_t l = 0; l < moe_layers; ++l) b += bytes_per_expert(l);
  return b * routed_experts;
}

namespace {

// The mean of f(l) over the MoE layers, rounded to the nearest integer; f(0) when no layer differs.
template <class F>
uint64_t layer_mean(const ModelSpec& m, F f) {
  if (m.layer_types.empty() || m.moe_layers == 0) return f(0);
  uint64_t sum = 0;
  for (uint32_t l = 0; l < m.moe_layers; ++l) sum += f(l);
  return (sum + m.moe_layers / 2) / m.moe_layers;
}

}  // namespace

uint64_t ModelSpec::bytes_per_expert() const {
  return layer_mean(*this, [this](uint32_t l) { return bytes_per_expert(l); });
}

bool ModelSpec::all_16bit_weights() const {
  for (const auto& t : expert_tensors)
    if (!tensor_type(t).lossless_16bit()) return false;
  for (const auto& lt : layer_types)
    for (const auto* v : {&lt.experts, &lt.shared})
      for (const auto& t : *v)
        if (t && !t->lossless_16bit()) return false;
  for (const auto& lt : layer_types)
    for (const auto& t : {lt.q, lt.k, lt.v, lt.o})
      if (t && !t->lossless_16bit()) return false;
  return weight_types.dense.lossless_16bit() && weight_types.embedding.lossless_16bit() &&
         weight_types.lm_head.lossless_16bit();
}

namespace {

// Bytes of an FFN of width `inter` in the routed experts' layout, stored as `type` unless `types` (indexed
// like expert_tensors) says otherwise for a tensor: each expert tensor with its intermediate dimension (I, or
// 2I when gate and up are fused) set to `inter`. When hidden and intermediate sizes are equal the dimensions
// cannot be told apart, and the elements scale as a whole, in rows of hidden_size.
uint64_t ffn_bytes(const ModelSpec& m, uint64_t inter, StorageType type,
                   const std::vector<std::optional<StorageType>>& types = {}) {
  const uint64_t I = m.expert_intermediate_size;
  if (types.empty() && (is_plain(type) || I == m.hidden_size)) {
    const uint64_t elements = m.expert_elements() / I * inter;
    return is_plain(type) ? elements * plain_size(type) : bytes_in_rows(type, elements, m.hidden_size);
  }
  uint64_t b = 0;
  for (size_t i = 0; i < m.expert_tensors.size(); ++i) {
    const auto& t = m.expert_tensors[i];
    const StorageType ti = i < types.size() && types[i] ? *types[i] : type;
    if (I == m.hidden_size) {
      b += bytes_in_rows(ti, t.elements() / I * inter, m.hidden_size);
      continue;
    }
    std::vector<uint64_t> s = t.shape;
    for (auto& d : s) d = d == I ? inter : d == 2 * I ? 2 * inter : d;
    uint64_t n = 1;
    for (auto d : s) n *= d;
    b += bytes_in_rows(ti, n, s.back());
  }
  return b;
}

}  // namespace

uint64_t ModelSpec::shared_expert_bytes(uint32_t layer) const {
  if (shared_experts == 0 || expert_intermediate_size == 0) return 0;
  const uint64_t inter =
      shared_expert_intermediate_size ? shared_expert_intermediate_size : expert_intermediate_size;
  if (layer < layer_types.size())
    return ffn_bytes(*this, inter, weight_types.dense, layer_types[layer].shared);
  return ffn_bytes(*this, inter, weight_types.dense);
}

uint64_t ModelSpec::dense_elements_per_layer() const {
  const uint64_t shared = shared_experts == 0 || expert_intermediate_size == 0
                              ? 0
                              : expert_elements() / expert_intermediate_size *
                                    (shared_expert_intermediate_size ? shared_expert_intermediate_size
                                                                     : expert_intermediate_size);
  return attention_params_per_layer + hidden_size * routed_experts + shared_experts * shared;
}

uint64_t ModelSpec::dense_bytes_per_layer(uint32_t layer) const {
  const uint64_t router = hidden_size * routed_experts;
  const StorageType dense = weight_types.dense;
  uint64_t b = weight_types.router ? bytes_in_rows(dense, attention_params_per_layer, hidden_size) +
                                         bytes_in_rows(*weight_types.router, router, hidden_size)
                                   : bytes_in_rows(dense, attention_params_per_layer + router, hidden_size);
  if (layer < layer_types.size()) {
    // An overridden projection: its bytes in its own type instead of the dense type, each in its own rows
    // (q, k, v read hidden_size a row; o heads x head_dim). The loader keeps them within the attention.
    const LayerTypes& lt = layer_types[layer];
    const uint64_t heads = uint64_t{num_attention_heads} * head_dim,
                   kv = uint64_t{num_key_value_heads} * head_dim;
    for (const auto& [t, elements, row] : {std::tuple{lt.q, hidden_size * heads, hidden_size},
                                           {lt.k, hidden_size * kv, hidden_size},
                                           {lt.v, hidden_size * kv, hidden_size},
                                           {lt.o, heads * hidden_size, heads}})
      if (t) b = b + bytes_in_rows(*t, elements, row) - bytes_in_rows(dense, elements, row);
  }
  return b + bytes_in_rows(weight_types.norms, norm_elements_per_layer, norm_elements_per_layer) +
         shared_experts * shared_expert_bytes(layer);
}

uint64_t ModelSpec::dense_bytes_per_layer() const {
  return layer_mean(*this, [this](uint32_t l) { return dense_bytes_per_layer(l); });
}

uint64_t ModelSpec::dense_bytes_moe_layers() const {
  uint64_t b = 0;
  for (uint32_t l = 0; l < moe_layers; ++l) b += dense_bytes_per_layer(l);
  return b;
}

uint32_t ModelSpec::kv_layers() const {
  const uint32_t attn = num_layers - linear_attention_layers;
  return architecture == "encoder-decoder" ? attn / 2 : attn;
}

uint64_t ModelSpec::kv_elements_per_token_per_layer() const {
  if (kv_lora_rank > 0) return uint64_t{kv_lora_rank} + qk_rope_head_dim;
  return 2ull * num_key_value_heads * head_dim;
}

uint64_t ModelSpec::kv_bytes_per_token(uint32_t kv_elem_bytes) const {
  return uint64_t{kv_layers()} * kv_elements_per_token_per_layer() * kv_elem_bytes;
}

uint64_t ModelSpec::kv_cache_bytes(uint64_t context_tokens, uint32_t kv_elem_bytes) const {
  const uint64_t per_layer_token = kv_elements_per_token_per_layer() * kv_elem_bytes;
  const uint32_t sliding = std::min(sliding_window_layers, kv_layers());
  const uint64_t full_layers = kv_layers() - sliding;
  return full_layers * context_tokens * per_layer_token +
         sliding * std::min<uint64_t>(context_tokens, sliding_window) * per_layer_token +
         uint64_t{linear_attention_layers} * linear_attention_state_elements * kv_elem_bytes;
}

uint64_t ModelSpec::dense_ffn_params() const {
  if (expert_intermediate_size == 0) return 0;
  const uint64_t inter = dense_intermediate_size ? dense_intermediate_size : expert_intermediate_size;
  return expert_elements() / expert_intermediate_size * inter;
}

uint64_t ModelSpec::non_expert_params() const {
  const uint64_t router_and_shared = dense_elements_per_layer() - attention_params_per_layer;
  const uint64_t per_layer_norms = norm_elements_per_layer ? norm_elements_per_layer : 2 * hidden_size;
  const uint64_t norms = num_layers * per_layer_norms + hidden_size;
  return uint64_t{num_layers} * attention_params_per_layer + uint64_t{moe_layers} * router_and_shared +
         uint64_t{num_layers - moe_layers} * dense_ffn_params() + norms + embedding_params() +
         lm_head_params();
}

uint64_t ModelSpec::embedding_bytes() const {
  return bytes_in_rows(weight_types.embedding, embedding_params(), hidden_size);
}

uint64_t ModelSpec::lm_head_bytes() const {
  return bytes_in_rows(weight_types.lm_head, lm_head_params(), hidden_size);
}

// Norms stay in the unquantized type (GGUF and the FP8/MXFP4 checkpoints keep them so).
uint64_t ModelSpec::non_expert_bytes() const {
  const uint64_t attention = bytes_in_rows(weight_types.dense, attention_params_per_layer, hidden_size);
  const uint64_t dense_layers =
      expert_intermediate_size == 0
          ? 0
          : ffn_bytes(*this, dense_intermediate_size ? dense_intermediate_size : expert_intermediate_size,
                      weight_types.dense);
  // Norms given per layer are in the MoE layers' dense bytes already; the final norm is one of hidden_size.
  const uint64_t norm_size = plain_size(weight_types.norms);
  const uint64_t norms =
      norm_elements_per_layer
          ? (uint64_t{num_layers - moe_layers} * norm_elements_per_layer + hidden_size) * norm_size
          : (2ull * num_layers + 1) * hidden_size * norm_size;
  return uint64_t{num_layers - moe_layers} * (attention + dense_layers) + dense_bytes_moe_layers() + norms +
         embedding_bytes() + lm_head_bytes();
}

uint64_t ModelSpec::total_params() const {
  return non_expert_params() + uint64_t{moe_layers} * routed_experts * expert_elements();
}

uint64_t ModelSpec::active_params() const {
  // The lookup reads one row of the table; a tied head still reads all of it.
  const uint64_t lookup_only = tie_word_embeddings ? 0 : embedding_params();
  return non_expert_params() - lookup_only + uint64_t{moe_layers} * top_k * expert_elements();
}

std::optional<ModelSpec> preset_for_model_name(const std::string& model_name) {
  std::string m = model_name;
  for (char& c : m) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  // File names often lead with the publisher ("google_gemma-4-26B-A4B-it-Q4_K_M"): try the name after it too.
  std::vector<std::string> names{m};
  if (const auto us = m.find('_'); us != std::string::npos && m.find('-') > us)
    names.push_back(m.substr(us + 1));
  std::string best;
  for (const auto& n : list_presets("models"))
    for (const auto& c : names)
      if (c.starts_with(n) && n.size() > best.size()) best = n;
  if (best.empty()) return std::nullopt;
  return load_model(best);
}

}  // namespace moesim
