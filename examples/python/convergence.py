#!/usr/bin/python3
"""Convergence against iteration count, on your own packing: the residual of
the contact dynamics iteration (the relative change of the contact forces in
a sweep, CD eqs. 35-36) after each sweep of one time step, for every sweep
order. The packing settles for some steps at the scene's N_I, then one step
is taken with many sweeps and its residuals recorded.

usage: PYTHONPATH=build/python /usr/bin/python3 examples/python/convergence.py
           [SCENE] [--set key=value ...] [--settle STEPS] [--sweeps N] [--plot FILE]"""
import os
import sys

import numpy as np

import moreau

args = sys.argv[1:]
scene = args[0] if args and not args[0].startswith("--") else \
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "box_3d.ini")
sets = dict(a.split("=", 1) for i, a in enumerate(args) if i > 0 and args[i - 1] == "--set")
settle = int(args[args.index("--settle") + 1]) if "--settle" in args else 400
sweeps = int(args[args.index("--sweeps") + 1]) if "--sweeps" in args else 400
epsilon = 1e-4

curves = {}
for order in ("random-sweep", "shuffle-once", "fixed", "random-sequential"):
    sim = moreau.Simulation(scene, set={**sets, "simulation.method": "cd", "cd.criterion": "fixed",
                                        "cd.order": order})
    sim.step(settle)
    sim.set_cd_iterations(sweeps)
    sim.record_residuals()
    sim.step()
    r = sim.residual_history()
    curves[order] = r
    reached = np.nonzero(r <= epsilon)[0]
    print(f"{order:18s} {sim.observe()['contacts']:6d} contacts: residual {r[9]:.2e} after 10 sweeps, "
          f"{r[-1]:.2e} after {len(r)}; {reached[0] + 1 if len(reached) else '>' + str(len(r))} sweeps to {epsilon:g}")
if "--plot" in args:
    import matplotlib.pyplot as plt
    for order, r in curves.items():
        plt.semilogy(np.arange(1, len(r) + 1), r, label=order)
    plt.axhline(epsilon, color="grey", lw=0.5)
    plt.xlabel("sweep")
    plt.ylabel("residual (relative change of the forces)")
    plt.legend()
    plt.savefig(args[args.index("--plot") + 1], dpi=120)
sys.exit(0 if all(len(r) == sweeps and np.isfinite(r).all() and r[-1] < r[0] for r in curves.values()) else 1)
