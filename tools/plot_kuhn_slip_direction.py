#!/usr/bin/python3
"""Figure 4 of Kuhn, Suzuki & Daouadji: the final direction of a sliding
contact's tangential force against the size of the movement, for a movement
at right angles to the force (theta_t = -90 deg) under a constant normal force.

usage: plot_kuhn_slip_direction.py CSV PNG
"""
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np


def main():
    d = np.genfromtxt(sys.argv[1], delimiter=",", names=True)
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    ax.semilogx(d["movement"], d["theta_closed_form"], "-", color="0.6", lw=4, label="eq. 18 (closed form)")
    ax.semilogx(d["movement"], d["theta_refined"], "-", color="k", lw=1.4, label="refined algorithm, one step")
    ax.semilogx(d["movement"], d["theta_fine_steps"], ":", color="C0", lw=1.6, label="add-then-project, many small steps")
    ax.semilogx(d["movement"], d["theta_shortcut"], "--", color="C3", lw=1.4, label="add-then-project, one step")
    ax.set_xlabel("movement  k^t |Δξ| / (μ f^n)")
    ax.set_ylabel("final force angle θ^{t+Δt} (deg)")
    ax.set_ylim(-92, 2)
    ax.set_title("Tangential force direction after a slip step, θ^t = −90° (cf. Kuhn Fig. 4)", fontsize=10)
    ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=110)


if __name__ == "__main__":
    main()
