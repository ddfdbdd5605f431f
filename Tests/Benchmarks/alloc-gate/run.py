#!/usr/bin/env python3
"""The gate on counted allocations, repeated: ROUNDS interleaved gates of a planted
build against its base (one extra allocation per node in Tests/GateFixture's `nodes`)
and ROUNDS A/A gates of the base against itself, at 3 repetitions a side. Counts the
planted gates that failed on exactly `nodes main`, by allocations, with buildNodes
named, and the A/A gates that passed with every row's allocations judged unchanged.

The two builds are what PlantedRegressionTests builds (`base` and `tagged` in its
temporary folder), or any two builds of the fixture with plantedAllocationsPerNode 0 and 1.

usage: run.py STRAIN BASE TAGGED SUITE [ROUNDS]
"""
import json, os, subprocess, sys, tempfile

strain, base, tagged, suite = (os.path.abspath(a) for a in sys.argv[1:5])
rounds = int(sys.argv[5]) if len(sys.argv) > 5 else 10
work = tempfile.mkdtemp(prefix="strain-alloc-gate-")

def gate(old, new, out):
    status = subprocess.run([strain, "gate", "--baseline-binary", old, "--candidate-binary", new, suite,
                             "--repetitions", "3", "--out", out], capture_output=True).returncode
    report = json.load(open(os.path.join(out, "gate.json")))
    rows = {f"{r['key']['scenario']} {r['key']['strategy']}": r for r in report["rows"]}
    return status, rows

caught = passed = 0
for index in range(rounds):
    status, rows = gate(base, tagged, os.path.join(work, f"planted-{index}"))
    regressed = [name for name, row in rows.items() if row["verdict"] == "regressed"]
    allocations = {m["metric"]: m for m in rows["nodes main"]["metrics"]}["allocations"]
    named = any("buildNodes" in site for site in allocations.get("grewAt") or [])
    if status == 1 and regressed == ["nodes main"] and allocations["verdict"] == "regressed" and named:
        caught += 1
    else:
        print(f"planted {index}: exit {status}, regressed {regressed}, {allocations['verdict']}, {allocations.get('grewAt')}")
    status, rows = gate(base, base, os.path.join(work, f"aa-{index}"))
    judged = all({m["metric"]: m["verdict"] for m in row["metrics"]}.get("allocations") == "unchanged" for row in rows.values())
    if status == 0 and judged:
        passed += 1
    else:
        print(f"A/A {index}: exit {status}, {[(name, {m['metric']: m['verdict'] for m in row['metrics']}.get('allocations')) for name, row in rows.items()]}")
print(f"planted: caught on exactly its row by allocations, call site named, in {caught} of {rounds}; "
      f"A/A: passed with every row's allocations judged unchanged in {passed} of {rounds}")
