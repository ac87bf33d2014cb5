#!/usr/bin/python3
"""`moreau bench md-step --set bench.shape=clump`: the clump crystal runs with
plenty of component contacts, reports what the cost per contact and the
memory per body are read from, gives the same bits for 1 and 2 threads, and
refuses bad values of the clump keys with exit 2 and one line
(docs/md-performance.md, "Clumps").

usage: check_bench_clumps.py MOREAU_BINARY SOURCE_DIR
"""
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "sim"))
from cli_checks import MOREAU, expect, failures, finish, run  # noqa: E402


def bench(tmp, name, sets, threads=1):
    out = os.path.join(tmp, "bench.json")
    args = ["bench", name, "--threads", str(threads), "--json", out]
    for s in sets:
        args += ["--set", s]
    p = run(*args)
    expect(p.returncode == 0, f"bench {name} {sets}: exit {p.returncode} ({p.stderr.strip()})")
    if p.returncode != 0:
        return {}
    with open(out) as f:
        return json.load(f)["results"]


def bad_input(args, must_mention):
    p = run(*args)
    lines = [l for l in p.stderr.splitlines() if l.strip()]
    expect(p.returncode == 2, f"{args}: exit {p.returncode}, wanted 2 (stderr: {p.stderr.strip()})")
    expect(len(lines) == 1, f"{args}: wanted one line on stderr, got {lines}")
    for word in must_mention:
        expect(word in p.stderr, f"{args}: stderr does not name '{word}': {p.stderr.strip()}")


SMALL = ["bench.particles=300", "bench.warmup=5", "bench.steps=10"]
PER_CONTACT = ["bodies", "component_spheres", "contacts", "contacts_per_body", "contact_updates_per_second",
               "seconds_per_contact", "bytes_per_body", "shape"]

with tempfile.TemporaryDirectory() as tmp:
    # --- the crystal of each built-in cluster: contacts on every body ---
    spheres_per_clump = {"dimer": 2, "trimer": 3, "tetra": 4}
    least_contacts = {"dimer": 1.5, "trimer": 2.0, "tetra": 4.0}  # per body, over the timed steps
    for clump, k in spheres_per_clump.items():
        r = bench(tmp, "md-step", SMALL + ["bench.shape=clump", f"bench.clump={clump}"])
        if not r:
            continue
        for key in PER_CONTACT + ["clump", "lattice_spacing", "state_hash"]:
            expect(key in r, f"md-step {clump}: no '{key}' in results")
        expect(r.get("shape") == "clump" and r.get("clump") == clump, f"md-step {clump}: shape {r.get('shape')} {r.get('clump')}")
        expect(r.get("bodies") == 300 and r.get("particles") == 300, f"md-step {clump}: {r.get('bodies')} bodies")
        expect(r.get("component_spheres") == k * 300, f"md-step {clump}: {r.get('component_spheres')} component spheres")
        expect(r.get("pipeline") == "staged", f"md-step {clump}: pipeline {r.get('pipeline')}")
        cpb = r.get("contacts_per_body", 0)
        expect(cpb >= least_contacts[clump], f"md-step {clump}: {cpb} contacts per body, want >= {least_contacts[clump]}")
        expect(abs(r["contacts"] - cpb * r["bodies"]) <= 1e-9 * r["contacts"], f"md-step {clump}: contacts {r['contacts']}")
        expect(abs(r["seconds_per_contact"] * r["contacts"] * r["steps"] - r["seconds"]) <= 1e-9 * r["seconds"],
               f"md-step {clump}: seconds_per_contact {r['seconds_per_contact']} is not seconds / contact-steps")
        expect(r.get("bytes_per_body", 0) > 0, f"md-step {clump}: bytes_per_body {r.get('bytes_per_body')}")
        expect(all(a >= 1.0 for a in r.get("lattice_spacing", [0])), f"md-step {clump}: spacing {r.get('lattice_spacing')}")

    # --- same seed, same bits, for any thread count; the seed matters ---
    hashes = [bench(tmp, "md-step", SMALL + ["bench.shape=clump"], threads).get("state_hash") for threads in (1, 2)]
    expect(hashes[0] is not None and hashes[0] == hashes[1], f"md-step clump: hashes differ between threads: {hashes}")
    other = bench(tmp, "md-step", SMALL + ["bench.shape=clump", "simulation.seed=7"])
    expect(other.get("state_hash") not in (None, hashes[0]), "md-step clump: another seed gives the same hash")

    # --- bench.clump_spheres: a dimer of touching spheres, scaled to radius 0.5 ---
    r = bench(tmp, "md-step", SMALL + ["bench.shape=clump", "bench.clump_spheres=0 0 0 1; 2 0 0 1"])
    expect(r.get("clump") == "custom", f"clump_spheres: clump {r.get('clump')}")
    expect(r.get("lattice_spacing") == [2.0, 1.0, 1.0], f"clump_spheres: spacing {r.get('lattice_spacing')}")
    expect(r.get("contacts_per_body", 0) >= 1.5, f"clump_spheres: {r.get('contacts_per_body')} contacts per body")

    # --- bench.packing with clumps: rows `x y z size [qw qx qy qz]`, as grains.source = file ---
    packing = os.path.join(tmp, "clumps.txt")
    with open(packing, "w") as f:
        f.write("# x y z size qw qx qy qz\n1.2 1.2 1.2 1\n3.4 1.2 1.2 1 0.7071067811865476 0.7071067811865476 0 0\n")
    r = bench(tmp, "md-step", ["bench.shape=clump", f"bench.packing={packing}", "bench.warmup=2", "bench.steps=2"])
    expect(r.get("bodies") == 2 and r.get("component_spheres") == 8 and r.get("source") == packing,
           f"clump packing: {r.get('bodies')} bodies, {r.get('component_spheres')} spheres, source {r.get('source')}")
    expect(r.get("contacts", 0) >= 2, f"clump packing: {r.get('contacts')} contacts (floor and walls)")

    # --- spheres report the same keys; detect takes clumps ---
    r = bench(tmp, "md-step", SMALL)
    for key in PER_CONTACT:
        expect(key in r, f"md-step sphere: no '{key}' in results")
    expect(r.get("shape") == "sphere" and r.get("component_spheres") == 300, f"md-step sphere: {r.get('shape')}")
    expect("clump" not in r, "md-step sphere: reports a clump")
    r = bench(tmp, "detect", ["bench.particles=300", "bench.repeats=2", "bench.shape=clump"])
    expect(r.get("candidates", 0) >= 300, f"detect clump: {r.get('candidates')} candidates")

    # --- cd-sweep takes clumps: component contacts swept, the same bits for 1 and 2 threads ---
    CD_SMALL = ["bench.particles=300", "bench.steps=3", "bench.sweeps=10"]
    cd = [bench(tmp, "cd-sweep", CD_SMALL + ["bench.shape=clump"], threads) for threads in (1, 2)]
    r = cd[0]
    for key in ["shape", "clump", "bodies", "component_spheres", "contacts", "contacts_per_body",
                "contact_updates_per_second", "state_hash"]:
        expect(key in r, f"cd-sweep clump: no '{key}' in results")
    expect(r.get("shape") == "clump" and r.get("clump") == "tetra" and r.get("component_spheres") == 1200,
           f"cd-sweep clump: {r.get('shape')} {r.get('clump')} {r.get('component_spheres')} spheres")
    expect(r.get("contacts_per_body", 0) >= 4.0, f"cd-sweep clump: {r.get('contacts_per_body')} contacts per body")
    expect(r.get("sweeps") == 30, f"cd-sweep clump: {r.get('sweeps')} sweeps")
    expect(r.get("state_hash") is not None and r.get("state_hash") == cd[1].get("state_hash"),
           f"cd-sweep clump: hashes differ between threads: {r.get('state_hash')} {cd[1].get('state_hash')}")
    r = bench(tmp, "cd-sweep", CD_SMALL)
    expect(r.get("shape") == "sphere" and "clump" not in r, f"cd-sweep sphere: shape {r.get('shape')}")

    # --- bad input: exit 2, one line naming the key and what is allowed ---
    bad_input(["bench", "md-step", "--set", "bench.shape=cube"], ["bench.shape", "sphere|clump"])
    bad_input(["bench", "md-step", "--set", "bench.shape=clump", "--set", "bench.clump=cube"],
              ["bench.clump", "dimer|trimer|tetra"])
    bad_input(["bench", "md-step", "--set", "bench.clump=dimer"], ["bench.clump", "bench.shape"])
    bad_input(["bench", "md-step", "--set", "bench.clump_spheres=0 0 0 1"], ["bench.clump_spheres", "bench.shape"])
    bad_input(["bench", "md-step", "--set", "bench.shape=clump", "--set", "bench.clump_spheres=0 0 0 -1"],
              ["bench.clump_spheres", "radius > 0"])
    bad_input(["bench", "md-step", "--set", "bench.shape=clump", "--set", "bench.clump_spheres=0 0 1"],
              ["bench.clump_spheres", "x y z r"])
    bad_input(["bench", "md-step", "--set", "bench.shape=clump", "--set", "bench.decomposed=true"],
              ["bench.shape", "bench.decomposed"])

finish("bench clumps: all checks passed")
