/// The `moreau` command line (INTERFACE.md): run, experiment, bench, list.
#include <malloc.h>
#include <omp.h>

#include <boost/program_options.hpp>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "moreau/core/error.hpp"
#include "moreau/experiments/experiment.hpp"
#include "moreau/experiments/scene_keys.hpp"
#include "moreau/sim/run.hpp"
#include "moreau/io/out_dir.hpp"
#include "moreau/io/output.hpp"
#include "moreau/io/scene_file.hpp"
#include "moreau/model/integrator_table.hpp"
#include "moreau/model/scene.hpp"
#include "moreau/core/comm.hpp"
#include "moreau/sim/distributed.hpp"

namespace po = boost::program_options;
using namespace moreau;

namespace {

constexpr const char* kUsage = R"(moreau — rigid (contact dynamics) and soft (MD) granular dynamics

usage:
  moreau run SCENE [--set KEY=VALUE]... [--out DIR] [--threads N] [--seed S] [--quiet]
  moreau run --resume DIR [--set KEY=VALUE]... [--threads N] [--quiet]
  moreau experiment NAME [--set KEY=VALUE]... [--out DIR] [--json FILE] [--threads N] [--seed S] [--quiet]
  moreau bench NAME [--set KEY=VALUE]... [--json FILE] [--threads N] [--seed S]
  moreau list [experiments|benches|force-laws|integrators|criteria|solvers|orders]
  moreau --help | --version
  moreau run --help        every scene key with its default, range and meaning
  moreau run --help KEY    one key (md.kn) or section (md, wall.NAME)
  moreau experiment NAME --help, moreau bench NAME --help   its own keys

KEY is section.key as in scene files, e.g. cd.iterations=80.
Exit status: 0 success, 2 bad input or an output that cannot be written,
3 the simulation diverged (the last good step is in DIR/checkpoint),
130/143 stopped by SIGINT/SIGTERM (after writing DIR/checkpoint).
)";

struct Common {
    std::vector<std::string> sets;
    std::string out = "out";
    bool outGiven = false;  ///< --out was on the command line
    std::string json;
    int threads = 0;
    std::optional<std::uint64_t> seed;
    bool quiet = false;
    bool help = false;
    std::string target;
    std::string resume;
};

Common parseCommon(const std::string& command, const std::vector<std::string>& args, bool allowOut, bool allowJson) {
    Common c;
    po::options_description desc;
    std::string seed;
    desc.add_options()("set", po::value<std::vector<std::string>>(&c.sets)->composing(), "KEY=VALUE")(
        "threads", po::value<int>(&c.threads), "OpenMP threads")("seed", po::value<std::string>(&seed), "seed")(
        "quiet", po::bool_switch(&c.quiet), "no progress")("help,h", po::bool_switch(&c.help), "help")(
        "target", po::value<std::string>(&c.target), "scene or name");
    if (allowOut) desc.add_options()("out", po::value<std::string>(&c.out), "output directory");
    if (command == "run") desc.add_options()("resume", po::value<std::string>(&c.resume), "run folder to resume");
    if (allowJson) desc.add_options()("json", po::value<std::string>(&c.json), "JSON result file");
    po::positional_options_description pos;
    pos.add("target", 1);
    po::variables_map vm;
    try {
        po::store(po::command_line_parser(args).options(desc).positional(pos).run(), vm);
        po::notify(vm);
    } catch (const po::error& e) {
        throw InputError("moreau " + command + ": " + e.what() + " (see moreau --help)");
    }
    // More threads than this are a typing error, not a machine.
    const int maxThreads = std::max(256, 4 * omp_get_num_procs());
    if (vm.count("threads") && (c.threads < 1 || c.threads > maxThreads))
        throw InputError("--threads: " + std::to_string(c.threads) + " (allowed: 1 to " + std::to_string(maxThreads) +
                         ")");
    if (!seed.empty()) {
        try {
            std::size_t used = 0;
            if (!std::isdigit(static_cast<unsigned char>(seed[0]))) throw std::invalid_argument(seed);
            c.seed = std::stoull(seed, &used);
            if (used != seed.size()) throw std::invalid_argument(seed);
        } catch (const std::exception&) {
            throw InputError("--seed: '" + seed + "' is not an integer in [0, 2^64 - 1]");
        }
    }
    c.outGiven = vm.count("out") > 0;
    if (c.threads > 0) omp_set_num_threads(c.threads);
    return c;
}

const ExperimentInfo& findEntry(const std::vector<ExperimentInfo>& list, const std::string& name, const std::string& kind) {
    for (const auto& e : list)
        if (e.name == name) return e;
    std::string names;
    for (const auto& e : list) names += (names.empty() ? "" : ", ") + e.name;
    throw InputError("unknown " + kind + " '" + name + "' (allowed: " + names + ")");
}

/// Exit 2 (InputError) unless `path` can be written: an existing file that is
/// writable and not a directory, or a new file in an existing writable folder.
void checkWritableFile(const std::string& path, const char* option) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (fs::is_directory(path, ec)) throw InputError(std::string(option) + " '" + path + "': is a directory");
    if (fs::exists(path, ec)) {
        if (access(path.c_str(), W_OK) != 0) throw InputError(std::string(option) + " '" + path + "': not writable");
        return;
    }
    fs::path parent = fs::path(path).parent_path();
    if (parent.empty()) parent = ".";
    if (!fs::is_directory(parent, ec) || access(parent.c_str(), W_OK) != 0)
        throw InputError(std::string(option) + " '" + path + "': its folder '" + parent.string() +
                         "' does not exist or is not writable");
}

/// Exit 2 unless `dir` is a writable folder or could be made in one (it is
/// made when the results are written, so bad input leaves nothing behind).
void checkWritableDir(const std::string& dir, const char* option) {
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::path p = fs::absolute(dir, ec);
    while (!fs::exists(p, ec) && p.has_parent_path() && p != p.parent_path()) p = p.parent_path();
    if (!fs::is_directory(p, ec) || access(p.c_str(), W_OK) != 0)
        throw InputError(std::string(option) + " '" + dir + "': " +
                         (p == fs::absolute(dir, ec) ? "not a writable folder" : "cannot be made in '" + p.string() + "'"));
}

/// The message with control bytes written as \xHH: one line, nothing the
/// terminal would act on.
std::string printable(const std::string& text) {
    std::string out;
    for (const char ch : text) {
        const auto c = static_cast<unsigned char>(ch);
        if (c < 0x20 || c == 0x7f) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02x", c);
            out += buf;
        } else {
            out += ch;
        }
    }
    return out;
}

void writeResult(const nlohmann::json& doc, const std::string& jsonPath) {
    if (!jsonPath.empty()) writeJsonFile(jsonPath, doc);
    std::cout << doc.dump(2) << std::endl;
}

int cmdRun(const std::vector<std::string>& args) {
    Common c = parseCommon("run", args, true, false);
    std::error_code exists;
    if (c.help && !c.target.empty() && !std::filesystem::exists(c.target, exists)) {
        std::cout << sceneKeyHelp(c.target);  // --help KEY or --help SECTION
        return 0;
    }
    if (c.help) {
        std::cout << "moreau run SCENE [--set KEY=VALUE]... [--out DIR] [--threads N] [--seed S] [--quiet]\n"
                  << "moreau run --resume DIR [--set KEY=VALUE]... [--threads N] [--quiet]\n\n"
                  << "Scene keys (section.key = default):\n\n"
                  << sceneReference();
        return 0;
    }
    RunOptions options;
    options.outDir = c.out;
    options.quiet = c.quiet;
    RunOutcome outcome;
    if (!c.resume.empty()) {
        if (c.seed) throw InputError("--seed: cannot change when a run resumes (the seed is the checkpoint's)");
        std::error_code ec;
        if (c.outGiven && !std::filesystem::equivalent(c.out, c.resume, ec))
            throw InputError("--out '" + c.out + "': not with --resume (a resumed run continues its series in the "
                             "folder it resumes, '" + c.resume + "'; to keep that run as it is, copy the folder "
                             "and resume the copy)");
        options.outDir = c.resume;
        outcome = resumeRun(options, c.sets, c.target);
    } else {
        if (c.target.empty()) throw InputError("moreau run: missing SCENE file (see moreau run --help)");
        if (c.seed) c.sets.push_back("simulation.seed=" + std::to_string(*c.seed));
        outcome = runSceneFile(c.target, c.sets, options);
    }
    std::cout << outcome.report << std::flush;
    return outcome.exitStatus;
}

int cmdExperiment(const std::vector<std::string>& args, bool bench) {
    const std::string command = bench ? "bench" : "experiment";
    Common c = parseCommon(command, args, !bench, true);
    const auto& list = bench ? benches() : experiments();
    if (c.help && !c.target.empty()) {
        // The experiment's (bench's) own keys: its loader lists them when asked
        // for the one key none declares.
        const ExperimentInfo& entry = findEntry(list, c.target, command);
        ExperimentOptions options;
        options.sets = {command + ".key_reference=1"};
        options.writeFiles = false;
        options.quiet = true;
        try {
            entry.run(options);
        } catch (const KeyReferenceRequest& r) {
            std::cout << "moreau " << command << " " << c.target << " [--set KEY=VALUE]...\n\n" << entry.description
                      << "\n\nKeys (" << command << ".key = default):\n\n"
                      << r.text << "\nScene keys it reads (any other --set is refused): "
                      << sceneKeysRead(c.target, bench) << "\n";
            return 0;
        }
        throw std::logic_error(command + " " + c.target + ": its keys could not be listed");
    }
    if (c.help || c.target.empty()) {
        std::cout << "moreau " << command << " NAME [--set KEY=VALUE]...\n\nAvailable:\n";
        for (const auto& e : list) std::cout << "  " << e.name << "  —  " << e.description << "\n";
        return c.target.empty() && !c.help ? 2 : 0;
    }
    const ExperimentInfo& entry = findEntry(list, c.target, command);
    if (comm::ranks() > 1 && !entry.distributed)
        throw InputError("moreau " + command + " " + c.target +
                         ": runs on one process (under mpirun: moreau run, moreau experiment sound-wave-2d, "
                         "moreau bench md-step and cd-sweep)");
    const bool root = comm::rank() == 0;
    // Where the results go is checked before the work starts.
    if (!c.json.empty()) checkWritableFile(c.json, "--json");
    if (!bench) checkWritableDir(c.out, "--out");
    ExperimentOptions options;
    options.sets = c.sets;
    options.outDir = c.out;
    options.seed = c.seed;
    options.quiet = c.quiet || !root;
    options.writeFiles = root;
    // One run per output folder, as moreau run's (io/out_dir.hpp): held for
    // the experiment's life; a refused start leaves no folder it made.
    std::optional<OutDirLock> lock;
    bool made = false;
    if (!bench && root) {
        std::error_code ec;
        made = !std::filesystem::exists(c.out, ec);
        std::filesystem::create_directories(c.out, ec);
        lock.emplace(c.out, "--out");
    }
    nlohmann::json doc;
    try {
        doc = entry.run(options);
    } catch (...) {
        if (lock) {
            lock->release();
            std::error_code ec;
            if (made && std::filesystem::is_empty(c.out, ec)) std::filesystem::remove(c.out, ec);
        }
        throw;
    }
    doc["ranks"] = comm::ranks();
    if (!root) return 0;
    if (!bench) {
        // Human-readable summary of the checks on stderr, JSON on stdout.
        if (!c.quiet)
            for (const auto& chk : doc["checks"])
                std::fprintf(stderr, "%-28s value %-12.6g expected %-12.6g tol %-8.3g %s\n",
                             chk["name"].get<std::string>().c_str(), chk["value"].get<double>(),
                             chk["expected"].get<double>(), chk["tolerance"].get<double>(),
                             chk["pass"].get<bool>() ? "PASS" : "FAIL");
    }
    writeResult(doc, c.json);
    // INTERFACE.md: 4 when an experiment ran and one of its checks failed.
    if (!bench)
        for (const auto& chk : doc["checks"])
            if (!chk["pass"].get<bool>()) return 4;
    return 0;
}

int cmdList(const std::vector<std::string>& args) {
    const std::string what = args.empty() ? "all" : args[0];
    bool known = false;
    auto section = [&](const std::string& name, const std::vector<std::pair<std::string, std::string>>& items) {
        if (what != "all" && what != name) return;
        known = true;
        std::cout << name << ":\n";
        for (const auto& [k, v] : items) std::cout << "  " << k << (v.empty() ? "" : "  —  " + v) << "\n";
    };
    std::vector<std::pair<std::string, std::string>> ex, be;
    for (const auto& e : experiments()) ex.emplace_back(e.name, e.description);
    for (const auto& e : benches()) be.emplace_back(e.name, e.description);
    section("experiments", ex);
    section("benches", be);
    section("criteria", {{"fixed", "N_I sweeps per step (CD eq. 37), cd.iterations"},
                         {"local", "every contact |ΔR| <= ε|R| + δ (CD eq. 35), cd.epsilon, cd.delta, cd.max_iterations"},
                         {"global", "Δ<|R|> <= ε<|R|> (CD eq. 36), cd.epsilon, cd.max_iterations"},
                         {"natural", "Siconos/FCLIB error <= ε, checked every cd.check_every sweeps "
                                     "(docs/convergence.md), cd.epsilon, cd.max_iterations"}});
    {
        // Every order of the scene's table with its note; the switch has no
        // default, so -Wswitch flags an order added without one.
        auto note = [](SweepOrder order) -> std::string {
            switch (order) {
                case SweepOrder::RandomSweep: return "a fresh random permutation every sweep (CD §2.5, default)";
                case SweepOrder::ShuffleOnce: return "one random permutation per time step";
                case SweepOrder::Fixed: return "contacts in key order";
                case SweepOrder::RandomSequential: return "random draws with replacement";
                case SweepOrder::RandomKeys:
                    return "a fresh random permutation every sweep, from a random key per contact (the same on any "
                           "number of ranks: cd.distributed = exact)";
                case SweepOrder::Jacobi:
                    return "not Gauss-Seidel: every contact from the same velocities, applied together (the "
                           "parallel update CD §2.5 calls unstable)";
            }
            return "";
        };
        std::vector<std::pair<std::string, std::string>> orders;
        for (const auto& [order, name] : kSweepOrderNames) orders.emplace_back(name, note(order));
        section("orders", orders);
    }
    {
        // The solver families of cd.solver (model/scene.hpp's table); the
        // switch has no default, so -Wswitch flags a family added without a note.
        auto note = [](CdSolverFamily family) -> std::string {
            switch (family) {
                case CdSolverFamily::GaussSeidel:
                    return "the paper's sweeps over the one-contact shock law (CD section 2.4; cd.order, "
                           "cd.proximal); on MPI ranks too; default";
                case CdSolverFamily::Newton:
                    return "global semi-smooth Newton on the Alart-Curnier function (Alart & Curnier 1991; Siconos "
                           "NSN_AC) with a Levenberg-Marquardt weight, sparse LU and an Armijo line search; a step's whole "
                           "problem (one process) or an FCLIB problem (moreau bench fclib)";
                case CdSolverFamily::Apgd:
                    return "Nesterov's accelerated projected gradient on the cone complementarity problem (Mazhar et "
                           "al. 2015, Chrono's APGD): De Saxce's convex relaxation, sliding contacts separate at "
                           "mu |u_t|; a step's whole problem (one process) or an FCLIB problem (moreau bench fclib)";
            }
            return "";
        };
        std::vector<std::pair<std::string, std::string>> solvers;
        for (const auto& [family, name] : kCdSolverNames) solvers.emplace_back("cd.solver=" + std::string(name), note(family));
        section("solvers", solvers);
    }
    {
        // One line per row of the law table (model/law_table.hpp): what the
        // law is, the memory it keeps per contact, the derivatives it gives
        // the integrators and the schedules of the force stage that take it.
        std::vector<std::pair<std::string, std::string>> laws;
        auto add = [&](const char* key, const ForceLawRow& row) {
            std::vector<std::string> parts;
            if (row.spring) parts.emplace_back("spring");
            if (row.extraSlots > 0)
                parts.push_back(std::to_string(row.extraSlots) + (row.extraSlots > 1 ? " values" : " value"));
            if (row.slidingFlag) parts.emplace_back("sliding flag if mu_s != mu_d");
            std::string memory;
            for (const std::string& part : parts) {
                if (!memory.empty()) memory.append(" + ");
                memory.append(part);
            }
            const std::string derivatives = row.timeDerivatives >= kAnyDerivative ? "all"
                                            : row.timeDerivatives > 0
                                                ? "da/dt" + std::string(row.positionJacobian ? ", da/dr" : "")
                                                : "none";
            std::string schedules = "staged";
            if (row.fused) schedules += ", fused";
            if (row.lanes) schedules += ", lanes";
            std::string keys;
            if (row.cohesive) keys = "; cohesive: pulls, md.clip_attractive does not apply";
            for (const LawKey& k : row.keys) keys.append(k.name == row.keys[0].name ? "; keys: " : ", ").append(k.name);
            laws.emplace_back(std::string(key) + std::string(row.name),
                              std::string(row.summary) + " [memory: " + (memory.empty() ? "none" : memory) +
                                  "; derivatives: " + derivatives + "; pipelines: " + schedules + keys + "]");
        };
        for (const auto& entry : kNormalLaws) add("md.normal=", entry.row);
        for (const auto& entry : kTangentialLaws) add("md.tangential=", entry.row);
        for (const auto& entry : kRollingLaws) add("md.rolling=", entry.row);
        laws.emplace_back("md.mu_static_ratio", "static over dynamic friction for the laws with a sliding flag (mu = "
                                                "contact.mu / wall.NAME.mu is the dynamic one)");
        laws.emplace_back("md.meff=none|damping|both",
                          "where m_eff enters the constants (force schemes section 2, last paragraph)");
        section("force-laws", laws);
    }
    {
        std::vector<std::pair<std::string, std::string>> in;
        for (const IntegratorInfo& i : integrators()) {
            std::string needs;
            if (i.timeDerivatives >= 1) needs = "da/dt";
            if (i.timeDerivatives >= 2) needs += ", d2a/dt2";
            if (i.timeDerivatives >= 3) needs += ", d3a/dt3";
            if (i.needsPositionJacobian) needs += needs.empty() ? "da/dr" : ", da/dr";
            const bool numbered = i.equation[0] >= '0' && i.equation[0] <= '9';
            in.emplace_back(i.name, std::string(i.label) + (numbered ? ", eq. " : ", ") + i.equation + "; order " + std::to_string(i.order) +
                                        (i.dampedOrder < i.order ? " (" + std::to_string(i.dampedOrder) + " with dashpots)" : "") +
                                        ", " + std::to_string(i.forceEvaluations) + " force evaluation" +
                                        (i.forceEvaluations > 1 ? "s" : "") + "/step, history " +
                                        std::to_string(i.historySteps) + " step" + (i.historySteps == 1 ? "" : "s") +
                                        ", needs " + (needs.empty() ? "no derivatives" : needs) +
                                        (i.clumps ? ", steps clumps" : "") + "; " + i.description);
        }
        section("integrators", in);
    }
    if (!known)
        throw InputError("moreau list: unknown category '" + what +
                         "' (allowed: experiments, benches, force-laws, integrators, criteria, solvers, orders)");
    return 0;
}

}  // namespace

int run(int argc, char** argv);

int main(int argc, char** argv) {
    // Under mpirun every rank runs the command (moreau run: docs/distributed.md).
    comm::start(&argc, &argv);
    const int status = run(argc, argv);
    comm::stop();
    return status;
}

int run(int argc, char** argv) {
    // Per-step buffers of megabytes (contacts, solver rows) are allocated and
    // released every step. A fixed mmap threshold keeps them out of the heap,
    // so released memory goes back to the system instead of fragmenting the
    // heap (glibc otherwise raises the threshold after the first release;
    // measured: 1215 against 1073 bytes per grain at 100k grains).
    mallopt(M_MMAP_THRESHOLD, 1 << 20);
    std::vector<std::string> args(argv + 1, argv + argc);
    try {
        if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
            std::cout << kUsage;
            return args.empty() ? 2 : 0;
        }
        if (args[0] == "--version") {
            std::cout << "moreau " << MOREAU_VERSION << "\n";
            return 0;
        }
        const std::string command = args[0];
        args.erase(args.begin());
        if (command == "run") return cmdRun(args);
        if (comm::ranks() > 1 && command != "run" && command != "experiment" && command != "bench")
            throw InputError("moreau " + command + ": runs on one process (under mpirun: moreau run, moreau "
                             "experiment sound-wave-2d, moreau bench md-step and cd-sweep)");
        if (command == "experiment") return cmdExperiment(args, false);
        if (command == "bench") return cmdExperiment(args, true);
        if (command == "list") return cmdList(args);
        throw InputError("unknown command '" + command + "' (allowed: run, experiment, bench, list; see moreau --help)");
    } catch (const InputError& e) {
        if (comm::rank() == 0) std::cerr << "moreau: error: " << printable(e.what()) << "\n";
        return 2;
    } catch (const DivergenceError& e) {
        std::cerr << "moreau: the simulation diverged: " << printable(e.what()) << "\n";
        return 3;
    } catch (const std::bad_alloc&) {
        // The last resort: the scene checks refuse what they can foresee
        // (grain counts, piled-up grains) before allocating.
        std::cerr << "moreau: error: out of memory (the scene needs more memory than this machine gives; allowed: "
                     "fewer grains or contacts)\n";
        return 2;
    } catch (const std::filesystem::filesystem_error& e) {
        // A folder or file the outputs need that cannot be made or written.
        std::cerr << "moreau: error: " << printable(e.what()) << "\n";
        return 2;
    } catch (const std::exception& e) {
        std::cerr << "moreau: internal error: " << printable(e.what()) << "\n";
        return 1;
    }
}
