#pragma once
/// Paper reproductions (`moreau experiment NAME`) and benches
/// (`moreau bench NAME`), each a function returning its JSON record.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "moreau/io/out_dir.hpp"
#include "moreau/io/scene_file.hpp"

namespace moreau {

/// Infinity (open key ranges) and NaN (results that could not be measured).
inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct ExperimentOptions {
    std::vector<std::string> sets;       ///< `--set section.key=value`
    std::filesystem::path outDir = "out";
    std::optional<std::uint64_t> seed;   ///< `--seed`, overrides simulation.seed
    bool quiet = false;
    bool writeFiles = true;              ///< CSV and PNG into outDir (tests turn it off)
};

/// One entry of `checks`: computed, never hard-coded.
nlohmann::json makeCheck(const std::string& name, double value, double expected, double tolerance, bool relative = true);
/// A one-sided check: passes when value lies above the bound (`above`) or
/// below it, strictly; `relation` in the record says which.
nlohmann::json makeBoundCheck(const std::string& name, double value, double bound, bool above);

struct ExperimentInfo {
    std::string name;
    std::string description;
    std::function<nlohmann::json(const ExperimentOptions&)> run;
    /// Whether it runs under mpirun (every rank runs it; rank 0 writes).
    bool distributed = false;
};

const std::vector<ExperimentInfo>& experiments();
const std::vector<ExperimentInfo>& benches();

/// A CSV file of an experiment: `name` in options.outDir (created), its
/// header line written, numbers with `precision` significant digits; written
/// as the run's series are (io/out_dir.hpp: never created through a link).
struct CsvFile {
    std::filesystem::path path;
    OutputFile out;
};
CsvFile openCsv(const ExperimentOptions& options, const std::string& name, const std::string& header,
                int precision = 12);

/// `v`, or null where it is not finite (JSON has no NaN or infinity).
nlohmann::json numberOrNull(double v);

/// The values of an experiment's own keys: `sets` applied over the keys'
/// defaults. Throws InputError for a key outside experiment.* (the
/// experiment builds its scenes itself), naming the keys it takes.
Scene experimentKeys(const std::string& experiment, const std::vector<std::string>& sets,
                     const std::vector<KeySpec>& keys);

/// options.sets, then `simulation.seed=` of --seed where given.
std::vector<std::string> setsWithSeed(const ExperimentOptions& options);

/// Seconds of the steady clock since `t0`.
inline double secondsSince(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// The number (std::stod) or the integer (std::stol) `text` spells, whole;
/// nothing when it is not one.
std::optional<double> parseNumber(const std::string& text);
std::optional<long> parseInteger(const std::string& text);
/// The blank-separated words of a list value ("flat pyramid piston").
std::vector<std::string> listWords(const std::string& text);

/// Runs tools/plot_<script>.py with /usr/bin/python3 on `args` if both exist;
/// returns false (and says why on stderr unless quiet) when no PNG could be made.
bool runPlotScript(const std::string& script, const std::vector<std::string>& args, bool quiet);

// The experiments and benches.
nlohmann::json soundWave1d(const ExperimentOptions& options);
nlohmann::json restitution(const ExperimentOptions& options);
nlohmann::json brakeFailure(const ExperimentOptions& options);
nlohmann::json detachment(const ExperimentOptions& options);
nlohmann::json integratorsImpact(const ExperimentOptions& options);
nlohmann::json obliqueImpact(const ExperimentOptions& options);
nlohmann::json kuhnSlipDirection(const ExperimentOptions& options);
nlohmann::json rigidRotation(const ExperimentOptions& options);
nlohmann::json soundWave2d(const ExperimentOptions& options);
nlohmann::json iterationScaling(const ExperimentOptions& options);
nlohmann::json cdMdEquivalence(const ExperimentOptions& options);
nlohmann::json forceRelaxation(const ExperimentOptions& options);
nlohmann::json convergenceCriteria(const ExperimentOptions& options);
nlohmann::json sweepOrders(const ExperimentOptions& options);
nlohmann::json solverConvergence(const ExperimentOptions& options);
nlohmann::json relaxationTime(const ExperimentOptions& options);
nlohmann::json slowShear(const ExperimentOptions& options);
nlohmann::json stressProbes(const ExperimentOptions& options);
nlohmann::json muOfI(const ExperimentOptions& options);
nlohmann::json chainModes(const ExperimentOptions& options);
nlohmann::json benchCdSweep(const ExperimentOptions& options);
nlohmann::json benchDetect(const ExperimentOptions& options);
nlohmann::json benchFclib(const ExperimentOptions& options);
nlohmann::json benchMdStep(const ExperimentOptions& options);

}  // namespace moreau
