#!/usr/bin/env python3
"""The layers of the library point one way (docs/engine.md):

    core < model < contact < {cd, md} < analysis < io < sim < experiments

A file of src/LAYER or include/moreau/LAYER may include headers of its own
layer and of layers before it in this list, never of a later one; cd and md
never include each other. Prints every include that breaks this and exits 1.

Usage: check_layers.py MOREAU_BINARY SOURCE_DIR  (the binary is not used)
"""
import pathlib
import re
import sys

ORDER = {"core": 0, "model": 1, "contact": 2, "cd": 3, "md": 3, "analysis": 4, "io": 5, "sim": 6, "experiments": 7}
INCLUDE = re.compile(r'^\s*#\s*include\s+"moreau/(\w+)/')


def layer_of(path: pathlib.Path, root: pathlib.Path) -> str | None:
    rel = path.relative_to(root).parts
    if rel[0] == "src" and len(rel) > 2:
        return rel[1]
    if rel[:2] == ("include", "moreau") and len(rel) > 3:
        return rel[2]
    return None


def main() -> int:
    root = pathlib.Path(sys.argv[2])
    wrong = []
    files = 0
    for path in sorted(list((root / "src").rglob("*")) + list((root / "include" / "moreau").rglob("*"))):
        if not path.is_file() or path.suffix not in (".hpp", ".cpp", ".inc", ".in"):
            continue
        layer = layer_of(path, root)
        if layer not in ORDER:
            continue
        files += 1
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            m = INCLUDE.match(line)
            if not m or m.group(1) == layer:
                continue
            target = m.group(1)
            if target not in ORDER or ORDER[target] >= ORDER[layer]:
                wrong.append(f"{path.relative_to(root)}:{number}: {layer}/ includes {target}/")
    if files < 50:
        print(f"check_layers: only {files} files found under {root}; wrong source directory?")
        return 1
    for w in wrong:
        print(w)
    if wrong:
        print(f"check_layers: {len(wrong)} include(s) against the layer order "
              "core < model < contact < {cd, md} < analysis < io < sim < experiments")
        return 1
    print(f"check_layers: {files} files, every include points down the layers")
    return 0


if __name__ == "__main__":
    sys.exit(main())
