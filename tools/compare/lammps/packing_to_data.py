#!/usr/bin/python3
"""Convert a Moreau reference packing into a LAMMPS data file (atom_style sphere).

Usage: packing_to_data.py PACKING L OUT.data

PACKING: '#' header lines, then 'id x y z radius' per grain
(see /work/shared/packings/README.md). L is the side of the square
container (walls x = 0, L and y = 0, L). The box is [0,L] x [0,L] x [0,zhi]
where zhi is taken from the header line '# box x .. y .. z 0 ZHI' when present,
otherwise 1.5 x the top of the pile. Every grain gets density 1
(so m = pi/6 for d = 1), type 1, zero velocity.

Standard library only; run with /usr/bin/python3.
"""
import math
import re
import sys


def main(argv):
    if len(argv) != 4:
        sys.stderr.write(__doc__)
        return 2
    path, side, out = argv[1], float(argv[2]), argv[3]
    zhi_header = None
    grains = []
    with open(path) as f:
        for line in f:
            s = line.strip()
            if not s:
                continue
            if s.startswith('#'):
                m = re.search(r'\bbox\s+x\s+\S+\s+\S+\s+y\s+\S+\s+\S+\s+z\s+(\S+)\s+(\S+)', s)
                if m:
                    zhi_header = float(m.group(2))
                continue
            cols = s.split()
            if len(cols) < 5:
                raise SystemExit('%s: bad line: %r' % (path, line))
            gid = int(cols[0])
            x, y, z, r = (float(c) for c in cols[1:5])
            grains.append((gid, x, y, z, r))
    if not grains:
        raise SystemExit('%s: no grains' % path)
    top = max(g[3] + g[4] for g in grains)
    zhi = zhi_header if zhi_header is not None and zhi_header > top else 1.5 * top
    for gid, x, y, z, r in grains:
        # small overlaps with a wall are normal in a settled pile; centres outside are not
        if not (0.0 <= x <= side and 0.0 <= y <= side and 0.0 <= z < zhi):
            raise SystemExit('%s: grain %d outside the container (L=%g)' % (path, gid, side))
    with open(out, 'w') as o:
        o.write('LAMMPS data file from %s (L=%g)\n\n' % (path, side))
        o.write('%d atoms\n1 atom types\n\n' % len(grains))
        o.write('0 %r xlo xhi\n0 %r ylo yhi\n0 %r zlo zhi\n\n' % (side, side, zhi))
        o.write('Atoms # sphere\n\n')
        # atom-ID atom-type diameter density x y z
        for gid, x, y, z, r in grains:
            o.write('%d 1 %r 1 %r %r %r\n' % (gid, 2.0 * r, x, y, z))
    sys.stderr.write('packing_to_data: %d grains, box 0..%g x 0..%g x 0..%g, top %.6g, mass(d=1) = %.6f\n'
                     % (len(grains), side, side, zhi, top, math.pi / 6))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
