#!/usr/bin/env python3
"""A training curve against a reference curve made of several seeds.

    curve_check.py reference OUT.json METRICS.jsonl... [--source TEXT]   (one metrics.jsonl per
                                       seed, 2 or more; TEXT, how they were made, replaces their
                                       paths in OUT.json's "sources")
    curve_check.py compare REFERENCE.json METRICS.jsonl [--label TEXT]

reference: at every step where each seed's run logged a training loss (the mean over its
logging window) and an evaluation loss, their mean and standard deviation over the seeds.

compare: prints each step's value, the reference mean and a prediction interval for one more
run drawn like the seeds (Student's t with n - 1 degrees of freedom, times
std * sqrt(1 + 1/n)), and exits 1 when a value lies outside it or a reference step is
missing. The intervals hold together with 99% probability (Bonferroni: each at 1 - 1%/k for
the k points), so a run like the seeds fails at most 1 time in 100. A run on another device,
precision or seed than the reference's is "the same curve within noise" when it stays inside:
the seeds' spread bounds what differs between two runs (initial weights, data order, masks,
and rounding, which is smaller).
"""
import argparse
import json
import math
import statistics
import sys

FAMILY_LEVEL = 0.99  # the probability that every interval of a curve holds


def t_quantile(p, df):
    """The p-quantile (p > 0.5) of Student's t with df degrees of freedom: the density
    integrated by Simpson's rule and bisected (no scipy on the GPU machine); 4 decimals."""
    log_c = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)

    def density(x):
        return math.exp(log_c - (df + 1) / 2 * math.log1p(x * x / df))

    def cdf(x, steps=2000):  # 0.5 + the integral from 0 to x
        h = x / steps
        inner = sum((4 if i % 2 else 2) * density(i * h) for i in range(1, steps))
        return 0.5 + h / 3 * (density(0) + inner + density(x))

    lo, hi = 0.0, 1.0
    while cdf(hi) < p:
        lo, hi = hi, 2 * hi
    while hi - lo > 1e-5:
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if cdf(mid) < p else (lo, mid)
    return (lo + hi) / 2


METRICS = ("loss", "eval_loss")


def curve(path):
    """{metric: {step: value}} of one metrics.jsonl (training rows carry "loss", evaluation
    rows "eval_loss"; the last row of a step wins, as a resumed run rewrites it)."""
    out = {m: {} for m in METRICS}
    with open(path) as f:
        for line in f:
            if not line.strip():
                continue
            row = json.loads(line)
            for m in METRICS:
                if m in row and "step" in row:
                    out[m][int(row["step"])] = float(row[m])
    return out


def reference(out_path, paths, source=None):
    if len(paths) < 2:
        sys.exit(f"curve_check reference: needs 2 runs or more, got {len(paths)}")
    curves = [curve(p) for p in paths]
    ref = {"runs": len(curves), "sources": [source] if source else paths, "metrics": {}}
    for m in METRICS:
        steps = sorted(set.intersection(*(set(c[m]) for c in curves)))
        if not steps:
            sys.exit(f"curve_check reference: no step where every run logged {m}")
        ref["metrics"][m] = [{"step": s, "mean": statistics.fmean(v), "std": statistics.stdev(v), "values": v}
                             for s, v in ((s, [c[m][s] for c in curves]) for s in steps)]
    with open(out_path, "w") as f:
        json.dump(ref, f, indent=1)
        f.write("\n")
    print(f"curve_check: {out_path}: {len(curves)} runs, steps {[r['step'] for r in ref['metrics']['loss']]}")


def compare(ref_path, path, label):
    ref = json.load(open(ref_path))
    run = curve(path)
    n, points = ref["runs"], sum(len(rows) for rows in ref["metrics"].values())
    t = t_quantile(1 - (1 - FAMILY_LEVEL) / (2 * points), n - 1)
    bad = 0
    print(f"{label}: {path} against {ref_path} ({n} seeds; {points} intervals holding together "
          f"at {FAMILY_LEVEL:.0%}: mean +- {t * math.sqrt(1 + 1 / n):.2f} std)")
    print(f"  {'metric':<10} {'step':>5} {'value':>8} {'ref mean':>9} {'interval':>19}")
    for m, rows in ref["metrics"].items():
        for r in rows:
            half = t * r["std"] * math.sqrt(1 + 1 / n)
            lo, hi = r["mean"] - half, r["mean"] + half
            value = run[m].get(r["step"])
            if value is None:
                verdict, shown = "MISSING", "-"
            else:
                verdict, shown = ("ok" if lo <= value <= hi else "OUTSIDE"), f"{value:.4f}"
            bad += verdict != "ok"
            print(f"  {m:<10} {r['step']:>5} {shown:>8} {r['mean']:>9.4f} [{lo:.4f}, {hi:.4f}]  {verdict}")
    print(f"{label}: {'the same curve within noise' if not bad else f'{bad} point(s) off the curve'}")
    return 1 if bad else 0


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    make = commands.add_parser("reference")
    make.add_argument("out")
    make.add_argument("metrics", nargs="+")
    make.add_argument("--source")
    check = commands.add_parser("compare")
    check.add_argument("reference")
    check.add_argument("metrics")
    check.add_argument("--label", default="run")
    a = parser.parse_args(argv)
    if a.command == "reference":
        reference(a.out, a.metrics, a.source)
        return 0
    return compare(a.reference, a.metrics, a.label)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
