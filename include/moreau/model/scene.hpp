#pragma once
#include <cctype>
/// A scene: the settings of a run plus the world it starts from. Scenes are
/// read from INI files with `--set section.key=value` overrides by
/// io/scene_file.hpp; this header only holds the typed result.
#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "moreau/model/law_table.hpp"
#include "moreau/model/world.hpp"

namespace moreau {

enum class Method { CD, MD };

/// Gauss–Seidel sweep order (DESIGN.md, "Contact dynamics").
enum class SweepOrder { RandomSweep, ShuffleOnce, Fixed, RandomSequential, Jacobi, RandomKeys };

/// The scene-file names of the sweep orders (cd.order), in the order the key
/// reference lists them: the one table that the parser, the messages, `moreau
/// list` and the experiments read (lawName, lawFromName, lawNames below).
inline constexpr std::array<std::pair<SweepOrder, std::string_view>, 6> kSweepOrderNames{{
    {SweepOrder::RandomSweep, "random-sweep"},
    {SweepOrder::ShuffleOnce, "shuffle-once"},
    {SweepOrder::Fixed, "fixed"},
    {SweepOrder::RandomSequential, "random-sequential"},
    {SweepOrder::Jacobi, "jacobi"},
    {SweepOrder::RandomKeys, "random-keys"},
}};

/// The solver family of a CD step's local problem (cd.solver;
/// cd/local_problem.hpp): the paper's Gauss–Seidel over the one-contact law,
/// a global semi-smooth Newton method (Alart–Curnier), or Nesterov's
/// accelerated projected gradient on the cone complementarity problem.
enum class CdSolverFamily { GaussSeidel, Newton, Apgd };
inline constexpr std::array<std::pair<CdSolverFamily, std::string_view>, 3> kCdSolverNames{{
    {CdSolverFamily::GaussSeidel, "gauss-seidel"},
    {CdSolverFamily::Newton, "newton"},
    {CdSolverFamily::Apgd, "apgd"},
}};

/// Convergence criterion of the iteration loop (CD §2.5.1), or the
/// non-smooth community's error (natural map, docs/convergence.md).
enum class Criterion { Fixed, Local, Global, Natural };

/// The proximal term of the sweeps: never, from the first sweep, or once the
/// natural criterion's error stalls (docs/convergence.md).
enum class Proximal { Off, On, Stall };

/// How MPI ranks share a CD step (docs/distributed.md): each sweeps its own
/// contacts and the shared bodies are made consistent after every sweep
/// (domains), or the serial sweep is replayed across them (exact).
enum class CdDistributed { Domains, Exact };

struct CdSettings {
    int iterations = 40;         ///< N_I for the fixed criterion (eq. 37)
    Criterion criterion = Criterion::Fixed;
    double epsilon = 1e-4;       ///< relative accuracy of eqs. 35 and 36
    double delta = 1e-9;         ///< force floor added to eq. 35's right-hand side
    int maxIterations = 10000;   ///< cap for the local and global criteria
    SweepOrder order = SweepOrder::RandomSweep;
    bool warmStart = true;       ///< start each step from last step's reactions
    bool gapPositive = true;     ///< use g_pos = max(g, 0) (eq. 33) instead of g
    int checkEvery = 10;         ///< sweeps between evaluations of the natural criterion
    bool measureError = false;   ///< compute the natural-map error of every step (series.csv natural_error)
    Proximal proximal = Proximal::Off;  ///< the proximal term of the sweeps (docs/convergence.md)
    double proximalEta = 0.1;    ///< its weight η relative to each row's normal compliance 1/m_n
    int proximalEvery = 50;      ///< sweeps between moves of its anchor
    bool vectorRows = true;      ///< cd.simd: the clump rows' AVX2 kernel where the CPU has it (false: off)
    CdDistributed distributed = CdDistributed::Domains;  ///< on MPI ranks (serial runs: no effect)
    CdSolverFamily solver = CdSolverFamily::GaussSeidel;  ///< cd.solver
};

/// How the effective mass m_eff = m_a m_b/(m_a + m_b) enters the linear
/// spring–dashpot (force schemes §2, last paragraph): not at all (eq. 2 as
/// written: F = −k_n ξ − γ_n ξ̇), on the damping only (γ a rate, LAMMPS's
/// gran/hooke convention), or on both constants.
enum class EffectiveMass { None, Damping, Both };

// NormalLaw, TangentialLaw and the names of the laws (kNormalLawNames,
// kTangentialLawNames): model/law_table.hpp.

/// The name of a law (or sweep order) in a name table.
template <class Law, std::size_t N>
constexpr std::string_view lawName(const std::array<std::pair<Law, std::string_view>, N>& table, Law law) {
    for (const auto& [l, name] : table)
        if (l == law) return name;
    return "the chosen law";
}
/// The law (or sweep order) of a name in a name table, if it is one.
template <class Law, std::size_t N>
constexpr std::optional<Law> lawFromName(const std::array<std::pair<Law, std::string_view>, N>& table,
                                         std::string_view name) {
    for (const auto& [l, n] : table)
        if (n == name) return l;
    return std::nullopt;
}

/// Every name of a name table, in its order (a Choice key's allowed values).
template <class Law, std::size_t N>
std::vector<std::string> lawNames(const std::array<std::pair<Law, std::string_view>, N>& table) {
    std::vector<std::string> names;
    for (const auto& entry : table) names.emplace_back(entry.second);
    return names;
}

/// Peña's eq. 14 weights the change of the centre line by a_i/(a_i + a_j)
/// (the distance the contact point travels on grain i); `Slip` uses the full
/// relative displacement, which agrees with v_t Δt as Δt → 0.
enum class PenaTranslation { Slip, Paper };
/// Time-integration schemes of the MD step (integration-schemes paper, Table
/// 4, plus Gear's fifth order); names, orders and costs in model/integrator_table.hpp.
/// How an MD step is organised: staged (detect → match → forces → gather,
/// every law and integrator: MdSolver) or fused (one pass over a persistent
/// pair list: MdSolver::usePairList, for the laws without memory beyond the spring and
/// integrator cd); auto takes fused where it applies.
enum class MdPipeline { Auto, Fused, Staged };

enum class Integrator {
    FE, TY2, TY3, TY4, RK, CD, PV, BABAB, BABABAB, VE,
    AB2, AB3, AB4, AB5, AB2AM3, AB3AM4, AB4AM5, D12, T12, T16, GPC3, GPC4, Gear5,
};

/// Soft-sphere MD settings.
struct MdSettings {
    NormalLaw normal = NormalLaw::Linear;
    double kn = 2e5;          ///< k_n (linear), k̃_n (Hertz family) or k₁ (Walton–Braun)
    double gammaN = 50.0;     ///< γ_n (linear, Hertz damped) or γ̃_n (Kuwabara–Kono)
    double s = 0.0;           ///< Walton–Braun: k₂ = k₁ + s F_max
    TangentialLaw tangential = TangentialLaw::Spring;
    double kt = 2e5 * 2.0 / 7.0;   ///< tangential spring stiffness
    RollingLaw rolling = RollingLaw::None;
    /// The values of the keys the laws declare (LawKey, kLawKeys order);
    /// a kernel reads its own with lawValues[lawKeyIndex("md.NAME")].
    LawValues lawValues = kLawDefaults;
    /// Young's modulus and Poisson's ratio of each wall, by wall index
    /// (wall.NAME.youngs_modulus, wall.NAME.poisson_ratio): what the laws
    /// from material constants (hertz-material) take for a grain–wall
    /// contact. A wall beyond the list is of the grains' material
    /// (md.youngs_modulus, md.poisson_ratio).
    std::vector<ElasticMaterial> wallMaterials;
    /// What the normal law's kernel derives from the settings alone, once
    /// per run (its runConstants: hertz-material's α and E*), set by the MD
    /// solver when it starts; empty for the laws that derive nothing.
    std::vector<double> normalRunConstants;
    double gammaT = 25.0;     ///< tangential damping γ_t (spring) or γ_s (viscous laws)
    EffectiveMass meff = EffectiveMass::None;
    /// Linear law from eqs. 3–4: when tn > 0, k_n and γ_n follow from (e_n,
    /// t_n) per contact with its own m_eff (meff is then Both).
    double en = 0.0, tn = 0.0;
    /// μ_s/μ_d: the friction coefficients of contact.mu and wall.NAME.mu are
    /// the dynamic ones; history laws stick up to this multiple of them.
    double muStaticRatio = 1.0;
    double zeta0 = 1e-8;      ///< saw-tooth period ζ₀ (eq. 22)
    bool kuhnOnset = true, kuhnSlipOnset = true, kuhnSlipRotation = true;  ///< Kuhn's refinements 1–3
    bool kuhnProjection = true, kuhnTwirl = true;                         ///< Kuhn's refinement 4 (eqs. 22–23)
    PenaTranslation penaTranslation = PenaTranslation::Slip;
    bool clipAttractive = true;  ///< a normal force that would pull is set to zero
    /// Whether the force stage sets a pulling normal force to zero:
    /// md.clip_attractive, unless the normal law is cohesive (its row).
    bool clipsAttraction() const { return clipAttractive && !lawRow(normal).cohesive; }
    /// MD steps per simulation step: MD resolves each collision (Δt ≪ t_n),
    /// CD does not need to, so one scene serves both with output on the same clock.
    int substeps = 1;
    /// Time integration; cd (central difference in leapfrog form) is the fast default.
    Integrator integrator = Integrator::CD;
    MdPipeline pipeline = MdPipeline::Auto;
    /// Widest vector kernel of the fused pipeline (lanes: 8, 4, 2; 0 = scalar;
    /// −1 = auto: 8 where the CPU has AVX-512, else scalar).
    int simdLanes = -1;
    /// Multi-step and Gear schemes take an RK4 step and restart their history
    /// when a contact opens or closes, so it never spans a force law's kink.
    bool restartOnContactChange = true;
    /// Schemes other than cd: the spring law's elongation at a force
    /// evaluation is the committed spring plus the contact point's tangential
    /// displacement since the step start (false, default) or plus V_t times
    /// the time since the step start (true: Cundall's update, Peña eq. 7,
    /// first order in the stage's elapsed time).
    bool springVelocityIncrement = false;
};

struct SimulationSettings {
    Method method = Method::CD;
    double dt = 1.0;
    long steps = 1000;
    std::uint64_t seed = 1;
    /// Detection margin: candidates with gap < margin are kept (absolute length).
    double margin = 0.0;
    /// Verlet-list skin (absolute length): speed only, results are the same.
    double skin = 0.0;
    /// Skin of the fused MD pipeline's working list, filtered from the
    /// Verlet list (absolute length; 0 or >= skin: one list). Speed only.
    double innerSkin = 0.0;
    /// On MPI ranks: the most steps between the ranks' checks
    /// (DistributedSimulation::setCheckEvery; 1: before every step). Speed only.
    long rankCheckEvery = 1;
};

struct OutputSettings {
    long every = 1;       ///< series.csv row every N steps (0: first and last only)
    long vtkEvery = 0;    ///< VTK snapshot every N steps (0: none)
    bool vtkPieces = false;    ///< under mpirun: a piece per rank and a parallel file per step
    long checkpointEvery = 0;  ///< DIR/checkpoint every N steps (0: only when a run stops early)
    long logEvery = 0;         ///< a run-log line every N steps (0: about 20 per run)
    long fclibEvery = 0;       ///< CD: the step's local problem to OUT/fclib every N steps (0: never)
    /// output.stress_region: the box {lower corner, upper corner} that the
    /// measurements of series.csv average over; none: the whole packing.
    std::optional<std::array<Vec3, 2>> stressRegion;
    /// output.stage: the protocol's current stage, series.csv's last column
    /// `stage` ("" at the start: no column). Python's set_stage changes it.
    std::string stage;
};

/// What a stage name may be (output.stage, Python's set_stage): it is a
/// series.csv field, so no commas, quotes or spaces.
inline constexpr const char* kStageNameAllowed = "1 to 64 letters, digits, '_', '-' or '.'";
inline bool isStageName(const std::string& name) {
    if (name.empty() || name.size() > 64) return false;
    for (const char c : name)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.')) return false;
    return true;
}

/// What `moreau run` checks so that it never reports garbage (docs/scenes.md,
/// "Guards"): the MD step against the contact duration before it starts,
/// each grain's travel every step, the overlaps and the energy every
/// `every` steps. A check that fails stops the run with exit 3 and the
/// checkpoint of the last step whose checks all passed.
struct GuardSettings {
    long contactSteps = 10;   ///< MD: steps per contact duration at least (0: no check)
    long every = 50;          ///< steps between the checks of overlaps and energy
    double maxOverlap = 0.5;  ///< largest overlap over the smallest radius (0: no check)
    double maxTravel = 1.0;   ///< largest |v| Δt over the grain's radius (0: no check)
    bool energy = true;       ///< energy may not rise above what the start state and gravity can give
    double startOverlap = 0.01;  ///< largest start overlap over the smallest radius (inf: no check)
};

/// A servo on a plane wall ([wall.NAME] servo_* keys, docs/mechanics.md):
/// before each step the wall's velocity along its normal n becomes
///   v_n = gain (e + (1/time) ∫ e dt),  e = stress − σ,  σ = −F·n / area,
/// clamped to ±maxSpeed (the integral, World::wallErrorIntegral, stops
/// growing while clamped; time = ∞: proportional only), with F the contact force the grains exerted at the
/// last step on the wall and on the grains glued to it (σ > 0 under
/// compression: the grains push the wall along −n). The wall moves
/// kinematically; its velocity along the plane stays as given.
struct WallServo {
    BodyId wall = 0;
    double stress = 0.0, gain = 0.0, area = 1.0;
    double maxSpeed = std::numeric_limits<double>::infinity();
    double time = std::numeric_limits<double>::infinity();
};

/// Stress control of a periodic cell ([periodic] stress keys,
/// docs/mechanics.md): before each step the strain rate of each controlled
/// axis k becomes, with e_k = σ_kk − stress_k,
///   ε̇_k = gain (e_k + (1/time) ∫ e_k dt),
/// clamped to ±maxRate (the integral stops growing while clamped), σ the
/// grains' stress over the cell (Love–Weber at the last evaluation plus the
/// kinetic part; compression positive): a cell under more stress than asked
/// for expands. The integral (World::stressErrorIntegral) removes the
/// offset e = ε̇ / gain that a proportional servo keeps while the cell must
/// move (triaxial compression); time = ∞ leaves the proportional part.
struct CellServo {
    std::array<bool, 3> axes{false, false, false};
    Vec3 stress = Vec3::Zero();
    double gain = 0.0;
    double time = std::numeric_limits<double>::infinity();
    double maxRate = std::numeric_limits<double>::infinity();
    bool any() const { return axes[0] || axes[1] || axes[2]; }
};

struct Scene {
    std::string origin;   ///< file name or "<built-in NAME>" for messages
    SimulationSettings simulation;
    CdSettings cd;
    MdSettings md;
    OutputSettings output;
    GuardSettings guard;
    World world;
    std::vector<WallServo> servos;  ///< in wall order
    CellServo cellServo;
    /// Every key with its final value as text (defaults, file, --set), for
    /// summary.json and for experiments that read their own keys.
    std::map<std::string, std::string> values;
};

}  // namespace moreau
