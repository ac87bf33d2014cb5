#!/usr/bin/env python3
"""Plot of `moreau experiment force-relaxation` (CD paper §3.1, eqs. 48-50).

Usage: plot_force_relaxation.py CSV ERROR_CSV PNG EPS Q L_LAST EXP_CHAIN EXP_2D EXP_3D
Left: sweeps to reach eps on the squeezed chain against L with the diffusion
theory L^2 ln(4/(pi eps))/(q pi^2) and the paper's bound (L/d)^2 (eq. 48).
Middle: the error of the longest chain against the sweep with the theory's
decay (4/pi) exp(-q pi^2 s / L^2). Right: 2D and 3D packings against n with
the trends n (2D) and n^(2/3) (3D) of eq. 48's N_I ~ (L/d)^2 drawn through
the data's centre (eqs. 49-50 are the cost per step, n times that).
"""
import csv
import math
import sys

from plotkit import finish, plt, save


def main():
    path, err_path, png = sys.argv[1], sys.argv[2], sys.argv[3]
    eps, q, L_last = float(sys.argv[4]), float(sys.argv[5]), float(sys.argv[6])
    exp_chain, exp2, exp3 = (float(a) for a in sys.argv[7:10])
    rows = list(csv.DictReader(open(path)))
    err = list(csv.DictReader(open(err_path)))

    fig, ax = plt.subplots(1, 3, figsize=(15, 4.6))
    chain = [r for r in rows if r["system"] == "chain"]
    L = [float(r["size"]) for r in chain]
    s = [float(r["sweeps"]) for r in chain]
    sd = [float(r["sweeps_sd"]) for r in chain]
    th = [float(r["sweeps_theory"]) for r in chain]
    ax[0].errorbar(L, s, yerr=sd, fmt="o", color="C0", label=f"CD simulation (slope {exp_chain:.3f})")
    Lf = [L[0] * (L[-1] / L[0]) ** (k / 50) for k in range(51)]
    ax[0].plot(Lf, [x * x * math.log(4 / (math.pi * eps)) / (q * math.pi ** 2) for x in Lf], "-", color="C1",
               label=r"diffusion theory $L^2\ln(4/\pi\varepsilon)/(q\pi^2)$")
    ax[0].plot(Lf, [x * x for x in Lf], "--", color="gray", label=r"eq. 48: $(L/d)^2$")
    finish(ax[0], "squeezed chain (CD §3.1)", "chain length L / d", f"sweeps until every |R - F| <= {eps:g} F",
           log="xy", fontsize=8)

    if err:
        sw = [float(r["sweep"]) for r in err]
        e = [float(r["error"]) for r in err]
        ax[1].semilogy(sw, e, ".", ms=2, color="C0", label=f"CD simulation, L = {L_last:g}")
        ax[1].semilogy(sw, [4 / math.pi * math.exp(-q * math.pi ** 2 * x / L_last ** 2) for x in sw], "-",
                       color="C1", label=r"theory $(4/\pi)\,e^{-q\pi^2 s/L^2}$")
        ax[1].axhline(eps, color="gray", ls=":", label=r"$\varepsilon$")
        ax[1].set_ylim(eps / 10, 2)
        finish(ax[1], "relaxation of the longest chain", "sweep s", "max |R - F| / F", fontsize=8)

    for system, color, exp_fit, trend, label in (("2d", "C2", exp2, 1.0, "n (eq. 48, 2D)"),
                                                 ("3d", "C3", exp3, 2.0 / 3.0, "n^(2/3) (eq. 48, 3D)")):
        pts = [r for r in rows if r["system"] == system]
        if not pts:
            continue
        n = [float(r["size"]) for r in pts]
        y = [float(r["sweeps"]) for r in pts]
        yerr = [float(r["sweeps_sd"]) for r in pts]
        ax[2].errorbar(n, y, yerr=yerr, fmt="o", color=color, label=f"{system.upper()} packings (slope {exp_fit:.2f})")
        # The theory fixes only the slope: drawn through the data's geometric centre.
        lx = sum(math.log(v) for v in n) / len(n)
        ly = sum(math.log(v) for v in y) / len(y)
        ax[2].plot(n, [math.exp(ly + trend * (math.log(v) - lx)) for v in n], "--", color=color,
                   label=f"theory trend ∝ {label}")
    finish(ax[2], "load step of a packing", "grains n", f"sweeps until the base force is within {eps:g} of its limit",
           log="xy", fontsize=8)
    save(fig, png, dpi=120)


if __name__ == "__main__":
    main()
