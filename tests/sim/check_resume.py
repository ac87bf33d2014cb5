#!/usr/bin/python3
"""Checkpoints, resume, clean stops and the run log, end to end through the
built program (INTERFACE.md, "Checkpoints and resume"):

- the restart matrix: a run stopped at step K and resumed to N gives the
  uninterrupted run's state_hash and series.csv bytes (CD with every sweep
  order; MD with leapfrog, Adams-Bashforth, RK4, Gear 5; the history laws;
  periodic axes; a piston whose force steps after K; run.pvd continued;
  a shear cell with grains glued to a mobile lid, and with a servo lid;
  a Lees-Edwards cell under a stress servo);
- SIGINT and SIGTERM: exit 130/143 with a checkpoint and one line saying
  how to resume, which continues to the same bits;
- kill -9 at random moments, resumed each time: the same bits at the end;
- bad checkpoints (not one, truncated, a flipped byte, another format
  version), a forbidden --set on resume (a key that changes the trajectory
  or series.csv's columns, a key of a new wall), --out naming another folder
  and another scene: exit 2, one line naming the file or key; the output.*
  and guard.* keys docs/scenes.md allows are taken; a checkpoint of another
  Moreau version resumes with a warning that summary.json records;
- a reused --out loses the earlier run's files; log.txt has its lines.

usage: check_resume.py MOREAU_BINARY SOURCE_DIR
"""
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from cli_checks import MOREAU, example, expect, finish, read, run, summary


def restart_case(tmp, label, scene, n, k, sets, vtk=False, threads=("2", "1", "2")):
    """Uninterrupted run of n steps against a run of k steps (checkpoint at k) resumed to n, on the
    given threads (uninterrupted, first part, resumed part): a result never depends on them."""
    sets = [a for kv in sets for a in ("--set", kv)]
    if vtk:
        sets += ["--set", "output.vtk_every=20"]
    a, b = os.path.join(tmp, label + "_a"), os.path.join(tmp, label + "_b")
    p = run("run", scene, "--quiet", "--out", a, "--set", f"simulation.steps={n}", "--threads", threads[0], *sets)
    expect(p.returncode == 0, f"{label}: uninterrupted run failed: {p.stderr.strip()}")
    p = run("run", scene, "--quiet", "--out", b, "--set", f"simulation.steps={k}",
            "--set", f"output.checkpoint_every={k}", "--threads", threads[1], *sets)
    expect(p.returncode == 0, f"{label}: first part failed: {p.stderr.strip()}")
    p = run("run", "--resume", b, "--quiet", "--set", f"simulation.steps={n}", "--threads", threads[2])
    expect(p.returncode == 0, f"{label}: resume failed: {p.stderr.strip()}")
    if p.returncode != 0:
        return
    sa, sb = summary(a), summary(b)
    expect(sa["state_hash"] == sb["state_hash"],
           f"{label}: resumed state_hash {sb['state_hash']} != uninterrupted {sa['state_hash']}")
    expect(read(os.path.join(a, "series.csv")) == read(os.path.join(b, "series.csv")),
           f"{label}: resumed series.csv differs from the uninterrupted one")
    expect(sb.get("resumed_from_step") == k and sb["status"] == "completed", f"{label}: summary {sb}")
    if vtk:
        expect(read(os.path.join(a, "vtk", "run.pvd")) == read(os.path.join(b, "vtk", "run.pvd")),
               f"{label}: resumed run.pvd differs")
        expect(sorted(os.listdir(os.path.join(a, "vtk"))) == sorted(os.listdir(os.path.join(b, "vtk"))),
               f"{label}: resumed vtk/ holds other files")
        for name in sorted(os.listdir(os.path.join(a, "vtk"))):
            if os.path.isfile(os.path.join(b, "vtk", name)):
                expect(read(os.path.join(a, "vtk", name)) == read(os.path.join(b, "vtk", name)),
                       f"{label}: resumed vtk/{name} differs")


def bad_checkpoint(tmp, label, damage, must_mention):
    d = os.path.join(tmp, "bad_" + label)
    shutil.copytree(os.path.join(tmp, "good"), d)
    path = os.path.join(d, "checkpoint")
    data = bytearray(read(path))
    data = damage(data)
    with open(path, "wb") as f:
        f.write(data)
    p = run("run", "--resume", d, "--quiet")
    lines = [l for l in p.stderr.splitlines() if l.strip()]
    expect(p.returncode == 2, f"{label} checkpoint: exit {p.returncode}, wanted 2 ({p.stderr.strip()})")
    expect(len(lines) == 1, f"{label} checkpoint: wanted one line on stderr, got {lines}")
    for word in must_mention:
        expect(word in p.stderr, f"{label} checkpoint: stderr does not name '{word}': {p.stderr.strip()}")


def stop_by_signal(tmp, sig, status):
    """A long run stopped by `sig`, then resumed: the uninterrupted bits."""
    scene = example("box_3d.ini")
    n = 4000
    out = os.path.join(tmp, f"sig{sig}")
    proc = subprocess.Popen([MOREAU, "run", scene, "--out", out, "--set", f"simulation.steps={n}",
                             "--set", "simulation.method=md", "--set", "output.log_every=100"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # Wait for the first log line (the run is stepping), then signal.
    deadline = time.time() + 60
    while time.time() < deadline and not (os.path.exists(os.path.join(out, "log.txt")) and
                                          len(open(os.path.join(out, "log.txt")).read().splitlines()) >= 4):
        time.sleep(0.02)
    proc.send_signal(sig)
    stdout, stderr = proc.communicate(timeout=120)
    if proc.returncode == 0:
        print(f"note: the run ended before signal {sig} reached it", file=sys.stderr)
        return
    expect(proc.returncode == status, f"signal {sig}: exit {proc.returncode}, wanted {status} ({stderr.strip()})")
    expect("moreau run --resume " + out in stdout, f"signal {sig}: stdout does not say how to resume: {stdout!r}")
    s = summary(out)
    expect(s["status"] == "stopped" and s["last_step"] < n, f"signal {sig}: summary {s['status']}, {s['last_step']}")
    p = run("run", "--resume", out, "--quiet")
    expect(p.returncode == 0, f"signal {sig}: resume failed: {p.stderr.strip()}")
    ref = os.path.join(tmp, "sig_ref")
    if not os.path.exists(ref):
        p = run("run", scene, "--quiet", "--out", ref, "--set", f"simulation.steps={n}",
                "--set", "simulation.method=md", "--set", "output.log_every=100")
    expect(summary(out)["state_hash"] == summary(ref)["state_hash"], f"signal {sig}: resumed run has other bits")
    expect(read(os.path.join(out, "series.csv")) == read(os.path.join(ref, "series.csv")),
           f"signal {sig}: resumed series.csv differs")


def kill_loop(tmp):
    """kill -9 at random moments; each time resume from what is there.

    Each kill waits until the run has progressed (written a checkpoint newer
    than the one it started from), then lands at a random moment of the
    next stretch: every attempt moves the run on by at least one checkpoint,
    however slow or busy the machine, so the loop ends in at most
    n / checkpoint_every + 1 attempts. A deadline only guards against a hang."""
    scene = example("piston_2d.ini")
    n, every = 600, 13
    sets = ["--set", f"simulation.steps={n}", "--set", f"output.checkpoint_every={every}"]
    ref = os.path.join(tmp, "kill_ref")
    p = run("run", scene, "--quiet", "--out", ref, *sets)
    expect(p.returncode == 0, f"kill loop: reference run failed: {p.stderr.strip()}")
    out = os.path.join(tmp, "kill")
    checkpoint = os.path.join(out, "checkpoint")
    rng = random.Random(7)

    def mark():  # the checkpoint's identity: a new one is a new file (renamed into place)
        try:
            st = os.stat(checkpoint)
            return (st.st_ino, st.st_mtime_ns, st.st_size)
        except FileNotFoundError:
            return None

    kills = 0
    deadline = time.time() + 1800
    for attempt in range(n // every + 2):
        start = mark()
        cmd = [MOREAU, "run", scene, "--quiet", "--out", out, *sets] if start is None else \
              [MOREAU, "run", "--resume", out, "--quiet"]
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        while proc.poll() is None and mark() == start and time.time() < deadline:
            time.sleep(0.005)
        if proc.poll() is None:
            time.sleep(rng.uniform(0.0, 0.02))  # somewhere in the next stretch, a write perhaps
            proc.kill()
        _, err = proc.communicate()
        if proc.returncode == 0:
            break
        if proc.returncode != -signal.SIGKILL:
            expect(False, f"kill loop: attempt {attempt} failed on its own: exit {proc.returncode} {err.strip()}")
            return
        kills += 1
        if time.time() > deadline:
            expect(False, f"kill loop: no end after {kills} kills in 30 minutes (a hang?)")
            return
    else:
        expect(False, f"kill loop: {kills} kills without an end, each after a new checkpoint")
        return
    expect(summary(out)["state_hash"] == summary(ref)["state_hash"],
           f"kill loop ({kills} kills): the resumed run has other bits")
    expect(read(os.path.join(out, "series.csv")) == read(os.path.join(ref, "series.csv")),
           f"kill loop ({kills} kills): series.csv differs from the uninterrupted run's")
    print(f"kill loop: {kills} kills with SIGKILL, then the same bits", file=sys.stderr)


with tempfile.TemporaryDirectory() as tmp:
    box, piston, chain = example("box_3d.ini"), example("piston_2d.ini"), example("chain_1d.ini")

    # --- the restart matrix ---
    for order in ("random-sweep", "shuffle-once", "fixed", "random-sequential"):
        restart_case(tmp, "cd_" + order, box, 90, 40, [f"cd.order={order}", "contact.mu=0.3"])
    for scheme in ("cd", "ab3", "rk", "gear5"):
        restart_case(tmp, "md_" + scheme, box, 90, 40,
                     ["simulation.method=md", f"md.integrator={scheme}", "contact.mu=0.3",
                      "md.restart_on_contact_change=false"])
    for law in ("spring", "walton-braun", "kuhn", "pena"):
        restart_case(tmp, "md_" + law, box, 90, 40, ["simulation.method=md", f"md.tangential={law}",
                                                     "contact.mu=0.3", "md.pipeline=staged"])
    restart_case(tmp, "md_fused", box, 90, 40, ["simulation.method=md", "md.pipeline=fused"], vtk=True)
    # Clumps: their shapes, sizes and orientations travel with the world.
    restart_case(tmp, "md_clumps", box, 90, 40,
                 ["simulation.method=md", "grains.shape=clump", "clump.spheres=-0.5 0 0 0.5; 0.5 0.2 0 0.4",
                  "random.count=200", "md.substeps=20"])
    restart_case(tmp, "cd_clumps", box, 90, 40,
                 ["grains.shape=clump", "clump.spheres=-0.5 0 0 0.5; 0.5 0.2 0 0.4", "random.count=200"])
    # Polygons: their shapes (each irregular grain its own), sizes and angles travel with the world.
    polygons = example("polygons_2d.ini")
    restart_case(tmp, "cd_polygons", polygons, 400, 200, ["random.count=60"], vtk=True)
    restart_case(tmp, "md_polygons", polygons, 400, 200, ["simulation.method=md", "random.count=60"])
    # Disks falling onto a floor in a cell periodic along x.
    cell = os.path.join(tmp, "periodic_2d.ini")
    with open(cell, "w") as f:
        f.write("[simulation]\ndimension = 2\ndt = 0.01\ngravity = 0 -10 0\n"
                "[contact]\nmu = 0.3\n[md]\nkn = 1e5\nkt = 2.8e4\nsubsteps = 10\n"
                "[grains]\nsource = lattice\n"
                "[lattice]\ntype = square\ncounts = 10 5\nradius = 0.5\nspacing = 0.1\norigin = 0.55 0.6 0\n"
                "jitter = 0.05\n[periodic]\naxes = x\nbox_min = 0 0 0\nbox_max = 11 0 0\n"
                "[wall.floor]\ntype = plane\npoint = 0 0 0\nnormal = 0 1 0\n")
    restart_case(tmp, "cd_periodic", cell, 150, 61, [])
    restart_case(tmp, "md_periodic", cell, 150, 61, ["simulation.method=md", "md.substeps=60"])
    # The piston's force steps at t = 1000, after the restart point.
    restart_case(tmp, "cd_piston", piston, 1030, 990, [], vtk=True)
    restart_case(tmp, "cd_piston_cadence", piston, 1030, 980, ["output.every=7"], vtk=True)
    restart_case(tmp, "md_piston", piston, 1030, 990, ["simulation.method=md"])
    # Grains glued to a mobile lid driven along x, and a servo lid.
    shear = example("shear_cell_2d.ini")
    restart_case(tmp, "cd_shear_cell", shear, 700, 613, [])
    restart_case(tmp, "md_shear_cell", shear, 700, 613, ["simulation.method=md", "md.substeps=60"])
    servo = ["wall.lid.mobile=false", "wall.lid.force=0 0 0", "wall.lid.servo_stress=0.005",
             "wall.lid.servo_gain=2", "wall.lid.servo_max_speed=0.01", "wall.lid.servo_time=50"]
    restart_case(tmp, "cd_servo", shear, 700, 613, servo)
    restart_case(tmp, "md_servo", shear, 700, 613, ["simulation.method=md", "md.substeps=60"] + servo)
    # A Lees-Edwards cell whose height a servo controls.
    le = example("lees_edwards_2d.ini")
    restart_case(tmp, "cd_lees_edwards", le, 2600, 2417, [])
    restart_case(tmp, "md_lees_edwards", le, 2600, 2417, ["simulation.method=md"])
    # A periodic triaxial cell: the servo's integral is part of the state.
    tri = example("triaxial_3d.ini")
    restart_case(tmp, "cd_triaxial", tri, 700, 613, [])

    # Resuming a finished run changes nothing (its last row is off the cadence).
    fin = os.path.join(tmp, "finished")
    run("run", chain, "--quiet", "--out", fin, "--set", "simulation.steps=25", "--set", "output.every=10",
        "--set", "output.checkpoint_every=7")
    before = read(os.path.join(fin, "series.csv"))
    p = run("run", "--resume", fin, "--quiet")
    expect(p.returncode == 0 and read(os.path.join(fin, "series.csv")) == before,
           "resuming a finished run changed its series.csv")

    # --- bad checkpoints, forbidden keys, another scene ---
    good = os.path.join(tmp, "good")
    p = run("run", chain, "--quiet", "--out", good, "--set", "simulation.steps=20",
            "--set", "output.checkpoint_every=10")
    expect(p.returncode == 0, f"checkpointed run failed: {p.stderr.strip()}")
    bad_checkpoint(tmp, "truncated", lambda d: d[: len(d) // 2], ["checkpoint", "truncated"])
    bad_checkpoint(tmp, "flipped", lambda d: d[:300] + bytes([d[300] ^ 0x10]) + d[301:], ["checkpoint", "damaged"])
    bad_checkpoint(tmp, "version", lambda d: d[:18] + (99).to_bytes(4, "little") + d[22:],
                   ["checkpoint", "format version 99"])
    bad_checkpoint(tmp, "foreign", lambda d: b"x y z radius\n" + d, ["checkpoint", "not a Moreau checkpoint"])
    bad_checkpoint(tmp, "empty", lambda d: b"", ["checkpoint"])
    p = run("run", "--resume", os.path.join(tmp, "nowhere"), "--quiet")
    expect(p.returncode == 2 and "nowhere" in p.stderr, f"missing checkpoint: exit {p.returncode} {p.stderr}")
    p = run("run", "--resume", good, "--quiet", "--set", "cd.iterations=7")
    expect(p.returncode == 2 and "cd.iterations" in p.stderr, f"forbidden key: exit {p.returncode} {p.stderr}")
    p = run("run", "--resume", good, "--quiet", "--set", "simulation.dt=0.5")
    expect(p.returncode == 2 and "simulation.dt" in p.stderr, f"dt on a regular resume: exit {p.returncode}")
    p = run("run", "--resume", good, "--quiet", "--set", "wall.new.normal=1 0 0")
    expect(p.returncode == 2 and "wall.new.normal" in p.stderr and len(p.stderr.strip().splitlines()) == 1,
           f"a key the checkpoint's scene lacks: exit {p.returncode}, wanted 2 naming it ({p.stderr.strip()})")
    for key in ("output.natural_error=true", "output.stress_region=0 0 0 1 1 1"):
        p = run("run", "--resume", good, "--quiet", "--set", key)
        expect(p.returncode == 2 and key.split("=")[0] in p.stderr,
               f"{key} on resume (series.csv's columns): exit {p.returncode}, wanted 2 ({p.stderr.strip()})")
    # What docs/scenes.md allows on resume: simulation.steps, output.* but those two, guard.*.
    allowed = os.path.join(tmp, "allowed")
    shutil.copytree(good, allowed)
    p = run("run", "--resume", allowed, "--quiet", "--set", "simulation.steps=30", "--set", "output.every=2",
            "--set", "output.vtk_pieces=true", "--set", "output.fclib_every=0", "--set", "output.log_every=5",
            "--set", "guard.every=7", "--set", "guard.max_overlap=0.4", "--set", "guard.max_travel=0.9",
            "--set", "guard.energy=false", "--set", "guard.contact_steps=20", "--set", "guard.start_overlap=0.5")
    expect(p.returncode == 0, f"output.*/guard.* keys on resume: exit {p.returncode} ({p.stderr.strip()})")
    # --out beside --resume: the same folder is the resumed one; another is refused.
    p = run("run", "--resume", allowed, "--quiet", "--out", os.path.join(tmp, "elsewhere"))
    expect(p.returncode == 2 and "--out" in p.stderr and not os.path.exists(os.path.join(tmp, "elsewhere")),
           f"--out beside --resume: exit {p.returncode}, wanted 2 naming --out ({p.stderr.strip()})")
    p = run("run", "--resume", allowed, "--quiet", "--out", allowed, "--set", "simulation.steps=35")
    expect(p.returncode == 0 and summary(allowed)["last_step"] == 35,
           f"--out naming the resumed folder: exit {p.returncode} ({p.stderr.strip()})")
    # A checkpoint of another Moreau version (same format): resumed with a
    # warning, and summary.json says its bits are not vouched for.
    other = os.path.join(tmp, "other_version")
    shutil.copytree(good, other)
    data = bytearray(read(os.path.join(other, "checkpoint")))
    length = int.from_bytes(data[22:30], "little")
    mine = data[30:30 + length].decode()
    theirs = ("9" if mine[0] != "9" else "8") + mine[1:]
    data[30:30 + length] = theirs.encode()
    h = 0xcbf29ce484222325
    for byte in data[:-8]:
        h = ((h ^ byte) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    data[-8:] = h.to_bytes(8, "little")
    with open(os.path.join(other, "checkpoint"), "wb") as f:
        f.write(data)
    p = run("run", "--resume", other, "--set", "simulation.steps=30")
    s = summary(other)
    expect(p.returncode == 0 and "warning" in p.stderr and theirs in p.stderr and mine in p.stderr,
           f"another version's checkpoint: exit {p.returncode}, wanted 0 with a warning naming {theirs} and {mine} "
           f"({p.stderr.strip()[:300]})")
    expect(s.get("checkpoint_version") == theirs and s.get("bit_exact_resume") is False,
           f"another version's checkpoint: summary.json does not say so ({s.get('checkpoint_version')}, "
           f"{s.get('bit_exact_resume')})")
    expect(theirs in open(os.path.join(other, "log.txt")).read(), "another version's checkpoint: log.txt is silent")
    p = run("run", box, "--resume", good, "--quiet")
    expect(p.returncode == 2 and "another scene" in p.stderr, f"another scene: exit {p.returncode} {p.stderr}")
    p = run("run", chain, "--resume", good, "--quiet", "--set", "simulation.steps=30")
    expect(p.returncode == 0, f"resume naming its own scene: exit {p.returncode} {p.stderr}")

    # --- a divergence: exit 3, the last good step; only then may dt change ---
    dv = os.path.join(tmp, "diverged")
    blow = ["--set", "simulation.method=md", "--set", "md.substeps=1", "--set", "md.kn=1e200",
            "--set", "guard.contact_steps=0"]
    p = run("run", chain, "--quiet", "--out", dv, *blow)
    expect(p.returncode == 3, f"divergence: exit {p.returncode}, wanted 3")
    expect(summary(dv)["status"] == "diverged", "divergence: summary.json does not say so")
    p = run("run", "--resume", dv, "--quiet", "--set", "md.kn=1")
    expect(p.returncode == 2 and "md.kn" in p.stderr, f"diverged resume, forbidden key: exit {p.returncode}")
    p = run("run", "--resume", dv, "--quiet", "--set", "simulation.dt=0.5")
    expect(p.returncode == 3, f"diverged resume with a smaller step: exit {p.returncode} ({p.stderr.strip()})")
    expect(summary(dv).get("bit_exact_resume") is False, "a resume with another step is not marked inexact")

    # --- guards: no silent garbage ---
    g = os.path.join(tmp, "guard")
    p = run("run", box, "--quiet", "--out", g, "--set", "simulation.method=md", "--set", "md.substeps=1")
    lines = [l for l in p.stderr.splitlines() if l.strip()]
    expect(p.returncode == 2 and len(lines) == 1 and "md.substeps" in p.stderr and "simulation.dt" in p.stderr
           and "md.substeps >= 6" in p.stderr, f"unresolved MD step: exit {p.returncode}: {p.stderr.strip()}")
    expect(not os.path.exists(g), "the refused run left its --out behind")
    unresolved = ["--set", "simulation.method=md", "--set", "md.substeps=1", "--set", "md.kn=1e7",
                  "--set", "simulation.steps=100", "--set", "guard.contact_steps=0"]
    for label, extra, word in (("travel", ["--set", "guard.max_overlap=0"], "guard.max_travel"),
                               ("overlap", ["--set", "guard.max_travel=0"], "guard.max_overlap"),
                               ("energy", ["--set", "guard.max_travel=0", "--set", "guard.max_overlap=0"],
                                "guard.energy")):
        p = run("run", box, "--quiet", "--out", g, *unresolved, *extra)
        expect(p.returncode == 3 and word in p.stderr, f"guard {label}: exit {p.returncode}: {p.stderr.strip()}")
        if p.returncode == 3:
            s = summary(g)
            expect(s["status"] == "diverged" and s["last_good_step"] < s["last_step"] + 10,
                   f"guard {label}: summary {s['status']}, last good step {s.get('last_good_step')}")
            with open(os.path.join(g, "series.csv")) as f:
                values = [float(x) for row in list(f)[1:] for x in row.split(",")]
            expect(all(abs(v) < 1e300 for v in values), f"guard {label}: series.csv holds non-finite values")
    # A small overlap bound stops an ordinary MD run: the guard reads the overlaps.
    p = run("run", box, "--quiet", "--out", g, "--set", "simulation.method=md", "--set", "guard.max_overlap=1e-6")
    expect(p.returncode == 3 and "guard.max_overlap" in p.stderr, f"overlap bound 1e-6: exit {p.returncode}")

    # --- a reused --out loses the earlier run's files; the run log ---
    reuse = os.path.join(tmp, "reuse")
    run("run", chain, "--quiet", "--out", reuse, "--set", "simulation.steps=20", "--set", "output.vtk_every=5",
        "--set", "output.checkpoint_every=10")
    p = run("run", chain, "--out", reuse, "--set", "simulation.steps=20", "--set", "output.log_every=5")
    expect(p.returncode == 0, "reused --out: run failed")
    left = sorted(os.listdir(reuse))
    expect(left == ["log.txt", "series.csv", "summary.json"], f"reused --out keeps stale files: {left}")
    log = open(os.path.join(reuse, "log.txt")).read().splitlines()
    rows = [l for l in log if l.split() and l.split()[0].isdigit()]
    expect([int(r.split()[0]) for r in rows] == [5, 10, 15, 20], f"log.txt rows: {rows}")
    expect(sum(1 for l in p.stderr.splitlines() if l.split() and l.split()[0].isdigit()) == 4,
           "the log lines are not on stderr")
    expect(len(p.stdout.splitlines()) <= 4 and "state_hash" in p.stdout, f"stdout is not a short report: {p.stdout!r}")
    p = run("run", chain, "--quiet", "--out", reuse, "--set", "simulation.steps=20")
    expect(p.stderr == "", f"--quiet leaves stderr lines: {p.stderr!r}")

    # --- signals and kill -9 ---
    stop_by_signal(tmp, signal.SIGINT, 130)
    stop_by_signal(tmp, signal.SIGTERM, 143)
    kill_loop(tmp)

finish("resume checks passed")
