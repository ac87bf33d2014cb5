#include <cmath>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <iomanip>
#include <iostream>

#include "moreau/core/error.hpp"
#include "moreau/experiments/experiment.hpp"

namespace moreau {

nlohmann::json makeCheck(const std::string& name, double value, double expected, double tolerance, bool relative) {
    const double err = relative ? std::abs(value / expected - 1.0) : std::abs(value - expected);
    const bool pass = std::isfinite(value) && err <= tolerance;
    return {{"name", name}, {"value", value}, {"expected", expected}, {"tolerance", tolerance},
            {"relative", relative}, {"error", err}, {"pass", pass}};
}

nlohmann::json numberOrNull(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

namespace {

using Run = std::function<nlohmann::json(const ExperimentOptions&)>;

/// The experiment `run`, refusing --set keys of the section `section` (the
/// other method's): it would ignore them, and a study must not believe they
/// took effect.
Run refusing(const char* name, const char* section, const char* why, Run run) {
    return [=](const ExperimentOptions& options) {
        for (const std::string& set : options.sets)
            if (set.rfind(std::string(section) + ".", 0) == 0)
                throw InputError(std::string(name) + ": --set key '" + set.substr(0, set.find('=')) +
                                 "': not used by this experiment (" + why + ")");
        return run(options);
    };
}

Run cdOnly(const char* name, Run run) {
    return refusing(name, "md", "contact dynamics only; cd-md-equivalence compares with MD", std::move(run));
}
Run mdOnly(const char* name, Run run) {
    return refusing(name, "cd", "soft-sphere MD only", std::move(run));
}

}  // namespace

const std::vector<ExperimentInfo>& experiments() {
    static const std::vector<ExperimentInfo> list = {
        {"sound-wave-1d", "CD §3.3.1 Fig. 7: artificial sound wave of a rigid chain, ω and τ vs eqs. 57-60",
         cdOnly("sound-wave-1d", soundWave1d)},
        {"sound-wave-2d", "CD §3.3.2 Fig. 8: a piston on a 2D random packing rings after a force step; eq. 64 fitted",
         cdOnly("sound-wave-2d", soundWave2d), true},
        {"iteration-scaling", "CD §3.3.2: omega ~ N_I^(1/2) and tau ~ N_I^(-1) for the 1D chain and the 2D packing",
         cdOnly("iteration-scaling", iterationScaling)},
        {"cd-md-equivalence", "CD §3.4 eqs. 67-68: CD chain and packing against MD with kappa, gamma of N_I",
         cdMdEquivalence},
        {"force-relaxation", "CD §3.1 eq. 48: sweeps to relax a squeezed chain (∝ L²), 2D (∝ n) and 3D (∝ n^2/3) packings",
         cdOnly("force-relaxation", forceRelaxation)},
        {"convergence-criteria",
         "CD §2.5.1: fixed N_I, local and global criteria at matched mean overlap on a 2D compression; residual per sweep",
         cdOnly("convergence-criteria", convergenceCriteria)},
        {"sweep-orders",
         "beyond CD §2.5: sweeps to relax a load step and sound-wave ω for random-sweep, shuffle-once, fixed, "
         "random-sequential",
         cdOnly("sweep-orders", sweepOrders)},
        {"restitution", "force schemes Fig. 2: e_n vs impact velocity for the linear, damped Hertz, HKK and "
                        "Walton-Braun laws", mdOnly("restitution", restitution)},
        {"oblique-impact",
         "force schemes §3 Figs. 3-6: psi_f(psi_i) and e(sin theta) of oblique sphere impacts for every tangential law",
         obliqueImpact},
        {"brake-failure", "force schemes §4 Fig. 8, eq. 25: braking dv_x vs speed of a grazing impact, two stiffnesses",
         mdOnly("brake-failure", brakeFailure)},
        {"detachment", "force schemes §4: restitution of a column of N grains hitting a wall vs t0/t_n",
         mdOnly("detachment", detachment)},
        {"integrators", "integration schemes §4: ARD of e_n, e_t, beta, omega_f vs the exact impact, per scheme and "
                        "steps per collision; fixed-grid error and CPU time",
         mdOnly("integrators", integratorsImpact)},
        {"relaxation-time",
         "Pena et al. Figs. 5-9: relaxation time of two discs vs dt/t_c with Gear 5, Cundall spring vs geometric "
         "update, three freedoms, several k_n, against the linear system; t_R vs mu, k_t/k_n, eps_t/eps_n",
         relaxationTime},
        {"slow-shear",
         "Pena et al. Fig. 3: E_k(t) of 256 disks sheared slowly between rough plates with Gear 5 at two dt, "
         "mu = 0 and 0.5, and the cumulative difference Delta E_k",
         mdOnly("slow-shear", slowShear)},
        {"kuhn-slip-direction",
         "Kuhn et al. Fig. 4: direction of a sliding contact's force after one step against the movement size, "
         "refined algorithm vs add-then-project",
         kuhnSlipDirection},
        {"stress-probes",
         "Kuhn et al. Fig. 5: plastic strain increments of axisymmetric stress probes in the Rendulic plane, "
         "conventional vs refined linear-frictional algorithm, fitted circles and hardening moduli",
         mdOnly("stress-probes", stressProbes)},
        {"chain-modes",
         "CD §3.2 eqs. 58-60 for every mode: omega(k), tau(k) and the cut-off k_c of the chain's artificial "
         "sound, N_I = 10, 40, 160",
         chainModes},
        {"mu-of-i",
         "beyond the papers (da Cruz et al. 2005): mu(I) and phi(I) of steady shear at fixed pressure in a "
         "Lees-Edwards cell, CD converged and at fixed N_I, MD at stiffness levels and mapped by CD eqs. 67-68",
         muOfI},
        {"rigid-rotation",
         "Kuhn et al. Fig. 6: stress of a static packing rotated rigidly by 90 deg about x1 and turned back, for no "
         "adjustment, projection, projection + twirl of the tangential forces",
         rigidRotation},
    };
    return list;
}

const std::vector<ExperimentInfo>& benches() {
    static const std::vector<ExperimentInfo> list = {
        {"cd-sweep", "contact updates per second of frictional random sweeps on a dense 3D packing", benchCdSweep, true},
        {"md-step", "particle-steps per second of soft-sphere MD on the LAMMPS protocol (shared/packings/README.md)",
         benchMdStep, true},
        {"detect", "seconds per contact detection (cell grid) on a dense 3D packing", benchDetect},
        {"fclib", "one CD step as a local problem (FCLIB/FC3D file, or a sphere pile through the engine) solved and "
                  "scored in the Siconos/FCLIB error",
         benchFclib},
    };
    return list;
}

CsvFile openCsv(const ExperimentOptions& options, const std::string& name, const std::string& header, int precision) {
    std::filesystem::create_directories(options.outDir);
    CsvFile csv{options.outDir / name, {}};
    csv.out.open(csv.path);
    csv.out << header << '\n' << std::setprecision(precision);
    return csv;
}

Scene experimentKeys(const std::string& experiment, const std::vector<std::string>& sets,
                     const std::vector<KeySpec>& keys) {
    for (const std::string& set : sets)
        if (set.rfind("experiment.", 0) != 0) {
            std::string names;
            for (const KeySpec& k : keys) names += (names.empty() ? "" : ", ") + k.key.substr(k.key.find('.') + 1);
            throw InputError(experiment + ": '" + set.substr(0, set.find('=')) + "': only experiment.* keys (" + names +
                             ") can be set");
        }
    return loadSceneText("[grains]\nsource = chain\n[chain]\ncount = 1\n", experiment, sets, keys);
}

std::vector<std::string> setsWithSeed(const ExperimentOptions& options) {
    std::vector<std::string> sets = options.sets;
    if (options.seed) sets.push_back("simulation.seed=" + std::to_string(*options.seed));
    return sets;
}

namespace {

/// The value of the whole text read by `read` (std::stod, std::stol), or none.
template <class Read>
auto wholeText(const std::string& text, Read read) -> std::optional<decltype(read(text, nullptr))> {
    try {
        std::size_t used = 0;
        const auto v = read(text, &used);
        if (used == text.size()) return v;
    } catch (const std::exception&) {
    }
    return std::nullopt;
}

}  // namespace

std::optional<double> parseNumber(const std::string& text) {
    return wholeText(text, [](const std::string& t, std::size_t* used) { return std::stod(t, used); });
}

std::optional<long> parseInteger(const std::string& text) {
    return wholeText(text, [](const std::string& t, std::size_t* used) { return std::stol(t, used); });
}

bool runPlotScript(const std::string& script, const std::vector<std::string>& args, bool quiet) {
    const std::filesystem::path python = "/usr/bin/python3";
    const std::filesystem::path file = std::filesystem::path(MOREAU_SOURCE_DIR) / "tools" / ("plot_" + script + ".py");
    if (!std::filesystem::exists(python) || !std::filesystem::exists(file)) {
        if (!quiet) std::cerr << "(no plot: " << (std::filesystem::exists(python) ? file.string() : python.string()) << " not found)\n";
        return false;
    }
    std::string cmd = python.string() + " '" + file.string() + "'";
    for (const auto& a : args) cmd += " '" + a + "'";
    if (quiet) cmd += " >/dev/null 2>&1";
    const int rc = std::system(cmd.c_str());
    if (rc != 0 && !quiet) std::cerr << "(plot script " << file << " failed; is python3-matplotlib installed?)\n";
    return rc == 0;
}

}  // namespace moreau
