#!/usr/bin/env python3
"""Two builds of strain side by side on one suite: ROUNDS rounds, each running the
suite with build A and build B back to back (which goes first alternates), so both
share the machine's load of the moment. Prints, per row, the median throughput of
each build over every trial, the median of each round's ratio (B / A) and each
build's allocation counts. Extra environment (STRAIN_ALLOCATIONS=off,
LD_PRELOAD=…) applies to both builds.

usage: builds.py STRAIN_A STRAIN_B SUITE [ROUNDS] [REPETITIONS]
"""
import json, os, statistics, subprocess, sys, tempfile

builds = [os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])]
suite = os.path.abspath(sys.argv[3])
rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 6
repetitions = sys.argv[5] if len(sys.argv) > 5 else "3"
work = tempfile.mkdtemp(prefix="strain-alloc-builds-")

def row(trial):
    key = trial["key"]
    parameters = ",".join(f"{p['name']}={p['value']}" for p in key.get("parameters", []))
    return f"{key['scenario']}({parameters}) {key['strategy']}"

throughput, ratios, counts = {}, {}, {}
for index in range(rounds):
    medians = {}
    for side in ((0, 1) if index % 2 == 0 else (1, 0)):
        out = os.path.join(work, f"{index}-{side}")
        subprocess.run([builds[side], "run", suite, "--repetitions", repetitions, "--out", out, "--format", "json"],
                       check=True, capture_output=True)
        per_row = {}
        for trial in json.load(open(os.path.join(out, "run.json")))["trials"]:
            metrics = trial["metrics"]
            if trial["outcome"]["kind"] != "completed" or "throughputPerSecond" not in metrics:
                continue
            per_row.setdefault(row(trial), []).append(metrics["throughputPerSecond"])
            throughput.setdefault((row(trial), side), []).append(metrics["throughputPerSecond"])
            counts.setdefault((row(trial), side), []).append(metrics.get("allocations"))
        for name, values in per_row.items():
            medians[(name, side)] = statistics.median(values)
    for (name, side), value in medians.items():
        if side == 1 and (name, 0) in medians:
            ratios.setdefault(name, []).append(value / medians[(name, 0)])

print(f"{rounds} rounds of {repetitions} repetitions, A and B alternately ({suite}); A {builds[0]}, B {builds[1]}")
for name in sorted(ratios):
    a, b = statistics.median(throughput[(name, 0)]), statistics.median(throughput[(name, 1)])
    def span(side):
        values = [c for c in counts.get((name, side), []) if c is not None]
        return f"{min(values)}–{max(values)}" if values else "none"
    print(f"{name}: A {a:,.0f}/s, B {b:,.0f}/s, pooled {b / a:.3f}, median round ratio {statistics.median(ratios[name]):.3f} "
          f"[{min(ratios[name]):.3f}–{max(ratios[name]):.3f}]; allocations A {span(0)}, B {span(1)}")
