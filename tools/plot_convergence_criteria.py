#!/usr/bin/env python3
"""Plot of `moreau experiment convergence-criteria` (CD paper §2.5.1).

Usage: plot_convergence_criteria.py CSV CURVE_CSV PNG N_I STOP_LOCAL STOP_GLOBAL LOAD_STEP
Left: residual sum|dR|/sum|R| and true error max|R - R*|/<|R*|> against the
sweep of the load step (solved to convergence), with the sweep at which each
criterion stops. Right: mean sweeps per step and mean overlap of the three
runs tuned to similar accuracy.
"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    path, curve_path, png = sys.argv[1:4]
    ni, stop_local, stop_global, load_step = (int(float(a)) for a in sys.argv[4:8])
    runs = list(csv.DictReader(open(path)))
    curve = list(csv.DictReader(open(curve_path)))
    fig, ax = plt.subplots(1, 2, figsize=(12, 4.6))
    s = [int(r["sweep"]) for r in curve]
    ax[0].semilogy(s, [float(r["residual"]) for r in curve], "-", color="C0",
                   label=r"residual $\sum|\Delta R|/\sum|R|$")
    ax[0].semilogy(s, [float(r["error"]) for r in curve], "-", color="C1",
                   label=r"error $\max|R-R^*|/\langle|R^*|\rangle$")
    for stop, name, color in ((ni, f"fixed N_I = {ni}", "C2"), (stop_local, "local (eq. 35)", "C3"),
                              (stop_global, "global (eq. 36)", "C4")):
        if stop > 0:
            ax[0].axvline(stop, color=color, ls="--", label=f"{name} stops: sweep {stop}")
    ax[0].set_xscale("log")
    ax[0].set_xlabel("sweep")
    ax[0].set_ylabel("relative size")
    ax[0].set_title(f"convergence vs iteration count, load step {load_step}")
    ax[0].legend(fontsize=8)

    names = [r["criterion"] for r in runs]
    it = [float(r["mean_iterations"]) for r in runs]
    ov = [float(r["mean_overlap"]) for r in runs]
    x = range(len(names))
    ax[1].bar([i - 0.2 for i in x], it, width=0.4, color="C0", label="mean sweeps per step")
    ax[1].set_ylabel("mean sweeps per step", color="C0")
    ax2 = ax[1].twinx()
    ax2.bar([i + 0.2 for i in x], ov, width=0.4, color="C1", label="mean overlap / d")
    ax2.set_ylabel("mean overlap / d", color="C1")
    ax[1].set_xticks(list(x))
    ax[1].set_xticklabels([f"{r['criterion']}\n({'N_I' if r['criterion'] == 'fixed' else 'eps'} = "
                           f"{float(r['epsilon']):.3g})" for r in runs])
    ax[1].set_title("2D compression at similar accuracy (Bartels et al. 2001 test)")
    fig.tight_layout()
    fig.savefig(png, dpi=120)


if __name__ == "__main__":
    main()
