#!/usr/bin/python3
"""Reads the output of `moreau run` back with VTK's own XML reader.

    /usr/bin/python3 tests/io/check_vtk.py MOREAU_BINARY SOURCE_DIR
        runs examples/box_3d.ini for 150 steps with a snapshot every 50 and
        checks OUT/series.csv, OUT/summary.json and OUT/vtk/ (run.pvd and
        every grains_*.vtp / contacts_*.vtp / walls_*.vtp it lists; the
        walls' forces and torques against series.csv at the same step).

    /usr/bin/python3 tests/io/check_vtk.py --check-dir OUT
        only checks an existing output folder (no run).

Exits 0 when every check passes, 1 with one line per failure otherwise.
Needs Debian's python3-vtk9, hence /usr/bin/python3.
"""
import csv
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

try:
    from vtkmodules.vtkIOXML import vtkXMLPolyDataReader
except ImportError:  # older layouts only ship the monolithic module
    from vtk import vtkXMLPolyDataReader

SERIES_COLUMNS = ["step", "time", "kinetic_energy", "rotational_energy", "contacts",
                  "iterations", "residual", "mean_overlap", "max_overlap", "stress_xx", "pressure",
                  "packing_fraction", "coordination", "coordination_nonrattlers", "fabric_xx", "fabric_yy",
                  "fabric_zz", "fabric_xy", "fabric_xz", "fabric_yz"]
SUMMARY_KEYS = ["method", "steps", "wall_seconds", "particles", "mean_iterations"]
RUN_STEPS = 150
RUN_VTK_EVERY = 50


class Checker:
    """Collects failures instead of stopping at the first one."""

    def __init__(self):
        self.failures = []

    def check(self, condition, message):
        if not condition:
            self.failures.append(message)
        return condition


def read_polydata(path):
    """Returns (vtkPolyData, errors) read by vtkXMLPolyDataReader."""
    errors = []
    reader = vtkXMLPolyDataReader()
    reader.AddObserver("ErrorEvent", lambda obj, event: errors.append(f"VTK error reading {path}"))
    reader.SetFileName(path)
    reader.Update()
    if reader.GetErrorCode() != 0:
        errors.append(f"VTK error code {reader.GetErrorCode()} reading {path}")
    return reader.GetOutput(), errors


def check_array(ck, data, name, components, tuples, where):
    """The array `name` of `data` (point or cell data) has the right shape."""
    array = data.GetArray(name)
    if not ck.check(array is not None, f"{where}: array '{name}' missing"):
        return None
    ck.check(array.GetNumberOfComponents() == components,
             f"{where}: '{name}' has {array.GetNumberOfComponents()} components, expected {components}")
    ck.check(array.GetNumberOfTuples() == tuples,
             f"{where}: '{name}' has {array.GetNumberOfTuples()} tuples, expected {tuples}")
    return array


def check_grains(ck, path, particles):
    poly, errors = read_polydata(path)
    for e in errors:
        ck.check(False, e)
    n = poly.GetNumberOfPoints()
    if particles is not None:
        ck.check(n == particles, f"{path}: {n} points, summary.json says {particles} particles")
    ck.check(poly.GetNumberOfVerts() == n,
             f"{path}: {poly.GetNumberOfVerts()} vertex cells for {n} points (ParaView would show nothing)")
    pd = poly.GetPointData()
    radius = check_array(ck, pd, "radius", 1, n, path)
    check_array(ck, pd, "velocity", 3, n, path)
    check_array(ck, pd, "angular_velocity", 3, n, path)
    stress = check_array(ck, pd, "stress", 9, n, path)
    if radius is not None and n > 0:
        smallest = min(radius.GetValue(i) for i in range(radius.GetNumberOfTuples()))
        ck.check(smallest > 0, f"{path}: radius {smallest} <= 0")
    loaded = 0
    if stress is not None and stress.GetNumberOfComponents() == 9:
        for i in range(stress.GetNumberOfTuples()):
            t = stress.GetTuple(i)
            if not ck.check(all(math.isfinite(x) for x in t), f"{path}: grain {i} has stress {t}"):
                break
            loaded += t[0] + t[4] + t[8] > 0  # compression positive: a loaded grain has a positive trace
    return n, loaded


def array_values(data, name):
    array = data.GetArray(name) if data is not None else None
    if array is None:
        return None
    return [array.GetTuple(i) for i in range(array.GetNumberOfTuples())]


def check_contacts(ck, path):
    poly, errors = read_polydata(path)
    for e in errors:
        ck.check(False, e)
    lines = poly.GetNumberOfLines()
    ck.check(poly.GetNumberOfCells() == lines,
             f"{path}: {poly.GetNumberOfCells()} cells, of which only {lines} lines")
    ck.check(poly.GetLines().GetNumberOfConnectivityIds() == 2 * lines,
             f"{path}: {lines} lines do not have two points each")
    cd = poly.GetCellData()
    check_array(ck, cd, "normal_force", 3, lines, path)
    check_array(ck, cd, "tangential_force", 3, lines, path)
    ids = []
    for name, vtk_type in (("a", "long long"), ("b", "long long"), ("periodic", "unsigned char")):
        array = check_array(ck, cd, name, 1, lines, path)
        if array is not None:
            ck.check(array.GetDataTypeAsString() in (vtk_type, "vtkIdType" if vtk_type == "long long" else vtk_type),
                     f"{path}: '{name}' is {array.GetDataTypeAsString()}, expected {vtk_type}")
        ids.append([int(v[0]) for v in array_values(cd, name)] if array is not None else None)
    a, b, periodic = ids
    if a is not None and b is not None and periodic is not None and len(a) == len(b) == len(periodic) == lines:
        points = poly.GetPoints()
        for k in range(lines):
            if not ck.check(0 <= a[k] < b[k], f"{path}: line {k} joins bodies a={a[k]}, b={b[k]} (a < b expected)"):
                break
            ck.check(periodic[k] in (0, 1), f"{path}: line {k} has periodic={periodic[k]}")
            # Lines never span the box: at most a contact's length (two of the
            # largest grains, here of diameter about 1, plus a margin).
            p, q = points.GetPoint(2 * k), points.GetPoint(2 * k + 1)
            ck.check(math.dist(p, q) < 2.0, f"{path}: line {k} ({a[k]}-{b[k]}) is {math.dist(p, q)} long")
    return lines


def check_walls(ck, path, series_row, wall_names):
    """Walls: quads with name, index, force and torque; force and torque those of series.csv."""
    poly, errors = read_polydata(path)
    for e in errors:
        ck.check(False, e)
    polys = poly.GetNumberOfPolys()
    ck.check(polys > 0 and poly.GetNumberOfCells() == polys, f"{path}: {poly.GetNumberOfCells()} cells, {polys} polygons")
    ck.check(poly.GetPolys().GetNumberOfConnectivityIds() == 4 * polys, f"{path}: polygons are not quads")
    cd = poly.GetCellData()
    index = check_array(ck, cd, "index", 1, polys, path)
    check_array(ck, cd, "force", 3, polys, path)
    check_array(ck, cd, "torque", 3, polys, path)
    names = cd.GetAbstractArray("name")
    if not ck.check(names is not None and names.GetNumberOfValues() == polys,
                    f"{path}: string array 'name' missing or not one per cell"):
        return
    force, torque = array_values(cd, "force"), array_values(cd, "torque")
    seen = set()
    for k in range(polys):
        name = names.GetValue(k)
        i = int(index.GetTuple1(k)) if index is not None else -1
        ck.check(0 <= i < len(wall_names) and wall_names[i] == name,
                 f"{path}: cell {k} has index {i} and name {name!r}; series.csv's walls are {wall_names}")
        if name in seen or series_row is None or force is None or torque is None:
            continue
        seen.add(name)
        for axis, value in zip(("fx", "fy", "fz", "tx", "ty", "tz"), force[k] + torque[k]):
            column = f"wall_{name}_{axis}"
            ck.check(column in series_row and float(series_row[column]) == value,
                     f"{path}: {name} {axis} = {value}, series.csv says {series_row.get(column)}")
    ck.check(seen == set(wall_names) or series_row is None,
             f"{path}: walls {sorted(seen)} drawn, series.csv has {wall_names}")


def check_vtk_dir(ck, vtk_dir, particles=None, series=None):
    """Checks run.pvd in vtk_dir and every data set it lists; `series` (the
    rows of series.csv by step, and its wall names) for the walls' loads."""
    pvd = os.path.join(vtk_dir, "run.pvd")
    if not ck.check(os.path.isfile(pvd), f"{pvd} missing"):
        return
    try:
        root = ET.parse(pvd).getroot()
    except ET.ParseError as e:
        ck.check(False, f"{pvd}: not well-formed XML ({e})")
        return
    ck.check(root.tag == "VTKFile" and root.get("type") == "Collection",
             f"{pvd}: root is <{root.tag} type={root.get('type')!r}>, expected <VTKFile type='Collection'>")
    datasets = root.findall("./Collection/DataSet")
    if not ck.check(len(datasets) > 0, f"{pvd}: no DataSet entries"):
        return

    grains, contacts, walls = [], [], []  # (time, path)
    for ds in datasets:
        name, part, timestep = ds.get("file"), ds.get("part"), ds.get("timestep")
        if not ck.check(name is not None and timestep is not None,
                        f"{pvd}: DataSet without file or timestep: {ET.tostring(ds).decode().strip()}"):
            continue
        path = os.path.join(vtk_dir, name)
        if not ck.check(os.path.isfile(path), f"{pvd} lists {name}, which does not exist"):
            continue
        base = os.path.basename(name)
        kind = base.split("_")[0]
        ck.check(ds.get("name") == kind, f"{pvd}: {name} has name={ds.get('name')!r}, expected {kind!r} (the block's name)")
        with open(path, "rb") as f:
            head = f.read(4096).decode("latin-1")
        ck.check('compressor="vtkLZ4DataCompressor"' in head and 'format="ascii"' not in head,
                 f"{path}: arrays not binary and LZ4-compressed")
        if base.startswith("grains_"):
            ck.check(part == "0", f"{pvd}: {name} has part={part!r}, expected '0'")
            grains.append((float(timestep), path))
        elif base.startswith("contacts_"):
            ck.check(part == "1", f"{pvd}: {name} has part={part!r}, expected '1'")
            contacts.append((float(timestep), path))
        elif base.startswith("walls_"):
            ck.check(part == "2", f"{pvd}: {name} has part={part!r}, expected '2'")
            walls.append((float(timestep), path))
        else:
            ck.check(False, f"{pvd}: unexpected file {name}")
    ck.check(len(grains) > 0, f"{pvd}: no grains_*.vtp listed")
    ck.check(len(contacts) > 0, f"{pvd}: no contacts_*.vtp listed")
    ck.check(sorted(t for t, _ in grains) == sorted(t for t, _ in contacts),
             f"{pvd}: grains and contacts snapshots are not at the same times")

    loaded = [(t, check_grains(ck, path, particles)[1], path) for t, path in grains]
    line_counts = [(t, check_contacts(ck, path), path) for t, path in contacts]
    if line_counts:
        t, lines, path = max(line_counts)
        ck.check(lines > 0, f"{path}: the last snapshot (t={t}) has no contact lines")
    if loaded:
        t, count, path = max(loaded)
        ck.check(count > 0, f"{path}: the last snapshot (t={t}) has no grain under compression")
    if series is not None and series[1]:
        rows, wall_names = series
        ck.check(sorted(t for t, _ in walls) == sorted(t for t, _ in grains),
                 f"{pvd}: walls and grains snapshots are not at the same times")
        for _, path in walls:
            step = int(os.path.basename(path)[len("walls_"):-len(".vtp")])
            check_walls(ck, path, rows.get(step), wall_names)
    for entry in os.listdir(vtk_dir):
        ck.check(not entry.endswith(".tmp"), f"{vtk_dir}: temporary file {entry} left behind")


def check_output_dir(ck, out_dir):
    """Checks series.csv, summary.json and vtk/ of one `moreau run --out`."""
    particles, series = None, None
    summary_path = os.path.join(out_dir, "summary.json")
    if ck.check(os.path.isfile(summary_path), f"{summary_path} missing"):
        try:
            with open(summary_path) as f:
                summary = json.load(f)
        except (OSError, ValueError) as e:
            ck.check(False, f"{summary_path}: not valid JSON ({e})")
            summary = {}
        for key in SUMMARY_KEYS:
            ck.check(key in summary, f"{summary_path}: key '{key}' missing")
        if isinstance(summary.get("particles"), int):
            particles = summary["particles"]
        else:
            ck.check(False, f"{summary_path}: 'particles' is not an integer")

    series_path = os.path.join(out_dir, "series.csv")
    if ck.check(os.path.isfile(series_path), f"{series_path} missing"):
        with open(series_path, newline="") as f:
            rows = list(csv.reader(f))
        header = rows[0] if rows else []
        for column in SERIES_COLUMNS:
            ck.check(column in header, f"{series_path}: column '{column}' missing from header {header}")
        ck.check(len(rows) > 1, f"{series_path}: no data rows")
        for i, row in enumerate(rows[1:], start=2):
            if not ck.check(len(row) == len(header),
                            f"{series_path}:{i}: {len(row)} fields, header has {len(header)}"):
                break
        # Walls: wall_NAME_fx, _fy, _fz, _tx, _ty, _tz, in body order.
        walls = [c[len("wall_"):-len("_fx")] for c in header if c.startswith("wall_") and c.endswith("_fx")]
        for name in walls:
            for axis in ("fy", "fz", "tx", "ty", "tz"):
                ck.check(f"wall_{name}_{axis}" in header, f"{series_path}: column wall_{name}_{axis} missing")
        by_step = {int(r[0]): dict(zip(header, r)) for r in rows[1:] if len(r) == len(header)}
        series = (by_step, walls)
        for step, row in by_step.items():
            trace = sum(float(row[f"fabric_{a}{a}"]) for a in "xyz")
            ck.check(abs(trace - 1) < 1e-12 or (trace == 0 and float(row["coordination"]) == 0),
                     f"{series_path}: step {step}: the fabric's trace is {trace}, not 1")

    check_vtk_dir(ck, os.path.join(out_dir, "vtk"), particles, series)


def run_moreau(ck, moreau, source_dir, out_dir):
    # 150 steps of dt = 0.002: by t = 0.3 the lowest spheres have fallen ~0.44
    # onto the floor, so the last snapshot has a contact network to check (after
    # 20 steps the loose packing is still in free fall, without a contact).
    scene = os.path.join(source_dir, "examples", "box_3d.ini")
    command = [moreau, "run", scene, "--set", f"simulation.steps={RUN_STEPS}",
               "--set", f"output.vtk_every={RUN_VTK_EVERY}", "--out", out_dir, "--quiet"]
    try:
        done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                              timeout=600)
    except OSError as e:
        ck.check(False, f"cannot start {moreau}: {e}")
        return False
    except subprocess.TimeoutExpired:
        ck.check(False, f"{' '.join(command)} took over 600 s")
        return False
    return ck.check(done.returncode == 0,
                    f"{' '.join(command)} exited with {done.returncode}:\n{done.stderr.strip()}")


def report(ck, what):
    for failure in ck.failures:
        print(f"check_vtk: FAIL: {failure}", file=sys.stderr)
    if ck.failures:
        print(f"check_vtk: {len(ck.failures)} failure(s) in {what}", file=sys.stderr)
        return 1
    print(f"check_vtk: {what}: all checks passed")
    return 0


def main(argv):
    if len(argv) == 3 and argv[1] == "--check-dir":
        ck = Checker()
        check_output_dir(ck, argv[2])
        return report(ck, argv[2])
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    moreau, source_dir = argv[1], argv[2]
    out_dir = tempfile.mkdtemp(prefix="moreau_check_vtk_")
    ck = Checker()
    ran = run_moreau(ck, moreau, source_dir, out_dir)
    if ran:
        check_output_dir(ck, out_dir)
    def paraview_present():
        # pvbatch and its Python module (Debian's paraview and python3-paraview; the
        # latter replaces python3-vtk9, so a test machine usually has pvbatch alone).
        if not (shutil.which("pvbatch") and shutil.which("xvfb-run")):
            return False
        for _ in range(2):  # Xvfb sometimes aborts at start: once more
            p = subprocess.run(["xvfb-run", "-a", "pvbatch", "-c", "import paraview.simple"], capture_output=True,
                               text=True, timeout=300)
            if p.returncode == 0:
                return True
            if "No module named" in p.stderr:
                return False
        return False

    if ran and paraview_present():
        # Where ParaView is installed: tools/paraview/standard_view.py renders the run.
        picture = os.path.join(out_dir, "view.png")
        script = os.path.join(source_dir, "tools", "paraview", "standard_view.py")
        for _ in range(2):  # Xvfb sometimes aborts at start: once more
            p = subprocess.run(["xvfb-run", "-a", "pvbatch", script, out_dir, picture], capture_output=True, text=True,
                               timeout=600)
            if p.returncode == 0:
                break
        ck.check(p.returncode == 0 and os.path.getsize(picture) > 10000 if os.path.exists(picture) else False,
                 f"tools/paraview/standard_view.py did not render {picture}: {p.stderr[-300:]}")
    status = report(ck, out_dir)
    if status == 0 or not ran:
        shutil.rmtree(out_dir, ignore_errors=True)
    else:
        print(f"check_vtk: output kept in {out_dir} for inspection", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
