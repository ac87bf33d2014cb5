#!/usr/bin/python3
"""CD paper §3.4: artificial elasticity of CD against explicit springs. The CD
traces (dots) with the MD traces of the linear spring-dashpot of eqs. 67-68
(lines) overlaid: left the 1D chain (last grain), right the 2D piston.

usage: plot_cd_md_equivalence.py CSV PNG RESULTS_JSON
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np


def main():
    csv, png, res = sys.argv[1:4]
    r = json.load(open(res))
    d = np.genfromtxt(csv, delimiter=",", names=True, dtype=None, encoding="utf-8")
    runs = list(dict.fromkeys(d["run"]))
    chain_ni = [run.split("_")[2] for run in runs if run.startswith("cd_1d_")]
    has2d = any(run.startswith("cd_2d_") for run in runs)
    panels = (1 if chain_ni else 0) + (1 if has2d else 0)
    fig, axes = plt.subplots(1, max(panels, 1), figsize=(6.5 * max(panels, 1), 4.8), squeeze=False)
    axes = list(axes[0])
    if chain_ni:
        ax = axes.pop(0)
        ni = chain_ni[-1]
        for kind, style in (("cd", "o"), ("md", "-")):
            m = d["run"] == f"{kind}_1d_{ni}"
            t, y = d["time"][m], d["y"][m]
            if kind == "cd":
                ax.plot(t, y, style, ms=3.5, mfc="none", color="C0",
                        label=f"CD, N_I = {ni}: ω = {r['omega_cd']:.4g}, τ = {r['tau_cd']:.3g}")
            else:
                ax.plot(t, y, style, lw=1.8, color="C3",
                        label=f"MD, κ = {r['kappa']:.4g}, γ = {r['gamma']:.4g}: ω = {r['omega_md']:.4g}, τ = {r['tau_md']:.3g}")
        m = d["run"] == f"cd_1d_{ni}"
        inside = d["in_fit"][m] > 0
        y_in = d["y"][m][inside]
        lo, hi = y_in.min(), y_in.max()
        pad = 1.5 * (hi - lo) + 1e-9
        ax.set_ylim(lo - pad, hi + pad)
        t_in = d["time"][m][inside]
        ax.set_xlim(max(0, t_in[0] - 0.5 * (t_in[-1] - t_in[0])), t_in[-1])
        ax.set_xlabel("time t / Δt")
        ax.set_ylabel("position of the last grain / d")
        ax.set_title(f"1D chain of the sound-wave test, N_I = {ni}")
        ax.legend(fontsize=8, loc="lower right")
        ax.grid(alpha=0.3)
    if has2d:
        ax = axes.pop(0)
        ni = [run.split("_")[2] for run in runs if run.startswith("cd_2d_")][0]
        for kind, style in (("cd", "o"), ("md", "-")):
            m = d["run"] == f"{kind}_2d_{ni}"
            t, y = d["time"][m], d["y"][m]
            if kind == "cd":
                ax.plot(t, y, style, ms=3.5, mfc="none", color="C0",
                        label=f"CD, N_I = {ni}: ω = {r['omega_cd_2d']:.4g}, τ = {r['tau_cd_2d']:.3g}")
            else:
                ax.plot(t, y, style, lw=1.8, color="C3",
                        label=f"MD, κ = 2q m_eff N_I: ω = {r['omega_md_2d']:.4g}, τ = {r['tau_md_2d']:.3g}")
        ax.set_xlim(0, d["time"][d["run"] == f"cd_2d_{ni}"].max())
        ax.set_xlabel("time since the force step  t / Δt")
        ax.set_ylabel("piston displacement / d")
        ax.set_title(f"2D packing: piston after F → F + ΔF, N_I = {ni}")
        ax.legend(fontsize=8, loc="lower right")
        ax.grid(alpha=0.3)
    fig.suptitle("Contact dynamics with N_I iterations ≡ MD with κ = q m N_I/Δt², γ = q m N_I/Δt (eqs. 67–68)")
    fig.tight_layout()
    fig.savefig(png, dpi=130)


if __name__ == "__main__":
    main()
