#!/usr/bin/python3
"""CD paper §3.4: artificial elasticity of CD against explicit springs. CD
traces (dots) and MD traces of the linear spring-dashpot of eqs. 67-68 (lines)
overlaid: left the 1D chain (last grain, with eqs. 58/60 drawn), right the 2D
piston. Top: each trace as (x - x0)/A0 against the time since a common
phase of its fitted eq. 64, so equal omega and tau mean coinciding curves.
Bottom: the same traces as they are, in grain diameters against time, with
each fit's rest position x0 dashed: the static offsets between the methods
(CD overlaps are not tied to forces) that the top row divides out.

usage: plot_cd_md_equivalence.py CSV PNG RESULTS_JSON
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np


def eq64(t, x0, a, b, w, s, t0):
    """Eq. 64 as x0 + e^{-s (t - t0)} (a sin wt + b cos wt)."""
    return x0 + np.exp(-s * (t - t0)) * (a * np.sin(w * t) + b * np.cos(w * t))


def normalise(t, y, inside, w, tau):
    """Fit eq. 64 on the window (from omega, tau), return t', y' and the fit."""
    tw, yw = t[inside], y[inside]
    t0 = tw[0]
    A = np.column_stack([np.ones_like(tw), np.exp(-(tw - t0) / tau) * np.sin(w * tw),
                         np.exp(-(tw - t0) / tau) * np.cos(w * tw)])
    c = np.linalg.lstsq(A, yw, rcond=None)[0]
    try:
        from scipy.optimize import curve_fit
        p, _ = curve_fit(lambda tt, x0, a, b, ww, ss: eq64(tt, x0, a, b, ww, ss, t0),
                         tw, yw, p0=[c[0], c[1], c[2], w, 1.0 / tau], maxfev=20000)
        x0, a, b, w, s = p
    except Exception:
        x0, a, b, s = c[0], c[1], c[2], 1.0 / tau
    amp, phase = np.hypot(a, b), np.arctan2(b, a)  # a sin + b cos = amp sin(w t + phase)
    # Reference time: the last zero of the phase at or before the window start.
    tref = t0 - np.mod(w * t0 + phase, 2 * np.pi) / w
    a0 = amp * np.exp(-s * (tref - t0))
    keep = (t >= tref) & (t <= tw[-1])
    return t[keep] - tref, (y[keep] - x0) / a0, x0, w, 1.0 / s


def panel(ax, d, cd_label, md_label, r, sfx, title, theory=None):
    for label, kind in ((cd_label, "cd"), (md_label, "md")):
        m = d["run"] == label
        t, y, inside = d["time"][m], d["y"][m], d["in_fit"][m] > 0
        w, tau = r[f"omega_{kind}{sfx}"], r[f"tau_{kind}{sfx}"]
        tt, yy, x0, _, _ = normalise(t, y, inside, w, tau)
        if kind == "cd":
            ax.plot(tt, yy, "o", ms=4, mfc="none", color="C0", label=f"CD: ω = {w:.4g}, τ = {tau:.3g}  (x0 = {x0:.5g})")
        else:
            ax.plot(tt, yy, "-", lw=2.0, color="C3", alpha=0.85,
                    label=f"MD: ω = {w:.4g}, τ = {tau:.3g}  (x0 = {x0:.5g})")
    if theory:
        w, tau = theory
        ts = np.linspace(0, ax.get_xlim()[1], 600)
        ax.plot(ts, np.exp(-ts / tau) * np.sin(w * ts), ":", color="k", lw=1.3,
                label=f"eqs. 58, 60: ω = {w:.4g}, τ = {tau:.3g}")
    ax.set_xlabel("time since a common phase of the fit  t / Δt")
    ax.set_ylabel("(x − x0) / A0")
    ax.set_title(title)
    ax.legend(fontsize=8, loc="upper right")
    ax.grid(alpha=0.3)
    ax.set_ylim(-1.15, 1.5)


def raw_panel(ax, d, cd_label, md_label, r, sfx, title, ylabel):
    """The traces as they are, with each fit's rest position x0 (dashed)."""
    rest = {}
    for label, kind, style, colour in ((cd_label, "cd", "o", "C0"), (md_label, "md", "-", "C3")):
        m = d["run"] == label
        t, y, inside = d["time"][m], d["y"][m], d["in_fit"][m] > 0
        _, _, x0, _, _ = normalise(t, y, inside, r[f"omega_{kind}{sfx}"], r[f"tau_{kind}{sfx}"])
        rest[kind] = x0
        if style == "o":
            ax.plot(t, y, "o", ms=2.5, mfc="none", color=colour, label=f"CD, rest x0 = {x0:.6g}")
        else:
            ax.plot(t, y, "-", lw=1.5, color=colour, alpha=0.85, label=f"MD, rest x0 = {x0:.6g}")
        ax.axhline(x0, color=colour, ls="--", lw=0.9)
    ax.set_xlabel("time  t / Δt")
    ax.set_ylabel(ylabel)
    ax.set_title(f"{title}: MD − CD rest = {rest['md'] - rest['cd']:+.3g} d", fontsize=10)
    ax.legend(fontsize=8, loc="best")
    ax.grid(alpha=0.3)


def main():
    csv, png, res = sys.argv[1:4]
    r = json.load(open(res))
    d = np.genfromtxt(csv, delimiter=",", names=True, dtype=None, encoding="utf-8")
    runs = list(dict.fromkeys(d["run"]))
    chain = [run.split("_")[2] for run in runs if run.startswith("cd_1d_")]
    pack = [run.split("_")[2] for run in runs if run.startswith("cd_2d_")]
    n = (1 if chain else 0) + (1 if pack else 0)
    fig, grid = plt.subplots(2, max(n, 1), figsize=(6.8 * max(n, 1), 9.4), squeeze=False)
    axes, raw = list(grid[0]), list(grid[1])
    if chain:
        ni = chain[-1]
        th = None
        if "omega_theory_1d" in r:
            th = (r["omega_theory_1d"][-1], r["tau_theory_1d"][-1])
        panel(axes.pop(0), d, f"cd_1d_{ni}", f"md_1d_{ni}", r, "",
              f"1D chain (50 grains), N_I = {ni}: κ = γ = {r['kappa']:.4g}", th)
        raw_panel(raw.pop(0), d, f"cd_1d_{ni}", f"md_1d_{ni}", r, "", "chain, last grain", "last grain's position x (grain diameters)")
    if pack:
        ni = pack[0]
        panel(axes.pop(0), d, f"cd_2d_{ni}", f"md_2d_{ni}", r, "_2d",
              f"2D packing ({r.get('particles_2d', 1000)} disks), piston, N_I = {ni}")
        raw_panel(raw.pop(0), d, f"cd_2d_{ni}", f"md_2d_{ni}", r, "_2d", "packing, piston",
                  "piston shift since the force step (grain diameters)")
    fig.suptitle("CD with N_I iterations per step vs MD with κ = q m N_I/Δt², γ = q m N_I/Δt (eqs. 67–68)")
    fig.tight_layout()
    fig.savefig(png, dpi=130)


if __name__ == "__main__":
    main()
