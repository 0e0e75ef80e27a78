# Run 62's exec timeline (run62-timelines.txt has the command): each expert compute's wall time by its tokens,
# prefill and decode apart, and a least-squares line over the prefill's experts of 2+ tokens.
#   python3 run62-tokens.py tl-exec.json
import collections, json, statistics, sys
d = json.load(open(sys.argv[1]))
ev = d['traceEvents'] if isinstance(d, dict) else d
g = collections.defaultdict(list)
for e in ev:
    if e.get('ph') == 'X' and e.get('name', '').startswith('expert_compute'):
        a = e['args']
        g[(a['step'] == 0, a['tokens'])].append(e['dur'])
for (prefill, tokens), v in sorted(g.items()):
    if tokens <= 12:
        print('%s tokens %d ops %d median %.0f us' % ('prefill' if prefill else 'decode', tokens, len(v), statistics.median(v)))
pts = [(t, y) for (p, t), v in g.items() if p and t >= 2 for y in v]
n = len(pts); mx = sum(t for t, _ in pts) / n; my = sum(y for _, y in pts) / n
b = sum((t - mx) * (y - my) for t, y in pts) / sum((t - mx) ** 2 for t, _ in pts)
print('prefill experts of 2+ tokens: %.0f us + %.1f us per token (least squares)' % (my - b * mx, b))
