#!/usr/bin/python3
"""md.normal = hertz-material against LAMMPS `pair granular hertz/material ... damping tsuji`.

    PYTHONPATH=build/python /usr/bin/python3 tools/compare/lammps/hertz_material.py [--lmp lmp] [--keep DIR]

Runs the same collisions in both codes -- two spheres head-on and oblique, a
sphere on a plane wall head-on and oblique -- and prints, per case, the
largest difference over the steps of the force on a sphere, its velocity and
its angular velocity, each relative to the largest magnitude of that history
in LAMMPS, and the restitution both give. Exits 1 when a head-on force
history differs by more than 1e-6.

What the script maps (docs/md-force-laws.md, "Hertz from material constants"):
- Tsuji's damping: Moreau's md.tsuji_en = e gives eta = alpha(e) sqrt(2 m_eff k_n),
  which restitutes e; LAMMPS's e_L gives alpha(e_L) sqrt(m_eff k_n). LAMMPS is
  given the e_L with alpha(e_L) = sqrt(2) alpha(e).
- The wall: LAMMPS 20220106's fix wall/gran takes k = 4/3 E/(2 (1 - nu)) for a
  wall of the particles' material, where Johnson's 1/E* = (1 - nu^2)/E + (1 -
  nu^2)/E would give E/(2 (1 - nu^2)); Moreau's wall is given
  wall.floor.youngs_modulus = E (1 + nu)/(1 - nu), which makes E* the same.
- The tangential force: Moreau's Cundall-Strack spring (md.tangential = spring,
  md.gamma_t = 0) against LAMMPS's linear_history k_t 0 mu (no tangential damping).
- Velocities: Moreau's leapfrog keeps v at half steps; the full-step velocity
  LAMMPS dumps is the mean of two consecutive half steps.
Stdlib and numpy only (Debian's /usr/bin/python3), and the moreau module.
"""
import argparse
import math
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

import moreau

E, NU, E_REST, RHO, R = 1e8, 0.3, 0.5, 2500.0, 0.005
KT, MU = 2e5, 0.3
MASS = RHO * 4.0 / 3.0 * math.pi * R**3


def alpha(e):
    return 1.2728 - 4.2783 * e + 11.087 * e**2 - 22.348 * e**3 + 27.467 * e**4 - 18.022 * e**5 + 4.8218 * e**6


def lammps_restitution(e):
    """The e_L LAMMPS needs for Moreau's damping: alpha(e_L) = sqrt(2) alpha(e) (alpha falls with e)."""
    target, lo, hi = math.sqrt(2.0) * alpha(e), 0.0, 1.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if alpha(mid) > target else (lo, mid)
    return 0.5 * (lo + hi)


def contact_time(meff, kTilde, v):
    return 3.21 * (meff / kTilde) ** 0.4 * v**-0.2


CASES = {
    # name: (wall, velocity of sphere 1 (the moving one), tangential)
    "pair head-on": (False, (-1.0, 0.0, 0.0), False),
    "pair oblique": (False, (-1.0, 0.6, 0.0), True),
    "wall head-on": (True, (0.0, 0.0, -1.0), False),
    "wall oblique": (True, (0.6, 0.0, -1.0), True),
}


def setup(wall):
    """Centres: a pair along x (sphere 1 moving, sphere 0 at rest), or one sphere above the plane z = 0."""
    gap = 2e-5
    if wall:
        return [(0.0, 0.0, R + gap)]
    return [(0.0, 0.0, 0.0), (2 * R + gap, 0.0, 0.0)]


def steps_and_dt(wall, speed):
    meff = MASS if wall else 0.5 * MASS
    eStar = E / (2 * (1 - NU)) if wall else E / (2 * (1 - NU * NU))
    k = 4.0 / 3.0 * eStar * math.sqrt(R if wall else 0.5 * R)
    dt = contact_time(meff, k, speed) / 1000.0
    return int(1800 + 2e-5 / (speed * dt)), dt


def run_lammps(lmp, tmp, name, wall, vel, tangential):
    centres = setup(wall)
    speed = math.sqrt(sum(c * c for c in vel))
    steps, dt = steps_and_dt(wall, speed)
    eL = lammps_restitution(E_REST)
    tang = f"tangential linear_history {KT} 0.0 {MU}" if tangential else f"tangential linear_nohistory 0.0 0.0"
    lines = [
        "units si", "atom_style sphere", "dimension 3", "boundary f f f", "newton off",
        "comm_modify vel yes",
        "region box block -0.05 0.05 -0.05 0.05 -0.05 0.05 units box", "create_box 1 box",
    ]
    for c in centres:
        lines.append(f"create_atoms 1 single {c[0]!r} {c[1]!r} {c[2]!r} units box")
    lines += [f"set type 1 diameter {2 * R!r}", f"set type 1 density {RHO!r}"]
    moving = len(centres)  # the last atom moves
    lines.append(f"velocity all set 0 0 0 units box")
    lines.append(f"group mover id {moving}")
    lines.append(f"velocity mover set {vel[0]!r} {vel[1]!r} {vel[2]!r} units box")
    lines.append(f"pair_style granular")
    lines.append(f"pair_coeff * * hertz/material {E!r} {eL!r} {NU!r} {tang} damping tsuji")
    if wall:
        lines.append(f"fix floor all wall/gran granular hertz/material {E!r} {eL!r} {NU!r} {tang} "
                     f"damping tsuji zplane 0.0 NULL")
    lines += [
        "neighbor 0.002 bin", "neigh_modify every 1 delay 0 check yes",
        "fix integrate all nve/sphere", f"timestep {dt!r}",
        "dump d all custom 1 dump.txt id x y z vx vy vz fx fy fz omegax omegay omegaz",
        "dump_modify d sort id format float %.17g",
        f"run {steps}",
    ]
    case_dir = os.path.join(tmp, name.replace(" ", "_"))
    os.makedirs(case_dir)
    with open(os.path.join(case_dir, "in.lmp"), "w") as f:
        f.write("\n".join(lines) + "\n")
    subprocess.run([lmp, "-in", "in.lmp", "-log", "log.lammps", "-nocite", "-screen", "none"], cwd=case_dir, check=True)
    # Per step: rows of the moving atom (id = moving).
    frames, rows, reading, count = [], [], False, 0
    with open(os.path.join(case_dir, "dump.txt")) as f:
        for line in f:
            if line.startswith("ITEM: ATOMS"):
                reading, rows = True, []
                continue
            if line.startswith("ITEM:"):
                if reading and rows:
                    frames.append(rows)
                reading = False
                continue
            if reading:
                rows.append([float(t) for t in line.split()])
        if reading and rows:
            frames.append(rows)
    data = np.array([[r for r in fr if int(r[0]) == moving][0][1:] for fr in frames])
    return data, steps, dt  # columns: x y z vx vy vz fx fy fz wx wy wz, frames 0..steps


def run_moreau(tmp, name, wall, vel, tangential):
    centres = setup(wall)
    speed = math.sqrt(sum(c * c for c in vel))
    steps, dt = steps_and_dt(wall, speed)
    packing = os.path.join(tmp, name.replace(" ", "_") + ".txt")
    with open(packing, "w") as f:
        for c in centres:
            f.write(f"{c[0]!r} {c[1]!r} {c[2]!r} {R!r}\n")
    scene = {
        "simulation.method": "md", "simulation.dimension": 3, "simulation.dt": dt, "simulation.steps": steps,
        "simulation.gravity": (0, 0, 0), "grains.source": "file", "packing.file": packing,
        "grains.density": RHO, "grains.inertia": "sphere", "contact.mu": MU, "contact.margin": 0.4,
        "md.normal": "hertz-material", "md.youngs_modulus": E, "md.poisson_ratio": NU, "md.tsuji_en": E_REST,
        "md.tangential": "spring" if tangential else "none", "md.kt": KT, "md.gamma_t": 0.0,
        "md.clip_attractive": False, "md.pipeline": "staged", "output.every": 0,
    }
    if wall:
        scene.update({"wall.floor.type": "plane", "wall.floor.point": (0, 0, 0), "wall.floor.normal": (0, 0, 1),
                      "wall.floor.youngs_modulus": E * (1 + NU) / (1 - NU)})
    sim = moreau.Simulation(scene, threads=1)
    v = np.zeros((len(centres), 3))
    v[-1] = vel
    sim.set_velocities(v)
    i = len(centres) - 1
    x, vh, w, f = [], [], [], []
    for _ in range(steps):
        x.append(np.array(sim.positions[i]))
        vh.append(np.array(sim.velocities[i]))
        w.append(np.array(sim.angular_velocities[i]))
        sim.step()
        c = sim.contacts()
        force = np.zeros(3)
        for k in range(len(c["a"])):
            if c["b"][k] == i:
                force += c["force"][k]
            elif c["a"][k] == i:
                force -= c["force"][k]
        f.append(force)  # the force at x[-1] (this step's positions before the drift)
    vh.append(np.array(sim.velocities[i]))
    x, vh, w, f = map(np.array, (x, vh, w, f))
    vFull = 0.5 * (vh[:-1] + vh[1:])  # v_n = (v_{n-1/2} + v_{n+1/2})/2
    return x, vFull, w, f, vh[-1], steps


def rel(a, b):
    scale = np.max(np.linalg.norm(b, axis=1))
    return float(np.max(np.linalg.norm(a - b, axis=1)) / scale) if scale > 0 else float(np.max(np.abs(a - b)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lmp", default=shutil.which("lmp") or "lmp")
    ap.add_argument("--keep", default=None, help="keep LAMMPS's folders here")
    args = ap.parse_args()
    tmp = args.keep or tempfile.mkdtemp(prefix="moreau-hertz-material.")
    os.makedirs(tmp, exist_ok=True)
    print(f"E = {E:g} Pa, nu = {NU}, e = {E_REST} (LAMMPS e_L = {lammps_restitution(E_REST):.6f}), "
          f"rho = {RHO:g}, R = {R:g} m, k_t = {KT:g}, mu = {MU}")
    print(f"{'case':14s} {'steps':>6s} {'force':>10s} {'velocity':>10s} {'ang. vel.':>10s} {'e moreau':>9s} {'e lammps':>9s}")
    worst_head_on = 0.0
    try:
        for name, (wall, vel, tangential) in CASES.items():
            L, steps, dt = run_lammps(args.lmp, tmp, name, wall, vel, tangential)
            x, v, w, f, vEnd, _ = run_moreau(tmp, name, wall, vel, tangential)
            # LAMMPS frame n: x_n, v_n, f(x_n), w_n; Moreau's lists start at step 0.
            dx = rel(x, L[:steps, 0:3])
            df = rel(f, L[:steps, 6:9])
            dv = rel(v, L[:steps, 3:6])
            dw = rel(w[1:], L[1:steps, 9:12]) if np.max(np.abs(L[:, 9:12])) > 0 else 0.0
            # The restitution along the normal: a sphere on the wall, e = -v'/v; the
            # moving one of an equal pair (the other at rest), v' = v (1 - e)/2.
            axis = 2 if wall else 0
            restitution = (lambda u: -u / vel[axis]) if wall else (lambda u: 1.0 - 2.0 * u / vel[axis])
            e_m = restitution(vEnd[axis])
            e_l = restitution(L[-1, 3 + axis])
            print(f"{name:14s} {steps:6d} {df:10.2e} {dv:10.2e} {dw:10.2e} {e_m:9.6f} {e_l:9.6f}   (positions {dx:.1e})")
            if "head-on" in name:
                worst_head_on = max(worst_head_on, df)
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    return 1 if worst_head_on > 1e-6 else 0


if __name__ == "__main__":
    sys.exit(main())
