#!/usr/bin/python3
"""Fig. 10 of the geometrical-friction paper: the relaxation time t_R of two
polygons (squares in face contact, no rotation) against dt/t_c, Cundall's
spring (eq. 7, standard) against the geometric update (eqs. 14-15,
improved), with the linear system's t_R.

usage: plot_relaxation_time_polygons.py OUTDIR PNG
"""
import os
import sys

import numpy as np

from plotkit import finish, plt, save


def main():
    out, png = sys.argv[1], sys.argv[2]
    d = np.genfromtxt(os.path.join(out, "relaxation_time_polygons.csv"), delimiter=",", names=True)
    dt = d["dt_over_tc"]
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    ax.plot(dt, d["t_r_cundall"], "s", mfc="none", color="k", label="standard: Cundall's spring (7)")
    ax.plot(dt, d["t_r_geometric"], "o", mfc="none", color="C3", label="improved: geometric update (14)-(15)")
    ax.axhline(d["t_r_linear"][0], ls=":", color="0.4", lw=1, label="linear system")
    ax.set_ylim(0, 1.15 * np.nanmax(np.concatenate([d["t_r_cundall"], d["t_r_geometric"]])))
    finish(ax, "Two squares in face contact, no rotation (cf. Pena et al. Fig. 10)", r"$\Delta t / t_c$",
           r"$t_R / t_c$", log="x", fontsize=8, loc="lower left")
    save(fig, png)


if __name__ == "__main__":
    main()
