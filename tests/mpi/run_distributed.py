"""Distributed runs (docs/distributed.md): `mpirun -np N moreau run` gives the
serial run's bits for N = 2 and 3, on a walled box cut across gravity, on
a cell whose periodic axis the ranks' bricks cut, on a Lees–Edwards shear
cell, on a shear cell with glued plates, a mobile lid or a servo lid and on
a triaxial cell under a stress servo, and on Lees–Edwards cells in 2D and
3D; grains migrate on the way. Clumps (MD) in 3D and in 2D on a mobile
floor give the serial bits on 2 and 3 ranks, their orientations included
(the last VTK snapshot, as VTK pieces on 3 ranks), and a checkpoint of
theirs on 2 ranks resumes on 3 and on one process.
CD with cd.distributed = exact gives the serial random-keys run's series.csv
on 2 and 3 ranks; domains runs and repeats its bits. VTK pieces
(output.vtk_pieces) hold the serial snapshot. A SIGTERM to mpirun stops the
ranks with a checkpoint that resumes on another rank count; a SIGINT (to
mpirun, or to the ranks) stops them too, summary.json naming the signal; a
divergence leaves the serial run's last-good checkpoint. Every MD scheme steps on
ranks. summary.json's phase_seconds: the mean over the ranks and the slowest
rank's. Round grains from a scene file: each rank builds its brick's
grains alone (summary.json: distributed.input "bricks"). Bad input gives
one line and exit 2; so do clumps with what cannot step them, on ranks, and
the start's checks over the ranks give the serial run's line.

usage: run_distributed.py MOREAU MPIEXEC SOURCE_DIR
"""
import atexit
import csv
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

moreau, mpiexec, source = sys.argv[1], sys.argv[2], sys.argv[3]
failures = []


def mpi(n):
    # As root in a container Open MPI wants both flags; two cores run three ranks oversubscribed.
    return [mpiexec, "--allow-run-as-root", "--oversubscribe", "-np", str(n)]


def run(prefix, scene, out, sets, extra_env=None):
    args = prefix + [moreau, "run", scene, "--out", out, "--quiet"]
    for s in sets:
        args += ["--set", s]
    env = dict(os.environ, OMP_NUM_THREADS="1", **(extra_env or {}))
    return subprocess.run(args, capture_output=True, text=True, env=env, timeout=300)


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def snapshot(folder, step):
    """The grains (by id) and contacts (by ids a, b) of a VTK snapshot: the
    grains_/contacts_ files, or with output.vtk_pieces their .pvtp files."""
    import numpy as np
    from vtkmodules.util.numpy_support import vtk_to_numpy
    from vtkmodules.vtkIOXML import vtkXMLPPolyDataReader, vtkXMLPolyDataReader

    def read(kind):
        name = os.path.join(folder, f"{kind}_{step:06d}")
        pieces = os.path.exists(name + ".pvtp")
        reader = vtkXMLPPolyDataReader() if pieces else vtkXMLPolyDataReader()
        reader.SetFileName(name + (".pvtp" if pieces else ".vtp"))
        reader.Update()
        return reader.GetOutput()

    grains, contacts = read("grains"), read("contacts")
    # With clumps: their orientations and each contact's point.
    point, cell = grains.GetPointData(), contacts.GetCellData()
    g = {k: vtk_to_numpy(point.GetArray(k)) for k in ("id", "velocity", "stress", "orientation") if point.HasArray(k)}
    g["points"] = vtk_to_numpy(grains.GetPoints().GetData())
    order = np.argsort(g["id"])
    c = {k: vtk_to_numpy(cell.GetArray(k)) for k in ("a", "b", "normal_force", "tangential_force", "contact_point")
         if cell.HasArray(k)}
    pairs = np.lexsort((c["b"], c["a"]))
    return {**{k: v[order] for k, v in g.items()}, **{"contact_" + k: v[pairs] for k, v in c.items()}}


def shapes_of(folder, step):
    """The shapes' part of a snapshot (shapes_ .vtp, or with output.vtk_pieces
    its .pvtp): each cell's grain id and its points (a component sphere's
    centre and radius, a polygon's outline), by id, the cells of one grain
    in their order."""
    import numpy as np
    from vtkmodules.util.numpy_support import vtk_to_numpy
    from vtkmodules.vtkIOXML import vtkXMLPPolyDataReader, vtkXMLPolyDataReader
    name = os.path.join(folder, f"shapes_{step:06d}")
    pieces = os.path.exists(name + ".pvtp")
    reader = vtkXMLPPolyDataReader() if pieces else vtkXMLPolyDataReader()
    reader.SetFileName(name + (".pvtp" if pieces else ".vtp"))
    reader.Update()
    data = reader.GetOutput()
    points = vtk_to_numpy(data.GetPoints().GetData()) if data.GetNumberOfPoints() else np.zeros((0, 3))
    cells = []
    if data.GetCellData().HasArray("id"):  # polygons: an outline per cell
        ids = vtk_to_numpy(data.GetCellData().GetArray("id"))
        for c in range(data.GetNumberOfCells()):
            p = data.GetCell(c).GetPointIds()
            cells.append((int(ids[c]), points[[p.GetId(k) for k in range(p.GetNumberOfIds())]].tobytes()))
    else:  # clumps: a component sphere per point
        ids = vtk_to_numpy(data.GetPointData().GetArray("id"))
        radius = vtk_to_numpy(data.GetPointData().GetArray("radius"))
        cells = [(int(ids[k]), points[k].tobytes() + radius[k].tobytes()) for k in range(len(ids))]
    return sorted(cells, key=lambda c: c[0]), pieces


def fclib_digest(path):
    # A fixed-order solve of the dumped problem: the same problem gives the
    # same sweeps and error bits; with the stored solution's error.
    r = subprocess.run([moreau, "bench", "fclib", "--set", f"bench.problem={path}", "--set", "cd.order=fixed",
                        "--set", "cd.criterion=natural", "--set", "cd.epsilon=1e-8"], capture_output=True, text=True,
                       timeout=120)
    if r.returncode != 0:
        return {"error": r.stderr.strip()[:200]}
    res = json.loads(r.stdout)["results"]
    return {k: res.get(k) for k in ("contacts", "sweeps", "error", "stored_solution_error", "stored_solution_fclib_merit")}


def same_snapshot(a, b):
    import numpy as np
    return a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)


def children(pid):
    """The processes whose parent is `pid` (mpirun's ranks)."""
    kids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    stat = f.read()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                kids.append(int(entry))
    return kids


def stop_by_sigint(tmp):
    """Ctrl-C. A terminal's SIGINT reaches mpirun alone (Open MPI starts the
    ranks in process groups of their own); Open MPI's mpirun then sends the
    ranks SIGTERM and exits 1 itself, whatever they return. The ranks stop as
    a serial run does: a checkpoint, summary.json "status": "stopped" with
    the signal they got. A SIGINT that reaches the ranks themselves (a
    launcher that passes it on) is reported as SIGINT, and their exit 130
    comes through mpirun."""
    scene = os.path.join(source, "examples", "piston_2d.ini")
    for target in ("mpirun", "ranks"):
        out = os.path.join(tmp, "sigint-" + target)
        args = mpi(2) + [moreau, "run", scene, "--out", out, "--quiet"]
        for k in ["simulation.method=md", "md.substeps=1", "simulation.dt=0.01", "simulation.steps=100000000",
                  "output.every=100"]:
            args += ["--set", k]
        proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=dict(os.environ, OMP_NUM_THREADS="1"))
        deadline = time.time() + 120
        while not os.path.exists(os.path.join(out, "series.csv")) and time.time() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)
        if target == "mpirun":
            proc.send_signal(signal.SIGINT)
        else:
            for pid in children(proc.pid):
                os.kill(pid, signal.SIGINT)
        _, err = proc.communicate(timeout=120)
        path = os.path.join(out, "summary.json")
        summary = json.load(open(path)) if os.path.exists(path) else {}
        got = (summary.get("status"), summary.get("signal"), os.path.exists(os.path.join(out, "checkpoint")))
        if target == "mpirun":
            check(got[0] == "stopped" and got[1] in ("SIGINT", "SIGTERM") and got[2] and proc.returncode in (1, 130, 143),
                  f"SIGINT to mpirun: the ranks stop with a checkpoint and summary.json's signal (status, signal, "
                  f"checkpoint: {got}; mpirun exit {proc.returncode}; {err.strip()[:200]})")
        else:
            check(got == ("stopped", "SIGINT", True) and proc.returncode == 130,
                  f"SIGINT to the ranks: summary.json says SIGINT, mpirun exits 130 (status, signal, checkpoint: "
                  f"{got}; mpirun exit {proc.returncode})")


# Columns that come from the whole world alone: the serial bits.
WORLD_COLUMNS = ["step", "time", "kinetic_energy", "rotational_energy", "stress_xx", "stress_yy", "stress_zz",
                 "stress_xy", "pressure", "packing_fraction", "coordination", "contacts", "fabric_xx", "fabric_xy"]

SHEAR = os.path.join(source, "examples", "shear_cell_2d.ini")
TRIAXIAL = os.path.join(source, "examples", "triaxial_3d.ini")
SERVO = ["wall.lid.mobile=false", "wall.lid.force=0 0 0", "wall.lid.servo_stress=0.005", "wall.lid.servo_gain=2",
         "wall.lid.servo_max_speed=0.01", "wall.lid.servo_time=50"]

# A packing file of 400 grains (rows 'id x y z radius', radii 0.4 to 0.5
# and centres off a 4 x 4 x 25 lattice by the golden ratio's digits; a
# comment first, comments after some rows, blank lines among them): each
# rank reads its share of the rows (its share of the bytes, from a line's
# start) and sends them to the ranks that build them.
PACKED = os.path.join(tempfile.mkdtemp(prefix="moreau_packed_"), "packed.txt")
atexit.register(shutil.rmtree, os.path.dirname(PACKED), True)
with open(PACKED, "w") as f:
    f.write("# id x y z radius\n")
    for i in range(400):
        u = (i * 0.6180339887498949) % 1.0
        f.write(f"{i + 1} {1.2 + 1.05 * (i % 4) + 0.05 * u} {1.2 + 1.05 * (i // 4 % 4)} "
                f"{1.2 + 1.05 * (i // 16) + 0.05 * (1 - u)} {0.4 + 0.1 * u:.6f}" + ("  # a row\n" if i % 7 else "\n\n"))
# Fewer rows than ranks: some ranks read none.
TWO_NAME = "box_3d from a packing file of two grains"
TWO = os.path.join(os.path.dirname(PACKED), "two.txt")
with open(TWO, "w") as f:
    f.write("1.2 1.2 1.2 0.45\n3.0 1.3 1.25 0.45\n")

cases = [
    ("box_3d (walls, bricks across gravity)", os.path.join(source, "examples", "box_3d.ini"),
     ["simulation.method=md", "md.substeps=1", "simulation.dt=3e-4", "simulation.steps=1500",
      "output.vtk_every=0", "output.every=100", "random.count=400", "random.box_max=11 11 24"]),
    ("periodic cell (bricks across the periodic x)", os.path.join(source, "tests", "mpi", "periodic_3d.ini"), []),
    ("box_3d from a packing file", os.path.join(source, "examples", "box_3d.ini"),
     ["simulation.method=md", "md.substeps=1", "simulation.dt=3e-4", "simulation.steps=1500", "output.vtk_every=0",
      "output.every=100", "grains.source=file", f"packing.file={PACKED}"]),
    (TWO_NAME, os.path.join(source, "examples", "box_3d.ini"),
     ["simulation.method=md", "md.substeps=1", "simulation.dt=3e-4", "simulation.steps=1500", "output.vtk_every=0",
      "output.every=100", "grains.source=file", f"packing.file={TWO}", "grains.velocity=6 0 0"]),
    # A jittered lattice: each rank makes its grains, jitter and all, from
    # their indices (latticeGrain skips to their draws of the one stream).
    ("box_3d from a jittered lattice", os.path.join(source, "examples", "box_3d.ini"),
     ["simulation.method=md", "md.substeps=1", "simulation.dt=3e-4", "simulation.steps=1500", "output.vtk_every=0",
      "output.every=100", "grains.source=lattice", "lattice.type=cubic", "lattice.counts=5 5 14", "lattice.radius=0.45",
      "lattice.spacing=0.2", "lattice.jitter=0.2", "lattice.origin=1.2 1.2 1.2"]),
    # A mobile piston: its force is summed over the ranks in key order.
    ("piston_2d, MD (a mobile piston, bricks in x-y)", os.path.join(source, "examples", "piston_2d.ini"),
     ["simulation.method=md", "md.substeps=1", "simulation.dt=0.01", "simulation.steps=20000", "output.every=2000"]),
    # A multi-stage scheme: the ghosts take every stage's state from their owners.
    ("periodic cell, rk with hertz and kuhn", os.path.join(source, "tests", "mpi", "periodic_3d.ini"),
     ["md.integrator=rk", "md.normal=hertz", "md.tangential=kuhn", "simulation.steps=1000"]),
    # A multi-step scheme: each grain's history goes with it, and the test
    # for contacts that open or close (a restart) counts every rank's.
    ("periodic cell, ab3-am4 (multi-step history)", os.path.join(source, "tests", "mpi", "periodic_3d.ini"),
     ["md.integrator=ab3-am4", "simulation.steps=1000"]),
    # Force derivatives (Taylor, Gear) and fixed points (Khakimov, the
    # implicit kick of BABAB): the ghosts' entries of each field a derivative
    # reads come from their owners, the convergence tests take every rank's
    # bodies. The cell is dense enough by step 1500 that a ghost's own
    # acceleration differs from its owner's (without the exchange the hashes
    # differ: tried).
    ("periodic cell, gear5 (derivatives)", os.path.join(source, "tests", "mpi", "periodic_3d.ini"),
     ["md.integrator=gear5"]),
    ("periodic cell, t16 (da/dr, a fixed point)", os.path.join(source, "tests", "mpi", "periodic_3d.ini"),
     ["md.integrator=t16"]),
    ("periodic cell, babab (implicit kick)", os.path.join(source, "tests", "mpi", "periodic_3d.ini"),
     ["md.integrator=babab"]),
    # Substeps (box_3d's md.substeps = 10): the ghosts are updated before each.
    ("box_3d, MD with 10 substeps", os.path.join(source, "examples", "box_3d.ini"),
     ["simulation.method=md", "simulation.steps=1200", "output.every=100", "random.count=600"]),
    # Lees–Edwards: the bricks cut the sheared cell along z alone.
    ("Lees–Edwards shear cell (bricks along z)", os.path.join(source, "tests", "mpi", "lees_edwards_3d.ini"), []),
    # Grains glued to the floor and to a mobile lid: the lid's force takes
    # the glued grains' forces from their owners, in grain order.
    ("shear cell, MD (glued grains, a mobile lid)", SHEAR, ["simulation.method=md", "simulation.steps=150"]),
    # A servo lid: it reads its load summed over the ranks before each step.
    ("shear cell, MD with a servo lid", SHEAR, ["simulation.method=md", "simulation.steps=250"] + SERVO),
    # A periodic cell shortened along x while a servo holds the lateral
    # stresses: the cuts follow the cell, the servo reads the stress summed
    # over the ranks.
    ("triaxial cell, MD (strain rate and a stress servo)", TRIAXIAL,
     ["simulation.method=md", "md.substeps=70", "simulation.steps=300"]),
    # Lees–Edwards in 2D under a stress servo on L_y: the bricks cut y, the
    # gradient direction, through the offset seam.
    ("Lees–Edwards 2D with a servo (bricks along y)", os.path.join(source, "examples", "lees_edwards_2d.ini"),
     ["simulation.method=md", "simulation.steps=400", "output.every=50"]),
    # A mobile piston under position Verlet: each evaluation's force on it is
    # summed over the ranks.
    ("piston_2d, MD with pv (a mobile piston)", os.path.join(source, "examples", "piston_2d.ini"),
     ["simulation.method=md", "md.integrator=pv", "md.substeps=1", "simulation.dt=0.01", "simulation.steps=16000",
      "output.every=2000"]),
]
# Clumps (MD): tetrahedral clusters thrown onto the floor of a box (3D),
# L-shaped trimers of disks poured onto a mobile floor (2D; its weight
# held up by a force): the floor's force is summed over the ranks with a
# clump's several contacts with it in key order, their components told
# apart (keys without them give other bits: tried). A snapshot at the last
# step: the orientations, contact points and component spheres against the
# serial run's.
CLUMPS_3D = os.path.join(source, "examples", "clumps_3d.ini")
CLUMPS_2D = os.path.join(source, "examples", "clumps_2d.ini")
CLUMPS_2D_SETS = ["simulation.steps=600", "output.every=50", "output.vtk_every=600", "wall.floor.mobile=true",
                  "wall.floor.mass=1e4", "wall.floor.free=y", "wall.floor.force=0 98100 0"]
CLUMPS_2D_NAME = "clumps_2d (trimers of disks on a mobile floor)"
# Clumps whose frame origin is off their centroid (two spheres), from a
# packing file with a unit quaternion per row (each rank reads its share of the rows),
# and from a jittered lattice oriented from each grain's index.
CLUMPED = os.path.join(os.path.dirname(PACKED), "clumps.txt")
with open(CLUMPED, "w") as f:
    for i in range(200):
        a, b = (i * 0.618034) % 1.0 * 2 * math.pi, (i * 0.414214) % 1.0 * math.pi
        q = (math.cos(a / 2), math.sin(a / 2) * math.sin(b), math.sin(a / 2) * math.cos(b) * 0.6,
             math.sin(a / 2) * math.cos(b) * 0.8)
        f.write(f"{1.5 + 1.6 * (i % 5)} {1.5 + 1.6 * (i // 5 % 5)} {1.5 + 1.6 * (i // 25)} 0.7 "
                + " ".join(f"{c:.17g}" for c in q) + "\n")
PAIR = "clump.spheres=0 0 0 0.4; 0.5 0 0 0.3"
cases += [
    ("clumps_3d (tumbling clumps thrown onto a floor)", CLUMPS_3D,
     ["simulation.steps=300", "output.every=50", "output.vtk_every=300", "grains.velocity=0 0 -6"]),
    ("clumps_3d from a packing file (frames off the centroid)", CLUMPS_3D,
     ["simulation.steps=300", "output.every=50", "output.vtk_every=0", "grains.source=file",
      f"packing.file={CLUMPED}", PAIR]),
    ("clumps_3d from a jittered lattice", CLUMPS_3D,
     ["simulation.steps=300", "output.every=50", "output.vtk_every=0", "grains.source=lattice", "lattice.type=cubic",
      "lattice.counts=5 5 8", "lattice.radius=0.6", "lattice.spacing=0.4", "lattice.jitter=0.1",
      "lattice.origin=1.5 1.5 1.5", PAIR]),
    (CLUMPS_2D_NAME, CLUMPS_2D, CLUMPS_2D_SETS),
    # CD with clumps, exact mode: the serial rows (arms, blocks, the serial
    # order) replayed across the ranks.
    ("clumps_2d in CD, exact (trimers thrown onto the floor)", CLUMPS_2D,
     ["simulation.method=cd", "cd.distributed=exact", "cd.order=random-keys", "random.count=150",
      "grains.velocity=0 -8 0", "simulation.steps=300", "output.every=50", "output.vtk_every=300"], (2,)),
]
# Polygons (docs/polygons.md): irregular hexagons (each its own shape) under
# a piston; MD (one overlap contact per pair) and CD exact (vertex-edge
# points, several per pair), each against the serial run's snapshot.
POLYGONS_2D = os.path.join(source, "examples", "polygons_2d.ini")
# Triangles whose frame is not their centroid, from a packing file of
# 'x y z size angle' rows (each rank reads its share of the rows).
POLYGONED = os.path.join(os.path.dirname(PACKED), "polygons.txt")
with open(POLYGONED, "w") as f:
    for i in range(60):
        f.write(f"{1.0 + 1.5 * (i % 6)} {1.0 + 1.45 * (i // 6)} 0 0.6 {(i * 0.618034) % 1.0 * 6.283:.17g}\n")
cases += [
    ("polygons_2d from a packing file (triangles, frames off the centroid)", POLYGONS_2D,
     ["simulation.method=md", "simulation.steps=600", "output.every=50", "output.vtk_every=0", "grains.source=file",
      f"packing.file={POLYGONED}", "polygon.irregularity=0", "polygon.shape=0 0; 1 0; 0.2 0.9"]),
    ("polygons_2d in MD (irregular hexagons falling into a box)", POLYGONS_2D,
     ["simulation.method=md", "random.count=80", "grains.velocity=0 -6 0", "simulation.steps=600",
      "output.every=50", "output.vtk_every=600"]),
    ("polygons_2d in CD, exact", POLYGONS_2D,
     ["cd.distributed=exact", "cd.order=random-keys", "random.count=80", "grains.velocity=0 -6 0",
      "simulation.steps=400", "output.every=50", "output.vtk_every=400"], (2,)),
]


def last_snapshot(sets):
    """The step of the last VTK snapshot a case asks for (output.vtk_every = simulation.steps), or None."""
    keys = dict(x.split("=", 1) for x in sets)
    every = int(keys.get("output.vtk_every", "0"))
    return every if every > 0 and every == int(keys.get("simulation.steps", "-1")) else None


serial_snapshots = {}  # case name: (state_hash, the last snapshot)
with tempfile.TemporaryDirectory() as tmp:
    for name, scene, sets, *counts in cases:
        serial_dir = os.path.join(tmp, "serial")
        r = run([], scene, serial_dir, sets)
        check(r.returncode == 0, f"{name}: the serial run completes ({r.stderr.strip()[:200]})")
        serial = json.load(open(os.path.join(serial_dir, "summary.json")))
        check(serial.get("ranks") == 1, f"{name}: a serial summary says ranks 1")
        rows = list(csv.DictReader(open(os.path.join(serial_dir, "series.csv"))))
        step = last_snapshot(sets)
        if step:
            whole = snapshot(os.path.join(serial_dir, "vtk"), step)
            serial_snapshots[name] = (serial["state_hash"], whole)
        for n in (counts[0] if counts else (2, 3)):
            out = os.path.join(tmp, f"np{n}")
            # The snapshot as the ranks' VTK pieces on 3 ranks.
            # Pieces (the default on ranks) on 3, the gathered serial files on 2.
            r = run(mpi(n), scene, out, sets + (["output.vtk_pieces=false"] if step and n == 2 else []))
            check(r.returncode == 0, f"{name}: {n} ranks complete ({r.stderr.strip()[:300]})")
            if r.returncode != 0:
                continue
            summary = json.load(open(os.path.join(out, "summary.json")))
            check(summary["state_hash"] == serial["state_hash"],
                  f"{name}: {n} ranks give the serial state_hash {serial['state_hash']} "
                  f"(got {summary['state_hash']})")
            check(summary["ranks"] == n, f"{name}: summary.json says ranks {n}")
            d = summary["distributed"]
            # A scene file's grains, whatever their shape: each rank builds
            # its brick's grains alone.
            check(d.get("input") == "bricks", f"{name}: {n} ranks build their bricks alone (input {d.get('input')})")
            # Two grains: the cuts follow them (a rebalance) before either could migrate.
            moved = d["migrations"] > 0 or (name == TWO_NAME and d["rebalances"] > 0)
            check(d["rebuilds"] > 0 and moved and d["ghosts"] > 0,
                  f"{name}: {n} ranks rebuilt, migrated grains and held ghosts ({d})")
            # Rows, snapshots in pieces (the shapes' too: clumps' spheres,
            # polygons' outlines) and the summary come from the ranks' parts:
            # rank 0 never gathers the world (but for the serial files).
            if not (step and n == 2):
                check(d.get("world_gathers") == 0, f"{name}: {n} ranks write their rows, snapshots and summary "
                                                   f"without gathering the world (world_gathers {d.get('world_gathers')})")
            # phase_seconds: the mean over the ranks (solve's parts are in solve), and the slowest rank's.
            mean, most = summary.get("phase_seconds", {}), d.get("phase_seconds_max", {})
            # Parts of a stage (solve_*, integrate_forces) are in it already.
            total = sum(v for k, v in mean.items() if not k.startswith("solve_") and k != "integrate_forces")
            names = {"detect", "solve", "integrate", "exchange", "rebuild", "wait", "gather"}
            check(names <= mean.keys() == most.keys()
                  and all(v >= 0 and most[k] >= v - 1e-9 for k, v in mean.items())
                  and total <= 1.01 * summary["wall_seconds"] + 0.01,
                  f"{name}: {n} ranks: phase_seconds each non-negative, at most the slowest rank's, summing to at "
                  f"most wall_seconds {summary['wall_seconds']} ({mean})")
            if summary.get("md_pipeline") == "fused":
                same = open(os.path.join(out, "series.csv")).read() == open(os.path.join(serial_dir, "series.csv")).read()
                check(same, f"{name}: {n} ranks write the serial series.csv, byte for byte")
            else:
                got = list(csv.DictReader(open(os.path.join(out, "series.csv"))))
                columns = WORLD_COLUMNS + [c for c in rows[0] if c.startswith("wall_")]
                same = len(got) == len(rows) and all(a[c] == b[c] for a, b in zip(rows, got) for c in columns)
                check(same, f"{name}: {n} ranks write the serial series.csv rows in {', '.join(WORLD_COLUMNS)} "
                            f"and the walls' (staged pipeline)")
            if step:
                got = snapshot(os.path.join(out, "vtk"), step)
                # The component spheres or outlines: the serial file's, each
                # rank's own grains' in its piece (3 ranks) or from the
                # gathered world (2 ranks, output.vtk_pieces = false).
                (want_shapes, _), (got_shapes, pieced) = (shapes_of(os.path.join(d, "vtk"), step)
                                                          for d in (serial_dir, out))
                check(same_snapshot(whole, got) and "orientation" in got and got_shapes == want_shapes
                      and len(got_shapes) >= len(got["id"]) and pieced == (n == 3),  # the clumps' and polygons' cases
                      f"{name}: {n} ranks' snapshot of step {step} is the serial one (grains, orientations, "
                      f"{len(got['contact_a'])} contacts, {len(got_shapes)} shapes{', VTK pieces' if n == 3 else ''})")

    # Checkpoints are a serial run's: written on 2 ranks, resumed on 3 and on
    # one process; a serial one resumed on 2 ranks. Each ends in the bits of
    # the uninterrupted run.
    scene = os.path.join(source, "tests", "mpi", "periodic_3d.ini")
    full = os.path.join(tmp, "full")
    run([], scene, full, ["simulation.steps=800"])
    want = json.load(open(os.path.join(full, "summary.json")))["state_hash"]
    for writer, readers in ((2, (3, 1)), (1, (2,))):
        for reader in readers:
            out = os.path.join(tmp, f"ckpt_{writer}_{reader}")
            r = run(mpi(writer) if writer > 1 else [], scene, out,
                    ["simulation.steps=400", "output.checkpoint_every=400"])
            check(r.returncode == 0 and os.path.exists(os.path.join(out, "checkpoint")),
                  f"{writer} rank(s) write a checkpoint at step 400 ({r.stderr.strip()[:200]})")
            if writer > 1:
                # In parts: each rank its own file, rank 0 the one listing them,
                # and no rank gathered the world for it.
                names = sorted(f for f in os.listdir(out) if f.startswith("checkpoint."))
                gathers = json.load(open(os.path.join(out, "summary.json")))["distributed"]["world_gathers"]
                check(names == [f"checkpoint.000400.p{k}" for k in range(writer)] and gathers == 0,
                      f"{writer} ranks write their checkpoint in parts ({names}), no world gathered ({gathers})")
            args = (mpi(reader) if reader > 1 else []) + [moreau, "run", "--resume", out, "--set",
                                                          "simulation.steps=800", "--quiet"]
            r = subprocess.run(args, capture_output=True, text=True, timeout=300,
                               env=dict(os.environ, OMP_NUM_THREADS="1"))
            got = json.load(open(os.path.join(out, "summary.json"))).get("state_hash") if r.returncode == 0 else None
            check(got == want, f"a checkpoint of {writer} rank(s) resumed on {reader} gives the uninterrupted "
                               f"state_hash {want} (got {got}; {r.stderr.strip()[:200]})")
            # The run's own checkpoint at 800 replaced it: the step-400 parts went.
            names = sorted(f for f in os.listdir(out) if f.startswith("checkpoint."))
            want_names = [f"checkpoint.000800.p{k}" for k in range(reader)] if reader > 1 else []
            check(names == want_names, f"resumed on {reader}: its checkpoint at 800 leaves {want_names} ({names})")
    # Irregular polygons, each its own shape: a rank's parts and files hold
    # its grains' shapes alone (the main file none), which go with the
    # grains; written on 2 ranks and resumed on 3 and on one process, and a
    # serial checkpoint (the whole table) resumed on 2.
    shaped = ["simulation.method=md", "random.count=80", "grains.velocity=0 -6 0", "output.vtk_every=0"]
    polygons_full = os.path.join(tmp, "polygons_full")
    run([], POLYGONS_2D, polygons_full, shaped + ["simulation.steps=600"])
    want = json.load(open(os.path.join(polygons_full, "summary.json")))["state_hash"]
    for writer, readers in ((2, (3, 1)), (1, (2,))):
        for reader in readers:
            out = os.path.join(tmp, f"polygons_ckpt_{writer}_{reader}")
            r = run(mpi(writer) if writer > 1 else [], POLYGONS_2D, out,
                    shaped + ["simulation.steps=300", "output.checkpoint_every=300"])
            migrated = json.load(open(os.path.join(out, "summary.json"))).get("distributed", {}).get("migrations", 1)
            r = subprocess.run((mpi(reader) if reader > 1 else []) + [moreau, "run", "--resume", out, "--set",
                                                                     "simulation.steps=600", "--quiet"],
                               capture_output=True, text=True, timeout=300, env=dict(os.environ, OMP_NUM_THREADS="1"))
            got = json.load(open(os.path.join(out, "summary.json"))).get("state_hash") if r.returncode == 0 else None
            check(got == want and migrated > 0,
                  f"irregular polygons: a checkpoint of {writer} rank(s) resumed on {reader} gives the uninterrupted "
                  f"state_hash {want} (got {got}, {migrated} migrations before it; {r.stderr.strip()[:200]})")

    # A part missing: the resume is refused, one line naming the part, exit 2.
    out = os.path.join(tmp, "ckpt_missing")
    run(mpi(2), scene, out, ["simulation.steps=400", "output.checkpoint_every=400"])
    os.remove(os.path.join(out, "checkpoint.000400.p1"))
    r = subprocess.run(mpi(2) + [moreau, "run", "--resume", out, "--set", "simulation.steps=800", "--quiet"],
                       capture_output=True, text=True, timeout=300, env=dict(os.environ, OMP_NUM_THREADS="1"))
    lines = [x for x in r.stderr.splitlines() if x.startswith("moreau:")]
    check(r.returncode == 2 and len(lines) == 1 and "checkpoint.000400.p1" in lines[0],
          f"a checkpoint part missing: one line naming it, exit 2 (exit {r.returncode}: {r.stderr.strip()[:300]})")

    # A multi-step scheme's history is in the checkpoint: 2 ranks write it,
    # 3 resume it to the uninterrupted run's bits.
    ab3 = ["md.integrator=ab3"]
    run([], scene, full, ab3 + ["simulation.steps=800"])
    want = json.load(open(os.path.join(full, "summary.json")))["state_hash"]
    out = os.path.join(tmp, "ckpt_ab3")
    run(mpi(2), scene, out, ab3 + ["simulation.steps=400", "output.checkpoint_every=400"])
    r = subprocess.run(mpi(3) + [moreau, "run", "--resume", out, "--set", "simulation.steps=800", "--quiet"],
                       capture_output=True, text=True, timeout=300, env=dict(os.environ, OMP_NUM_THREADS="1"))
    got = json.load(open(os.path.join(out, "summary.json"))).get("state_hash") if r.returncode == 0 else None
    check(got == want, f"ab3: a checkpoint of 2 ranks resumed on 3 gives the uninterrupted state_hash {want} "
                       f"(got {got}; {r.stderr.strip()[:200]})")

    # Clumps: a checkpoint of 2 ranks (the shapes, each body's shape, size
    # and orientation) resumes on 3 ranks and on one process to the
    # uninterrupted serial run's bits and last snapshot.
    if CLUMPS_2D_NAME in serial_snapshots:
        want, whole = serial_snapshots[CLUMPS_2D_NAME]
        first = os.path.join(tmp, "ckpt_clumps")
        r = run(mpi(2), CLUMPS_2D, first, CLUMPS_2D_SETS + ["simulation.steps=300", "output.checkpoint_every=300"])
        check(r.returncode == 0 and os.path.exists(os.path.join(first, "checkpoint")),
              f"clumps_2d: 2 ranks write a checkpoint at step 300 ({r.stderr.strip()[:200]})")
        for reader in (3, 1):
            out = os.path.join(tmp, f"ckpt_clumps_{reader}")
            shutil.copytree(first, out)
            r = subprocess.run((mpi(reader) if reader > 1 else []) +
                               [moreau, "run", "--resume", out, "--set", "simulation.steps=600", "--quiet"],
                               capture_output=True, text=True, timeout=300, env=dict(os.environ, OMP_NUM_THREADS="1"))
            got = json.load(open(os.path.join(out, "summary.json"))).get("state_hash") if r.returncode == 0 else None
            same = r.returncode == 0 and same_snapshot(whole, snapshot(os.path.join(out, "vtk"), 600))
            check(got == want and same, f"clumps_2d: a checkpoint of 2 ranks resumed on {reader} gives the "
                                        f"uninterrupted state_hash {want} and snapshot (got {got}, snapshot "
                                        f"{'the same' if same else 'differs'}; {r.stderr.strip()[:200]})")

    # A stop by SIGTERM sent to mpirun: it passes the signal on, the ranks
    # stop together after the same step with a checkpoint, and that resumes
    # on another rank count with the uninterrupted run's bits.
    piston_md = ["simulation.method=md", "md.substeps=1", "simulation.dt=0.01"]
    out = os.path.join(tmp, "sigterm")
    args = mpi(2) + [moreau, "run", os.path.join(source, "examples", "piston_2d.ini"), "--out", out, "--quiet"]
    for k in piston_md + ["simulation.steps=100000000", "output.every=100"]:
        args += ["--set", k]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, OMP_NUM_THREADS="1"))
    series_file = os.path.join(out, "series.csv")
    for _ in range(600):  # until series.csv exists: the ranks are stepping
        if os.path.exists(series_file):
            break
        time.sleep(0.05)
    time.sleep(0.5)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    path = os.path.join(out, "summary.json")
    summary = json.load(open(path)) if os.path.exists(path) else {}
    last = summary.get("last_step", 0)
    check(summary.get("status") == "stopped" and last > 0 and os.path.exists(os.path.join(out, "checkpoint")),
          f"SIGTERM to mpirun: the ranks stop after step {last} with a checkpoint ({err.strip()[:200]})")
    if last > 0:
        target = f"simulation.steps={last + 300}"
        r = subprocess.run(mpi(3) + [moreau, "run", "--resume", out, "--set", target, "--quiet"], capture_output=True,
                           text=True, timeout=300, env=dict(os.environ, OMP_NUM_THREADS="1"))
        got = json.load(open(os.path.join(out, "summary.json"))).get("state_hash") if r.returncode == 0 else None
        reference = os.path.join(tmp, "sigterm-reference")
        run([], os.path.join(source, "examples", "piston_2d.ini"), reference, piston_md + [target])
        want = json.load(open(os.path.join(reference, "summary.json")))["state_hash"]
        check(got == want, f"the stopped run resumed on 3 ranks gives the uninterrupted state_hash {want} (got {got})")

    stop_by_sigint(tmp)

    # A divergence on ranks: exit 3 and the checkpoint of the last step the
    # guards passed, as a serial run writes it (both resume to the same bits).
    box = os.path.join(source, "examples", "box_3d.ini")
    blow = ["simulation.method=md", "md.substeps=1", "simulation.dt=3e-4", "simulation.steps=3000",
            "guard.max_overlap=1e-2"]
    states = []
    for prefix, name in (([], "diverged-serial"), (mpi(2), "diverged-ranks")):
        out = os.path.join(tmp, name)
        r = run(prefix, box, out, blow)
        path = os.path.join(out, "summary.json")
        summary = json.load(open(path)) if os.path.exists(path) else {}
        states.append((r.returncode, summary.get("status"), summary.get("last_good_step"), summary.get("last_step")))
        r = subprocess.run([moreau, "run", "--resume", out, "--set", "simulation.dt=1e-4", "--set",
                            "simulation.steps=2500", "--quiet"], capture_output=True, text=True, timeout=300)
        states[-1] += (json.load(open(os.path.join(out, "summary.json"))).get("state_hash"),)
    check(states[0][0] == 3 and states[0][1] == "diverged" and states[0][2] > 0 and states[0] == states[1],
          f"a divergence on 2 ranks: exit 3, the serial last good step and a checkpoint resuming to the serial "
          f"bits ((exit, status, last good, last step, resumed hash): serial {states[0]}, ranks {states[1]})")

    # A grain too fast for guard.max_travel (Jacobi sweeps blow piston_2d up
    # near step 89): the ranks name the serial run's grain, step and speed.
    jacobi = ["cd.order=jacobi", "cd.distributed=exact", "simulation.steps=100"]
    reasons = []
    for prefix, name in (([], "travel-serial"), (mpi(3), "travel-ranks")):
        r = run(prefix, os.path.join(source, "examples", "piston_2d.ini"), os.path.join(tmp, name), jacobi)
        path = os.path.join(tmp, name, "summary.json")
        reasons.append((r.returncode, json.load(open(path)).get("divergence") if os.path.exists(path) else None))
    check(reasons[0][0] == 3 and "grain" in (reasons[0][1] or "") and reasons[0] == reasons[1],
          f"guard.max_travel on 3 ranks: exit 3 and the serial run's report ({reasons})")

    # The same grain too fast inside an interval between the ranks' checks
    # (rows only at the ends): each rank finds it alone, the next check takes
    # every rank back to the last one, and the steps again, checked one by
    # one, stop where the serial run stops.
    quiet = jacobi + ["output.every=0", "output.log_every=100", "contact.rank_check_every=20"]
    reasons = []
    for prefix, name in (([], "travel-serial-quiet"), (mpi(3), "travel-ranks-quiet")):
        r = run(prefix, os.path.join(source, "examples", "piston_2d.ini"), os.path.join(tmp, name), quiet)
        summary = json.load(open(os.path.join(tmp, name, "summary.json")))
        reasons.append((r.returncode, summary.get("divergence"), summary.get("state_hash"),
                        summary.get("distributed", {}).get("rollbacks", 0) > 0 if prefix else True))
    check(reasons[0][0] == 3 and "grain" in (reasons[0][1] or "") and reasons[0] == reasons[1],
          f"guard.max_travel between the ranks' checks: a rollback, then exit 3, the serial report and "
          f"state_hash ((exit, report, hash, rolled back): {reasons})")

    # The ranks' checks (contact.rank_check_every): one allreduce after each
    # step (the default), or every few steps (20 here), with the serial
    # bits; and every rollback a failed test between checks would take
    # (MOREAU_TEST_ROLLBACK: every interval of more than one step ends in
    # one) gives them too.
    # (fewer: the grains move slowly enough for checks several steps apart;
    # serial series: series.csv is the serial run's, the staged pipeline's
    # energies aside.)
    piston = os.path.join(source, "examples", "piston_2d.ini")
    periodic = os.path.join(source, "tests", "mpi", "periodic_3d.ini")
    for name, scene, sets, n, fewer, serial_series in (
            ("piston_2d MD", piston, ["simulation.method=md", "md.substeps=1", "simulation.dt=0.01",
                                      "simulation.steps=4000", "output.every=2000"], 3, True, True),
            ("periodic cell, ab3-am4", periodic, ["md.integrator=ab3-am4", "simulation.steps=600",
                                                  "output.every=300"], 2, True, False),
            ("triaxial cell, MD", TRIAXIAL, ["simulation.method=md", "md.substeps=70", "simulation.steps=300",
                                             "output.every=300"], 2, False, True),
            ("piston_2d CD exact", piston, ["cd.order=random-keys", "cd.distributed=exact", "simulation.steps=150",
                                            "output.every=150"], 2, False, True)):
        outs = {}
        apart = sets + ["contact.rank_check_every=20"]
        for label, prefix, sets2, env in (("serial", [], sets, None),
                                          ("every", mpi(n), sets, None),
                                          ("ranks", mpi(n), apart, None),
                                          ("rollbacks", mpi(n), apart, {"MOREAU_TEST_ROLLBACK": "1"})):
            out = os.path.join(tmp, f"checks-{label}-{abs(hash(name))}")
            r = run(prefix, scene, out, sets2, env)
            summary = json.load(open(os.path.join(out, "summary.json"))) if r.returncode == 0 else {}
            outs[label] = (summary.get("state_hash"), summary.get("distributed", {}),
                           open(os.path.join(out, "series.csv")).read() if r.returncode == 0 else None)
        steps = int(next(x for x in sets if x.startswith("simulation.steps=")).split("=")[1])
        every, ranks, rolled = outs["every"][1], outs["ranks"][1], outs["rollbacks"][1]
        same = (outs["serial"][0] is not None and all(outs[k][0] == outs["serial"][0] for k in outs)
                and all(outs[k][2] == outs["every"][2] for k in ("ranks", "rollbacks"))
                and (not serial_series or outs["every"][2] == outs["serial"][2]))
        check(same and every.get("checks") == steps + 1 and rolled.get("rollbacks", 0) > 0
              and (not fewer or (ranks.get("checks", steps) < steps / 4
                                 and ranks.get("collectives", 0) < every.get("collectives", 0))),
              f"{name} on {n} ranks: the serial state_hash, one series.csv with a check after every step, with "
              f"checks up to 20 steps apart and with forced rollbacks (checks {every.get('checks')} / {ranks.get('checks')} / "
              f"{rolled.get('checks')}, rank 0's collectives {every.get('collectives')} / {ranks.get('collectives')}, "
              f"rollbacks {ranks.get('rollbacks')} / {rolled.get('rollbacks')}; hashes {[outs[k][0] for k in outs]})")

    # CD, cd.distributed = exact: the serial random-keys sweep replayed over
    # the ranks, series.csv byte for byte (residuals and iterations included,
    # under a criterion that sums over every rank's contacts).
    piston = os.path.join(source, "examples", "piston_2d.ini")
    exact = ["cd.order=random-keys", "cd.distributed=exact", "simulation.steps=200", "output.every=10"]
    for case, (scene, sets, what, *counts) in enumerate((
            (piston, exact, "piston_2d, fixed N_I"),
            (piston, exact + ["cd.criterion=local", "cd.epsilon=1e-2", "simulation.steps=100"],
             "piston_2d, local criterion"),
            # Kinematic plates (groups without a wall) and a servo lid.
            (SHEAR, exact + SERVO + ["group.top.wall=", "group.bottom.wall=", "simulation.steps=150"],
             "shear cell, a servo lid"),
            # Jacobi: each body takes its rows' impulses in key order (before
            # the scheme's divergence near step 89); the proximal term once the
            # natural error stalls, with FCLIB dumps of the step's problem.
            (piston, exact + ["cd.order=jacobi", "simulation.steps=60"], "piston_2d, jacobi"),
            (TRIAXIAL, exact + ["simulation.steps=200", "output.every=20"], "triaxial cell"),
            # Plates of grains glued to the floor and to the mobile lid: their
            # rows move their walls.
            (SHEAR, exact + ["simulation.steps=100"], "shear cell, glued plates"),
            (piston, exact + ["cd.proximal=stall", "cd.criterion=natural", "cd.epsilon=1e-6", "cd.max_iterations=3000",
                              "simulation.steps=60", "output.fclib_every=30"], "piston_2d, proximal, FCLIB dumps"))):
        base = os.path.join(tmp, f"cd-serial-{case}")
        r = run([], scene, base, sets)
        check(r.returncode == 0, f"CD {what}: the serial run completes ({r.stderr.strip()[:200]})")
        want = open(os.path.join(base, "series.csv")).read()
        for n in (counts[0] if counts else (2, 3)):
            out = os.path.join(tmp, f"cd-exact-{case}-{n}")
            r = run(mpi(n), scene, out, sets)
            same = r.returncode == 0 and open(os.path.join(out, "series.csv")).read() == want
            check(same, f"CD {what}, exact on {n} ranks: series.csv byte-identical to the serial run "
                        f"({r.stderr.strip()[:200]})")
            folder = os.path.join(base, "fclib")
            dumps = sorted(os.listdir(folder)) if os.path.isdir(folder) else []
            for dump in dumps:
                # HDF5 stamps its objects with the time: the problems and
                # stored solutions are compared through what a solve of each finds.
                got, want_dump = (fclib_digest(os.path.join(d, "fclib", dump)) for d in (out, base))
                check(r.returncode == 0 and got == want_dump and got.get("contacts", 0) > 100,
                      f"CD {what}, exact on {n} ranks: fclib/{dump} holds the serial problem and solution ({got})")
            if r.returncode == 0:
                cd = json.load(open(os.path.join(out, "summary.json")))["distributed"].get("cd", {})
                check(cd.get("mode") == "exact" and cd.get("rounds", 0) > 0,
                      f"CD exact on {n} ranks: summary.json counts its message rounds ({cd})")

    # VTK as per-rank pieces (output.vtk_pieces): the grains (ids, positions,
    # velocities, stress) and the contact network of the serial snapshot.
    box = os.path.join(source, "examples", "box_3d.ini")
    sets = ["simulation.method=md", "md.substeps=1", "simulation.dt=3e-4", "simulation.steps=3000",
            "output.vtk_every=1500"]
    r = run([], box, os.path.join(tmp, "vtk-serial"), sets)
    r3 = run(mpi(3), box, os.path.join(tmp, "vtk-pieces"), sets)  # pieces: the default on ranks (auto)
    check(r.returncode == 0 and r3.returncode == 0,
          f"box_3d MD with VTK pieces on 3 ranks completes ({r3.stderr[:200]})")
    if r.returncode == 0 and r3.returncode == 0:
        folder = os.path.join(tmp, "vtk-pieces", "vtk")
        check(os.path.exists(os.path.join(folder, "grains_003000_p2.vtp")) and
              "grains_003000.pvtp" in open(os.path.join(folder, "run.pvd")).read(),
              "VTK pieces by default on ranks: a piece per rank, and run.pvd lists the parallel files")
        serial, pieces = snapshot(os.path.join(tmp, "vtk-serial", "vtk"), 3000), snapshot(folder, 3000)
        check(same_snapshot(serial, pieces) and len(pieces["contact_a"]) > 500,
              f"VTK pieces on 3 ranks: the serial snapshot's grains, stress and {len(pieces['contact_a'])} contacts")

    # CD, cd.distributed = domains: its own bits per rank count, the same on a
    # second run (that one writes VTK pieces: the first run's snapshot).
    domains = ["simulation.steps=200", "output.vtk_every=200"]
    hashes = []
    for k in range(2):
        out = os.path.join(tmp, f"cd-domains-{k}")
        r = run(mpi(2), piston, out, domains + (["output.vtk_pieces=true"] if k == 1 else ["output.vtk_pieces=false"]))
        check(r.returncode == 0, f"CD piston_2d, domains on 2 ranks: completes ({r.stderr.strip()[:200]})")
        if r.returncode == 0:
            summary = json.load(open(os.path.join(out, "summary.json")))
            hashes.append(summary.get("state_hash"))
            cd = summary["distributed"].get("cd", {})
            check(cd.get("mode") == "domains" and cd.get("syncs", 0) > 0 and summary.get("mean_iterations") == 40,
                  f"CD domains: summary.json says the mode, the synchronisations and N_I ({cd})")
    check(len(hashes) == 2 and hashes[0] == hashes[1], f"CD domains on 2 ranks: the same bits twice ({hashes})")
    if len(hashes) == 2:
        whole, pieces = (snapshot(os.path.join(tmp, f"cd-domains-{k}", "vtk"), 200) for k in range(2))
        check(same_snapshot(whole, pieces) and len(pieces["contact_a"]) > 100,
              f"CD domains: the VTK pieces hold the gathered snapshot, {len(pieces['contact_a'])} contacts "
              f"(stress from the rows' owners)")

    # Benches on ranks: md-step and cd-sweep (exact) give the serial bench's
    # state_hash and report what the ranks sent.
    def bench(prefix, name, sets):
        out = os.path.join(tmp, "bench.json")
        args = prefix + [moreau, "bench", name, "--json", out, "--quiet"]
        for x in sets:
            args += ["--set", x]
        r = subprocess.run(args, capture_output=True, text=True, timeout=300, env=dict(os.environ, OMP_NUM_THREADS="1"))
        return json.load(open(out)) if r.returncode == 0 else {"error": r.stderr.strip()[:200]}
    for name, sets in (("md-step", ["bench.particles=4000", "bench.warmup=50", "bench.steps=100"]),
                       ("cd-sweep", ["bench.particles=4000", "cd.order=random-keys", "cd.distributed=exact"])):
        serial = bench([], name, sets)
        doc = bench(mpi(2), name, sets)
        res = doc.get("results", {})
        want = serial.get("results", {}).get("state_hash")
        check(doc.get("ranks") == 2 and res.get("state_hash") == want and res.get("bytes_per_rank_per_step", 0) > 0
              and res.get("ghost_fraction", 0) > 0,
              f"bench {name} on 2 ranks: the serial state_hash {want}, bytes per rank and step, ghost fraction "
              f"({ {k: res.get(k) for k in ('state_hash', 'bytes_per_rank_per_step', 'ghost_fraction')} } "
              f"{doc.get('error', '')})")
        # Each rank's share (per_rank), and MD's working lists built at the
        # same steps on every rank: as often as the neediest rank needed.
        per = res.get("per_rank", {})
        check(all(len(per.get(k, [])) == 2 for k in ("solve", "wait", "owned", "ghosts", "pairs"))
              and sum(per.get("owned", [])) == res.get("particles"),
              f"bench {name} on 2 ranks: per_rank has both ranks' shares, their owned grains all of them ({per})")
        if name == "md-step":
            wl = res.get("working_list", {})
            check(wl.get("builds", 0) > 0 and wl.get("builds", 0) >= wl.get("needed_max", 1e9) >= wl.get("needed_min", -1),
                  f"bench md-step on 2 ranks: the parts' working lists built at the same steps, as often as the "
                  f"neediest rank needed ({wl})")
        # Memory (issue: memory that falls with ranks): the largest rank's
        # peak when the timed steps end, serial runs their own; rank 0's at
        # the end not far above it (its hash and count gather no world);
        # each rank built its own grains only (distributed input).
        rank0 = res.get("peak_rss_bytes_rank0_per_particle", 0) * res.get("particles", 0)
        check(serial.get("results", {}).get("max_rank_rss_bytes", 0) > 0
              and 0 < rank0 <= 1.25 * res.get("max_rank_rss_bytes", 0) and res.get("distributed_input") is True
              and "distributed_input" not in serial.get("results", {}),
              f"bench {name}: max_rank_rss_bytes serial and on 2 ranks, distributed input "
              f"({serial.get('results', {}).get('max_rank_rss_bytes')}, {res.get('max_rank_rss_bytes')}, rank 0 {rank0}, "
              f"{res.get('distributed_input')})")

    # Bad input on ranks: one line naming the key, exit 2, no outputs.
    out = os.path.join(tmp, "refused")
    r = run(mpi(2), piston, out, ["simulation.method=md", "md.integrator=leapfrog"])
    lines = [l for l in r.stderr.splitlines() if l.startswith("moreau:")]
    check(r.returncode == 2 and len(lines) == 1 and "md.integrator" in lines[0],
          f"a bad md.integrator on 2 ranks gives one line naming the key, exit 2 "
          f"(exit {r.returncode}: {r.stderr.strip()[:200]})")
    check(not os.path.exists(os.path.join(out, "summary.json")), "a run with bad input writes no summary.json")
    r = run(mpi(2), piston, out, ["cd.distributed=exact"])
    check(r.returncode == 2 and "cd.distributed" in r.stderr,
          f"cd.distributed = exact with a random-sweep order is refused naming the key, exit 2 (exit {r.returncode})")
    r = run(mpi(2), piston, out, ["cd.solver=newton", "cd.criterion=natural"])
    lines = [l for l in r.stderr.splitlines() if l.startswith("moreau:")]
    check(r.returncode == 2 and len(lines) == 1 and "cd.solver" in lines[0]
          and not os.path.exists(os.path.join(out, "summary.json")),
          f"cd.solver = newton on 2 ranks: one line naming the key, exit 2, no outputs (exit "
          f"{r.returncode}: {r.stderr.strip()[:200]})")
    for key, value in (("md.integrator", "rk"), ("md.pipeline", "fused")):
        r = run(mpi(2), CLUMPS_2D, out, [f"{key}={value}", "simulation.steps=10"])
        lines = [l for l in r.stderr.splitlines() if l.startswith("moreau:")]
        check(r.returncode == 2 and len(lines) == 1 and key in lines[0]
              and not os.path.exists(os.path.join(out, "summary.json")),
              f"clumps with {key} = {value} on 2 ranks: one line naming the key, exit 2, no outputs (exit "
              f"{r.returncode}: {r.stderr.strip()[:200]})")
    # The start's checks over the ranks' parts (each rank builds its brick
    # alone): the serial run's line, exit 2, no outputs. Two grains of a
    # packing file overlap; a packing file piled up at one point (its cells
    # counted by the ranks in shares); the first of two bad rows of a
    # packing file, near its end (another rank's share than rank 0's); a
    # random packing that cannot place them all (on ranks rank 0 places
    # them and sends the others theirs); an MD step too long for the
    # contacts; a group selecting a grain the scene does not have.
    packing = os.path.join(tmp, "overlap.txt")
    with open(packing, "w") as f:
        for i in range(60):
            f.write(f"{1.5 + 2.0 * (i % 5)} {1.5 + 2.0 * (i // 5 % 4)} {1.5 + 2.0 * (i // 20)} 0.5\n")
        f.write("9.2 7.5 5.5 0.5\n")  # 0.3 from grain 59 (at 9.5 7.5 5.5): an overlap of 0.7
    pile = os.path.join(tmp, "pile.txt")
    with open(pile, "w") as f:
        f.write("5 5 5 0.5\n" * 200000)  # 2e10 overlapping pairs: more memory than any machine has
    bad = os.path.join(tmp, "bad.txt")
    with open(PACKED) as f, open(bad, "w") as g:
        rows = f.read().splitlines(True)
        g.writelines(rows[:400] + ["1.0 2.0 x3 0.4\n"] + rows[400:] + ["1 1 1 -0.4\n"])
    box = os.path.join(source, "examples", "box_3d.ini")
    for what, scene, sets, key in (
            ("a bad row of a packing file", box, ["grains.source=file", f"packing.file={bad}"],
             "line 401: 'x3' is not a finite number"),
            ("more grains than the random packing places (rank 0 places them on ranks)", box,
             ["random.count=300000"], "only 761 of 300000 grains fit"),
            ("two grains of a packing file overlap", box,
             ["grains.source=file", f"packing.file={packing}", "simulation.method=md"], "overlap by"),
            ("a packing file piled up", box, ["grains.source=file", f"packing.file={pile}"], "200000 grains"),
            ("an MD step too long", box, ["simulation.method=md", "simulation.dt=0.5"], "simulation.dt"),
            ("a group's grain out of range", SHEAR, ["group.top.grains=100000"], "group.top.grains")):
        lines = {}
        for n in (1, 2, 3):
            out = os.path.join(tmp, f"refused{n}")
            r = run(mpi(n) if n > 1 else [], scene, out, sets)
            got = [l for l in r.stderr.splitlines() if l.startswith("moreau:")]
            lines[n] = got[0] if len(got) == 1 else r.stderr.strip()[:300]
            check(r.returncode == 2 and len(got) == 1 and key in got[0] and not os.path.exists(out),
                  f"{what}, {n} rank(s): one line naming it, exit 2, no outputs (exit {r.returncode}: {lines[n]})")
        check(lines[1] == lines[2] == lines[3], f"{what}: the same line on 1, 2 and 3 ranks ({lines})")
    r = subprocess.run(mpi(2) + [moreau, "experiment", "restitution", "--out", out], capture_output=True, text=True,
                       timeout=120)
    check(r.returncode == 2 and "one process" in r.stderr,
          f"moreau experiment restitution under mpirun is refused, exit 2 (exit {r.returncode})")

    # Threads per rank: the node's cores over its ranks, unless OMP_NUM_THREADS says.
    chain = os.path.join(source, "examples", "chain_1d.ini")
    env = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}
    for n, extra, want in ((2, {}, max(1, (os.cpu_count() or 1) // 2)), (2, {"OMP_NUM_THREADS": "3"}, 3)):
        out = os.path.join(tmp, f"threads{len(extra)}")
        r = subprocess.run(mpi(n) + [moreau, "run", chain, "--out", out, "--quiet", "--set", "simulation.steps=5"],
                           capture_output=True, text=True, timeout=120, env=dict(env, **extra))
        with open(os.path.join(out, "log.txt")) as f:
            first = f.readline()
        check(r.returncode == 0 and f", {want} threads" in first,
              f"{n} ranks with {extra or 'no OMP_NUM_THREADS'}: {want} threads per rank ({first.strip()})")

if failures:
    print(f"{len(failures)} check(s) failed")
    sys.exit(1)
print("all distributed checks passed")
