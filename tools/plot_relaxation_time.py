#!/usr/bin/env python3
"""Peña et al. (geometrical friction), the two-disc relaxation: Fig. 5 (E_k at
its maxima, mu = 0 inset), Figs. 6, 7a (Cundall's t_R against dt/t_c per k_n),
Fig. 7b (per mu), Fig. 9 (geometric update, three cases), Figs. 8a-c (t_R
against mu, k_t/k_n, eps_t/eps_n) and Cundall's error against the linear
system.  Usage: plot_relaxation_time.py OUTDIR PNG (OUTDIR holds the
experiment's relaxation_time*.csv)."""
import csv
import math
import os
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

out = sys.argv[1]


def read(name):
    path = os.path.join(out, name)
    return list(csv.DictReader(open(path))) if os.path.exists(path) else []


def num(s):
    try:
        v = float(s)
    except ValueError:
        return math.nan
    return v


grid = read("relaxation_time.csv")
ek = read("relaxation_time_ek.csv")
sweeps = read("relaxation_time_sweeps.csv")
kn0 = num(grid[0]["kn"]) if grid else math.nan
linear = {r["variant"]: num(r["t_r_linear"]) for r in grid}

fig, axes = plt.subplots(3, 3, figsize=(15, 13))

# Fig. 5: E_k at its local maxima, one curve per dt; inset mu = 0.
ax = axes[0, 0]
dts = sorted({num(r["dt_over_tc"]) for r in ek if r["variant"] == "cundall"}, reverse=True)
for dt in dts:
    pts = [(num(r["t_over_tc"]), num(r["ek"])) for r in ek if r["variant"] == "cundall" and num(r["dt_over_tc"]) == dt]
    ax.semilogy([p[0] for p in pts], [p[1] for p in pts], lw=1, label=f"dt/t_c = {dt:g}")
ax.set_xlabel("t / t_c")
ax.set_ylabel("E_k at its maxima (J)")
ax.set_title("Fig. 5: E_k(t), Cundall spring, mu = 500", fontsize=10)
ax.legend(fontsize=6, loc="upper right")
inset = ax.inset_axes([0.08, 0.08, 0.42, 0.38])
for dt in sorted({num(r["dt_over_tc"]) for r in ek if r["variant"] == "cundall_mu0"}, reverse=True):
    pts = [(num(r["t_over_tc"]), num(r["ek"])) for r in ek
           if r["variant"] == "cundall_mu0" and num(r["dt_over_tc"]) == dt]
    inset.semilogy([p[0] for p in pts], [p[1] for p in pts], lw=1)
inset.set_title("mu = 0: the curves coincide", fontsize=7)
inset.tick_params(labelsize=6)


def versus_dt(ax, variant, title, tt):
    kns = sorted({num(r["kn"]) for r in grid if r["variant"] == variant})
    for i, kn in enumerate(kns):
        pts = sorted((num(r["dt_over_tc"]), num(r["t_r"])) for r in grid
                     if r["variant"] == variant and num(r["kn"]) == kn and not math.isnan(num(r["t_r"])))
        ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", ms=8 - 1.5 * i, label=f"k_n = {kn:g} N/m")
    if variant in linear:
        ax.axhline(linear[variant], c="k", lw=0.8, ls=":", label="linear system (sticking)")
    if tt:
        ax.axvline(tt, ls="--", c="k", lw=0.8, label=f"T_t = {tt:g} (paper)")
    ax.set_xscale("log")
    ax.set_xlabel("dt / t_c")
    ax.set_ylabel("t_R / t_c")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=7)


versus_dt(axes[0, 1], "cundall", "Fig. 6: Cundall spring, rotation", 1e-3)
versus_dt(axes[0, 2], "cundall_norot", "Fig. 7a: Cundall spring, no rotation", 1e-4)

# Fig. 7b: no rotation, one curve per mu.
ax = axes[1, 0]
mus = sorted({num(r["mu"]) for r in sweeps if r["study"] == "fig7b"})
for mu in mus:
    pts = sorted((num(r["dt_over_tc"]), num(r["t_r"])) for r in sweeps
                 if r["study"] == "fig7b" and num(r["mu"]) == mu and not math.isnan(num(r["t_r"])))
    ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", ms=4, label=f"mu = {mu:g}")
ax.set_xscale("log")
ax.set_xlabel("dt / t_c")
ax.set_ylabel("t_R / t_c")
ax.set_title("Fig. 7b: no rotation, per mu (missing: R^2 < 0.9)", fontsize=10)
ax.legend(fontsize=7)

# Fig. 9: the geometric update in its three cases, against the linear system.
ax = axes[1, 1]
for variant, label in [("geometric", "rotation and translation"), ("geometric_norot", "translation only"),
                       ("geometric_rotonly", "rotation only"), ("cundall_rotonly", "Cundall, rotation only")]:
    pts = sorted((num(r["dt_over_tc"]), num(r["t_r"]) / num(r["t_r_linear"])) for r in grid
                 if r["variant"] == variant and num(r["kn"]) == kn0 and not math.isnan(num(r["t_r"])))
    ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-" if variant.startswith("geo") else "x:", ms=5, label=label)
ax.set_xscale("log")
ax.set_ylim(0.8, 1.05)
ax.set_xlabel("dt / t_c")
ax.set_ylabel("t_R / t_R of the linear system")
ax.set_title("Fig. 9: geometric update (eqs. 14-15)", fontsize=10)
ax.legend(fontsize=7)


def sweep(ax, study, key, xlabel, title, logx=False):
    rows = sorted((num(r[key]), num(r["t_r"]), num(r["t_r_linear"])) for r in sweeps if r["study"] == study)
    ax.plot([r[0] for r in rows], [r[2] for r in rows], "k:", label="linear system (sticking)")
    ax.plot([r[0] for r in rows if not math.isnan(r[1])], [r[1] for r in rows if not math.isnan(r[1])], "o",
            label="simulated")
    if logx:
        ax.set_xscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("t_R / t_c")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=7)


dt8 = next((num(r["dt_over_tc"]) for r in sweeps if r["study"] == "fig8a"), math.nan)
sweep(axes[1, 2], "fig8a", "mu", "mu", f"Fig. 8a: no rotation, dt/t_c = {dt8:g}", logx=True)
sweep(axes[2, 0], "fig8b", "kt_over_kn", "k_t / k_n", "Fig. 8b: no rotation, eps_t/eps_n = 1.0053")
sweep(axes[2, 1], "fig8c", "et_over_en", "eps_t / eps_n", "Fig. 8c: no rotation, k_t/k_n = 1/3")

# Cundall's error against the linear system.
ax = axes[2, 2]
for variant in ["cundall", "cundall_norot", "cundall_rotonly"]:
    pts = sorted((num(r["dt_over_tc"]), abs(num(r["t_r"]) / num(r["t_r_linear"]) - 1.0)) for r in grid
                 if r["variant"] == variant and num(r["kn"]) == kn0 and not math.isnan(num(r["t_r"])))
    ax.loglog([p[0] for p in pts], [max(p[1], 1e-9) for p in pts], "o-", ms=4, label=variant)
ax.axhline(1e-3, c="k", lw=0.8, ls="--", label="0.1 % (converged)")
ax.set_xlabel("dt / t_c")
ax.set_ylabel("|t_R / t_R(linear) - 1|")
ax.set_title("Cundall's spring: error of t_R", fontsize=10)
ax.legend(fontsize=7)

for a in axes.flat:
    a.grid(alpha=0.3)
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=110)
