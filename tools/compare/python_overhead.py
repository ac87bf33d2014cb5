#!/usr/bin/python3
"""The Python module's overhead against `moreau run`, measured alternately in
one sitting (issue: sim.step(1000) within 2 %, a loop of 1000 sim.step()
within 10 %). Each round times the same 1000 steps of a scene three ways:

  run   `moreau run SCENE` with outputs and guards off: summary.json's
        wall_seconds (the stepping loop, without start-up)
  bulk  sim.step(1000) in Python
  loop  for _ in range(1000): sim.step()

and checks that all three end with the same state_hash.

usage: PYTHONPATH=build/python /usr/bin/python3 tools/compare/python_overhead.py [SCENE] [ROUNDS] [THREADS]"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import moreau

SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
scene = sys.argv[1] if len(sys.argv) > 1 else os.path.join(SRC, "examples", "box_3d.ini")
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
threads = int(sys.argv[3]) if len(sys.argv) > 3 else 1
steps = 1000
quiet = {"output.every": 0, "output.vtk_every": 0, "guard.max_overlap": 0, "guard.max_travel": 0,
         "guard.energy": False, "simulation.steps": steps}


def run_cli():
    with tempfile.TemporaryDirectory() as out:
        args = [os.path.join(SRC, "build", "bin", "moreau"), "run", scene, "--out", out, "--quiet",
                "--threads", str(threads)]
        for k, v in quiet.items():
            args += ["--set", f"{k}={str(v).lower() if isinstance(v, bool) else v}"]
        subprocess.run(args, check=True, capture_output=True)
        with open(os.path.join(out, "summary.json")) as f:
            s = json.load(f)
        return s["wall_seconds"], s["state_hash"]


def run_python(bulk):
    sim = moreau.Simulation(scene, set=quiet, threads=threads)
    t0 = time.perf_counter()
    if bulk:
        sim.step(steps)
    else:
        for _ in range(steps):
            sim.step()
    return time.perf_counter() - t0, sim.state_hash


ratios = {"bulk": [], "loop": []}
for r in range(rounds):
    cli, h0 = run_cli()
    bulk, h1 = run_python(True)
    loop, h2 = run_python(False)
    assert h0 == h1 == h2, f"state hashes differ: {h0} {h1} {h2}"
    ratios["bulk"].append(bulk / cli)
    ratios["loop"].append(loop / cli)
    print(f"round {r + 1}: run {cli:.3f} s, step(1000) {bulk:.3f} s ({bulk / cli:.4f}), "
          f"1000 x step() {loop:.3f} s ({loop / cli:.4f})")
print(f"state_hash {h0}; median over the run: step(1000) {statistics.median(ratios['bulk']):.4f}, "
      f"1000 x step() {statistics.median(ratios['loop']):.4f} ({scene}, {threads} thread(s))")
