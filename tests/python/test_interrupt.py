"""Ctrl-C stops a long call within a second and raises KeyboardInterrupt, never a moesim.Error
(python/moesim_module.cpp, base/interrupt.h). Each case runs the call in a child interpreter, sends it SIGINT
once the call has run for a while, and checks what the child caught, how long after the signal, and that it
then exits normally."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from conftest import QWEN

# The child prints "started", runs the call, and prints what stopped it and when (a monotonic clock).
CHILD = textwrap.dedent("""
    import sys, time
    import moesim
    {setup}
    print("started", flush=True)
    try:
        {call}
        print("finished", time.monotonic(), flush=True)
    except moesim.Error as e:
        print("moesim.Error", time.monotonic(), repr(e)[:300], flush=True)
    except KeyboardInterrupt:
        print("KeyboardInterrupt", time.monotonic(), flush=True)
    # What runs after the interruption still works: the module is usable again.
    r = moesim.replay({qwen!r}, policy="lru", budget=8)
    print("after", r["results"][0]["lookups"] > 0, flush=True)
""")

# A policy whose every hook is Python: a long replay in Python code, with the GIL taken per hook.
PY_POLICY = textwrap.dedent("""
    class Fifo(moesim.EvictionPolicy):
        def __init__(self, config):
            super().__init__(config)
            self.queue = [[] for _ in range(config["partitions"])]
            self.in_use = set()
        def begin_invocation(self, part): self.in_use.clear()
        def on_hit(self, key, part, next_use): self.in_use.add(key)
        def on_admit(self, key, part, next_use): self.queue[part].append(key); self.in_use.add(key)
        def evict(self, part):
            for i, k in enumerate(self.queue[part]):
                if k not in self.in_use:
                    return self.queue[part].pop(i)
            return None
        def end_invocation(self, part): self.in_use.clear()
    moesim.register_eviction("py-fifo", Fifo)
""")

# A cluster spec of two servers, written by the child (test_cluster.py's).
CLUSTER = textwrap.dedent("""
    import json, tempfile
    SERVERS = tempfile.mktemp(suffix=".json")
    with open(SERVERS, "w") as f:
        json.dump({"model": "qwen3-30b-a3b", "network": {"bandwidth": "500Mbit/s", "latency": "1ms"},
                   "servers": [{"name": n, "hw": "desktop-rtx4090", "gpus": 4, "gpu_memory": "8GiB", "traces": [T],
                                "arrival": "poisson:20s"} for n in ("a", "b")]}, f)
""")

# Single calls that run for many seconds (far longer than the test waits) on the bundled trace: before the
# interruption reached the C++ work, each ran to its end before Python saw the signal.
ROUTINGS = "routing=['identity', 'prune:h=3']"
LONG_CALLS = {
    "compare": ("", "moesim.compare(T, policy='all', budget=list(range(8, 120)), scope=['global', 'layer'])"),
    "replay": ("", f"moesim.replay(T, policy='all', budget=list(range(8, 128)), {ROUTINGS})"),
    "python_policy": (PY_POLICY, f"moesim.replay(T, policy='py-fifo', budget=list(range(8, 128)), {ROUTINGS})"),
    "sweep": ("", "moesim.sweep({'command': 'run', 'grid': {'trace': [T], 'policy': ['lru', 'lfu'],"
                  " 'budget': [str(b) for b in range(8, 128)]}}, jobs=2)"),
    "cluster": (CLUSTER, "moesim.cluster(SERVERS, placement='prism', duration='10h')"),
}


def run_child(call, setup=""):
    script = CHILD.format(setup=f"T = {QWEN!r}\n" + setup, call=call, qwen=QWEN)
    p = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, env=dict(os.environ))
    line = p.stdout.readline()
    assert line.strip() == "started", line + p.stderr.read()
    time.sleep(1.0)
    sent = time.monotonic()
    p.send_signal(signal.SIGINT)
    try:
        out, err = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        pytest.fail(f"still running 60 s after SIGINT: {out} {err}")
    return sent, out.splitlines(), err, p.returncode


@pytest.mark.parametrize("name", sorted(LONG_CALLS))
def test_ctrl_c_stops_a_long_call_with_keyboard_interrupt(name):
    setup, call = LONG_CALLS[name]
    sent, lines, err, code = run_child(call, setup)
    assert lines, err
    what = lines[0].split()
    assert what[0] == "KeyboardInterrupt", f"{lines} {err}"
    assert float(what[1]) - sent < 2.0, f"KeyboardInterrupt {float(what[1]) - sent:.2f} s after SIGINT"
    assert lines[1:] == ["after True"], f"{lines} {err}"
    assert code == 0, err


def test_keyboard_interrupt_raised_inside_a_python_policy_is_not_a_moesim_error():
    import moesim

    class Interrupting(moesim.EvictionPolicy):
        def on_admit(self, key, part, next_use):
            raise KeyboardInterrupt

        def evict(self, part):
            return None

    moesim.register_eviction("py-interrupting", Interrupting)
    with pytest.raises(KeyboardInterrupt):
        try:
            moesim.replay(QWEN, policy="py-interrupting", budget=8)
        except moesim.Error:
            pytest.fail("KeyboardInterrupt arrived as a moesim.Error")
    with pytest.raises(KeyboardInterrupt):
        moesim.run(QWEN, policy="py-interrupting", budget="8GiB")

    class InterruptingRouting(moesim.RoutingPolicy):
        def route(self, layer, decode, selection, weights, logits, cached):
            raise KeyboardInterrupt

    moesim.register_routing("py-interrupting-routing", InterruptingRouting)
    with pytest.raises(KeyboardInterrupt):
        moesim.replay(QWEN, policy="lru", budget=8, routing="py-interrupting-routing")
    # Afterwards calls work again: the interruption does not stay behind.
    assert moesim.replay(QWEN, policy="lru", budget=8)["results"]


def test_a_call_not_interrupted_is_unchanged_by_the_watch():
    # The same result whether the call ran watched (the main thread) or in place (another thread).
    import threading

    import moesim

    main = moesim.replay(QWEN, policy="lru,lfu", budget=[8, 16])
    box = {}
    t = threading.Thread(target=lambda: box.update(r=moesim.replay(QWEN, policy="lru,lfu", budget=[8, 16])))
    t.start()
    t.join()
    strip = lambda d: [(r["eviction"], r["capacity_experts"], r["hits"]) for r in d["results"]]  # noqa: E731
    assert strip(main) == strip(box["r"])
