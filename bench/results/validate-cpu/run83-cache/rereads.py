import os, mmap, random, time, statistics as st, sys
path = sys.argv[1]; n = int(sys.argv[2]); size = int(sys.argv[3])
fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
buf = mmap.mmap(-1, size)
fsize = os.fstat(fd).st_size
rng = random.Random(int(sys.argv[4]) if len(sys.argv) > 4 else 1)
def offs(k): return [rng.randrange(0, (fsize - size) // 4096) * 4096 for _ in range(k)]
def run(os_):
    ts = []
    for o in os_:
        t = time.perf_counter(); os.preadv(fd, [buf], o); ts.append(time.perf_counter() - t)
    return ts
A = offs(n); B = offs(n)
for name, o in [("A first", A), ("A again", A), ("B first", B), ("A third", A), ("B again", B)]:
    ts = run(o)
    print(f"{name}: median {1e6*st.median(ts):.0f} us, mean {1e6*st.mean(ts):.0f} us, p90 {1e6*sorted(ts)[int(.9*len(ts))]:.0f} us")
