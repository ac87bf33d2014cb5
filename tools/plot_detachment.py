#!/usr/bin/python3
"""Force schemes paper section 4: restitution e_tot of a column of N grains
hitting a wall against t0/t_n, with the binary e_n and the two regimes
(t0/t_n << 1/N: detachment; t0/t_n >> 1: a cascade of binary collisions).

usage: plot_detachment.py CSV PNG N e_n
"""
import sys

import numpy as np

from plotkit import finish, plt, save


def main():
    csv, png = sys.argv[1], sys.argv[2]
    n, en = float(sys.argv[3]), float(sys.argv[4])
    d = np.genfromtxt(csv, delimiter=",", names=True)
    fig, ax = plt.subplots(figsize=(7, 4.4))
    ax.plot(d["t0_over_tn"], d["e_total"], "o-", color="k", mfc="none", label=f"column of N = {n:g}")
    ax.axhline(en, ls=":", color="C3", label=f"binary $e_n$ = {en:.3f}")
    ax.axhline(d["e_total_hard_sphere"][0], ls="--", color="C1", lw=1,
               label=f"hard spheres, event-driven: {d['e_total_hard_sphere'][0]:.3f}")
    ax.axhline(1.0, ls="-", color="0.7", lw=0.8)
    ax.axvline(1.0 / n, ls="--", color="C0", lw=1, label="$t_0/t_n = 1/N$")
    ax.axvline(1.0, ls="--", color="C2", lw=1, label="$t_0/t_n = 1$")
    finish(ax, "Column hitting a wall: detachment effect (force schemes §4)", "$t_0 / t_n$",
           r"$e_{tot} = -\sum v_i^f / (N v_0)$", log="x", fontsize=8, loc="lower left")
    save(fig, png)


if __name__ == "__main__":
    main()
