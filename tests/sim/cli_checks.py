"""What the end-to-end checks of tests/sim (check_out_dir.py, check_resume.py)
share: the built program and source folder from the command line, running
the program, recording failures, reading outputs and the closing verdict.

Not a check itself (CMake runs tests/*/check_*.py): each check imports it,
as `from cli_checks import ...`, from its own folder.
"""
import json
import os
import subprocess
import sys

MOREAU, SRC = sys.argv[1], sys.argv[2]
failures = []


def run(*args):
    """The built program with `args`, its output captured as text."""
    return subprocess.run([MOREAU, *args], capture_output=True, text=True, timeout=600)


def expect(cond, what):
    """Records `what` as a failure unless `cond` holds; the check goes on."""
    if not cond:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def summary(out):
    """The summary.json of the run folder `out`."""
    with open(os.path.join(out, "summary.json")) as f:
        return json.load(f)


def example(name):
    """The path of the example scene `name` (examples/NAME)."""
    return os.path.join(SRC, "examples", name)


def finish(passed):
    """Exits 1 with the failures' count if any were recorded, else prints `passed`."""
    if failures:
        print(f"{len(failures)} failure(s)", file=sys.stderr)
        sys.exit(1)
    print(passed)
