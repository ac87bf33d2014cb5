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


def dress(ax, xlabel, ylabel, title, logx=False, ylim=None):
    """A panel's axes, labels, title and legend."""
    if logx:
        ax.set_xscale("log")
    if ylim:
        ax.set_ylim(*ylim)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=7)


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
    dress(ax, "dt / t_c", "t_R / t_c", title, logx=True)


versus_dt(axes[0, 1], "cundall", "Fig. 6: Cundall spring, rotation", 1e-3)
versus_dt(axes[0, 2], "cundall_norot", "Fig. 7a: Cundall spring, no rotation", 1e-4)

# Fig. 7b: no rotation, one curve per mu.
ax = axes[1, 0]
mus = sorted({num(r["mu"]) for r in sweeps if r["study"] == "fig7b"})
for mu in mus:
    pts = sorted((num(r["dt_over_tc"]), num(r["t_r"])) for r in sweeps
                 if r["study"] == "fig7b" and num(r["mu"]) == mu and not math.isnan(num(r["t_r"])))
    ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", ms=4, label=f"mu = {mu:g}")
dress(ax, "dt / t_c", "t_R / t_c", "Fig. 7b: no rotation, per mu (missing: R^2 < 0.9)", logx=True)

# Fig. 9: the geometric update in its three cases, against the linear system.
ax = axes[1, 1]
for variant, label in [("geometric", "rotation and translation"), ("geometric_norot", "translation only"),
                       ("geometric_rotonly", "rotation only"), ("cundall_rotonly", "Cundall, rotation only")]:
    pts = sorted((num(r["dt_over_tc"]), num(r["t_r"]) / num(r["t_r_linear"])) for r in grid
                 if r["variant"] == variant and num(r["kn"]) == kn0 and not math.isnan(num(r["t_r"])))
    ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-" if variant.startswith("geo") else "x:", ms=5, label=label)
dress(ax, "dt / t_c", "t_R / t_R of the linear system", "Fig. 9: geometric update (eqs. 14-15)", logx=True,
      ylim=(0.8, 1.05))


def sweep(ax, study, key, xlabel, title, logx=False, band=None, extra=()):
    """t_R against `key` for `study`, with the linear system's t_R dotted;
    `extra`: (study, label) pairs drawn alongside (other dt, with rotation).
    `band`: the y axis spans at least +-band of the median t_R, so that a
    change of a few 1e-4 is drawn as the flat line it is."""
    rows = sorted((num(r[key]), num(r["t_r"]), num(r["t_r_linear"])) for r in sweeps if r["study"] == study)
    ax.plot([r[0] for r in rows], [r[2] for r in rows], "k:", label="linear system (sticking)")
    ax.plot([r[0] for r in rows if not math.isnan(r[1])], [r[1] for r in rows if not math.isnan(r[1])], "o",
            label=f"simulated, dt/t_c = {num(next(r for r in sweeps if r['study'] == study)['dt_over_tc']):g}")
    values = [r[1] for r in rows if not math.isnan(r[1])]
    for other, label in extra:
        by_dt = {}
        for r in sweeps:
            if r["study"] == other and not math.isnan(num(r["t_r"])):
                by_dt.setdefault(num(r["dt_over_tc"]), []).append((num(r[key]), num(r["t_r"])))
        for dt, pts in sorted(by_dt.items()):
            pts.sort()
            ax.plot([p[0] for p in pts], [p[1] for p in pts], "x--", ms=5, label=label.format(dt=dt))
            values += [p[1] for p in pts]
    if band and values:
        mid = sorted(values)[len(values) // 2]
        lo, hi = min(min(values), mid * (1 - band)), max(max(values), mid * (1 + band))
        ax.set_ylim(lo - 0.02 * (hi - lo), hi + 0.02 * (hi - lo))
        spread = max(values) / min(values) - 1
        ax.text(0.02, 0.04, f"max/min - 1 = {spread:.2g}", transform=ax.transAxes, fontsize=8)
    dress(ax, xlabel, "t_R / t_c", title, logx=logx)


def mu_sweep(ax):
    """Fig. 8a: t_R(mu) / t_R at the largest mu, without and with rotation,
    on an axis of +-5 %: a change of a few 1e-4 is drawn as the flat line it is."""
    for study, label, style in (("fig8a", "no rotation", "o-"), ("fig8a_rot", "with rotation", "x--")):
        rows = sorted((num(r["mu"]), num(r["t_r"]), num(r["dt_over_tc"])) for r in sweeps
                      if r["study"] == study and not math.isnan(num(r["t_r"])))
        if not rows:
            continue
        ref = rows[-1][1]
        spread = max(r[1] for r in rows) / min(r[1] for r in rows) - 1
        ax.plot([r[0] for r in rows], [r[1] / ref for r in rows], style, ms=5,
                label=f"{label}, dt/t_c = {rows[0][2]:g}: max/min - 1 = {spread:.1e}")
    dress(ax, "mu", "t_R / t_R at the largest mu", "Fig. 8a: t_R against mu (axis +-5 %)", logx=True,
          ylim=(0.95, 1.05))


mu_sweep(axes[1, 2])
sweep(axes[2, 0], "fig8b", "kt_over_kn", "k_t / k_n", "Fig. 8b: no rotation, eps_t/eps_n = 1.0053",
      extra=[("fig8b_dt", "dt/t_c = {dt:g}")])
sweep(axes[2, 1], "fig8c", "et_over_en", "eps_t / eps_n", "Fig. 8c: no rotation, k_t/k_n = 1/3")

# Cundall's error against the linear system.
ax = axes[2, 2]
for variant in ["cundall", "cundall_norot", "cundall_rotonly"]:
    pts = sorted((num(r["dt_over_tc"]), abs(num(r["t_r"]) / num(r["t_r_linear"]) - 1.0)) for r in grid
                 if r["variant"] == variant and num(r["kn"]) == kn0 and not math.isnan(num(r["t_r"])))
    ax.loglog([p[0] for p in pts], [max(p[1], 1e-9) for p in pts], "o-", ms=4, label=variant)
ax.axhline(1e-3, c="k", lw=0.8, ls="--", label="0.1 % (converged)")
dress(ax, "dt / t_c", "|t_R / t_R(linear) - 1|", "Cundall's spring: error of t_R")

for a in axes.flat:
    a.grid(alpha=0.3)
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=110)
