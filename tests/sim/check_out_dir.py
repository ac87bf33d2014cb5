#!/usr/bin/python3
"""The output folder, end to end through the built program (INTERFACE.md:
one run per output folder; files are never created through a symlink;
docs/scenes.md, "Outputs"):

- links planted under the names a run uses for its temporaries
  (.moreau-write-test, checkpoint.tmp, summary.json.tmp) and its lock: their
  targets stay untouched;
- a second run (fresh or --resume) into a folder a run holds exits 2 with
  one line naming the holder's pid; a lock left by a killed run is taken
  over, and a finished run leaves no lock behind;
- a link or a device named like an output (summary.json to a file outside,
  series.csv to /dev/null) is written through and stays; a link to nothing
  is refused before the run, its target never created.

usage: check_out_dir.py MOREAU_BINARY SOURCE_DIR
"""
import json
import os
import subprocess
import tempfile
import time

from cli_checks import MOREAU, example, expect, finish, read, run

CHAIN = example("chain_1d.ini")
BOX = example("box_3d.ini")


def one_line(p):
    return [line for line in p.stderr.splitlines() if line.strip()]


def planted(tmp, name):
    """A file outside the folder, and a link to it: what must survive."""
    target = os.path.join(tmp, "precious_" + name.strip("."))
    with open(target, "w") as f:
        f.write("precious\n")
    return target


def wait_for(cond, seconds):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if cond():
            return True
        time.sleep(0.05)
    return False


with tempfile.TemporaryDirectory() as tmp:
    short = ["--set", "simulation.steps=20", "--set", "output.checkpoint_every=10"]

    # --- planted links: never followed when a file is created ---
    out = os.path.join(tmp, "planted")
    os.makedirs(out)
    probe = planted(tmp, ".moreau-write-test")
    os.symlink(probe, os.path.join(out, ".moreau-write-test"))
    p = run("run", CHAIN, "--quiet", "--out", out, *short)
    expect(p.returncode == 0, f"fresh run beside a planted .moreau-write-test link: exit {p.returncode} {p.stderr}")
    expect(read(probe) == b"precious\n", "a fresh run truncated the target of a planted .moreau-write-test link")
    targets = {}
    for name in ("checkpoint.tmp", "summary.json.tmp", "series.csv.tmp", ".moreau-write-test"):
        path = os.path.join(out, name)
        if os.path.lexists(path):
            os.remove(path)
        targets[name] = planted(tmp, name)
        os.symlink(targets[name], path)
    p = run("run", "--resume", out, "--quiet", "--set", "simulation.steps=40")
    expect(p.returncode == 0, f"resume beside planted links: exit {p.returncode} {p.stderr}")
    for name, target in targets.items():
        expect(read(target) == b"precious\n", f"--resume wrote through a planted {name} link")
        expect(os.path.islink(os.path.join(out, name)), f"--resume removed the planted {name} link")
    expect(json.load(open(os.path.join(out, "summary.json")))["last_step"] == 40, "resume beside links: summary")
    # A planted lock: refused, its target untouched.
    out = os.path.join(tmp, "planted_lock")
    os.makedirs(out)
    lock_target = planted(tmp, "lock")
    os.symlink(lock_target, os.path.join(out, ".moreau-lock"))
    p = run("run", CHAIN, "--quiet", "--out", out, *short)
    expect(p.returncode == 2 and len(one_line(p)) == 1 and ".moreau-lock" in p.stderr,
           f"a planted .moreau-lock link: exit {p.returncode}, wanted 2 naming it: {p.stderr.strip()}")
    expect(read(lock_target) == b"precious\n", "a planted .moreau-lock link: its target was written")

    # --- one run per folder ---
    out = os.path.join(tmp, "held")
    long_run = [MOREAU, "run", BOX, "--out", out, "--set", "simulation.method=md", "--set", "simulation.steps=100000000",
                "--set", "output.every=1000", "--set", "output.log_every=50", "--set", "output.checkpoint_every=50"]
    holder = subprocess.Popen(long_run, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    stepping = wait_for(lambda: os.path.exists(os.path.join(out, "checkpoint")), 300)
    expect(stepping, "the holding run never wrote its first checkpoint")
    for label, args in (("a fresh run", ["run", CHAIN, "--quiet", "--out", out, *short]),
                        ("a resume", ["run", "--resume", out, "--quiet"]),
                        ("an experiment", ["experiment", "sound-wave-1d", "--quiet", "--out", out])):
        p = run(*args)
        expect(p.returncode == 2, f"{label} into a held folder: exit {p.returncode}, wanted 2 ({p.stderr.strip()})")
        expect(len(one_line(p)) == 1 and "in use by moreau pid " + str(holder.pid) in p.stderr,
               f"{label} into a held folder does not name the holder (pid {holder.pid}): {p.stderr.strip()}")
    expect(holder.poll() is None, "the holding run stopped when a second run was refused")
    # The holder's files are its own: the refused runs removed nothing.
    expect(os.path.exists(os.path.join(out, "series.csv")) and os.path.exists(os.path.join(out, "log.txt")),
           "a refused run removed the holder's files")
    holder.kill()  # SIGKILL: its lock stays in the folder, released by the kernel
    holder.wait()
    expect(os.path.exists(os.path.join(out, ".moreau-lock")), "a killed run left no lock file to take over")
    p = run("run", CHAIN, "--quiet", "--out", out, *short)
    expect(p.returncode == 0, f"a lock left by a killed run is not taken over: exit {p.returncode} {p.stderr.strip()}")
    expect(not os.path.exists(os.path.join(out, ".moreau-lock")), "a finished run left its lock file")
    expect(sorted(os.listdir(out)) == ["checkpoint", "log.txt", "series.csv", "summary.json"],
           f"the run after a killed one left other files: {sorted(os.listdir(out))}")

    # --- an experiment's folder: held, its CSV never created through a link ---
    out = os.path.join(tmp, "experiment")
    os.makedirs(out)
    nowhere = os.path.join(tmp, "experiment_nowhere.csv")
    os.symlink(nowhere, os.path.join(out, "sound_wave_1d.csv"))
    p = run("experiment", "sound-wave-1d", "--quiet", "--out", out)
    expect(p.returncode == 2 and "sound_wave_1d.csv" in p.stderr and "symbolic link" in p.stderr,
           f"an experiment's CSV link to nothing: exit {p.returncode}, wanted 2 naming it: {p.stderr.strip()}")
    expect(not os.path.exists(nowhere), "an experiment created its CSV through a link")
    expect(not os.path.exists(os.path.join(out, ".moreau-lock")), "a refused experiment left its lock file")
    fresh = os.path.join(tmp, "experiment_bad_key")
    p = run("experiment", "sound-wave-1d", "--quiet", "--out", fresh, "--set", "experiment.no_such_key=1")
    expect(p.returncode == 2 and not os.path.exists(fresh),
           f"an experiment refused for a bad key left its folder behind (exit {p.returncode})")

    # --- links and devices named like outputs: written through, kept ---
    out = os.path.join(tmp, "special")
    os.makedirs(out)
    outside = os.path.join(tmp, "summary_elsewhere.json")
    with open(outside, "w") as f:
        f.write("old\n")
    os.symlink(outside, os.path.join(out, "summary.json"))
    os.symlink(os.devnull, os.path.join(out, "series.csv"))
    p = run("run", CHAIN, "--quiet", "--out", out, "--set", "simulation.steps=20")
    expect(p.returncode == 0, f"run with linked outputs: exit {p.returncode} {p.stderr.strip()}")
    expect(os.path.islink(os.path.join(out, "summary.json")), "summary.json, a link, was replaced")
    expect(os.path.islink(os.path.join(out, "series.csv")) and os.readlink(os.path.join(out, "series.csv")) == os.devnull,
           "series.csv, a link to /dev/null, was replaced")
    try:
        written = json.load(open(outside))
    except ValueError:
        written = {}
    expect(written.get("last_step") == 20, "summary.json was not written through its link")
    # A link to nothing: refused before the run; no file made through it.
    out = os.path.join(tmp, "dangling")
    os.makedirs(out)
    nowhere = os.path.join(tmp, "made_through_a_link.json")
    os.symlink(nowhere, os.path.join(out, "summary.json"))
    p = run("run", CHAIN, "--quiet", "--out", out, "--set", "simulation.steps=20")
    expect(p.returncode == 2 and len(one_line(p)) == 1 and "summary.json" in p.stderr,
           f"a summary.json link to nothing: exit {p.returncode}, wanted 2 naming it: {p.stderr.strip()}")
    expect(not os.path.exists(nowhere), "a file was created through a summary.json link to nothing")
    expect(not os.path.exists(os.path.join(out, "series.csv")), "the refused run wrote series.csv")

finish("output folder checks passed")
