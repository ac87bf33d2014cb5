#!/usr/bin/python3
"""omega and tau against N_I (CD paper §3.3): the 1D chain with eqs. 58 and 60,
the 2D packing with the paper's N_I^(1/2) and N_I^(-1) laws drawn through it;
the 2D piston traces below.

usage: plot_iteration_scaling.py CSV TRACES_CSV PNG
"""
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np


def power_line(ax, x, y, exponent, style, label):
    """A line N_I^exponent through the geometric centre of the points."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    c = np.exp(np.mean(np.log(y) - exponent * np.log(x)))
    xs = np.geomspace(x.min() / 1.2, x.max() * 1.2, 50)
    ax.plot(xs, c * xs ** exponent, style, lw=1.0, label=label)


def slope(x, y):
    return np.polyfit(np.log(x), np.log(y), 1)[0]


def main():
    csv, traces, png = sys.argv[1:4]
    d = np.genfromtxt(csv, delimiter=",", names=True, dtype=None, encoding="utf-8")
    chain = d[d["system"] == "chain"]
    pack = d[d["system"] == "packing"]
    fig = plt.figure(figsize=(11, 7.5))
    axw = fig.add_subplot(2, 2, 1)
    axt = fig.add_subplot(2, 2, 2)
    axr = fig.add_subplot(2, 1, 2)
    for ax, key, expo, name in ((axw, "omega", 0.5, "ω"), (axt, "tau", -1.0, "τ")):
        if len(chain):
            ax.plot(chain["iterations"], chain[key], "o", color="C0",
                    label=f"1D chain, CD (slope {slope(chain['iterations'], chain[key]):.3f})")
            ax.plot(chain["iterations"], chain[key + "_theory"], "-", color="C0", lw=1.2,
                    label="1D chain, eqs. 58/60" if key == "omega" else "1D chain, eq. 60")
        if len(pack):
            ax.plot(pack["iterations"], pack[key], "s", color="C3",
                    label=f"2D packing, CD (slope {slope(pack['iterations'], pack[key]):.3f})")
            power_line(ax, pack["iterations"], pack[key], expo, "--",
                       f"paper: {name} ∝ N_I^{expo:g}".replace("^0.5", "^½").replace("^-1", "^−1"))
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("iterations per step N_I")
        ax.set_ylabel(f"{name}  (Δt = 1)")
        ax.legend(fontsize=7.5)
        ax.grid(True, which="both", alpha=0.3)
    axw.set_title("frequency ω of the slowest mode")
    axt.set_title("damping time τ")
    try:
        tr = np.genfromtxt(traces, delimiter=",", names=True, dtype=None, encoding="utf-8")
        runs = list(dict.fromkeys(tr["run"]))
    except (ValueError, IndexError):
        runs = []
    for k, run in enumerate(runs):
        m = tr["run"] == run
        y = tr["y"][m]
        scale = np.max(np.abs(y)) or 1.0
        axr.plot(tr["time"][m], y / scale, "-", lw=1.0, color=plt.cm.viridis(k / max(1, len(runs) - 1)),
                 label=f"N_I = {run[2:]}")
    if runs:
        axr.set_xlabel("time since the force step  t / Δt")
        axr.set_ylabel("piston displacement / its maximum")
        axr.set_title("2D packing: the piston after F → F + ΔF for each N_I (same prepared packing)")
        axr.legend(fontsize=8, ncol=len(runs))
        axr.set_xlim(0, np.percentile(tr["time"], 60))
    fig.tight_layout()
    fig.savefig(png, dpi=120)


if __name__ == "__main__":
    main()
