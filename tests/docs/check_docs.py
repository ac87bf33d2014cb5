#!/usr/bin/python3
"""The docs follow the program: every experiment and bench that `moreau list`
names has its row in the README's tables and a section in a docs page, and
every figure and page the README and docs/*.md link to exists.

usage: check_docs.py MOREAU_BINARY SOURCE_DIR
"""
import glob
import os
import re
import subprocess
import sys

MOREAU, SOURCE = sys.argv[1], sys.argv[2]
failures = []


def expect(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)


def names(kind):
    out = subprocess.run([MOREAU, "list", kind], capture_output=True, text=True, check=True).stdout
    return [m.group(1) for m in re.finditer(r"^  ([a-z0-9-]+)  —", out, re.M)]


readme = open(os.path.join(SOURCE, "README.md")).read()
pages = {p: open(p).read() for p in glob.glob(os.path.join(SOURCE, "docs", "*.md"))}

experiments = names("experiments")
expect(len(experiments) >= 15, f"moreau list experiments gave {len(experiments)} names")
for name in experiments:
    expect(f"| `{name}` |" in readme, f"README has no table row for experiment {name}")
    heading = re.compile(r"^#+ .*\b" + re.escape(name) + r"\b", re.M)
    expect(any(heading.search(text) for text in pages.values()),
           f"no docs page has a heading naming experiment `{name}`")
for name in names("benches"):
    expect(f"| `{name}` |" in readme, f"README has no table row for bench {name}")

# Every experiment's and bench's own keys: docs/experiment-keys.md is what
# tools/update-experiment-docs writes from the current binary, so a key added,
# removed or changed without the docs following fails here.
import tempfile
with tempfile.TemporaryDirectory() as tmp:
    fresh = os.path.join(tmp, "experiment-keys.md")
    subprocess.run([sys.executable, os.path.join(SOURCE, "tools", "update-experiment-docs"), MOREAU, fresh],
                   check=True)
    current = os.path.join(SOURCE, "docs", "experiment-keys.md")
    expect(os.path.exists(current) and open(current).read() == open(fresh).read(),
           "docs/experiment-keys.md is not current: run tools/update-experiment-docs")

# Links: images and pages, relative to the file that links them.
link = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
for path, text in [(os.path.join(SOURCE, "README.md"), readme)] + list(pages.items()):
    for target in link.findall(text):
        if "://" in target or target.startswith("mailto:"):
            continue
        full = os.path.normpath(os.path.join(os.path.dirname(path), target))
        expect(os.path.exists(full), f"{os.path.relpath(path, SOURCE)} links to missing {target}")

if failures:
    print(f"{len(failures)} failure(s)", file=sys.stderr)
    sys.exit(1)
print(f"docs: OK ({len(experiments)} experiments)")
