#!/usr/bin/env python3
"""Kinetic energy of the slowly sheared packing (Pena et al. Fig. 3a-e): E_k(t)
for dt/t_c = 13/2500 and 13/500 with mu = 0 and mu = 0.5 (panels a-d, the
paper's order), and the cumulative difference Delta E_k between the two steps
for both mu (panel e).  Usage: plot_slow_shear.py CSV PNG"""
import csv
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

rows = list(csv.DictReader(open(sys.argv[1])))
col = {k: [float(r[k]) for r in rows] for k in rows[0]}
t = col["time"]
# dt1 is the larger step (13/500), dt2 the smaller (13/2500): INTERFACE.md.
panels = [("ek_dt2_mu0", "a  dt/t_c = 13/2500, mu = 0"), ("ek_dt2_mu05", "b  dt/t_c = 13/2500, mu = 0.5"),
          ("ek_dt1_mu0", "c  dt/t_c = 13/500, mu = 0"), ("ek_dt1_mu05", "d  dt/t_c = 13/500, mu = 0.5")]
fig = plt.figure(figsize=(11, 10))
axes = [fig.add_subplot(3, 2, i + 1) for i in range(4)]
for ax, (key, title) in zip(axes, panels):
    ax.plot(t, col[key], lw=0.8)
    # The other step's curve, faint, for comparison.
    other = key.replace("dt1", "dtX").replace("dt2", "dt1").replace("dtX", "dt2")
    ax.plot(t, col[other], lw=0.6, c="0.6", zorder=0, label="other dt")
    ax.set_yscale("log")
    ax.set_title(title, fontsize=10, loc="left")
    ax.set_ylabel("E_k (J)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
# Panels with the same mu share the axis range.
for i, j in ((0, 2), (1, 3)):
    lo = min(axes[i].get_ylim()[0], axes[j].get_ylim()[0])
    hi = max(axes[i].get_ylim()[1], axes[j].get_ylim()[1])
    axes[i].set_ylim(lo, hi)
    axes[j].set_ylim(lo, hi)
axes[2].set_xlabel("t (s)")
axes[3].set_xlabel("t (s)")
ax = fig.add_subplot(3, 1, 3)
ax.plot(t, col["delta_ek_mu0"], label="mu = 0")
ax.plot(t, col["delta_ek_mu05"], label="mu = 0.5")
ax.set_yscale("log")
ax.set_title("e  cumulative |E_k(13/2500) - E_k(13/500)| over the records", fontsize=10, loc="left")
ax.set_xlabel("t (s)")
ax.set_ylabel("Delta E_k (J)")
ax.grid(alpha=0.3)
ax.legend(fontsize=8)
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=110)
