#!/usr/bin/python3
"""Figure 6 of Kuhn, Suzuki & Daouadji: the stress of a static packing
before a rigid rotation of 90 deg about x1, and after it, turned back to the
original frame, for three treatments of the tangential forces (none,
projection, projection + twirl). Four tensor panels as in the paper and, below,
the relative error of the turned-back stress against the rotation angle.

usage: plot_rigid_rotation.py HISTORY_CSV TENSORS_CSV PNG
"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

TITLES = {
    "original": "(a) Correct stress",
    "none": "(b) Without adjustment",
    "projection": "(c) With projection",
    "projection_twirl": "(d) With projection & twirling",
}


def main():
    hist = np.genfromtxt(sys.argv[1], delimiter=",", names=True)
    with open(sys.argv[2]) as f:
        rows = {r["case"]: np.array([float(r[k]) for k in r if k != "case"]).reshape(3, 3) for r in csv.DictReader(f)}
    orig = rows["original"]

    fig = plt.figure(figsize=(11, 6.6))
    grid = fig.add_gridspec(2, 4, height_ratios=[1.0, 1.25])
    scale = np.abs(orig).max()
    for col, case in enumerate(["original", "none", "projection", "projection_twirl"]):
        ax = fig.add_subplot(grid[0, col])
        m = rows[case]
        diff = m - orig
        ax.imshow(np.abs(diff) / scale if case != "original" else np.zeros((3, 3)), cmap="Reds", vmin=0, vmax=0.2)
        for i in range(3):
            for j in range(3):
                ax.text(j, i, f"{m[i, j]:.1f}", ha="center", va="center", fontsize=10)
        ax.set_xticks([])
        ax.set_yticks([])
        err = np.linalg.norm(diff) / np.linalg.norm(orig)
        sub = "" if case == "original" else f"\nrel. error {err:.2e}"
        ax.set_title(TITLES[case] + sub, fontsize=9)
    ax = fig.add_subplot(grid[1, :])
    ax.semilogy(hist["angle_deg"], hist["error_none"], "-", color="C3", label="without adjustment")
    ax.semilogy(hist["angle_deg"], hist["error_projection"], "--", color="C1", label="projection (eq. 22)")
    ax.semilogy(hist["angle_deg"], np.maximum(hist["error_projection_twirl"], 1e-17), "-", color="k",
                label="projection & twirl (eqs. 22-23)")
    ax.set_xlabel("rotation about x1 (deg)")
    ax.set_ylabel("||R^T sigma R - sigma_0||_F / ||sigma_0||_F")
    ax.legend(fontsize=8, loc="lower right")
    fig.suptitle("Rigid rotation of a static packing, stresses in kPa (tension positive), cf. Kuhn Fig. 6",
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(sys.argv[3], dpi=110)


if __name__ == "__main__":
    main()
