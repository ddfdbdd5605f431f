#!/usr/bin/env python3
"""A/A gates of one build on the built-in scenarios, beside two busy loops: ROUNDS
interleaved gates of STRAIN against itself on SUITE (Scenarios/bench-gate.yaml: short
rows of every kind), REPS repetitions a side. Counts the gates that passed, and for the
counted metrics (allocations, allocated-bytes) how many rows each gate judged, how many
it judged unchanged, and why the others were not judged (the gate's own reasons), so a
pass that judged nothing cannot look like a pass that judged everything.

The busy loops are `sh -c 'while :; do :; done'`, started here and killed at the end
(STRAIN_BENCH_LOOPS=N starts N instead; 0 where the machine already runs its own).

usage: run.py STRAIN SUITE [ROUNDS] [REPS]
"""
import collections, json, os, signal, statistics, subprocess, sys, tempfile, time

strain, suite = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 10
reps = int(sys.argv[4]) if len(sys.argv) > 4 else 3
work = tempfile.mkdtemp(prefix="strain-aa-gate-")
counted = {"allocations", "allocated-bytes", "instructions"}

loops = [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(int(os.environ.get("STRAIN_BENCH_LOOPS", "2")))]
passed = 0
durations, judged_per_gate = [], []
not_judged = collections.Counter()
try:
    for index in range(rounds):
        out = os.path.join(work, f"aa-{index}")
        started = time.monotonic()
        status = subprocess.run([strain, "gate", "--baseline-binary", strain, "--candidate-binary", strain, suite,
                                 "--repetitions", str(reps), "--out", out], capture_output=True, timeout=3600).returncode
        durations.append(time.monotonic() - started)
        rows = json.load(open(os.path.join(out, "gate.json")))["rows"]
        verdicts = collections.Counter(row["verdict"] for row in rows)
        judged = unchanged = 0
        for row in rows:
            metrics = [m for m in row["metrics"] if m["metric"] in counted]
            if not metrics:
                continue
            if all(m["verdict"] not in ("inconclusive", "notJudged") and "not judged" not in (m.get("reason") or "") for m in metrics):
                judged += 1
                unchanged += all(m["verdict"] == "unchanged" for m in metrics)
            else:
                for m in metrics:
                    if m["verdict"] != "unchanged":
                        not_judged[(m.get("reason") or m["verdict"]).split(" (")[0]] += 1
        judged_per_gate.append((judged, unchanged, len(rows)))
        if status == 0 and "regressed" not in verdicts:
            passed += 1
        else:
            print(f"A/A {index}: exit {status}, verdicts {dict(verdicts)}")
finally:
    for loop in loops:
        os.kill(loop.pid, signal.SIGKILL)
        loop.wait()
print(f"A/A gates passed: {passed} of {rounds} ({reps} repetitions a side, median gate {statistics.median(durations):.0f} s)")
for index, (judged, unchanged, total) in enumerate(judged_per_gate):
    print(f"  gate {index}: counted metrics judged on {judged} of {total} rows, all unchanged on {unchanged}")
for reason, count in not_judged.most_common():
    print(f"  counted metric not judged ({count} in all): {reason}")
