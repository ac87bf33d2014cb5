#!/usr/bin/python3
"""The command line contract of INTERFACE.md, end to end through the built
program: exit statuses and one-line errors for bad input (nothing written),
same seed -> same bits for any thread count, JSON shapes of experiments and
benches.

usage: check_cli.py MOREAU_BINARY SOURCE_DIR
"""
import json
import os
import subprocess
import sys
import tempfile
import time

MOREAU, SRC = sys.argv[1], sys.argv[2]
failures = []


def run(*args, env=None):
    e = dict(os.environ)
    if env:
        e.update(env)
    return subprocess.run([MOREAU, *args], capture_output=True, text=True, env=e, timeout=600)


def expect(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)


def bad_input(args, must_mention, tmp):
    out = os.path.join(tmp, "bad_out")
    p = run(*args, "--out", out, "--quiet") if args[0] in ("run", "experiment") else run(*args)
    lines = [l for l in p.stderr.splitlines() if l.strip()]
    expect(p.returncode == 2, f"{args}: exit {p.returncode}, wanted 2 (stderr: {p.stderr.strip()})")
    expect(len(lines) == 1, f"{args}: wanted one line on stderr, got {lines}")
    for word in must_mention:
        expect(word in p.stderr, f"{args}: stderr does not name '{word}': {p.stderr.strip()}")
    expect(not os.path.exists(out), f"{args}: bad input left {out} behind")


with tempfile.TemporaryDirectory() as tmp:
    chain = os.path.join(SRC, "examples", "chain_1d.ini")
    box = os.path.join(SRC, "examples", "box_3d.ini")

    # --- bad input: status 2, one line naming file/key and what is allowed ---
    bad_input(["run", chain, "--set", "cd.iteratons=5"], ["cd.iteratons", "cd.iterations"], tmp)
    bad_input(["run", chain, "--set", "cd.iterations=abc"], ["cd.iterations", "abc"], tmp)
    bad_input(["run", chain, "--set", "cd.iterations=0"], ["cd.iterations", ">= 1"], tmp)
    bad_input(["run", chain, "--set", "cd.order=spiral"], ["cd.order", "random-sweep"], tmp)
    bad_input(["run", chain, "--set", "nonsense"], ["nonsense"], tmp)
    bad_input(["run", os.path.join(tmp, "missing.ini")], ["missing.ini"], tmp)
    bad_input(["run", chain, "--bogus-option"], ["bogus"], tmp)
    bad_input(["experiment", "no-such-experiment"], ["no-such-experiment", "sound-wave-1d"], tmp)
    bad_input(["bench", "cd-sweep", "--set", "bench.particles=-3"], ["bench.particles"], tmp)
    bad_input(["list", "colours"], ["colours"], tmp)
    broken = os.path.join(tmp, "broken.ini")
    with open(broken, "w") as f:
        f.write("[simulation]\ndt = -1\n")
    bad_input(["run", broken], ["broken.ini", "simulation.dt"], tmp)
    packing = os.path.join(tmp, "pack.txt")
    with open(packing, "w") as f:
        f.write("# x y z r\n0 0 0 0.5\n1 0 zero 0.5\n")
    bad_input(["run", chain, "--set", "grains.source=file", "--set", f"packing.file={packing}"],
              ["pack.txt", "3"], tmp)

    # --- input a careless or hostile user gives: exit 2, one line, nothing written ---
    nul = os.path.join(tmp, "nul.ini")
    with open(nul, "wb") as f:
        f.write(b"[simulation]\nsteps = 3\x00\n")
    bad_input(["run", nul], ["nul.ini", "NUL"], tmp)
    bad_input(["run", "/dev/zero"], ["/dev/zero", "larger than"], tmp)
    bad_input(["run", chain, "--seed", "-1"], ["--seed", "-1"], tmp)
    bad_input(["run", chain, "--threads", "100000000"], ["--threads"], tmp)
    bad_input(["run", chain, "--set", "chain.count=100000000"], ["chain.count", "GB"], tmp)
    bad_input(["run", chain, "--set", "chain.spacing=0", "--set", "chain.radius=0.6", "--set", "chain.origin=0.5 0 0"],
              ["grain 0", "wall 'left'", "guard.start_overlap"], tmp)
    bad_input(["run", box, "--set", "random.r_min=0.5", "--set", "random.count=3", "--set", "grains.source=lattice",
               "--set", "lattice.spacing=-0.5", "--set", "lattice.counts=2 1 1", "--set", "lattice.origin=2 2 2"],
              ["lattice.spacing"], tmp)
    bad_input(["run", chain, "--set", "periodic.axes=x", "--set", "periodic.box_min=0 0 0",
               "--set", "periodic.box_max=20 0 0"], ["grain 19", "periodic box"], tmp)
    bad_input(["run", chain, "--set", "wall.left.normal=0 1 0"], ["wall.left.normal", "locked axis y"], tmp)
    bad_input(["run", chain, "--set", "cd.order=a\x1b[31m"], ["cd.order", "\\x1b"], tmp)
    bad_input(["experiment", "restitution", "--json", tmp], ["--json", "directory"], tmp)
    bad_input(["experiment", "sound-wave-1d", "--set", "md.kn=5"], ["sound-wave-1d", "md.kn", "not used"], tmp)
    bad_input(["experiment", "restitution", "--set", "cd.iterations=5"], ["restitution", "cd.iterations"], tmp)
    # Piled-up grains, a huge key, a radius of 1e-300, a narrow periodic box
    # (issue 38): exit 2 at once, one short line naming file and key.
    pile = os.path.join(tmp, "pile.txt")
    with open(pile, "w") as f:
        f.write("5 5 5 0.5\n" * 200000)  # 2e10 overlapping pairs: more memory than any machine has
    started = time.monotonic()
    bad_input(["run", box, "--set", "grains.source=file", "--set", f"packing.file={pile}"],
              ["packing.file", "pile.txt", "200000 grains", "GB"], tmp)
    expect(time.monotonic() - started < 30, f"piled-up grains took {time.monotonic() - started:.0f} s to refuse")
    huge = os.path.join(tmp, "huge_key.ini")
    with open(huge, "w") as f:
        f.write("[cd]\n" + "k" * (1 << 20) + " = 1\n")
    started = time.monotonic()
    p = run("run", huge, "--out", os.path.join(tmp, "huge_out"), "--quiet")
    expect(p.returncode == 2 and "huge_key.ini:2" in p.stderr and "unknown key" in p.stderr
           and "1048579 bytes" in p.stderr and len(p.stderr) < 300,
           f"a 1 MB key: exit {p.returncode}, {len(p.stderr)} bytes on stderr: {p.stderr[:300]}")
    expect(time.monotonic() - started < 5, f"a 1 MB key took {time.monotonic() - started:.1f} s")
    bad_input(["run", chain, "--set", "chain.radius=1e-300"], ["--set", "chain.radius", "1e-300", "1e-60"], tmp)
    tiny = os.path.join(tmp, "tiny.txt")
    with open(tiny, "w") as f:
        f.write("5 5 5 1e-300\n")
    bad_input(["run", box, "--set", "grains.source=file", "--set", f"packing.file={tiny}"],
              ["packing.file", "tiny.txt", "grain 0", "1e-300", "1e-60"], tmp)
    bad_input(["run", box, "--set", "grains.density=1e-310"], ["--set", "grains.density", "mass of"], tmp)
    bad_input(["run", chain, "--set", "chain.count=1", "--set", "periodic.axes=x", "--set", "periodic.box_min=0 0 0",
               "--set", "periodic.box_max=2 0 0"], ["--set", "periodic.box_max", "along x", "2.7"], tmp)
    # Experiments and benches refuse scene keys they do not read, listing those they do.
    bad_input(["experiment", "sound-wave-1d", "--set", "simulation.steps=5"],
              ["sound-wave-1d", "simulation.steps", "not used", "simulation.dt", "cd.*"], tmp)
    bad_input(["experiment", "restitution", "--set", "simulation.dt=1e-6"],
              ["restitution", "simulation.dt", "not used", "md.*", "not md.kn"], tmp)
    bad_input(["bench", "detect", "--set", "bench.particles=1000", "--set", "simulation.dt=5"],
              ["bench detect", "simulation.dt", "contact.margin"], tmp)
    # `moreau run --help KEY|SECTION`: that key or section only; an unknown one names the nearest.
    p = run("run", "--help", "md.kn")
    expect(p.returncode == 0 and p.stdout.startswith("md.kn = ") and "Normal stiffness" in p.stdout
           and "md.kt" not in p.stdout, f"run --help md.kn: {p.stdout[:300]}")
    p = run("run", "--help", "wall.lid.mu")
    expect(p.returncode == 0 and p.stdout.startswith("wall.lid.mu = "), f"run --help wall.lid.mu: {p.stdout[:200]}")
    p = run("run", "--help", "[periodic]")
    expect(p.returncode == 0 and p.stdout.startswith("[periodic]") and "periodic.stress_gain" in p.stdout
           and "md.kn" not in p.stdout, f"run --help [periodic]: {p.stdout[:200]}")
    bad_input(["run", "--help", "md.kx"], ["md.kx", "did you mean 'md.kn'"], tmp)
    p = run("experiment", "force-relaxation", "--help")
    expect(p.returncode == 0 and "Scene keys it reads" in p.stdout and "cd.order" in p.stdout,
           f"experiment --help lists the scene keys it reads: {p.stdout[-300:]}")
    bom = os.path.join(tmp, "bom.ini")
    with open(bom, "wb") as f:
        f.write(b"\xef\xbb\xbf[simulation]\nsteps = 3\n[cd]\niterations = x\n")
    bad_input(["run", bom], ["bom.ini:4", "cd.iterations"], tmp)
    p = run("run", chain, "--set", "chain.origin=0.4995 0 0", "--out", os.path.join(tmp, "touch"), "--quiet",
            "--set", "simulation.steps=2")
    expect(p.returncode == 0, f"a start overlapping a wall by 1e-3 r was refused: {p.stderr.strip()}")
    # Grains glued to a wall may lie in it (one body); a free grain may not.
    glued = ["--set", "chain.spacing=0", "--set", "chain.radius=0.6", "--set", "chain.origin=0.5 0 0",
             "--set", "group.plate.grains=0", "--set", "group.plate.wall=left", "--set", "simulation.steps=2"]
    p = run("run", chain, *glued, "--out", os.path.join(tmp, "glued"), "--quiet")
    expect(p.returncode == 0, f"a grain glued into its own wall was refused: {p.stderr.strip()}")
    bad_input(["run", chain, *glued[:-2], "--set", "group.plate.grains=5"], ["grain 0", "wall 'left'"], tmp)

    # --- a run: outputs of INTERFACE.md; same seed, same bits, any threads ---
    hashes = []
    for threads in ("1", "2", "1"):
        out = os.path.join(tmp, f"box_{threads}_{len(hashes)}")
        p = run("run", box, "--set", "simulation.steps=40", "--threads", threads, "--seed", "11",
                "--out", out, "--quiet")
        expect(p.returncode == 0, f"box run failed: {p.stderr}")
        with open(os.path.join(out, "summary.json")) as f:
            s = json.load(f)
        for key in ("method", "steps", "wall_seconds", "particles", "mean_iterations"):
            expect(key in s, f"summary.json lacks {key}")
        hashes.append(s["state_hash"])
        with open(os.path.join(out, "series.csv")) as f:
            header = f.readline().strip().split(",")
        for col in "step,time,kinetic_energy,rotational_energy,contacts,iterations,residual,mean_overlap,max_overlap".split(","):
            expect(col in header, f"series.csv lacks column {col}")
    expect(len(set(hashes)) == 1, f"same seed gave different states: {hashes}")
    p = run("run", box, "--set", "simulation.steps=40", "--seed", "12", "--out", os.path.join(tmp, "other"), "--quiet")
    with open(os.path.join(tmp, "other", "summary.json")) as f:
        expect(json.load(f)["state_hash"] != hashes[0], "a different seed gave the same state")

    # Mobile walls get position columns.
    out = os.path.join(tmp, "piston")
    p = run("run", os.path.join(SRC, "examples", "piston_2d.ini"), "--set", "simulation.steps=5", "--out", out, "--quiet")
    expect(p.returncode == 0, f"piston run failed: {p.stderr}")
    with open(os.path.join(out, "series.csv")) as f:
        header = f.readline()
    expect("_y" in header and "wall_" in header, f"no mobile wall column in {header}")

    # Every example runs on its own (its first 50 steps), also those that
    # experiments load and set up further in code.
    examples = sorted(f for f in os.listdir(os.path.join(SRC, "examples")) if f.endswith(".ini"))
    expect(examples, "no examples/*.ini")
    for name in examples:
        out = os.path.join(tmp, "example_" + name)
        p = run("run", os.path.join(SRC, "examples", name), "--set", "simulation.steps=50", "--out", out, "--quiet")
        expect(p.returncode == 0, f"examples/{name}: exit {p.returncode}: {p.stderr.strip()}")

    # --- experiment JSON ---
    js = os.path.join(tmp, "sw.json")
    p = run("experiment", "sound-wave-1d", "--set", "cd.iterations=20", "--json", js, "--out",
            os.path.join(tmp, "sw"), "--quiet")
    with open(js) as f:
        doc = json.load(f)
    # Exit 0 when every check passes, 4 when one failed (INTERFACE.md).
    failed = [c["name"] for c in doc["checks"] if not c["pass"]]
    expect(p.returncode == (4 if failed else 0), f"sound-wave-1d: exit {p.returncode} with failed checks {failed}")
    js4 = os.path.join(tmp, "sw4.json")
    # Fitted from the settling, before the mode has taken over (the key's help):
    # tau and R^2 miss their bounds, and the exit status says so.
    p = run("experiment", "sound-wave-1d", "--set", "cd.iterations=20", "--set", "experiment.fit_delay=0",
            "--json", js4, "--out", os.path.join(tmp, "sw4"), "--quiet")
    with open(js4) as f:
        failed4 = [c["name"] for c in json.load(f)["checks"] if not c["pass"]]
    expect(failed4 and p.returncode == 4, f"sound-wave-1d fitted early: exit {p.returncode}, failed checks {failed4}")
    expect(doc["experiment"] == "sound-wave-1d", "experiment name")
    for key in ("omega_fit", "tau_fit", "omega_theory", "tau_theory", "q", "r2"):
        expect(key in doc["results"], f"sound-wave-1d results lack {key}")
    for c in doc["checks"]:
        for key in ("name", "value", "expected", "tolerance", "pass"):
            expect(key in c, f"check lacks {key}")
    expect(os.path.exists(os.path.join(tmp, "sw", "sound_wave_1d.csv")), "sound-wave-1d CSV missing")

    # --- bench JSON: same hash for 1 and 2 threads ---
    bench_hashes = []
    for threads in ("1", "2"):
        bj = os.path.join(tmp, f"bench{threads}.json")
        p = run("bench", "cd-sweep", "--set", "bench.particles=20000", "--set", "bench.steps=2",
                "--threads", threads, "--json", bj)
        expect(p.returncode == 0, f"bench failed: {p.stderr}")
        with open(bj) as f:
            b = json.load(f)
        for key in ("contacts", "sweeps", "seconds", "contact_updates_per_second", "state_hash"):
            expect(key in b["results"], f"cd-sweep results lack {key}")
        expect(b["threads"] == int(threads), "bench threads")
        bench_hashes.append(b["results"]["state_hash"])
        expect(b["results"].get("sweep_split") == ("serial" if threads == "1" else "levels"),
               f"cd-sweep {threads} threads: sweep_split {b['results'].get('sweep_split')}")
    expect(len(set(bench_hashes)) == 1, f"cd-sweep hash differs between threads: {bench_hashes}")

    # --- bench.alternate: slices on 1 and 2 threads, the same trajectory ---
    for name, sets, rate in (
            ("cd-sweep", ["bench.particles=20000", "bench.steps=2"], "contact_updates_per_second"),
            ("md-step", ["bench.particles=4000", "bench.warmup=10", "bench.steps=30"], "particle_steps_per_second")):
        hashes = []
        slices = ["--set", "bench.alternate=" + ("1" if name == "cd-sweep" else "5")]
        # md-step: its copies and slices also settle (1 untimed step each).
        settle = ["--set", "bench.settle=1"] if name == "md-step" else []
        for extra in ([], slices, slices + ["--set", "bench.capacity=true"] + settle):
            bj = os.path.join(tmp, f"alt-{name}-{len(extra)}.json")
            args = ["bench", name]
            for kv in sets:
                args += ["--set", kv]
            p = run(*args, *extra, "--threads", "2", "--json", bj)
            expect(p.returncode == 0, f"bench {name} {extra} failed: {p.stderr}")
            with open(bj) as f:
                b = json.load(f)
            hashes.append(b["results"]["state_hash"])
            r = b["results"]
            if name == "md-step":
                # The split pass's per-step waits, over the timed steps on
                # two threads: all 30, or 3 slices of 5 less the settled one.
                w = r.get("split_wait_us", {})
                want = 30 if not extra else (12 if settle and "bench.capacity=true" in extra else 15)
                expect(w.get("steps") == want, f"md-step {extra}: split waits over {w.get('steps')} steps, want {want}")
                expect(0 <= w.get("p50", -1) <= w.get("p90", -1) <= w.get("p99", -1) <= w.get("max", -1),
                       f"md-step {extra}: split wait percentiles {w}")
                expect(0 <= r.get("split_wait_share", -1) < 1, f"md-step {extra}: split wait share {r.get('split_wait_share')}")
            if extra:
                expect(b["threads"] == 2, f"{name}: threads after alternating")
                for key in ("speedup", "speedup_median_of_pairs", "one_thread_" + rate, "alternate_pairs"):
                    expect(key in r, f"{name} with bench.alternate lacks {key}")
                expect(r.get("alternate_pairs") == (1 if name == "cd-sweep" else 3), f"{name}: slice pairs {r.get('alternate_pairs')}")
                ratio = r[rate] / r["one_thread_" + rate]
                expect(0 < r["speedup"] and abs(r["speedup"] / ratio - 1) < 1e-12, f"{name}: speedup {r['speedup']} vs rates {ratio}")
                if "bench.capacity=true" in extra:
                    # Two copies at once before each one-thread slice; the
                    # timed trajectory is untouched (hash compared below).
                    expect(r.get("capacity_copies") == 2, f"{name}: capacity copies {r.get('capacity_copies')}")
                    expect(r.get("capacity_slices") == (1 if name == "cd-sweep" else 3), f"{name}: capacity slices {r.get('capacity_slices')}")
                    cap = r.get("capacity", 0)
                    expect(cap > 0 and abs(cap / (r["concurrent_copies_" + rate] / r["one_thread_" + rate]) - 1) < 1e-12,
                           f"{name}: capacity {cap}")
                    expect(abs(r["speedup_over_capacity"] * cap / r["speedup"] - 1) < 1e-12, f"{name}: speedup over capacity")
                    expect(r.get("alternate_settle_steps") == (1 if settle else 0), f"{name}: settle steps")
                else:
                    expect("capacity" not in r, f"{name}: capacity reported without bench.capacity")
            else:
                expect("speedup" not in r, f"{name}: speedup reported without bench.alternate")
        expect(len(set(hashes)) == 1, f"{name}: alternating threads or copies changed the trajectory: {hashes}")
    bad_input(["bench", "md-step", "--set", "bench.alternate=-1"], ["bench.alternate"], tmp)
    bad_input(["bench", "cd-sweep", "--set", "bench.steps=2", "--set", "bench.alternate=2"],
              ["bench.alternate", "bench.steps", "1 to 1"], tmp)
    bad_input(["bench", "md-step", "--set", "bench.particles=1000", "--set", "bench.capacity=true"], ["bench.capacity", "bench.alternate"], tmp)
    bad_input(["bench", "cd-sweep", "--set", "bench.capacity=often"], ["bench.capacity"], tmp)
    bad_input(["bench", "md-step", "--set", "bench.particles=1000", "--set", "bench.alternate=5", "--set", "bench.settle=5"],
              ["bench.settle", "0 to 4"], tmp)

    p = run("list")
    expect(p.returncode == 0 and "sound-wave-1d" in p.stdout and "random-sweep" in p.stdout, "moreau list")
    # Every category INTERFACE.md lists answers; solvers lists each cd.solver family.
    for category in ("experiments", "benches", "force-laws", "integrators", "criteria", "solvers"):
        expect(run("list", category).returncode == 0, f"moreau list {category}")
    p = run("list", "solvers")
    expect([line.split()[0] for line in p.stdout.splitlines()[1:] if line.strip()] ==
           ["cd.solver=gauss-seidel", "cd.solver=newton", "cd.solver=apgd"], f"moreau list solvers: {p.stdout}")
    p = run("list", "integrators")
    names = ("fe ty2 ty3 ty4 rk cd pv babab bababab ve ab2 ab3 ab4 ab5 ab2-am3 ab3-am4 ab4-am5 "
             "d12 t12 t16 gpc3 gpc4 gear5").split()
    listed = [line.split()[0] for line in p.stdout.splitlines()[1:] if line.strip()]
    expect(p.returncode == 0 and listed == names, f"moreau list integrators: {listed}")
    expect(all("order" in line and "force evaluation" in line for line in p.stdout.splitlines()[1:]),
           "moreau list integrators: order and force evaluations per scheme")
    bad_input(["run", chain, "--set", "simulation.method=md", "--set", "md.integrator=ty4",
               "--set", "md.normal=hertz"], ["md.integrator", "md.normal", "hertz", "linear"], tmp)
    bad_input(["run", chain, "--set", "md.integrator=leapfrog"], ["md.integrator", "gear5"], tmp)
    p = run("--version")
    expect(p.returncode == 0 and p.stdout.startswith("moreau"), "--version")

    # --- the field's error (docs/convergence.md): criterion, column, FCLIB dumps read back ---
    bad_input(["run", chain, "--set", "cd.proximal=stall"], ["cd.proximal", "cd.criterion = natural"], tmp)
    out = os.path.join(tmp, "natural")
    p = run("run", box, "--out", out, "--quiet", "--set", "simulation.steps=40", "--set", "output.every=10",
            "--set", "cd.criterion=natural", "--set", "cd.epsilon=1e-6", "--set", "output.natural_error=true",
            "--set", "output.fclib_every=40")
    expect(p.returncode == 0, f"natural criterion run: exit {p.returncode} ({p.stderr.strip()})")
    import csv
    rows = list(csv.DictReader(open(os.path.join(out, "series.csv"))))
    errors = [float(r["natural_error"]) for r in rows[1:]]
    expect(rows[0]["natural_error"] == "nan" and len(errors) == 4 and all(0 <= e <= 1e-6 for e in errors),
           f"series.csv natural_error: {[r['natural_error'] for r in rows]}")
    dump = os.path.join(out, "fclib", "step_000040.hdf5")  # tools/bootstrap installs FCLIB
    p = run("bench", "fclib", "--set", f"bench.problem={dump}", "--set", "cd.criterion=natural",
            "--set", "cd.epsilon=1e-8", "--set", "cd.order=fixed")
    res = json.loads(p.stdout)["results"] if p.returncode == 0 else {}
    stored = res.get("stored_solution_error", -1.0)
    expect(errors and abs(stored - errors[-1]) <= 1e-9 * errors[-1],
           f"the dumped step's stored solution scores {stored}, the run said {errors[-1:]}")
    expect(res.get("converged") and res.get("error", 1.0) <= 1e-8, f"bench fclib on the dump: {res}")

if failures:
    print(f"{len(failures)} failure(s)", file=sys.stderr)
    sys.exit(1)
print("command line contract: all checks passed")
