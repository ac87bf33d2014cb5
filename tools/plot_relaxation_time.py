#!/usr/bin/env python3
"""Relaxation time t_R/t_c vs dt/t_c (Pena et al. Figs. 6, 7a, 9): one panel per
variant (Cundall with rotation, Cundall without, geometric with, geometric
without), one curve per k_n.  Usage: plot_relaxation_time.py CSV PNG"""
import csv
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

rows = list(csv.DictReader(open(sys.argv[1])))
variants = [("cundall", "Cundall spring, rotation (Fig. 6)", 1e-3),
            ("cundall_norot", "Cundall spring, no rotation (Fig. 7a)", 1e-4),
            ("geometric", "geometric update, rotation (Fig. 9)", None),
            ("geometric_norot", "geometric update, no rotation (Fig. 9)", None)]
fig, axes = plt.subplots(2, 2, figsize=(10, 8), sharex=True)
for ax, (name, title, tt) in zip(axes.flat, variants):
    kns = sorted({float(r["kn"]) for r in rows if r["variant"] == name})
    for kn in kns:
        pts = sorted((float(r["dt_over_tc"]), float(r["t_r"])) for r in rows
                     if r["variant"] == name and float(r["kn"]) == kn and r["t_r"] not in ("nan", "-nan"))
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", ms=8 - 1.5 * kns.index(kn),
                    label=f"k_n = {kn:g} N/m")
            ref = pts[0][1]  # the finest step
            ax.set_ylim(0.9 * ref, 1.1 * ref)  # the same relative range in every panel
            for x, y in pts:
                if y > 1.1 * ref:
                    ax.annotate(f"{y:.3g}", (x, 1.1 * ref), textcoords="offset points", xytext=(-20, -12),
                                fontsize=8)
    if tt:
        ax.axvline(tt, ls="--", c="k", lw=0.8, label=f"T_t = {tt:g} (paper)")
    ax.set_xscale("log")
    ax.set_title(title, fontsize=10)
    ax.set_ylabel("t_R / t_c (axis: +-10 % of the finest step)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
for ax in axes[1]:
    ax.set_xlabel("dt / t_c")
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=120)
