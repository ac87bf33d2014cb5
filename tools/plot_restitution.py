#!/usr/bin/python3
"""Figure 2 of the force-schemes paper: coefficient of normal restitution e_n
against the impact velocity for the linear spring-dashpot (eq. 2), Hertz with
linear damping (eq. 8), Hertz-Kuwabara-Kono (eq. 9) and Walton-Braun (eq. 10),
with eq. 3 and the Walton-Braun closed form as lines.

usage: plot_restitution.py CSV PNG
"""
import sys

import numpy as np

from plotkit import finish, plt, save


def main():
    csv, png = sys.argv[1], sys.argv[2]
    d = np.genfromtxt(csv, delimiter=",", names=True)
    v = d["velocity"]
    fig, ax = plt.subplots(figsize=(7, 4.6))
    ax.plot(v, d["e_linear"], "o", mfc="none", color="k", label="linear spring-dashpot (2)")
    ax.plot(v, d["e_hertz_damped"], "s", mfc="none", color="C0", label="Hertz, linear damping (8)")
    ax.plot(v, d["e_hkk"], "D", mfc="none", color="C3", label="Hertz-Kuwabara-Kono (9)")
    ax.plot(v, d["e_walton_braun"], "^", mfc="none", color="C2", label="Walton-Braun (10)")
    ax.plot(v, d["e_linear_theory"], ":", color="k", lw=1, label="eq. (3)")
    ax.plot(v, d["e_walton_braun_theory"], "--", color="C2", lw=1,
            label=r"$(s v \sqrt{m_{eff}/k_1}+1)^{-1/2}$")
    ax.axvspan(0.29, 1.2, color="0.9", zorder=0, label="Foerster et al.: e_n = 0.87")
    ax.set_ylim(0, 1.05)
    finish(ax, "Cellulose-acetate spheres, R = 3 mm (cf. force schemes Fig. 2)", r"impact velocity $v_n^i$ (m/s)",
           r"coefficient of normal restitution $e_n$", log="x", fontsize=8, loc="lower left")
    save(fig, png)


if __name__ == "__main__":
    main()
