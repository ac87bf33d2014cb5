#include "moreau/io/scene_file.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <utility>

#include "moreau/cd/local_problem.hpp"
#include "moreau/core/error.hpp"
#include "moreau/io/embedded_scenes.hpp"
#include "moreau/model/generators.hpp"
#include "moreau/model/integrator_table.hpp"

namespace moreau {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kMaxGrains = 1e8;  // BodyId is 32-bit; memory runs out long before
/// Grain radii: a sphere's moment of inertia grows as r^5, which stays a
/// normal double (2.2e-308 to 1.8e308) at unit density between these. A
/// radius of 1e-300 gives mass 0 and an infinite inverse mass.
constexpr double kMinRadius = 1e-60, kMaxRadius = 1e60;

// ---------------------------------------------------------------------------
// Text helpers

std::string trim(std::string_view s) {
    std::size_t b = 0, e = s.size();
    while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
    while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
    return std::string(s.substr(b, e - b));
}

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

/// Drops one pair of surrounding double quotes: `file = ""` is the empty text.
std::string unquote(std::string s) {
    if (s.size() >= 2 && s.front() == '"' && s.back() == '"') return s.substr(1, s.size() - 2);
    return s;
}

std::vector<std::string> splitWords(std::string_view s, bool commasToo) {
    std::vector<std::string> words;
    std::string cur;
    for (char c : s) {
        if (std::isspace(static_cast<unsigned char>(c)) || (commasToo && c == ',')) {
            if (!cur.empty()) words.push_back(std::move(cur));
            cur.clear();
        } else {
            cur += c;
        }
    }
    if (!cur.empty()) words.push_back(std::move(cur));
    return words;
}

std::vector<std::string> splitList(std::string_view s) {
    std::vector<std::string> items;
    std::size_t start = 0;
    while (true) {
        const std::size_t comma = s.find(',', start);
        items.push_back(trim(s.substr(start, comma == std::string_view::npos ? std::string_view::npos
                                                                              : comma - start)));
        if (comma == std::string_view::npos) break;
        start = comma + 1;
    }
    return items;
}

std::string formatNumber(double x) {
    if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof buf, x);
    return std::string(buf, r.ptr);
}

/// Whole-string number; accepts a leading '+'. May return inf or nan.
std::optional<double> parseDouble(std::string_view s) {
    if (!s.empty() && s.front() == '+') s.remove_prefix(1);
    double x = 0.0;
    const auto r = std::from_chars(s.data(), s.data() + s.size(), x);
    if (s.empty() || r.ec != std::errc() || r.ptr != s.data() + s.size()) return std::nullopt;
    return x;
}

/// Whole-string integer as a double (for range checks) plus its exact value
/// when it fits a signed 64-bit integer; positives up to 2^64 − 1 (seeds) too.
struct IntegerValue {
    double approx = 0.0;
    std::optional<long long> exact;
    std::optional<unsigned long long> exactUnsigned;
};

std::optional<IntegerValue> parseInteger(std::string_view s) {
    if (!s.empty() && s.front() == '+') s.remove_prefix(1);
    if (s.empty()) return std::nullopt;
    IntegerValue v;
    long long x = 0;
    auto r = std::from_chars(s.data(), s.data() + s.size(), x);
    if (r.ec == std::errc() && r.ptr == s.data() + s.size()) {
        v.approx = static_cast<double>(x);
        v.exact = x;
        if (x >= 0) v.exactUnsigned = static_cast<unsigned long long>(x);
        return v;
    }
    if (r.ec == std::errc::result_out_of_range && s.front() != '-') {
        unsigned long long u = 0;
        auto ru = std::from_chars(s.data(), s.data() + s.size(), u);
        if (ru.ec == std::errc() && ru.ptr == s.data() + s.size()) {
            v.approx = static_cast<double>(u);
            v.exactUnsigned = u;
            return v;
        }
        // Too large even for 64 bits: all digits, but out of range.
        if (std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
            v.approx = kInf;
            return v;
        }
    }
    if (r.ec == std::errc::result_out_of_range && s.front() == '-') {
        v.approx = -kInf;
        return v;
    }
    return std::nullopt;
}

std::optional<Vec3> parseVector(std::string_view s) {
    const auto words = splitWords(s, true);
    if (words.size() != 3) return std::nullopt;
    Vec3 v;
    for (int k = 0; k < 3; ++k) {
        const auto x = parseDouble(words[static_cast<std::size_t>(k)]);
        if (!x || !std::isfinite(*x)) return std::nullopt;
        v[k] = *x;
    }
    return v;
}

std::optional<bool> parseBool(const std::string& s) {
    const std::string l = lower(s);
    if (l == "true" || l == "1" || l == "yes" || l == "on") return true;
    if (l == "false" || l == "0" || l == "no" || l == "off") return false;
    return std::nullopt;
}

bool isInfinityWord(const std::string& s) {
    const std::string l = lower(s);
    return l == "inf" || l == "+inf" || l == "infinity" || l == "never";
}

/// `text` for an error message: at most `limit` bytes (cut at a UTF-8
/// character boundary), then "…" and the whole length. A key or value of a
/// megabyte must not come back as a megabyte of message.
std::string shown(std::string_view text, std::size_t limit = 64) {
    if (text.size() <= limit) return std::string(text);
    std::size_t cut = limit;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
    return std::string(text.substr(0, cut)) + "… (" + std::to_string(text.size()) + " bytes)";
}

/// Optimal string alignment distance (Levenshtein plus adjacent swaps), for
/// "did you mean" suggestions.
std::size_t editDistance(const std::string& a, const std::string& b) {
    const std::size_t n = a.size(), m = b.size();
    std::vector<std::vector<std::size_t>> d(n + 1, std::vector<std::size_t>(m + 1));
    for (std::size_t i = 0; i <= n; ++i) d[i][0] = i;
    for (std::size_t j = 0; j <= m; ++j) d[0][j] = j;
    for (std::size_t i = 1; i <= n; ++i)
        for (std::size_t j = 1; j <= m; ++j) {
            const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
        }
    return d[n][m];
}

bool isSectionName(std::string_view s) {
    return !s.empty() &&
           std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

// ---------------------------------------------------------------------------
// Schema

/// Validation beyond the key type, for a few built-in keys.
enum class Special {
    None,
    Axes,       ///< subset of "xyz"
    GrainList,  ///< first | last | all | comma list of indices and ranges i..j (empty: none)
    Box,        ///< six numbers: a box's lower and upper corners
    Counts,     ///< two or three positive integers
};

struct Rule {
    KeySpec spec;
    bool allowInfinity = false;  ///< Real: "inf" / "never" accepted (change times)
    Special special = Special::None;
};

/// A law choice key's description: `what`, then each law's name and row summary.
template <class Table>
std::string lawChoiceText(const std::string& what, const Table& table) {
    std::string text = what;
    for (const auto& entry : table) text.append(" ").append(entry.row.name).append(": ").append(entry.row.summary).append(".");
    return text;
}

Rule typedKey(KeyType type, std::string key, std::string def, std::string desc,
              std::vector<std::string> choices = {}) {
    Rule r;
    r.spec = KeySpec(std::move(key), type, std::move(def), std::move(desc), -kInf, kInf, std::move(choices));
    return r;
}

Rule realKey(std::string key, std::string def, std::string desc, double min = -kInf, bool minExclusive = false,
             double max = kInf) {
    Rule r;
    r.spec = KeySpec(std::move(key), KeyType::Real, std::move(def), std::move(desc), min, max, {}, minExclusive);
    return r;
}

Rule intKey(std::string key, std::string def, std::string desc, double min = -kInf, double max = kInf) {
    Rule r;
    r.spec = KeySpec(std::move(key), KeyType::Integer, std::move(def), std::move(desc), min, max);
    return r;
}

Rule specialKey(Special special, KeyType type, std::string key, std::string def, std::string desc) {
    Rule r = typedKey(type, std::move(key), std::move(def), std::move(desc));
    r.special = special;
    return r;
}

Rule withInfinity(Rule r) {
    r.allowInfinity = true;
    return r;
}

/// Built-in keys of the fixed sections, in reference order.
std::vector<Rule> fixedRules() {
    using K = KeyType;
    std::vector<Rule> r;
    // [simulation]
    r.push_back(typedKey(K::Choice, "simulation.method", "cd",
                         "Time stepping: rigid grains with contact dynamics (cd) or soft grains with molecular "
                         "dynamics (md). Both run the same scene.",
                         {"cd", "md"}));
    r.push_back(intKey("simulation.dimension", "3",
                       "1: motion along x only, no rotation (the sound-wave chain); 2: motion in the x-y plane, "
                       "rotation about z only; 3: free.",
                       1, 3));
    r.push_back(realKey("simulation.dt", "1.0", "Time step.", 0.0, true));
    r.push_back(intKey("simulation.steps", "1000", "Number of time steps.", 0));
    r.push_back(intKey("simulation.seed", "1",
                       "Seed (64-bit) of every random choice: sweep orders, the random packing, lattice jitter. "
                       "The same seed gives the same bits.",
                       0));
    r.push_back(typedKey(K::Vector, "simulation.gravity", "0 0 0", "Gravitational acceleration."));
    // [contact]
    r.push_back(realKey("contact.mu", "0", "Coulomb friction coefficient of grain-grain contacts "
                                           "(grain-wall: wall.NAME.mu).",
                        0.0));
    r.push_back(realKey("contact.skin", "0.2",
                        "Verlet-list skin as a fraction of the smallest grain radius: pairs within margin + skin are "
                        "listed, and the cell grid runs again only when a body has moved more than skin/2. Changes "
                        "speed, never results; 0 detects from scratch every step.",
                        0.0));
    r.push_back(realKey("contact.inner_skin", "0.05",
                        "Skin of the fused MD pipeline's working list, as a fraction of the smallest grain radius: "
                        "the force pass runs over the pairs of the Verlet list within margin + inner_skin, filtered "
                        "again when a body has moved more than inner_skin/2 (no cell grid). Changes speed, never "
                        "results; 0, or at least contact.skin, works on the Verlet list itself.",
                        0.0));
    r.push_back(realKey("contact.margin", "0.1",
                        "Detection margin as a fraction of the smallest grain radius: pairs whose gap is below it "
                        "become contact candidates (CD needs small positive gaps, eq. 25). Keep margin * r_min "
                        "above the distance a grain travels in one step.",
                        0.0));
    // [cd]
    r.push_back(intKey("cd.iterations", "40", "N_I: iterations per time step of the fixed criterion (eq. 37).", 1));
    r.push_back(typedKey(K::Choice, "cd.criterion", "fixed",
                         "When the iteration of a step stops: after cd.iterations sweeps (fixed, eq. 37), when every "
                         "contact force has converged (local, eq. 35 with the floor cd.delta), when the mean "
                         "force has (global, eq. 36), or when the Siconos/FCLIB error (natural map with De Saxce's "
                         "velocity over |q|, docs/convergence.md) is at most cd.epsilon (natural).",
                         {"fixed", "local", "global", "natural"}));
    r.push_back(realKey("cd.epsilon", "1e-4", "Relative accuracy of the local, global and natural criteria.", 0.0,
                        true));
    r.push_back(intKey("cd.check_every", "10",
                       "Natural criterion: sweeps between evaluations of the error (each costs about one sweep; "
                       "docs/convergence.md).",
                       1));
    r.push_back(realKey("cd.delta", "1e-9",
                        "Force floor added to the local criterion's tolerance, so contacts near zero force count "
                        "as converged.",
                        0.0));
    r.push_back(intKey("cd.max_iterations", "10000", "Cap on iterations per step for the local and global criteria.",
                       1));
    r.push_back(typedKey(K::Choice, "cd.order", "random-sweep",
                         "Order of contact updates: a fresh random permutation every sweep (the paper's), one "
                         "permutation per time step, the fixed contact order, random draws with replacement, or "
                         "jacobi: not Gauss-Seidel but every contact from the sweep's starting velocities, applied "
                         "together (the parallel update CD 2.5 calls unstable); random-keys: a fresh permutation every sweep "
                         "drawn as a random key per contact, which every MPI rank computes for its own contacts.",
                         lawNames(kSweepOrderNames)));
    r.push_back(typedKey(K::Choice, "cd.distributed", "domains",
                         "How MPI ranks share a step (docs/distributed.md; no effect on one process). domains: "
                         "each rank sweeps its own contacts and the bodies several ranks move are made consistent "
                         "after every sweep (Shojaaee et al. 2012, with mass splitting): its own bits per rank "
                         "count. exact: the serial sweep replayed across the ranks, the serial run's bits for any "
                         "rank count (needs cd.order = random-keys, fixed or jacobi).",
                         {"domains", "exact"}));
    r.push_back(typedKey(K::Choice, "cd.proximal", "off",
                         "Proximal term of the sweeps, for piles where Gauss-Seidel cycles (docs/convergence.md): "
                         "each row solves the shock law of u + eta (P - P_anchor) / m_n, the anchor moving to the "
                         "current impulses every cd.proximal_every sweeps. off: the paper's sweeps; on: from the "
                         "first sweep; stall: once the natural criterion's error has not halved in 1000 sweeps "
                         "(needs cd.criterion = natural).",
                         {"off", "on", "stall"}));
    r.push_back(realKey("cd.proximal_eta", "0.1", "Weight eta of the proximal term (relative to each row's normal "
                                                  "compliance 1/m_n).",
                        0.0, true));
    r.push_back(intKey("cd.proximal_every", "50", "Sweeps between moves of the proximal term's anchor.", 1));
    r.push_back(typedKey(K::Bool, "cd.warm_start", "true",
                         "Start each step's iteration from last step's contact reactions."));
    r.push_back(typedKey(K::Choice, "cd.gap", "pos",
                         "Gap in the shock law: g_pos = max(g, 0) (pos, eq. 33: overlaps are not pushed apart) or "
                         "the plain gap g.",
                         {"pos", "plain"}));
    // [md]
    r.push_back(typedKey(K::Choice, "md.normal", "linear", lawChoiceText("Normal force law.", kNormalLaws),
                         lawNames(kNormalLawNames)));
    r.push_back(realKey("md.kn", "2e5",
                        "Normal stiffness: k_n (linear, N/m), k~_n (Hertz family, N/m^1.5) or k_1 (Walton-Braun).",
                        0.0, true));
    r.push_back(realKey("md.gamma_n", "50",
                        "Normal damping: gamma_n (linear, hertz-damped; see md.meff) or gamma~_n (hkk).", 0.0));
    r.push_back(realKey("md.s", "0", "Walton-Braun: unloading stiffness k_2 = k_1 + s F_max (1/length).", 0.0));
    r.push_back(typedKey(K::Choice, "md.tangential", "spring", lawChoiceText("Tangential force law.", kTangentialLaws),
                         lawNames(kTangentialLawNames)));
    r.push_back(realKey("md.kt", "57142.857142857145", "Tangential spring stiffness k_t.", 0.0));
    r.push_back(realKey("md.gamma_t", "25", "Tangential damping gamma_t (units as gamma_n).", 0.0));
    r.push_back(typedKey(K::Choice, "md.rolling", "none", lawChoiceText("Rolling resistance law.", kRollingLaws),
                         lawNames(kRollingLawNames)));
    // The keys the laws declare (model/law_table.hpp).
    for (const LawKey& k : kLawKeys)
        r.push_back(realKey(std::string(k.name), formatNumber(k.fallback), std::string(k.description), k.min,
                            k.minExclusive, k.max));
    r.push_back(typedKey(K::Choice, "md.meff", "none",
                         "Where the effective mass enters: none (eq. 2 as written, F = -k xi - gamma xi'), damping "
                         "(F = -k xi - m_eff gamma xi', gamma a rate as in LAMMPS gran/hooke) or both constants.",
                         {"none", "damping", "both"}));
    r.push_back(realKey("md.en", "0",
                        "Linear law from eqs. 3-4: restitution e_n in (0, 1]; with md.tn it replaces md.kn and "
                        "md.gamma_n per contact (m_eff on both constants). 0: use md.kn, md.gamma_n.",
                        0.0, false, 1.0));
    r.push_back(realKey("md.tn", "0", "Linear law from eqs. 3-4: contact duration t_n (with md.en). 0: unused.", 0.0));
    r.push_back(realKey("md.mu_static_ratio", "1",
                        "Static over dynamic friction, mu_s/mu_d >= 1: contact.mu and wall.NAME.mu are the dynamic "
                        "coefficients; the history laws (spring, walton-braun, kuhn, pena) stick up to mu_s F_n and "
                        "slide at mu_d F_n.",
                        1.0));
    r.push_back(realKey("md.zeta0", "1e-8", "Saw-tooth period zeta_0 (length, eq. 22).", 0.0, true));
    r.push_back(typedKey(K::Bool, "md.kuhn_onset", "true",
                         "Kuhn: only the movement after the touch loads a contact that starts within the step."));
    r.push_back(typedKey(K::Bool, "md.kuhn_slip_onset", "true",
                         "Kuhn: elastic movement before slip starts within the step (eqs. 9-15)."));
    r.push_back(typedKey(K::Bool, "md.kuhn_slip_rotation", "true",
                         "Kuhn: the force turns towards the movement while sliding (eqs. 16-21); false adds the "
                         "increment and scales back onto the friction circle."));
    r.push_back(typedKey(K::Bool, "md.kuhn_projection", "true",
                         "Kuhn: project the tangential force onto the new tangent plane (eq. 22)."));
    r.push_back(typedKey(K::Bool, "md.kuhn_twirl", "true",
                         "Kuhn: turn the tangential force with the pair's mean spin about the normal (eq. 23)."));
    r.push_back(typedKey(K::Choice, "md.pena_translation", "slip",
                         "Pena: translation part of eq. 14 from the full change of the centre line (slip: agrees "
                         "with v_t dt as dt -> 0) or weighted by a_i/(a_i + a_j) as printed (paper).",
                         {"slip", "paper"}));
    r.push_back(typedKey(K::Choice, "md.spring_increment", "displacement",
                         "Schemes other than cd: the spring's elongation at a stage is the committed spring plus the "
                         "contact point's displacement since the step start (displacement) or plus V_t times the "
                         "elapsed time (velocity: Cundall's update, Pena eq. 7). cd always adds V_t dt.",
                         {"displacement", "velocity"}));
    r.push_back(typedKey(K::Bool, "md.clip_attractive", "true",
                         "Set a normal force that would turn attractive (late in a damped collision) to zero; "
                         "false keeps eq. 2 as written until the overlap vanishes."));
    r.push_back(intKey("md.substeps", "1",
                       "MD steps per simulation step (each detects contacts anew): MD must resolve a collision "
                       "(dt / substeps well below t_n, force schemes eq. 4) where CD takes simulation.dt as is.",
                       1));
    {
        std::vector<std::string> names;
        for (const IntegratorInfo& i : integrators()) names.emplace_back(i.name);
        r.push_back(typedKey(K::Choice, "md.integrator", "cd",
                             "Time integration (integration-schemes paper, Table 4; gear5: Pena et al., appendix). "
                             "cd: central difference in leapfrog form, the fast default. ty3, ty4, gpc3, gpc4, gear5 "
                             "need time derivatives of the force, d12, t12, t16 its position Jacobian, from the "
                             "laws that provide them. See `moreau list integrators` and docs/md-integrators.md.",
                             std::move(names)));
    }
    r.push_back(typedKey(K::Choice, "md.pipeline", "auto",
                         "How an MD step is organised. fused: one pass over a persistent Verlet pair list does the "
                         "narrow phase, the laws and the spring update in place (integrator cd; normal laws linear, "
                         "hertz, hertz-damped, hkk; tangential none, coulomb, viscous, viscous-coulomb, spring; "
                         "mu_static_ratio 1). staged: detect, match, forces, gather (every law and integrator). "
                         "Both give the same trajectory bits; auto takes fused where it applies.",
                         {"auto", "fused", "staged"}));
    r.push_back(typedKey(K::Choice, "md.simd", "auto",
                         "Vector width of the fused pipeline's contact kernel: the touching grain-grain pairs of a "
                         "non-periodic world go through it 8 (avx512), 4 (avx2) or 2 (sse2) at a time, with the "
                         "scalar pass's bits. auto: avx512 where the CPU has it, else off (the narrower kernels "
                         "were no faster than the scalar pass, docs/md-performance.md); a named width is an upper "
                         "bound (a CPU without it uses the next narrower one); off: scalar only.",
                         {"auto", "avx512", "avx2", "sse2", "off"}));
    r.push_back(typedKey(K::Bool, "md.restart_on_contact_change", "true",
                         "Multi-step (ve, ab*, ab*-am*, d12, t12) and Gear (gpc3, gpc4, gear5) schemes: take an RK4 "
                         "step and restart their history when a contact opens or closes (or will within the step), "
                         "so the history never spans the kink of a force law. Keeps their order through collisions; "
                         "in dense packings, where some contact changes every step, they then cost as much as rk."));
    // [output]
    r.push_back(intKey("output.every", "1", "A row of series.csv every N steps (0: first and last step only).", 0));
    r.push_back(intKey("output.vtk_every", "0", "A VTK snapshot every N steps (0: none).", 0));
    r.push_back(typedKey(K::Bool, "output.vtk_pieces", "false",
                         "Under mpirun: each rank writes its own grains and contacts as pieces "
                         "(grains_XXXXXX_pR.vtp, contacts_XXXXXX_pR.vtp), rank 0 a parallel file per step "
                         "(grains_XXXXXX.pvtp, contacts_XXXXXX.pvtp) that run.pvd lists (docs/distributed.md). "
                         "Serial runs and false: one file per part and step."));
    r.push_back(intKey("output.fclib_every", "0",
                       "CD: every N steps the step's contact problem as an FCLIB local problem with Moreau's "
                       "solution, OUT/fclib/step_XXXXXX.hdf5 (docs/convergence.md; 0: none).",
                       0));
    r.push_back(typedKey(K::Bool, "output.natural_error", "false",
                         "CD: a column natural_error in series.csv, the Siconos/FCLIB error of each step's "
                         "reactions (nan on the first row, before any step; docs/convergence.md; costs about one sweep "
                         "per step)."));
    r.push_back(intKey("output.log_every", "0",
                       "A line of the run log every N steps (step, time, kinetic energy, contacts, iterations, "
                       "residual, wall time, ETA) on stderr and in OUT/log.txt; 0: about 20 lines per run.",
                       0));
    r.push_back(intKey("output.checkpoint_every", "0",
                       "Write OUT/checkpoint every N steps (0: only when the run is stopped by a signal or "
                       "diverges); `moreau run --resume OUT` continues from it with the uninterrupted run's bits. "
                       "Written atomically: a kill at any moment leaves the previous one whole.",
                       0));
    r.push_back(typedKey(K::Text, "output.stress_region", "",
                         "Box 'xmin ymin zmin xmax ymax zmax' that the measurements of series.csv average over "
                         "(stress, pressure, deviator, packing fraction, coordination, fabric; not the wall "
                         "columns): each contact's Love-Weber term weighted by the fraction of its branch vector "
                         "inside, the kinetic term and the coordination from the grains whose centre is inside, "
                         "the packing fraction from the grains' volume inside. min < max on the dimension's axes "
                         "(others ignored); on a periodic axis at most one period long, its images included. "
                         "Empty: the periodic box or the grains' extent."));
    // [guard]
    r.push_back(intKey("guard.contact_steps", "10",
                       "MD: `moreau run` refuses (exit 2) an MD step simulation.dt / md.substeps longer than the "
                       "contact duration over this, the duration estimated from the normal law, md.kn (and md.kt "
                       "for the spring laws) and the smallest effective mass (Hertz laws: at the largest speed the "
                       "start state, gravity and the applied forces give). 0: no check.",
                       0));
    r.push_back(intKey("guard.every", "50",
                       "Steps between the run's checks of overlaps and energy (travel is checked every step); the "
                       "state of the last such check that passed is what the divergence checkpoint holds.",
                       1));
    r.push_back(realKey("guard.max_overlap", "0.5",
                        "Stop (exit 3) when an overlap exceeds this fraction of the smallest grain radius. 0: no "
                        "check.",
                        0.0));
    r.push_back(realKey("guard.max_travel", "1",
                        "Stop (exit 3) when a grain moves farther than this fraction of its radius in one step "
                        "(|v| simulation.dt): contacts are then missed. 0: no check.",
                        0.0));
    r.push_back(typedKey(K::Bool, "guard.energy", "true",
                         "Stop (exit 3) when the grains' energy (kinetic, rotational, elastic and gravitational) "
                         "rises above its start by more than the start state and gravity over the packing's "
                         "height can give. Checked only where nothing else feeds energy in (no applied force, no "
                         "moving wall, gravity not along a periodic axis)."));
    r.push_back(withInfinity(realKey(
        "guard.start_overlap", "0.01",
        "`moreau run` refuses (exit 2, naming the grains or the wall) a start where grains overlap each other or a "
        "wall by more than this fraction of the smallest radius (a settled soft-sphere packing overlaps a little; a "
        "grain behind a wall overlaps it by more than its radius); inf: no check. Grains outside the periodic box "
        "on a periodic axis are always refused.",
        0.0)));
    // [grains]
    r.push_back(typedKey(K::Choice, "grains.source", "chain",
                         "Where the grains come from: the [chain], [lattice], [random] or [packing] section.",
                         {"chain", "lattice", "random", "file"}));
    r.push_back(realKey("grains.density", "1", "Mass per area (disk) or per volume (sphere).", 0.0, true));
    r.push_back(realKey("grains.mass", "0", "If > 0, every grain gets this mass, overriding grains.density.", 0.0));
    r.push_back(typedKey(K::Choice, "grains.inertia", "auto",
                         "Mass and inertia model: disk (mass = density * pi r^2, I = m r^2 / 2) or sphere (mass = "
                         "density * 4/3 pi r^3, I = 2/5 m r^2); auto is disk in 1D and 2D, sphere in 3D. disk in "
                         "3D is an error.",
                         {"auto", "disk", "sphere"}));
    r.push_back(typedKey(K::Vector, "grains.velocity", "0 0 0",
                         "Initial velocity of every grain (components along locked axes are dropped)."));
    // [chain]
    r.push_back(intKey("chain.count", "50", "Number of grains, in a line along +x.", 1, kMaxGrains));
    r.push_back(realKey("chain.radius", "0.5", "Grain radius.", kMinRadius, false, kMaxRadius));
    r.push_back(realKey("chain.spacing", "0", "Gap between neighbouring grains' surfaces.", 0.0));
    r.push_back(typedKey(K::Vector, "chain.origin", "0 0 0", "Centre of the first grain."));
    // [lattice]
    r.push_back(typedKey(K::Choice, "lattice.type", "cubic",
                         "square and hex (triangular: rows along x, sqrt(3)/2 pitch apart along y, odd rows "
                         "shifted by half a pitch) need dimension 2 and lie in the x-y plane at z = 0; cubic needs "
                         "dimension 3.",
                         {"square", "hex", "cubic"}));
    r.push_back(specialKey(Special::Counts, K::Vector, "lattice.counts", "10 10 10",
                           "Grains along x, y and z (z may be left out and is ignored in 2D)."));
    r.push_back(realKey("lattice.radius", "0.5", "Grain radius.", kMinRadius, false, kMaxRadius));
    r.push_back(realKey("lattice.spacing", "0",
                        "Gap between neighbouring grains' surfaces; the pitch is 2 radius + spacing.", 0.0));
    r.push_back(typedKey(K::Vector, "lattice.origin", "0 0 0", "Centre of the first grain (z ignored in 2D)."));
    r.push_back(realKey("lattice.jitter", "0",
                        "Random displacement of each free coordinate, uniform up to jitter * radius, drawn from "
                        "simulation.seed.",
                        0.0));
    // [random]
    r.push_back(intKey("random.count", "1000",
                       "Number of grains, placed one by one, largest first, at random positions without overlap "
                       "(random sequential addition); grain indices follow that order.",
                       1, kMaxGrains));
    r.push_back(realKey("random.r_min", "0.5", "Smallest radius; radii are uniform in [r_min, r_max].", kMinRadius,
                        false, kMaxRadius));
    r.push_back(realKey("random.r_max", "0.5", "Largest radius; must be >= r_min.", kMinRadius, false, kMaxRadius));
    r.push_back(typedKey(K::Vector, "random.box_min", "0 0 0",
                         "Lower corner of the box the grains lie fully inside (2D: z ignored, grains at z = 0; 1D: "
                         "x only)."));
    r.push_back(typedKey(K::Vector, "random.box_max", "10 10 10", "Upper corner of that box."));
    // [packing]
    r.push_back(typedKey(K::Text, "packing.file", "",
                         "Packing file for grains.source = file: rows 'x y z radius' or 'id x y z radius', '#' "
                         "comments. A relative path is taken from the scene file's folder (from the working "
                         "directory for built-in scenes and --set)."));
    // [periodic]
    r.push_back(specialKey(Special::Axes, K::Text, "periodic.axes", "",
                           "Periodic axes, a subset of xyz within the dimension (e.g. x); empty: none."));
    r.push_back(typedKey(K::Vector, "periodic.box_min", "",
                         "Lower corner of the periodic box; required when periodic.axes is set."));
    r.push_back(typedKey(K::Vector, "periodic.box_max", "",
                         "Upper corner of the periodic box; above box_min on the periodic axes."));
    r.push_back(realKey("periodic.shear_rate", "0",
                        "Lees-Edwards simple shear v_x = rate * y (x and y periodic): the image of the cell across +y "
                        "slides along x at rate * L_y."));
    r.push_back(typedKey(K::Vector, "periodic.strain_rate", "0 0 0",
                         "Rate at which each periodic length grows, dL/dt = rate * L, about the box centre "
                         "(negative: compression; only on periodic axes)."));
    r.push_back(specialKey(Special::Axes, K::Text, "periodic.stress_axes", "",
                           "Periodic axes whose strain rate a servo sets to hold periodic.stress (e.g. yz for "
                           "triaxial compression along x, xyz for isotropic); empty: none."));
    r.push_back(typedKey(K::Vector, "periodic.stress", "0 0 0",
                         "Normal stresses (compression positive) the servo holds on periodic.stress_axes."));
    r.push_back(realKey("periodic.stress_gain", "",
                        "Servo: strain rate per unit stress error, d(rate) = gain (sigma_kk - stress_k) (> 0; "
                        "required with stress_axes).",
                        0.0, true));
    r.push_back(withInfinity(realKey("periodic.stress_time", "inf",
                                     "Servo: the integral time tau, rate = gain (e + (1/tau) integral of e dt) with e = "
                                     "sigma_kk - stress_k; it removes the offset rate/gain of the proportional part while "
                                     "the cell must move (inf: proportional only).",
                                     0.0, true)));
    r.push_back(withInfinity(realKey("periodic.max_strain_rate", "inf",
                                     "Servo: the largest strain rate it sets, in magnitude.", 0.0, true)));
    r.push_back(typedKey(K::Bool, "periodic.affine_start", "true",
                         "With a shear or strain rate: the grains start with the mean flow's velocity added to theirs "
                         "(else only the images move and the flow enters from the faces)."));
    return r;
}

/// Keys of one [force.NAME] section, relative ("grains").
std::vector<Rule> forceRules() {
    using K = KeyType;
    std::vector<Rule> r;
    r.push_back(specialKey(Special::GrainList, K::Text, "grains", "last",
                           "Grains the force acts on: first, last, all, or a comma list of indices (0-based in "
                           "generation order; negative ones count from the end). Forces of several sections on one "
                           "grain add up."));
    r.push_back(typedKey(K::Vector, "value", "0 0 0", "Force on each chosen grain until change_time."));
    r.push_back(withInfinity(realKey("change_time", "inf",
                                     "Time at which the force becomes value_after (inf or never: no change).")));
    r.push_back(typedKey(K::Vector, "value_after", "", "Force after change_time (empty: same as value)."));
    return r;
}

/// Keys of one [wall.NAME] section, relative ("type").
std::vector<Rule> wallRules() {
    using K = KeyType;
    std::vector<Rule> r;
    r.push_back(typedKey(K::Choice, "type", "plane", "Shape of the wall.", {"plane", "cylinder"}));
    r.push_back(typedKey(K::Vector, "point", "0 0 0", "A point on the plane, or on the cylinder's axis."));
    r.push_back(typedKey(K::Vector, "normal", "0 0 1",
                         "Plane: normal pointing into the grains' side (normalised; must not be zero)."));
    r.push_back(typedKey(K::Vector, "axis", "0 0 1", "Cylinder: axis direction (normalised; must not be zero)."));
    r.push_back(realKey("radius", "1", "Cylinder radius.", 0.0, true));
    r.push_back(typedKey(K::Choice, "side", "inside", "Cylinder: grains live inside or outside.",
                         {"inside", "outside"}));
    r.push_back(realKey("mu", "", "Coulomb friction of grain-wall contacts (empty: contact.mu).", 0.0));
    r.push_back(realKey("youngs_modulus", "",
                        "Young's modulus E of the wall for md.normal = hertz-material (Pa; empty: md.youngs_modulus).",
                        0.0, true));
    r.push_back(realKey("poisson_ratio", "",
                        "Poisson's ratio of the wall for md.normal = hertz-material (empty: md.poisson_ratio).", -1.0,
                        true, 0.5));
    r.push_back(typedKey(K::Bool, "mobile", "false",
                         "A mobile wall moves along its free axes under contact forces and its force; a fixed wall "
                         "never moves unless given a velocity."));
    r.push_back(realKey("mass", "0", "Mass of a mobile wall (must be > 0 when mobile).", 0.0));
    r.push_back(specialKey(Special::Axes, K::Text, "free", "xyz",
                           "Translation axes a mobile wall may move along, a subset of xyz (e.g. y)."));
    r.push_back(typedKey(K::Vector, "force", "0 0 0", "External force on a mobile wall until change_time."));
    r.push_back(withInfinity(realKey("change_time", "inf",
                                     "Time at which the wall's force becomes force_after (inf or never: no change).")));
    r.push_back(typedKey(K::Vector, "force_after", "", "Force after change_time (empty: same as force)."));
    r.push_back(typedKey(K::Vector, "velocity", "0 0 0",
                         "Fixed wall: a non-zero velocity drives it kinematically (prescribed). Mobile wall: the "
                         "initial velocity along its free axes and a prescribed one along the others (a shear plate "
                         "under a normal force: free = y, force = 0 -F 0, velocity = U 0 0). Servo wall: the part "
                         "along the plane; the servo sets the normal part."));
    r.push_back(realKey("servo_stress", "",
                        "Plane wall: the normal stress (compression positive) a servo holds by moving the wall along "
                        "its normal, v_n = servo_gain (servo_stress - sigma), sigma the grains' normal force on the "
                        "wall and its glued grains over servo_area (empty: no servo; the wall must not be mobile).",
                        0.0));
    r.push_back(realKey("servo_gain", "", "Servo: wall speed per unit stress error (> 0; required with servo_stress).",
                        0.0, true));
    r.push_back(realKey("servo_area", "",
                        "Servo: the area (2D: length) sigma refers to (empty: the periodic box across the normal, "
                        "which must be periodic on the dimension's other axes).",
                        0.0, true));
    r.push_back(withInfinity(realKey("servo_max_speed", "inf", "Servo: the largest normal speed it gives the wall.",
                                     0.0, true)));
    r.push_back(withInfinity(realKey("servo_time", "inf",
                                     "Servo: the integral time tau, v_n = servo_gain (e + (1/tau) integral of e dt) with "
                                     "e = servo_stress - sigma; it removes the offset v_n/gain of the proportional part "
                                     "while the wall must move (inf: proportional only).",
                                     0.0, true)));
    return r;
}

/// Keys of one [group.NAME] section, relative ("grains").
std::vector<Rule> groupRules() {
    using K = KeyType;
    std::vector<Rule> r;
    r.push_back(specialKey(Special::GrainList, K::Text, "grains", "",
                           "Grains of the group: first, last, all, or a comma list of indices and ranges i..j "
                           "(0-based in generation order, both ends included; negative ones count from the end)."));
    r.push_back(specialKey(Special::Box, K::Text, "region", "",
                           "And the grains whose centre lies in this box at the start: 'xmin ymin zmin xmax ymax "
                           "zmax' (empty: none)."));
    r.push_back(typedKey(K::Vector, "velocity", "0 0 0", "Velocity the group's grains keep (not with wall)."));
    r.push_back(typedKey(K::Vector, "spin", "0 0 0", "Angular velocity the group's grains keep (not with wall)."));
    r.push_back(typedKey(K::Text, "wall", "",
                         "Glue the grains to this wall: they move with it, without spin, and the contact forces on "
                         "them act on it (a rough plate; empty: velocity and spin instead)."));
    return r;
}

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

std::string allowedText(const Rule& rule);
std::string checkValue(const Rule& rule, const std::string& key, const std::string& value, const std::string& origin);

Schema makeSchema(const std::vector<KeySpec>& extraKeys) {
    Schema s;
    s.fixed = fixedRules();
    s.dynamic["force"] = forceRules();
    s.dynamic["wall"] = wallRules();
    s.dynamic["group"] = groupRules();
    for (const KeySpec& k : extraKeys) {
        const auto dot = k.key.find('.');
        if (dot == std::string::npos || dot == 0 || dot + 1 == k.key.size() ||
            k.key.find('.', dot + 1) != std::string::npos || !isSectionName(k.key.substr(0, dot)) ||
            !isSectionName(k.key.substr(dot + 1)))
            throw std::logic_error("extra scene key '" + k.key + "' is not of the form section.key");
        if (s.dynamic.count(k.key.substr(0, dot)))
            throw std::logic_error("extra scene key '" + k.key + "' uses a built-in dynamic section");
        if (k.type == KeyType::Choice && k.choices.empty())
            throw std::logic_error("extra scene key '" + k.key + "' is a choice without choices");
        Rule r;
        r.spec = k;
        s.fixed.push_back(r);
    }
    for (std::size_t i = 0; i < s.fixed.size(); ++i) {
        if (!s.index.emplace(s.fixed[i].spec.key, i).second)
            throw std::logic_error("scene key '" + s.fixed[i].spec.key + "' is declared twice");
    }
    // Defaults of extra keys must pass their own validation (a programming error otherwise).
    for (std::size_t i = s.fixed.size() - extraKeys.size(); i < s.fixed.size(); ++i) {
        try {
            checkValue(s.fixed[i], s.fixed[i].spec.key, s.fixed[i].spec.defaultValue, "extra key default");
        } catch (const InputError& e) {
            throw std::logic_error(e.what());
        }
    }
    return s;
}

// ---------------------------------------------------------------------------
// Validation of one value

std::string rangeText(const KeySpec& s, const char* noun) {
    // Integer bounds read better without an exponent (1e8 → 100000000).
    const bool integer = s.type == KeyType::Integer;
    auto num = [integer](double x) {
        return integer && std::abs(x) < 1e15 ? std::to_string(static_cast<long long>(x)) : formatNumber(x);
    };
    std::string t = noun;
    const bool hasMin = s.min > -kInf, hasMax = s.max < kInf;
    if (hasMin && hasMax)
        t += std::string(" in ") + (s.minExclusive ? "(" : "[") + num(s.min) + ", " + num(s.max) + "]";
    else if (hasMin)
        t += (s.minExclusive ? " > " : " >= ") + num(s.min);
    else if (hasMax)
        t += " <= " + num(s.max);
    return t;
}

std::string allowedText(const Rule& rule) {
    const KeySpec& s = rule.spec;
    std::string t;
    switch (rule.special) {
    case Special::Axes: t = "a subset of xyz"; break;
    case Special::GrainList: t = "first, last, all or a comma list of grain indices and ranges i..j"; break;
    case Special::Box: t = "six numbers 'xmin ymin zmin xmax ymax zmax'"; break;
    case Special::Counts: t = "two or three positive integers 'nx ny [nz]'"; break;
    case Special::None:
        switch (s.type) {
        case KeyType::Real: t = rangeText(s, "real"); break;
        case KeyType::Integer: t = rangeText(s, "integer"); break;
        case KeyType::Bool: t = "true or false (also 1/0, yes/no, on/off)"; break;
        case KeyType::Choice: {
            for (std::size_t i = 0; i < s.choices.size(); ++i) t += (i ? "|" : "") + s.choices[i];
            break;
        }
        case KeyType::Vector: t = "three numbers 'x y z'"; break;
        case KeyType::Text: t = "text"; break;
        }
        break;
    }
    if (rule.allowInfinity) t += ", or inf/never";
    if (s.defaultValue.empty() && s.type != KeyType::Text) t += ", or empty";
    return t;
}

[[noreturn]] void failValue(const std::string& origin, const std::string& key, const std::string& value,
                            const std::string& what, const std::string& allowed) {
    throw InputError(origin + ": key '" + shown(key) + "': '" + shown(value, 200) + "' " + what + " (allowed: " + allowed + ")");
}

bool inRange(const KeySpec& s, double x) {
    if (s.minExclusive ? !(x > s.min) : !(x >= s.min)) return false;
    return x <= s.max;
}

/// Checks `value` against the rule; returns the text stored in Scene::values
/// (booleans as true/false, vectors space separated, otherwise as given).
std::string checkValue(const Rule& rule, const std::string& key, const std::string& value, const std::string& origin) {
    const KeySpec& s = rule.spec;
    // An empty default means "unset, derived from another key" and may be restated.
    if (value.empty() && s.defaultValue.empty()) return value;
    auto fail = [&](const std::string& what) { failValue(origin, key, value, what, allowedText(rule)); };

    switch (rule.special) {
    case Special::Axes: {
        std::set<char> seen;
        for (char c : value)
            if ((c != 'x' && c != 'y' && c != 'z') || !seen.insert(c).second) fail("is not a subset of xyz");
        return value;
    }
    case Special::GrainList: {
        if (trim(value).empty()) return value;
        for (const std::string& item : splitList(value)) {
            if (item == "first" || item == "last" || item == "all") continue;
            const auto range = item.find("..");
            for (const std::string& end : range == std::string::npos
                                               ? std::vector<std::string>{item}
                                               : std::vector<std::string>{trim(item.substr(0, range)),
                                                                          trim(item.substr(range + 2))}) {
                const auto n = parseInteger(end);
                if (!n || !n->exact) fail("is not a grain selection");
            }
        }
        return value;
    }
    case Special::Box: {
        const auto words = splitWords(value, true);
        if (value.empty()) return value;
        if (words.size() != 6) fail("is not six numbers");
        std::string canonical;
        for (const std::string& w : words) {
            const auto x = parseDouble(w);
            if (!x || !std::isfinite(*x)) fail("is not six finite numbers");
            canonical += (canonical.empty() ? "" : " ") + formatNumber(*x);
        }
        return canonical;
    }
    case Special::Counts: {
        const auto words = splitWords(value, true);
        if (words.size() < 2 || words.size() > 3) fail("is not two or three counts");
        std::string canonical;
        for (const std::string& w : words) {
            const auto n = parseInteger(w);
            if (!n || !n->exact || *n->exact < 1 || n->approx > kMaxGrains) fail("is not a list of positive integers");
            if (!canonical.empty()) canonical += ' ';
            canonical += std::to_string(*n->exact);
        }
        return canonical;
    }
    case Special::None: break;
    }

    switch (s.type) {
    case KeyType::Real: {
        if (isInfinityWord(value)) {
            if (rule.allowInfinity) return "inf";
            fail("is not a finite number");
        }
        const auto x = parseDouble(value);
        if (!x || std::isnan(*x)) fail("is not a number");
        if (!std::isfinite(*x)) fail("is not a finite number");
        if (!inRange(s, *x)) fail("is out of range");
        return value;
    }
    case KeyType::Integer: {
        const auto n = parseInteger(value);
        if (!n) fail("is not an integer");
        if (!inRange(s, n->approx) || (!n->exact && !n->exactUnsigned)) fail("is out of range");
        return value;
    }
    case KeyType::Bool: {
        const auto b = parseBool(value);
        if (!b) fail("is not a boolean");
        return *b ? "true" : "false";
    }
    case KeyType::Choice:
        if (std::find(s.choices.begin(), s.choices.end(), value) == s.choices.end()) fail("is not allowed");
        return value;
    case KeyType::Vector: {
        const auto v = parseVector(value);
        if (!v) fail("is not a vector of three numbers");
        std::string canonical;
        for (const std::string& w : splitWords(value, true)) canonical += (canonical.empty() ? "" : " ") + w;
        return canonical;
    }
    case KeyType::Text: return value;
    }
    return value;
}

// ---------------------------------------------------------------------------
// Key lookup

struct Resolved {
    const Rule* rule = nullptr;
    std::string dynamicSection;  ///< "force" / "wall" for dynamic keys
    std::string name;            ///< NAME of [force.NAME]
};

/// Words longer than this get no suggestion: no key is that long, and the
/// distance costs the product of the lengths.
constexpr std::size_t kMaxSuggested = 100;

/// The candidate nearest to `word` in edit distance, if within max(2, size / 4); else "".
template <class Candidates>
std::string closest(const std::string& word, const Candidates& candidates) {
    std::string best;
    if (word.size() > kMaxSuggested) return best;
    std::size_t bestDistance = std::max<std::size_t>(2, word.size() / 4) + 1;
    for (const std::string& c : candidates) {
        // The distance is at least the difference of the lengths.
        const std::size_t lengthGap = c.size() > word.size() ? c.size() - word.size() : word.size() - c.size();
        if (lengthGap >= bestDistance) continue;
        const std::size_t d = editDistance(word, c);
        if (d < bestDistance) {
            bestDistance = d;
            best = c;
        }
    }
    return best;
}

std::string suggestionFor(const Schema& schema, const std::string& key) {
    if (key.size() > kMaxSuggested) return "";
    std::vector<std::string> candidates;
    for (const Rule& r : schema.fixed) candidates.push_back(r.spec.key);
    // Dynamic keys: complete with the NAME the user wrote, if any.
    for (const auto& [section, rules] : schema.dynamic) {
        std::string name = "NAME";
        if (key.rfind(section + ".", 0) == 0) {
            const std::string rest = key.substr(section.size() + 1);
            const auto dot = rest.rfind('.');
            if (dot != std::string::npos) name = rest.substr(0, dot);
        }
        for (const Rule& r : rules) candidates.push_back(section + "." + name + "." + r.spec.key);
    }
    // A key without a section, e.g. `iterations` above the first header.
    if (key.find('.') == std::string::npos) {
        for (const std::string& c : candidates)
            if (c.size() > key.size() && c.compare(c.size() - key.size() - 1, std::string::npos, "." + key) == 0)
                return c;
    }
    return closest(key, candidates);
}

void appendKey(std::string& out, const std::string& key, const Rule& r);

[[noreturn]] void failUnknown(const Schema& schema, const std::string& key, const std::string& origin) {
    const std::string suggestion = suggestionFor(schema, key);
    if (!suggestion.empty())
        throw InputError(origin + ": unknown key '" + shown(key) + "' (did you mean '" + suggestion + "'?)");
    // The keys of an experiment or bench are its own: list them rather than
    // point at `moreau run --help`, which does not show them.
    const auto dot = key.find('.');
    const std::string section = dot == std::string::npos ? "" : key.substr(0, dot);
    if (section == "experiment" || section == "bench") {
        std::string text, allowed;
        for (const Rule& r : schema.fixed)
            if (r.spec.key.rfind(section + ".", 0) == 0) {
                appendKey(text, r.spec.key, r);
                allowed += (allowed.empty() ? "" : ", ") + r.spec.key;
            }
        if (key == section + ".key_reference")
            throw KeyReferenceRequest(text.empty() ? "(no " + section + ".* keys)\n" : text);
        throw InputError(origin + ": unknown key '" + shown(key) + "' (" +
                         (allowed.empty() ? "this one takes no " + section + ".* keys" : "allowed: " + allowed) + ")");
    }
    throw InputError(origin + ": unknown key '" + shown(key) + "' (see 'moreau run --help' for the keys)");
}

[[noreturn]] void failUnnamed(const std::string& origin, const std::string& what, const std::string& section) {
    throw InputError(origin + ": " + what + " needs a named section: [" + section + ".NAME] (e.g. [" + section +
                     (section == "force" ? ".push" : section == "group" ? ".plate" : ".floor") + "]), NAME of letters, digits and '_'");
}

[[noreturn]] void failSectionName(const std::string& origin, const std::string& what, const std::string& section,
                                  const std::string& name) {
    throw InputError(origin + ": " + what + "bad section name '" + section + "." + shown(name) + "' (allowed: " + section +
                     ".NAME, NAME of letters, digits and '_')");
}

/// Checks a `[header]` of the file; returns (dynamic section, NAME) for
/// [force.NAME], [wall.NAME] and [group.NAME], nothing for fixed sections.
std::optional<std::pair<std::string, std::string>> checkSection(const Schema& schema, const std::string& section,
                                                                const std::string& origin) {
    std::set<std::string> fixedSections;
    for (const Rule& r : schema.fixed) fixedSections.insert(r.spec.key.substr(0, r.spec.key.find('.')));
    if (fixedSections.count(section)) return std::nullopt;
    const auto dot = section.find('.');
    const std::string head = section.substr(0, dot);
    if (schema.dynamic.count(head)) {
        if (dot == std::string::npos) failUnnamed(origin, "section [" + shown(section) + "]", head);
        const std::string name = section.substr(dot + 1);
        if (!isSectionName(name)) failSectionName(origin, "", head, name);
        return std::make_pair(head, name);
    }
    const std::string best = closest(section, fixedSections);
    throw InputError(origin + ": unknown section [" + shown(section) + "]" +
                     (best.empty() ? std::string(" (see 'moreau run --help' for the sections)")
                                   : " (did you mean [" + best + "]?)"));
}

Resolved resolveKey(const Schema& schema, const std::string& key, const std::string& origin) {
    Resolved res;
    if ((res.rule = schema.findFixed(key))) return res;
    const auto dot = key.find('.');
    if (dot != std::string::npos) {
        const std::string section = key.substr(0, dot);
        const auto dyn = schema.dynamic.find(section);
        if (dyn != schema.dynamic.end()) {
            const std::string rest = key.substr(dot + 1);
            const auto last = rest.rfind('.');
            if (last == std::string::npos) failUnnamed(origin, "key '" + shown(key) + "'", section);
            const std::string name = rest.substr(0, last);
            if (!isSectionName(name)) failSectionName(origin, "key '" + shown(key) + "': ", section, name);
            res.rule = Schema::findIn(dyn->second, rest.substr(last + 1));
            if (!res.rule) failUnknown(schema, key, origin);
            res.dynamicSection = section;
            res.name = name;
            return res;
        }
    }
    failUnknown(schema, key, origin);
}

// ---------------------------------------------------------------------------
// Collected values

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

std::array<bool, 3> axesOf(const std::string& text) {
    return {text.find('x') != std::string::npos, text.find('y') != std::string::npos,
            text.find('z') != std::string::npos};
}

/// "wall.a .normal" → "wall.a.normal": Boost keeps blanks inside "[ wall.a ]".
std::string normaliseKey(const std::string& key) {
    std::string out;
    std::size_t start = 0;
    while (true) {
        const std::size_t dot = key.find('.', start);
        out += trim(std::string_view(key).substr(start, dot == std::string::npos ? std::string::npos : dot - start));
        if (dot == std::string::npos) break;
        out += '.';
        start = dot + 1;
    }
    return out;
}

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
IniContent parseIni(std::string_view text, const std::string& origin) {
    if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
    IniContent ini;
    std::string section;
    long lineNumber = 0;
    while (!text.empty()) {
        ++lineNumber;
        const std::size_t end = text.find('\n');
        std::string_view line = text.substr(0, end);
        text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
        if (const auto hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
        const std::string t = trim(line);
        if (t.empty()) continue;
        const std::string where = origin + ":" + std::to_string(lineNumber);
        if (t.front() == '[') {
            if (t.back() != ']') throw InputError(where + ": '" + shown(t) + "' is not a section header (allowed: [name])");
            section = normaliseKey(t.substr(1, t.size() - 2));
            if (section.empty()) throw InputError(where + ": empty section header '" + shown(t) + "'");
            ini.sections.emplace_back(section, lineNumber);
            continue;
        }
        const std::size_t eq = t.find('=');
        if (eq == std::string::npos)
            throw InputError(where + ": '" + shown(t) + "' is neither a [section] header nor a 'key = value' line");
        const std::string key = trim(std::string_view(t).substr(0, eq));
        if (key.empty()) throw InputError(where + ": '" + shown(t) + "' has no key before '='");
        ini.entries.push_back({normaliseKey(section.empty() ? key : section + "." + key),
                               unquote(trim(std::string_view(t).substr(eq + 1))), lineNumber});
    }
    return ini;
}

// ---------------------------------------------------------------------------
// Building the scene

/// Adds schedule b to a; both must switch at the same time unless one is constant.
bool addSchedule(ForceSchedule& a, const ForceSchedule& b) {
    if (std::isinf(b.switchTime)) {
        a.before += b.before;
        a.after += b.before;
    } else if (std::isinf(a.switchTime)) {
        a.after = a.before + b.after;
        a.before += b.before;
        a.switchTime = b.switchTime;
    } else if (a.switchTime == b.switchTime) {
        a.before += b.before;
        a.after += b.after;
    } else {
        return false;
    }
    return true;
}

std::vector<std::size_t> pickGrains(const Values& v, const std::string& key, std::size_t n) {
    std::vector<std::size_t> picked;
    if (trim(v.text(key)).empty()) return picked;
    const auto count = static_cast<long long>(n);
    auto index = [&](const std::string& text) {
        long long i = *parseInteger(text)->exact;
        if (i < 0) i += count;
        if (i < 0 || i >= count)
            v.fail(key, "selects a grain out of range",
                   "first, last, all, indices or ranges i..j in [" + std::to_string(-count) + ", " +
                       std::to_string(count - 1) + "] for " + std::to_string(n) + " grains");
        return static_cast<std::size_t>(i);
    };
    for (const std::string& item : splitList(v.text(key))) {
        if (item == "all") {
            for (std::size_t i = 0; i < n; ++i) picked.push_back(i);
        } else if (item == "first") {
            picked.push_back(0);
        } else if (item == "last") {
            picked.push_back(n - 1);
        } else if (const auto range = item.find(".."); range != std::string::npos) {
            const std::size_t lo = index(trim(item.substr(0, range))), hi = index(trim(item.substr(range + 2)));
            if (lo > hi) v.fail(key, "has a range i..j with i after j", "ranges i..j with i <= j (both included)");
            for (std::size_t i = lo; i <= hi; ++i) picked.push_back(i);
        } else {
            picked.push_back(index(item));
        }
    }
    std::sort(picked.begin(), picked.end());
    picked.erase(std::unique(picked.begin(), picked.end()), picked.end());
    return picked;
}

/// The machine's physical memory in bytes (0 if unknown).
double machineBytes() {
    return static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGESIZE));
}

/// Refuses (on `key`) a grain count whose run would not fit in this
/// machine's memory: about 1.5 KiB per grain (measured: 1.1-1.2 KiB at 10^5
/// grains in CD, docs/md-performance.md), against the physical memory.
void checkGrainMemory(const Values& v, const std::string& key, double grains) {
    constexpr double kBytesPerGrain = 1536.0;
    const double machine = machineBytes();
    const double need = grains * kBytesPerGrain;
    if (machine > 0.0 && need > 0.8 * machine) {
        char text[160];
        std::snprintf(text, sizeof text, "needs about %.3g GB for %.3g grains, more than this machine's %.3g GB allow",
                      need / 1e9, grains, machine / 1e9);
        v.fail(key, text, "fewer grains");
    }
}

/// The key that sets the grains' places: their count, or the packing file.
std::string grainCountKey(const Values& v) {
    const std::string& source = v.text("grains.source");
    return source == "file" ? "packing.file" : source == "chain" ? "chain.count" : source == "lattice" ? "lattice.counts" : "random.count";
}

/// Refuses grains whose radius lies outside [kMinRadius, kMaxRadius] (packing
/// files; the radius keys have that range) or whose mass or moment of inertia
/// (1D: mass only) is not a normal positive double: mass 0 would be an
/// infinite inverse mass, and the first step's NaN would be reported as a
/// divergence. The allowed density (or mass) follows from the radius.
void checkGrainMasses(const Values& v, const World& world, GrainShape shape) {
    const bool rotates = world.dimension > 1;
    for (std::size_t i = 0; i < world.numGrains; ++i) {
        const double r = world.radius[i];
        if (!(r >= kMinRadius && r <= kMaxRadius)) {
            char what[120];
            std::snprintf(what, sizeof what, "gives grain %zu a radius of %g", i, r);
            v.fail(grainCountKey(v), what,
                   "radii in [" + formatNumber(kMinRadius) + ", " + formatNumber(kMaxRadius) + "]");
        }
        const double m = world.mass[i], inertia = world.inertia[i];
        const bool massOk = std::isnormal(m) && m > 0.0;
        if (massOk && (!rotates || (std::isnormal(inertia) && inertia > 0.0))) continue;
        // m = rho c r^p (or fixed) and I = k m r^2 between the smallest and the largest normal double.
        const double tiny = std::numeric_limits<double>::min(), huge = std::numeric_limits<double>::max();
        const bool disk = shape == GrainShape::Disk;
        const double c = disk ? M_PI : 4.0 / 3.0 * M_PI, k = disk ? 0.5 : 0.4;
        const bool fixed = v.real("grains.mass") > 0.0;
        const double perUnit = fixed ? 1.0 : c * std::pow(r, disk ? 2.0 : 3.0);  // mass per unit of the key
        double lo = tiny / perUnit, hi = std::min(huge, huge / perUnit);
        if (rotates) {
            lo = std::max(lo, tiny / (perUnit * k * r * r));
            hi = std::min(hi, huge / (perUnit * k * r * r));
        }
        const std::string key = fixed ? "grains.mass" : "grains.density";
        char what[160], allowed[200];
        std::snprintf(what, sizeof what, "gives grain %zu (radius %g) a %s of %g", i, r,
                      massOk ? "moment of inertia" : "mass", massOk ? inertia : m);
        std::snprintf(allowed, sizeof allowed,
                      "%s in about [%.3g, %.3g] for this radius, so that mass%s are normal positive numbers",
                      key.c_str(), lo, hi, rotates ? " and moment of inertia" : "");
        v.fail(key, what, allowed);
    }
}

/// Refuses, before anything detects contacts, grains piled so densely that
/// their contacts cannot be held: 10^6 grains at one point are 5e11 pairs,
/// which the cell grid would try to store (an uncaught std::bad_alloc after a
/// minute). Counted from below in O(n log n): two grains whose centres lie in
/// one cube of side 2 r_min / sqrt(3) are closer than 2 r_min, so they
/// overlap, a contact whatever the margin. A packing that is not piled up
/// has next to none such pairs.
void checkCrowding(const Values& v, const World& world) {
    const std::size_t n = world.numGrains;
    if (n < 2) return;
    double rMin = kInf;
    for (std::size_t i = 0; i < n; ++i) rMin = std::min(rMin, world.radius[i]);
    // 0.999: the cells' coordinates below 2^40 are rounded by less than 2^-12 of a cell.
    const double side = 0.999 * 2.0 * rMin / std::sqrt(3.0);
    if (!(side > 0.0) || !std::isfinite(side)) return;
    std::vector<std::array<double, 3>> cells;
    cells.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
        std::array<double, 3> c{};
        bool ok = true;
        for (int a = 0; a < 3; ++a) {
            c[static_cast<std::size_t>(a)] = std::floor(world.x[i][a] / side);
            ok = ok && std::abs(c[static_cast<std::size_t>(a)]) < 0x1p40;
        }
        if (ok) cells.push_back(c);
    }
    std::sort(cells.begin(), cells.end());
    double pairs = 0.0;
    for (std::size_t b = 0, e = 0; b < cells.size(); b = e) {
        for (e = b + 1; e < cells.size() && cells[e] == cells[b]; ++e) {
        }
        const auto k = static_cast<double>(e - b);
        pairs += 0.5 * k * (k - 1.0);
    }
    // A contact costs at least its Contact (80 bytes) and its pair in the
    // Verlet list (8 bytes) while it is detected.
    constexpr double kBytesPerContact = 88.0;
    const double machine = machineBytes();
    if (machine > 0.0 && pairs * kBytesPerContact > 0.8 * machine) {
        char what[240], allowed[160];
        std::snprintf(what, sizeof what,
                      "piles up %zu grains so that at least %.3g pairs overlap: their contacts need about %.3g GB, "
                      "more than this machine's %.3g GB allow",
                      n, pairs, pairs * kBytesPerContact / 1e9, machine / 1e9);
        std::snprintf(allowed, sizeof allowed, "grains that overlap little, here at most about %.3g overlapping pairs",
                      0.8 * machine / kBytesPerContact);
        v.fail(grainCountKey(v), what, allowed);
    }
}

std::vector<GrainSpec> generateGrains(const Values& v, int dimension, std::uint64_t seed,
                                      const std::filesystem::path& sceneDir) {
    const std::string& source = v.text("grains.source");
    if (source == "chain") {
        checkGrainMemory(v, "chain.count", static_cast<double>(v.integer("chain.count")));
        return makeChain(static_cast<std::size_t>(v.integer("chain.count")), v.real("chain.radius"),
                         v.real("chain.spacing"), v.vec("chain.origin"));
    }
    if (source == "lattice") {
        LatticeParams p;
        const std::string& type = v.text("lattice.type");
        p.type = type == "square" ? LatticeType::Square : type == "hex" ? LatticeType::Hex : LatticeType::Cubic;
        if (p.type == LatticeType::Cubic && dimension != 3)
            v.fail("lattice.type", "needs simulation.dimension = 3",
                   dimension == 2 ? "square|hex in 2D" : "none in 1D; use grains.source = chain");
        if (p.type != LatticeType::Cubic && dimension != 2)
            v.fail("lattice.type", "needs simulation.dimension = 2",
                   dimension == 3 ? "cubic in 3D" : "none in 1D; use grains.source = chain");
        const auto words = splitWords(v.text("lattice.counts"), true);
        p.counts = {1, 1, 1};
        for (std::size_t k = 0; k < words.size(); ++k)
            p.counts[k] = static_cast<std::size_t>(*parseInteger(words[k])->exact);
        if (p.type == LatticeType::Cubic && words.size() < 3)
            v.fail("lattice.counts", "gives no z count", "three positive integers 'nx ny nz' for cubic");
        double total = static_cast<double>(p.counts[0]) * static_cast<double>(p.counts[1]) *
                       (p.type == LatticeType::Cubic ? static_cast<double>(p.counts[2]) : 1.0);
        if (total > kMaxGrains) v.fail("lattice.counts", "gives too many grains", "at most 1e8 grains");
        checkGrainMemory(v, "lattice.counts", total);
        p.radius = v.real("lattice.radius");
        p.spacing = v.real("lattice.spacing");
        p.origin = v.vec("lattice.origin");
        p.jitter = v.real("lattice.jitter");
        p.seed = seed;
        return makeLattice(p);
    }
    if (source == "random") {
        checkGrainMemory(v, "random.count", static_cast<double>(v.integer("random.count")));
        RandomPackingParams p;
        p.count = static_cast<std::size_t>(v.integer("random.count"));
        p.rMin = v.real("random.r_min");
        p.rMax = v.real("random.r_max");
        if (p.rMax < p.rMin)
            v.fail("random.r_max", "is below random.r_min = " + v.text("random.r_min"), "real >= random.r_min");
        p.boxMin = v.vec("random.box_min");
        p.boxMax = v.vec("random.box_max");
        for (int a = 0; a < dimension; ++a)
            if (!(p.boxMax[a] - p.boxMin[a] >= 2.0 * p.rMax))
                v.fail("random.box_max",
                       std::string("leaves the box narrower than a grain diameter along ") +
                           static_cast<char>('x' + a),
                       "box_max >= box_min + 2 r_max on the axes of the dimension");
        p.dimension = dimension;
        p.seed = seed;
        try {
            return makeRandomLoosePacking(p);
        } catch (const InputError& e) {
            std::string why = e.what();
            const std::string prefix = "random packing: ";
            if (why.rfind(prefix, 0) == 0) why.erase(0, prefix.size());
            v.fail("random.count", "is too many: " + why, "fewer grains, or a larger random.box_min/box_max");
        }
    }
    // source == "file"
    const std::string& file = v.text("packing.file");
    if (file.empty())
        v.fail("packing.file", "is empty", "a packing file path (required when grains.source = file)");
    std::filesystem::path path(file);
    if (path.is_relative() && v.at("packing.file").origin != "--set") path = sceneDir / path;
    return readPackingFile(path.lexically_normal().string());
}

void buildWorld(Scene& scene, const Values& v, const std::set<std::string>& forceNames,
                const std::set<std::string>& wallNames, const std::set<std::string>& groupNames,
                const std::filesystem::path& sceneDir) {
    World& world = scene.world;
    const int dimension = v.smallInteger("simulation.dimension");
    world.dimension = dimension;
    world.gravity = v.vec("simulation.gravity");
    world.muGrain = v.real("contact.mu");

    // Periodic box.
    const std::array<bool, 3> periodic = axesOf(v.text("periodic.axes"));
    for (int a = dimension; a < 3; ++a)
        if (periodic[a])
            v.fail("periodic.axes", "names an axis outside the dimension",
                   dimension == 1 ? "x" : "a subset of xy in 2D");
    if (periodic[0] || periodic[1] || periodic[2]) {
        for (const char* key : {"periodic.box_min", "periodic.box_max"})
            if (v.empty(key)) v.fail(key, "is empty", "three numbers 'x y z' (required when periodic.axes is set)");
        world.boxMin = v.vec("periodic.box_min");
        world.boxMax = v.vec("periodic.box_max");
        for (int a = 0; a < 3; ++a)
            if (periodic[a] && !(world.boxMax[a] > world.boxMin[a]))
                v.fail("periodic.box_max", std::string("is not above periodic.box_min along ") + static_cast<char>('x' + a),
                       "box_max > box_min on the periodic axes");
        world.periodic = periodic;
    }
    // A deforming cell.
    world.shearRate = v.real("periodic.shear_rate");
    world.strainRate = v.vec("periodic.strain_rate");
    if (world.shearRate != 0.0 && !(periodic[0] && periodic[1]))
        v.fail("periodic.shear_rate", "shears a cell that is not periodic along x and y",
               "0 unless periodic.axes holds x and y");
    for (int a = 0; a < 3; ++a)
        if (world.strainRate[a] != 0.0 && !periodic[static_cast<std::size_t>(a)])
            v.fail("periodic.strain_rate", std::string("deforms the axis ") + static_cast<char>('x' + a) + ", which is not periodic",
                   "rates on the periodic axes only");

    // Grains.
    GrainShape shape = dimension == 3 ? GrainShape::Sphere : GrainShape::Disk;
    const std::string& inertia = v.text("grains.inertia");
    if (inertia == "disk") {
        if (dimension == 3) v.fail("grains.inertia", "is not possible in 3D", "auto|sphere in 3D");
        shape = GrainShape::Disk;
    } else if (inertia == "sphere") {
        shape = GrainShape::Sphere;
    }
    const std::vector<GrainSpec> grains = generateGrains(v, dimension, v.unsignedInteger("simulation.seed"), sceneDir);
    addGrains(world, grains, shape, v.real("grains.density"), v.real("grains.mass"));
    checkGrainMasses(v, world, shape);
    checkCrowding(v, world);
    const Vec3 velocity = cwise(v.vec("grains.velocity"), world.translationMask());
    for (std::size_t i = 0; i < world.numGrains; ++i) world.v[i] = velocity;
    if (world.deforming() && v.boolean("periodic.affine_start")) {
        // The mean flow about the box centre (World::strainRate, shearRate).
        const Vec3 c = 0.5 * (world.boxMin + world.boxMax);
        for (std::size_t i = 0; i < world.numGrains; ++i) {
            const Vec3 r = world.x[i] - c;
            world.v[i] += world.strainRate.cwiseProduct(r) + Vec3(world.shearRate * r[1], 0.0, 0.0);
        }
    }

    // Forces on grains.
    std::vector<std::string> forceOwner(world.numGrains);
    for (const std::string& name : forceNames) {
        const std::string p = "force." + name + ".";
        ForceSchedule s;
        s.before = v.vec(p + "value");
        s.after = v.vec(p + "value_after");
        s.switchTime = v.real(p + "change_time");
        const std::vector<std::size_t> pushed = pickGrains(v, p + "grains", world.numGrains);
        if (pushed.empty()) v.fail(p + "grains", "selects no grain", "first, last, all, indices or ranges i..j");
        for (std::size_t i : pushed) {
            if (!addSchedule(world.forceSchedule(static_cast<BodyId>(i)), s))
                v.fail(p + "change_time", "differs from that of [force." + forceOwner[i] + "] on grain " + std::to_string(i),
                       "one change_time per grain (or inf)");
            if (!std::isinf(s.switchTime) || forceOwner[i].empty()) forceOwner[i] = name;
        }
    }

    // Walls, after all grains, in name order.
    for (const std::string& name : wallNames) {
        const std::string p = "wall." + name + ".";
        WallShape shape;
        const bool plane = v.text(p + "type") == "plane";
        shape.kind = plane ? ShapeKind::Plane : ShapeKind::Cylinder;
        const std::string dirKey = p + (plane ? "normal" : "axis");
        const Vec3 direction = v.vec(dirKey);
        if (!(direction.norm() > 0.0)) v.fail(dirKey, "is the zero vector", "a non-zero direction");
        // A wall must face the grains within their axes: a plane's normal in
        // them, a 2D cylinder's axis along z (its section is a circle).
        const char* axesText = dimension == 1 ? "x" : "the x-y plane";
        if (plane) {
            for (int a = dimension; a < 3; ++a)
                if (direction[a] != 0.0)
                    v.fail(dirKey, std::string("has a component along the locked axis ") + static_cast<char>('x' + a),
                           std::string("a normal along ") + axesText + " for simulation.dimension = " +
                               std::to_string(dimension));
        } else if (dimension == 1) {
            v.fail(p + "type", "is a cylinder in 1D", "plane in 1D");
        } else if (dimension == 2 && (direction[0] != 0.0 || direction[1] != 0.0)) {
            v.fail(dirKey, "is not along z", "0 0 1 in 2D: the cylinder's section in the x-y plane is a circle");
        }
        shape.direction = direction.normalized();
        shape.radius = plane ? 0.0 : v.real(p + "radius");
        shape.inside = v.text(p + "side") == "inside";
        shape.mu = v.real(p + "mu");

        const bool mobile = v.boolean(p + "mobile");
        const double mass = v.real(p + "mass");
        const std::array<bool, 3> free = axesOf(v.text(p + "free"));
        const Vec3 wallVelocity = v.vec(p + "velocity");
        if (mobile) {
            if (!(mass > 0.0)) v.fail(p + "mass", "is not > 0 for a mobile wall", "real > 0 when mobile = true");
            bool anyFree = false;
            for (int a = 0; a < dimension; ++a) anyFree = anyFree || free[a];
            const char* freeText =
                dimension == 1 ? "x" : dimension == 2 ? "a non-empty subset of xy" : "a non-empty subset of xyz";
            if (!anyFree) v.fail(p + "free", "leaves a mobile wall no axis to move along", freeText);
            for (int a = dimension; a < 3; ++a)
                if (free[a])
                    v.fail(p + "free", std::string("frees the locked axis ") + static_cast<char>('x' + a), freeText);
        }
        for (int a = dimension; a < 3; ++a)
            if (wallVelocity[a] != 0.0)
                v.fail(p + "velocity",
                       std::string("moves the wall along the locked axis ") + static_cast<char>('x' + a),
                       std::string("a velocity along ") + axesText);
        ForceSchedule force;
        force.before = v.vec(p + "force");
        force.after = v.vec(p + "force_after");
        force.switchTime = v.real(p + "change_time");
        if (!mobile && (force.before.norm() > 0.0 || (!std::isinf(force.switchTime) && force.after.norm() > 0.0)))
            v.fail(p + "force", "acts on a fixed wall", "0 0 0 unless mobile = true");

        const BodyId id = world.addWall(name, shape, v.vec(p + "point"), mobile, mass, free);
        const auto b = static_cast<std::size_t>(id);
        if (force.before.norm() > 0.0 || force.after.norm() > 0.0) world.forceSchedule(static_cast<BodyId>(b)) = force;
        if (mobile) {
            // Free axes: the initial velocity; the others: driven at it.
            world.v[b] = cwise(wallVelocity, world.translationMask());
            for (int a = 0; a < 3; ++a)
                if (world.invMass[b][a] == 0.0 && world.v[b][a] != 0.0) world.prescribed[b] = true;
        } else if (wallVelocity.norm() > 0.0) {
            world.v[b] = cwise(wallVelocity, world.translationMask());
            world.prescribed[b] = true;
        }
    }

    // Grain groups: kinematic grains, on their own or glued to a wall.
    std::vector<std::string> groupOf(world.numGrains);
    std::vector<std::pair<std::size_t, std::pair<std::string, BodyId>>> members;  // grain, (group, wall)
    for (const std::string& name : groupNames) {
        const std::string p = "group." + name + ".";
        std::vector<std::size_t> picked = pickGrains(v, p + "grains", world.numGrains);
        if (!v.empty(p + "region")) {
            std::vector<double> box;
            for (const std::string& w : splitWords(v.text(p + "region"), true)) box.push_back(*parseDouble(w));
            for (int a = 0; a < dimension; ++a)
                if (!(box[static_cast<std::size_t>(a)] < box[static_cast<std::size_t>(a) + 3]))
                    v.fail(p + "region", std::string("is empty along ") + static_cast<char>('x' + a),
                           "'xmin ymin zmin xmax ymax zmax' with min < max on the dimension's axes");
            for (std::size_t i = 0; i < world.numGrains; ++i) {
                bool inside = true;
                for (int a = 0; a < dimension; ++a)
                    inside = inside && world.x[i][a] >= box[static_cast<std::size_t>(a)] &&
                             world.x[i][a] <= box[static_cast<std::size_t>(a) + 3];
                if (inside) picked.push_back(i);
            }
        }
        std::sort(picked.begin(), picked.end());
        picked.erase(std::unique(picked.begin(), picked.end()), picked.end());
        if (picked.empty())
            v.fail(p + (v.empty(p + "region") ? "grains" : "region"), "selects no grain",
                   "a grain list (" + p + "grains) or a box holding grain centres (" + p + "region)");
        BodyId wall = -1;
        if (const std::string& glue = v.text(p + "wall"); !glue.empty()) {
            if (!wallNames.count(glue))
                v.fail(p + "wall", "names no wall",
                       wallNames.empty() ? std::string("the name of a [wall.NAME] section (the scene has none)")
                                         : "one of the scene's walls: " + [&] {
                                               std::string all;
                                               for (const std::string& w : wallNames) all += (all.empty() ? "" : ", ") + w;
                                               return all;
                                           }());
            wall = static_cast<BodyId>(world.numGrains +
                                       static_cast<std::size_t>(std::distance(wallNames.begin(), wallNames.find(glue))));
            if (world.wall(wall).kind != ShapeKind::Plane)
                v.fail(p + "wall", "names a cylinder", "a plane wall (grains glue to plane walls only)");
            for (const char* key : {"velocity", "spin"})
                if (v.vec(p + key).norm() > 0.0)
                    v.fail(p + key, "is given to grains glued to a wall", "0 0 0 with wall = " + glue + " (they move with it)");
        } else {
            const Vec3 vel = v.vec(p + "velocity"), spin = v.vec(p + "spin");
            for (int a = dimension; a < 3; ++a)
                if (vel[a] != 0.0)
                    v.fail(p + "velocity", std::string("moves the group along the locked axis ") + static_cast<char>('x' + a),
                           dimension == 1 ? "x only in 1D" : "a velocity in the x-y plane in 2D");
            if (dimension < 3 && (spin[0] != 0.0 || spin[1] != 0.0 || (dimension == 1 && spin[2] != 0.0)))
                v.fail(p + "spin", "turns the group about a locked axis", dimension == 1 ? "0 0 0 in 1D" : "0 0 wz in 2D");
        }
        for (std::size_t i : picked) {
            if (!groupOf[i].empty())
                v.fail(p + "grains", "takes grain " + std::to_string(i) + ", already in [group." + groupOf[i] + "]",
                       "each grain in one group at most");
            if (i < world.force.size() && (world.force[i].before.norm() > 0.0 || world.force[i].after.norm() > 0.0))
                v.fail(p + "grains", "takes grain " + std::to_string(i) + ", which [force." + forceOwner[i] + "] pushes",
                       "grains without a force (a group's grains move as prescribed)");
            groupOf[i] = name;
            members.push_back({i, {name, wall}});
        }
    }
    std::sort(members.begin(), members.end());
    for (const auto& [i, group] : members) {
        const std::string p = "group." + group.first + ".";
        world.drive(static_cast<BodyId>(i), v.vec(p + "velocity"), v.vec(p + "spin"), group.second);
    }
}

/// The servos of the scene's walls (WallServo), into scene.servos; marks
/// their walls as moved kinematically.
void parseServos(Scene& scene, const Values& v, const std::set<std::string>& wallNames) {
    World& world = scene.world;
    const int dimension = world.dimension;
    for (const std::string& name : wallNames) {
        const std::string p = "wall." + name + ".";
        if (v.empty(p + "servo_stress")) continue;
        const auto it = std::find(world.wallName.begin(), world.wallName.end(), name);
        if (it == world.wallName.end()) continue;  // a given world without this wall: refused elsewhere
        const std::size_t k = static_cast<std::size_t>(it - world.wallName.begin());
        const auto b = static_cast<BodyId>(world.numGrains + k);
        const WallShape& shape = world.wallShape[k];
        if (shape.kind != ShapeKind::Plane) v.fail(p + "servo_stress", "is set on a cylinder", "a servo on plane walls only");
        if (world.wallMobile[k])
            v.fail(p + "servo_stress", "is set on a mobile wall",
                   "mobile = false (the servo moves the wall itself; a mobile wall follows its force)");
        if (v.empty(p + "servo_gain"))
            v.fail(p + "servo_gain", "is empty", "a real > 0 (speed per unit stress) when servo_stress is set");
        WallServo servo;
        servo.wall = b;
        servo.stress = v.real(p + "servo_stress");
        servo.gain = v.real(p + "servo_gain");
        servo.maxSpeed = v.real(p + "servo_max_speed");
        servo.time = v.real(p + "servo_time");
        if (!v.empty(p + "servo_area")) {
            servo.area = v.real(p + "servo_area");
        } else {
            // The periodic box across an axis-aligned normal.
            int along = -1;
            for (int a = 0; a < dimension; ++a)
                if (shape.direction[a] != 0.0) along = along < 0 ? a : 3;
            servo.area = 1.0;
            bool periodicAcross = along >= 0 && along < 3;
            for (int a = 0; a < dimension && periodicAcross; ++a)
                if (a != along) {
                    periodicAcross = world.periodic[a];
                    servo.area *= world.boxMax[a] - world.boxMin[a];
                }
            if (!periodicAcross)
                v.fail(p + "servo_area", "is empty, and the wall is not across a periodic box",
                       "the area (2D: length) the servo's stress refers to, > 0");
        }
        world.prescribed[static_cast<std::size_t>(b)] = true;
        scene.servos.push_back(servo);
    }
}

/// Refuses a periodic box too short for the minimum image: the cell grid
/// finds the one image of a pair within reach only when each periodic length
/// is above twice the reach of the Verlet list, 2 r_max + margin + skin
/// (CellGridDetector would otherwise stop the first step, naming neither file
/// nor key).
void checkPeriodicLengths(const Values& v, const Scene& scene) {
    const World& w = scene.world;
    double rMax = 0.0;
    for (std::size_t i = 0; i < w.numGrains; ++i) rMax = std::max(rMax, w.radius[i]);
    const double reach = 2.0 * rMax + scene.simulation.margin + scene.simulation.skin;
    for (int a = 0; a < 3; ++a) {
        const double length = w.boxMax[a] - w.boxMin[a];
        if (!w.periodic[static_cast<std::size_t>(a)] || length > 2.0 * reach) continue;
        const std::string axis(1, static_cast<char>('x' + a));
        v.fail("periodic.box_max",
               "leaves the periodic box " + formatNumber(length) + " long along " + axis +
                   ", not above twice the detection reach 2 r_max + margin + skin = " + formatNumber(reach) +
                   " (r_max " + formatNumber(rMax) + ")",
               "box_max - box_min > " + formatNumber(2.0 * reach) + " on the periodic axes, or smaller grains, "
               "contact.margin or contact.skin");
    }
}

Scene loadScene(const IniContent& ini, const std::string& origin, const std::vector<std::string>& sets,
                const std::vector<KeySpec>& extraKeys, const std::filesystem::path& sceneDir,
                const World* given = nullptr) {
    const Schema schema = makeSchema(extraKeys);
    Values v;
    std::map<std::string, std::set<std::string>> instances;  // "force" → names

    for (const auto& [section, line] : ini.sections)
        if (const auto dynamic = checkSection(schema, section, origin + ":" + std::to_string(line)))
            instances[dynamic->first].insert(dynamic->second);

    auto give = [&](const std::string& key, const std::string& value, const std::string& from) {
        const Resolved r = resolveKey(schema, key, from);
        v.entries[key] = {checkValue(*r.rule, key, value, from), from};
        if (!r.dynamicSection.empty()) instances[r.dynamicSection].insert(r.name);
    };

    std::map<std::string, long> seen;
    for (const IniLine& e : ini.entries) {
        const std::string where = origin + ":" + std::to_string(e.line);
        if (const auto [it, fresh] = seen.emplace(e.key, e.line); !fresh)
            throw InputError(where + ": key '" + shown(e.key) + "' is given twice (first on line " +
                             std::to_string(it->second) + ")");
        give(e.key, e.value, where);
    }
    for (const std::string& set : sets) {
        const auto eq = set.find('=');
        const std::string key = eq == std::string::npos ? std::string() : trim(set.substr(0, eq));
        if (eq == std::string::npos || key.empty())
            throw InputError("--set: malformed '" + shown(set) + "' (expected section.key=value, e.g. cd.iterations=80)");
        give(key, unquote(trim(set.substr(eq + 1))), "--set");
    }

    // Defaults of everything not given; derived defaults of dynamic keys.
    for (const Rule& r : schema.fixed)
        if (!v.entries.count(r.spec.key)) v.entries[r.spec.key] = {r.spec.defaultValue, origin};
    for (const auto& [section, names] : instances)
        for (const std::string& name : names)
            for (const Rule& r : schema.dynamic.at(section)) {
                const std::string key = section + "." + name + "." + r.spec.key;
                if (!v.entries.count(key)) v.entries[key] = {r.spec.defaultValue, origin};
            }
    auto derive = [&](const std::string& key, const std::string& from) {
        Entry& e = v.entries.at(key);
        if (e.text.empty()) e = v.entries.at(from);
    };
    for (const std::string& name : instances["force"]) derive("force." + name + ".value_after", "force." + name + ".value");
    for (const std::string& name : instances["wall"]) {
        derive("wall." + name + ".mu", "contact.mu");
        derive("wall." + name + ".force_after", "wall." + name + ".force");
    }

    Scene scene;
    scene.origin = origin;
    SimulationSettings& sim = scene.simulation;
    sim.method = v.text("simulation.method") == "md" ? Method::MD : Method::CD;
    sim.dt = v.real("simulation.dt");
    sim.steps = static_cast<long>(v.integer("simulation.steps"));
    sim.seed = v.unsignedInteger("simulation.seed");

    CdSettings& cd = scene.cd;
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
    if (cd.proximal == Proximal::Stall && cd.criterion != Criterion::Natural)
        throw InputError(origin + ": key 'cd.proximal': 'stall' watches the natural criterion's error (allowed with "
                                  "cd.criterion = natural; otherwise off or on)");
    cd.measureError = v.boolean("output.natural_error");
    cd.epsilon = v.real("cd.epsilon");
    cd.delta = v.real("cd.delta");
    cd.maxIterations = v.smallInteger("cd.max_iterations");
    const std::string& order = v.text("cd.order");
    cd.order = lawFromName(kSweepOrderNames, order).value_or(SweepOrder::RandomSweep);  // validated against the table
    cd.warmStart = v.boolean("cd.warm_start");
    cd.distributed = v.text("cd.distributed") == "exact" ? CdDistributed::Exact : CdDistributed::Domains;
    if (cd.distributed == CdDistributed::Exact && cd.order != SweepOrder::RandomKeys && cd.order != SweepOrder::Fixed &&
        cd.order != SweepOrder::Jacobi)
        throw InputError(origin + ": key 'cd.distributed': 'exact' replays an order every rank computes for its own "
                                  "contacts (allowed with cd.order = random-keys, fixed or jacobi; otherwise domains)");
    cd.gapPositive = v.text("cd.gap") == "pos";

    MdSettings& md = scene.md;
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
        if (md.normal != NormalLaw::Linear)
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
    if (scene.simulation.method == Method::MD) checkIntegratorLaws(md);

    scene.output.every = static_cast<long>(v.integer("output.every"));
    scene.output.vtkEvery = static_cast<long>(v.integer("output.vtk_every"));
    scene.output.vtkPieces = v.boolean("output.vtk_pieces");
    scene.output.checkpointEvery = static_cast<long>(v.integer("output.checkpoint_every"));
    scene.output.logEvery = static_cast<long>(v.integer("output.log_every"));
    scene.output.fclibEvery = static_cast<long>(v.integer("output.fclib_every"));
    if (scene.output.fclibEvery > 0 && !haveFclib())
        throw InputError(origin + ": key 'output.fclib_every': this build has no FCLIB (install libfclib-dev "
                                  "libhdf5-dev and rebuild; allowed here: 0)");
    if (scene.output.fclibEvery > 0 && sim.method != Method::CD)
        throw InputError(origin + ": key 'output.fclib_every': contact problems exist in CD runs only (allowed "
                                  "with simulation.method = cd; here 0)");
    scene.guard.contactSteps = static_cast<long>(v.integer("guard.contact_steps"));
    scene.guard.every = static_cast<long>(v.integer("guard.every"));
    scene.guard.maxOverlap = v.real("guard.max_overlap");
    scene.guard.maxTravel = v.real("guard.max_travel");
    scene.guard.energy = v.boolean("guard.energy");
    scene.guard.startOverlap = v.real("guard.start_overlap");

    if (given) {
        scene.world = *given;
    } else {
        buildWorld(scene, v, instances["force"], instances["wall"], instances["group"], sceneDir);
    }
    // The contact distances are fractions of the smallest grain's radius.
    double rMin = kInf;
    for (std::size_t i = 0; i < scene.world.numGrains; ++i) rMin = std::min(rMin, scene.world.radius[i]);
    scene.simulation.margin = v.real("contact.margin") * rMin;
    scene.simulation.skin = v.real("contact.skin") * rMin;
    scene.simulation.innerSkin = v.real("contact.inner_skin") * rMin;
    if (!given) checkPeriodicLengths(v, scene);
    parseServos(scene, v, instances["wall"]);
    {
        // The walls' materials (the laws from material constants, md/laws/hertz_material.hpp):
        // wall.NAME.youngs_modulus and wall.NAME.poisson_ratio, the grains' where empty.
        const ElasticMaterial grains{v.real("md.youngs_modulus"), v.real("md.poisson_ratio")};
        const std::vector<std::string>& names = scene.world.wallName;
        scene.md.wallMaterials.assign(names.size(), grains);
        for (std::size_t k = 0; k < names.size(); ++k) {
            const std::string p = "wall." + names[k] + ".";
            if (!instances["wall"].count(names[k])) continue;  // a given world's wall without a section
            if (!v.empty(p + "youngs_modulus")) scene.md.wallMaterials[k].youngsModulus = v.real(p + "youngs_modulus");
            if (!v.empty(p + "poisson_ratio")) scene.md.wallMaterials[k].poissonRatio = v.real(p + "poisson_ratio");
        }
    }
    {
        CellServo& cs = scene.cellServo;
        cs.axes = axesOf(v.text("periodic.stress_axes"));
        for (int a = 0; a < 3; ++a)
            if (cs.axes[static_cast<std::size_t>(a)] && !scene.world.periodic[static_cast<std::size_t>(a)])
                v.fail("periodic.stress_axes", std::string("names the axis ") + static_cast<char>('x' + a) + ", which is not periodic",
                       "periodic axes only");
        if (cs.any()) {
            if (v.empty("periodic.stress_gain"))
                v.fail("periodic.stress_gain", "is empty", "a real > 0 (strain rate per unit stress) with stress_axes");
            cs.stress = v.vec("periodic.stress");
            cs.gain = v.real("periodic.stress_gain");
            cs.maxRate = v.real("periodic.max_strain_rate");
            cs.time = v.real("periodic.stress_time");
            for (int a = 0; a < 3; ++a)
                if (cs.axes[static_cast<std::size_t>(a)] && v.vec("periodic.strain_rate")[a] != 0.0)
                    v.fail("periodic.strain_rate", std::string("sets the rate of ") + static_cast<char>('x' + a) +
                                                       ", which the stress servo controls",
                           "0 on periodic.stress_axes");
        }
    }

    if (!v.empty("output.stress_region")) {
        // Six finite numbers, min < max on the dimension's axes; on a
        // periodic axis at most one period (its images count, not twice).
        const std::string key = "output.stress_region";
        const std::string allowed = "six numbers 'xmin ymin zmin xmax ymax zmax' with min < max on the dimension's "
                                    "axes and at most one period on a periodic axis, or empty";
        const auto words = splitWords(v.text(key), true);
        if (words.size() != 6) v.fail(key, "is not six numbers", allowed);
        std::array<Vec3, 2> box;
        for (std::size_t i = 0; i < 6; ++i) {
            const auto x = parseDouble(words[i]);
            if (!x || !std::isfinite(*x)) v.fail(key, "is not six finite numbers", allowed);
            box[i / 3][static_cast<int>(i % 3)] = *x;
        }
        const World& w = scene.world;
        for (int a = 0; a < w.dimension; ++a) {
            const std::string axis(1, static_cast<char>('x' + a));
            if (!(box[0][a] < box[1][a])) v.fail(key, "does not have min < max along " + axis, allowed);
            if (w.periodic[static_cast<std::size_t>(a)] && box[1][a] - box[0][a] > w.boxMax[a] - w.boxMin[a])
                v.fail(key, "is longer than the periodic box along " + axis, allowed);
        }
        scene.output.stressRegion = box;
    }

    for (const auto& [key, entry] : v.entries) scene.values[key] = entry.text;
    return scene;
}

// ---------------------------------------------------------------------------
// Reference text

std::string wrap(const std::string& text, const std::string& indent, std::size_t width) {
    std::string out, line;
    for (const std::string& w : splitWords(text, false)) {
        if (!line.empty() && indent.size() + line.size() + 1 + w.size() > width) {
            out += indent + line + "\n";
            line.clear();
        }
        line += (line.empty() ? "" : " ") + w;
    }
    if (!line.empty()) out += indent + line + "\n";
    return out;
}

void appendKey(std::string& out, const std::string& key, const Rule& r) {
    const std::string& d = r.spec.defaultValue;
    out += key + " = " + (d.empty() ? std::string("\"\"") : d) + "\n";
    out += "    allowed: " + allowedText(r) + "\n";
    out += wrap(r.spec.description, "    ", 79);
}

std::string referenceText(const Schema& schema) {
    std::string out =
        "Scene keys. A scene file has [section] headers and 'key = value' lines; '#'\n"
        "starts a comment. On the command line, --set section.key=value overrides the\n"
        "file. Every key has a default. Vectors are three numbers \"x y z\" (commas\n"
        "allowed). Sections [force.NAME], [wall.NAME] and [group.NAME] may appear any\n"
        "number of times, NAME of letters, digits and '_'.\n";
    std::string section;
    for (const Rule& r : schema.fixed) {
        const std::string s = r.spec.key.substr(0, r.spec.key.find('.'));
        if (s != section) {
            section = s;
            out += "\n[" + section + "]\n";
        }
        appendKey(out, r.spec.key, r);
    }
    for (const char* dyn : {"force", "wall", "group"}) {
        out += std::string("\n[") + dyn + ".NAME]\n";
        for (const Rule& r : schema.dynamic.at(dyn)) appendKey(out, std::string(dyn) + ".NAME." + r.spec.key, r);
    }
    return out;
}

/// Scene files are read up to this size: a scene is a page of keys, and a
/// device such as /dev/zero would otherwise be read for ever.
constexpr std::size_t kMaxSceneBytes = std::size_t{4} << 20;

std::string readSceneFile(const std::string& path) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) throw InputError("cannot read scene file '" + path + "': a directory");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError("cannot read scene file '" + path + "'");
    std::string text(kMaxSceneBytes + 1, '\0');
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    if (in.bad()) throw InputError("cannot read scene file '" + path + "'");
    text.resize(static_cast<std::size_t>(in.gcount()));
    if (text.size() > kMaxSceneBytes)
        throw InputError("scene file '" + path + "': larger than " + std::to_string(kMaxSceneBytes >> 20) +
                         " MiB (allowed: a scene of keys; packings go in packing.file)");
    if (text.find('\0') != std::string::npos)
        throw InputError("scene file '" + path + "': holds a NUL byte (allowed: text)");
    return text;
}

}  // namespace

Scene loadSceneText(const std::string& text, const std::string& origin, const std::vector<std::string>& sets,
                    const std::vector<KeySpec>& extraKeys) {
    return loadScene(parseIni(text, origin), origin, sets, extraKeys, std::filesystem::path("."));
}

Scene loadSceneWithWorld(const std::string& text, const std::string& origin, const std::vector<std::string>& sets,
                         const World& world) {
    return loadScene(parseIni(text, origin), origin, sets, {}, std::filesystem::path("."), &world);
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
