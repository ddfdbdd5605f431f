#!/usr/bin/env python3
"""The gate on counted instructions, repeated beside two busy loops: ROUNDS interleaved
gates of a planted build against its base (2 % more iterations of Tests/GateFixture's
`spin`) and ROUNDS A/A gates of the base against itself, REPS repetitions a side, each
with `--measure instructions` (every trial under callgrind). Counts the planted gates
that failed on exactly `spin main`, by instructions, with SpinScenario.prepare named,
and the A/A gates that passed with every row's instructions judged unchanged; prints
each row's instruction counts over all gates (median, spread in parts per million).

The builds are what PlantedRegressionTests builds (`base` and `more`), or any two builds
of the fixture with plantedWorkPercent 100 and 102. The busy loops are
`sh -c 'while :; do :; done'`, started here and killed at the end (STRAIN_BENCH_LOOPS=N starts N
instead; 0 where the machine already runs its own).

usage: run.py STRAIN BASE PLANTED SUITE [ROUNDS] [REPS]
"""
import json, os, signal, statistics, subprocess, sys, tempfile, time

strain, base, planted, suite = (os.path.abspath(a) for a in sys.argv[1:5])
rounds = int(sys.argv[5]) if len(sys.argv) > 5 else 5
reps = int(sys.argv[6]) if len(sys.argv) > 6 else 3
work = tempfile.mkdtemp(prefix="strain-instr-gate-")
counts = {}

def gate(old, new, out):
    started = time.monotonic()
    status = subprocess.run([strain, "gate", "--baseline-binary", old, "--candidate-binary", new, suite, "--measure", "instructions",
                             "--repetitions", str(reps), "--out", out], capture_output=True, timeout=3600).returncode
    seconds = time.monotonic() - started
    report = json.load(open(os.path.join(out, "gate.json")))
    rows = {f"{r['key']['scenario']} {r['key']['strategy']}": r for r in report["rows"]}
    for side in ["baseline", "candidate"]:
        if side == "candidate" and old != new:
            continue
        for trial in json.load(open(os.path.join(out, f"{side}-run.json")))["trials"]:
            value = trial["metrics"].get("instructions")
            if value is not None:
                counts.setdefault(f"{trial['key']['scenario']} {trial['key']['strategy']}", []).append(value)
    return status, rows, seconds

def metric(row, name):
    return {m["metric"]: m for m in row["metrics"]}.get(name) or {}

loops = [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(int(os.environ.get("STRAIN_BENCH_LOOPS", "2")))]
caught = passed = 0
durations = []
try:
    for index in range(rounds):
        status, rows, seconds = gate(base, planted, os.path.join(work, f"planted-{index}"))
        durations.append(seconds)
        regressed = [name for name, row in rows.items() if row["verdict"] == "regressed"]
        spin = metric(rows["spin main"], "instructions")
        named = any("SpinScenario.prepare" in place for place in (spin.get("grewAt") or [])[:1])
        if status == 1 and regressed == ["spin main"] and spin.get("verdict") == "regressed" and named:
            caught += 1
        else:
            print(f"planted {index}: exit {status}, regressed {regressed}, {spin.get('verdict')}, {spin.get('grewAt')}")
        status, rows, seconds = gate(base, base, os.path.join(work, f"aa-{index}"))
        durations.append(seconds)
        judged = {name: metric(row, "instructions").get("verdict") for name, row in rows.items()}
        if status == 0 and all(verdict == "unchanged" for verdict in judged.values()):
            passed += 1
        else:
            print(f"A/A {index}: exit {status}, {judged}")
finally:
    for loop in loops:
        os.kill(loop.pid, signal.SIGKILL)
        loop.wait()
print(f"planted: caught on exactly its row by instructions, function named, in {caught} of {rounds}; "
      f"A/A: passed with every row's instructions judged unchanged in {passed} of {rounds} "
      f"({reps} repetitions a side, median gate {statistics.median(durations):.0f} s)")
for name, values in sorted(counts.items()):
    low, high = min(values), max(values)
    print(f"  {name}: base build's counts, {len(values)} trials: median {statistics.median(values):,.0f}, "
          f"spread {high - low:,} ({(high - low) / low * 1e6:.0f} ppm)")
