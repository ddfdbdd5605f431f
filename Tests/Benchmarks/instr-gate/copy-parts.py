#!/usr/bin/env python3
# Where a counted copy's time goes: counted noop copies under each STRAIN_EXP variant of a build
# patched with copy-parts.patch (git apply, on b416c38), alternated; a plain noop for the ratio.
# usage: copy-parts.py STRAIN N ROUNDS
import json, os, statistics, subprocess, sys, tempfile, shutil, time
strain, n, rounds = os.path.abspath(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
work = tempfile.mkdtemp(prefix="strain-copy-parts-")
noop = os.path.join(work, "noop.yaml")
open(noop, "w").write("name: noop-cost\ntimeout: 30s\nprofiles: [linux]\nruns:\n  - scenario: noop\n    strategies: [main]\n")
counted = os.path.join(work, "noopc.yaml")
open(counted, "w").write(open(noop).read().replace("profiles: [linux]\n", "profiles: [linux]\nmeasure: [instructions]\n"))
variants = [("plain", {}, noop), ("counted", {}, counted), ("exit", {"STRAIN_EXP": "exit"}, counted),
            ("nowatch", {"STRAIN_EXP": "nowatch"}, counted), ("nowatch+inlineprep", {"STRAIN_EXP": "nowatch,inlineprep"}, counted),
            ("nowatch+inlineprep+nowatchdog", {"STRAIN_EXP": "nowatch,inlineprep", "STRAIN_WATCHDOG": "off"}, counted),
            ("all+tinyreport", {"STRAIN_EXP": "nowatch,inlineprep,tinyreport", "STRAIN_WATCHDOG": "off"}, counted),
            ("nodump", {"STRAIN_EXP": "nodump"}, counted), ("nowarm", {"STRAIN_EXP": "nowarm"}, counted),
            ("skiptrial", {"STRAIN_EXP": "skiptrial"}, counted), ("skiptrial+nowarm+nowatch", {"STRAIN_EXP": "skiptrial,nowarm,nowatch"}, counted)]
res = {}
for r in range(rounds):
    order = variants if r % 2 == 0 else list(reversed(variants))
    for name, extra, suite in order:
        env = dict(os.environ, STRAIN_INSTRUCTIONS_SOURCE="callgrind", **extra)
        out = os.path.join(work, f"{name}-{r}")
        t0 = time.time()
        p = subprocess.run([strain, "run", suite, "--out", out, "--format", "json", "--repetitions", str(n)], capture_output=True, text=True, env=env, timeout=900)
        wall = time.time() - t0
        rec = json.load(open(os.path.join(out, "run.json")))
        ts = [t["metrics"].get("trialSeconds") for t in rec["trials"]][1:]
        ts = [t for t in ts if t is not None]
        kinds = sorted({t["outcome"]["kind"] for t in rec["trials"]})
        ins = sorted({t["metrics"].get("instructions") for t in rec["trials"]}, key=lambda x: (x is None, x))
        res.setdefault(name, []).extend(ts)
        print(f"round {r} {name:32s} median {statistics.median(ts)*1e3:8.2f} ms  run {wall:6.2f} s  {kinds} instr {ins[:3]}", flush=True)
plain = statistics.median(res["plain"])
for name, _, _ in variants:
    m = statistics.median(res[name])
    print(f"{name:32s} {m*1e3:8.2f} ms  x{m/plain:6.1f} plain")
shutil.rmtree(work)
