#!/usr/bin/env python3
"""Plot of `moreau experiment sweep-orders` (beyond CD §2.5).

Usage: plot_sweep_orders.py CSV PNG CHAIN_LENGTH N2D N3D SEEDS
Left: sweeps of a load step until every reaction is within eps of R*, per
order over the random sweep's on the same system and seed (median over
seeds), for the chain, the 2D and the 3D packing, with the chain theory 1/q.
Right: the chain's sound-wave omega over eq. 58 with the random sweep's q and
the sqrt(q/0.797) each order's q predicts.
"""
import csv
import math
import sys

from plotkit import finish, number, plt, save


def main():
    path, png = sys.argv[1:3]
    L, n2, n3, seeds = sys.argv[3:7]
    rows = list(csv.DictReader(open(path)))
    names = [r["order"] for r in rows]
    x = list(range(len(names)))
    fig, ax = plt.subplots(1, 2, figsize=(13, 4.8))
    width = 0.2
    for k, (key, label, color) in enumerate((("chain", f"chain L = {L}", "C0"), ("2d", f"2D packing n = {n2}", "C2"),
                                             ("3d", f"3D packing n = {n3}", "C3"))):
        y = [number(r["ratio_" + key]) for r in rows]
        if all(math.isnan(v) for v in y):
            continue
        ax[0].bar([i + (k - 1) * width for i in x], y, width=width, color=color, label=label)
    q0 = number(rows[0]["q_theory"])
    ax[0].plot([i - width for i in x], [q0 / number(r["q_theory"]) for r in rows], "k_", ms=25, mew=2,
               label="chain theory: sweeps ∝ 1/q")
    ax[0].set_xticks(x)
    ax[0].set_xticklabels(names)
    finish(ax[0], f"load step, cold start: median over {seeds} seeds of the paired ratio",
           ylabel="sweeps to reach eps / sweeps of random-sweep", fontsize=8)

    ratio = [number(r["omega_ratio"]) for r in rows]
    if not all(math.isnan(v) for v in ratio):
        ax[1].bar(x, ratio, width=0.4, color="C0", label=r"CD simulation $\omega_{fit}/\omega_{58}(q=0.797)$")
        ax[1].plot(x, [math.sqrt(number(r["q_theory"]) / q0) for r in rows], "k_", ms=30, mew=2,
                   label=r"theory $\sqrt{q/0.797}$ (each order's q)")
        ax[1].axhline(1.0, color="gray", ls=":")
        ax[1].set_xticks(x)
        ax[1].set_xticklabels(names)
        finish(ax[1], "sound wave of the chain (CD §3.3.1) per order",
               ylabel=r"$\omega / \omega_{theory}$ (random sweep)", fontsize=8)
    save(fig, png, dpi=120)


if __name__ == "__main__":
    main()
