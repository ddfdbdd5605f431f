#!/usr/bin/env python3
"""What a counted trial costs, and how its counts repeat: SUITE run ROUNDS times with
`measure: [instructions]` and ROUNDS times without (a copy with the key removed),
alternating, one repetition each (--repetitions 1). Prints, per row, the median of the
trials' seconds (spawn to reap, `trialSeconds`) both ways and their ratio, and the
counted trials' instructions: median and spread in parts per million.

usage: overhead.py STRAIN SUITE [ROUNDS]
"""
import json, os, statistics, subprocess, sys, tempfile

strain, suite = (os.path.abspath(a) for a in sys.argv[1:3])
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 5
work = tempfile.mkdtemp(prefix="strain-instr-overhead-")
plain = os.path.join(work, "plain.yaml")
text = open(suite).read()
assert "measure: [instructions]\n" in text
open(plain, "w").write(text.replace("measure: [instructions]\n", ""))
seconds = {True: {}, False: {}}
counts = {}
for index in range(rounds):
    for counted in (True, False):
        out = os.path.join(work, f"{'counted' if counted else 'plain'}-{index}")
        subprocess.run([strain, "run", suite if counted else plain, "--isolation", "spawn", "--repetitions", "1", "--out", out, "--format", "json"],
                       capture_output=True, timeout=3600)
        for trial in json.load(open(os.path.join(out, "run.json")))["trials"]:
            name = f"{trial['key']['scenario']} {trial['key']['strategy']}"
            seconds[counted].setdefault(name, []).append(trial["metrics"]["trialSeconds"])
            if counted and trial["metrics"].get("instructions") is not None:
                counts.setdefault(name, []).append(trial["metrics"]["instructions"])
            elif counted:
                counts.setdefault(name, [])
                note = (trial.get("instructionCount") or {}).get("notCountable")
                if note and index == 0:
                    print(f"  {name}: {note}")
for name in sorted(seconds[True]):
    on, off = statistics.median(seconds[True][name]), statistics.median(seconds[False][name])
    line = f"{name}: trial {off:.3f} s plain, {on:.3f} s counted (×{on / off:.0f})"
    values = counts.get(name) or []
    if values:
        low, high = min(values), max(values)
        line += f"; instructions median {statistics.median(values):,.0f}, spread {high - low:,} ({(high - low) / low * 1e6:.0f} ppm) over {len(values)}"
    print(line)
