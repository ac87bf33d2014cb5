#!/usr/bin/python3
"""How far the impulses and velocities of one problem move between iterates.

    /usr/bin/python3 tools/compare/drift.py PILE.fc3d R_REF R_1 [R_2 ...]

PILE.fc3d is a text problem `FC3D 1` (triplet W); each R file holds 3 numbers per
contact (`moreau bench fclib --set bench.write_r=FILE`). For each R_k against R_REF
it prints the contacts whose state (open, sticking, sliding) changed, ‖Δr‖/‖r‖ and
‖Δu‖/‖u‖ with u = W r + q. docs/convergence.md uses it on the pyramid's plateau.
"""
import sys

import numpy as np


def read(path):
    tok = []
    for line in open(path):
        tok += line.split("#", 1)[0].split()
    if tok[:2] != ["FC3D", "1"]:
        sys.exit(f"{path}: not an 'FC3D 1' problem")
    nc = int(tok[2])
    mu = np.array(tok[3:3 + nc], float)
    q = np.array(tok[3 + nc:3 + 4 * nc], float)
    p = 3 + 4 * nc
    if tok[p:p + 2] != ["W", "triplet"]:
        sys.exit(f"{path}: W must be stored as triplets")
    t = np.array(tok[p + 3:p + 3 + 3 * int(tok[p + 2])], float).reshape(-1, 3)
    return mu, q, t[:, 0].astype(int), t[:, 1].astype(int), t[:, 2]


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    mu, q, wi, wj, wv = read(sys.argv[1])

    def velocity(r):
        return np.bincount(wi, weights=wv * r[wj], minlength=len(q)) + q

    def state(r):
        rn, rt = r[0::3], np.hypot(r[1::3], r[2::3])
        return np.where(rn <= 1e-12, 0, np.where(rt >= mu * rn * (1 - 1e-9), 2, 1))

    ref = np.loadtxt(sys.argv[2]).ravel()
    uref = velocity(ref)
    print(f"{sys.argv[2]}: open {np.sum(state(ref) == 0)}, sticking {np.sum(state(ref) == 1)}, "
          f"sliding {np.sum(state(ref) == 2)} of {len(mu)}")
    for path in sys.argv[3:]:
        r = np.loadtxt(path).ravel()
        changed = int(np.sum(state(r) != state(ref)))
        dr = np.linalg.norm(r - ref) / np.linalg.norm(ref)
        du = np.linalg.norm(velocity(r) - uref) / np.linalg.norm(uref)
        print(f"{path}: {changed} states changed, |dr|/|r| = {dr:.3g}, |du|/|u| = {du:.3g}")


if __name__ == "__main__":
    main()
