/// `moreau bench fclib`: one contact-dynamics step posed as a local problem,
/// solved to a criterion and scored in the field's error (docs/convergence.md).
///   bench.problem = FILE  an FCLIB (HDF5) or `FC3D 1` text problem: any 3×3
///                         blocks, any μ per contact (the general solver)
///   bench.bodies = FILE   a sphere pile of ../shared/peers/siconos
///                         (gen_sphere_pile.py --bodies): the engine's sweep
#include <omp.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "moreau/cd/local_problem.hpp"
#include "moreau/cd/solver.hpp"
#include "moreau/core/error.hpp"
#include "moreau/experiments/experiment.hpp"
#include "moreau/io/fclib.hpp"
#include "moreau/io/scene_file.hpp"
#include "sphere_pile.hpp"

namespace moreau {

namespace {


/// A pile as the Siconos harness's generator writes it (--bodies), with
/// each contact's frame in the file (columns n, t1, t2), so impulses can be
/// written in the harness's convention (impulse on A in (n, t1, t2)).
struct FilePile : Pile {
    std::vector<Mat3> frames;
};

FilePile readPile(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw InputError("cannot read bodies file '" + path + "'");
    auto fail = [&](const std::string& what) {
        throw InputError(path + ": " + what + " (format: gen_sphere_pile.py --bodies, docs/convergence.md)");
    };
    std::string header;
    std::getline(in, header);
    std::istringstream hs(header);
    std::string hash, word;
    double n = 0, radius = 0, mass = 0, inertia = 0, dt = 0, g = 0;
    hs >> hash >> word >> n >> word >> radius >> word >> mass >> word >> inertia >> word >> dt >> word >> g;
    if (!hs || hash != "#" || !(radius > 0) || !(mass > 0) || !(dt > 0))
        fail("first line must be '# spheres N radius R mass m inertia I dt DT g G' with R, m, DT > 0");
    if (std::abs(inertia - 0.4 * mass * radius * radius) > 1e-12 * inertia)
        fail("inertia " + std::to_string(inertia) + " is not a solid sphere's 2/5 m R^2");
    std::vector<double> tok;
    for (std::string line; std::getline(in, line);) {
        std::istringstream ls(line.substr(0, line.find('#')));
        for (double v; ls >> v;) tok.push_back(v);
        if (!ls.eof()) fail("a token that is not a number: '" + line.substr(0, 60) + "'");
    }
    std::size_t at = 0;
    auto take = [&](std::size_t count, const char* what) {
        if (at + count > tok.size()) fail(std::string("ends inside ") + what);
        at += count;
        return &tok[at - count];
    };
    const auto spheres = static_cast<std::size_t>(*take(1, "the sphere count"));
    if (static_cast<double>(spheres) != n) fail("sphere count differs from the header's");
    std::vector<Vec3> x(spheres);
    std::vector<const double*> rows(spheres);
    for (std::size_t i = 0; i < spheres; ++i) {
        rows[i] = take(15, "the spheres");
        x[i] = Vec3(rows[i][0], rows[i][1], rows[i][2]);
    }
    FilePile p;
    static_cast<Pile&>(p) = pileOf(x, radius, mass, dt, g, 0.0);
    World& w = p.world;
    for (std::size_t i = 0; i < spheres; ++i) {
        const double* r = rows[i];
        w.v[i] = Vec3(r[3], r[4], r[5]);
        w.w[i] = Vec3(r[6], r[7], r[8]);
        const Vec3 f(r[9], r[10], r[11]), t(r[12], r[13], r[14]);
        if ((f - mass * w.gravity).norm() > 1e-12 * mass * g || t.norm() != 0.0)
            fail("sphere " + std::to_string(i) + " has a force other than its weight (allowed: f = m g, no torque)");
    }
    const auto nc = static_cast<std::size_t>(*take(1, "the contact count"));
    double muGrain = -1, muFloor = -1;
    for (std::size_t c = 0; c < nc; ++c) {
        const double* r = take(15, "the contacts");
        const auto A = static_cast<long>(r[0]), B = static_cast<long>(r[1]);
        if (A < 0 || A >= static_cast<long>(spheres) || B < -1 || B >= static_cast<long>(spheres) || A == B)
            fail("contact " + std::to_string(c) + " joins bodies " + std::to_string(A) + " and " + std::to_string(B));
        double& mu = B < 0 ? muFloor : muGrain;
        if (mu >= 0 && mu != r[2])
            fail("contacts of one kind with different mu (the engine takes one mu for grains, one per wall; "
                 "bench.problem with the .fc3d file takes any)");
        mu = r[2];
        Mat3 f;
        for (int k = 0; k < 3; ++k) f.col(k) = Vec3(r[6 + 3 * k], r[7 + 3 * k], r[8 + 3 * k]);
        addPileContact(p, A, B, f.col(0), muFloor);  // no gap term: every contact touches
        p.frames.push_back(f);
    }
    if (at != tok.size()) fail("numbers after the last contact");
    w.muGrain = std::max(muGrain, 0.0);
    return p;
}

/// bench.r0: 3 numbers per contact (empty path: none).
std::vector<double> readImpulses(const std::string& path, std::size_t contacts) {
    std::vector<double> r;
    if (path.empty()) return r;
    std::ifstream in(path);
    if (!in) throw InputError("bench.r0: cannot read '" + path + "'");
    for (double v; in >> v;) r.push_back(v);
    if (!in.eof() || r.size() != 3 * contacts)
        throw InputError("bench.r0: '" + path + "' must hold 3 numbers per contact, " + std::to_string(3 * contacts) +
                         " in all (it holds " + std::to_string(r.size()) + " before anything else)");
    return r;
}

void writeReactions(const std::string& path, const std::vector<double>& r) {
    std::ofstream out(path);
    char buf[96];
    for (std::size_t c = 0; c + 2 < r.size(); c += 3) {
        std::snprintf(buf, sizeof buf, "%.17g %.17g %.17g\n", r[c], r[c + 1], r[c + 2]);
        out << buf;
    }
    out.flush();
    if (!out) throw InputError("cannot write reactions file '" + path + "'");
}

}  // namespace

nlohmann::json benchFclib(const ExperimentOptions& options) {
    const std::vector<KeySpec> keys = {
        {"bench.problem", KeyType::Text, "", "FCLIB (HDF5) or FC3D text problem: the general solver", -kInf, kInf, {}},
        {"bench.bodies", KeyType::Text, "", "sphere pile (gen_sphere_pile.py --bodies): the engine's sweep", -kInf,
         kInf, {}},
        {"bench.write_r", KeyType::Text, "", "file for the impulses r, 3 per contact (harness convention)", -kInf, kInf,
         {}},
        {"bench.repeat", KeyType::Integer, "1", "solves from zero impulses; the fastest is reported", 1, 1e4, {}},
        {"bench.r0", KeyType::Text, "", "start from these impulses (as bench.write_r writes them) instead of zero",
         -kInf, kInf, {}},
        {"bench.history", KeyType::Text, "", "sphere piles: file of `sweeps error seconds` every cd.check_every "
                                            "sweeps (its error evaluations are timed too)", -kInf, kInf, {}},
    };
    Scene scene = loadSceneText("[grains]\nsource = chain\n[chain]\ncount = 1\n", "bench fclib",
                                setsWithSeed(options), keys);
    const std::string problemFile = sceneText(scene, "bench.problem"), bodiesFile = sceneText(scene, "bench.bodies");
    if (problemFile.empty() == bodiesFile.empty())
        throw InputError("bench fclib: set exactly one of bench.problem=FILE (FCLIB or FC3D text) and "
                         "bench.bodies=FILE (sphere pile)");
    const std::string rFile = sceneText(scene, "bench.write_r");
    if (!rFile.empty()) {  // checked before the work: its folder must exist
        const std::filesystem::path dir = std::filesystem::absolute(rFile).parent_path();
        if (!std::filesystem::is_directory(dir))
            throw InputError("bench.write_r: folder '" + dir.string() + "' does not exist");
    }
    const long repeat = sceneInteger(scene, "bench.repeat");
    const std::string r0File = sceneText(scene, "bench.r0");
    CdSettings cd = scene.cd;
    cd.warmStart = !r0File.empty();  // the start: zero impulses, or bench.r0's
    cd.measureError = true;
    nlohmann::json results;
    std::vector<double> r;
    double best = kInf;
    CdStepStats stats;
    if (!bodiesFile.empty()) {
        const FilePile pile = readPile(bodiesFile);
        const std::vector<double> r0 = readImpulses(r0File, pile.contacts.size());
        const std::string historyFile = sceneText(scene, "bench.history");
        std::ofstream history;
        if (!historyFile.empty()) {
            history.open(historyFile);
            if (!history) throw InputError("bench.history: cannot write '" + historyFile + "'");
            history.precision(10);
        }
        double bestSolve = kInf;
        World world;
        std::vector<Contact> contacts;
        for (long k = 0; k < repeat; ++k) {
            world = pile.world;
            contacts = pile.contacts;
            if (!r0.empty())
                for (std::size_t c = 0; c < contacts.size(); ++c) {
                    const Vec3 onA = pile.frames[c] * Vec3(r0[3 * c], r0[3 * c + 1], r0[3 * c + 2]);
                    contacts[c].history.reaction = (pile.aIsB[c] ? onA : Vec3(-onA)) / pile.dt;
                }
            CdSolver solver(cd);
            const auto t0 = std::chrono::steady_clock::now();
            if (!historyFile.empty() && k == 0)
                solver.setSweepObserver([&](int sweeps, const std::vector<SolverRow>&) {
                    if (sweeps % std::max(1, cd.checkEvery) == 0)
                        history << sweeps << ' ' << solver.naturalError() << ' ' << secondsSince(t0) << '\n';
                    return false;
                });
            stats = solver.solve(world, contacts, StepContext{pile.dt, 0, scene.simulation.seed});
            bestSolve = std::min(bestSolve, secondsSince(t0));
            best = std::min(best, solver.lastSweepSeconds());
        }
        r.resize(3 * contacts.size());
        for (std::size_t c = 0; c < contacts.size(); ++c) {
            const Vec3 P = contacts[c].history.reaction * pile.dt;
            const Vec3 onA = pile.aIsB[c] ? P : Vec3(-P);
            const Vec3 f = pile.frames[c].transpose() * onA;
            for (int d = 0; d < 3; ++d) r[3 * c + static_cast<std::size_t>(d)] = f[d];
        }
        results = {{"source", bodiesFile}, {"solver", "engine"}, {"particles", pile.world.numGrains},
                   {"solve_seconds", bestSolve}};
    } else {
        const LocalProblem problem = readLocalProblem(problemFile);
        const std::vector<double> r0 = readImpulses(r0File, problem.contacts());
        LocalSolveResult res;
        for (long k = 0; k < repeat; ++k) {
            r = r0.empty() ? std::vector<double>(3 * problem.contacts(), 0.0) : r0;
            res = solveLocalProblem(problem, r, cd, scene.simulation.seed);
            best = std::min(best, res.seconds);
        }
        stats.iterations = res.sweeps;
        stats.error = res.error;
        stats.converged = res.converged;
        results = {{"source", problemFile}, {"solver", "general"}, {"title", problem.title}};
        if (res.relaxedError >= 0.0) results["relaxed_error"] = res.relaxedError;
        if (!problem.solution.empty()) {
            results["stored_solution_error"] = naturalError(problem, problem.solution);
            results["stored_solution_fclib_merit"] = problem.fclibMerit;
        }
    }
    results["contacts"] = r.size() / 3;
    results["sweeps"] = stats.iterations;
    results["seconds"] = best;
    results["error"] = stats.error;
    results["converged"] = stats.converged;
    if (!bodiesFile.empty()) results["proximal_from_sweep"] = stats.proximalFrom;  // −1: never
    results["criterion"] = cd.criterion == Criterion::Natural ? "natural" : cd.criterion == Criterion::Fixed ? "fixed"
                                                                         : "other";
    results["epsilon"] = cd.epsilon;
    results["order"] = std::string(lawName(kSweepOrderNames, cd.order));
    results["family"] = std::string(lawName(kCdSolverNames, cd.solver));
    if (!rFile.empty()) writeReactions(rFile, r);
    return {{"bench", "fclib"}, {"threads", omp_get_max_threads()}, {"results", results}};
}

}  // namespace moreau
