#!/usr/bin/env python3
"""What a plain `noop` trial costs, two builds side by side in one call.

Alternates A and B (B first in odd rounds), each a `strain run` of
Scenarios/bench-trial-server.yaml with N repetitions (copies of the trial server, the
default) and `--format json` (run.json only). Prints each round's median trialSeconds
(request to reap) and end to end (the whole run divided by N) with the load average at
its start, then both builds' pooled medians (p10, p90) and the ratio B/A.

usage: plain-ab.py ROUNDS N STRAIN-A STRAIN-B   (from the repository's root)
"""
import json, os, shutil, statistics, subprocess, sys, tempfile, time

rounds, n = int(sys.argv[1]), int(sys.argv[2])
builds = {"A": os.path.abspath(sys.argv[3]), "B": os.path.abspath(sys.argv[4])}
suite = os.path.abspath("Scenarios/bench-trial-server.yaml")
work = tempfile.mkdtemp(prefix="strain-plain-ab-")
pooled = {"A": [], "B": []}
ends = {"A": [], "B": []}
try:
    for index in range(rounds):
        for name in ("A", "B") if index % 2 == 0 else ("B", "A"):
            out = os.path.join(work, f"{name}{index}")
            load = os.getloadavg()[0]
            start = time.time()
            subprocess.run([builds[name], "run", suite, "--repetitions", str(n), "--out", out, "--format", "json"],
                           capture_output=True, timeout=600)
            whole = time.time() - start
            seconds = [t["metrics"]["trialSeconds"] for t in json.load(open(os.path.join(out, "run.json")))["trials"]]
            pooled[name] += seconds
            ends[name].append(whole / n)
            print(f"round {index} {name}: median {statistics.median(seconds) * 1e3:.3f} ms, "
                  f"end to end {whole / n * 1e3:.2f} ms a trial, load {load:.2f}", flush=True)
    for name in ("A", "B"):
        seconds = sorted(pooled[name])
        count = len(seconds)
        print(f"{name}: pooled median {statistics.median(seconds) * 1e3:.3f} ms (p10 {seconds[count // 10] * 1e3:.3f}, "
              f"p90 {seconds[9 * count // 10] * 1e3:.3f}), end to end median {statistics.median(ends[name]) * 1e3:.2f} ms, {count} trials")
    print(f"B/A {statistics.median(pooled['B']) / statistics.median(pooled['A']):.3f}")
finally:
    shutil.rmtree(work)
