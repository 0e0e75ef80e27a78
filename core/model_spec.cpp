#include "core/model_spec.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>

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
  m.weight_types = {plain, plain, plain, plain};
  if (auto w = root.find("weight_types")) {
    w->object().only_keys({"experts", "dense", "embedding", "lm_head"});
    for (auto [k, t] : {std::pair{"experts", &m.weight_types.experts},
                        {"dense", &m.weight_types.dense},
                        {"embedding", &m.weight_types.embedding},
                        {"lm_head", &m.weight_types.lm_head}})
      if (w->has(k)) *t = storage_at((*w)[k]);
  }
  if (auto q = root.find("quantization")) m.quantization = q->string();
  if (auto t = root.find("totals")) (void)t->object();
}

}  // namespace

ModelSpec model_from_json(const Json& j, const std::string& origin) {
  const JsonAt root(j, origin);
  if (!j.is_object())
    root.expected("an object (a model: num_layers, moe_layers, routed_experts, ..., expert_tensors)");
  std::vector<std::string_view> known(std::begin(kDescriptive), std::end(kDescriptive));
  for (const auto& c : kCounts) known.push_back(c.key);
  for (const char* k :
       {"architecture", "dtype", "expert_tensors", "tie_word_embeddings", "weight_types", "totals"})
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
      if (et.type->is_block_format() && et.shape.back() % et.type->block_elements() != 0)
        preset_value(t["type"]).fail(et.type->name() + " stores rows in blocks of " +
                                     std::to_string(et.type->block_elements()) +
                                     " elements; this tensor's rows (its "
                                     "last dimension) hold " +
                                     std::to_string(et.shape.back()));
    }
    elements += n;
    if (elements > (uint64_t{1} << 50)) tensors.fail("an expert has more than 2^50 elements");
    m.expert_tensors.push_back(std::move(et));
  }
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

uint64_t ModelSpec::bytes_per_expert() const {
  uint64_t b = 0;
  for (const auto& t : expert_tensors) b += bytes_in_rows(tensor_type(t), t.elements(), t.shape.back());
  return b;
}

bool ModelSpec::all_16bit_weights() const {
  for (const auto& t : expert_tensors)
    if (!tensor_type(t).lossless_16bit()) return false;
  return weight_types.dense.lossless_16bit() && weight_types.embedding.lossless_16bit() &&
         weight_types.lm_head.lossless_16bit();
}

namespace {

// Bytes of an FFN of width `inter` in the routed experts' layout, stored as `type`: each expert tensor with
// its intermediate dimension (I, or 2I when gate and up are fused) set to `inter`. When hidden and
// intermediate sizes are equal the dimensions cannot be told apart, and the elements scale as a whole.
uint64_t ffn_bytes(const ModelSpec& m, uint64_t inter, StorageType type) {
  const uint64_t I = m.expert_intermediate_size;
  if (is_plain(type) || I == m.hidden_size) {
    const uint64_t elements = m.expert_elements() / I * inter;
    return is_plain(type) ? elements * plain_size(type) : bytes_in_rows(type, elements, m.hidden_size);
  }
  uint64_t b = 0;
  for (const auto& t : m.expert_tensors) {
    std::vector<uint64_t> s = t.shape;
    for (auto& d : s) d = d == I ? inter : d == 2 * I ? 2 * inter : d;
    uint64_t n = 1;
    for (auto d : s) n *= d;
    b += bytes_in_rows(type, n, s.back());
  }
  return b;
}

}  // namespace

uint64_t ModelSpec::shared_expert_bytes() const {
  if (shared_experts == 0 || expert_intermediate_size == 0) return 0;
  const uint64_t inter =
      shared_expert_intermediate_size ? shared_expert_intermediate_size : expert_intermediate_size;
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

uint64_t ModelSpec::dense_bytes_per_layer() const {
  const uint64_t router = hidden_size * routed_experts;
  return bytes_in_rows(weight_types.dense, attention_params_per_layer + router, hidden_size) +
         shared_experts * shared_expert_bytes();
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
  const uint64_t norms = (2ull * num_layers + 1) * hidden_size;
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
  const uint64_t norms = (2ull * num_layers + 1) * hidden_size * dtype_size(dtype);
  return uint64_t{num_layers - moe_layers} * (attention + dense_layers) +
         uint64_t{moe_layers} * dense_bytes_per_layer() + norms + embedding_bytes() + lm_head_bytes();
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
