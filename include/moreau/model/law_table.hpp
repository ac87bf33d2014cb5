#pragma once
/// The MD force laws as the scene, the schedules and the integrators see
/// them: one row per law, the one place that says what a law is called,
/// which paper and equation it follows, what memory it keeps per contact,
/// which derivatives it provides and which schedules of the force stage take
/// it. The scene parser (md.normal, md.tangential), `moreau list force-laws`,
/// the fused pipeline's admission and the integrators' checks read these rows.
/// The arithmetic of each law is its kernel in md/laws/ (md/force_laws.hpp).
#include <array>
#include <cmath>
#include <cstddef>
#include <limits>
#include <span>
#include <string_view>
#include <utility>

namespace moreau {

/// Normal force laws of the force-schemes paper (eq. numbers there).
enum class NormalLaw {
    Linear,             ///< eq. 2: k_n ξ + γ_n ξ̇
    Hertz,              ///< eq. 6: k̃ ξ^{3/2}
    HertzDamped,        ///< eq. 8: k̃ ξ^{3/2} + γ_n ξ̇
    HertzKuwabaraKono,  ///< eq. 9: k̃ ξ^{3/2} + γ̃ ξ^{1/2} ξ̇
    WaltonBraun,        ///< eq. 10: k₁ ξ loading, k₂ (ξ − ξ₀) unloading, k₂ = k₁ + s F_max
    Luding,             ///< Luding (2008), f^hys: k₁ ξ loading, k₂ (ξ − ξ₀) unloading, −k_c ξ adhesive branch
    HertzMaterial,      ///< Hertz from E and ν of each pair, 4/3 E* √R* ξ^{3/2}, with Tsuji's damping
};

/// Tangential force laws (force schemes §3, Kuhn et al., Peña et al.).
enum class TangentialLaw {
    None,
    Coulomb,         ///< eq. 13: −μ F_n v̂_s
    Viscous,         ///< eq. 14: −γ_s v_s
    ViscousCoulomb,  ///< eq. 15: −min(γ_s |v_s|, μ F_n) v̂_s
    Spring,          ///< eqs. 16–17: Cundall–Strack spring, Coulomb-limited
    WaltonBraun,     ///< eqs. 20–21: Walton–Braun/Mindlin variable spring
    SawTooth,        ///< eq. 22: Brilliantov saw-tooth of period ζ₀
    Kuhn,            ///< Kuhn et al. Fig. 1: refined 3D linear–frictional algorithm
    Pena,            ///< Peña et al. eqs. 14–15: spring from positions and angles
    Mindlin,         ///< Hertz–Mindlin: spring of stiffness 8 G* a, a = √(R* ξ), Coulomb-limited
};

/// Rolling resistance laws: a moment between the pair against their
/// relative rolling.
enum class RollingLaw {
    None,
    AiTypeC,  ///< Ai, Chen, Rotter & Ooi (2011) model C: elastic–plastic spring–dashpot
};

/// k_n and γ_n of the linear spring–dashpot (force schemes eq. 2) that give
/// a collision of reduced mass m_eff the restitution e_n and duration t_n:
/// eqs. 3–4 solved, γ/(2 m_eff) = −ln(e_n)/t_n and
/// k/m_eff = (π/t_n)² + (γ/(2 m_eff))².
struct LinearConstants {
    double kn, gammaN;
};
inline LinearConstants linearFromRestitution(double en, double tn, double meff) {
    const double beta = -std::log(en) / tn;
    const double omega = M_PI / tn;
    return {meff * (omega * omega + beta * beta), 2.0 * meff * beta};
}

/// A scene key a law declares (md.NAME, a real number): it is listed by
/// `moreau run --help` and `moreau list`, parsed with the other keys, and
/// its value reaches the law's kernel through MdSettings::lawValue.
struct LawKey {
    std::string_view name;         ///< full key, e.g. "md.shear_modulus"
    double fallback;               ///< default value
    std::string_view description;  ///< one line: meaning and unit
    double min = 0.0;              ///< smallest value allowed
    bool minExclusive = false;     ///< the minimum itself is not allowed
    double max = std::numeric_limits<double>::infinity();  ///< largest value allowed
};

/// The elastic constants of a material, for the laws that take them
/// (hertz-material): the grains' from md.youngs_modulus and
/// md.poisson_ratio, each wall's from its own keys.
struct ElasticMaterial {
    double youngsModulus = 0.0;  ///< E (Pa)
    double poissonRatio = 0.0;   ///< ν
};

/// Derivative order of laws linear in the contact kinematics: any.
inline constexpr int kAnyDerivative = 99;

/// What one force law declares.
struct ForceLawRow {
    std::string_view name;     ///< value of md.normal / md.tangential
    std::string_view summary;  ///< one line: the law, its paper and equation, the keys it reads
    /// Per-contact memory beyond the contact's last force: whether it keeps
    /// the tangential spring vector (3 doubles, turned with the contact
    /// frame), and how many further doubles (Walton–Braun's F_max; the
    /// Mindlin direction and reversal force; Kuhn's normal force and
    /// dissipated work; Peña's centre line and orientations).
    bool spring = false;
    int extraSlots = 0;
    /// Keeps a sliding flag where μ_s ≠ μ_d (md.mu_static_ratio).
    bool slidingFlag = false;
    /// Highest time derivative d^k a/dt^k it provides (Taylor and Gear
    /// schemes), and whether it provides the position Jacobian da/dr
    /// (Khakimov schemes): 0 / false for laws that provide none.
    int timeDerivatives = 0;
    bool positionJacobian = false;
    /// Schedules of the force stage that take it besides the staged one:
    /// the fused pair pass, and its lane-parallel kernel (md.simd).
    bool fused = false;
    bool lanes = false;
    /// Multi-stage schemes evaluate it from the step-start memory with the
    /// stage's increment since the step start (its memory is more than a
    /// spring the scheme can integrate; MdSolver's history mode).
    bool historyStages = false;
    /// It counts its own work per step (Kuhn's ΔW^t), which the force stage
    /// adds instead of the trapezoid of F · ΔU for the tangential part.
    bool ownWork = false;
    // --- what the force stage and the guards ask of a normal law -----------
    /// Its normal force may pull (LAMMPS GRANULAR's allow_cohesion): the
    /// force stage then leaves md.clip_attractive aside for it.
    bool cohesive = false;
    /// It acts at a gap > 0 (LAMMPS GRANULAR's beyond_contact, JKR's neck).
    /// No law of the table does: the force stage evaluates a contact only
    /// while it overlaps and forgets its memory at separation, and refuses
    /// at compile time a row that sets it (src/md/force_stage.cpp).
    bool beyondContact = false;
    /// md.en and md.tn may set its constants instead of md.kn and md.gamma_n
    /// (eqs. 3-4, linearFromRestitution).
    bool fromRestitution = false;
    /// The scene keys of its parameters beyond the common ones.
    std::span<const LawKey> keys = {};

    // --- What the MD engines ask of a tangential law beyond its kernel ---
    // (md-core's block: the multi-stage schemes and the force stage read
    // these instead of the law's name.)
    /// A multi-stage scheme's increment for it is the contact points'
    /// movement in the middle of the overlap plus the twirl angle about n
    /// (Kuhn et al. Fig. 1), not the contact point's displacement.
    bool stageTwirl = false;
    /// Its increment comes from the orientations against the step start's
    /// (Peña's reference): a stage puts its orientations into the world
    /// while it is evaluated.
    bool stageOrientations = false;
    /// It keeps its sliding flag in multi-stage schemes whatever μ_s/μ_d
    /// (it reads the flag at the step start).
    bool stageSlidingFlag = false;
    /// md.spring_increment = velocity applies to it: a stage's increment is
    /// Cundall's V_t τ instead of the contact point's displacement.
    bool velocityIncrement = false;
    /// It counts its own work (ownWork): the slot, within its tangential
    /// memory, of the dissipated work accumulated over a contact's life; −1: none.
    int dissipatedWorkSlot = -1;
};

template <class Law>
struct ForceLaw {
    Law id;
    ForceLawRow row;
};

/// Keys shared by the laws from material constants (hertz-material,
/// mindlin): declared once here, listed by each row that reads them.
inline constexpr LawKey kPoissonRatioKey{
    "md.poisson_ratio", 0.3,
    "Poisson's ratio nu of the grains (hertz-material, mindlin; hertz-material's walls: wall.NAME.poisson_ratio, default this)", -1.0,
    true, 0.5};

inline constexpr LawKey kLudingKeys[] = {
    {"md.k2_ratio", 5.0, "Luding: unloading stiffness over loading stiffness, k_2/k_1 (k_1 = md.kn)", 1.0},
    {"md.kc_ratio", 1.0, "Luding: adhesive (tensile) stiffness over loading stiffness, k_c/k_1", 0.0},
};

inline constexpr LawKey kHertzMaterialKeys[] = {
    {"md.youngs_modulus", 2.6e9,
     "hertz-material: Young's modulus E of the grains (Pa; walls: wall.NAME.youngs_modulus, default this)", 0.0,
     true},
    kPoissonRatioKey,
    {"md.tsuji_en", 0.9, "hertz-material: restitution coefficient e of Tsuji's damping (0 < e <= 1)", 0.0, true,
     1.0},
};

/// The normal laws, in the order the key reference lists them.
inline constexpr std::array<ForceLaw<NormalLaw>, 7> kNormalLaws{{
    {NormalLaw::Linear,
     {.name = "linear",
      .summary = "linear spring-dashpot, force schemes eq. 2; md.kn, md.gamma_n, md.meff, or md.en and md.tn (eqs. 3-4)",
      .timeDerivatives = kAnyDerivative, .positionJacobian = true, .fused = true, .lanes = true,
      .fromRestitution = true}},
    // The Hertz family and Walton–Braun give the first derivative, dF/dt =
    // (∂F/∂ξ) ξ̇ + (∂F/∂ξ̇) ξ̈; the second would need the curvature terms in ξ̇².
    {NormalLaw::Hertz,
     {.name = "hertz", .summary = "Hertz, eq. 6; md.kn = k~_n", .timeDerivatives = 1, .positionJacobian = true,
      .fused = true, .lanes = true}},
    {NormalLaw::HertzDamped,
     {.name = "hertz-damped", .summary = "Hertz with linear damping, eq. 8; md.kn, md.gamma_n", .timeDerivatives = 1,
      .positionJacobian = true, .fused = true, .lanes = true}},
    {NormalLaw::HertzKuwabaraKono,
     {.name = "hkk", .summary = "Hertz-Kuwabara-Kono, eq. 9; md.kn, md.gamma_n = gamma~_n", .timeDerivatives = 1,
      .positionJacobian = true, .fused = true, .lanes = true}},
    {NormalLaw::WaltonBraun,
     {.name = "walton-braun",
      .summary = "Walton-Braun, eq. 10, k2 = k1 + s F_max, xi_0 kept per contact; md.kn = k1, md.s",
      .extraSlots = 1, .timeDerivatives = 1, .positionJacobian = true}},
    // Walton–Braun's linear hysteresis with an adhesive branch: the only
    // law that pulls (cohesive), so it is kept from the fused pass, which
    // clips or drops what pulls.
    {NormalLaw::Luding,
     {.name = "luding",
      .summary = "Luding (2008) linear hysteretic adhesive law: k1 xi loading, k2 (xi - xi_0) unloading, "
                 "-kc xi adhesive branch, xi_max kept per contact, plus gamma_n xi'; md.kn = k1, md.k2_ratio, "
                 "md.kc_ratio, md.gamma_n",
      .extraSlots = 1, .timeDerivatives = 1, .positionJacobian = true, .cohesive = true, .keys = kLudingKeys}},
    // k and Tsuji's damping per pair, from the materials of its two bodies.
    {NormalLaw::HertzMaterial,
     {.name = "hertz-material",
      .summary = "Hertz from material constants, 4/3 E* sqrt(R*) xi^1.5, E* of the pair's two materials, with "
                 "Tsuji's damping alpha(e) sqrt(2 m_eff k_n) xi', k_n = 4/3 E* sqrt(R* xi) (LAMMPS granular "
                 "hertz/material, damping tsuji); md.youngs_modulus, md.poisson_ratio, md.tsuji_en, "
                 "wall.NAME.youngs_modulus, wall.NAME.poisson_ratio",
      .timeDerivatives = 1, .positionJacobian = true, .keys = kHertzMaterialKeys}},
}};

/// The tangential laws, in the order the key reference lists them.
inline constexpr LawKey kMindlinKeys[] = {
    {"md.shear_modulus", 1e9, "Hertz-Mindlin: shear modulus G of the grains and walls (Pa; G* = G/(2(2 - nu)))", 0.0,
     true},
    kPoissonRatioKey,
};

inline constexpr std::array<ForceLaw<TangentialLaw>, 10> kTangentialLaws{{
    {TangentialLaw::Spring,
     {.name = "spring",
      .summary = "Cundall-Strack spring, eqs. 16-17, kept in the tangent plane; md.kt, md.gamma_t, mu, "
                 "md.mu_static_ratio (default)",
      .spring = true, .slidingFlag = true, .timeDerivatives = kAnyDerivative, .positionJacobian = true,
      .fused = true, .lanes = true, .velocityIncrement = true}},
    {TangentialLaw::Coulomb,
     {.name = "coulomb", .summary = "Coulomb, eq. 13; contact.mu, wall.NAME.mu", .timeDerivatives = kAnyDerivative,
      .positionJacobian = true, .fused = true, .lanes = true}},
    {TangentialLaw::Viscous,
     {.name = "viscous", .summary = "viscous, eq. 14; md.gamma_t = gamma_s", .timeDerivatives = kAnyDerivative,
      .positionJacobian = true, .fused = true, .lanes = true}},
    {TangentialLaw::ViscousCoulomb,
     {.name = "viscous-coulomb", .summary = "Coulomb-limited viscous, eq. 15; md.gamma_t, mu",
      .timeDerivatives = kAnyDerivative, .positionJacobian = true, .fused = true, .lanes = true}},
    {TangentialLaw::WaltonBraun,
     {.name = "walton-braun", .summary = "Walton-Braun/Mindlin variable spring, eqs. 20-21; md.kt = k_s^0, mu",
      .spring = true, .extraSlots = 5, .slidingFlag = true, .historyStages = true}},
    {TangentialLaw::SawTooth,
     {.name = "saw-tooth", .summary = "Brilliantov saw-tooth, eq. 22; md.zeta0, mu", .spring = true,
      .historyStages = true}},
    {TangentialLaw::Kuhn,
     {.name = "kuhn",
      .summary = "Kuhn et al. refined 3D linear-frictional algorithm (Fig. 1) with work increments; md.kt, mu, "
                 "md.kuhn_onset, md.kuhn_slip_onset, md.kuhn_slip_rotation, md.kuhn_projection, md.kuhn_twirl",
      .spring = true, .extraSlots = 2, .slidingFlag = true, .historyStages = true, .ownWork = true,
      .stageTwirl = true, .stageSlidingFlag = true, .dissipatedWorkSlot = 4}},
    // Peña's geometric increment is the spring's to first order in the
    // displacements, w (Δx_b − Δx_a)_t − (r_a Δθ_a + r_b Δθ_b) × n: declared
    // like the spring (the curvature of composing finite rotations enters
    // Gear's start-up only).
    {TangentialLaw::Pena,
     {.name = "pena", .summary = "Pena et al. spring from positions and angles, eqs. 14-15; md.kt, md.pena_translation",
      .spring = true, .extraSlots = 11, .slidingFlag = true, .timeDerivatives = kAnyDerivative,
      .positionJacobian = true, .historyStages = true, .stageOrientations = true}},
    // The spring of the Hertz–Mindlin no-slip solution (Mindlin 1949): the
    // tangential stiffness of a Hertzian contact of radius a; the default
    // tangential model of LIGGGHTS and LAMMPS's granular "mindlin".
    {TangentialLaw::Mindlin,
     {.name = "mindlin",
      .summary = "Hertz-Mindlin spring, k_t = 8 G* a with a = sqrt(R* xi), kept in the tangent plane and "
                 "Coulomb-limited; md.shear_modulus, md.poisson_ratio, md.gamma_t, mu, md.mu_static_ratio",
      .spring = true, .slidingFlag = true, .keys = kMindlinKeys}},
    {TangentialLaw::None,
     {.name = "none", .summary = "no tangential force", .timeDerivatives = kAnyDerivative, .positionJacobian = true,
      .fused = true, .lanes = true}},
}};

inline constexpr LawKey kAiRollingKeys[] = {
    {"md.mu_roll", 0.0,
     "Rolling friction coefficient mu_r: the rolling moment saturates at mu_r R* |F_n| (Ai et al. 2011 eq. 14)"},
    {"md.eta_roll", 0.3,
     "Rolling damping ratio eta_r: C_r = eta_r 2 sqrt(I_r k_r) while the spring is elastic (Ai et al. eq. 17)"},
};

/// The rolling resistance laws, in the order the key reference lists them.
inline constexpr std::array<ForceLaw<RollingLaw>, 2> kRollingLaws{{
    {RollingLaw::None, {.name = "none", .summary = "no rolling resistance", .timeDerivatives = kAnyDerivative,
                        .positionJacobian = true, .fused = true, .lanes = true}},
    // Memory: the spring moment M^k and the last total moment (for the
    // work's trapezoid). Integrator cd only (the stage schemes would need
    // the rolling angle since the step start).
    {RollingLaw::AiTypeC,
     {.name = "ai-c",
      .summary = "Ai, Chen, Rotter & Ooi (2011) model C: elastic-plastic spring-dashpot rolling moment, "
                 "k_r = 2.25 k_n mu_r^2 R*^2, limit mu_r R* |F_n|, damping eta_r 2 sqrt(I_r k_r) until the limit; "
                 "md.mu_roll, md.eta_roll (md.integrator = cd)",
      .extraSlots = 6, .keys = kAiRollingKeys}},
}};

/// The row of a law.
template <class Law, std::size_t N>
constexpr const ForceLawRow& lawRow(const std::array<ForceLaw<Law>, N>& table, Law law) {
    for (const ForceLaw<Law>& entry : table)
        if (entry.id == law) return entry.row;
    return table[0].row;  // unreachable: every enumerator has a row (checked below)
}
constexpr const ForceLawRow& lawRow(NormalLaw law) { return lawRow(kNormalLaws, law); }
constexpr const ForceLawRow& lawRow(TangentialLaw law) { return lawRow(kTangentialLaws, law); }
constexpr const ForceLawRow& lawRow(RollingLaw law) { return lawRow(kRollingLaws, law); }

/// (law, name) pairs of a table, for the name helpers of scene.hpp.
template <class Law, std::size_t N>
constexpr std::array<std::pair<Law, std::string_view>, N> lawNameTable(const std::array<ForceLaw<Law>, N>& table) {
    std::array<std::pair<Law, std::string_view>, N> names{};
    for (std::size_t i = 0; i < N; ++i) names[i] = {table[i].id, table[i].row.name};
    return names;
}
/// The scene-file names of the laws (md.normal, md.tangential), in the order
/// the key reference lists them.
inline constexpr auto kNormalLawNames = lawNameTable(kNormalLaws);
inline constexpr auto kTangentialLawNames = lawNameTable(kTangentialLaws);
inline constexpr auto kRollingLawNames = lawNameTable(kRollingLaws);

namespace detail {
/// Every key the rows list, in table order (normal, tangential, rolling
/// laws); a shared material constant appears once per row that lists it.
inline constexpr std::size_t kListedKeyCount = [] {
    std::size_t n = 0;
    for (const auto& e : kNormalLaws) n += e.row.keys.size();
    for (const auto& e : kTangentialLaws) n += e.row.keys.size();
    for (const auto& e : kRollingLaws) n += e.row.keys.size();
    return n;
}();
inline constexpr std::array<LawKey, kListedKeyCount> kListedKeys = [] {
    std::array<LawKey, kListedKeyCount> all{};
    std::size_t n = 0;
    for (const auto& e : kNormalLaws)
        for (const LawKey& k : e.row.keys) all[n++] = k;
    for (const auto& e : kTangentialLaws)
        for (const LawKey& k : e.row.keys) all[n++] = k;
    for (const auto& e : kRollingLaws)
        for (const LawKey& k : e.row.keys) all[n++] = k;
    return all;
}();
/// Whether listed key i is the first of its name.
constexpr bool firstOfItsName(std::size_t i) {
    for (std::size_t j = 0; j < i; ++j)
        if (kListedKeys[j].name == kListedKeys[i].name) return false;
    return true;
}
/// Rows that list one key list the same declaration.
constexpr bool sharedKeysAgree() {
    for (std::size_t i = 0; i < kListedKeyCount; ++i)
        for (std::size_t j = 0; j < i; ++j) {
            const LawKey &a = kListedKeys[i], &b = kListedKeys[j];
            if (a.name == b.name && (a.fallback != b.fallback || a.min != b.min || a.max != b.max ||
                                     a.minExclusive != b.minExclusive || a.description != b.description))
                return false;
        }
    return true;
}
static_assert(sharedKeysAgree(), "a key several laws list has one declaration");
}  // namespace detail

/// Every key the laws declare, in table order (normal, tangential, rolling
/// laws), once each: MdSettings::lawValues holds their values in this order.
inline constexpr std::size_t kLawKeyCount = [] {
    std::size_t n = 0;
    for (std::size_t i = 0; i < detail::kListedKeyCount; ++i) n += detail::firstOfItsName(i) ? 1 : 0;
    return n;
}();
inline constexpr std::array<LawKey, kLawKeyCount> kLawKeys = [] {
    std::array<LawKey, kLawKeyCount> all{};
    std::size_t n = 0;
    for (std::size_t i = 0; i < detail::kListedKeyCount; ++i)
        if (detail::firstOfItsName(i)) all[n++] = detail::kListedKeys[i];
    return all;
}();
/// The index of a law key in kLawKeys (a compile error when none has that name).
consteval std::size_t lawKeyIndex(std::string_view name) {
    for (std::size_t i = 0; i < kLawKeys.size(); ++i)
        if (kLawKeys[i].name == name) return i;
    throw "no law declares this key";
}
/// The default of every law key, in kLawKeys order.
using LawValues = std::array<double, kLawKeyCount>;
inline constexpr LawValues kLawDefaults = [] {
    LawValues v{};
    for (std::size_t i = 0; i < kLawKeyCount; ++i) v[i] = kLawKeys[i].fallback;
    return v;
}();

namespace detail {
/// Every enumerator 0 .. count−1 has exactly one row.
template <class Law, std::size_t N>
constexpr bool everyLawOnce(const std::array<ForceLaw<Law>, N>& table) {
    for (std::size_t k = 0; k < N; ++k) {
        int rows = 0;
        for (const ForceLaw<Law>& entry : table) rows += static_cast<std::size_t>(entry.id) == k ? 1 : 0;
        if (rows != 1) return false;
    }
    return true;
}
}  // namespace detail
static_assert(detail::everyLawOnce(kNormalLaws), "every normal law has one row");
static_assert(detail::everyLawOnce(kTangentialLaws), "every tangential law has one row");
static_assert(detail::everyLawOnce(kRollingLaws), "every rolling law has one row");

}  // namespace moreau
