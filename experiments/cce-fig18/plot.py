"""Cache-Conditional Experts Fig. 18 from run.sh's runs: OUT/SETTING-INIT.sSEED.timeline.json (every expert_compute
and ssd_read op with its step, layer and expert) and the traces they ran, OUT/phi-sSEED.jsonl (the router's own
top-2 per token and layer) and, for a random start, OUT/phi-sSEED-random.jsonl (the same behind 4 tokens that
fill the cache with random experts).

Per layer it rebuilds the LRU cache of 8 experts from the selections (in the order the run looks them up) and
stops, naming the run, the step and the layer, where the misses it derives differ from the run's SSD reads: the
cache states it reports are the run's. Writes
  OUT/per_token.csv  per setting, seed and token (0 = the prompt token): miss rate, share of (token, layer)
                     selections that differ from the router's, share of the cache still holding the initial
                     random experts, and for a random start the share of layers whose selection and whose cache
                     equal the empty-start run's at the same routing;
  OUT/summary.csv    per setting, over the 4 seeds: miss rate and deviation over tokens 0-7 and 8-64, the share of
                     the initial random experts still cached after 8 and 64 tokens, and for a random start the
                     share of (layer, seed) pairs whose cache has become the empty-start run's for good by token
                     8, 16 and 64 (identical from then to the end);
  OUT/cce-fig18.png/.pdf  the paper's view (one layer of seed 1: green a hit, red a miss, blue cached and not
                     selected) for its four settings, and the convergence curves.
Prints one line per setting."""
import collections
import csv
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import plotlib  # noqa: E402
from plotlib import plt  # noqa: E402
from matplotlib.colors import ListedColormap  # noqa: E402

out = plotlib.out_dir()
LAYERS, EXPERTS, CAPACITY, SEEDS = 32, 16, 8, (1, 2, 3, 4)
SETTINGS = [("original", "empty"), ("cp0.5", "empty"), ("cp0.5", "random"), ("cp0.8", "random"),
            ("original", "random"), ("cp0.8", "empty"), ("cp0.5running", "empty")]
LABELS = {"original": "original routing", "cp0.5": "Cache-Prior lambda 0.5", "cp0.8": "Cache-Prior lambda 0.8",
          "cp0.5running": "Cache-Prior lambda 0.5, running Delta"}


def label(s):
    return f"{LABELS[s[0]]}, {s[1]} cache"


def read_jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def step_of(r):  # the trace's one prompt token is step 0, decode token k is step k + 1
    return 0 if r["phase"] == "prefill" else r["token"] + 1


class Lru:
    """One layer's LRU cache: an invocation looks its experts up in order; a miss evicts the least recently
    used expert the invocation does not ask for (core/eviction.h's per-invocation admission)."""

    def __init__(self):
        self.order = []  # least recently used first

    def invoke(self, experts):
        misses = set()
        for e in experts:
            if e in self.order:
                self.order.remove(e)
            else:
                misses.add(e)
                if len(self.order) >= CAPACITY:
                    victim = next(x for x in self.order if x not in experts)
                    self.order.remove(victim)
            self.order.append(e)
        return misses


def lookup_order(router, selected):
    """The order the run looks a token's experts up in: the router's slots, a router's expert that stays in its
    slot and a brought-in one in a vacated slot, in the order chosen (policies/routing/ranking.h; with one token
    per invocation, core/routing.h's derive_demands keeps the slot order)."""
    brought = [e for e in selected if e not in router]
    return [e if e in selected else brought.pop(0) for e in router]


WARM = 4  # the random start's tokens before the trace (steps 0-3 of its runs)
runs = {}  # (setting, init, seed) -> per token, per layer: (selected, misses, cache after)
for seed in SEEDS:
    for setting, init in SETTINGS:
        name = f"{setting}-{init}.s{seed}"
        trace = read_jsonl(os.path.join(out, f"phi-s{seed}{'' if init == 'empty' else '-random'}.jsonl"))
        router_order = {(step_of(r), r["layer"]): r["experts"] for r in trace}
        steps = 1 + max(s for s, _ in router_order)
        with open(os.path.join(out, name + ".timeline.json")) as f:
            events = json.load(f)
        computed = collections.defaultdict(list)  # (step, layer) -> experts in compute order
        reads = collections.defaultdict(set)
        for e in sorted((e for e in events if e.get("ph") == "X"), key=lambda e: e["ts"]):
            a = e.get("args", {})
            if e["name"].startswith("expert_compute"):
                computed[(a["step"], a["layer"])].append(a["expert"])
            elif e["name"].startswith("ssd_read"):
                reads[(a["step"], a["layer"])].add(a["expert"])
        caches = [Lru() for _ in range(LAYERS)]
        rows = []
        for step in range(steps):
            per_layer = []
            for layer in range(LAYERS):
                sel = computed[(step, layer)]
                router = router_order[(step, layer)]
                if len(sel) != len(set(sel)) or not sel:
                    sys.exit(f"plot.py: {name}: step {step} layer {layer}: computed experts {sel}")
                if init == "random" and step < WARM and set(sel) != set(router):
                    sys.exit(f"plot.py: {name}: step {step} layer {layer}: the random start's token selected "
                             f"{sorted(sel)}, not its {sorted(router)}")
                misses = caches[layer].invoke(lookup_order(router, sel))
                if misses != reads[(step, layer)]:
                    sys.exit(f"plot.py: {name}: step {step} layer {layer}: the rebuilt LRU misses {sorted(misses)}, "
                             f"the run read {sorted(reads[(step, layer)])}")
                per_layer.append((set(sel), misses, list(caches[layer].order), set(router)))
            rows.append(per_layer)
        skip = WARM if init == "random" else 0
        runs[(setting, init, seed)] = {"steps": rows[skip:], "initial": [set(c) for c in
                                                                        ([r[2] for r in rows[skip - 1]] if skip else
                                                                         [[] for _ in range(LAYERS)])]}


def converged_from(a, b):
    """Per layer, the first step from which the two runs' caches are the same set at every later step (None:
    never within the trace)."""
    n = len(a)
    first = []
    for layer in range(LAYERS):
        t = n
        while t > 0 and set(a[t - 1][layer][2]) == set(b[t - 1][layer][2]):
            t -= 1
        first.append(t if t < n else None)
    return first


per_token = []
summary = []
for setting, init in SETTINGS:
    acc = collections.defaultdict(list)
    conv = []
    for seed in SEEDS:
        run = runs[(setting, init, seed)]
        empty = runs[(setting, "empty", seed)]["steps"] if init == "random" else None
        if empty:
            conv += converged_from(run["steps"], empty)
        for t, layers in enumerate(run["steps"]):
            lookups = sum(len(x[0]) for x in layers)
            miss = sum(len(x[1]) for x in layers) / lookups
            changed = sum(x[0] != x[3] for x in layers) / LAYERS
            initial = (sum(len(set(x[2]) & run["initial"][layer]) for layer, x in enumerate(layers)) /
                       (LAYERS * CAPACITY) if init == "random" else "")
            same_sel = same_cache = ""
            if empty:
                same_sel = sum(x[0] == empty[t][layer][0] for layer, x in enumerate(layers)) / LAYERS
                same_cache = sum(set(x[2]) == set(empty[t][layer][2]) for layer, x in enumerate(layers)) / LAYERS
            per_token.append([setting, init, seed, t, "%.4f" % miss, "%.4f" % changed,
                              initial if initial == "" else "%.4f" % initial,
                              same_sel if same_sel == "" else "%.4f" % same_sel,
                              same_cache if same_cache == "" else "%.4f" % same_cache])
            acc[("miss", t < 8)].append(miss)
            acc[("changed", t < 8)].append(changed)
            if init == "random":
                acc[("initial", t)].append(initial)
    mean = lambda xs: sum(xs) / len(xs)  # noqa: E731
    last = len(runs[(setting, init, SEEDS[0])]["steps"]) - 1
    row = {"setting": setting, "initial_cache": init,
           "miss_rate_tokens_0_7": mean(acc[("miss", True)]), "miss_rate_tokens_8_64": mean(acc[("miss", False)]),
           "changed_tokens_0_7": mean(acc[("changed", True)]), "changed_tokens_8_64": mean(acc[("changed", False)])}
    if init == "random":
        row["initial_experts_cached_after_8"] = mean(acc[("initial", 7)])
        row["initial_experts_cached_after_64"] = mean(acc[("initial", last)])
        for k in (8, 16, 64):
            row[f"caches_converged_by_{k}"] = sum(c is not None and c <= k for c in conv) / len(conv)
    summary.append(row)

with open(os.path.join(out, "per_token.csv"), "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["setting", "initial_cache", "seed", "token", "miss_rate", "changed_fraction",
                "initial_experts_cached", "same_selection_as_empty", "same_cache_as_empty"])
    w.writerows(per_token)
keys = list(summary[2].keys())
with open(os.path.join(out, "summary.csv"), "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(keys)
    for row in summary:
        w.writerow([row[k] if isinstance(row.get(k), str) else ("%.4f" % row[k] if k in row else "") for k in keys])

# The paper's view: one layer of seed 1, its four settings; then the convergence curves over all layers/seeds.
LAYER, SHOWN = 0, 32
fig = plt.figure(figsize=(13, 7.4))
grid = fig.add_gridspec(2, 4, height_ratios=[1, 0.9])
cmap = ListedColormap(["white", "tab:blue", "tab:green", "tab:red"])
for k, s in enumerate(SETTINGS[:4]):
    ax = fig.add_subplot(grid[0, k])
    steps = runs[(s[0], s[1], 1)]["steps"]
    img = [[0] * SHOWN for _ in range(EXPERTS)]
    for t in range(SHOWN):
        sel, misses, cache, _ = steps[t][LAYER]
        for e in range(EXPERTS):
            img[e][t] = 3 if e in misses else 2 if e in sel else 1 if e in cache else 0
    ax.imshow(img, cmap=cmap, vmin=0, vmax=3, aspect="auto", interpolation="nearest")
    ax.set_title(label(s), fontsize=8.5)
    ax.set_xlabel("token (0 = the prompt's)")
    ax.grid(False)
    if k == 0:
        ax.set_ylabel(f"expert (layer {LAYER}, seed 1)")
means = collections.defaultdict(list)
for r in per_token:
    means[(r[0], r[1], r[3])].append(r)
ax1, ax2 = fig.add_subplot(grid[1, :2]), fig.add_subplot(grid[1, 2:])
for i, s in enumerate(SETTINGS):
    ts = sorted(t for (a, b, t) in means if (a, b) == s)
    col = lambda j: [sum(float(r[j]) for r in means[(s[0], s[1], t)]) / len(SEEDS) for t in ts]  # noqa: E731
    if s[1] == "random":
        ax1.plot(ts, col(8), **plotlib.series_style(i), label=label(s))
        ax2.plot(ts, col(6), **plotlib.series_style(i), label=label(s))
ax1.set_xlabel("token")
ax1.set_ylabel("layers whose cache equals the empty start's")
ax1.set_title("convergence: random start against empty start, same routing (mean of 4 seeds)", fontsize=8.5)
ax2.set_xlabel("token")
ax2.set_ylabel("share of the cache still the initial random experts")
ax2.set_title("what is left of the random initial cache (mean of 4 seeds)", fontsize=8.5)
ax1.legend(fontsize=7.5)
fig.suptitle("Cache-Conditional Experts Fig. 18 in moesim: initial cache state, Phi-3.5-MoE, 8 of 16 experts "
             "per layer (LRU), J = 1, SYNTHETIC traces (green hit, red miss, blue cached)", fontsize=9.5)
fig.tight_layout()
plotlib.save(fig, out, "cce-fig18")

for row in summary:
    extra = ""
    if row["initial_cache"] == "random":
        extra = (", initial experts cached after 8/64 tokens %.2f/%.2f, caches converged by token 16 %.2f" %
                 (row["initial_experts_cached_after_8"], row["initial_experts_cached_after_64"],
                  row["caches_converged_by_16"]))
    print("cce-fig18 %s: miss rate %.3f (tokens 0-7) %.3f (8-64), changed %.3f / %.3f%s" %
          (label((row["setting"], row["initial_cache"])), row["miss_rate_tokens_0_7"], row["miss_rate_tokens_8_64"],
           row["changed_tokens_0_7"], row["changed_tokens_8_64"], extra))
