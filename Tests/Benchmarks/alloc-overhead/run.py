#!/usr/bin/env python3
"""What counting allocations costs: a suite run with counting on and with it off
(STRAIN_ALLOCATIONS=off, read by the trial's child), back to back, ROUNDS times
(which goes first alternates), so both sides share the machine's load of the
moment. Prints, per row, the median throughput of each side over every trial,
the median of each round's ratio (on / off) and the allocation counts seen
with counting on (the A/A spread of a counted metric: min, max, and the spread
as a fraction of the median).

usage: run.py STRAIN SUITE [ROUNDS] [REPETITIONS]
"""
import json, os, statistics, subprocess, sys, tempfile

strain = os.path.abspath(sys.argv[1])
suite = os.path.abspath(sys.argv[2])
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 6
repetitions = sys.argv[4] if len(sys.argv) > 4 else "3"
work = tempfile.mkdtemp(prefix="strain-alloc-overhead-")

def row(trial):
    key = trial["key"]
    parameters = ",".join(f"{p['name']}={p['value']}" for p in key.get("parameters", []))
    return f"{key['scenario']}({parameters}) {key['strategy']}"

throughput = {}  # (row, counting) -> [values]
ratios = {}      # row -> [per-round ratio of medians]
counts = {}      # row -> [allocations]
for index in range(rounds):
    medians = {}
    for counting in ((True, False) if index % 2 == 0 else (False, True)):
        out = os.path.join(work, f"{index}-{'on' if counting else 'off'}")
        environment = dict(os.environ)
        if not counting:
            environment["STRAIN_ALLOCATIONS"] = "off"
        subprocess.run([strain, "run", suite, "--repetitions", repetitions, "--out", out, "--format", "json"],
                       check=True, capture_output=True, env=environment)
        record = json.load(open(os.path.join(out, "run.json")))
        per_row = {}
        for trial in record["trials"]:
            metrics = trial["metrics"]
            if trial["outcome"]["kind"] != "completed" or "throughputPerSecond" not in metrics:
                continue
            per_row.setdefault(row(trial), []).append(metrics["throughputPerSecond"])
            throughput.setdefault((row(trial), counting), []).append(metrics["throughputPerSecond"])
            if counting:
                counts.setdefault(row(trial), []).append(metrics.get("allocations"))
        for name, values in per_row.items():
            medians[(name, counting)] = statistics.median(values)
    for (name, counting), value in medians.items():
        if counting and (name, False) in medians:
            ratios.setdefault(name, []).append(value / medians[(name, False)])

print(f"{rounds} rounds of {repetitions} repetitions, counting on and off alternately ({suite})")
for name in sorted(ratios):
    on = statistics.median(throughput[(name, True)])
    off = statistics.median(throughput[(name, False)])
    values = [c for c in counts.get(name, []) if c is not None]
    spread = ""
    if values:
        middle = statistics.median(values)
        spread = f"; allocations {min(values)}–{max(values)} (spread {(max(values) - min(values)) / middle * 100 if middle else 0:.2f}% of {middle:g})"
    print(f"{name}: on {on:,.0f}/s, off {off:,.0f}/s, pooled {on / off:.3f}, median round ratio {statistics.median(ratios[name]):.3f} "
          f"[{min(ratios[name]):.3f}–{max(ratios[name]):.3f}]{spread}")
