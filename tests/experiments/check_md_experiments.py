#!/usr/bin/python3
"""The soft-sphere experiments (restitution, brake-failure, detachment,
integrators, slow-shear, stress-probes, mu-of-i) end to end through the built program, small: exit status 0
(4 where a check of the small version fails, as its JSON says), the
JSON of INTERFACE.md with its required `results` keys and computed checks,
the CSV and the PNG (the plot scripts run), and one-line exit-2 errors for
bad keys with nothing written.

usage: check_md_experiments.py MOREAU_BINARY SOURCE_DIR
"""
import csv
import json
import os
import subprocess
import sys
import tempfile

MOREAU = sys.argv[1]
failures = []


def expect(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)


CASES = {
    "restitution": (["experiment.points=4"], ["velocities", "e_linear", "e_hertz_damped", "e_hkk", "e_walton_braun"],
                    ["restitution.csv", "restitution.png"]),
    "brake-failure": (["experiment.points=11"], ["velocities", "delta_vx", "v_bf_measured", "v_bf_predicted"],
                      ["brake_failure.csv", "brake_failure.png"]),
    "detachment": (["experiment.points=4", "experiment.ratio_max=10"], ["t0_over_tn", "e_total"],
                   ["detachment.csv", "detachment.png"]),
    "integrators": (["experiment.schemes=cd,rk,pv,gear5", "experiment.angles=6", "experiment.steps=5,10,25"],
                    ["steps", "ard_en_cd", "ard_et_cd", "ard_beta_cd", "ard_omega_cd"],
                    ["integrators.csv", "integrators_exact.csv", "integrators.png", "integrators_exact.png"]),
    "slow-shear": (["experiment.grains=32", "experiment.duration=50", "experiment.samples=20"],
                   ["dt_over_tc", "mu", "time", "ek_dt1_mu0", "ek_dt2_mu0", "ek_dt1_mu05", "ek_dt2_mu05",
                    "delta_ek_mu0", "delta_ek_mu05", "rel_diff_mu0", "rel_diff_mu05", "rel_diff_ratio"],
                   ["slow_shear.csv", "slow_shear.png"]),
    "stress-probes": (["experiment.particles=200", "experiment.probes=12", "experiment.grains=spheres", "experiment.peak_strain=0"],
                      ["probes", "q_over_p", "hardening_modulus_conventional", "hardening_modulus_refined",
                       "modulus_difference"],
                      ["stress_probes.csv", "stress_probes_circles.csv", "stress_probes.png"]),
    "mu-of-i": (["experiment.particles=100", "experiment.inertial_numbers=0.1 0.03",
                 "experiment.methods=cd_ni40 md_kappa1e3", "experiment.min_strain=0.5", "experiment.max_strain=1"],
                ["inertial_number", "mu_cd_ni40", "phi_cd_ni40", "mu_min_cd_ni40", "b_cd_ni40", "phi_max_cd_ni40",
                 "a_cd_ni40", "mu_md_kappa1e3", "phi_md_kappa1e3"],
                ["mu_of_i.csv", "mu_of_i_series.csv", "mu_of_i.png"]),
}

with tempfile.TemporaryDirectory() as tmp:
    for name, (sets, keys, files) in CASES.items():
        out = os.path.join(tmp, name)
        js = os.path.join(tmp, name + ".json")
        args = [MOREAU, "experiment", name, "--json", js, "--out", out, "--quiet", "--threads", "1"]
        for s in sets:
            args += ["--set", s]
        p = subprocess.run(args, capture_output=True, text=True, timeout=600)
        # 0, or 4 when a check failed (the small versions need not pass them all).
        expect(p.returncode in (0, 4), f"{name}: exit {p.returncode} ({p.stderr.strip()})")
        if p.returncode not in (0, 4):
            continue
        doc = json.load(open(js))
        failed = [c["name"] for c in doc.get("checks", []) if not c.get("pass")]
        expect(p.returncode == (4 if failed else 0), f"{name}: exit {p.returncode} with failed checks {failed}")
        expect(doc.get("experiment") == name, f"{name}: experiment field {doc.get('experiment')}")
        for k in ("params", "results", "checks"):
            expect(k in doc, f"{name}: no '{k}' in the JSON")
        for k in keys:
            expect(k in doc["results"], f"{name}: results lack '{k}'")
        expect(len(doc["checks"]) > 0, f"{name}: no checks")
        for c in doc["checks"]:
            for f in ("name", "value", "expected", "tolerance", "pass"):
                expect(f in c, f"{name}: check {c.get('name')} lacks '{f}'")
            expect(isinstance(c.get("pass"), bool), f"{name}: check {c.get('name')}: pass is not a bool")
        for f in files:
            expect(os.path.isfile(os.path.join(out, f)), f"{name}: {f} not written")
        rows = list(csv.reader(open(os.path.join(out, files[0]))))
        expect(len(rows) >= 3, f"{name}: {files[0]} has {len(rows)} rows")

    for args, word in ((["integrators", "--set", "experiment.schemes=cd,nope"], "experiment.schemes"),
                       (["integrators", "--set", "experiment.steps=1-3"], "experiment.steps"),
                       (["restitution", "--set", "experiment.v_max=-1"], "experiment.v_max"),
                       (["slow-shear", "--set", "experiment.grains=2"], "experiment.grains"),
                       (["mu-of-i", "--set", "experiment.methods=cd_ni40 md_kapa1e4"], "experiment.methods"),
                       (["detachment", "--set", "experiment.ratio_min=1", "--set", "experiment.ratio_max=0.5"],
                        "experiment.ratio_max")):
        out = os.path.join(tmp, "bad_out")
        p = subprocess.run([MOREAU, "experiment", *args, "--out", out, "--quiet"], capture_output=True, text=True,
                           timeout=600)
        lines = [l for l in p.stderr.splitlines() if l.strip()]
        expect(p.returncode == 2, f"{args}: exit {p.returncode}, wanted 2")
        expect(len(lines) == 1 and word in p.stderr, f"{args}: stderr should be one line naming {word}: {lines}")
        expect(not os.path.exists(out), f"{args}: bad input left {out} behind")

if failures:
    print(f"{len(failures)} failure(s)", file=sys.stderr)
    sys.exit(1)
print("md experiments: OK")
