#!/usr/bin/env python3
"""The held-out cells with the drift probes: per cell the cost and the drift-adjusted TPOT error (validate's
errors.cost and errors.cost_drift), their intervals and verdicts at 10%, each exec run's drift ratios; then the
pre-registered rule (drift7 report). usage: summarize.py DIR... (each holding pair3.sh's val-*.json)"""
import glob, json, os, sys

LIMIT = 0.10


def verdict(lo, hi):
    if lo is None or hi is None:
        return "-"
    if max(abs(lo), abs(hi)) <= LIMIT:
        return "met"
    if min(lo, hi) > LIMIT or max(lo, hi) < -LIMIT:
        return "missed"
    return "undecided"


def ranks(xs):
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    r = [0.0] * len(xs)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return r


def spearman(a, b):
    ra, rb = ranks(a), ranks(b)
    n = len(a)
    ma, mb = sum(ra) / n, sum(rb) / n
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    va = sum((x - ma) ** 2 for x in ra) ** 0.5
    vb = sum((y - mb) ** 2 for y in rb) ** 0.5
    return cov / (va * vb) if va > 0 and vb > 0 else float("nan")


def pc(x):
    return "-" if x is None else "%+.1f%%" % (100 * x)


cells = []
for d in sys.argv[1:]:
    for f in sorted(glob.glob(os.path.join(d, "val-*.json"))):
        j = json.load(open(f))
        name = os.path.basename(f)[4:-5]
        e = j["errors"]
        c = e["cost"]
        cd = e.get("cost_drift")
        pr = j["exec"].get("probe", {})
        cell = {"dir": os.path.basename(d.rstrip("/")), "name": name, "cost": c["tpot"],
                "cost_iv": c.get("tpot_interval"), "exec_tpot": j["exec"]["tpot_s"],
                "drift": pr.get("drift", []), "ref": pr.get("reference"),
                "walls": pr.get("wall_s", []),
                "adj": cd["tpot"] if cd else None, "adj_iv": cd.get("tpot_interval") if cd else None,
                "adj_runs": cd["tpot_runs"] if cd else []}
        cells.append(cell)

print("| window | cell | exec TPOT runs (ms) | cost TPOT [interval] verdict | drift-adjusted [interval] verdict | "
      "per-run errors adj. | drift per run: read / decompress / memcpy / ffn |")
print("|---|---|---|---|---|---|---|")
for c in cells:
    civ, aiv = c["cost_iv"] or [None, None], c["adj_iv"] or [None, None]
    drift = "; ".join("/".join("-" if r[k] is None else "%.2f" % r[k] for k in ("read", "decompress", "memcpy", "ffn"))
                      for r in c["drift"])
    print("| %s | %s | %s | %s [%s, %s] %s | %s [%s, %s] %s | %s | %s |" % (
        c["dir"], c["name"], ", ".join("%.1f" % (1000 * t) for t in c["exec_tpot"]), pc(c["cost"]), pc(civ[0]),
        pc(civ[1]), verdict(*civ), pc(c["adj"]), pc(aiv[0]), pc(aiv[1]), verdict(*aiv),
        ", ".join(pc(x) for x in c["adj_runs"]), drift))

judged = [c for c in cells if c["adj"] is not None and c["cost_iv"] and c["adj_iv"]]
if judged:
    mc = sum(abs(c["cost"]) for c in judged) / len(judged)
    ma = sum(abs(c["adj"]) for c in judged) / len(judged)
    narrower = sum(1 for c in judged if (c["adj_iv"][1] - c["adj_iv"][0]) < (c["cost_iv"][1] - c["cost_iv"][0]))
    print("\ncells %d: mean |cost| %.2f%%, mean |adjusted| %.2f%% -> (1) %s" % (len(judged), 100 * mc, 100 * ma,
                                                                           "holds" if ma < mc else "fails"))
    vc = [verdict(*c["cost_iv"]) for c in judged]
    va = [verdict(*c["adj_iv"]) for c in judged]
    print("verdicts at 10%%: cost met %d, undecided %d, missed %d; adjusted met %d, undecided %d, missed %d" % (
        vc.count("met"), vc.count("undecided"), vc.count("missed"), va.count("met"), va.count("undecided"),
        va.count("missed")))
    print("(2) adjusted interval narrower in %d of %d cells -> %s" % (narrower, len(judged),
                                                                   "holds" if 2 * narrower > len(judged) else "fails"))
    xs, ys = [], []
    for c in judged:
        if "offload" not in c["name"]:
            continue
        med = sorted(c["exec_tpot"])[len(c["exec_tpot"]) // 2]
        for r, t in zip(c["drift"], c["exec_tpot"]):
            if r["read"] is not None:
                xs.append(r["read"])
                ys.append(t / med)
    if len(xs) >= 3:
        rho = spearman(xs, ys)
        print("(3) offload runs %d: Spearman(read ratio, exec TPOT / cell median) = %+.2f -> %s" % (
            len(xs), rho, "holds" if rho >= 0.3 else "fails"))
    walls = [w for c in cells for w in c["walls"]]
    if walls:
        print("probe wall time: %d probes, median %.3f s, max %.3f s" % (len(walls), sorted(walls)[len(walls) // 2],
                                                                     max(walls)))

# Exploratory (not in the rule): per kind, over every run of every cell (zipmoe cells included), the rank
# correlation of the run's drift ratio with its exec TPOT over its cell's median; and the mean |per-run error|.
for kind in ("read", "decompress", "memcpy", "ffn"):
    xs, ys = [], []
    for c in cells:
        if not c["drift"]:
            continue
        med = sorted(c["exec_tpot"])[len(c["exec_tpot"]) // 2]
        for r, t in zip(c["drift"], c["exec_tpot"]):
            if r[kind] is not None:
                xs.append(r[kind])
                ys.append(t / med)
    if len(xs) >= 3:
        print("exploratory: %s ratio vs exec TPOT / cell median over %d runs: Spearman %+.2f" % (kind, len(xs),
                                                                                           spearman(xs, ys)))
