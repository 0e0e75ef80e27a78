#include "exec/expert_naming.h"

#include <algorithm>
#include <map>
#include <regex>
#include <set>

#include "base/error.h"

namespace moesim::exec {
namespace {

struct Layout {
  const char* name;
  std::regex re;
  int stack_group, layer_group, expert_group, role_group;
  std::vector<std::string> roles;  // in FFN order
};

const std::vector<Layout>& layouts() {
  static const std::vector<Layout> l = {
      {"hf-mlp-experts",
       std::regex(R"(model\.layers\.(\d+)\.mlp\.experts\.(\d+)\.(gate_proj|up_proj|down_proj)\.weight)"),
       0,
       1,
       2,
       3,
       {"gate_proj", "up_proj", "down_proj"}},
      {"mixtral",
       std::regex(R"(model\.layers\.(\d+)\.block_sparse_moe\.experts\.(\d+)\.(w1|w2|w3)\.weight)"),
       0,
       1,
       2,
       3,
       {"w1", "w3", "w2"}},
      {"switch",
       std::regex(
           R"((encoder|decoder)\.block\.(\d+)\.layer\.\d+\.mlp\.experts\.expert_(\d+)\.(wi|wo)\.weight)"),
       1,
       2,
       3,
       4,
       {"wi", "wo"}},
  };
  return l;
}

bool parse_u64(const std::string& s, uint64_t& v) {
  if (s.empty() || s.size() > 18) return false;
  v = std::stoull(s);
  return true;
}

}  // namespace

std::optional<ExpertName> parse_expert_name(const std::string& name) {
  std::smatch m;
  for (const auto& l : layouts()) {
    if (!std::regex_match(name, m, l.re)) continue;
    ExpertName e;
    e.layout = l.name;
    if (l.stack_group) e.stack = m[l.stack_group].str();
    if (!parse_u64(m[l.layer_group].str(), e.layer) || !parse_u64(m[l.expert_group].str(), e.expert))
      return std::nullopt;
    e.role = m[l.role_group].str();
    e.role_rank = static_cast<int>(std::find(l.roles.begin(), l.roles.end(), e.role) - l.roles.begin());
    return e;
  }
  return std::nullopt;
}

ExpertSelection select_experts(const WeightSource& w, bool all_tensors) {
  ExpertSelection sel;
  if (all_tensors) {
    sel.layout = "all-tensors";
    uint32_t index = 0;
    for (const auto& t : w.tensors()) {
      if (!t.dtype) {
        ++sel.skipped;
        ++index;
        continue;
      }
      sel.tensors.push_back({0, index++, t.name, &t});
    }
    sel.layers = sel.tensors.empty() ? 0 : 1;
    if (sel.tensors.empty()) throw Error(w.path() + ": no BF16, F16 or F32 tensor to pack");
    return sel;
  }
  struct Found {
    ExpertName n;
    const TensorView* t;
  };
  std::vector<Found> found;
  std::set<std::string> kinds;
  for (const auto& t : w.tensors()) {
    auto n = parse_expert_name(t.name);
    if (!n) continue;
    if (!t.dtype)
      throw Error(t.file + ": expert tensor '" + t.name + "' has dtype " + t.dtype_name +
                  " (moesim packs BF16, F16, F32)");
    kinds.insert(n->layout);
    found.push_back({*n, &t});
  }
  if (found.empty())
    throw Error(
        w.path() +
        ": no expert tensors found (known names: model.layers.L.mlp.experts.E.{gate,up,down}_proj.weight, "
        "model.layers.L.block_sparse_moe.experts.E.w{1,2,3}.weight, "
        "{encoder,decoder}.block.B.layer.N.mlp.experts.expert_E.{wi,wo}.weight); "
        "use --all-tensors to pack every tensor of a non-MoE checkpoint");
  for (const auto& k : kinds) sel.layout += (sel.layout.empty() ? "" : "+") + k;
  // Stack order: "" (decoder-only) and encoder before decoder.
  auto stack_rank = [](const std::string& s) { return s == "decoder" ? 1 : 0; };
  std::map<std::pair<int, uint64_t>, uint32_t> layer_index;
  for (const auto& f : found) layer_index[{stack_rank(f.n.stack), f.n.layer}] = 0;
  uint32_t next = 0;
  for (auto& [k, v] : layer_index) v = next++;
  sel.layers = next;
  std::sort(found.begin(), found.end(), [&](const Found& a, const Found& b) {
    const auto la = layer_index[{stack_rank(a.n.stack), a.n.layer}];
    const auto lb = layer_index[{stack_rank(b.n.stack), b.n.layer}];
    if (la != lb) return la < lb;
    if (a.n.expert != b.n.expert) return a.n.expert < b.n.expert;
    return a.n.role_rank < b.n.role_rank;
  });
  for (const auto& f : found) {
    if (f.n.expert > UINT32_MAX) throw Error(f.t->file + ": tensor '" + f.t->name + "': expert id too large");
    sel.tensors.push_back(
        {layer_index[{stack_rank(f.n.stack), f.n.layer}], static_cast<uint32_t>(f.n.expert), f.n.role, f.t});
  }
  return sel;
}

}  // namespace moesim::exec
