#include "traces/trace_io.h"

#include <algorithm>
#include <optional>

#include "base/error.h"
#include "base/input_file.h"
#include "core/model_spec.h"
#include "traces/mtr_format.h"

namespace moesim::traces {

namespace {

bool has_mtr_magic(std::string_view head) {
  return head.starts_with(std::string_view(kMtrMagic, sizeof kMtrMagic));
}

}  // namespace

std::string detect_format(std::string_view head) {
  if (has_mtr_magic(head)) return "mtr";
  head = skip_bom(head);
  if (head.starts_with("# route_trace v1")) return "bigmoe";
  const size_t p = head.find_first_not_of(" \t\r\n");
  if (p != std::string_view::npos && head[p] == '{') return "jsonl";
  return "csv";
}

size_t binary_data_offset(std::string_view head, bool complete) {
  size_t i = 0;
  while (i < head.size()) {
    if (head[i] == '\0') return i;
    const size_t n = utf8_sequence_length(head, i);
    if (n == 0) {
      // A sequence cut by the end of an incomplete head: its lead byte promises more bytes than are left.
      const auto c = static_cast<unsigned char>(head[i]);
      const size_t want = (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
      if (!complete && want && i + want > head.size()) return std::string_view::npos;
      return i;
    }
    i += n;
  }
  return std::string_view::npos;
}

TextImportOptions text_import_options(const LoadOptions& opts) {
  TextImportOptions t(parse_field_map(opts.fields));
  if (opts.token_from != "column" && opts.token_from != "order")
    throw UsageError("--token-from: '" + opts.token_from + "' is not column or order");
  t.token_from_order = opts.token_from == "order";
  t.layer_base = opts.layer_base;
  for (const std::string& w : opts.where) t.where.push_back(parse_where(w));
  t.skip_warmup = opts.skip_warmup;
  t.drop_duplicates = opts.drop_duplicates;
  t.delimiter = parse_delimiter(opts.delimiter);
  return t;
}

namespace {

constexpr size_t kHeadBytes = 4096;

// The options that only JSONL/CSV input takes, as their flag names.
std::vector<std::string> text_only_options(const LoadOptions& o) {
  std::vector<std::string> v;
  if (!o.fields.empty()) v.push_back("--fields");
  if (o.token_from != "column") v.push_back("--token-from");
  if (o.layer_base) v.push_back("--layer-base");
  if (!o.where.empty()) v.push_back("--where");
  if (o.skip_warmup) v.push_back("--skip-warmup");
  if (o.drop_duplicates) v.push_back("--drop-duplicates");
  if (!o.delimiter.empty()) v.push_back("--delimiter");
  return v;
}

// Layers and experts from the model; the trace must fit it (see trace_io.h).
Trace fit_to_model(const Trace& t, const ModelSpec& m, const std::string& path) {
  const TraceInfo& ti = t.info();
  if (ti.layers > m.moe_layers) {
    // One layer too many is a 1-based import only if layer 0 is unused; otherwise the trace is another
    // model's.
    bool layer0 = false;
    for (size_t r = 0; r < t.records() && !layer0; ++r) layer0 = t.layer(r) == 0;
    throw input_error(path, 0, "layers",
                      "the layer counts disagree: the trace has " + std::to_string(ti.layers) +
                          " MoE layers, model " + m.name + " has " + std::to_string(m.moe_layers) +
                          (ti.layers == m.moe_layers + 1 && !layer0
                               ? " (its layer 0 is unused: ids start at 1? re-import with --layer-base 1)"
                               : " (a trace of another model? check --model)"));
  }
  if (ti.experts > m.routed_experts)
    throw input_error(path, 0, "experts",
                      "the trace has " + std::to_string(ti.experts) + " experts per layer, model " + m.name +
                          " has " + std::to_string(m.routed_experts));
  if (t.has_logits() && ti.experts != m.routed_experts)
    throw input_error(path, 0, "logits",
                      "the trace has " + std::to_string(ti.experts) + " logits per record, model " + m.name +
                          " has " + std::to_string(m.routed_experts) + " experts");
  TraceInfo info = ti;
  info.model = m.name;
  info.layers = m.moe_layers;
  info.experts = m.routed_experts;
  if (!info.expert_bytes.empty() && info.expert_bytes.size() != info.layers)
    throw input_error(path, 0, "expert_bytes", "per-layer expert sizes do not match the model's layer count");
  if (info.expert_bytes.empty()) {
    for (uint32_t l = 0; l < info.layers; ++l) info.expert_bytes.push_back(m.bytes_per_expert(l));
    info.provenance["expert_bytes_source"] = "model " + m.name + " (" + m.origin + ")";
  }
  info.provenance["model_preset"] = m.name;
  if (info.layers == ti.layers && info.experts == ti.experts)
    return Trace(std::move(info), t.columns(), t.storage());
  return with_info(t, std::move(info));
}

}  // namespace

Trace load_trace(const std::string& path, const LoadOptions& opts) {
  std::string fmt = opts.format.empty() ? "auto" : opts.format;
  if (fmt != "auto" && fmt != "mtr" && fmt != "bigmoe" && fmt != "jsonl" && fmt != "csv")
    throw UsageError("--format: unknown format '" + fmt + "' (known: auto, mtr, bigmoe, jsonl, csv)");
  const TextImportOptions text_opts = text_import_options(opts);
  std::optional<ModelSpec> model;
  ImportShape shape;
  if (!opts.model.empty()) {
    model = load_model(opts.model);
    shape.layers = model->moe_layers;
    shape.experts = model->routed_experts;
  }
  // One open for detection and parsing: a pipe or FIFO can be read only once.
  InputFile in(path);
  const std::string_view prefix = in.peek(kHeadBytes + 1);
  const bool complete = prefix.size() <= kHeadBytes;
  const std::string_view head = prefix.substr(0, kHeadBytes);
  if (head.empty()) throw input_error(path, 0, "", "empty file");
  if (fmt == "auto") {
    fmt = detect_format(head);
    if (fmt != "mtr" && path.ends_with(".mtr"))
      throw Error(path + ": not an .mtr file (no MOESIMTR magic at byte 0)");
  }
  if (fmt != "mtr") {
    const size_t bad = binary_data_offset(head, complete);
    if (bad != std::string_view::npos)
      throw Error(path + ": not a text trace (binary data at byte " + std::to_string(bad) + ")");
  }
  if (fmt != "jsonl" && fmt != "csv") {
    const auto given = text_only_options(opts);
    if (!given.empty())
      throw Error(given.front() + " applies to JSONL and CSV input only; " + path + " is " + fmt);
  }
  Trace t;
  if (fmt == "mtr") {
    t = read_mtr(in);
  } else {
    const std::string text = in.read_all();
    if (fmt == "bigmoe")
      t = import_bigmoe(text, path, shape);
    else if (fmt == "jsonl")
      t = import_jsonl(text, path, text_opts, shape);
    else
      t = import_csv(text, path, text_opts, shape);
  }
  if (model) t = fit_to_model(t, *model, path);
  return t;
}

Trace load_traces(const std::vector<std::string>& paths, const LoadOptions& opts) {
  if (paths.empty()) throw UsageError("no trace given");
  if (paths.size() == 1) return load_trace(paths[0], opts);
  std::vector<Trace> parts;
  for (const std::string& p : paths) parts.push_back(load_trace(p, opts));
  const TraceInfo& first = parts[0].info();
  TraceInfo info;
  info.model = first.model;
  info.synthetic = first.synthetic;
  info.expert_bytes = first.expert_bytes;
  info.top_k = first.top_k;
  info.provenance = {{"format", "multi-file"}, {"sources", Json::array()}};
  for (const char* key : {"where_skipped", "warmup_dropped", "duplicates_dropped"}) {
    uint64_t sum = 0;
    bool any = false;
    for (const Trace& t : parts)
      if (t.info().provenance.contains(key)) {
        any = true;
        sum += t.info().provenance[key].get<uint64_t>();
      }
    if (any) info.provenance[key] = sum;
  }
  for (size_t i = 0; i < parts.size(); ++i) {
    const TraceInfo& ti = parts[i].info();
    const std::string& path = paths[i];
    if (ti.top_k != first.top_k)
      throw input_error(path, 0, "experts",
                        "top-" + std::to_string(ti.top_k) + ", but " + paths[0] + " is top-" +
                            std::to_string(first.top_k) + " (all files of one trace need the same top-k)");
    if (parts[i].has_weights() != parts[0].has_weights())
      throw input_error(
          path, 0, "weights",
          std::string(parts[i].has_weights() ? "present" : "absent") + " here but not in " + paths[0]);
    if (parts[i].has_logits() != parts[0].has_logits())
      throw input_error(
          path, 0, "logits",
          std::string(parts[i].has_logits() ? "present" : "absent") + " here but not in " + paths[0]);
    if (parts[i].has_logits() && ti.experts != first.experts)
      throw input_error(path, 0, "logits",
                        std::to_string(ti.experts) + " logits per record, " + paths[0] + " has " +
                            std::to_string(first.experts));
    if (ti.expert_bytes != first.expert_bytes) {
      if (!ti.expert_bytes.empty() && !first.expert_bytes.empty())
        throw input_error(path, 0, "expert_bytes", "per-layer expert sizes differ from those of " + paths[0]);
      info.expert_bytes.clear();  // known for some files only: unknown for the whole
    }
    if (ti.model != first.model) info.model.clear();
    info.synthetic = info.synthetic || ti.synthetic;
    info.layers = std::max(info.layers, ti.layers);
    info.experts = std::max(info.experts, ti.experts);
    info.provenance["sources"].push_back(ti.provenance);
  }
  if (!info.expert_bytes.empty() && info.expert_bytes.size() != info.layers) info.expert_bytes.clear();
  TraceBuilder b(info, parts[0].has_weights(), parts[0].has_logits(), paths[0]);
  std::vector<uint32_t> experts;
  uint64_t offset = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    const Trace& t = parts[i];
    uint32_t max_seq = 0;
    for (size_t r = 0; r < t.records(); ++r) {
      max_seq = std::max(max_seq, t.seq(r));
      if (offset + t.seq(r) > 0xFFFFFFFFu)
        throw input_error(paths[i], 0, "seq", "sequence ids of the files together exceed 32 bits");
      const auto e = t.experts(r);
      experts.assign(e.begin(), e.end());
      b.add(static_cast<uint32_t>(offset + t.seq(r)), t.phase(r), t.step(r), t.layer(r), experts,
            t.has_weights() ? t.weights(r) : std::span<const float>(),
            t.has_logits() ? t.logits(r) : std::span<const float>(), r + 1);
    }
    offset += uint64_t{max_seq} + 1;
  }
  return std::move(b).finish();
}

void save_mtr(const Trace& trace, const std::string& path) {
  write_mtr(trace, path);
}

}  // namespace moesim::traces
