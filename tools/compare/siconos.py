#!/usr/bin/python3
"""Moreau against Siconos on the sphere piles of ../shared/peers/siconos, in one command.

    /usr/bin/python3 tools/compare/siconos.py [--quick] [--timeout S] [--keep DIR]

Builds the Siconos harness in a temporary copy (needs Debian libsiconos-numerics-dev),
generates the piles with its gen_sphere_pile.py, and solves each one step problem to
10^-4 and to 10^-8 in the Siconos/FCLIB error, back to back:

  Moreau  `moreau bench fclib --set bench.bodies=PILE` (the engine's sweep) for the orders
          fixed, random-sweep, shuffle-once and the converging mode (fixed order with
          cd.proximal = stall), and `--set bench.problem=PILE.fc3d` (the general solver);
  Siconos fc3d_nsgs (fixed order, and shuffled once), PROX and NSN_AC.

Every answer r is re-scored by the harness's `--eval` (Siconos's fc3d_compute_error), so
all errors are Siconos's own. Times are the solver's own (Moreau: the sweeps and their
error checks; Siconos: the fc3d_driver call), single-threaded, the best of --repeat runs
on the small and flat piles. Prints a Markdown table and the ratio fc3d_nsgs / Moreau
(fixed order) to 10^-8 on the flat pile; exits 1 if that ratio is below 10.

With --plot PNG it also draws Moreau's error against sweeps on the flat pile and the
pyramid (each order, the proximal modes); --plot-only draws just that (no Siconos needed).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MOREAU = os.path.join(ROOT, "build", "bin", "moreau")
PEER = os.path.normpath(os.path.join(ROOT, "..", "shared", "peers", "siconos"))

PILES = [  # name, generator arguments, sweep cap, repeats
    ("small", ["--kx", "4"], 100000, 3),
    ("flat", ["--kx", "24", "--layers", "2"], 20000, 3),
    ("pyramid", ["--kx", "14"], 20000, 1),
]
MOREAU_RUNS = [  # label, --set options
    ("moreau fixed", ["cd.order=fixed"]),
    ("moreau random-sweep", ["cd.order=random-sweep"]),
    ("moreau shuffle-once", ["cd.order=shuffle-once"]),
    ("moreau fixed + proximal", ["cd.order=fixed", "cd.proximal=stall"]),
]
SICONOS_RUNS = [  # label, harness options, iteration cap on the pyramid
    ("siconos nsgs", ["--solver", "nsgs", "--freq", "10"], None),
    ("siconos nsgs shuffled", ["--solver", "nsgs", "--freq", "10", "--shuffle", "1", "--seed", "1"], None),
    ("siconos prox", ["--solver", "prox"], 50),
    ("siconos nsn_ac", ["--solver", "nsn_ac"], 50),
]


def run(cmd, timeout):
    """(returncode, stdout) of cmd, or (None, '') past the timeout."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                           env=dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1"))
        return p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired:
        return None, ""


def result_line(text):
    m = re.search(r"^RESULT (.*)$", text, re.M)
    return dict(kv.split("=", 1) for kv in m.group(1).split()) if m else None


def score(harness, problem, r_file, timeout):
    """Siconos's own error of the impulses in r_file."""
    _, out = run([harness, problem, "--eval", r_file], timeout)
    res = result_line(out)
    return float(res["error"]) if res else float("nan")


def moreau_solve(work, pile, label, sets, tol, cap, repeat, timeout, harness):
    r_file = os.path.join(work, "r.txt")
    src = ["--set", f"bench.bodies={pile}.bodies"] if "general" not in label else ["--set", f"bench.problem={pile}.fc3d"]
    cmd = [MOREAU, "bench", "fclib", "--threads", "1", *src, "--set", "cd.criterion=natural",
           "--set", f"cd.epsilon={tol}", "--set", f"cd.max_iterations={cap}", "--set", f"bench.repeat={repeat}",
           "--set", f"bench.write_r={r_file}", "--json", os.path.join(work, "m.json")]
    for s in sets:
        cmd += ["--set", s]
    rc, out = run(cmd, timeout)
    if rc != 0:
        return {"ok": False, "note": "timeout" if rc is None else "failed: " + out.strip()[-200:]}
    import json
    res = json.load(open(os.path.join(work, "m.json")))["results"]
    err = score(harness, pile + ".fc3d", r_file, timeout)
    return {"ok": err <= tol, "seconds": res["seconds"], "iters": res["sweeps"], "error": err,
            "own_error": res["error"]}


def siconos_solve(harness, pile, opts, tol, cap, repeat, timeout):
    cmd = [harness, pile + ".fc3d", "--tol", str(tol), "--maxit", str(cap), *opts]
    if repeat > 1:
        cmd += ["--repeat", str(repeat)]
    t0 = time.time()
    rc, out = run(cmd, timeout)
    res = result_line(out)
    if res is None or "error" not in res:
        note = "timeout" if rc is None else "no result (rc %s)" % rc
        if "emory" in out or "ssert" in out:
            note += ", out of memory (harness limit)"
        return {"ok": False, "note": f"{note} after {time.time() - t0:.0f} s"}
    t = res.get("time_min_s", res["time_s"])
    err = float(res["error"])
    return {"ok": err <= tol, "seconds": float(t), "iters": int(res["iters"]), "error": err}


def cell(r):
    if not r:
        return "—"
    if "seconds" not in r:
        return r["note"]
    if r["ok"]:
        return f"{r['seconds']:.3g} s ({r['iters']})"
    return f"not reached: {r['error']:.2g} after {r['iters']} ({r['seconds']:.3g} s)"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small and flat piles only")
    ap.add_argument("--timeout", type=float, default=150, help="seconds per solver run (default 150)")
    ap.add_argument("--keep", help="work in this folder and keep it (problems, harness build)")
    ap.add_argument("--plot", help="also plot Moreau's error against sweeps on the flat pile and the pyramid "
                                   "(PNG; docs/figures/convergence_piles.png)")
    ap.add_argument("--plot-only", action="store_true", help="with --plot: only the plot, no table")
    a = ap.parse_args()
    if not os.path.exists(MOREAU):
        sys.exit(f"siconos.py: {MOREAU} is missing: build Moreau first (README)")
    if not a.plot_only and not os.path.exists("/usr/include/siconos/numerics/fc3d_Solvers.h"):
        sys.exit("siconos.py: Siconos is missing: apt-get install -y libsiconos-numerics-dev")
    if not os.path.isdir(PEER):
        sys.exit(f"siconos.py: the harness folder {PEER} is missing")
    work = a.keep or tempfile.mkdtemp(prefix="moreau-siconos-")
    os.makedirs(work, exist_ok=True)
    peer = os.path.join(work, "siconos")
    if not os.path.isdir(peer):
        shutil.copytree(PEER, peer)
        for root, dirs, files in os.walk(peer):  # the shared copy is read-only
            for n in dirs + files:
                os.chmod(os.path.join(root, n), 0o755)
    if a.plot_only:
        if not a.plot:
            sys.exit("siconos.py: --plot-only needs --plot PNG")
        plot_histories(work, peer, a.plot)
        return 0
    harness = os.path.join(peer, "fc3d_siconos_solve")
    if not os.path.exists(harness):
        rc, out = run(["g++", "-O2", "-std=c++17", os.path.join(peer, "fc3d_siconos_solve.cpp"),
                       "-I/usr/include/siconos", "-I/usr/include/siconos/numerics", "-lsiconos_numerics",
                       "-o", harness], 600)
        if rc != 0:
            sys.exit("siconos.py: building the harness failed:\n" + out)
    rows = []
    ratio = m8 = None
    for name, gen, cap, repeat in PILES[:2] if a.quick else PILES:
        pile = os.path.join(work, name)
        if not os.path.exists(pile + ".fc3d"):
            rc, out = run(["/usr/bin/python3", os.path.join(peer, "gen_sphere_pile.py"), *gen, "-o", pile + ".fc3d",
                           "--bodies", pile + ".bodies"], 600)
            if rc != 0:
                sys.exit("siconos.py: generating the pile failed:\n" + out)
        tokens = []
        with open(pile + ".fc3d") as f:  # "FC3D 1" then the contact count, '#' comments aside
            for line in f:
                tokens += line.split("#", 1)[0].split()
                if len(tokens) >= 3:
                    break
        contacts = tokens[2]
        print(f"== {name}: {' '.join(gen)}, {contacts} contacts", file=sys.stderr, flush=True)
        runs = [(lbl, lambda tol, s=sets, l=lbl: moreau_solve(work, pile, l, s, tol, cap, repeat, a.timeout, harness))
                for lbl, sets in MOREAU_RUNS + [("moreau general (fixed)", ["cd.order=fixed"])]]
        for lbl, opts, big_cap in SICONOS_RUNS:
            c = big_cap if (big_cap and name != "small") else cap
            runs.append((lbl, lambda tol, o=opts, c=c: siconos_solve(harness, pile, o, tol, c, repeat, a.timeout)))
        for lbl, solve in runs:
            r4 = solve(1e-4)
            # Where 10^-4 is out of reach, so is 10^-8: that run would repeat this one.
            r8 = solve(1e-8) if r4.get("ok") else None
            best = min((r.get("error", float("inf")) for r in (r4, r8) if r), default=float("inf"))
            rows.append((name, contacts, lbl, cell(r4), cell(r8) if r8 else "—", best))
            print(f"   {lbl:28s} 1e-4: {cell(r4)} | 1e-8: {cell(r8) if r8 else '—'}", file=sys.stderr, flush=True)
            if name == "flat" and r8 and r8.get("ok"):
                if lbl == "moreau fixed":
                    m8 = r8["seconds"]
                if lbl == "siconos nsgs":
                    ratio = r8["seconds"] / m8 if m8 else None
    print("\n| pile | contacts | solver | time to 1e-4 (sweeps) | time to 1e-8 (sweeps) | lowest error |")
    print("|---|---|---|---|---|---|")
    for name, nc, lbl, c4, c8, best in rows:
        print(f"| {name} | {nc} | {lbl} | {c4} | {c8} | {'—' if best == float('inf') else f'{best:.2g}'} |")
    if ratio is not None:
        print(f"\nflat pile to 1e-8: fc3d_nsgs / Moreau fixed order = {ratio:.1f}x (target >= 10)")
    if a.plot:
        plot_histories(work, peer, a.plot)
    if not a.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if ratio is not None and ratio >= 10 else 1


def plot_histories(work, peer, png):
    """Moreau's error every 100 sweeps for each order and the proximal modes, flat pile and pyramid."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    runs = [("fixed", ["cd.order=fixed"]), ("random-sweep", ["cd.order=random-sweep"]),
            ("shuffle-once", ["cd.order=shuffle-once"]), ("fixed + proximal stall", ["cd.order=fixed",
                                                                                    "cd.proximal=stall"]),
            ("random-sweep + proximal on", ["cd.order=random-sweep", "cd.proximal=on"])]
    for ax, (name, gen) in zip(axes, [("flat", ["--kx", "24", "--layers", "2"]), ("pyramid", ["--kx", "14"])]):
        pile = os.path.join(work, name)
        if not os.path.exists(pile + ".bodies"):
            run(["/usr/bin/python3", os.path.join(peer, "gen_sphere_pile.py"), *gen, "-o", pile + ".fc3d",
                 "--bodies", pile + ".bodies"], 600)
        for label, sets in runs:
            hist = os.path.join(work, "history.txt")
            cmd = [MOREAU, "bench", "fclib", "--threads", "1", "--set", f"bench.bodies={pile}.bodies",
                   "--set", "cd.criterion=natural", "--set", "cd.epsilon=1e-8", "--set", "cd.max_iterations=20000",
                   "--set", "cd.check_every=100", "--set", f"bench.history={hist}", "--json", os.devnull]
            for x in sets:
                cmd += ["--set", x]
            run(cmd, 600)
            data = [tuple(map(float, line.split())) for line in open(hist) if line.strip()]
            ax.semilogy([d[0] for d in data], [d[1] for d in data], label=label, lw=1.2)
        ax.set_title(f"{name} pile ({'4,808' if name == 'flat' else '5,292'} contacts)")
        ax.set_xlabel("sweeps")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("Siconos/FCLIB error")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    print(f"wrote {png}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
