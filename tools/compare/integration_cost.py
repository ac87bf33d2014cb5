#!/usr/bin/env python3
"""What each MD integration scheme costs in a many-grain step, from
summary.json's phase_seconds (Kruggel-Emden et al. 2008, Figs. 7-12).

For every scene and scheme, `moreau run SCENE --set md.integrator=S` with
the staged pipeline (so that detection is a stage of its own for every
scheme), repeated round-robin over the schemes so that the machine's drift
falls on all alike. Per grain and step, the medians over the repeats of:

  detect      the candidates and the carried memory (detect + match)
  forces      the force evaluations: the solve stage (cd) and, for the other
              schemes, those inside their steps (integrate_forces)
  scheme      the scheme's own arithmetic: integrate - integrate_forces
  total       the whole step

The ranking is by forces + scheme (the paper's Figs. 7-9: the impact without
contact detection) and by scheme alone; the share is scheme / total (the
paper's Figs. 10-12: "the integration itself accounts only for 10-40% of the
whole computational load").

    /usr/bin/python3 tools/compare/integration_cost.py [--binary build/bin/moreau]
        [--scenes examples/box_3d.ini,...] [--schemes all|cd,ty2,...]
        [--steps 300] [--repeats 3] [--json out.json]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

SCHEMES = ["fe", "ty2", "ty3", "ty4", "rk", "cd", "pv", "babab", "bababab", "ve", "ab2", "ab3", "ab4", "ab5",
           "ab2-am3", "ab3-am4", "ab4-am5", "d12", "t12", "t16", "gpc3", "gpc4", "gear5"]


def run(binary, scene, scheme, steps, out):
    args = [binary, "run", scene, "--out", out, "--quiet", "--threads", "1",
            "--set", "simulation.method=md", "--set", "md.integrator=" + scheme, "--set", "md.pipeline=staged",
            "--set", "simulation.steps=%d" % steps, "--set", "output.vtk_every=0"]
    r = subprocess.run(args, capture_output=True, text=True, env=dict(os.environ, OMP_NUM_THREADS="1"))
    if r.returncode != 0:
        return None, r.stderr.strip().splitlines()[-1] if r.stderr.strip() else "exit %d" % r.returncode
    s = json.load(open(os.path.join(out, "summary.json")))
    p = s["phase_seconds"]
    grains = s["particles"]
    n = float(grains) * steps
    inner = p.get("integrate_forces", 0.0)
    parts = {"detect": (p["detect"] + p["match"]) / n, "forces": (p["solve"] + inner) / n,
             "scheme": (p["integrate"] - inner) / n,
             "total": sum(p[k] for k in ("controls", "detect", "match", "solve", "integrate")) / n}
    return parts, None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default="build/bin/moreau")
    ap.add_argument("--scenes", default="examples/box_3d.ini,examples/triaxial_3d.ini,examples/shear_cell_2d.ini")
    ap.add_argument("--schemes", default="all")
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json")
    a = ap.parse_args()
    schemes = SCHEMES if a.schemes == "all" else a.schemes.split(",")
    result = {"cpu": open("/proc/cpuinfo").read().split("model name")[1].split("\n")[0].strip(": \t"),
              "steps": a.steps, "repeats": a.repeats, "scenes": {}}
    tmp = tempfile.mkdtemp(prefix="integration_cost_")
    for scene in a.scenes.split(","):
        samples = {s: [] for s in schemes}
        failed = {}
        for _ in range(a.repeats):
            for s in schemes:
                if s in failed:
                    continue
                out = tempfile.mkdtemp(dir=tmp)
                os.rmdir(out)  # moreau run makes it (it refuses to write into a folder that exists)
                parts, why = run(a.binary, scene, s, a.steps, out)
                if parts is None:
                    failed[s] = why
                else:
                    samples[s].append(parts)
        rows = {}
        for s in schemes:
            if s in failed:
                continue
            rows[s] = {k: statistics.median(x[k] for x in samples[s]) for k in samples[s][0]}
            rows[s]["share"] = rows[s]["scheme"] / rows[s]["total"]
        result["scenes"][scene] = {"per_grain_step_seconds": rows, "failed": failed}
        print("\n%s (%d steps, median of %d, seconds per grain and step x 1e9)" % (scene, a.steps, a.repeats))
        print("%-8s %8s %8s %8s %8s %6s" % ("scheme", "detect", "forces", "scheme", "total", "share"))
        for s in sorted(rows, key=lambda k: rows[k]["forces"] + rows[k]["scheme"]):
            r = rows[s]
            print("%-8s %8.1f %8.1f %8.1f %8.1f %5.1f%%" % (s, r["detect"] * 1e9, r["forces"] * 1e9,
                                                         r["scheme"] * 1e9, r["total"] * 1e9, 100 * r["share"]))
        for s, why in failed.items():
            print("%-8s failed: %s" % (s, why))
    if a.json:
        json.dump(result, open(a.json, "w"), indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
