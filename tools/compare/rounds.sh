#!/bin/bash
# Moreau against LAMMPS on the md-step protocol, back to back, in alternating rounds.
#
#   tools/compare/rounds.sh PACKING L [ROUNDS] [THREADS...]
#
#   PACKING  reference packing, e.g. /work/shared/packings/packing_N10000.txt
#   L        container side (20 for N10000, 40 for N50000)
#   ROUNDS   rounds (default 4)
#   THREADS  core counts to compare (default: 1 2): LAMMPS with that many MPI
#            ranks, Moreau with that many OpenMP threads
#
# Each round runs, for each core count, LAMMPS (lammps/run.sh) and then Moreau
# (`moreau bench md-step --set bench.packing=PACKING --threads T`), so every
# Moreau run has a LAMMPS run of the same minute beside it. On a shared machine
# whose speed drifts, only such pairs compare. Prints a Markdown table of
# particle-steps per second with the pairwise ratios, then the medians, and
# checks that every Moreau run ended in the same state_hash. Each row also
# shows both codes' CPU use per core over the timed steps (LAMMPS's "% CPU
# use", Moreau's cpu_use_percent) and the ratio of their throughputs per CPU
# second: a run that lost time to the machine's neighbours shows it there.
# The table is headed by the CPU (lscpu's model name, and its widest vector
# unit), since the ratio depends on it (docs/md-performance.md, per CPU).
# Environment: MOREAU = moreau executable (default build/bin/moreau);
#              MOREAU_SET = extra Moreau settings, space-separated (e.g.
#              "md.simd=avx2" to run the 4-lane kernel on an AVX-512 CPU);
#              LMP, MPIRUN_FLAGS as for lammps/run.sh.
set -euo pipefail

if [ $# -lt 2 ]; then
    sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
fi
packing=$1
side=$2
rounds=${3:-4}
shift $(($# < 3 ? $# : 3))
threads=("$@")
[ ${#threads[@]} -gt 0 ] || threads=(1 2)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
moreau=${MOREAU:-$here/../../build/bin/moreau}
py=/usr/bin/python3

[ -r "$packing" ] || { echo "rounds.sh: cannot read $packing" >&2; exit 2; }
[ -x "$moreau" ] || { echo "rounds.sh: no moreau executable at $moreau (build first, or set MOREAU)" >&2; exit 2; }
case $rounds in ''|*[!0-9]*|0) echo "rounds.sh: ROUNDS must be a positive integer" >&2; exit 2;; esac
for t in "${threads[@]}"; do
    case $t in ''|*[!0-9]*|0) echo "rounds.sh: THREADS must be positive integers" >&2; exit 2;; esac
done

sets=()
for kv in ${MOREAU_SET:-}; do sets+=(--set "$kv"); done
model=$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1)
flags=$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null || true)
case $flags in *avx512f*) widest=AVX-512;; *avx2*) widest=AVX2;; *) widest=SSE2;; esac
echo "CPU: ${model:-unknown}, widest vector unit $widest; Moreau settings: ${MOREAU_SET:-defaults}"
results=$(mktemp "${TMPDIR:-/tmp}/moreau-rounds.XXXXXX")
trap 'rm -f "$results"' EXIT
for r in $(seq "$rounds"); do
    for t in "${threads[@]}"; do
        lammps=$("$here/lammps/run.sh" "$packing" "$side" "$t")
        ours=$("$moreau" bench md-step --set "bench.packing=$packing" "${sets[@]}" --threads "$t")
        printf '%s\t%s\t%s\t%s\n' "$r" "$t" "$lammps" "$(echo "$ours" | tr -d '\n')" >> "$results"
        echo "rounds.sh: round $r, $t core(s) done" >&2
    done
done

"$py" - "$results" <<'PY'
import json, statistics, sys
rows = []
for line in open(sys.argv[1]):
    r, t, lammps, ours = line.rstrip("\n").split("\t")
    rows.append((int(r), int(t), json.loads(lammps), json.loads(ours)["results"]))
threads = sorted({t for _, t, _, _ in rows})
print("| round | cores | LAMMPS | Moreau | Moreau / LAMMPS | CPU use LAMMPS / Moreau | ratio per CPU second |")
print("|---|---|---|---|---|---|---|")
ratio, speed, perCpu = {t: [] for t in threads}, {t: {} for t in threads}, {t: [] for t in threads}
def pct(x):
    return "?" if x is None else f"{x:.0f}%"
for r, t, l, m in rows:
    lp, mp = l["particle_steps_per_second"], m["particle_steps_per_second"]
    ratio[t].append(mp / lp)
    speed[t][r] = mp
    # Throughput per CPU second of each code (wall rate / CPU use per core):
    # what a run would have done on cores it had to itself, when the noise
    # was time taken away (steal, other processes) rather than slower caches.
    lc, mc = l.get("cpu_use_percent"), m.get("cpu_use_percent")
    cell = "?"
    if lc and mc:
        q = (mp / mc) / (lp / lc)
        perCpu[t].append(q)
        cell = f"{q:.2f}"
    print(f"| {r} | {t} | {lp:.3g} | {mp:.3g} | {mp / lp:.2f} | {pct(lc)} / {pct(mc)} | {cell} |")
print()
for t in threads:
    print(f"- {t} core(s): Moreau / LAMMPS median {statistics.median(ratio[t]):.2f} "
          f"(range {min(ratio[t]):.2f}-{max(ratio[t]):.2f})")
    if perCpu[t]:
        print(f"  per CPU second: median {statistics.median(perCpu[t]):.2f} "
              f"(range {min(perCpu[t]):.2f}-{max(perCpu[t]):.2f})")
if 1 in threads:
    for t in threads:
        if t == 1:
            continue
        s = [speed[t][r] / speed[1][r] for r in speed[1] if r in speed[t]]
        print(f"- Moreau {t} threads / 1 thread, pairwise: median {statistics.median(s):.2f} "
              f"(range {min(s):.2f}-{max(s):.2f})")
hashes = {m["state_hash"] for _, _, _, m in rows}
simd = sorted({m.get("simd", "?") for _, _, _, m in rows})
print(f"- Moreau state_hash: {', '.join(sorted(hashes))}; kernel: {', '.join(simd)}")
if len(hashes) != 1:
    print("rounds.sh: Moreau runs ended in different states", file=sys.stderr)
    sys.exit(1)
PY
