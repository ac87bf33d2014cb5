#!/usr/bin/python3
"""Writes the seed corpus of fuzz_fclib (fuzz/corpus/fclib/seed_*): FCLIB local
problems in the harness's byte layout (tests/support/fclib_file.hpp,
decodeFclibFields), consistent ones in the three storages of W and the
hostile ones of issue 38 (indices, pointers and lengths out of range).

usage: make_fclib_seeds.py OUTPUT_DIR
"""
import os
import struct
import sys

BITS = ["spacedim", "m", "n", "nz", "nzmax", "p", "i", "x", "q", "mu", "r", "title",
        "equalities", "reals", "wide", "global"]


def seed(spacedim=3, m=None, n=None, nz=None, nzmax=None, p=None, i=None, x=None, q=None, mu=None,
         r=None, title=None, equalities=False, reals=False, wide=False, glob=False):
    fields = dict(spacedim=spacedim, m=m, n=n, nz=nz, nzmax=nzmax, p=p, i=i, x=x, q=q, mu=mu, r=r,
                  title=title, equalities=equalities or None, reals=reals or None, wide=wide or None,
                  **{"global": glob or None})
    mask = sum(1 << b for b, name in enumerate(BITS) if fields[name] not in (None, False))
    out = struct.pack("<H", mask)
    out += struct.pack("<5i", *[fields[k] if fields[k] is not None else 0
                                for k in ("spacedim", "m", "n", "nz", "nzmax")])
    arrays = [p or [], i or [], x or [], q or [], mu or [], r or []]
    out += bytes(len(a) for a in arrays)
    out += struct.pack(f"<{len(arrays[0])}i", *arrays[0]) + struct.pack(f"<{len(arrays[1])}i", *arrays[1])
    for a in arrays[2:]:
        out += struct.pack(f"<{len(a)}d", *a)
    if title is not None:
        out += title.encode()
    return out


def diagonal(contacts, compressed=False, solution=False, **over):
    n = 3 * contacts
    f = dict(m=n, n=n, nzmax=n, x=[2.0] * n, i=list(range(n)), q=[-1.0 if k % 3 == 0 else 0.0 for k in range(n)],
             mu=[0.5] * contacts)
    if compressed:
        f.update(nz=-1, p=list(range(n + 1)))
    else:
        f.update(nz=n, p=list(range(n)))
    if solution:
        f["r"] = [0.5 if k % 3 == 0 else 0.0 for k in range(n)]
    f.update(over)
    return seed(**f)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    seeds = {
        "triplets": diagonal(2, solution=True, title="two contacts"),
        "csc": diagonal(2, compressed=True),
        "csr_offdiagonal": diagonal(2, nz=-2, nzmax=7, p=[0, 2, 3, 4, 5, 6, 7], i=[0, 3, 1, 2, 3, 4, 5],
                                    x=[2, 0.5, 2, 2, 2, 2, 2]),
        "row_out_of_range": diagonal(2, p=[0, 1, 2, 3, 4, 3000000]),
        "negative_index": diagonal(2, i=[0, -7, 2, 3, 4, 5]),
        "pointer_past_nzmax": diagonal(2, compressed=True, p=[0, 1, 2, 3, 4, 5, 99]),
        "pointer_decreasing": diagonal(2, compressed=True, p=[0, 1, 2, 1, 4, 5, 6]),
        "x_short": diagonal(2, x=[2.0] * 3),
        "mu_short": diagonal(2, mu=[0.5]),
        "q_missing": diagonal(2, q=None),
        "indices_as_reals": diagonal(2, reals=True),
        "wide_indices": diagonal(2, wide=True),
        "global": diagonal(2, glob=True),
        "equalities": diagonal(2, equalities=True),
        "nz_unknown": diagonal(2, nz=-3),
        "huge_m": diagonal(2, m=2147483646, n=2147483646),
        "solution_short": diagonal(2, r=[0.5, 0.0]),
        "empty": seed(m=0, n=0, nz=0, nzmax=0, p=[], i=[], x=[], q=[], mu=[]),
    }
    for name, data in seeds.items():
        with open(os.path.join(out, "seed_" + name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
