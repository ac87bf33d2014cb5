#!/usr/bin/python3
"""Figure 5 of Kuhn, Suzuki & Daouadji: incremental plastic (irreversible)
strains of axisymmetric probes in the Rendulic plane. Left (Fig. 5a/b): the
points of one algorithm, each along its stress increment at the distance
|d eps^p| / |d sigma|, with the fitted circle through the origin. Right
(Fig. 5c): the two algorithms' loci and circles together.

usage: plot_stress_probes.py PROBES_CSV CIRCLES_CSV PNG
"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

STYLE = {"conventional": ("C3", "o", "conventional (add, then project)"),
         "refined": ("C0", "+", "refined (Kuhn et al.)")}


def main():
    probes = {}
    with open(sys.argv[1]) as f:
        for r in csv.DictReader(f):
            probes.setdefault(r["algorithm"], []).append((float(r["x"]), float(r["y"])))
    circles = {}
    with open(sys.argv[2]) as f:
        for r in csv.DictReader(f):
            circles[r["algorithm"]] = (float(r["diameter"]), np.radians(float(r["direction_deg"])), float(r["r2"]))

    scale = 1e6  # 1/Pa -> 1/MPa
    fig, axes = plt.subplots(1, 2, figsize=(11, 5.2))
    phi = np.linspace(0, 2 * np.pi, 400)
    for ax, names in ((axes[0], ["refined"]), (axes[1], ["conventional", "refined"])):
        for name in names:
            if name not in probes:
                continue
            color, marker, label = STYLE[name]
            pts = np.array(probes[name]) * scale
            ax.plot(pts[:, 0], pts[:, 1], marker, color=color, ms=4, mfc="none", ls="none", label=label)
            d, a, r2 = circles[name]
            d *= scale
            if not d > 0:  # no circle through the points (too few probes, or none plastic)
                continue
            c = 0.5 * d * np.array([np.cos(a), np.sin(a)])
            H = 1.0 / d
            ax.plot(c[0] + 0.5 * d * np.cos(phi), c[1] + 0.5 * d * np.sin(phi), "-", color=color, lw=1,
                    label=f"circle, H = {H:.3f} MPa (R$^2$ = {r2:.4f})")
        ax.axhline(0, color="0.7", lw=0.5)
        ax.axvline(0, color="0.7", lw=0.5)
        ax.set_aspect("equal")
        ax.set_xlabel(r"volumetric  $d\varepsilon^p_{kk}/\sqrt{3}\;/\;|d\sigma|$  (1/MPa)")
        ax.set_ylabel(r"deviatoric  $\sqrt{2/3}\,(d\varepsilon^p_{11}-d\varepsilon^p_{33})\;/\;|d\sigma|$  (1/MPa)")
        ax.legend(fontsize=7, loc="lower left")
    axes[0].set_title("(a, b) one probe per point: along $d\\sigma$, radius $|d\\varepsilon^p|/|d\\sigma|$", fontsize=9)
    axes[1].set_title("(c) conventional vs refined linear-frictional algorithm", fontsize=9)
    if len(circles) == 2 and all(v[0] > 0 for v in circles.values()):
        h = {k: 1.0 / v[0] for k, v in circles.items()}
        fig.suptitle(f"Stress probes in the Rendulic plane: hardening moduli conventional / refined = "
                     f"{h['conventional'] / h['refined']:.4f}", fontsize=10)
    fig.tight_layout()
    fig.savefig(sys.argv[3], dpi=110)


if __name__ == "__main__":
    main()
