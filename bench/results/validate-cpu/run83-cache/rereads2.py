import os, mmap, random, time, statistics as st, sys
path = sys.argv[1]; size = 262144
fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
buf = mmap.mmap(-1, size); big = mmap.mmap(-1, 1 << 20)
fsize = os.fstat(fd).st_size
rng = random.Random(int(sys.argv[2]))
def run(os_):
    ts = []
    for o in os_:
        t = time.perf_counter(); os.preadv(fd, [buf], o); ts.append(time.perf_counter() - t)
    return 1e6 * st.median(ts)
# A: 400 random 256 KiB blocks in the first 1 GiB of the file; filler: sequential 1 MiB reads from 1 GiB on.
A = [rng.randrange(0, (1 << 30) // 4096) * 4096 for _ in range(400)]
print(f"A first {run(A):.0f} us; again {run(A):.0f} us")
pos = 1 << 30
for gib in (0.5, 1, 1.5):
    n = int(gib * 1024); 
    for i in range(n):
        os.preadv(fd, [big], pos); pos += 1 << 20
        if pos + (1 << 20) > fsize: pos = 1 << 30
    print(f"after {gib} GiB more of other data: A {run(A):.0f} us")
time.sleep(float(sys.argv[3]))
print(f"after {sys.argv[3]} s idle: A {run(A):.0f} us")
