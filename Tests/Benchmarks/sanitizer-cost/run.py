#!/usr/bin/env python3
"""What a trial of a ThreadSanitizer build of strain costs against a plain build's:
Scenarios/bench-sanitizer.yaml run by both builds, one repetition each, alternately
(which goes first alternates), ROUNDS times; prints, per trial key, the median wall time
and throughput of each build and the median of each round's ratio (sanitized / plain:
a round's two runs share the machine's load of the moment).

usage: run.py PLAIN_STRAIN SANITIZED_STRAIN [ROUNDS]
  e.g. run.py .build/release/strain .build-tsan/release/strain 5
"""
import json, os, statistics, subprocess, sys, tempfile

plain, sanitized = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 5
suite = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "Scenarios", "bench-sanitizer.yaml")
work = tempfile.mkdtemp(prefix="strain-sanitizer-cost-")
builds = {"plain": plain, "sanitized": sanitized}
wall = {}        # (key, build) -> [seconds]
rate = {}        # (key, build) -> [operations per second]
ratios = {}      # key -> [sanitized / plain wall, per round]
for round in range(rounds):
    order = ["plain", "sanitized"] if round % 2 == 0 else ["sanitized", "plain"]
    this_round = {}
    for build in order:
        out = os.path.join(work, f"{build}-{round}")
        subprocess.run([builds[build], "run", suite, "--out", out, "--format", "json"], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with open(os.path.join(out, "run.json")) as f:
            record = json.load(f)
        for trial in record["trials"]:
            key = " ".join([trial["key"]["parameters"][0]["value"], trial["key"]["strategy"]])
            metrics = trial["metrics"]
            wall.setdefault((key, build), []).append(metrics["wallSeconds"])
            if metrics.get("throughputPerSecond"):
                rate.setdefault((key, build), []).append(metrics["throughputPerSecond"])
            this_round[(key, build)] = metrics["wallSeconds"]
    for key in {k for k, _ in this_round}:
        ratios.setdefault(key, []).append(this_round[(key, "sanitized")] / this_round[(key, "plain")])

print(f"{'trial key':<32} {'plain wall':>11} {'TSan wall':>11} {'plain ops/s':>12} {'TSan ops/s':>12} {'ratio':>7}")
for key in sorted(ratios):
    pw, sw = statistics.median(wall[(key, "plain")]), statistics.median(wall[(key, "sanitized")])
    pr = statistics.median(rate.get((key, "plain"), [0])); sr = statistics.median(rate.get((key, "sanitized"), [0]))
    print(f"{key:<32} {pw*1000:>9.1f}ms {sw*1000:>9.1f}ms {pr/1e6:>10.2f} M {sr/1e6:>10.2f} M {statistics.median(ratios[key]):>6.1f}x")
print(f"all keys: median of the rounds' ratios {statistics.median([r for rs in ratios.values() for r in rs]):.1f}x "
      f"({rounds} rounds, {len(ratios)} keys)")
