#!/usr/bin/python3
"""Figure of `moreau experiment chain-modes`: omega(k) and tau(k) of the chain's
modes against eqs. 58 and 60, one colour per N_I, the cut-off k_c marked.

Usage: plot_chain_modes.py chain_modes.csv out.png
"""
import csv
import math
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

Q = (4.0 * math.sqrt(math.e) - 5.0) / 2.0  # eq. 46


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    rows = list(csv.DictReader(open(sys.argv[1])))
    by_ni = {}
    for r in rows:
        by_ni.setdefault(int(r["iterations"]), []).append(r)
    fig, (ax_w, ax_t) = plt.subplots(1, 2, figsize=(11, 4.5))
    colours = ["tab:orange", "tab:green", "tab:purple", "tab:blue", "tab:red"]
    for (ni, rs), colour in zip(sorted(by_ni.items()), colours):
        c, d = math.sqrt(Q * ni), Q * ni  # eqs. 57, 54 (d = dt = 1)
        kc = 2.0 * c / d
        ks = [kc * i / 400.0 for i in range(1, 400)]
        ax_w.plot(ks, [k * math.sqrt(max(c * c - d * d * k * k / 4.0, 0.0)) for k in ks], color=colour,
                  label=f"eq. 58, $N_I$ = {ni}")
        ax_w.axvline(kc, color=colour, linestyle=":", linewidth=0.8)
        osc = [r for r in rs if float(r["omega_theory"]) > 0.0]
        ax_w.plot([float(r["k"]) for r in osc], [float(r["omega_fit"]) for r in osc], "o", color=colour,
                  label=f"fitted, $N_I$ = {ni}")
        kt = [float(r["k"]) for r in rs]
        kk = [min(kt) * (max(kt) / min(kt)) ** (i / 200.0) for i in range(201)]
        ax_t.plot(kk, [2.0 / (d * k * k) for k in kk], color=colour, label=f"eq. 60, $N_I$ = {ni}")
        ax_t.plot([float(r["k"]) for r in osc], [float(r["tau_fit"]) for r in osc], "o", color=colour)
    ax_t.axhline(0.5, color="gray", linestyle="--", linewidth=0.8)
    ax_t.text(0.04, 0.55, r"$\tau = \Delta t/2$: $\tau(k_c)$ for every $N_I$", fontsize=8, color="gray")
    ax_w.set_xlabel(r"wave number $k$ (1/d)")
    ax_w.set_ylabel(r"$\omega$ (1/$\Delta t$)")
    ax_w.set_title(r"dispersion, eq. 58 (dotted: $k_c$, eq. 59)")
    ax_t.set_xscale("log")
    ax_t.set_yscale("log")
    ax_t.set_xlabel(r"wave number $k$ (1/d)")
    ax_t.set_ylabel(r"$\tau$ ($\Delta t$)")
    ax_t.set_title("damping time, eq. 60")
    ax_w.legend(fontsize=7)
    ax_t.legend(fontsize=7)
    for ax in (ax_w, ax_t):
        ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=130)


if __name__ == "__main__":
    main()
