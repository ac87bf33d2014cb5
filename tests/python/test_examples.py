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


def test_notebook_executes(tmp_path):
    """examples/notebooks/cd_vs_md.ipynb, executed as a user would (shorter run)."""
    import shutil
    jupyter = shutil.which("jupyter", path="/usr/bin") or shutil.which("jupyter")
    assert jupyter, "jupyter-nbconvert is not installed (tools/bootstrap installs it)"
    env = dict(os.environ, MOREAU_SOURCE=SRC, MOREAU_NOTEBOOK_STEPS="1300", MPLBACKEND="Agg",
               PYDEVD_DISABLE_FILE_VALIDATION="1")
    p = subprocess.run([jupyter, "nbconvert", "--to", "notebook", "--execute",
                        os.path.join(SRC, "examples", "notebooks", "cd_vs_md.ipynb"),
                        "--output-dir", str(tmp_path), "--output", "executed.ipynb"],
                       capture_output=True, text=True, env=env, timeout=600, cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    assert (tmp_path / "executed.ipynb").exists()
