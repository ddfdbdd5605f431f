#!/usr/bin/env python3
"""Two builds of the interposer benchmark (interposer.c linked with two versions of
Sources/CStrainProbe/strain_alloc.c) side by side in one run: RUNS runs of each,
alternating (which goes first alternates), so both share the machine's load of the
moment. Prints, per build, the median over its runs of each run's median nanoseconds
per malloc(32)/free pair, counting off and on, and the median of the runs' ratios
(B / A) off and on.

usage: versus.py A B [RUNS]   (A, B: built as interposer.c's header says)
"""
import re, statistics, subprocess, sys

a, b = sys.argv[1], sys.argv[2]
runs = int(sys.argv[3]) if len(sys.argv) > 3 else 11
pattern = re.compile(r"off ([0-9.]+) ns a pair, on ([0-9.]+) ns")
seen = {a: [], b: []}
for index in range(runs):
    for binary in ((a, b) if index % 2 == 0 else (b, a)):
        output = subprocess.run([binary], check=True, capture_output=True, text=True).stdout
        off, on = map(float, pattern.search(output).groups())
        seen[binary].append((off, on))
for name, binary in (("A", a), ("B", b)):
    offs = [off for off, _ in seen[binary]]
    ons = [on for _, on in seen[binary]]
    print(f"{name} {binary}: off {statistics.median(offs):.2f} ns a pair [{min(offs):.2f}-{max(offs):.2f}], "
          f"on {statistics.median(ons):.2f} ns [{min(ons):.2f}-{max(ons):.2f}]")
off_ratios = [sb[0] / sa[0] for sa, sb in zip(seen[a], seen[b])]
on_ratios = [sb[1] / sa[1] for sa, sb in zip(seen[a], seen[b])]
print(f"{runs} runs each, alternating: B/A off {statistics.median(off_ratios):.3f} [{min(off_ratios):.3f}-{max(off_ratios):.3f}], "
      f"on {statistics.median(on_ratios):.3f} [{min(on_ratios):.3f}-{max(on_ratios):.3f}]")
