#!/usr/bin/python3
"""CD paper §3.4, eqs. 67-68, on the user's side of the API: one packing (the
2D piston of examples/piston_2d.ini) stepped with contact dynamics at N_I
sweeps and with MD springs and dashpots that mimic that iteration,
kappa = 2 q m_eff N_I / dt^2 and gamma = 2 q m_eff N_I / dt per contact
(md.meff = both), q = (4 sqrt(e) - 5)/2. The piston traces are overlaid.

usage: PYTHONPATH=build/python /usr/bin/python3 examples/python/cd_vs_md.py [N_I] [--plot FILE] [--steps N]"""
import math
import os
import sys

import numpy as np

import moreau

ni = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 40
steps = int(sys.argv[sys.argv.index("--steps") + 1]) if "--steps" in sys.argv else 2000
scene = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "piston_2d.ini")
q = (4 * math.sqrt(math.e) - 5) / 2
kappa, gamma = 2 * q * ni, 2 * q * ni  # per unit m_eff, dt = 1 (eqs. 67-68)
# CD's tangential update sees the tangential mass m_eff/3 of disks (eq. 18).
md = {"simulation.method": "md", "md.meff": "both", "md.kn": kappa, "md.gamma_n": gamma,
      "md.kt": kappa / 3, "md.gamma_t": gamma / 3, "md.substeps": 100}
common = {"cd.iterations": ni, "simulation.steps": steps}

traces = {}
for label, extra in (("CD", {}), ("MD", md)):
    sim = moreau.Simulation(scene, set={**common, **extra})
    y = [sim.walls["piston"]["position"][1]]
    for _ in range(steps):
        sim.step()
        y.append(sim.walls["piston"]["position"][1])
    traces[label] = np.array(y)
    print(f"{label}: piston at {y[-1]:.5f} after {steps} steps, {sim.observe()['contacts']} contacts")

t = np.arange(steps + 1) * 1.0
change = 1000  # the piston's force steps from F to F + dF at t = 1000 (piston_2d.ini)
after = t > change + 100
shift = {k: v[after].mean() - v[(t > change - 200) & (t <= change)].mean() for k, v in traces.items()}
gap = np.abs(traces["CD"] - traces["MD"])[t > 600].max()
print(f"piston shift after the force step: CD {shift['CD']:.3e}, MD {shift['MD']:.3e}; "
      f"largest CD-MD difference after t = 600: {gap:.3e}")
if "--plot" in sys.argv:
    import matplotlib.pyplot as plt
    for k, v in traces.items():
        plt.plot(t, v, lw=0.8, label=f"{k} (N_I = {ni})" if k == "CD" else f"{k} (kappa, gamma of eqs. 67-68)")
    plt.xlabel("time (dt)")
    plt.ylabel("piston height (d)")
    plt.legend()
    plt.savefig(sys.argv[sys.argv.index("--plot") + 1], dpi=120)
ok = all(np.isfinite(v).all() for v in traces.values()) and shift["CD"] < 0 and shift["MD"] < 0
sys.exit(0 if ok and 0.5 < shift["MD"] / shift["CD"] < 2 else 1)
