#!/usr/bin/env python3
"""The overhead of `strain exec` on a program that never faults: threads.c run
alone and under `strain exec`, back to back, ROUNDS times (which goes first
alternates); prints the medians (and ranges) of the wall and CPU times the program
measured itself, the median of each round's ratio (under / alone: a round's two
runs share the machine's load of the moment), and the wall time of each whole
process (which adds strain's own start and its record).

Then, in one process under strain exec, the per-thread cost alone: threads made
through the probe's pthread_create against threads made through libc's own.

usage: run.py STRAIN [ROUNDS]   (STRAIN: the strain binary; the probe library
beside it, or STRAIN_PROBE_LIBRARY, is preloaded)
"""
import os, shutil, statistics, subprocess, sys, tempfile, time

here = os.path.dirname(os.path.abspath(__file__))
strain = os.path.abspath(sys.argv[1])
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 21
work = tempfile.mkdtemp(prefix="strain-overhead-")
binary = os.path.join(work, "threads")
subprocess.run(["cc" if shutil.which("cc") else "clang", "-O2", "-o", binary, os.path.join(here, "threads.c"), "-lpthread", "-ldl"], check=True)

cases = [("threads", "30000"), ("throughput", "400000000")]
results = {(mode, under): [] for mode, _ in cases for under in (False, True)}
cpus = {(mode, under): [] for mode, _ in cases for under in (False, True)}
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
            cpus[(mode, under)].append(float(output.split()[2]))

print(f"{rounds} rounds, alone and under strain exec alternately; medians [min-max] of the program's own timing")
def line(what, values, key):
    alone, under = values[(key, False)], values[(key, True)]
    a, u = statistics.median(alone), statistics.median(under)
    paired = statistics.median([y / x for x, y in zip(alone, under)])
    return (f"  {what}: alone {a:.3f} s [{min(alone):.3f}-{max(alone):.3f}], under strain exec {u:.3f} s [{min(under):.3f}-{max(under):.3f}]; "
            f"ratio of medians {u / a:.3f}, median of the rounds' ratios {paired:.3f}")
for mode, count in cases:
    print(f"{mode} {count}")
    print(line("wall", results, mode))
    print(line("CPU", cpus, mode))
    print(line("process wall", walls, mode))

# The per-thread cost alone, inside one process under strain exec: threads made
# through the probe's pthread_create against libc's own, batch by batch.
alternate = subprocess.run([strain, "exec", "--out", os.path.join(work, "alternate"), "--", binary, "alternate", "500"],
                           check=True, capture_output=True, text=True).stdout.split()
own, linked, ratio = float(alternate[1]), float(alternate[2]), float(alternate[3])
print("alternate 500 rounds of 200 threads in one process under strain exec")
print(f"  CPU per thread: libc's pthread_create {own * 1e6:.2f} µs, the probe's {linked * 1e6:.2f} µs; "
      f"ratio of medians {linked / own:.3f}, median of the rounds' ratios {ratio:.3f}, {(linked - own) * 1e6:.2f} µs a thread")
shutil.rmtree(work)
