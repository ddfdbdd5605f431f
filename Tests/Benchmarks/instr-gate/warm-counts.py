#!/usr/bin/env python3
# Counts of Scenarios/bench-instructions.yaml by a copy per trial (today) against a copy that ran its
# work once uncounted first (warm, as repetitions in one process would be): a build patched with
# copy-parts.patch (STRAIN_EXP=twice). usage: warm-counts.py STRAIN REPETITIONS ROUNDS (from the root)
import json, os, statistics, subprocess, sys, tempfile, shutil
strain = sys.argv[1]; reps = sys.argv[2]; rounds = int(sys.argv[3])
work = tempfile.mkdtemp(prefix="strain-warm-counts-")
counts = {}
for r in range(rounds):
    for name, exp in (("copy", ""), ("warm", "twice")) if r % 2 == 0 else (("warm", "twice"), ("copy", "")):
        env = dict(os.environ, STRAIN_INSTRUCTIONS_SOURCE="callgrind", STRAIN_EXP=exp)
        out = os.path.join(work, f"{name}{r}")
        subprocess.run([strain, "run", os.path.abspath("Scenarios/bench-instructions.yaml"), "--repetitions", reps, "--out", out, "--format", "json"], capture_output=True, env=env, timeout=1800)
        for t in json.load(open(os.path.join(out, "run.json")))["trials"]:
            v = t["metrics"].get("instructions")
            if v is None: continue
            key = f"{t['key']['scenario']} {t['key'].get('parameters', '')} {t['key']['strategy']}"
            counts.setdefault(key, {}).setdefault(name, []).append(v)
print("| row | copy (cold, today): median, spread | after one uncounted run (warm): median, spread | warm - copy | tolerance |")
for key, d in counts.items():
    c, w = d.get("copy", []), d.get("warm", [])
    if not c or not w: continue
    mc, mw = statistics.median(c), statistics.median(w)
    tol = max(20000, 0.002 * mc)
    print(f"| {key} | {mc:,.0f} ({max(c)-min(c):,}) | {mw:,.0f} ({max(w)-min(w):,}) | {mw-mc:+,.0f} ({(mw-mc)/mc*100:+.2f} %) | {tol:,.0f} |")
shutil.rmtree(work)
