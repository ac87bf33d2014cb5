#pragma once
/// The experiments' small versions in tests: run quietly, without files,
/// with `section.key=value` overrides, and their documents' checks.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "moreau/core/error.hpp"
#include "moreau/experiments/experiment.hpp"

namespace moreau::test {

/// An experiment's entry point (slowShear, forceRelaxation, ...).
using Experiment = nlohmann::json (*)(const ExperimentOptions&);

/// The options of a quiet run that writes no files, with the overrides `sets`.
inline ExperimentOptions quietOptions(std::vector<std::string> sets = {}) {
    ExperimentOptions options;
    options.sets = std::move(sets);
    options.writeFiles = false;
    options.quiet = true;
    return options;
}

/// The options of a quiet run that writes its files into a fresh folder
/// `name` under the temporary directory (removed first), with `sets`.
inline ExperimentOptions quietOptionsWithFiles(const std::string& name, std::vector<std::string> sets = {}) {
    ExperimentOptions options = quietOptions(std::move(sets));
    options.outDir = std::filesystem::temp_directory_path() / name;
    std::filesystem::remove_all(options.outDir);
    options.writeFiles = true;
    return options;
}

/// The document of `run` with the overrides `sets`, run quietly without files.
inline nlohmann::json runQuiet(Experiment run, std::vector<std::string> sets) {
    return run(quietOptions(std::move(sets)));
}

/// Every check of the document passes.
inline void checkAllPass(const nlohmann::json& doc) {
    for (const auto& check : doc["checks"]) {
        CAPTURE(check.dump());
        CHECK(check["pass"].get<bool>());
    }
}

/// `run` with the one override `set` throws InputError, its message containing `message`.
inline void checkRefused(Experiment run, const std::string& set, const char* message = "") {
    CAPTURE(set);
    CHECK_THROWS_WITH_AS(run(quietOptions({set})), doctest::Contains(message), InputError);
}

}  // namespace moreau::test
