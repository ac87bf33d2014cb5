#pragma once
/// The key schema of scene files (scene_file.hpp): every key's type,
/// default, allowed values and description (the table: scene_keys.cpp), the
/// validation of one value, the lookup of a key with suggestions for a
/// misspelt one, the final values with typed getters, and the reference text
/// of `moreau run --help`. Errors are InputError, one line naming where the
/// value came from, the key, the value and what is allowed. Internal to src/io.
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "ini_reader.hpp"
#include "moreau/io/scene_file.hpp"

namespace moreau::scene_io {

/// The most grains a scene may ask for: BodyId is 32-bit, and memory runs out long before.
inline constexpr double kMaxGrains = 1e8;
/// Grain radii: a sphere's moment of inertia grows as r^5, which stays a
/// normal double (2.2e-308 to 1.8e308) at unit density between these. A
/// radius of 1e-300 gives mass 0 and an infinite inverse mass.
inline constexpr double kMinRadius = 1e-60, kMaxRadius = 1e60;

/// Validation beyond the key type, for a few built-in keys.
enum class Special {
    None,
    Axes,       ///< subset of "xyz"
    GrainList,  ///< first | last | all | comma list of indices and ranges i..j (empty: none)
    Box,        ///< six numbers: a box's lower and upper corners
    Counts,     ///< two or three positive integers
};

/// A key of the schema: its KeySpec and the validation beyond its type.
struct Rule {
    KeySpec spec;
    bool allowInfinity = false;  ///< Real: "inf" / "never" accepted (change times)
    Special special = Special::None;
};

/// Built-in keys of the fixed sections, in reference order (scene_keys.cpp).
std::vector<Rule> fixedRules();
/// Keys of the dynamic sections, by section ("force", "wall", "group"),
/// relative ("grains" of [force.NAME]) (scene_keys.cpp).
std::map<std::string, std::vector<Rule>> dynamicRules();

/// Every key a scene may set: the fixed sections' keys by name, the dynamic
/// sections' by section.
struct Schema {
    std::vector<Rule> fixed;                   ///< reference order
    std::map<std::string, std::size_t> index;  ///< full key → position in fixed
    std::map<std::string, std::vector<Rule>> dynamic;  ///< "force", "wall" → relative rules

    const Rule* findFixed(const std::string& key) const {
        const auto it = index.find(key);
        return it == index.end() ? nullptr : &fixed[it->second];
    }
    static const Rule* findIn(const std::vector<Rule>& rules, const std::string& sub) {
        for (const Rule& r : rules)
            if (r.spec.key == sub) return &r;
        return nullptr;
    }
};

/// The built-in keys and an experiment's or bench's own (`extraKeys`);
/// std::logic_error for an extra key that is malformed or declared twice.
Schema makeSchema(const std::vector<KeySpec>& extraKeys);

/// What `rule` allows, as error messages and the reference text say it.
std::string allowedText(const Rule& rule);

/// Throws the one-line InputError about `value` of `key`.
[[noreturn]] void failValue(const std::string& origin, const std::string& key, const std::string& value,
                            const std::string& what, const std::string& allowed);

/// Checks `value` against the rule; returns the text stored in Scene::values
/// (booleans as true/false, vectors space separated, otherwise as given).
std::string checkValue(const Rule& rule, const std::string& key, const std::string& value, const std::string& origin);

/// Every key with its default, allowed values and description, by section.
std::string referenceText(const Schema& schema);
/// The part of referenceText about `topic`: a key ("md.kn", "wall.NAME.mu"
/// or "wall.floor.mu"), a section ("md", "[md]", "wall", "wall.NAME" or
/// "wall.floor"). Throws InputError with the nearest key or section for
/// anything else.
std::string referenceText(const Schema& schema, const std::string& topic);

struct Resolved {
    const Rule* rule = nullptr;
    std::string dynamicSection;  ///< "force" / "wall" for dynamic keys
    std::string name;            ///< NAME of [force.NAME]
};

/// Checks a `[header]` of the file; returns (dynamic section, NAME) for
/// [force.NAME], [wall.NAME] and [group.NAME], nothing for fixed sections.
std::optional<std::pair<std::string, std::string>> checkSection(const Schema& schema, const std::string& section,
                                                                const std::string& origin);

/// The rule of `key`; InputError for an unknown key (with a suggestion, or
/// the experiment's keys) or a dynamic key without a NAME.
Resolved resolveKey(const Schema& schema, const std::string& key, const std::string& origin);

struct Entry {
    std::string text;
    std::string origin;  ///< where the text came from: the scene's origin or "--set"
};

/// Final values with typed getters; errors name the key and where its value came from.
class Values {
public:
    std::map<std::string, Entry> entries;

    const Entry& at(const std::string& key) const {
        const auto it = entries.find(key);
        if (it == entries.end()) throw std::logic_error("scene key '" + key + "' has no value");
        return it->second;
    }

    [[noreturn]] void fail(const std::string& key, const std::string& what, const std::string& allowed) const {
        const Entry& e = at(key);
        failValue(e.origin, key, e.text, what, allowed);
    }

    const std::string& text(const std::string& key) const { return at(key).text; }
    double real(const std::string& key) const {
        const std::string& t = text(key);
        if (isInfinityWord(t)) return kInf;
        return parseDouble(t).value();
    }
    long long integer(const std::string& key) const {
        const auto n = parseInteger(text(key));
        if (!n->exact) fail(key, "is too large", "integer below 2^63");
        return *n->exact;
    }
    std::uint64_t unsignedInteger(const std::string& key) const { return *parseInteger(text(key))->exactUnsigned; }
    int smallInteger(const std::string& key) const {
        const long long n = integer(key);
        if (n > std::numeric_limits<int>::max()) fail(key, "is too large", "integer below 2^31");
        return static_cast<int>(n);
    }
    bool boolean(const std::string& key) const { return text(key) == "true"; }
    Vec3 vec(const std::string& key) const { return parseVector(text(key)).value(); }
    bool empty(const std::string& key) const { return text(key).empty(); }
};

/// The axes an Axes value (a subset of "xyz") names.
inline std::array<bool, 3> axesOf(const std::string& text) {
    return {text.find('x') != std::string::npos, text.find('y') != std::string::npos,
            text.find('z') != std::string::npos};
}

/// The final values of a scene's keys, and the NAMEs of its dynamic
/// sections ("force" → {"push"}).
struct SceneValues {
    Values values;
    std::map<std::string, std::set<std::string>> instances;
};

/// The file's lines, then the `--set` overrides (section.key=value, later
/// wins), each checked against its rule; then the default of every key not
/// given, a dynamic key's empty default taken from another key
/// (wall.NAME.mu from contact.mu). Errors name the line or "--set".
SceneValues collectValues(const Schema& schema, const IniContent& ini, const std::string& origin,
                          const std::vector<std::string>& sets);

}  // namespace moreau::scene_io
