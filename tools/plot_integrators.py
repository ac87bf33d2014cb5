#!/usr/bin/python3
"""Integration-schemes paper, Figs. 2-3 and 5-8: average relative deviation
(eq. 23) of e_n, e_t, the rebound angle and the final spin from the exact
impact against the steps per collision for every scheme that ran; the
fixed-time-grid error (section 4.2); CPU time against steps and against the
ARD of e_n. A second figure shows the exact solution against the impact angle.

usage: plot_integrators.py CSV EXACT_CSV PNG EXACT_PNG
"""
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

# Model errors quoted by the paper (dotted lines in its figures), %.
MODEL = {"ard_en": 1.0, "ard_et": 4.0, "ard_beta": 3.52, "ard_omega": 12.0}
TITLES = {"en": "$e^n$", "et": "$e^t$", "beta": r"$\beta$", "omega": r"$\omega_f$"}


def main():
    csv, exact_csv, png, exact_png = sys.argv[1:5]
    d = np.genfromtxt(csv, delimiter=",", names=True, dtype=None, encoding="utf-8")
    d = np.atleast_1d(d)
    schemes = list(dict.fromkeys(d["scheme"]))
    fig, axes = plt.subplots(3, 4, figsize=(16, 11))
    for j, q in enumerate(("en", "et", "beta", "omega")):
        ax, axg = axes[0, j], axes[1, j]
        for k, s in enumerate(schemes):
            sel = d["scheme"] == s
            style = dict(color=f"C{k % 10}", ls=["-", "--", ":", "-."][k // 10 % 4], lw=1.2, label=s.upper())
            ax.plot(d["steps"][sel], d["ard_" + q][sel], **style)
            if np.isfinite(d["grid_" + q][sel]).any():
                axg.plot(d["steps"][sel], d["grid_" + q][sel], **style)
        for a in (ax, axg):
            a.axhline(MODEL["ard_" + q], color="k", ls=":", lw=1, label="model error (paper)")
            a.set_yscale("log")
            a.set_xlabel("steps per collision n")
        ax.set_ylabel(f"ARD({TITLES[q]}) vs exact, %")
        axg.set_ylabel(f"fixed-grid deviation of {TITLES[q]}, %")
        ax.set_title(f"{TITLES[q]} (cf. Figs. 2-3)")
        axg.set_title(f"{TITLES[q]}: onset off the grid (cf. Figs. 5-6)")
    axes[0, 0].legend(fontsize=7, ncol=2)
    ax = axes[2, 0]
    for k, s in enumerate(schemes):
        sel = d["scheme"] == s
        ax.plot(d["steps"][sel], d["cpu_seconds"][sel], color=f"C{k % 10}", label=s.upper())
    ax.set_xlabel("steps per collision n")
    ax.set_ylabel("CPU seconds (100 impacts)")
    ax.set_title("CPU time (cf. Fig. 7)")
    for j, q in enumerate(("en", "et"), start=1):
        ax = axes[2, j]
        for k, s in enumerate(schemes):
            sel = d["scheme"] == s
            ax.plot(d["cpu_seconds"][sel], d["ard_" + q][sel], color=f"C{k % 10}", marker=".", label=s.upper())
        ax.axhline(MODEL["ard_" + q], color="k", ls=":", lw=1)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("CPU seconds (100 impacts)")
        ax.set_ylabel(f"ARD({TITLES[q]}), %")
        ax.set_title(f"efficiency, {TITLES[q]} (cf. Fig. 8)")
    axes[2, 3].axis("off")
    fig.suptitle("Gorham-Kharaz impact, 100 angles: integration schemes against the exact solution")
    fig.tight_layout()
    fig.savefig(png, dpi=110)

    e = np.genfromtxt(exact_csv, delimiter=",", names=True)
    fig, axes = plt.subplots(1, 3, figsize=(14, 4))
    axes[0].plot(e["angle_deg"], e["e_n"], label="$e^n$")
    axes[0].plot(e["angle_deg"], e["e_t"], label="$e^t$")
    axes[0].set_ylabel("coefficient of restitution")
    axes[1].plot(e["angle_deg"], e["beta_deg"], color="C2")
    axes[1].set_ylabel(r"rebound angle $\beta$ (deg)")
    axes[2].plot(e["angle_deg"], e["omega_f"], color="C3")
    axes[2].set_ylabel(r"final spin $\omega_f$ (rad/s)")
    for a in axes:
        a.set_xlabel(r"impact angle $\alpha$ (deg)")
    axes[0].legend()
    fig.suptitle("Exact solution (eqs. 24-37 with stick/slip switches)")
    fig.tight_layout()
    fig.savefig(exact_png, dpi=110)


if __name__ == "__main__":
    main()
