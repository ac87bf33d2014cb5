#!/usr/bin/python3
"""Figure 7 of the CD paper: the last grain's position against time, with the
damped sine of eqs. 57-60 (theory ω, τ) and the free fit drawn through it.

usage: plot_sound_wave_1d.py CSV PNG omega_theory tau_theory omega_fit tau_fit N_I
"""
import sys

import numpy as np

from plotkit import finish, plt, save


def main():
    csv, png = sys.argv[1], sys.argv[2]
    w_th, tau_th, w_fit, tau_fit, ni = (float(a) for a in sys.argv[3:8])
    d = np.genfromtxt(csv, delimiter=",", names=True)
    fig, ax = plt.subplots(figsize=(7, 4.2))
    inside = d["in_fit"] > 0
    ax.plot(d["time"], d["x_last"], ".", ms=3, color="0.55", label="simulation (last grain)")
    ax.plot(d["time"][inside], d["x_last"][inside], ".", ms=4, color="k", label="fitted window")
    ax.plot(d["time"], d["x_theory"], "-", color="C3", lw=1.6,
            label=f"eq. 64 with theory ω={w_th:.4g}, τ={tau_th:.4g}")
    ax.plot(d["time"], d["x_fit"], "--", color="C0", lw=1.2,
            label=f"free fit ω={w_fit:.4g}, τ={tau_fit:.4g}")
    lo, hi = np.nanmin(d["x_last"][inside]), np.nanmax(d["x_last"][inside])
    pad = 0.6 * (hi - lo) + 1e-9
    ax.set_ylim(lo - pad, hi + pad)
    t0 = d["time"][inside][0]
    ax.set_xlim(max(0.0, t0 - 2.0 * tau_th), d["time"][inside][-1] + 0.2 * tau_th)
    finish(ax, f"Artificial sound wave in a rigid chain, CD with N_I = {ni:g} (cf. Fig. 7)",
           "time t / Δt", "x of the last grain / d", fontsize=8, loc="upper right")
    save(fig, png)


if __name__ == "__main__":
    main()
