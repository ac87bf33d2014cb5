/// Convergence across solver families (docs/convergence.md, "Solver
/// families"): the Siconos error of the iterate against iterations and wall
/// time for each cd.solver family, on the Siconos harness's piles (flat and
/// the 14-layer pyramid: sphere_pile.hpp) and on the 2D piston packing's load
/// step. Each recorded iterate r is also measured against the best answer
/// found on its problem: its distance in contact velocities u = W r + q, in
/// impulses r, and the contacts whose open/stick/slip status differs — whether
/// a plateau is the problem's (on a hyperstatic pile the impulses need not be
/// unique while the velocities are) or the solver's.
///
/// Every solve runs as in `moreau run` (CdSolver::solve: Gauss–Seidel's own
/// sweeps, the others on the step posed as a local problem) under the natural
/// criterion at experiment.epsilon. Iterates are recorded every iteration up
/// to 20, then experiment.records_per_decade times per decade; the times
/// leave out the recording.
#include <algorithm>
#include <cmath>
#include <iostream>
#include <optional>
#include <sstream>

#include "moreau/cd/local_problem.hpp"
#include "moreau/cd/solver.hpp"
#include "moreau/core/error.hpp"
#include "moreau/experiments/experiment.hpp"
#include "moreau/io/scene_file.hpp"
#include "moreau/sim/simulation.hpp"
#include "sphere_pile.hpp"

namespace moreau {

namespace {

/// One problem: a step's world and contacts (with last step's reactions).
struct Case {
    std::string name;
    World world;
    std::vector<Contact> contacts;
    StepContext ctx;
    long freedoms = 0;  ///< the grains' velocity components (6 per sphere, 3 per disk)
    int dimension = 3;
};

struct Solver {
    std::string name;
    CdSolverFamily family;
    SweepOrder order = SweepOrder::Fixed;
    bool presweeps = false;  ///< Newton from experiment.presweeps fixed-order sweeps
    std::string claim;       ///< what docs/convergence.md says it reaches on the flat pile
};

const std::vector<Solver>& solverTable() {
    static const std::vector<Solver> table = {
        {"gauss-seidel", CdSolverFamily::GaussSeidel, SweepOrder::Fixed, false, "experiment.epsilon"},
        {"gauss-seidel-random", CdSolverFamily::GaussSeidel, SweepOrder::RandomSweep, false, "stalls: 1e-5 to 1e-3"},
        {"newton", CdSolverFamily::Newton, SweepOrder::Fixed, false, "1e-4"},
        {"gauss-seidel+newton", CdSolverFamily::Newton, SweepOrder::Fixed, true, "experiment.epsilon"},
        {"apgd", CdSolverFamily::Apgd, SweepOrder::Fixed, false, "relaxed error 1e-6"},
    };
    return table;
}

struct Record {
    int iterations;
    double seconds;
    std::vector<double> r;
};

struct Run {
    const Solver* solver;
    std::vector<Record> records;
    LocalProblem problem;
    std::vector<double> answer;  ///< the impulses the solve returned
    CdStepStats stats;
    double seconds = 0.0;
    int presweeps = 0;
    double error = 0.0, relaxed = 0.0;
};

/// Which iterations are recorded: all up to 20, then a geometric sequence.
class Schedule {
public:
    explicit Schedule(int perDecade) : factor_(std::pow(10.0, 1.0 / perDecade)) {}
    bool due(int it) {
        if (it > 20 && it < next_) return false;
        next_ = std::max(next_, static_cast<double>(it) * factor_);
        return true;
    }

private:
    double factor_, next_ = 0.0;
};

Run solveCase(const Case& c, CdSettings settings, const Solver& s, int presweeps, int perDecade) {
    Run run;
    run.solver = &s;
    std::vector<Contact> contacts = c.contacts;
    double offset = 0.0;
    if (s.presweeps && presweeps > 0) {  // Gauss–Seidel's sweeps first: their reactions start Newton
        CdSettings gs = settings;
        gs.solver = CdSolverFamily::GaussSeidel;
        gs.order = SweepOrder::Fixed;
        gs.criterion = Criterion::Fixed;
        gs.iterations = presweeps;
        CdSolver pre(gs);
        World w = c.world;
        const auto t0 = std::chrono::steady_clock::now();
        pre.solve(w, contacts, c.ctx);
        offset = secondsSince(t0);
        settings.warmStart = true;
        run.presweeps = presweeps;
    }
    settings.solver = s.family;
    settings.order = s.order;
    CdSolver solver(settings);
    LocalProblemCapture capture;
    solver.setStepObserver(&capture);
    Schedule schedule(perDecade);
    double observing = 0.0;
    const auto t0 = std::chrono::steady_clock::now();
    auto record = [&](int it, std::span<const double> r) {
        if (!schedule.due(it)) return;
        const auto o0 = std::chrono::steady_clock::now();
        run.records.push_back({it, offset + secondsSince(t0) - observing, std::vector<double>(r.begin(), r.end())});
        observing += secondsSince(o0);
    };
    solver.setIterateObserver(record);
    solver.setSweepObserver([&](int sweeps, const std::vector<SolverRow>&) {
        if (schedule.due(sweeps)) {
            const auto o0 = std::chrono::steady_clock::now();
            run.records.push_back({sweeps, offset + secondsSince(t0) - observing, solver.frameReactions()});
            observing += secondsSince(o0);
        }
        return false;
    });
    World w = c.world;
    run.stats = solver.solve(w, contacts, c.ctx);
    run.seconds = offset + secondsSince(t0) - observing;
    run.problem = std::move(capture.problem);
    run.answer = std::move(capture.reactions);
    run.error = naturalError(run.problem, run.answer);
    run.relaxed = relaxedNaturalError(run.problem, run.answer);
    // The answer closes the record (Newton and APGD return their best iterate).
    if (!run.records.empty() && run.records.back().iterations == run.stats.iterations) run.records.pop_back();
    run.records.push_back({run.stats.iterations, run.seconds, run.answer});
    return run;
}

/// A contact's status in r: open (no impulse), sliding (on the cone's
/// boundary) or sticking.
enum Status : char { Open, Stick, Slip };
std::vector<char> statuses(const LocalProblem& p, const std::vector<double>& r, double scale) {
    std::vector<char> s(p.contacts());
    for (std::size_t i = 0; i < s.size(); ++i) {
        const double rn = r[3 * i], rt = std::hypot(r[3 * i + 1], r[3 * i + 2]);
        s[i] = rn <= 1e-9 * scale ? Open : rt >= (1.0 - 1e-6) * p.mu[i] * rn && p.mu[i] > 0.0 ? Slip : Stick;
    }
    return s;
}

/// The mean normal impulse over the contacts (the scale of "open").
double meanNormal(const LocalProblem& p, const std::vector<double>& r) {
    double sum = 0.0;
    for (std::size_t i = 0; i < p.contacts(); ++i) sum += r[3 * i];
    return p.contacts() ? sum / static_cast<double>(p.contacts()) : 1.0;
}

double norm(const std::vector<double>& a) {
    double s = 0.0;
    for (double x : a) s += x * x;
    return std::sqrt(s);
}
double distance(const std::vector<double>& a, const std::vector<double>& b) {
    double s = 0.0;
    for (std::size_t i = 0; i < a.size(); ++i) s += (a[i] - b[i]) * (a[i] - b[i]);
    return std::sqrt(s);
}

}  // namespace

nlohmann::json solverConvergence(const ExperimentOptions& options) {
    const std::vector<KeySpec> extra = {
        {"experiment.problems", KeyType::Text, "flat pyramid piston",
         "problems, any of: small, flat, pyramid (the Siconos harness's piles: --kx 4; --kx 24 --layers 2; --kx 14), "
         "piston (the 2D piston packing's load step, from the keys of piston_2d.ini)"},
        {"experiment.solvers", KeyType::Text, "gauss-seidel gauss-seidel-random newton gauss-seidel+newton apgd",
         "solvers, any of: gauss-seidel (fixed order), gauss-seidel-random (random-sweep), newton, "
         "gauss-seidel+newton (Newton from experiment.presweeps fixed-order sweeps), apgd"},
        {"experiment.epsilon", KeyType::Real, "1e-8", "tolerance in the Siconos error (APGD: its relaxed error)", 0.0,
         0.5, {}, true},
        {"experiment.max_sweeps", KeyType::Integer, "20000", "cap on Gauss-Seidel's sweeps and APGD's iterations", 1,
         1e8},
        {"experiment.newton_iterations", KeyType::Integer, "30", "cap on Newton's iterations (each a sparse LU)", 1,
         1e5},
        {"experiment.presweeps", KeyType::Integer, "100", "fixed-order sweeps before gauss-seidel+newton's Newton", 1,
         1e8},
        {"experiment.mu_floor", KeyType::Real, "0.5", "the piles' friction on the floor (the harness's --mu-floor)",
         0.0, kInf},
        {"experiment.mu_grain", KeyType::Real, "0.3", "the piles' friction between spheres (--mu-sphere)", 0.0, kInf},
        {"experiment.mu_sweep", KeyType::Text, "0 0.05 0.1 0.2 0.3 0.5 1 2 4",
         "friction coefficients (floor and spheres alike) at which the pyramid is solved by the fixed and the "
         "random order, their answers compared (empty: none)"},
        {"experiment.records_per_decade", KeyType::Integer, "20",
         "iterates recorded per decade of iterations after the first 20", 1, 1000},
    };
    const Scene scene = loadBuiltinScene("piston_2d.ini", setsWithSeed(options), extra);
    if (scene.simulation.method != Method::CD)
        throw InputError("solver-convergence: key 'simulation.method': needs 'cd'");
    std::vector<std::string> problems = listWords(sceneText(scene, "experiment.problems"));
    for (const std::string& p : problems)
        if (p != "small" && p != "flat" && p != "pyramid" && p != "piston")
            throw InputError("key 'experiment.problems': '" + p + "' is not one of small, flat, pyramid, piston");
    std::vector<const Solver*> solvers;
    for (const std::string& name : listWords(sceneText(scene, "experiment.solvers"))) {
        const auto it = std::find_if(solverTable().begin(), solverTable().end(),
                                     [&](const Solver& s) { return s.name == name; });
        if (it == solverTable().end())
            throw InputError("key 'experiment.solvers': '" + name +
                             "' is not one of gauss-seidel, gauss-seidel-random, newton, gauss-seidel+newton, apgd");
        solvers.push_back(&*it);
    }
    if (problems.empty() || solvers.empty())
        throw InputError("keys 'experiment.problems' and 'experiment.solvers': name at least one of each");
    std::vector<double> muSweep;
    for (const std::string& w : listWords(sceneText(scene, "experiment.mu_sweep"))) {
        const std::optional<double> mu = parseNumber(w);
        if (!mu || !(*mu >= 0.0) || !std::isfinite(*mu))
            throw InputError("key 'experiment.mu_sweep': '" + w + "' is not a friction coefficient (a number >= 0)");
        muSweep.push_back(*mu);
    }
    const double epsilon = sceneReal(scene, "experiment.epsilon");
    const auto maxSweeps = static_cast<int>(sceneInteger(scene, "experiment.max_sweeps"));
    const auto newtonIterations = static_cast<int>(sceneInteger(scene, "experiment.newton_iterations"));
    const auto presweeps = static_cast<int>(sceneInteger(scene, "experiment.presweeps"));
    const auto perDecade = static_cast<int>(sceneInteger(scene, "experiment.records_per_decade"));
    auto say = [&](const std::string& s) {
        if (!options.quiet) std::cerr << "solver-convergence: " << s << '\n';
    };

    auto makeCase = [&](const std::string& name) {
        Case c;
        c.name = name;
        if (name == "piston") {
            // The scene's run (its Gauss–Seidel) to the step at which the
            // piston's force jumps; that step is the problem.
            double tSwitch = kInf;
            for (const ForceSchedule& f : scene.world.force) tSwitch = std::min(tSwitch, f.switchTime);
            const double dt = scene.simulation.dt;
            const long load = std::isfinite(tSwitch)
                                  ? std::max(0L, static_cast<long>(std::ceil(tSwitch / dt - 1e-9)) - 1)
                                  : scene.simulation.steps / 2;
            Simulation sim(scene);
            for (long k = 0; k < load; ++k) sim.step();
            sim.detect();
            sim.match();
            c.world = sim.world();
            c.contacts = sim.contacts();
            c.ctx = StepContext{dt, sim.world().step, scene.simulation.seed};
            c.dimension = sim.world().dimension;
        } else {
            const double muFloor = sceneReal(scene, "experiment.mu_floor");
            const double muGrain = sceneReal(scene, "experiment.mu_grain");
            const Pile p = name == "small" ? harnessPile(4, 4, 4, muFloor, muGrain)
                           : name == "flat" ? harnessPile(24, 24, 2, muFloor, muGrain)
                                            : harnessPile(14, 14, 14, muFloor, muGrain);
            c.world = p.world;
            c.contacts = p.contacts;
            c.ctx = StepContext{p.dt, 0, scene.simulation.seed};
        }
        c.freedoms = static_cast<long>(c.world.numGrains) * (c.dimension == 3 ? 6 : 3);
        return c;
    };

    nlohmann::json rows = nlohmann::json::array(), checks = nlohmann::json::array();
    std::vector<std::string> curveLines;
    for (const std::string& name : problems) {
        const Case c = makeCase(name);
        std::vector<Run> runs;
        for (const Solver* s : solvers) {
            CdSettings settings = scene.cd;
            settings.criterion = Criterion::Natural;
            settings.epsilon = epsilon;
            settings.maxIterations = s->family == CdSolverFamily::Newton ? newtonIterations : maxSweeps;
            settings.proximal = Proximal::Off;
            runs.push_back(solveCase(c, settings, *s, presweeps, perDecade));
            const Run& r = runs.back();
            std::ostringstream line;
            line << name << ", " << s->name << ": error " << r.error << " (relaxed " << r.relaxed << ") after "
                 << r.stats.iterations << " iterations, " << r.seconds << " s"
                 << (r.stats.converged ? "" : "; did not converge to experiment.epsilon");
            say(line.str());
        }
        // The reference: the answer of least Siconos error.
        const Run& best = *std::min_element(runs.begin(), runs.end(),
                                            [](const Run& a, const Run& b) { return a.error < b.error; });
        const LocalProblem& p = best.problem;
        const std::vector<double> uBest = p.velocity(best.answer);
        const double rnScale = meanNormal(p, best.answer);
        const std::vector<char> bestStatus = statuses(p, best.answer, rnScale);
        const double qNorm = std::max(norm(p.q), 1e-300), rNorm = std::max(norm(best.answer), 1e-300);
        struct Measure {
            double du, dr;
            long changes, open, stick, slip;
        };
        auto measure = [&](const std::vector<double>& r) {
            const std::vector<char> st = statuses(p, r, rnScale);
            Measure m{distance(p.velocity(r), uBest) / qNorm, distance(r, best.answer) / rNorm, 0, 0, 0, 0};
            for (std::size_t i = 0; i < st.size(); ++i) {
                m.changes += st[i] != bestStatus[i];
                (st[i] == Open ? m.open : st[i] == Stick ? m.stick : m.slip) += 1;
            }
            return m;
        };
        long bestCounts[3] = {0, 0, 0};
        for (char s : bestStatus) ++bestCounts[static_cast<int>(s)];
        for (const Run& run : runs) {
            // Each recorded iterate's errors once: for the curve and for the
            // first iterate at each tolerance (APGD: in its relaxed error).
            const double tolerances[3] = {1e-4, 1e-6, 1e-8};
            nlohmann::json at[3] = {nullptr, nullptr, nullptr};
            for (const Record& rec : run.records) {
                const double error = naturalError(p, rec.r), relaxed = relaxedNaturalError(p, rec.r);
                const double own = run.solver->family == CdSolverFamily::Apgd ? relaxed : error;
                for (int k = 0; k < 3; ++k)
                    if (at[k].is_null() && own <= tolerances[k])
                        at[k] = {{"iterations", rec.iterations}, {"seconds", rec.seconds}};
                const Measure m = measure(rec.r);
                std::ostringstream line;
                line.precision(8);
                line << name << ',' << run.solver->name << ',' << rec.iterations << ',' << rec.seconds << ',' << error
                     << ',' << relaxed << ',' << m.du << ',' << m.dr << ',' << m.open << ',' << m.stick << ','
                     << m.slip << ',' << m.changes;
                curveLines.push_back(line.str());
            }
            nlohmann::json reach = nlohmann::json::object();
            for (int k = 0; k < 3; ++k) {
                std::ostringstream key;
                key << tolerances[k];
                reach[key.str()] = at[k];
            }
            const Measure m = measure(run.answer);
            rows.push_back({{"problem", name},
                            {"solver", run.solver->name},
                            {"contacts", p.contacts()},
                            {"iterations", run.stats.iterations},
                            {"presweeps", run.presweeps},
                            {"seconds", run.seconds},
                            {"error", run.error},
                            {"relaxed_error", run.relaxed},
                            {"converged", run.stats.converged},
                            {"reached", reach},
                            {"velocity_distance", m.du},
                            {"impulse_distance", m.dr},
                            {"status_changes", m.changes},
                            {"open", m.open},
                            {"stick", m.stick},
                            {"slip", m.slip},
                            {"reference", run.solver == best.solver}});
            // The flat pile: each solver reaches what docs/convergence.md says it does.
            if (name == "flat") {
                const std::string& s = run.solver->name;
                const double logError = std::log10(std::max(run.error, 1e-300));
                if (s == "gauss-seidel" || s == "gauss-seidel+newton")
                    checks.push_back(makeBoundCheck("flat pile, " + s + ": log10(error) below log10(experiment.epsilon)",
                                                    logError, std::log10(epsilon), false));
                else if (s == "newton")
                    checks.push_back(makeBoundCheck("flat pile, newton from zero: log10(error) below -4", logError,
                                                    -4.0, false));
                else if (s == "apgd")
                    checks.push_back(makeBoundCheck("flat pile, apgd: log10(relaxed error) below -6 (docs: 5,216 "
                                                    "iterations)",
                                                    std::log10(std::max(run.relaxed, 1e-300)), -6.0, false));
                else
                    checks.push_back(makeCheck("flat pile, gauss-seidel-random stalls: log10(error) in [-5, -3]",
                                               logError, -4.0, 1.0, false));
            }
        }
        nlohmann::json summary = {{"problem", name},
                                  {"contacts", p.contacts()},
                                  {"grains", c.world.numGrains},
                                  {"unknowns", static_cast<long>(p.contacts()) * (c.dimension == 3 ? 3 : 2)},
                                  {"freedoms", c.freedoms},
                                  {"reference_solver", best.solver->name},
                                  {"reference_error", best.error},
                                  {"reference_open", bestCounts[Open]},
                                  {"reference_stick", bestCounts[Stick]},
                                  {"reference_slip", bestCounts[Slip]}};
        rows.push_back(summary);
    }

    // The pyramid's friction: both orders of Gauss–Seidel at each μ, their
    // answers compared in velocities and impulses.
    nlohmann::json muRows = nlohmann::json::array();
    for (double mu : muSweep) {
        const Pile pile = harnessPile(14, 14, 14, mu, mu);
        Case c;
        c.name = "pyramid";
        c.world = pile.world;
        c.contacts = pile.contacts;
        c.ctx = StepContext{pile.dt, 0, scene.simulation.seed};
        CdSettings settings = scene.cd;
        settings.criterion = Criterion::Natural;
        settings.epsilon = epsilon;
        settings.maxIterations = maxSweeps;
        settings.proximal = Proximal::Off;
        const Run fixedOrder = solveCase(c, settings, solverTable()[0], 0, 1);
        const Run randomOrder = solveCase(c, settings, solverTable()[1], 0, 1);
        const LocalProblem& p = fixedOrder.problem;
        const double du = distance(p.velocity(fixedOrder.answer), p.velocity(randomOrder.answer)) /
                          std::max(norm(p.q), 1e-300);
        const double dr = distance(fixedOrder.answer, randomOrder.answer) /
                          std::max(std::max(norm(fixedOrder.answer), norm(randomOrder.answer)), 1e-300);
        long counts[3] = {0, 0, 0};
        for (char st : statuses(p, fixedOrder.answer, meanNormal(p, fixedOrder.answer))) ++counts[static_cast<int>(st)];
        std::ostringstream line;
        line << "pyramid at mu " << mu << ": fixed order " << fixedOrder.error << " after " << fixedOrder.stats.iterations
             << " sweeps, random " << randomOrder.error << " after " << randomOrder.stats.iterations
             << "; answers apart by " << du << " |q| in u, " << dr << " in r";
        say(line.str());
        muRows.push_back({{"mu", mu},
                          {"error_fixed", fixedOrder.error},
                          {"sweeps_fixed", fixedOrder.stats.iterations},
                          {"error_random", randomOrder.error},
                          {"sweeps_random", randomOrder.stats.iterations},
                          {"velocity_distance", du},
                          {"impulse_distance", dr},
                          {"open", counts[Open]},
                          {"stick", counts[Stick]},
                          {"slip", counts[Slip]}});
    }
    // Hyperstatic alone does not stall the sweeps: without friction and with
    // enough of it to hold every contact, the two orders converge, to the
    // same velocities and (the pyramid's reactions not being unique)
    // different impulses.
    for (const auto& row : muRows) {
        const double mu = row["mu"].get<double>();
        if (mu != 0.0 && mu < 2.0) continue;
        const std::string at = "pyramid, mu = " + sceneValueText(mu) + ": ";
        const double worst = std::max(row["error_fixed"].get<double>(), row["error_random"].get<double>());
        checks.push_back(makeBoundCheck(at + "both orders converge: log10(error) below log10(experiment.epsilon)",
                                        std::log10(std::max(worst, 1e-300)), std::log10(epsilon), false));
        const double du = row["velocity_distance"].get<double>(), dr = row["impulse_distance"].get<double>();
        checks.push_back(makeCheck(at + "velocities agree (|du|/|q| <= 1e-5)", du, 0.0, 1e-5, false));
        checks.push_back(makeBoundCheck(at + "impulses differ (|dr|/|r| above 1e-3: reactions not unique)", dr, 1e-3,
                                        true));
    }

    if (options.writeFiles) {
        if (!muRows.empty()) {
            auto [mcsv, mo] = openCsv(options, "solver_convergence_mu.csv",
                                      "mu,error_fixed,sweeps_fixed,error_random,sweeps_random,velocity_distance,"
                                      "impulse_distance,open,stick,slip");
            for (const auto& r : muRows)
                mo << r["mu"].get<double>() << ',' << r["error_fixed"].get<double>() << ','
                   << r["sweeps_fixed"].get<int>() << ',' << r["error_random"].get<double>() << ','
                   << r["sweeps_random"].get<int>() << ',' << r["velocity_distance"].get<double>() << ','
                   << r["impulse_distance"].get<double>() << ',' << r["open"].get<long>() << ','
                   << r["stick"].get<long>() << ',' << r["slip"].get<long>() << '\n';
            mo.close();
        }
        auto [csv, out] = openCsv(options, "solver_convergence.csv",
                                  "problem,solver,iteration,seconds,error,relaxed_error,velocity_distance,"
                                  "impulse_distance,open,stick,slip,status_changes");
        for (const std::string& l : curveLines) out << l << '\n';
        out.close();
        auto [sum, os] = openCsv(options, "solver_convergence_summary.csv",
                                 "problem,solver,contacts,iterations,presweeps,seconds,error,relaxed_error,converged,"
                                 "iterations_1e-4,seconds_1e-4,iterations_1e-6,seconds_1e-6,iterations_1e-8,"
                                 "seconds_1e-8,velocity_distance,impulse_distance,status_changes,open,stick,slip");
        for (const auto& row : rows) {
            if (!row.contains("solver")) continue;
            os << row["problem"].get<std::string>() << ',' << row["solver"].get<std::string>() << ','
               << row["contacts"].get<std::size_t>() << ',' << row["iterations"].get<int>() << ','
               << row["presweeps"].get<int>() << ',' << row["seconds"].get<double>() << ','
               << row["error"].get<double>() << ',' << row["relaxed_error"].get<double>() << ','
               << (row["converged"].get<bool>() ? 1 : 0);
            for (const char* tol : {"0.0001", "1e-06", "1e-08"}) {
                const auto& at = row["reached"][tol];
                if (at.is_null()) os << ",,";
                else os << ',' << at["iterations"].get<int>() << ',' << at["seconds"].get<double>();
            }
            os << ',' << row["velocity_distance"].get<double>() << ',' << row["impulse_distance"].get<double>() << ','
               << row["status_changes"].get<long>() << ',' << row["open"].get<long>() << ','
               << row["stick"].get<long>() << ',' << row["slip"].get<long>() << '\n';
        }
        os.close();
        runPlotScript("solver_convergence",
                      {csv.string(), (options.outDir / "solver_convergence.png").string(), std::to_string(epsilon)},
                      options.quiet);
    }
    nlohmann::json solverNames = nlohmann::json::array(), problemNames = problems;
    for (const Solver* s : solvers) solverNames.push_back(s->name);
    nlohmann::json params = {{"problems", problemNames},
                             {"solvers", solverNames},
                             {"epsilon", epsilon},
                             {"max_sweeps", maxSweeps},
                             {"newton_iterations", newtonIterations},
                             {"presweeps", presweeps},
                             {"mu_floor", sceneReal(scene, "experiment.mu_floor")},
                             {"mu_grain", sceneReal(scene, "experiment.mu_grain")},
                             {"seed", scene.simulation.seed}};
    nlohmann::json results = {{"runs", nlohmann::json::array()}, {"problems", nlohmann::json::array()}};
    for (auto& row : rows) results[row.contains("solver") ? "runs" : "problems"].push_back(std::move(row));
    results["pyramid_mu"] = std::move(muRows);
    return {{"experiment", "solver-convergence"}, {"params", params}, {"results", results}, {"checks", checks}};
}

}  // namespace moreau
