#include "run_outputs.hpp"

#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>

#include "moreau/analysis/observables.hpp"
#include "moreau/core/comm.hpp"
#include "moreau/core/error.hpp"

namespace moreau {

// --- the folder ------------------------------------------------------------------

OutDirLock holdOutDir(const std::filesystem::path& dir, const std::string& option) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (!std::filesystem::is_directory(dir, ec))
        throw InputError(option + " '" + dir.string() + "': cannot create the folder" +
                         (ec ? " (" + ec.message() + ")" : std::string(" (a file of that name exists)")));
    return OutDirLock(dir, option);
}

OutDirLock holdResumedDir(const std::filesystem::path& dir) {
    OutDirLock lock;
    std::string failure;
    std::error_code ec;
    if (comm::rank() == 0) try {
            if (std::filesystem::is_directory(dir, ec)) lock = OutDirLock(dir, "--resume");
        } catch (const InputError& e) {
            failure = e.what();
        }
    failure = comm::broadcast(failure);
    if (!failure.empty()) throw InputError(failure);
    return lock;
}

void prepareOutDir(const std::filesystem::path& dir, bool fresh) {
    std::error_code ec;
    try {
        std::filesystem::path probe;
        ::close(createUniqueTemporary(dir / ".moreau-write-test", probe));
        std::filesystem::remove(probe, ec);
    } catch (const InputError&) {
        throw InputError("--out '" + dir.string() + "': the folder is not writable");
    }
    // A link or special file of an output's name is written through, later:
    // one that cannot be (a link to nothing or to a folder, a folder) is
    // refused now, before any work.
    for (const char* name : {"series.csv", "summary.json", "log.txt", "checkpoint"}) {
        const std::filesystem::path p = dir / name;
        const auto link = std::filesystem::symlink_status(p, ec);
        if (!std::filesystem::exists(link) || std::filesystem::is_regular_file(link)) continue;
        const auto target = std::filesystem::status(p, ec);
        if (!std::filesystem::exists(target))
            throw InputError("--out '" + dir.string() + "': '" + p.string() +
                             "' is a symbolic link to nothing (no file is created through a link; remove it)");
        if (std::filesystem::is_directory(target))
            throw InputError("--out '" + dir.string() + "': '" + p.string() + "' is a folder (allowed: a file, or a "
                             "link to one, written in place)");
    }
    if (!fresh) return;
    auto regular = [&](const std::filesystem::path& p) {
        return std::filesystem::is_regular_file(std::filesystem::symlink_status(p, ec));
    };
    auto stale = [](std::string_view name, auto isOutput) {
        const std::string_view base = temporaryBase(name);
        return isOutput(name) || (!base.empty() && (isOutput(base) || base == ".moreau-write-test"));
    };
    auto runFile = [](std::string_view name) {
        return name == "series.csv" || name == "summary.json" || name == "log.txt" || name == "checkpoint";
    };
    auto removeStale = [&](const std::filesystem::path& folder, auto isOutput) {
        std::vector<std::filesystem::path> old;
        for (const auto& entry : std::filesystem::directory_iterator(folder, ec))
            if (stale(entry.path().filename().string(), isOutput) && regular(entry.path())) old.push_back(entry.path());
        for (const auto& p : old) std::filesystem::remove(p, ec);
    };
    removeStale(dir, runFile);
    const std::filesystem::path vtk = dir / "vtk";
    if (!std::filesystem::is_directory(std::filesystem::symlink_status(vtk, ec))) return;
    removeStale(vtk, [](std::string_view name) {
        const bool snapshot = (name.starts_with("grains_") || name.starts_with("contacts_") ||
                               name.starts_with("walls_")) &&
                              (name.ends_with(".vtp") || name.ends_with(".pvtp"));
        return snapshot || name == "run.pvd";
    });
    if (std::filesystem::is_empty(vtk, ec)) std::filesystem::remove(vtk, ec);
}

// --- small pieces ----------------------------------------------------------------

std::string methodName(const Scene& scene) { return scene.simulation.method == Method::CD ? "cd" : "md"; }

void countStep(RunTotals& totals, const CdStepStats& r, const CdSettings& cd) {
    totals.sumIterations += r.iterations;
    totals.sumResidual += r.residual;
    totals.maxIterations = std::max<std::int64_t>(totals.maxIterations, r.iterations);
    if (r.iterations >= cd.maxIterations && cd.criterion != Criterion::Fixed) ++totals.unconverged;
}

std::string versionWarning(const Checkpoint& c) {
    std::string version = c.version.substr(0, 64);  // a file's bytes: nothing a terminal would act on
    for (char& ch : version)
        if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) ch = '?';
    return "checkpoint '" + c.path.string() + "' was written by Moreau " + version + ", this is Moreau " +
           MOREAU_VERSION + ": the run continues from it, but its bits may differ from an uninterrupted run's";
}

std::string fclibPath(const std::filesystem::path& dir, long step) {
    std::filesystem::create_directories(dir / "fclib");
    char name[48];
    std::snprintf(name, sizeof name, "step_%06ld.hdf5", step);
    return (dir / "fclib" / name).string();
}

namespace {

const char* kLogHeader = "      step          time  kinetic_energy  contacts  iterations     residual   wall_s     eta_s";

}  // namespace

// --- the outputs -----------------------------------------------------------------

RunCadence::RunCadence(const Scene& scene)
    : steps(scene.simulation.steps), every(scene.output.every), vtkEvery(scene.output.vtkEvery),
      checkpointEvery(scene.output.checkpointEvery),
      logEvery(scene.output.logEvery > 0 ? scene.output.logEvery : std::max(1L, (steps + 19) / 20)) {}

long RunCadence::keptUpTo(long first, long cadence) const {
    return first == 0 || first >= steps || (cadence > 0 && first % cadence == 0) ? first : first - 1;
}

RunLog::RunLog(const std::filesystem::path& file, bool toStderr, bool append) : out_(file, append), toStderr_(toStderr) {}

void RunLog::line(const std::string& text) {
    try {  // as ever, a log line that cannot be written is lost; series.csv reports a full disk
        out_.write(text + '\n');
        out_.flush();
    } catch (const InputError&) {
    }
    if (toStderr_) std::fprintf(stderr, "%s\n", text.c_str());
}

RunOutputs::RunOutputs(const Scene& scene, const World& start, const RunOptions& options, const Checkpoint* from,
                       bool exact, bool naturalError, const std::vector<std::string>& intro,
                       std::chrono::steady_clock::time_point started)
    : scene_(scene), dir_(options.outDir), cadence_(scene), first_(start.step), from_(from), exact_(exact),
      series_(dir_ / "series.csv", start, from ? cadence_.keptUpTo(first_, cadence_.every) : -1, naturalError,
              !scene.output.stage.empty()),
      vtk_(cadence_.vtkEvery > 0
               ? std::make_unique<VtkWriter>(dir_ / "vtk", from ? cadence_.keptUpTo(first_, cadence_.vtkEvery) : -1)
               : nullptr),
      log_(dir_ / "log.txt", !options.quiet, from != nullptr), t0_(started),
      wallBefore_(from ? from->totals.wallSeconds : 0.0) {
    for (const std::string& line : intro) log_.line(line);
    if (from && from->version != MOREAU_VERSION) log_.line("warning: " + versionWarning(*from));
    log_.line(kLogHeader);
}

double RunOutputs::elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
}

double RunOutputs::wallSeconds() const { return wallBefore_ + elapsed(); }

void RunOutputs::snapshot(const World& w, const std::vector<Contact>& contacts, long step, int pieces) {
    vtk_->write(w, contacts, step, w.time, pieces);
}

void RunOutputs::logStep(long s, const StepRecord& rec) {
    const double wall = elapsed();  // this part of the run's
    const double eta = wall / static_cast<double>(s - first_) * static_cast<double>(cadence_.steps - s);
    log_.line(format("%10ld %13.6g %15.6g %9zu %11d %12.4g %8.1f %9.1f", s, rec.time, rec.kineticEnergy, rec.contacts,
                     rec.iterations, rec.residual, wallBefore_ + wall, eta));
}

void RunOutputs::checkpoint(RunTotals& totals, const std::function<std::string(const RunTotals&)>& state) {
    series_.flush();
    totals.wallSeconds = wallSeconds();
    writeCheckpointBytes(dir_ / "checkpoint", state(totals));
}

void RunOutputs::checkpointWith(RunTotals& totals, const std::function<void(const RunTotals&)>& write, bool stamp) {
    series_.flush();
    if (stamp) totals.wallSeconds = wallSeconds();
    write(totals);
}

void RunOutputs::writeCheckpoint(const std::string& bytes) {
    series_.flush();
    writeCheckpointBytes(dir_ / "checkpoint", bytes);
}

nlohmann::json RunOutputs::summary(const char* status, const World& w, const RunTotals& totals,
                                   std::size_t contacts) const {
    return summary(status, w, WorldNumbers{w.numGrains, kineticEnergy(w), stateHash(w)}, totals, contacts);
}

nlohmann::json RunOutputs::summary(const char* status, const World& w, const WorldNumbers& whole,
                                   const RunTotals& totals, std::size_t contacts) const {
    nlohmann::json s;
    s["status"] = status;
    s["method"] = methodName(scene_);
    const long done = w.step;
    s["steps"] = scene_.simulation.steps;
    s["last_step"] = done;
    if (from_) s["resumed_from_step"] = first_;
    s["wall_seconds"] = wallSeconds();
    s["particles"] = whole.grains;
    s["walls"] = w.numWalls();
    s["mean_iterations"] = done > 0 ? totals.sumIterations / static_cast<double>(done) : 0.0;
    s["max_iterations"] = totals.maxIterations;
    s["mean_residual"] = done > 0 ? totals.sumResidual / static_cast<double>(done) : 0.0;
    s["unconverged_steps"] = totals.unconverged;
    s["final_contacts"] = contacts;
    s["final_kinetic_energy"] = whole.kineticEnergy;
    s["threads"] = omp_get_max_threads();
    s["ranks"] = comm::ranks();
    s["seed"] = scene_.simulation.seed;
    s["scene"] = scene_.origin;
    s["state_hash"] = hex64(whole.stateHash);
    s["settings"] = scene_.values;
    if (w.hasClumps()) {
        // Each clump shape as the run holds it: moved to its centre of mass
        // and principal axes (docs/clumps.md).
        nlohmann::json shapes = nlohmann::json::array();
        for (const ClumpShape& c : w.clumpShapes)
            shapes.push_back({{"spheres", c.radius.size()},
                              {"volume", c.volume},
                              {"moments_per_mass", {c.momentsPerMass.x(), c.momentsPerMass.y(), c.momentsPerMass.z()}},
                              {"bounding_radius", c.boundingRadius},
                              {"centre_of_mass", {c.centroid.x(), c.centroid.y(), c.centroid.z()}},
                              {"principal_frame", {c.frame.w(), c.frame.x(), c.frame.y(), c.frame.z()}},
                              {"mass_properties_error", c.errorBound}});
        s["clump_shapes"] = shapes;
    }
    s["version"] = MOREAU_VERSION;
    if (!exact_) s["bit_exact_resume"] = false;
    if (from_ && from_->version != MOREAU_VERSION) {  // a resume from another version's checkpoint
        s["checkpoint_version"] = from_->version;
        s["bit_exact_resume"] = false;
    }
    return s;
}

void RunOutputs::writeSummary(const nlohmann::json& summary) const { writeJsonFile(dir_ / "summary.json", summary); }

std::string RunOutputs::stopped(const char* signal, long step, const char* launcher) {
    const std::string line = format("stopped by %s after step %ld of %ld; resume with: %smoreau run --resume %s", signal,
                                    step, cadence_.steps, launcher, dir_.c_str());
    log_.line(line);
    return line + "\n";
}

std::string RunOutputs::completed(long step, const nlohmann::json& summary) {
    log_.line(format("completed step %ld in %.3g s", step, wallSeconds()));
    const std::string where = comm::ranks() > 1 ? format(" on %d ranks", comm::ranks()) : std::string();
    return format("%s: %s%s, %zu grains, %ld steps in %.3g s; state_hash %s\n", scene_.origin.c_str(),
                  methodName(scene_).c_str(), where.c_str(), summary["particles"].get<std::size_t>(),
                  scene_.simulation.steps, summary["wall_seconds"].get<double>(),
                  summary["state_hash"].get<std::string>().c_str()) +
           "outputs in " + dir_.string() + "/ (summary.json, series.csv, log.txt" + (vtk_ ? ", vtk/run.pvd" : "") +
           (scene_.output.checkpointEvery > 0 ? ", checkpoint" : "") + ")\n";
}

}  // namespace moreau
