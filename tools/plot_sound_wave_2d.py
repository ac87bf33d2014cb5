#!/usr/bin/python3
"""Figure 8 of the CD paper: the piston's height after the force step F -> F + dF
on a 2D random packing, with the fitted damped sine of eq. 64 (omega, tau free).

usage: plot_sound_wave_2d.py CSV PNG omega_fit tau_fit N_I particles r2
"""
import sys

import numpy as np

from plotkit import finish, plt, save


def main():
    csv, png = sys.argv[1], sys.argv[2]
    w, tau, ni, n, r2 = (float(a) for a in sys.argv[3:8])
    d = np.genfromtxt(csv, delimiter=",", names=True, dtype=None, encoding="utf-8")
    t, y, yf, inside = d["time"], d["y"], d["y_fit"], d["in_fit"] > 0
    fig, ax = plt.subplots(figsize=(7, 4.2))
    ax.plot(t, y, ".", ms=3, color="0.6", label="simulation: piston height")
    ax.plot(t[inside], y[inside], ".", ms=3.5, color="k", label="fitted window")
    ax.plot(t[inside], yf[inside], "-", color="C3", lw=1.5,
            label=f"eq. 64 fit: ω = {w:.4g}, τ = {tau:.4g}  (R² = {r2:.4f})")
    ax.plot(t, yf, ":", color="C3", lw=1.0)
    lo, hi = np.nanmin(y), np.nanmax(y)
    pad = 0.15 * (hi - lo) + 1e-12
    ax.set_ylim(lo - pad, hi + pad)
    ax.set_xlim(0, t[inside][-1] * 1.05)
    finish(ax, f"Piston on {n:.0f} disks after F → F + ΔF, CD with N_I = {ni:.0f} (cf. Fig. 8)",
           "time since the force step  t / Δt", "piston displacement / d", fontsize=8, loc="lower right")
    save(fig, png)


if __name__ == "__main__":
    main()
