#!/bin/bash
# LAMMPS side of the md-step benchmark (see tools/compare/README.md).
#
#   tools/compare/lammps/run.sh PACKING L [NPROCS]
#
#   PACKING  reference packing, e.g. /work/shared/packings/packing_N10000.txt
#   L        container side (20 for N10000, 40 for N50000)
#   NPROCS   MPI ranks (default 1; >1 runs mpirun --allow-run-as-root -np NPROCS)
#
# Converts the packing to a LAMMPS data file, runs md_step.in (1000 untimed warm-up steps,
# 2000 timed steps) in a temporary directory and prints one JSON line on stdout:
#   {"code":"lammps","particles":N,"procs":P,"steps":2000,"seconds":X,
#    "particle_steps_per_second":N*2000/X,"contacts_per_particle":...,...}
# where X is LAMMPS's "Loop time" of the timed run. Contact counts are taken after the timed
# run, grain-grain only unless named otherwise:
#   contacts_per_particle      = contacts / N      (each contact once; = sum(contact/atom) / 2N)
#   coordination_number        = 2 contacts / N    (= sum(contact/atom) / N; the "Z_pp" of the
#                                                   packing headers and the README's 4.4/4.5)
#   wall_contacts_per_particle = grain-wall contacts / N
# Environment: LMP = LAMMPS executable (default: first of lmp, lmp_serial, lammps on PATH);
#              SKIN = neighbor skin (default 0.1, the protocol's);
#              MPIRUN_FLAGS = extra mpirun flags (e.g. --oversubscribe);
#              KEEP=1 keeps the temporary directory (its path goes to stderr).
# Also reported: cpu_use_percent (LAMMPS's "% CPU use" of the timed run; well below 100 means
# the run shared its cores) and loadavg_1min_before, to judge noise on a shared machine.
set -euo pipefail

if [ $# -lt 2 ] || [ $# -gt 3 ]; then
    sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
fi
packing=$(readlink -f "$1")
side=$2
nprocs=${3:-1}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
py=/usr/bin/python3

[ -r "$packing" ] || { echo "run.sh: cannot read $1" >&2; exit 2; }
case $nprocs in ''|*[!0-9]*|0) echo "run.sh: NPROCS must be a positive integer" >&2; exit 2;; esac

lmp=${LMP:-}
if [ -z "$lmp" ]; then
    for c in lmp lmp_serial lammps; do
        if command -v "$c" >/dev/null 2>&1; then lmp=$(command -v "$c"); break; fi
    done
fi
[ -n "$lmp" ] || { echo "run.sh: no LAMMPS executable (apt-get install -y lammps)" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/moreau-lammps.XXXXXX")
if [ "${KEEP:-0}" = 1 ]; then
    echo "run.sh: keeping $tmp" >&2
else
    trap 'rm -rf "$tmp"' EXIT
fi

"$py" "$here/packing_to_data.py" "$packing" "$side" "$tmp/packing.data" 2>"$tmp/convert.err" \
    || { cat "$tmp/convert.err" >&2; exit 1; }

cmd=("$lmp" -in "$here/md_step.in" -var data packing.data -var L "$side" -var skin "${SKIN:-0.1}" -log log.lammps -nocite)
if [ "$nprocs" -gt 1 ]; then
    command -v mpirun >/dev/null 2>&1 || { echo "run.sh: mpirun not found (apt-get install -y openmpi-bin)" >&2; exit 1; }
    read -r -a extra <<< "${MPIRUN_FLAGS:-}"
    cmd=(mpirun --allow-run-as-root -np "$nprocs" "${extra[@]}" "${cmd[@]}")
fi

load=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo null)
if ! (cd "$tmp" && "${cmd[@]}" >stdout.txt 2>&1); then
    echo "run.sh: LAMMPS failed: ${cmd[*]}" >&2
    tail -n 30 "$tmp/stdout.txt" >&2
    exit 1
fi

"$py" - "$tmp/log.lammps" "$load" <<'PYEOF'
import json, re, sys
log, load = sys.argv[1], sys.argv[2]
text = open(log).read()
loops = re.findall(r'^Loop time of (\S+) on (\d+) procs for (\d+) steps with (\d+) atoms', text, re.M)
if len(loops) < 2 or int(loops[1][2]) != 2000:
    sys.exit('run.sh: no "Loop time ... for 2000 steps" line for the second run in %s' % log)
seconds, procs, steps, n = float(loops[1][0]), int(loops[1][1]), int(loops[1][2]), int(loops[1][3])
out = {"code": "lammps", "particles": n, "procs": procs, "steps": steps, "seconds": seconds,
       "particle_steps_per_second": n * steps / seconds}
# "NN% CPU use with P MPI tasks": below ~99% means the timed run was sharing its cores
cpu = re.findall(r'^(\S+)% CPU use with', text, re.M)
if len(cpu) >= 2:
    out["cpu_use_percent"] = float(cpu[1])
m = re.search(r'^\s*Step\s+Atoms\s+KinEng\s+c_nc\s+c_nw\s*\n\s*(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)', text, re.M)
if m:
    nc, nw = float(m.group(4)), float(m.group(5))
    out["contacts_per_particle"] = nc / (2 * n)      # grain-grain contacts, each counted once
    out["coordination_number"] = nc / n              # sum of compute contact/atom over grains / N
    out["wall_contacts_per_particle"] = nw / n
v = re.search(r'^LAMMPS \((.*)\)', text, re.M)
if v:
    out["lammps_version"] = v.group(1)
try:
    out["loadavg_1min_before"] = float(load)
except ValueError:
    pass
print(json.dumps(out, separators=(',', ':')))
PYEOF
