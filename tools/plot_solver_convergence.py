#!/usr/bin/env python3
"""Plot of `moreau experiment solver-convergence` (docs/convergence.md).

Usage: plot_solver_convergence.py CSV PNG EPSILON
One column per problem. Top: the Siconos error of each solver's iterate
against iterations (APGD dashed: its relaxed error, the problem it solves).
Middle: the same against wall seconds. Bottom: the iterate's distance from
the best answer found, in contact velocities u (solid, over |q|) and in
impulses r (dotted, over |r*|).
"""
import csv
import sys
from collections import OrderedDict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

COLORS = {"gauss-seidel": "C0", "gauss-seidel-random": "C1", "newton": "C2", "gauss-seidel+newton": "C3",
          "apgd": "C4"}


def positive(xs, ys):
    pts = [(x, y) for x, y in zip(xs, ys) if x > 0 and y > 0]
    return [p[0] for p in pts], [p[1] for p in pts]


def main():
    path, png, eps = sys.argv[1], sys.argv[2], float(sys.argv[3])
    data = OrderedDict()
    for row in csv.DictReader(open(path)):
        data.setdefault(row["problem"], OrderedDict()).setdefault(row["solver"], []).append(row)
    problems = list(data)
    fig, axes = plt.subplots(3, len(problems), figsize=(5.2 * len(problems), 11), squeeze=False)
    for col, prob in enumerate(problems):
        ax_it, ax_t, ax_d = axes[0][col], axes[1][col], axes[2][col]
        for solver, rows in data[prob].items():
            c = COLORS.get(solver, "k")
            it = [float(r["iteration"]) for r in rows]
            t = [float(r["seconds"]) for r in rows]
            err = [float(r["error"]) for r in rows]
            label = solver + (" (Newton's, after the sweeps)" if solver == "gauss-seidel+newton" else "")
            ax_it.loglog(*positive(it, err), "-", color=c, label=label)
            ax_t.loglog(*positive(t, err), "-", color=c, label=solver)
            if solver == "apgd":
                rel = [float(r["relaxed_error"]) for r in rows]
                ax_it.loglog(*positive(it, rel), "--", color=c, label="apgd: relaxed error")
                ax_t.loglog(*positive(t, rel), "--", color=c)
            ax_d.loglog(*positive(it, [float(r["velocity_distance"]) for r in rows]), "-", color=c, label=solver)
            ax_d.loglog(*positive(it, [float(r["impulse_distance"]) for r in rows]), ":", color=c)
        for ax in (ax_it, ax_t):
            ax.axhline(eps, color="grey", lw=0.8, ls="--")
            ax.set_ylabel("Siconos error")
        ax_it.set_title(prob)
        ax_it.set_xlabel("iterations (sweeps; Newton: factorizations)")
        ax_t.set_xlabel("seconds")
        ax_d.set_xlabel("iterations")
        ax_d.set_ylabel("|u - u*| / |q| (solid), |r - r*| / |r*| (dotted)")
        ax_it.legend(fontsize=7)
        ax_d.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(png, dpi=110)


if __name__ == "__main__":
    main()
