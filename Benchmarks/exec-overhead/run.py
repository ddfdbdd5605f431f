#!/usr/bin/env python3
"""The overhead of `strain exec` on a program that never faults: threads.c run
alone and under `strain exec`, alternately, ROUNDS times each; prints the medians
of the times the program measured itself and their ratios, and the wall time of
each whole process (which adds strain's own start and its record).

usage: run.py STRAIN [ROUNDS]   (STRAIN: the strain binary; the probe library
beside it, or STRAIN_PROBE_LIBRARY, is preloaded)
"""
import os, shutil, statistics, subprocess, sys, tempfile, time

here = os.path.dirname(os.path.abspath(__file__))
strain = os.path.abspath(sys.argv[1])
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 11
work = tempfile.mkdtemp(prefix="strain-overhead-")
binary = os.path.join(work, "threads")
subprocess.run(["cc", "-O2", "-o", binary, os.path.join(here, "threads.c"), "-lpthread"], check=True)

cases = [("threads", "100000"), ("throughput", "200000000")]
results = {(mode, under): [] for mode, _ in cases for under in (False, True)}
walls = {(mode, under): [] for mode, _ in cases for under in (False, True)}
for round in range(rounds):
    for mode, count in cases:
        for under in ((False, True) if round % 2 == 0 else (True, False)):
            command = [binary, mode, count]
            if under:
                command = [strain, "exec", "--out", os.path.join(work, f"{mode}-{round}"), "--"] + command
            start = time.monotonic()
            output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
            walls[(mode, under)].append(time.monotonic() - start)
            results[(mode, under)].append(float(output.split()[1]))

print(f"{rounds} rounds, alone and under strain exec alternately; medians of the program's own timing (wall of the whole process)")
for mode, count in cases:
    alone = statistics.median(results[(mode, False)])
    under = statistics.median(results[(mode, True)])
    wall_alone = statistics.median(walls[(mode, False)])
    wall_under = statistics.median(walls[(mode, True)])
    print(f"{mode} {count}: alone {alone:.3f} s, under strain exec {under:.3f} s, ratio {under / alone:.3f} "
          f"(process wall {wall_alone:.3f} s vs {wall_under:.3f} s, ratio {wall_under / wall_alone:.3f})")
shutil.rmtree(work)
