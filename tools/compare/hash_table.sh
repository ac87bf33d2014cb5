#!/usr/bin/env bash
# The state_hash of every MD integrator, every normal, tangential and rolling
# law, each pipeline and SIMD width on examples/box_3d.ini with MD (500 steps),
# the examples with both methods, the md-step and cd-sweep benches, and the
# clump and polygon examples with both methods (cd.simd off and auto): one
# "name hash" line each. Two builds' tables must be identical (diff them) when a
# change is meant to keep the bits.
#   tools/compare/hash_table.sh [MOREAU_BINARY] > table.txt
set -euo pipefail
bin=${1:-build/bin/moreau}
here=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
hash_of() { grep -o '"state_hash": *"[0-9a-f]*"' "$1" | head -1 | grep -o '[0-9a-f]\{16\}'; }
run() {  # name, args...
    local name=$1; shift
    if "$bin" run "$@" --out "$tmp/o" --set output.vtk_every=0 >/dev/null 2>"$tmp/err"; then
        echo "$name $(hash_of "$tmp/o/summary.json")"
    else
        echo "$name refused: $(head -c 160 "$tmp/err" | tr '\n' ' ')"
    fi
    rm -rf "$tmp/o"
}
box=("$here/examples/box_3d.ini" --set simulation.method=md --set simulation.steps=500)
for i in $("$bin" list integrators | sed -n 's/^  \([a-z0-9-]*\)  —.*/\1/p'); do
    run "integrator=$i" "${box[@]}" --set md.integrator="$i"
done
for kind in normal tangential rolling; do
    for law in $("$bin" list force-laws | sed -n "s/^  md\.$kind=\([a-z0-9-]*\)  —.*/\1/p"); do
        extra=(); [ "$kind" = rolling ] && extra=(--set md.mu_roll=0.1)
        # Stiffer at their defaults than box_3d's MD step resolves (the guard refuses): softened.
        [ "$law" = luding ] && extra=(--set md.k2_ratio=2)
        [ "$law" = hertz-material ] && extra=(--set md.youngs_modulus=1e5 --set wall.floor.youngs_modulus=2e5)
        run "$kind=$law" "${box[@]}" --set md.$kind="$law" "${extra[@]}"
        run "$kind=$law,staged" "${box[@]}" --set md.$kind="$law" --set md.pipeline=staged "${extra[@]}"
    done
done
# Schemes that evaluate laws with memory from the step start (history mode).
for pair in rk:kuhn babab:walton-braun ab3-am4:pena bababab:saw-tooth pv:mindlin; do
    run "integrator=${pair%%:*},tangential=${pair#*:}" "${box[@]}" --set md.integrator=${pair%%:*} --set md.tangential=${pair#*:}
done
for pair in rk:walton-braun ty3:hertz gpc3:hkk t16:hertz-damped; do
    run "integrator=${pair%%:*},normal=${pair#*:}" "${box[@]}" --set md.integrator=${pair%%:*} --set md.normal=${pair#*:}
done
for p in staged fused; do run "pipeline=$p" "${box[@]}" --set md.pipeline=$p; done
for w in off sse2 avx2 avx512; do run "simd=$w" "${box[@]}" --set md.simd=$w; done
run "mu_static_ratio=1.5" "${box[@]}" --set md.mu_static_ratio=1.5
run "meff=both,en,tn" "${box[@]}" --set md.meff=both --set md.en=0.5 --set md.tn=0.006
for ex in box_3d chain_1d piston_2d; do
    run "$ex,cd" "$here/examples/$ex.ini" --set simulation.method=cd
    run "$ex,md" "$here/examples/$ex.ini" --set simulation.method=md
done
pk=/work/shared/packings/packing_N10000.txt
if [ -f "$pk" ]; then
    "$bin" bench md-step --set bench.packing=$pk > "$tmp/b.json" 2>/dev/null && echo "bench md-step $(hash_of "$tmp/b.json")"
fi
"$bin" bench cd-sweep > "$tmp/b.json" 2>/dev/null && echo "bench cd-sweep $(hash_of "$tmp/b.json")"
# Shapes (clumps, polygons) with both methods, CD with and without the rows' AVX2 kernel (cd.simd).
for ex in clumps_2d clumps_3d polygons_2d; do
    for w in off auto; do
        run "$ex,cd,cd.simd=$w" "$here/examples/$ex.ini" --set simulation.method=cd --set simulation.steps=700 --set cd.simd=$w
    done
    run "$ex,md" "$here/examples/$ex.ini" --set simulation.method=md --set simulation.steps=700
done
