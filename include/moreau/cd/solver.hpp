#pragma once
/// The Jean–Moreau contact dynamics step (CD paper §2): implicit Euler
/// (eqs. 1–2) with contact impulses from Gauss–Seidel sweeps of the
/// one-contact inelastic shock law (eq. 34).
///
/// Stages of one step (each reads/writes only the solver's arrays, the world
/// and the contacts):
///   prepare   — free velocities v + Δt M⁻¹F_ext (eq. 23), one row per contact
///               with n, lever arms, normal mass m_n (eq. 17), tangential mass
///               matrix (eq. 18, general for locked axes), bias g_pos/Δt
///   warmStart — apply last step's reactions (DESIGN.md: the sound-wave theory
///               assumes it)
///   sweeps    — orders per policy; each update removes its own impulse,
///               applies eq. 34, scatters the change (O(1) per update)
///   criterion — fixed (eq. 37), local (eq. 35 + δ), global (eq. 36)
///   check     — a non-finite velocity throws before anything is written back
///   store     — reactions back into the contacts' history
///   integrate — positions with the new velocities (eq. 1), quaternions
///   release   — the per-step buffers go back (memory, see SolverRow)
#include <array>
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "moreau/core/profile.hpp"
#include "moreau/core/step_context.hpp"
#include "moreau/cd/local_problem.hpp"
#include "moreau/cd/sweep_levels.hpp"
#include "moreau/cd/sweep_schedule.hpp"
#include "moreau/contact/contact.hpp"
#include "moreau/model/scene.hpp"
#include "moreau/model/world.hpp"

namespace moreau {

/// Per-step diagnostics of the iteration loop.
struct CdStepStats {
    int iterations = 0;      ///< sweeps performed
    double residual = 0.0;   ///< Σ|ΔR| / Σ|R| of the last sweep
    bool converged = true;   ///< false when a criterion hit its cap
    /// Natural-map error of the final iterate (cd/natural_map.hpp): measured
    /// under the natural criterion or cd.measureError, NaN otherwise.
    double error = std::numeric_limits<double>::quiet_NaN();
    int proximalFrom = -1;   ///< sweeps done when the proximal term started (−1: never)
};

/// Velocities and inverse masses of one body as the sweeps see them: one
/// cache line. invMass < 0 flags a body with locked axes (1D/2D grains,
/// mobile walls free along some axes only): its masks live in a side table.
struct alignas(64) SolverBody {
    Vec3 v;
    double invMass;
    Vec3 w;
    double invInertia;
};

/// Axis masks of a body with locked degrees of freedom (1 free, 0 locked).
struct BodyMasks {
    Vec3 linear = Vec3::Ones(), angular = Vec3::Ones();
};

/// One contact row of the iteration, 104 bytes: packed rather than padded to
/// two cache lines, because at ~3 contacts per grain the rows are a third of
/// a run's memory (measured: aligning to 128 bytes gained no speed that
/// outlasted the machine's noise). The friction coefficient comes from a
/// small table (grains, then each wall) and an anisotropic row is flagged by
/// a negative tangential mass, which keeps the row at 104 bytes instead of
/// 112. Lever arms are l_a = r_a n and
/// l_b = −r_b n (spheres; walls never rotate, so their arm does not matter).
/// The tangential mass is a scalar where the tangent plane is isotropic
/// (always for spheres, eq. 18) and a 3×3 matrix from a side table otherwise
/// (mobile walls locked on some axes). A row touching a clump has arms off n
/// and a Delassus block that couples its normal and tangential parts: it is
/// flagged by ra < 0 and solved from RowTables::clump (ClumpRow).
struct SolverRow {
    BodyId a, b;
    Vec3 n;
    Vec3 P;              ///< current impulse R Δt acting on b
    double ra, rb;       ///< arm lengths along n; ra = −(k + 1) for the k-th ClumpRow
    double mn;           ///< normal effective mass (eq. 17; eq. 18 with walls)
    /// Tangential effective mass (eq. 18) where the tangent plane is
    /// isotropic (≥ 0); −(k + 1) for the k-th matrix of RowTables::aniso.
    double mt;
    double bias;            ///< g_pos/Δt (or g/Δt), eq. 33–34
    float dP;               ///< |ΔP| of the last update (criteria and residual only)
    std::uint32_t friction; ///< index into RowTables::mu (0: grain–grain, 1 + w: wall w)
};
static_assert(sizeof(SolverRow) == 104, "rows are sized for memory; see the comment");

/// A row that touches a clump (docs/clumps.md, "Contact dynamics"): its
/// lever arms are not along n, so its Delassus block W = H^T M⁻¹ H couples
/// the normal and tangential impulses, and the one-contact law is solved on
/// the whole block (cd/local_problem.hpp: exact; in 2D in closed form).
///
/// The layout serves the AVX2 kernel (cd.simd, cd/clump_rows.hpp) too: it
/// loads each Vec3 and each column of W and W⁻¹ as four doubles, the fourth
/// (the next member's first, or the padding after Winv) unused, and the
/// frame's transpose from `frameT`, each column padded with a zero.
struct ClumpRow {
    Vec3 la, lb;   ///< lever arms from a's and b's centre of mass to the contact point
    Vec3 t1, t2;   ///< the row's frame with n (2D: t1 in the plane, t2 = z)
    Mat3 W, Winv;  ///< the Delassus block in that frame and its (pseudo-)inverse
    /// (n_c, t1_c, t2_c, 0) for c = x, y, z: the frame's transpose.
    alignas(32) double frameT[3][4];
};

/// A body's world-frame inverse inertia tensor (RowTables::spin), column
/// by column, each padded with a zero: the AVX2 kernel's kick adds I⁻¹ m to
/// ω four doubles at a time, and the zeros keep SolverBody::invInertia.
struct alignas(32) SpinTensor {
    double col[3][4] = {};
    SpinTensor() = default;
    explicit SpinTensor(const Mat3& m) {
        for (int c = 0; c < 3; ++c)
            for (int r = 0; r < 3; ++r) col[c][r] = m(r, c);
    }
    double operator()(int r, int c) const { return col[c][r]; }
    Mat3 matrix() const {
        Mat3 m;
        for (int c = 0; c < 3; ++c)
            for (int r = 0; r < 3; ++r) m(r, c) = col[c][r];
        return m;
    }
};

/// Side tables of the rows: anisotropic tangential masses and friction coefficients.
struct RowTables {
    std::vector<std::array<double, 6>> aniso;  ///< symmetric M_t: xx xy xz yy yz zz
    std::vector<double> mu;                    ///< μ of grain–grain contacts, then of each wall
    /// In a world with clumps: the rows touching a clump, and each body's
    /// world-frame inverse inertia tensor (masked and shared as its scalar
    /// one), which their impulses turn through. Empty elsewhere.
    std::vector<ClumpRow> clump;
    std::vector<SpinTensor> spin;
    bool planar = false;  ///< a 2D world (clump rows solve their 2×2 block)
    /// In a deforming periodic cell: per row, the velocity of b's image less
    /// b's (World::imageVelocity), added to the relative velocity; rows is
    /// the first row. Null elsewhere.
    const Vec3* imageVelocity = nullptr;
    const SolverRow* rows = nullptr;
    std::vector<Vec3> imageVelocities;
};

class CdSolver;

/// Watches a step from outside its stages, as Box2D's contact listener
/// (pre- and post-solve): posed() once the rows are built, before any
/// impulse; solved() after the sweeps, before anything is written back.
class CdStepObserver {
public:
    virtual void posed(const CdSolver& solver) = 0;
    virtual void solved(const CdSolver& solver) = 0;

protected:
    ~CdStepObserver() = default;
};

/// Keeps the observed steps as local problems with their impulses (what an
/// FCLIB dump writes: io/fclib.hpp).
struct LocalProblemCapture final : CdStepObserver {
    LocalProblem problem;
    std::vector<double> reactions;  ///< in the contact frames, 3 per contact
    void posed(const CdSolver& solver) override;
    void solved(const CdSolver& solver) override;
};

class CdSolver {
public:
    explicit CdSolver(const CdSettings& settings);

    /// Advance the world by one step. `contacts` hold this step's geometry
    /// (detected at the start of the step) and last step's reactions; on
    /// return their history holds the new reactions.
    CdStepStats step(World& world, std::vector<Contact>& contacts, const StepContext& ctx);

    /// The step without its last stage: the impulses and the new velocities
    /// (eq. 2, written into the world; positions untouched), the reactions
    /// into the contacts' history. Throws DivergenceError, writing nothing,
    /// when a velocity is not finite.
    CdStepStats solve(World& world, std::vector<Contact>& contacts, const StepContext& ctx);
    /// The step's last stage: positions and orientations from the world's
    /// velocities (eq. 1), and the world's clock.
    void integrate(World& world, double dt) const;

    const CdSettings& settings() const { return settings_; }
    CdSettings& settings() { return settings_; }
    /// What the sweeps' rows that touch a clump or a polygon run on
    /// (cd.simd): "avx2" where it is asked for (auto) and the CPU has it,
    /// else "none". Sphere rows are scalar.
    const char* rowIsa() const { return vectorRows() ? "avx2" : "none"; }

    /// Wall seconds the last step spent in its sweeps (orders, levels and
    /// shock-law updates; not prepare/store/integrate). For `moreau bench`.
    double lastSweepSeconds() const { return sweepSeconds_; }
    /// Wall seconds of the last step's stages, added to `profile` (its cd* parts).
    void addStageSeconds(StepProfile& profile) const;
    /// Mean number of dependency levels per sweep in the last step (0 when the
    /// sweeps ran serially).
    double levelsPerSweep() const { return levelsPerSweep_; }
    /// The natural-map error (cd/natural_map.hpp) of the current iterate:
    /// valid between prepare and releaseBuffers (an observer may call it).
    double naturalError() const;

    /// Watches each following step from outside its stages (null: none):
    /// see CdStepObserver.
    void setStepObserver(CdStepObserver* observer) { stepObserver_ = observer; }
    /// The step posed as a local problem (W = H^T M⁻¹ H in the contact
    /// frames of cd/natural_map.hpp, q from the free velocities and the gap
    /// term, μ per contact): valid in CdStepObserver::posed.
    LocalProblem localProblem() const;
    /// The rows' impulses in their contact frames, 3 per row: valid in
    /// CdStepObserver::solved, and in a sweep observer (the current iterate).
    std::vector<double> frameReactions() const;

    /// Number of rows (contacts) of the last step.
    std::size_t rows() const { return rows_.size(); }

    /// Residual after each sweep of the last step (for convergence plots).
    const std::vector<double>& residualHistory() const { return residualHistory_; }
    /// Record residualHistory() (off by default: it costs a pass per sweep).
    void recordResidualHistory(bool on) { recordHistory_ = on; }

    /// Called after every sweep with the number of sweeps done so far and the
    /// rows (impulses P = R Δt, in contact order); returning true ends this
    /// step's sweeps there, as a met criterion would. For experiments that
    /// compare the iteration with a known solution (force-relaxation,
    /// sweep-orders). It only reads, and runs serially between sweeps, so the
    /// sweeps keep their bits; unset (the default) it costs one test per sweep.
    using SweepObserver = std::function<bool(int sweeps, const std::vector<SolverRow>& rows)>;
    void setSweepObserver(SweepObserver observer) { observer_ = std::move(observer); }
    /// The same for cd.solver other than gauss-seidel: called after each of
    /// their iterations with the iterate in the contact frames (as
    /// frameReactions), before the impulses reach the bodies.
    void setIterateObserver(IterateObserver observer) { iterateObserver_ = std::move(observer); }

    /// The schedule of every pass from now on (cd/sweep_schedule.hpp): a
    /// distributed run installs its own (only the contacts it names are
    /// solved here, the shared bodies are synchronised after the warm start
    /// and every sweep, the criteria sum over the processes). Null (the
    /// default): this process's own, serial or by dependency levels.
    void setSchedule(SweepSchedule* schedule);

    /// Update one row with the shock law (eq. 34) against the current body
    /// velocities; returns |ΔP|. Public for the unit tests.
    static double updateRow(SolverRow& row, std::vector<SolverBody>& bodies, const std::vector<BodyMasks>& masks,
                            const RowTables& tables);

private:
    struct StopRule;
    void prepare(const World& world, const std::vector<Contact>& contacts, const StepContext& ctx);
    void warmStart(const std::vector<Contact>& contacts, double dt);
    /// Sweeps until the criterion is met (or its cap): the iteration loop.
    CdStepStats iterate(const StepContext& ctx);
    /// cd.solver other than gauss-seidel: the step's local problem solved
    /// whole by that family, from last step's reactions, and applied.
    CdStepStats solveWhole(const std::vector<Contact>& contacts, const StepContext& ctx);
    /// Whether every sweep of a step runs one order (fixed, shuffle-once).
    bool oneOrder() const;
    /// Plans sweeps [sweep, sweep + count) of the step (their orders, and how
    /// the threads share them).
    void planSweeps(const StepContext& ctx, int sweep, int count, bool parallel);
    /// Runs the s-th sweep of the last planSweeps(); returns its dependency levels (0: not by levels).
    std::size_t runSweep(int s);

    /// The rows of one sweep in the order of cd.order (sweep_orders: a fresh
    /// permutation, one per step, key order, or draws with replacement).
    void buildOrder(std::vector<std::int32_t>& order, const StepContext& ctx, int sweep) const;
    void planSweep(SweepPlan& plan, LevelScratch& scratch, const StepContext& ctx, int sweep, bool levels) const;
    /// Runs the row solve `update` over `plan` as the schedule says.
    template <class Update>
    void runPass(const SweepPlan& plan, const PassOrder& order, Update update);
    void sums(double impulseFloor, double& sumDP, double& sumP, std::int64_t& violations) const;
    /// N sums of term(row, acc) over the rows, in fixed blocks of `block`
    /// rows (or in key order across the processes, as the schedule says).
    template <std::size_t N, class Term>
    std::array<double, N> rowSums(Term term, std::size_t block) const;
    /// ‖q‖² of the natural-map error: the relative velocities before any impulse.
    double freeVelocityNorm2() const;
    /// A row's relative velocity (eq. 3) with the impulses applied so far.
    Vec3 relativeVelocityOf(const SolverRow& r) const;
    bool needsError() const { return settings_.criterion == Criterion::Natural || settings_.measureError; }
    void checkFinite(const World& world, const StepContext& ctx);
    void releaseBuffers();
    void store(World& world, std::vector<Contact>& contacts, double dt) const;

    CdSettings settings_;
    SweepSchedule* schedule_;             ///< the constructor's: this process's own
    std::vector<char> ownRows_;           ///< the rows solved here (empty: all)
    std::vector<double> share_;           ///< each body's inverse-mass factor (empty: 1)
    std::vector<ContactKey> orderKeys_;   ///< random-keys: each row's key (in the whole world)
    StepContext planned_{};               ///< the step of the last planSweeps()
    int plannedSweep_ = 0;                ///< its first sweep
    std::vector<SolverBody> bodies_;
    std::vector<SolverRow> rows_;
    std::vector<char> mobile_;
    std::vector<BodyId> carrier_;  ///< the body each body's rows act on (a glued grain's wall); empty: itself
    std::vector<BodyMasks> masks_;                  ///< per body, used where invMass < 0
    RowTables tables_;
    std::vector<double> residualHistory_;
    bool recordHistory_ = false;
    SweepObserver observer_;
    IterateObserver iterateObserver_;
    double sweepSeconds_ = 0.0;
    StepProfile stageSeconds_;  ///< the last step's (its cd* parts)
    /// Bodies of each row, −1 where the solver never moves the body (fixed
    /// walls): the dependency levels read this instead of the rows.
    std::vector<std::array<std::int32_t, 2>> pairs_;
    std::vector<SweepPlan> plans_;        ///< a batch of sweeps planned ahead, one per thread
    std::vector<LevelScratch> scratch_;   ///< one per thread
    double levelsPerSweep_ = 0.0;
    double qNorm2_ = 0.0;  ///< ‖q‖² of this step (natural-map error)
    std::vector<Vec3> jacobi_;  ///< the Jacobi order's impulses of a sweep
    std::vector<Vec3> anchors_; ///< the proximal term's anchor impulses, per row
    bool vectorRows() const;
    bool proximal_ = false;     ///< the sweeps solve the proximal problem (cd.proximal)
    CdStepObserver* stepObserver_ = nullptr;
};

}  // namespace moreau
