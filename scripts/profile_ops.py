#!/usr/bin/env python3
"""Per-operator self times of a profiled run, from the Chrome trace that `mlm-bench --profile`
(LibTorch's profiler) or a peer's `--profile` (torch.profiler) writes: the same table for both
sides, so their operators can be compared one by one.

  scripts/profile_ops.py TRACE [TRACE...] [--steps N] [--top K]

Self time = an operator's time minus the operators it called (nesting on the same thread), so
the column adds up to the time spent in operators. With --steps, milliseconds per step. Several
traces: one column each, in the order given.
"""
import argparse
import collections
import json


def self_times(path):
    """{operator name: (self microseconds, calls)} over the trace's CPU operators."""
    with open(path) as f:
        trace = json.load(f)
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    by_thread = collections.defaultdict(list)
    for e in events:
        if e.get("ph") == "X" and e.get("cat") in ("cpu_op", "Operator", "user_annotation") \
                and not e.get("name", "").startswith("ProfilerStep"):
            by_thread[(e.get("pid"), e.get("tid"))].append(e)
    totals = collections.defaultdict(lambda: [0.0, 0])
    for ops in by_thread.values():
        # Parents before children: by start, the longer first at equal starts.
        ops.sort(key=lambda e: (float(e["ts"]), -float(e["dur"])))
        stack = []  # [end, name, child time]
        def close(until):
            while stack and stack[-1][0] <= until:
                end, name, children, dur = stack.pop()
                totals[name][0] += dur - children
                totals[name][1] += 1
                if stack:
                    stack[-1][2] += dur
        for e in ops:
            start, dur = float(e["ts"]), float(e["dur"])
            close(start)
            stack.append([start + dur, e["name"], 0.0, dur])
        close(float("inf"))
    return totals


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("traces", nargs="+")
    ap.add_argument("--steps", type=int, default=1, help="steps the trace holds (ms per step)")
    ap.add_argument("--top", type=int, default=30)
    a = ap.parse_args()
    tables = [self_times(t) for t in a.traces]
    names = sorted({n for t in tables for n in t}, key=lambda n: -max(t.get(n, [0])[0] for t in tables))
    heads = "".join(f" | {t[-40:]:>12} ms (calls)" for t in a.traces)
    print(f"{'operator':<48}{heads}")
    for n in names[:a.top]:
        row = "".join(f" | {t.get(n, [0, 0])[0] / 1e3 / a.steps:12.1f} ({t.get(n, [0, 0])[1] // a.steps:4d})"
                      for t in tables)
        print(f"{n[:48]:<48}{row}")
    totals = "".join(f" | {sum(v[0] for v in t.values()) / 1e3 / a.steps:12.1f}       " for t in tables)
    print(f"{'all operators':<48}{totals}")


if __name__ == "__main__":
    main()
