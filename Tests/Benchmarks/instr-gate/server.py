#!/usr/bin/env python3
"""The counted trial server against the trials it replaced, side by side in one call.

1. What a counted `noop` trial costs after the first (a copy of the counted server) against
   a plain `noop` trial of the same build as a suite runs it by default (a copy of the plain
   server), and against a counted trial spawned under callgrind (`--isolation spawn`, the
   path every counted trial took before): medians of `trialSeconds` (spawn or copy to reap),
   NOOPS trials each in one run, the first counted copy left out.
2. The A/A spread of every row of SUITE (default Scenarios/bench-instructions.yaml), each row
   REPS counted trials in one run, copies of the counted server and spawned under callgrind,
   alternating ROUNDS times: median and spread (max - min, and in parts per million), with
   the gate's tolerance (the larger of 20,000 instructions and 0.2 %) and whether the spread
   is within it; and each row's median by each path, with their difference.

usage: server.py STRAIN [SUITE] [REPS] [NOOPS]
"""
import json, os, shutil, statistics, subprocess, sys, tempfile

strain = os.path.abspath(sys.argv[1])
suite = os.path.abspath(sys.argv[2]) if len(sys.argv) > 2 else "Scenarios/bench-instructions.yaml"
reps = int(sys.argv[3]) if len(sys.argv) > 3 else 3
noops = int(sys.argv[4]) if len(sys.argv) > 4 else 12
environment = dict(os.environ, STRAIN_INSTRUCTIONS_SOURCE="callgrind")
work = tempfile.mkdtemp(prefix="strain-counted-server-")


def run(suite_path, out, *extra):
    result = subprocess.run([strain, "run", suite_path, "--out", os.path.join(work, out), "--format", "json", *extra],
                            capture_output=True, text=True, timeout=7200, env=environment)
    if result.returncode not in (0, 1):
        sys.exit(f"{out}: exit {result.returncode}: {result.stderr[-2000:]}")
    return json.load(open(os.path.join(work, out, "run.json")))


noop = os.path.join(work, "noop.yaml")
open(noop, "w").write("name: noop-cost\ntimeout: 30s\nprofiles: [linux]\nruns:\n  - scenario: noop\n    strategies: [main]\n")
counted_noop = os.path.join(work, "noop-counted.yaml")
open(counted_noop, "w").write(open(noop).read().replace("profiles: [linux]\n", "profiles: [linux]\nmeasure: [instructions]\n"))
plain = run(noop, "noop-plain", "--repetitions", str(noops))
copies = run(counted_noop, "noop-copies", "--repetitions", str(noops))
spawned = run(counted_noop, "noop-spawned", "--repetitions", str(max(3, noops // 4)), "--isolation", "spawn")
seconds = lambda record, skip=0: statistics.median(t["metrics"]["trialSeconds"] for t in record["trials"][skip:])
p, c, s = seconds(plain), seconds(copies, 1), seconds(spawned)
first = copies["trials"][0]["metrics"]["trialSeconds"]
print(f"noop, trialSeconds medians: plain copy {p * 1e3:.1f} ms ({noops}); counted copy after the first {c * 1e3:.1f} ms ({noops - 1}, "
      f"the first {first:.2f} s); counted spawned {s:.2f} s ({len(spawned['trials'])})")
print(f"  counted copy / plain ×{c / p:.1f}; counted spawned / plain ×{s / p:.0f}; counted spawned / counted copy ×{s / c:.1f}")
print(f"  execution: copies {copies.get('execution')}, spawned {spawned.get('execution')}")

counts = {"copies": {}, "spawned": {}}
for index in (0,):  # one call: both paths side by side
    for path, extra in (("copies", []), ("spawned", ["--isolation", "spawn"])):
        record = run(suite, f"aa-{path}-{index}", "--repetitions", str(reps), *extra)
        for trial in record["trials"]:
            name = f"{trial['key']['scenario']} {trial['key']['strategy']}"
            value = trial["metrics"].get("instructions")
            if value is not None:
                counts[path].setdefault(name, []).append(value)
print(f"A/A spread of instructions, {reps} counted trials a row in one run:")
print("| row | spawned: median, spread | copies: median, spread | tolerance | copies' median - spawned's |")
print("| --- | --- | --- | --- | --- |")
for name in sorted(set(counts["copies"]) | set(counts["spawned"])):
    cells = []
    for path in ("spawned", "copies"):
        values = counts[path].get(name) or []
        if not values:
            cells.append("—")
            continue
        low, high = min(values), max(values)
        cells.append(f"{statistics.median(values):,.0f}, {high - low:,} ({(high - low) / low * 1e6:.0f} ppm)")
    a, b = counts["spawned"].get(name), counts["copies"].get(name)
    tolerance = max(20000, statistics.median(a) * 0.002) if a else 0
    within = all(max(v) - min(v) <= tolerance for v in (a or [], b or []) if v)
    difference = f"{statistics.median(b) - statistics.median(a):+,.0f}" if a and b else "—"
    print(f"| {name} | {cells[0]} | {cells[1]} | {tolerance:,.0f} ({'within' if within else 'BEYOND'}) | {difference} |")
shutil.rmtree(work, ignore_errors=True)
