#pragma once
/// The INI reader of scene files (scene_file.hpp): the words of a value
/// (numbers, integers, vectors, booleans, lists) and the file's lines
/// (`[section]` headers, `key = value` lines, `#` comments), each error
/// naming the file and line. It knows no key: what a key means and allows
/// is the schema's (scene_schema.hpp), what a scene builds the world
/// builder's (world_builder.hpp). Internal to src/io.
#include <cstddef>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "moreau/core/types.hpp"

namespace moreau::scene_io {

inline constexpr double kInf = std::numeric_limits<double>::infinity();

// --- tokens ----------------------------------------------------------------------

std::string trim(std::string_view s);
std::string lower(std::string s);
/// Drops one pair of surrounding double quotes: `file = ""` is the empty text.
std::string unquote(std::string s);
/// The blank-separated words of `s` (and comma-separated where `commasToo`).
std::vector<std::string> splitWords(std::string_view s, bool commasToo);
/// The comma-separated items of `s`, each trimmed (empty ones kept).
std::vector<std::string> splitList(std::string_view s);
/// Shortest text that reads back to `x` ("inf", "-inf" for infinities).
std::string formatNumber(double x);

/// Whole-string number; accepts a leading '+'. May return inf or nan.
std::optional<double> parseDouble(std::string_view s);

/// Whole-string integer as a double (for range checks) plus its exact value
/// when it fits a signed 64-bit integer; positives up to 2^64 − 1 (seeds) too.
struct IntegerValue {
    double approx = 0.0;
    std::optional<long long> exact;
    std::optional<unsigned long long> exactUnsigned;
};
std::optional<IntegerValue> parseInteger(std::string_view s);

/// Three finite numbers "x y z" (commas also accepted).
std::optional<Vec3> parseVector(std::string_view s);
/// true/false, 1/0, yes/no, on/off, in any case.
std::optional<bool> parseBool(const std::string& s);
/// inf, +inf, infinity or never, in any case.
bool isInfinityWord(const std::string& s);

/// `text` for an error message: at most `limit` bytes (cut at a UTF-8
/// character boundary), then "…" and the whole length. A key or value of a
/// megabyte must not come back as a megabyte of message.
std::string shown(std::string_view text, std::size_t limit = 64);

/// Optimal string alignment distance (Levenshtein plus adjacent swaps), for
/// "did you mean" suggestions.
std::size_t editDistance(const std::string& a, const std::string& b);

/// Letters, digits and '_', at least one (a section's or a NAME's).
bool isSectionName(std::string_view s);

// --- lines -----------------------------------------------------------------------

/// "wall.a .normal" → "wall.a.normal": Boost keeps blanks inside "[ wall.a ]".
std::string normaliseKey(const std::string& key);

struct IniLine {
    std::string key;    ///< section.key
    std::string value;  ///< trimmed, one pair of quotes dropped
    long line = 0;
};

struct IniContent {
    std::vector<IniLine> entries;  ///< in file order
    std::vector<std::pair<std::string, long>> sections;  ///< every [header], trimmed, with its line, in file order
};

/// Parses `[section]` headers and `key = value` lines ('#' starts a comment,
/// blank lines are skipped, a UTF-8 byte order mark at the start is
/// dropped); every error names the line.
IniContent parseIni(std::string_view text, const std::string& origin);

/// The text of the scene file `path`; InputError naming it when it cannot be
/// read, is a folder, is larger than a scene of keys or holds a NUL byte.
std::string readSceneFile(const std::string& path);

}  // namespace moreau::scene_io
