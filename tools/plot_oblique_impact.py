#!/usr/bin/python3
"""Figures 3-6 of the force-schemes paper: psi_f against psi_i (top two rows)
and the total restitution e against sin(theta) (bottom two rows) for every
tangential law and parameter set, plus Figs. 5-6's Hertz-Kuwabara-Kono + spring
curves at three impact speeds. The Coulomb panels carry the impulse theory
(rolling and sliding branches) as thin grey lines.

usage: plot_oblique_impact.py CSV PNG reversal_end_2_7
"""
import csv
import sys
from collections import OrderedDict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

PANELS = [
    ("coulomb", "a) Coulomb (13)"),
    ("viscous", "b) viscous (14)"),
    ("viscous_coulomb", "c) combined (15)"),
    ("cundall", "d) spring (16)"),
    ("walton_braun", "e) Walton-Braun (20)"),
    ("saw_tooth", "f) saw-tooth (22)"),
    ("hkk_spring", "Fig. 5: HKK (9) + spring (16)"),
]
STYLES = [":", "--", "-."]


def main():
    path, png = sys.argv[1], sys.argv[2]
    rev27 = float(sys.argv[3]) if len(sys.argv) > 3 else float("nan")
    curves = OrderedDict()
    with open(path) as f:
        for row in csv.DictReader(f):
            c = curves.setdefault(row["curve"], {"law": row["law"], "label": row["label"], "rows": []})
            c["rows"].append({k: float(row[k]) for k in
                              ("psi_in", "sin_theta", "psi_out", "e_total", "psi_theory", "e_theory")})
    fig, axes = plt.subplots(4, 4, figsize=(16, 14))
    for slot, (law, title) in enumerate(PANELS):
        ax_psi = axes[slot // 4][slot % 4]
        ax_e = axes[2 + slot // 4][slot % 4]
        members = [c for c in curves.values() if c["law"] == law]
        for i, c in enumerate(members):
            r = c["rows"]
            x = [p["psi_in"] for p in r]
            ax_psi.plot(x, [p["psi_out"] for p in r], STYLES[i % 3], color="k", lw=1.4, label=c["label"])
            ax_e.plot([p["sin_theta"] for p in r], [p["e_total"] for p in r], STYLES[i % 3], color="k", lw=1.4,
                      label=c["label"])
            if law == "coulomb":
                ax_psi.plot(x, [p["psi_theory"] for p in r], "-", color="0.6", lw=0.8)
                ax_e.plot([p["sin_theta"] for p in r], [p["e_theory"] for p in r], "-", color="0.6", lw=0.8)
        if law == "cundall" and rev27 == rev27:
            ax_psi.axvline(rev27, color="C3", lw=0.8, label=f"reversal end 2/7: {rev27:.2f} (paper 1.6)")
        ax_psi.axhline(0.0, color="0.8", lw=0.6)
        ax_psi.set_title(title, fontsize=10)
        ax_psi.set_xlabel("ψ_i")
        ax_psi.set_ylabel("ψ_f = v_s^f / |v_n^i|")
        ax_psi.legend(fontsize=7, loc="upper left")
        ax_e.set_title(title.replace("Fig. 5", "Fig. 6"), fontsize=10)
        ax_e.set_xlabel("sin ϑ")
        ax_e.set_ylabel("e")
        ax_e.set_xlim(0, 1)
        ax_e.legend(fontsize=7, loc="lower right")
    for ax in (axes[1][3], axes[3][3]):
        ax.axis("off")
    fig.suptitle("Oblique impacts of two acetate spheres, linear normal law e_n = 0.87, μ = 0.25 "
                 "(force schemes Figs. 3-6; grey: Coulomb impulse theory)", fontsize=12)
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    fig.savefig(png, dpi=90)


if __name__ == "__main__":
    main()
