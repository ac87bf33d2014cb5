"""The scripts of examples/python run and reach their own checks (each exits
non-zero when its result is off)."""
import os
import subprocess
import sys

SRC = os.environ.get("MOREAU_SOURCE", os.path.join(os.path.dirname(__file__), "..", ".."))


def run_example(name, *args):
    env = dict(os.environ, MPLBACKEND="Agg")
    return subprocess.run([sys.executable, os.path.join(SRC, "examples", "python", name), *args],
                          capture_output=True, text=True, env=env, timeout=600)


def test_sound_wave_1d_equals_the_experiment():
    p = run_example("sound_wave_1d.py", "40")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "against `moreau experiment sound-wave-1d`" in p.stdout


def test_cd_vs_md_pistons_agree():
    p = run_example("cd_vs_md.py", "40", "--steps", "1300")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "piston shift after the force step" in p.stdout


def test_convergence_curves_for_every_order():
    p = run_example("convergence.py", "--settle", "200", "--sweeps", "200")
    assert p.returncode == 0, p.stdout + p.stderr
    assert all(order in p.stdout for order in ("random-sweep", "shuffle-once", "fixed", "random-sequential"))


def execute_notebook(name, tmp_path, **env):
    """examples/notebooks/NAME executed as a user would (jupyter nbconvert) into
    tmp_path/executed.ipynb, with `env` added to the environment; its cells."""
    import json
    import shutil
    jupyter = shutil.which("jupyter", path="/usr/bin") or shutil.which("jupyter")
    assert jupyter, "jupyter-nbconvert is not installed (tools/bootstrap installs it)"
    env = dict(os.environ, MOREAU_SOURCE=SRC, MPLBACKEND="Agg", PYDEVD_DISABLE_FILE_VALIDATION="1", **env)
    p = subprocess.run([jupyter, "nbconvert", "--to", "notebook", "--execute",
                        os.path.join(SRC, "examples", "notebooks", name),
                        "--output-dir", str(tmp_path), "--output", "executed.ipynb"],
                       capture_output=True, text=True, env=env, timeout=600, cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    return json.loads((tmp_path / "executed.ipynb").read_text())["cells"]


def test_notebook_executes(tmp_path):
    """examples/notebooks/cd_vs_md.ipynb, executed as a user would (shorter run)."""
    execute_notebook("cd_vs_md.ipynb", tmp_path, MOREAU_NOTEBOOK_STEPS="1300")


def test_shear_study_notebook_executes(tmp_path):
    """examples/notebooks/shear_study.ipynb: prepare, compress by the servo and
    shear at constant pressure in CD, shear in MD from the same packing, mu
    against strain; its last cell checks that the methods agree."""
    cells = execute_notebook("shear_study.ipynb", tmp_path, MOREAU_NOTEBOOK_OUT=str(tmp_path / "out"))
    text = "".join("".join(o.get("text", "")) for c in cells if c["cell_type"] == "code" for o in c["outputs"])
    assert "checks passed" in text
    for method, stages in (("cd", ["prepare", "compress", "shear"]), ("md", ["settle", "shear"])):
        rows = (tmp_path / "out" / method / "series.csv").read_text().splitlines()
        assert rows[0].endswith(",stage")
        seen = []
        for r in rows[1:]:
            if not seen or seen[-1] != r.rsplit(",", 1)[1]:
                seen.append(r.rsplit(",", 1)[1])
        assert seen == stages
    assert (tmp_path / "out" / "mu_of_strain.png").stat().st_size > 10000
