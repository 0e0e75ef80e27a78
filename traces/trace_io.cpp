#include "traces/trace_io.h"

#include <fstream>
#include <optional>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/model_spec.h"
#include "traces/mtr_format.h"

namespace moesim::traces {

std::string detect_format(std::string_view head) {
  if (head.size() >= sizeof kMtrMagic && head.substr(0, sizeof kMtrMagic) == std::string_view(kMtrMagic, 8))
    return "mtr";
  if (head.starts_with("# route_trace v1")) return "bigmoe";
  const size_t p = head.find_first_not_of(" \t\r\n");
  if (p != std::string_view::npos && head[p] == '{') return "jsonl";
  return "csv";
}

namespace {

std::string read_head(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open");
  std::string head(256, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  return head;
}

// Layers and experts from the model; the trace must fit it (see trace_io.h).
Trace fit_to_model(const Trace& t, const ModelSpec& m, const std::string& path) {
  const TraceInfo& ti = t.info();
  if (ti.layers > m.moe_layers)
    throw input_error(path, 0, "layers",
                      "the trace has " + std::to_string(ti.layers) + " MoE layers, model " + m.name + " has " +
                          std::to_string(m.moe_layers));
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
    info.expert_bytes.assign(info.layers, m.bytes_per_expert());
    info.provenance["expert_bytes_source"] = "model " + m.name + " (" + m.origin + ")";
  }
  info.provenance["model_preset"] = m.name;
  if (info.layers == ti.layers && info.experts == ti.experts) return Trace(std::move(info), t.columns(), t.storage());
  return with_info(t, std::move(info));
}

}  // namespace

Trace load_trace(const std::string& path, const LoadOptions& opts) {
  std::string fmt = opts.format.empty() ? "auto" : opts.format;
  if (fmt != "auto" && fmt != "mtr" && fmt != "bigmoe" && fmt != "jsonl" && fmt != "csv")
    throw Error("--format: unknown format '" + fmt + "' (known: auto, mtr, bigmoe, jsonl, csv)");
  const FieldMap fields = parse_field_map(opts.fields);
  std::optional<ModelSpec> model;
  ImportShape shape;
  if (!opts.model.empty()) {
    model = load_model(opts.model);
    shape.layers = model->moe_layers;
    shape.experts = model->routed_experts;
  }
  if (fmt == "auto") {
    const std::string head = read_head(path);
    if (head.empty()) throw input_error(path, 0, "", "empty file");
    fmt = detect_format(head);
  }
  if (!opts.fields.empty() && fmt != "jsonl" && fmt != "csv")
    throw Error("--fields applies to JSONL and CSV input only; " + path + " is " + fmt);
  Trace t;
  if (fmt == "mtr") {
    t = read_mtr(path);
  } else {
    const std::string text = read_file(path);
    if (fmt == "bigmoe")
      t = import_bigmoe(text, path, shape);
    else if (fmt == "jsonl")
      t = import_jsonl(text, path, fields, shape);
    else
      t = import_csv(text, path, fields, shape);
  }
  if (model) t = fit_to_model(t, *model, path);
  return t;
}

void save_mtr(const Trace& trace, const std::string& path) { write_mtr(trace, path); }

}  // namespace moesim::traces
