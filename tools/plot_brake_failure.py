#!/usr/bin/python3
"""Figure 8 of the force-schemes paper: braking |dv_x| of a grazing impact
(theta = 87.4 deg) against the impact speed, for two collision times; the
measured transitions and eq. 25's estimates are marked.

usage: plot_brake_failure.py CSV PNG tn tn_soft vbf vbf_eq25 vbf_soft vbf_soft_eq25 theta
"""
import sys

import numpy as np

from plotkit import finish, plt, save


def main():
    csv, png = sys.argv[1], sys.argv[2]
    tn, tns, vbf, vbf25, vbfs, vbfs25, theta = (float(a) for a in sys.argv[3:10])
    d = np.genfromtxt(csv, delimiter=",", names=True)
    v = d["velocity"]
    fig, ax = plt.subplots(figsize=(7, 4.6))
    ax.plot(v, -d["delta_vx"], "k:", marker=".", label=f"$t_n$ = {tn:.2g} s")
    ax.plot(v, -d["delta_vx_soft"], "k--", marker=".", label=f"$t_n$ = {tns:.2g} s")
    for x, ls, c, lab in ((vbf, "-", "C3", f"measured $v_{{bf}}$ = {vbf:.3g} m/s"),
                          (vbf25, ":", "C3", f"eq. 25: {vbf25:.3g} m/s"),
                          (vbfs, "-", "C0", f"measured $v_{{bf}}$ = {vbfs:.3g} m/s"),
                          (vbfs25, ":", "C0", f"eq. 25: {vbfs25:.3g} m/s")):
        ax.axvline(x, ls=ls, color=c, lw=1, label=lab)
    finish(ax, f"Brake failure at $\\vartheta$ = {theta:g}° (cf. force schemes Fig. 8)",
           r"initial relative velocity $v^i$ (m/s)", r"braking $-\Delta v_x$ (m/s)", log="xy",
           fontsize=8, loc="upper left")
    save(fig, png)


if __name__ == "__main__":
    main()
