// Loading a scene in three concepts: the INI reader's lines (ini_reader.hpp),
// the key schema's values (scene_schema.hpp, the key table in scene_keys.cpp)
// and the world builder's world (world_builder.hpp); here the settings of
// the values and the public API (scene_file.hpp). docs/recipes.md: adding a key.
#include "moreau/io/scene_file.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string_view>
#include <utility>

#include "ini_reader.hpp"
#include "moreau/io/fclib.hpp"
#include "moreau/core/comm.hpp"
#include "moreau/core/error.hpp"
#include "moreau/io/embedded_scenes.hpp"
#include "moreau/model/integrator_table.hpp"
#include "scene_schema.hpp"
#include "scene_controls.hpp"
#include "world_builder.hpp"

namespace moreau {

using namespace scene_io;

namespace {

/// [simulation]: method, step, steps and seed.
void readSimulation(SimulationSettings& sim, const Values& v) {
    sim.method = v.text("simulation.method") == "md" ? Method::MD : Method::CD;
    sim.dt = v.real("simulation.dt");
    sim.steps = static_cast<long>(v.integer("simulation.steps"));
    sim.seed = v.unsignedInteger("simulation.seed");
}

/// [cd], and output.natural_error, which the sweeps measure.
void readCd(CdSettings& cd, const Values& v, const std::string& origin) {
    cd.iterations = v.smallInteger("cd.iterations");
    const std::string& criterion = v.text("cd.criterion");
    cd.criterion = criterion == "local"     ? Criterion::Local
                   : criterion == "global"  ? Criterion::Global
                   : criterion == "natural" ? Criterion::Natural
                                            : Criterion::Fixed;
    cd.checkEvery = v.smallInteger("cd.check_every");
    const std::string& proximal = v.text("cd.proximal");
    cd.proximal = proximal == "on" ? Proximal::On : proximal == "stall" ? Proximal::Stall : Proximal::Off;
    cd.proximalEta = v.real("cd.proximal_eta");
    cd.proximalEvery = v.smallInteger("cd.proximal_every");
    cd.vectorRows = v.text("cd.simd") != "off";
    if (cd.proximal == Proximal::Stall && cd.criterion != Criterion::Natural)
        throw InputError(origin + ": key 'cd.proximal': 'stall' watches the natural criterion's error (allowed with "
                                  "cd.criterion = natural; otherwise off or on)");
    cd.measureError = v.boolean("output.natural_error");
    cd.epsilon = v.real("cd.epsilon");
    cd.delta = v.real("cd.delta");
    cd.maxIterations = v.smallInteger("cd.max_iterations");
    cd.solver = lawFromName(kCdSolverNames, v.text("cd.solver")).value_or(CdSolverFamily::GaussSeidel);  // validated against the table
    const std::string& order = v.text("cd.order");
    cd.order = lawFromName(kSweepOrderNames, order).value_or(SweepOrder::RandomSweep);  // validated against the table
    cd.warmStart = v.boolean("cd.warm_start");
    cd.distributed = v.text("cd.distributed") == "exact" ? CdDistributed::Exact : CdDistributed::Domains;
    if (cd.distributed == CdDistributed::Exact && cd.order != SweepOrder::RandomKeys && cd.order != SweepOrder::Fixed &&
        cd.order != SweepOrder::Jacobi)
        throw InputError(origin + ": key 'cd.distributed': 'exact' replays an order every rank computes for its own "
                                  "contacts (allowed with cd.order = random-keys, fixed or jacobi; otherwise domains)");
    cd.gapPositive = v.text("cd.gap") == "pos";
}

/// [md]: the laws, their constants, the integrator and the pipeline; the
/// integrator's needs checked against the laws in MD runs.
void readMd(MdSettings& md, const Values& v, Method method) {
    md.kn = v.real("md.kn");
    md.gammaN = v.real("md.gamma_n");
    const std::string& normal = v.text("md.normal");
    md.normal = lawFromName(kNormalLawNames, normal).value_or(NormalLaw::Linear);  // validated against the table
    md.s = v.real("md.s");
    const std::string& tangential = v.text("md.tangential");
    md.tangential = lawFromName(kTangentialLawNames, tangential).value_or(TangentialLaw::Spring);
    md.kt = v.real("md.kt");
    md.rolling = lawFromName(kRollingLawNames, v.text("md.rolling")).value_or(RollingLaw::None);
    for (std::size_t i = 0; i < kLawKeys.size(); ++i) md.lawValues[i] = v.real(std::string(kLawKeys[i].name));
    md.gammaT = v.real("md.gamma_t");
    const std::string& meff = v.text("md.meff");
    md.meff = meff == "damping" ? EffectiveMass::Damping : meff == "both" ? EffectiveMass::Both : EffectiveMass::None;
    md.en = v.real("md.en");
    md.tn = v.real("md.tn");
    if ((md.en > 0.0) != (md.tn > 0.0))
        throw InputError(std::string("key '") + (md.en > 0.0 ? "md.tn" : "md.en") +
                         "': md.en and md.tn go together (eqs. 3-4); set both or neither");
    if (md.tn > 0.0) {
        if (!lawRow(md.normal).fromRestitution)
            throw InputError("key 'md.en': (e_n, t_n) define the linear law only; md.normal is '" + normal + "'");
        // Per unit effective mass, with m_eff on both constants: every pair
        // gets this e_n and t_n whatever its masses.
        const LinearConstants lc = linearFromRestitution(md.en, md.tn, 1.0);
        md.kn = lc.kn;
        md.gammaN = lc.gammaN;
        md.meff = EffectiveMass::Both;
    }
    md.muStaticRatio = v.real("md.mu_static_ratio");
    md.zeta0 = v.real("md.zeta0");
    md.kuhnOnset = v.boolean("md.kuhn_onset");
    md.kuhnSlipOnset = v.boolean("md.kuhn_slip_onset");
    md.kuhnSlipRotation = v.boolean("md.kuhn_slip_rotation");
    md.kuhnProjection = v.boolean("md.kuhn_projection");
    md.kuhnTwirl = v.boolean("md.kuhn_twirl");
    md.penaTranslation = v.text("md.pena_translation") == "paper" ? PenaTranslation::Paper : PenaTranslation::Slip;
    md.clipAttractive = v.boolean("md.clip_attractive");
    md.substeps = v.smallInteger("md.substeps");
    md.integrator = integratorFromName(v.text("md.integrator")).value_or(Integrator::CD);
    md.restartOnContactChange = v.boolean("md.restart_on_contact_change");
    {
        const std::string p = v.text("md.pipeline");
        md.pipeline = p == "fused" ? MdPipeline::Fused : p == "staged" ? MdPipeline::Staged : MdPipeline::Auto;
        const std::string w = v.text("md.simd");
        md.simdLanes = w == "off" ? 0 : w == "sse2" ? 2 : w == "avx2" ? 4 : w == "avx512" ? 8 : -1;
    }
    md.springVelocityIncrement = v.text("md.spring_increment") == "velocity";
    if (method == Method::MD) checkIntegratorLaws(md);

}

/// [output] and [guard], but the stress region (parseStressRegion: it needs the world).
void readOutput(Scene& scene, const Values& v, const std::string& origin) {
    scene.output.every = static_cast<long>(v.integer("output.every"));
    scene.output.vtkEvery = static_cast<long>(v.integer("output.vtk_every"));
    // Pieces by default on MPI ranks (no rank writes the whole world's VTK).
    scene.output.vtkPieces = v.text("output.vtk_pieces") == "true" ||
                             (v.text("output.vtk_pieces") == "auto" && comm::ranks() > 1);
    scene.output.checkpointEvery = static_cast<long>(v.integer("output.checkpoint_every"));
    scene.output.logEvery = static_cast<long>(v.integer("output.log_every"));
    scene.output.fclibEvery = static_cast<long>(v.integer("output.fclib_every"));
    scene.output.stage = v.text("output.stage");
    if (!scene.output.stage.empty() && !isStageName(scene.output.stage))
        v.fail("output.stage", "is not a stage name", kStageNameAllowed);
    if (scene.output.fclibEvery > 0 && !haveFclib())
        throw InputError(origin + ": key 'output.fclib_every': this build has no FCLIB (install libfclib-dev "
                                  "libhdf5-dev and rebuild; allowed here: 0)");
    if (scene.output.fclibEvery > 0 && scene.simulation.method != Method::CD)
        throw InputError(origin + ": key 'output.fclib_every': contact problems exist in CD runs only (allowed "
                                  "with simulation.method = cd; here 0)");
    scene.guard.contactSteps = static_cast<long>(v.integer("guard.contact_steps"));
    scene.guard.every = static_cast<long>(v.integer("guard.every"));
    scene.guard.maxOverlap = v.real("guard.max_overlap");
    scene.guard.maxTravel = v.real("guard.max_travel");
    scene.guard.energy = v.boolean("guard.energy");
    scene.guard.startOverlap = v.real("guard.start_overlap");
}

/// The scene of `ini` and `sets`: values (scene_schema.hpp), settings, then
/// the world (world_builder.hpp) or `given` instead, the contact distances
/// from its smallest grain, the servos and the stress region.
/// `given`: the world instead of the one the keys make (a resume).
/// `part`: the keys' round grains part->ids alone (ScenePlan), the contact
/// distances and the periodic box's check from the whole world's radii
/// (`radii`: the smallest and the largest).
Scene loadScene(const IniContent& ini, const std::string& origin, const std::vector<std::string>& sets,
                const std::vector<KeySpec>& extraKeys, const std::filesystem::path& sceneDir,
                const World* given = nullptr, const GrainPart* part = nullptr,
                std::pair<double, double> radii = {kInf, 0.0}) {
    const Schema schema = makeSchema(extraKeys);
    SceneValues values = collectValues(schema, ini, origin, sets);
    const Values& v = values.values;
    auto& instances = values.instances;

    Scene scene;
    scene.origin = origin;
    readSimulation(scene.simulation, v);
    readCd(scene.cd, v, origin);
    readMd(scene.md, v, scene.simulation.method);
    readOutput(scene, v, origin);

    if (given) {
        scene.world = *given;
    } else {
        buildWorld(scene, v, instances["force"], instances["wall"], instances["group"], sceneDir, part);
    }
    // The contact distances are fractions of the smallest grain's radius.
    auto [rMin, rMax] = radii;
    if (!part)
        for (std::size_t i = 0; i < scene.world.numGrains; ++i) {
            rMin = std::min(rMin, scene.world.radius[i]);
            rMax = std::max(rMax, scene.world.radius[i]);
        }
    scene.simulation.margin = v.real("contact.margin") * rMin;
    scene.simulation.skin = v.real("contact.skin") * rMin;
    scene.simulation.innerSkin = v.real("contact.inner_skin") * rMin;  // setContactDistances, from the values
    scene.simulation.rankCheckEvery = static_cast<long>(v.integer("contact.rank_check_every"));
    if (!given) checkPeriodicLengths(v, scene, rMax);
    parseServos(scene, v, instances["wall"]);
    parseWallMaterials(scene, v, instances["wall"]);
    parseCellServo(scene, v);
    parseStressRegion(scene, v);

    for (const auto& [key, entry] : v.entries) scene.values[key] = entry.text;
    return scene;
}

}  // namespace

Scene loadSceneText(const std::string& text, const std::string& origin, const std::vector<std::string>& sets,
                    const std::vector<KeySpec>& extraKeys) {
    return loadScene(parseIni(text, origin), origin, sets, extraKeys, std::filesystem::path("."));
}

namespace {
const World kNoWorld{};
}  // namespace

std::shared_ptr<const ScenePlan> planSceneFile(const std::string& path, const std::vector<std::string>& sets,
                                               const PlanShare& share) {
    auto plan = std::shared_ptr<ScenePlan>(new ScenePlan);
    plan->text_ = readSceneFile(path);
    plan->text_.shrink_to_fit();  // the reader's buffer is larger; the plan keeps the text for the run's start
    plan->origin_ = path;
    plan->sets_ = sets;
    const std::filesystem::path dir = std::filesystem::path(path).parent_path();
    plan->dir_ = dir.empty() ? std::filesystem::path(".") : dir;
    {
        const SceneValues values = collectValues(makeSchema({}), parseIni(plan->text_, path), path, sets);
        const auto groups = values.instances.find("group");
        PlannedGrains planned = planGrains(values.values, plan->dir_, share,
                                           groups != values.instances.end() ? groups->second : std::set<std::string>{});
        plan->count_ = planned.count;
        plan->spread_ = planned.spread;
        plan->ownShapes_ = planned.ownShapes;
        plan->from_ = planned.from;
        plan->to_ = planned.to;
        plan->at_ = std::move(planned.at);
        plan->placing_ = std::move(planned.placing);
        plan->rMin_ = planned.rMin;
        plan->rMax_ = planned.rMax;
        plan->inRegion_ = std::move(planned.inRegion);
    }
    plan->settings_ = plan->part({});  // the settings', walls', forces' and groups' checks, once
    plan->settingsMade_ = true;
    return plan;
}

Scene loadSceneSettings(const std::string& path, const std::vector<std::string>& sets) {
    return loadScene(parseIni(readSceneFile(path), path), path, sets, {}, std::filesystem::path("."), &kNoWorld);
}

scene_io::PlannedGrains ScenePlan::planned(std::function<GrainSpec(std::size_t)> at) const {
    scene_io::PlannedGrains grains;
    grains.count = count_;
    grains.spread = spread_;
    grains.ownShapes = ownShapes_;
    grains.from = from_;
    grains.to = to_;
    grains.at = std::move(at);
    grains.placing = placing_;
    grains.inRegion = inRegion_;
    return grains;
}

Scene ScenePlan::part(const std::vector<std::uint64_t>& ids) const {
    if (ids.empty() && settingsMade_) return settings_;
    const PlannedGrains grains = planned(at_);
    const GrainPart some{&grains, &ids};
    return loadScene(parseIni(text_, origin_), origin_, sets_, {}, dir_, nullptr, &some, {rMin_, rMax_});
}

Scene ScenePlan::part(const std::vector<std::uint64_t>& ids, const std::vector<GrainSpec>& specs) const {
    if (ids.size() != specs.size()) throw std::logic_error("ScenePlan::part: ids and specs differ in number");
    if (ids.empty()) return part(ids);
    const auto at = [&ids, &specs](std::size_t i) {
        const auto it = std::lower_bound(ids.begin(), ids.end(), static_cast<std::uint64_t>(i));
        if (it == ids.end() || *it != i) throw std::logic_error("ScenePlan::part: grain " + std::to_string(i) + " not sent here");
        return specs[static_cast<std::size_t>(it - ids.begin())];
    };
    const PlannedGrains grains = planned(at);
    const GrainPart some{&grains, &ids};
    return loadScene(parseIni(text_, origin_), origin_, sets_, {}, dir_, nullptr, &some, {rMin_, rMax_});
}

void ScenePlan::pack(std::size_t i, std::string& out) const {
    const auto id = static_cast<std::uint64_t>(i);
    const std::array<double, kSpecValues> values = specValues(at_(i));
    out.append(reinterpret_cast<const char*>(&id), sizeof id);
    out.append(reinterpret_cast<const char*>(values.data()), sizeof values);
}

void ScenePlan::unpack(const std::vector<std::string_view>& parts, std::vector<std::uint64_t>& ids,
                       std::vector<GrainSpec>& specs) {
    constexpr std::size_t kBytes = sizeof(std::uint64_t) + kSpecValues * sizeof(double);
    std::vector<std::pair<std::uint64_t, GrainSpec>> all;
    for (const std::string_view part : parts)
        for (std::size_t at = 0; at + kBytes <= part.size(); at += kBytes) {
            std::uint64_t id = 0;
            std::array<double, kSpecValues> values{};
            std::memcpy(&id, part.data() + at, sizeof id);
            std::memcpy(values.data(), part.data() + at + sizeof id, sizeof values);
            all.emplace_back(id, specOf(values.data()));
        }
    std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    ids.resize(all.size());
    specs.resize(all.size());
    for (std::size_t k = 0; k < all.size(); ++k) {
        ids[k] = all[k].first;
        specs[k] = all[k].second;
    }
}

Scene loadSceneWithWorld(const std::string& text, const std::string& origin, const std::vector<std::string>& sets,
                         const World& world) {
    return loadScene(parseIni(text, origin), origin, sets, {}, std::filesystem::path("."), &world);
}

void setContactDistances(Scene& scene, double rMin) {
    scene.simulation.margin = sceneReal(scene, "contact.margin") * rMin;
    scene.simulation.skin = sceneReal(scene, "contact.skin") * rMin;
    scene.simulation.innerSkin = sceneReal(scene, "contact.inner_skin") * rMin;
}

std::string canonicalSceneText(const Scene& scene) {
    // "a.b" is key b of [a]; "wall.floor.mu" is key mu of [wall.floor].
    std::map<std::string, std::vector<std::pair<std::string, std::string>>> sections;
    for (const auto& [key, value] : scene.values) {
        const std::size_t dot = key.rfind('.');
        sections[key.substr(0, dot)].emplace_back(key.substr(dot + 1), value);
    }
    std::string out;
    for (const auto& [section, entries] : sections) {
        out += "[" + section + "]\n";
        for (const auto& [key, value] : entries) out += key + " = " + (value.empty() ? "\"\"" : value) + "\n";
    }
    return out;
}

Scene loadSceneFile(const std::string& path, const std::vector<std::string>& sets,
                    const std::vector<KeySpec>& extraKeys) {
    const std::string text = readSceneFile(path);
    const std::filesystem::path dir = std::filesystem::path(path).parent_path();
    return loadScene(parseIni(text, path), path, sets, extraKeys, dir.empty() ? std::filesystem::path(".") : dir);
}

Scene loadBuiltinScene(const std::string& name, const std::vector<std::string>& sets,
                       const std::vector<KeySpec>& extraKeys) {
    const auto& scenes = embeddedScenes();
    const auto it = scenes.find(name);
    if (it == scenes.end()) {
        std::string names;
        for (const auto& [n, text] : scenes) names += (names.empty() ? "" : ", ") + n;
        throw InputError("no built-in scene '" + name + "' (available: " + names + ")");
    }
    return loadSceneText(it->second, name, sets, extraKeys);
}

std::string sceneReference() { return referenceText(makeSchema({})); }

std::string sceneReference(const std::vector<KeySpec>& extraKeys) { return referenceText(makeSchema(extraKeys)); }

std::string sceneKeyHelp(const std::string& topic) { return referenceText(makeSchema({}), topic); }

std::string sceneValueText(double x) { return scene_io::formatNumber(x); }

std::string sceneValueText(const Vec3& v) {
    return sceneValueText(v[0]) + " " + sceneValueText(v[1]) + " " + sceneValueText(v[2]);
}

namespace {

const std::string& valueOf(const Scene& scene, const std::string& key) {
    const auto it = scene.values.find(key);
    if (it == scene.values.end()) throw std::logic_error("scene has no key '" + key + "'");
    return it->second;
}

/// The value of `key` read by `parse`; std::logic_error if it is not `type`.
template <class Parse>
auto parsedValue(const Scene& scene, const std::string& key, Parse parse, const char* type) {
    const std::string& t = valueOf(scene, key);
    const auto x = parse(t);
    if (!x) throw std::logic_error("scene key '" + key + "' = '" + t + "' is not " + type);
    return *x;
}

}  // namespace

double sceneReal(const Scene& scene, const std::string& key) {
    const auto real = [](const std::string& t) { return isInfinityWord(t) ? std::optional(kInf) : parseDouble(t); };
    return parsedValue(scene, key, real, "a number");
}

long long sceneInteger(const Scene& scene, const std::string& key) {
    const auto integer = [](const std::string& t) {
        const auto n = parseInteger(t);
        return n ? n->exact : std::nullopt;
    };
    return parsedValue(scene, key, integer, "an integer");
}

bool sceneBool(const Scene& scene, const std::string& key) { return parsedValue(scene, key, parseBool, "a boolean"); }

Vec3 sceneVector(const Scene& scene, const std::string& key) {
    return parsedValue(scene, key, parseVector, "a vector");
}

const std::string& sceneText(const Scene& scene, const std::string& key) { return valueOf(scene, key); }

}  // namespace moreau
