#!/usr/bin/python3
"""Integration-schemes paper, as its figures: one column per class of schemes
(single-step, multi-step, predictor-corrector, the paper's panels a-c), each
with its legend.

- PNG: Figs. 2-3, the average relative deviation (eq. 23) of e_n, e_t, the
  rebound angle and the final spin from the exact impact against the steps
  per collision;
- PNG with _grid: Figs. 5-6, the fixed-time-grid deviation (section 4.2);
- PNG with _cpu: Fig. 7 (CPU time against n) and Figs. 8-9 / 11-12 (ARD
  against CPU time; ours is the full MD step, detection included);
- EXACT_PNG: the exact solution against the impact angle.

usage: plot_integrators.py CSV EXACT_CSV PNG EXACT_PNG
"""
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

# Model errors quoted by the paper (dotted lines in its figures), %.
MODEL = {"en": 1.0, "et": 4.0, "beta": 3.52, "omega": 12.0}
TITLES = {"en": "$e^n$", "et": "$e^t$", "beta": r"$\beta$", "omega": r"$\omega_f$"}
CLASSES = [("single-step", ["fe", "ty2", "ty3", "ty4", "rk", "cd", "pv", "babab", "bababab"]),
           ("multi-step", ["ve", "ab2", "ab3", "ab4", "ab5", "d12", "t12", "t16"]),
           ("predictor-corrector", ["ab2-am3", "ab3-am4", "ab4-am5", "gpc3", "gpc4", "gear5"])]
QUANTITIES = ("en", "et", "beta", "omega")


def style(k):
    return dict(color=f"C{k % 10}", ls="-" if k < 10 else "--", lw=1.3, marker=".", ms=4)


def grid_of_panels(d, schemes, rows, xkey, ykey, xlabel, ylabel, title, png, logx=False):
    fig, axes = plt.subplots(len(rows), 3, figsize=(15, 3.6 * len(rows)), squeeze=False)
    for i, q in enumerate(rows):
        for j, (cls, members) in enumerate(CLASSES):
            ax = axes[i, j]
            shown = [s for s in members if s in schemes]
            for k, s in enumerate(shown):
                sel = d["scheme"] == s
                x, y = d[xkey(q)][sel], d[ykey(q)][sel]
                ok = np.isfinite(x) & np.isfinite(y) & (y > 0)
                ax.plot(x[ok], y[ok], label=s.upper(), **style(k))
            if q in MODEL:
                ax.axhline(MODEL[q], color="k", ls=":", lw=1, label="model error (paper)")
            ax.set_yscale("linear" if q == "cpu" else "log")
            if logx:
                ax.set_xscale("log")
            ax.set_xlabel(xlabel(q))
            ax.set_ylabel(ylabel(q))
            ax.set_title(f"{title(q)}, {cls} ({'abc'[j]})", fontsize=10)
            ax.grid(alpha=0.3)
            if shown:
                ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(png, dpi=100)
    plt.close(fig)


def main():
    csv, exact_csv, png, exact_png = sys.argv[1:5]
    d = np.genfromtxt(csv, delimiter=",", names=True, dtype=None, encoding="utf-8")
    d = np.atleast_1d(d)
    schemes = list(dict.fromkeys(d["scheme"]))
    stem = png[:-4] if png.endswith(".png") else png
    steps = lambda q: "steps"
    grid_of_panels(d, schemes, QUANTITIES, steps, lambda q: "ard_" + q, lambda q: "steps per collision n",
                   lambda q: f"ARD({TITLES[q]}) vs exact, %", lambda q: f"Figs. 2-3: {TITLES[q]}", png)
    if np.isfinite(d["grid_en"]).any():
        grid_of_panels(d, schemes, QUANTITIES, steps, lambda q: "grid_" + q, lambda q: "steps per collision n",
                       lambda q: f"fixed-grid deviation of {TITLES[q]}, %", lambda q: f"Figs. 5-6: {TITLES[q]}",
                       stem + "_grid.png")
    rows = ("cpu",) + QUANTITIES
    grid_of_panels(d, schemes, rows, lambda q: "steps" if q == "cpu" else "cpu_seconds",
                   lambda q: "cpu_seconds" if q == "cpu" else "ard_" + q,
                   lambda q: "steps per collision n" if q == "cpu" else "CPU seconds per impact set (min of repeats)",
                   lambda q: "CPU seconds (all angles)" if q == "cpu" else f"ARD({TITLES[q]}), %",
                   lambda q: "Fig. 7: CPU time" if q == "cpu" else f"Figs. 8-9, 11-12: {TITLES[q]} against CPU",
                   stem + "_cpu.png", logx=False)

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
