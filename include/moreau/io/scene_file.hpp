#pragma once
/// Scene files: INI text (`[section]` headers, `key = value` lines, `#`
/// comments) read with Boost.Program_options' config-file parser, which only
/// splits lines into `section.key` / value pairs (allow_unregistered, so the
/// dynamic sections `[force.NAME]` and `[wall.NAME]` pass through). Typing and
/// validation are ours: every key has a type, a default, a description and an
/// allowed range or set, listed by `sceneReference()` and docs/scenes.md.
///
/// Values come from three layers, later winning: defaults, the file, then
/// `section.key=value` overrides (the command line's `--set`). Every bad input
/// throws InputError with one line naming where the value came from (file name
/// or "--set"), the key, the value and what is allowed, e.g.
///     chain_1d.ini: key 'cd.iterations': 'abc' is not an integer (allowed: integer >= 1)
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "moreau/model/generators.hpp"
#include "moreau/model/scene.hpp"

namespace moreau {

enum class KeyType {
    Real,     ///< a finite number
    Integer,  ///< a whole number (64-bit)
    Bool,     ///< true/false, 1/0, yes/no, on/off (stored as "true"/"false")
    Choice,   ///< one of `choices`
    Vector,   ///< three numbers "x y z" (commas also accepted; stored space separated)
    Text,     ///< any text
};

/// One key of the schema. Experiments declare their own (`extraKeys`), e.g.
///     {"experiment.fit_start", KeyType::Real, "100", "First step of the fit.", 0.0}
/// The constructor takes the fields in order, so a brace list may stop after
/// any of them without -Wmissing-field-initializers warnings.
struct KeySpec {
    KeySpec() = default;
    KeySpec(std::string key_, KeyType type_, std::string defaultValue_, std::string description_,
            double min_ = -std::numeric_limits<double>::infinity(),
            double max_ = std::numeric_limits<double>::infinity(), std::vector<std::string> choices_ = {},
            bool minExclusive_ = false)
        : key(std::move(key_)), type(type_), defaultValue(std::move(defaultValue_)),
          description(std::move(description_)), min(min_), max(max_), choices(std::move(choices_)),
          minExclusive(minExclusive_) {}

    std::string key;           ///< "section.key"
    KeyType type = KeyType::Text;
    std::string defaultValue;  ///< as text; "" means "unset" and is accepted as a value
    std::string description;
    double min = -std::numeric_limits<double>::infinity();  ///< Real and Integer, inclusive
    double max = std::numeric_limits<double>::infinity();   ///< Real and Integer, inclusive
    std::vector<std::string> choices;                       ///< for Choice
    bool minExclusive = false;  ///< Real: value must be > min (e.g. a time step)
};

/// Reads and validates a scene file, applies the `section.key=value`
/// overrides in `sets` (later wins) and builds the world. Relative paths inside
/// the file (packing.file) are taken relative to the file's folder; those from
/// `sets` relative to the working directory. Throws InputError
/// ("cannot read scene file 'x.ini'", unknown keys with a suggestion, bad values).
Scene loadSceneFile(const std::string& path, const std::vector<std::string>& sets,
                    const std::vector<KeySpec>& extraKeys = {});

/// A scene file read for distributed input (docs/distributed.md, "Input"):
/// its settings, every grain's position and radius, and the scene of any
/// set of its grains as loadSceneFile builds them among the others, with
/// the same checks and messages (those of the whole world's grains made
/// once, by planSceneFile). No world of every grain is made; a lattice
/// or a chain makes each grain from its index, a packing file is read in
/// shares, a rank's share of its rows each (spread()); the random loose
/// packing is placed on rank 0 alone (every grain's centre and radius,
/// 32 bytes), whose share is every grain (spread() on ranks). Every
/// shape: clumps and polygons
/// oriented from the file or from their index, irregular polygons' shapes
/// from their index.
class ScenePlan;
namespace scene_io {
struct PlannedGrains;
}

/// How the ranks share a plan's checks of the whole world: rank `rank` of
/// `ranks` takes its share, `sum` adds a count over all of them (a
/// collective: every rank calls it at the same point).
struct PlanShare {
    int rank = 0, ranks = 1;
    std::function<std::uint64_t(std::uint64_t)> sum = [](std::uint64_t x) { return x; };
    /// Every rank's bytes, concatenated in rank order, on every rank.
    std::function<std::string(const std::string&)> gather = [](const std::string& mine) { return mine; };
    /// out[r] to rank r; what each rank sent here, by rank.
    std::function<std::vector<std::string>(std::vector<std::string>)> exchange = [](std::vector<std::string> out) {
        return out;
    };
};

class ScenePlan {
public:
    /// The grains of the whole world.
    std::size_t grains() const { return count_; }
    /// The smallest grain's radius (the contact distances' scale).
    double rMin() const { return rMin_; }
    /// Whether each() gives this rank's share of the grains alone (a packing
    /// file, each rank reading its share of the rows: every grain in one
    /// share); their specs then travel to the ranks that build them:
    /// pack, exchanged, unpack, part(ids, specs).
    bool spread() const { return spread_; }
    /// The grains each() gives: this rank's share (spread), else every one.
    std::size_t shareGrains() const { return to_ - from_; }
    /// Whether its polygons each have their own shape (irregular ones): a
    /// part's table holds its grains' shapes alone, grain k's entry k.
    bool ownShapes() const { return ownShapes_; }
    /// Calls f(id, position, radius) for every grain (spread: of this
    /// rank's share), by id.
    template <class F>
    void each(F&& f) const {
        for (std::size_t i = from_; i < to_; ++i) {
            const GrainSpec g = placing_ ? placing_(at_(i), i) : at_(i);
            f(i, g.position, g.radius);
        }
    }
    /// The scene holding grains `ids` (ascending) alone: grain k of its
    /// world is grain ids[k] of the whole; its walls follow them (body
    /// ids.size() + k), its forces and groups are the whole's on them,
    /// its contact distances the whole's. No ids: the settings and walls
    /// (made and checked once, by planSceneFile).
    Scene part(const std::vector<std::uint64_t>& ids) const;
    /// The same from the specs of grains ids (unpack's), where the plan is
    /// spread.
    Scene part(const std::vector<std::uint64_t>& ids, const std::vector<GrainSpec>& specs) const;
    /// Appends grain i (of this rank's share) to `out`: its id and spec.
    void pack(std::size_t i, std::string& out) const;
    /// The grains packed in `parts` (each pack's appended), by ascending id.
    static void unpack(const std::vector<std::string_view>& parts, std::vector<std::uint64_t>& ids,
                       std::vector<GrainSpec>& specs);

private:
    ScenePlan() = default;
    /// Its grains as buildWorld takes them, grain i's spec from `at`.
    scene_io::PlannedGrains planned(std::function<GrainSpec(std::size_t)> at) const;
    friend std::shared_ptr<const ScenePlan> planSceneFile(const std::string& path, const std::vector<std::string>& sets,
                                                          const PlanShare& share);
    std::string text_, origin_;
    std::vector<std::string> sets_;
    std::filesystem::path dir_;
    /// Grain i's spec: made on demand (a lattice, a chain: no rank holds
    /// every grain's), this rank's share of a packing file's rows, or from
    /// every grain's, generated once (the random loose packing).
    std::size_t count_ = 0, from_ = 0, to_ = 0;  ///< [from_, to_): the ids at_ knows (and grain 0)
    bool spread_ = false, ownShapes_ = false;
    std::function<GrainSpec(std::size_t)> at_;
    /// Grain i's centre and radius in the world from its spec (clumps',
    /// polygons'); none: the spec's own.
    std::function<GrainSpec(const GrainSpec&, std::size_t)> placing_;
    double rMin_ = std::numeric_limits<double>::infinity(), rMax_ = 0.0;
    /// A spread plan's grains in each group's region, by group name.
    std::shared_ptr<const std::map<std::string, std::vector<std::size_t>>> inRegion_;
    Scene settings_;  ///< part({}), once made
    bool settingsMade_ = false;
};

/// The scene file `path` with `sets` as a ScenePlan (InputError as
/// loadSceneFile's). With `share`, the ranks split the test of grains
/// piled up (each counts the cells a hash of theirs gives it): every rank
/// calls it.
std::shared_ptr<const ScenePlan> planSceneFile(const std::string& path, const std::vector<std::string>& sets,
                                               const PlanShare& share = {});

/// The settings of the scene file `path` with `sets`, every key
/// validated, around an empty world (no grain, wall or group built):
/// its keys' values (Scene::values) without the price of its world.
Scene loadSceneSettings(const std::string& path, const std::vector<std::string>& sets);

/// The same for scene text; `origin` names it in messages and Scene::origin.
/// Relative paths are taken from the working directory.
Scene loadSceneText(const std::string& text, const std::string& origin, const std::vector<std::string>& sets,
                    const std::vector<KeySpec>& extraKeys = {});

/// The scene of `text` around `world` instead of the grains and walls its
/// keys would make (resume: the world comes from the checkpoint). The keys
/// are validated as ever; the margins follow the world's smallest grain.
Scene loadSceneWithWorld(const std::string& text, const std::string& origin, const std::vector<std::string>& sets,
                         const World& world);
/// The contact distances (contact.margin, skin, inner_skin: fractions of
/// the smallest radius) for a smallest radius `rMin`: a scene around a
/// world that does not hold every grain (a resume from a checkpoint's parts).
void setContactDistances(Scene& scene, double rMin);

/// Every key of the scene with its final value, as scene-file text that
/// loads back to the same settings (sections in name order, keys sorted).
std::string canonicalSceneText(const Scene& scene);

/// The spheres of a clump.spheres value, 'x y z r; x y z r; ...' (2D: z
/// dropped). Throws InputError saying what is wrong (no file or key: the
/// caller names them; kClumpSpheresAllowed says what is allowed): a sphere
/// that is not four finite numbers, a radius not > 0, none, more than 16.
std::vector<SphereComponent> parseClumpSpheres(const std::string& text, int dimension);
inline constexpr const char* kClumpSpheresAllowed = "'x y z r; x y z r; ...', 1 to 16 spheres of radius > 0";

/// The vertices of a polygon.shape value, 'x y; x y; ...', as x, y pairs
/// (makePolygonShape checks the polygon). Throws InputError saying what is
/// wrong (the caller names file and key): a vertex that is not two finite numbers.
std::vector<double> parsePolygonVertices(const std::string& text);

/// One of the example scenes compiled into the library (embeddedScenes()), by
/// file name, e.g. "chain_1d.ini". Throws InputError for an unknown name.
Scene loadBuiltinScene(const std::string& name, const std::vector<std::string>& sets,
                       const std::vector<KeySpec>& extraKeys = {});

/// Every key with its default, allowed values and description, grouped by
/// section (printed by `moreau run --help`; docs/scenes.md carries a copy).
std::string sceneReference();
/// What sceneReference() says about one key or section (`moreau run --help
/// TOPIC`); InputError naming the nearest one for an unknown topic.
std::string sceneKeyHelp(const std::string& topic);

/// A number as a scene value: the shortest text that reads back to the same
/// bits ("inf", "-inf" for infinities); a vector's three, blank-separated.
std::string sceneValueText(double x);
std::string sceneValueText(const Vec3& v);

/// Setting `experiment.key_reference` (or `bench.key_reference`), a key no
/// experiment or bench declares, makes the loader throw this instead of the
/// unknown-key error: `text` lists that section's keys of the experiment or
/// bench with default, range and meaning (`moreau experiment NAME --help`).
struct KeyReferenceRequest : std::runtime_error {
    explicit KeyReferenceRequest(std::string text_) : std::runtime_error("key reference"), text(std::move(text_)) {}
    std::string text;
};
/// The same with an experiment's own keys appended.
std::string sceneReference(const std::vector<KeySpec>& extraKeys);

/// Typed access to Scene::values, for keys an experiment declared through
/// `extraKeys` (values are validated already). Throw std::logic_error when the
/// key is absent or its text does not have the asked type.
double sceneReal(const Scene& scene, const std::string& key);
long long sceneInteger(const Scene& scene, const std::string& key);
bool sceneBool(const Scene& scene, const std::string& key);
Vec3 sceneVector(const Scene& scene, const std::string& key);
const std::string& sceneText(const Scene& scene, const std::string& key);

}  // namespace moreau
