"""The Python module against the command line (docs/python.md): the same
bits, the CLI's errors as exceptions, views without copies, validating
setters, stages, experiments as dicts.

Run by CTest (tests/CMakeLists.txt) as `/usr/bin/python3 -m pytest` with
PYTHONPATH=build/python, MOREAU_BINARY and MOREAU_SOURCE set."""
import json
import os
import subprocess
import tempfile

import numpy as np
import pytest

import moreau

SRC = os.environ.get("MOREAU_SOURCE", os.path.join(os.path.dirname(__file__), "..", ".."))
BINARY = os.environ.get("MOREAU_BINARY", os.path.join(SRC, "build", "bin", "moreau"))


def example(name):
    return os.path.join(SRC, "examples", name)


def cli_hash(scene, *sets):
    with tempfile.TemporaryDirectory() as out:
        args = [BINARY, "run", scene, "--out", out, "--quiet"]
        for kv in sets:
            args += ["--set", kv]
        subprocess.run(args, check=True, capture_output=True)
        with open(os.path.join(out, "summary.json")) as f:
            return json.load(f)["state_hash"]


@pytest.mark.parametrize("method", ["cd", "md"])
def test_same_bits_as_moreau_run(method):
    scene, steps = example("box_3d.ini"), 60
    sim = moreau.Simulation(scene, set={"simulation.method": method, "simulation.steps": steps})
    sim.step(steps)
    assert sim.step_count == steps
    assert sim.state_hash == cli_hash(scene, f"simulation.method={method}", f"simulation.steps={steps}")


@pytest.mark.parametrize("solver", ["newton", "apgd"])
def test_solver_families_from_python(solver):
    # cd.solver from Python: each step's problem solved by the family, to its
    # criterion, with the bits of moreau run.
    scene, steps = example("box_3d.ini"), 40
    sets = {"cd.solver": solver, "cd.criterion": "natural", "cd.epsilon": 1e-6,
            "cd.max_iterations": 30 if solver == "newton" else 5000, "simulation.steps": steps}
    sim = moreau.Simulation(scene, set=sets, threads=1)
    records = []
    for _ in range(steps):
        sim.step()
        records.append(sim.observe())
    assert sim.settings["cd.solver"] == solver
    touching = [r for r in records if r["contacts"] > 0]
    assert touching and any(r["iterations"] > 0 for r in touching)  # a warm start may already be a solution
    if solver == "newton":  # Coulomb's law to the tolerance, in the Siconos error
        assert max(r["natural_error"] for r in touching) <= 1e-6
    assert sim.state_hash == cli_hash(scene, *(f"{k}={v}" for k, v in sets.items()))


def test_stage_by_stage_is_step():
    a = moreau.Simulation(example("chain_1d.ini"))
    b = moreau.Simulation(example("chain_1d.ini"))
    for _ in range(20):
        a.step()
        b.detect()
        b.match()
        b.solve()
        b.integrate()
    assert a.state_hash == b.state_hash
    with pytest.raises(RuntimeError):
        b.solve()  # the stage due is detect


def test_scene_from_a_dict_with_overrides():
    sim = moreau.Simulation({"grains.source": "chain", "chain.count": 7, "chain.origin": [1.5, 0, 0],
                             "simulation.dimension": 1, "wall.left.normal": (1, 0, 0), "cd.warm_start": False},
                            set={"cd.iterations": 5})
    assert sim.num_grains == 7
    assert sim.settings["cd.iterations"] == "5" and sim.settings["cd.warm_start"] == "false"
    assert list(sim.walls) == ["left"]


def test_errors_are_the_cli_messages():
    with pytest.raises(moreau.InputError, match=r"--set: key 'cd.iterations': '0' is out of range"):
        moreau.Simulation(example("chain_1d.ini"), set={"cd.iterations": 0})
    with pytest.raises(ValueError, match="unknown key 'cd.iteratons'.*did you mean 'cd.iterations'"):
        moreau.Simulation({"cd.iteratons": 3})
    with pytest.raises(moreau.InputError, match="cannot read scene file"):
        moreau.Simulation(os.path.join(SRC, "no_such.ini"))
    with pytest.raises(moreau.InputError, match="unknown experiment"):
        moreau.experiment("no-such")


def test_divergence_raises():
    # guard.contact_steps = 0 and guard.max_travel = 0: the solver's own check, not the run's guards.
    sim = moreau.Simulation(example("chain_1d.ini"), set={"simulation.method": "md", "md.substeps": 1,
                                                          "md.kn": 1e200, "guard.contact_steps": 0,
                                                          "guard.max_travel": 0})
    with pytest.raises(moreau.DivergenceError, match="non-finite"):
        sim.step(50)


def cli_run(scene, sets=None):
    """`moreau run SCENE --set KEY=VALUE ...` with the Python dict `sets`:
    (exit status, stderr, summary.json or None)."""
    with tempfile.TemporaryDirectory() as out:
        args = [BINARY, "run", scene, "--out", out, "--quiet"]
        for k, v in (sets or {}).items():
            args += ["--set", f"{k}={' '.join(map(str, v)) if isinstance(v, list) else v}"]
        p = subprocess.run(args, capture_output=True, text=True)
        summary = os.path.join(out, "summary.json")
        if not os.path.exists(summary):
            return p.returncode, p.stderr, None
        with open(summary) as f:
            return p.returncode, p.stderr, json.load(f)


def test_an_md_step_moreau_run_refuses_is_refused_with_its_message():
    scene, sets = example("piston_2d.ini"), {"simulation.method": "md", "md.substeps": 1}
    status, stderr, _ = cli_run(scene, sets)
    assert status == 2 and stderr.startswith("moreau: error: ")
    with pytest.raises(moreau.InputError) as e:
        moreau.Simulation(scene, set=sets)
    assert str(e.value) == stderr.removeprefix("moreau: error: ").rstrip("\n")
    assert "guard.contact_steps = 0 runs it anyway" in str(e.value)
    # The opt-out of the command line: the run's guards then stop it where `moreau run` stops.
    sets["guard.contact_steps"] = 0
    status, _, summary = cli_run(scene, sets)
    assert status == 3 and summary["status"] == "diverged"
    sim = moreau.Simulation(scene, set=sets)
    with pytest.raises(moreau.DivergenceError) as e:
        sim.step(summary["steps"])
    assert str(e.value) == summary["divergence"]


def test_overlapping_grains_are_refused_with_the_message_of_moreau_run(tmp_path):
    (tmp_path / "two.txt").write_text("0 0 0 0.5\n0.8 0 0 0.5\n")  # overlapping by 0.2
    scene = tmp_path / "two.ini"
    scene.write_text("[grains]\nsource = file\n[packing]\nfile = two.txt\n")
    status, stderr, _ = cli_run(str(scene))
    assert status == 2 and "grains 0 and 1 overlap by 0.2" in stderr
    with pytest.raises(moreau.InputError, match="grains 0 and 1 overlap by 0.2") as e:
        moreau.Simulation(str(scene))
    assert str(e.value) == stderr.removeprefix("moreau: error: ").rstrip("\n")
    sim = moreau.Simulation(str(scene), set={"guard.start_overlap": "inf"})  # the opt-out
    assert sim.num_grains == 2


def test_a_grain_that_flies_off_raises_before_its_position_is_infinite(tmp_path):
    # One free grain at 1e308 per step: at step 2 its position would be inf.
    scene = tmp_path / "fly.ini"
    scene.write_text("[simulation]\ndimension = 1\n[grains]\nvelocity = 1e308 0 0\n[chain]\ncount = 1\n")
    status, _, summary = cli_run(str(scene), {"simulation.steps": 3})
    assert status == 3
    sim = moreau.Simulation(str(scene))
    with pytest.raises(moreau.DivergenceError, match="guard.max_travel = 1") as e:
        sim.step(3)
    assert str(e.value) == summary["divergence"]
    assert sim.step_count == 1 and np.isfinite(sim.positions).all()  # left at the step that failed
    # A travel of 2 radii a step, allowed by guard.max_travel = 0 (no check), as in `moreau run`.
    slow = {"grains.velocity": [1, 0, 0]}
    with pytest.raises(moreau.DivergenceError, match="step 1: grain 0 moves 2 radii"):
        moreau.Simulation(str(scene), set=slow).step()
    sim = moreau.Simulation(str(scene), set={**slow, "guard.max_travel": 0})
    sim.step(3)
    assert sim.positions[0, 0] == 3


def test_the_energy_guard_measures_from_the_last_setter():
    # MD with too few substeps for the dashpot (gamma dt / m = 1.3): the energy grows
    # without bound. Only guard.energy is left on.
    sets = {"simulation.method": "md", "md.substeps": 5, "guard.contact_steps": 0, "guard.max_travel": 0,
            "guard.max_overlap": 0, "force.push.value": [0, 0, 0]}
    status, _, summary = cli_run(example("chain_1d.ini"), {**sets, "grains.velocity": [-0.1, 0, 0]})
    assert status == 3 and "(guard.energy)" in summary["divergence"]
    sim = moreau.Simulation(example("chain_1d.ini"), set=sets)  # at rest: energy 0
    v = np.zeros((50, 3))
    v[:, 0] = -0.1
    sim.set_velocities(v)  # energy 0.25 from here, as the command line's start
    with pytest.raises(moreau.DivergenceError, match=r"step 50: .* from 0.25 .*\(guard.energy\)") as e:
        sim.step(100)
    assert str(e.value) == summary["divergence"] and sim.step_count == 50
    # A setter's energy is no divergence: the rigid chain set moving steps on.
    sim = moreau.Simulation(example("chain_1d.ini"), set={"force.push.value": [0, 0, 0]})
    sim.step(10)
    sim.set_velocities(v)
    sim.step(100)
    assert sim.step_count == 110


def test_views_follow_the_simulation_without_copies():
    sim = moreau.Simulation(example("chain_1d.ini"), set={"simulation.method": "md"})
    x = sim.positions
    before = x.copy()
    assert x.shape == (50, 3) and not x.flags.writeable and not x.flags.owndata
    sim.step(30)
    assert not np.array_equal(x, before)  # the same memory, moved on
    np.testing.assert_array_equal(sim.radii, 0.5)
    np.testing.assert_array_equal(sim.masses, 1.0)
    del sim  # the view keeps the simulation alive
    assert np.isfinite(x).all()


def test_contacts_as_arrays():
    sim = moreau.Simulation(example("chain_1d.ini"))
    sim.step(600)
    c = sim.contacts()
    m = len(c["a"])
    assert m > 0 and c["normal"].shape == (m, 3) and c["force"].shape == (m, 3)
    np.testing.assert_allclose(np.linalg.norm(c["normal"], axis=1), 1.0)
    assert (c["b"] > c["a"]).all() and not c["periodic"].any()
    # The chain is pushed by -0.05 on its last grain; at rest the wall carries it.
    wall = sim.walls["left"]["body"]
    assert abs(c["force"][c["b"] == wall][:, 0].sum() + 0.05) < 2e-3


def test_setters_validate():
    sim = moreau.Simulation(example("chain_1d.ini"))
    v = np.zeros((50, 3))
    v[:, 0] = -0.01
    sim.set_velocities(v)
    np.testing.assert_array_equal(sim.velocities[:, 0], -0.01)
    v[3, 1] = 1.0  # y is locked in 1D
    with pytest.raises(moreau.InputError, match="locked axis y"):
        sim.set_velocities(v)
    with pytest.raises(moreau.InputError, match=r"shape \(50, 3\)"):
        sim.set_positions(np.zeros((4, 3)))
    bad = sim.positions.copy()
    bad[0, 0] = np.nan
    with pytest.raises(moreau.InputError, match="not finite"):
        sim.set_positions(bad)
    sim.detect()
    with pytest.raises(moreau.InputError, match="between steps"):
        sim.set_positions(sim.positions.copy())
    with pytest.raises(moreau.InputError, match="is fixed"):
        sim.set_wall_force("left", [1, 0, 0])
    piston = moreau.Simulation(example("piston_2d.ini"))
    name = next(n for n, w in piston.walls.items() if w["mobile"])
    piston.set_wall_force(name, [0, -2, 0])
    assert piston.walls[name]["force"] == [0, -2, 0]


def test_experiment_and_lists():
    rec = moreau.experiment("sound-wave-1d", set={"cd.iterations": 20})
    assert rec["experiment"] == "sound-wave-1d" and "omega_fit" in rec["results"]
    assert all(isinstance(c["pass"], bool) for c in rec["checks"])
    assert "sound-wave-1d" in moreau.experiments()
    laws = moreau.laws()
    assert "hertz" in laws["normal"] and "mindlin" in laws["tangential"] and "ai-c" in laws["rolling"]
    assert "gear5" in moreau.integrators()
    assert "cd.iterations" in moreau.scene_reference()


def test_docstrings():
    for name in ("Simulation", "experiment", "experiments", "laws", "integrators", "scene_reference"):
        assert getattr(moreau, name).__doc__
    for name in ("step", "contacts", "observe", "positions", "set_velocities", "state_hash", "walls"):
        assert getattr(moreau.Simulation, name).__doc__


def test_ctrl_c_stops_a_long_step_between_steps():
    import signal
    import sys
    code = ("import moreau, sys\n"
            f"sim = moreau.Simulation({example('box_3d.ini')!r}, threads=1)\n"
            "print('stepping', flush=True)\n"
            "try:\n"
            "    sim.step(10**7)\n"
            "except KeyboardInterrupt:\n"
            "    print('interrupted at', sim.step_count, flush=True)\n"
            "    sys.exit(7)\n")
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                         env=dict(os.environ))
    assert p.stdout.readline().strip() == "stepping"
    import time
    time.sleep(1.0)
    p.send_signal(signal.SIGINT)
    out, _ = p.communicate(timeout=60)
    assert p.returncode == 7 and "interrupted at" in out
    assert 0 < int(out.split()[-1]) < 10**7


def test_the_gil_is_free_while_stepping():
    import threading
    sim = moreau.Simulation(example("box_3d.ini"), threads=1)
    done = threading.Event()
    ticks = 0

    def count():
        nonlocal ticks
        while not done.is_set():
            ticks += 1

    counter = threading.Thread(target=count)
    counter.start()
    sim.step(200)
    done.set()
    counter.join()
    assert ticks > 1000  # Python ran beside the stepping


def test_threads_do_not_change_the_bits():
    a = moreau.Simulation(example("box_3d.ini"), threads=1)
    b = moreau.Simulation(example("box_3d.ini"), threads=2)
    a.step(40)
    b.step(40)
    assert a.state_hash == b.state_hash
    with pytest.raises(moreau.InputError, match="threads"):
        moreau.Simulation(example("box_3d.ini"), threads=0)


def test_observe_carries_the_measurements():
    sim = moreau.Simulation(example("piston_2d.ini"), set={"contact.mu": 0})
    sim.step(990)
    o = sim.observe()
    piston = o["wall_forces"]["piston"][1]
    assert o["stress"].shape == (3, 3)
    assert abs(o["stress"][1, 1] * 15 / piston - 1) < 0.01  # at rest: the piston's force over the width
    assert 0.75 < o["packing_fraction"] < 0.9 and o["coordination"] > 2.5
    assert o["fabric"].shape == (3, 3) and abs(np.trace(o["fabric"]) - 1) < 1e-12
    assert set(o["wall_torques"]) == set(o["wall_forces"])
    # About the base's point, the origin, tz = Σ x_c f_y: tz / F_y is the mean x of the load.
    tz = o["wall_torques"]["base"][2]
    assert 0 < tz / o["wall_forces"]["base"][1] < 15


def test_glued_grains_servo_and_stage_controls():
    scene = {"simulation.dimension": 2, "simulation.gravity": "0 0 0", "grains.source": "lattice",
             "lattice.type": "square", "lattice.counts": [6, 3], "lattice.radius": 0.5, "lattice.spacing": 0.05,
             "lattice.origin": [0.5, 0.55, 0], "periodic.axes": "x", "periodic.box_min": [0, -1, 0],
             "periodic.box_max": [6.3, 10, 0], "wall.floor.normal": "0 1 0", "wall.lid.point": "0 3.2 0",
             "wall.lid.normal": "0 -1 0", "wall.lid.servo_stress": 0.004, "wall.lid.servo_gain": 0.25,
             "group.top.grains": "12..17", "group.top.wall": "lid"}
    a, b = moreau.Simulation(scene), moreau.Simulation(scene)
    lid = a.walls["lid"]
    assert lid["glued"] == list(range(12, 18)) and lid["servo_stress"] == 0.004
    for _ in range(30):
        a.step()
        b.apply_controls()
        b.detect()
        b.match()
        b.solve()
        b.integrate()
    assert a.state_hash == b.state_hash
    # The servo brings the glued row down (1e-3 a step) onto the bed, three gaps of 0.05 below: the grains push the lid up.
    assert a.walls["lid"]["load"][1] == 0 and a.walls["lid"]["velocity"][1] < 0
    a.step(400)
    assert a.walls["lid"]["load"][1] > 0


def test_cell_rates_and_stress_servo():
    sim = moreau.Simulation(example("lees_edwards_2d.ini"), set={"periodic.shear_rate": 0, "periodic.stress_axes": "",
                                                                 "simulation.steps": 0})
    cell = sim.cell
    assert cell["periodic"] == [True, True, False] and cell["shear_rate"] == 0 and cell["shift"] == 0
    sim.set_cell_stress("xy", [0.005, 0.005, 0], gain=0.05, max_rate=1e-3)
    sim.step(3000)  # a loose packing compressed to p
    s = sim.cell_stress()
    assert abs(s[0, 0] / 0.005 - 1) < 0.03 and abs(s[1, 1] / 0.005 - 1) < 0.03
    sim.set_cell_stress("y", [0, 0.005, 0], gain=0.05, max_rate=1e-3)
    sim.set_cell_rates([0, 0, 0], shear_rate=1e-3)
    sim.step(200)
    assert sim.cell["shift"] > 0 and sim.cell["shear_rate"] == 1e-3
    with pytest.raises(moreau.InputError, match="axis z is not periodic"):
        sim.set_cell_rates([0, 0, 1e-3])
    with pytest.raises(moreau.InputError, match="set_cell_stress"):
        sim.set_cell_stress("y", [0, 0.005, 0], gain=0)


def test_clumps_from_python_orientations_and_inertia():
    # Dimers poured into box_3d's box: the same bits as `moreau run`, unit
    # quaternions (w, x, y, z) and principal moments (the long axis first).
    sets = {"simulation.method": "md", "grains.shape": "clump", "clump.spheres": "-0.5 0 0 0.5; 0.5 0 0 0.5",
            "random.count": 40, "md.substeps": 16, "simulation.steps": 30}
    sim = moreau.Simulation(example("box_3d.ini"), set=sets)
    sim.step(30)
    assert sim.state_hash == cli_hash(example("box_3d.ini"), *[f"{k}={v}" for k, v in sets.items()])
    q, inertia = sim.orientations, sim.inertia
    assert q.shape == (40, 4) and inertia.shape == (40, 3)
    assert np.allclose(np.linalg.norm(q, axis=1), 1.0, atol=1e-14)
    # A dimer of two balls of mass m/2, radius r = s/2: I_axis = 2 (2/5)(m/2) r², the others + 2 (m/2) r².
    r = sim.radii / 2.0
    assert np.allclose(inertia[:, 0], 0.4 * sim.masses * r ** 2, rtol=1e-12)
    assert np.allclose(inertia[:, 1], 0.4 * sim.masses * r ** 2 + sim.masses * r ** 2, rtol=1e-12)
    # summary.json says how the clump was moved to its principal frame.
    with tempfile.TemporaryDirectory() as out:
        args = [BINARY, "run", example("box_3d.ini"), "--out", out, "--quiet"]
        for k, v in sets.items():
            args += ["--set", f"{k}={v}"]
        subprocess.run(args, check=True, capture_output=True)
        with open(os.path.join(out, "summary.json")) as f:
            shapes = json.load(f)["clump_shapes"]
    assert len(shapes) == 1 and shapes[0]["spheres"] == 2 and shapes[0]["principal_frame"] == [1.0, 0.0, 0.0, 0.0]
    assert shapes[0]["centre_of_mass"] == [0.0, 0.0, 0.0] and shapes[0]["mass_properties_error"] == 0.0
    spheres = moreau.Simulation(example("box_3d.ini"), set={"random.count": 5})
    assert np.array_equal(spheres.orientations, np.tile([1.0, 0.0, 0.0, 0.0], (5, 1)))
    assert np.allclose(spheres.inertia[:, 0], 0.4 * spheres.masses * spheres.radii ** 2, rtol=1e-14)


def test_polygons_from_python_angles_and_inertia():
    # Regular hexagons (circumradius = size) falling into polygons_2d's box,
    # in MD and CD: the same bits as `moreau run`, orientations turns about
    # z (the angle 2 atan2(z, w)), the moment of inertia 5/12 m R² of a
    # regular hexagon, and `radii` the circumradius (the bounding radius).
    for method in ("md", "cd"):
        sets = {"simulation.method": method, "polygon.irregularity": 0, "random.count": 40, "simulation.steps": 200}
        sim = moreau.Simulation(example("polygons_2d.ini"), set=sets)
        sim.step(200)
        assert sim.state_hash == cli_hash(example("polygons_2d.ini"), *[f"{k}={v}" for k, v in sets.items()])
        q, inertia = sim.orientations, sim.inertia
        assert q.shape == (40, 4) and np.allclose(q[:, 1:3], 0.0) and np.allclose(np.linalg.norm(q, axis=1), 1.0)
        assert np.allclose(inertia[:, 2], 5.0 / 12.0 * sim.masses * sim.radii ** 2, rtol=1e-12)
        assert np.allclose(sim.masses, 1.5 * np.sqrt(3.0) * sim.radii ** 2, rtol=1e-12)  # density 1
        assert len(sim.contacts()["a"]) > 0


# --- outputs from Python (out=DIR): the run `moreau run --out DIR` makes ---------------------------------------


def summary(folder):
    return json.loads((folder / "summary.json").read_text())


def cli_into(out, *args):
    return subprocess.run([BINARY, "run", *args, "--out", str(out), "--quiet"], capture_output=True, text=True)


@pytest.mark.parametrize("method", ["cd", "md"])
def test_out_writes_what_moreau_run_writes(tmp_path, method):
    scene = example("piston_2d.ini")
    sets = {"simulation.method": method, "simulation.steps": 120, "output.every": 10, "output.vtk_every": 40}
    r = cli_into(tmp_path / "cli", scene, *[f"--set={k}={v}" for k, v in sets.items()])
    assert r.returncode == 0, r.stderr
    with moreau.Simulation(scene, set=sets, out=tmp_path / "py") as sim:
        assert sim.out == str(tmp_path / "py")
        sim.step(120)
    a, b = summary(tmp_path / "cli"), summary(tmp_path / "py")
    assert b["status"] == "completed" and b["steps"] == a["steps"]
    assert b["state_hash"] == a["state_hash"]
    assert (tmp_path / "py" / "series.csv").read_bytes() == (tmp_path / "cli" / "series.csv").read_bytes()
    assert sorted(os.listdir(tmp_path / "py" / "vtk")) == sorted(os.listdir(tmp_path / "cli" / "vtk"))
    with pytest.raises(moreau.InputError, match="the run is closed"):
        sim.step()


def test_checkpoints_resume_both_ways(tmp_path):
    scene = example("piston_2d.ini")
    sets = {"simulation.steps": 200, "output.every": 10}
    assert cli_into(tmp_path / "whole", scene, *[f"--set={k}={v}" for k, v in sets.items()]).returncode == 0
    whole = summary(tmp_path / "whole")["state_hash"]
    # Python's checkpoint, resumed by the command line.
    sim = moreau.Simulation(scene, set=sets, out=tmp_path / "a")
    sim.step(70)
    sim.checkpoint()
    closed = sim.close()
    assert closed["status"] == "closed" and sim.close() is None
    r = subprocess.run([BINARY, "run", "--resume", str(tmp_path / "a"), "--quiet"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert summary(tmp_path / "a")["state_hash"] == whole
    assert (tmp_path / "a" / "series.csv").read_bytes() == (tmp_path / "whole" / "series.csv").read_bytes()
    # The command line's checkpoint, resumed by Python.
    short = dict(sets, **{"simulation.steps": 90, "output.checkpoint_every": 90})
    assert cli_into(tmp_path / "b", scene, *[f"--set={k}={v}" for k, v in short.items()]).returncode == 0
    sim = moreau.Simulation.resume(tmp_path / "b", set={"simulation.steps": 200})
    assert sim.step_count == 90
    sim.step(110)
    assert sim.close()["state_hash"] == whole
    assert (tmp_path / "b" / "series.csv").read_bytes() == (tmp_path / "whole" / "series.csv").read_bytes()


def test_a_held_folder_and_a_resume_that_changes_the_trajectory_are_refused(tmp_path):
    scene = example("chain_1d.ini")
    sim = moreau.Simulation(scene, out=tmp_path / "run")
    with pytest.raises(moreau.InputError, match=r"out= '.*': in use by moreau pid"):
        moreau.Simulation(scene, out=tmp_path / "run")
    r = cli_into(tmp_path / "run", scene)
    assert r.returncode == 2 and "in use by moreau pid" in r.stderr
    sim.step(10)
    sim.checkpoint()
    sim.close()
    with pytest.raises(moreau.InputError, match="cd.iterations: cannot change when a run resumes"):
        moreau.Simulation.resume(tmp_path / "run", set={"cd.iterations": 7})
    with pytest.raises(moreau.InputError, match="only for a Simulation with out=DIR"):
        moreau.Simulation(scene).checkpoint()


def test_setters_are_in_the_checkpoint(tmp_path):
    """A protocol driven by setters (a cell servo, then shear at constant
    pressure, more sweeps) resumed from a checkpoint taken between them
    continues as it was going: the bits of the run that was never stopped."""
    scene = example("lees_edwards_2d.ini")
    sets = {"periodic.shear_rate": 0, "periodic.stress_axes": "", "simulation.steps": 400, "output.every": 20,
            "output.stage": "compress"}

    def protocol(sim, upto):
        # 0-150 compress by the servo, 150-400 shear at constant pressure with more sweeps
        if sim.step_count < 150:
            if sim.step_count == 0:
                sim.set_cell_stress("xy", [0.005, 0.005, 0], gain=0.05, max_rate=1e-3)
            sim.step(min(upto, 150) - sim.step_count)
        if sim.step_count == 150 and upto > 150:
            sim.set_cell_stress("y", [0, 0.005, 0], gain=0.05, max_rate=1e-3, time=0.5)
            sim.set_cell_rates([0, 0, 0], shear_rate=1e-3)
            sim.set_cd_iterations(60)
            sim.set_stage("shear")
        sim.step(upto - sim.step_count)

    with moreau.Simulation(scene, set=sets, out=tmp_path / "whole") as sim:
        protocol(sim, 400)
        whole = sim.state_hash
        # The shear strain accumulates (cell_shift wraps at L_x): 250 steps at 1e-3.
        assert sim.cell["shear_strain"] == pytest.approx(1e-3 * 250 * sim.dt, rel=1e-12)
    with open(tmp_path / "whole" / "series.csv") as f:
        header, *rows = f.read().splitlines()
    column = header.split(",").index("shear_strain")
    assert float(rows[-1].split(",")[column]) == pytest.approx(1e-3 * 250 * sim.dt, rel=1e-12)
    assert float(rows[5].split(",")[column]) == 0.0  # step 100: not sheared yet, the column there all the same
    # The stage column, last: the rows up to step 150 are the compression's.
    assert header.split(",")[-1] == "stage"
    assert [r.split(",")[-1] for r in rows] == ["compress"] * 8 + ["shear"] * 13
    for stop in (100, 270):  # before the setters and after them
        folder = tmp_path / f"at{stop}"
        sim = moreau.Simulation(scene, set=sets, out=folder)
        protocol(sim, stop)
        sim.checkpoint()
        sim.close()
        r = subprocess.run([BINARY, "run", "--resume", str(folder), "--quiet"], capture_output=True, text=True)
        if stop == 270:  # past the setters: the command line continues the protocol on its own
            assert r.returncode == 0, r.stderr
            assert summary(folder)["state_hash"] == whole
            assert (folder / "series.csv").read_bytes() == (tmp_path / "whole" / "series.csv").read_bytes()
        else:  # before them the command line runs the rest without the setters: another run
            assert r.returncode == 0, r.stderr
            assert summary(folder)["state_hash"] != whole
    folder = tmp_path / "again"
    sim = moreau.Simulation(scene, set=sets, out=folder)
    protocol(sim, 100)
    sim.checkpoint()
    sim.close()
    sim = moreau.Simulation.resume(folder)
    assert sim.step_count == 100
    protocol(sim, 400)
    assert sim.close()["state_hash"] == whole
    assert (folder / "series.csv").read_bytes() == (tmp_path / "whole" / "series.csv").read_bytes()


def test_stages_name_the_rows_and_bad_names_are_refused(tmp_path):
    """output.stage gives series.csv its last column; set_stage moves it on
    and is kept by the checkpoint; what cannot be a CSV field is refused."""
    scene = example("chain_1d.ini")
    with moreau.Simulation(scene, set={"output.stage": "pour", "simulation.steps": 20}, out=tmp_path / "run") as sim:
        assert sim.stage == "pour"
        sim.step(10)
        sim.set_stage("rest.2")
        for bad in ("", "a b", "a,b", 'q"', "x" * 65):
            with pytest.raises(moreau.InputError, match="is not a stage name"):
                sim.set_stage(bad)
        assert sim.settings["output.stage"] == "rest.2"
        sim.step(10)
    with open(tmp_path / "run" / "series.csv") as f:
        header, *rows = f.read().splitlines()
    assert header.endswith(",stage")
    assert [r.split(",")[-1] for r in rows] == ["pour"] * 11 + ["rest.2"] * 10
    with pytest.raises(moreau.InputError, match="no stage column"):
        moreau.Simulation(scene).set_stage("pour")
    with pytest.raises(moreau.InputError, match="output.stage"):
        moreau.Simulation(scene, set={"output.stage": "a;b"})
    # Without output.stage the command line's series.csv has no stage column.
    r = subprocess.run([BINARY, "run", scene, "--set", "simulation.steps=2", "--out", str(tmp_path / "cli"), "--quiet"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "stage" not in (tmp_path / "cli" / "series.csv").read_text().splitlines()[0]
