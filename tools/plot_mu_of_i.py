#!/usr/bin/python3
"""Figure of `moreau experiment mu-of-i`: mu(I) and phi(I) per method, and the
shift of fixed-N_I CD and of MD with the mapped kappa, gamma from converged CD.

Usage: plot_mu_of_i.py mu_of_i.csv out.png
"""
import csv
import sys
from collections import OrderedDict

from plotkit import number, plt, save


def read(path):
    methods = OrderedDict()
    with open(path) as f:
        for row in csv.DictReader(f):
            if row["ran"] != "1":
                continue
            m = methods.setdefault(row["method"], {"I": [], "mu": [], "mu_err": [], "phi": [], "phi_err": []})
            m["I"].append(number(row["inertial_number"]))
            m["mu"].append(number(row["mu"]))
            m["mu_err"].append(number(row["mu_error"]))
            m["phi"].append(number(row["phi"]))
            m["phi_err"].append(number(row["phi_error"]))
    return methods


def style(name):
    """Colour per N_I (CD fixed and its mapped MD share it), per kappa for MD."""
    ni_colours = {"10": "tab:orange", "40": "tab:green", "160": "tab:purple"}
    kappa_colours = ["#f4a582", "#d6604d", "#67001f", "#3b0010"]
    if name == "cd_converged":
        return dict(color="black", marker="o", linestyle="-", label="CD converged")
    if name.startswith("cd_ni"):
        ni = name[5:]
        return dict(color=ni_colours.get(ni, "tab:blue"), marker="s", linestyle="-", label=f"CD $N_I$ = {ni}")
    if name.startswith("md_mapped_ni"):
        ni = name[12:]
        return dict(color=ni_colours.get(ni, "tab:blue"), marker="D", linestyle="--", mfc="white",
                    label=f"MD mapped from $N_I$ = {ni}")
    if name.startswith("md_kappa"):
        k = name[8:]
        order = ["1e3", "1e4", "1e5", "1e6"]
        colour = kappa_colours[order.index(k)] if k in order else "tab:red"
        return dict(color=colour, marker="^", linestyle=":", label=f"MD $\\kappa$ = {k}")
    return dict(color="gray", marker="x", linestyle="-", label=name)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    methods = read(sys.argv[1])
    fig, axes = plt.subplots(2, 2, figsize=(11, 8.5), sharex=True)
    (ax_mu, ax_phi), (ax_dmu, ax_dphi) = axes
    for name, m in methods.items():
        s = style(name)
        kw = dict(color=s["color"], marker=s["marker"], linestyle=s["linestyle"], capsize=2, markersize=5,
                  mfc=s.get("mfc", s["color"]))
        ax_mu.errorbar(m["I"], m["mu"], yerr=m["mu_err"], label=s["label"], **kw)
        ax_phi.errorbar(m["I"], m["phi"], yerr=m["phi_err"], **kw)
    ref = methods.get("cd_converged")
    if ref:
        at = {i: k for k, i in enumerate(ref["I"])}
        for name, m in methods.items():
            if name == "cd_converged" or not (name.startswith("cd_ni") or name.startswith("md_mapped")):
                continue
            s = style(name)
            xs, dmu, dmu_err, dphi, dphi_err = [], [], [], [], []
            for k, i in enumerate(m["I"]):
                if i not in at:
                    continue
                r = at[i]
                xs.append(i)
                dmu.append(m["mu"][k] / ref["mu"][r] - 1.0)
                dmu_err.append(((m["mu_err"][k] / ref["mu"][r]) ** 2 +
                                (m["mu"][k] * ref["mu_err"][r] / ref["mu"][r] ** 2) ** 2) ** 0.5)
                dphi.append(m["phi"][k] / ref["phi"][r] - 1.0)
                dphi_err.append(((m["phi_err"][k] / ref["phi"][r]) ** 2 +
                                 (m["phi"][k] * ref["phi_err"][r] / ref["phi"][r] ** 2) ** 2) ** 0.5)
            kw = dict(color=s["color"], marker=s["marker"], linestyle=s["linestyle"], capsize=2, markersize=5,
                      mfc=s.get("mfc", s["color"]))
            ax_dmu.errorbar(xs, [100 * v for v in dmu], yerr=[100 * v for v in dmu_err], label=s["label"], **kw)
            ax_dphi.errorbar(xs, [100 * v for v in dphi], yerr=[100 * v for v in dphi_err], **kw)
    for ax in (ax_dmu, ax_dphi):
        ax.axhline(0.0, color="black", linewidth=0.8)
    for ax in axes.flat:
        ax.set_xscale("log")
        ax.grid(True, which="both", alpha=0.3)
    ax_mu.set_ylabel(r"$\mu = -\sigma_{xy}/\sigma_{yy}$")
    ax_phi.set_ylabel(r"solid fraction $\phi$")
    ax_dmu.set_ylabel(r"$\mu/\mu_{\rm CD\ converged} - 1$ (%)")
    ax_dphi.set_ylabel(r"$\phi/\phi_{\rm CD\ converged} - 1$ (%)")
    for ax in (ax_dmu, ax_dphi):
        ax.set_xlabel(r"inertial number $I = \dot\gamma d \sqrt{\rho/P}$")
    ax_mu.set_title("(a) friction law")
    ax_phi.set_title("(b) dilatancy law")
    ax_dmu.set_title("(c) fixed $N_I$ and its mapped MD against converged CD")
    ax_dphi.set_title("(d) the same for $\\phi$")
    ax_mu.legend(fontsize=7, ncol=2)
    if ax_dmu.get_legend_handles_labels()[0]:
        ax_dmu.legend(fontsize=7)
    save(fig, sys.argv[2])


if __name__ == "__main__":
    main()
