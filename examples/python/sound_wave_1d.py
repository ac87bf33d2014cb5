#!/usr/bin/python3
"""CD paper §3.3.1, Fig. 7, written against the Python API: a rigid chain
pushed against a wall rings like an elastic, damped rod when the contact
dynamics iteration is cut at N_I sweeps. Build the chain, step it, fit
x(t) = x0 + A exp(-t/tau) sin(omega t + phi) with SciPy and compare with the
theory of eqs. 54-60 and with `moreau experiment sound-wave-1d`.

usage: PYTHONPATH=build/python /usr/bin/python3 examples/python/sound_wave_1d.py [N_I] [--plot FILE]"""
import math
import os
import sys

import numpy as np
from scipy.optimize import least_squares

import moreau

ni = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 40
here = os.path.dirname(os.path.abspath(__file__))
sim = moreau.Simulation(os.path.join(here, "..", "chain_1d.ini"), set={"cd.iterations": ni})

# Theory (eqs. 54, 57, 58, 60): the lowest mode, lambda = 4 L, of a chain whose
# forces diffuse with D = q N_I d^2/dt, q = (4 sqrt(e) - 5)/2 (eq. 46).
n, d, dt = sim.num_grains, 2 * sim.radii[0], sim.dt
q = (4 * math.sqrt(math.e) - 5) / 2
c, D, k = math.sqrt(q * ni) * d / dt, q * ni * d * d / dt, 2 * math.pi / (4 * n * d)
omega_th, tau_th = k * math.sqrt(c * c - D * D * k * k / 4), 2 / (D * k * k)

# Step until the chain has stayed on the wall for 2 tau, then 3 tau more.
wall = sim.walls["left"]["body"]
t, x = [sim.time], [sim.positions[-1, 0]]
settled = None
while settled is None or t[-1] < settled + 5 * tau_th:
    sim.step()
    c = sim.contacts()
    touching = np.abs(c["force"][c["b"] == wall]).sum() > 0
    t.append(sim.time)
    x.append(sim.positions[-1, 0])
    settled = (settled if settled is not None else t[-1]) if touching else None
t, x = np.array(t), np.array(x)
window = (t >= settled + 2 * tau_th) & (t <= settled + 5 * tau_th)
tf, xf = t[window], x[window]


def model(p, t):
    """Eq. 64 about the window's start and mean position (a, b take the phase)."""
    x0, a, b, w, s = p
    u = t - tf[0]
    return xf.mean() + x0 + np.exp(-s * u) * (a * np.sin(w * u) + b * np.cos(w * u))


# Start from the theory's rates; x0, a, b by linear least squares.
u = tf - tf[0]
basis = np.column_stack([np.ones_like(u), np.exp(-u / tau_th) * np.sin(omega_th * u),
                         np.exp(-u / tau_th) * np.cos(omega_th * u)])
lin = np.linalg.lstsq(basis, xf - xf.mean(), rcond=None)[0]
fit = least_squares(lambda p: model(p, tf) - xf, [*lin, omega_th, 1 / tau_th], method="lm",
                    x_scale="jac", xtol=1e-15, ftol=1e-15, gtol=1e-15, max_nfev=20000)
p = fit.x
for _ in range(20):  # Gauss-Newton to the bottom of the valley, which is flat along tau
    x0, a, b, w, s = p
    e, sn, cs = np.exp(-s * u), np.sin(w * u), np.cos(w * u)
    J = np.column_stack([np.ones_like(u), e * sn, e * cs, e * u * (a * cs - b * sn), -u * e * (a * sn + b * cs)])
    step = np.linalg.lstsq(J, xf - model(p, tf), rcond=None)[0]
    p = p + step
omega_fit, tau_fit = p[3], 1 / p[4]
fit.fun = model(p, tf) - xf
r2 = 1 - np.sum(fit.fun ** 2) / np.sum((xf - xf.mean()) ** 2)

rec = moreau.experiment("sound-wave-1d", set={"cd.iterations": ni})["results"]
print(f"N_I = {ni}: omega fit {omega_fit:.10g} (theory {omega_th:.6g}), tau fit {tau_fit:.10g} "
      f"(theory {tau_th:.6g}), R^2 {r2:.6f}")
print(f"against `moreau experiment sound-wave-1d`: omega {omega_fit / rec['omega_fit'] - 1:+.1e}, "
      f"tau {tau_fit / rec['tau_fit'] - 1:+.1e} (relative)")
if "--plot" in sys.argv:
    import matplotlib.pyplot as plt
    plt.plot(t, x, lw=0.8, label="last grain")
    plt.plot(tf, model(fit.x, tf), "--", label=f"fit: omega={omega_fit:.4f}, tau={tau_fit:.1f}")
    plt.xlabel("time (dt)")
    plt.ylabel("x of the last grain (d)")
    plt.legend()
    plt.savefig(sys.argv[sys.argv.index("--plot") + 1], dpi=120)
sys.exit(0 if abs(omega_fit / rec["omega_fit"] - 1) < 1e-10 and abs(tau_fit / rec["tau_fit"] - 1) < 1e-10 else 1)
