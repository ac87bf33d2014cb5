#include "moreau/cd/solver.hpp"
#include "moreau/core/huge_pages.hpp"

#include <omp.h>

#include <Eigen/Eigenvalues>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "clump_rows.hpp"
#include "moreau/cd/local_problem.hpp"
#include "moreau/cd/natural_map.hpp"
#include "moreau/core/error.hpp"
#include "moreau/core/rng.hpp"

namespace moreau {

namespace {

/// Rows below this count are swept serially: a level barrier costs more than
/// the updates it would share out.
constexpr std::size_t kParallelRows = 4096;
/// Rows per block of the deterministic reductions (fixed, thread-independent).
constexpr std::size_t kSumBlock = 4096;

/// Pseudo-inverse of the symmetric 2×2 [[a, b], [b, c]] (zero eigenvalues
/// belong to locked directions: no impulse there).
Eigen::Matrix2d pseudoInverse2(double a, double b, double c) {
    Eigen::Matrix2d m;
    m << a, b, b, c;
    Eigen::SelfAdjointEigenSolver<Eigen::Matrix2d> es(m);
    const double lmax = std::max(std::abs(es.eigenvalues()[0]), std::abs(es.eigenvalues()[1]));
    Eigen::Vector2d inv = Eigen::Vector2d::Zero();
    for (int i = 0; i < 2; ++i)
        if (es.eigenvalues()[i] > 1e-12 * lmax && es.eigenvalues()[i] > 0) inv[i] = 1.0 / es.eigenvalues()[i];
    return es.eigenvectors() * inv.asDiagonal() * es.eigenvectors().transpose();
}

inline Vec3 symMul(const std::array<double, 6>& m, const Vec3& v) {
    return {m[0] * v.x() + m[1] * v.y() + m[2] * v.z(), m[1] * v.x() + m[3] * v.y() + m[4] * v.z(),
            m[2] * v.x() + m[4] * v.y() + m[5] * v.z()};
}

/// Velocity change of one body from impulse sign·dP at the lever arm l: for a,
/// −l_a × dP = −r_a n × dP; for b, l_b × dP = −r_b n × dP; `ndP` = n × dP.
inline void kick(SolverBody& B, BodyId id, const std::vector<BodyMasks>& masks, const Vec3& dP, const Vec3& ndP,
                 double sign, double r) {
    if (B.invMass >= 0.0) {  // isotropic (the common case): no masks
        B.v += (sign * B.invMass) * dP;
        B.w -= (r * B.invInertia) * ndP;
    } else {
        const BodyMasks& m = masks[static_cast<std::size_t>(id)];
        B.v += (-sign * B.invMass) * m.linear.cwiseProduct(dP);
        B.w -= (r * B.invInertia) * m.angular.cwiseProduct(ndP);
    }
}

/// A row's impulse change dP applied to its bodies. `Clumps`: the world has
/// clumps, so a row may be a ClumpRow (compiled out of sphere worlds' sweeps).
template <bool Clumps>
inline void applyImpulse(const SolverRow& r, std::vector<SolverBody>& bodies, const std::vector<BodyMasks>& masks,
                         const RowTables& tables, const Vec3& dP) {
    if constexpr (Clumps)
        if (r.ra < 0.0) return clump_rows::applyImpulse(r, bodies, masks, tables, dP);
    // l_a × dP = r_a n × dP and l_b × dP = −r_b n × dP: one cross product.
    const Vec3 ndP = r.n.cross(dP);
    kick(bodies[static_cast<std::size_t>(r.a)], r.a, masks, dP, ndP, -1.0, r.ra);
    kick(bodies[static_cast<std::size_t>(r.b)], r.b, masks, dP, ndP, +1.0, r.rb);
}

/// Relative velocity at a row's contact (eq. 3) with every impulse applied so
/// far, the row's own included; ω × l = −r ω × n for both arms (a ClumpRow's
/// arms are its own).
template <bool Clumps = true>
[[gnu::always_inline]] inline Vec3 relativeVelocity(const SolverRow& r, const std::vector<SolverBody>& bodies,
                                                    const RowTables& tables) {
    const SolverBody& A = bodies[static_cast<std::size_t>(r.a)];
    const SolverBody& B = bodies[static_cast<std::size_t>(r.b)];
    Vec3 V;
    if (Clumps && r.ra < 0.0) V = clump_rows::relativeVelocity(clump_rows::of(r, tables), A, B);
    else V = B.v - A.v - (r.ra * A.w + r.rb * B.w).cross(r.n);
    if (tables.imageVelocity) V += tables.imageVelocity[&r - tables.rows];  // a deforming cell's image
    return V;
}

/// The impulse eq. 34 gives a row whose relative velocity is V and whose
/// masses are m_n, m_t (the row's own, or the proximal problem's).
[[gnu::always_inline]] inline Vec3 lawImpulse(const SolverRow& r, const Vec3& V, double mn, double mt,
                                              const RowTables& tables) {
    const double Vn = r.n.dot(V);
    // Removing the own impulse gives U (eq. 23): U_n = V_n − P_n/m_n and
    // U_t = V_t − W_t P_t, so the sticking impulse of eq. 34,
    // P_n = −m_n (g_pos/Δt + U_n), P_t = −M_t U_t, becomes an increment.
    const double Pn_old = r.n.dot(r.P);
    const double Pn = Pn_old - mn * (Vn + r.bias);
    Vec3 Pnew = Vec3::Zero();
    if (Pn > 0.0) {  // else U_n Δt + g_pos ≥ 0: no contact
        Pnew = Pn * r.n;
        const double mu = tables.mu[r.friction];
        if (mu > 0.0) {
            const Vec3 Vt = V - Vn * r.n;
            Vec3 Pt = r.P - Pn_old * r.n;
            Pt -= mt >= 0.0 ? Vec3(mt * Vt) : symMul(tables.aniso[static_cast<std::size_t>(-mt - 1.0)], Vt);
            const double limit = mu * Pn;
            const double pt2 = Pt.squaredNorm();
            if (pt2 > limit * limit) Pt *= limit / std::sqrt(pt2);  // sliding: |R_t| = μ R_n
            Pnew += Pt;
        }
    }
    return Pnew;
}

/// The impulse eq. 34 gives a row of either kind for a relative velocity V.
template <bool Clumps>
[[gnu::always_inline]] inline Vec3 rowImpulse(const SolverRow& r, const Vec3& V, const RowTables& tables) {
    if constexpr (Clumps)
        if (r.ra < 0.0) {
            const ClumpRow& k = clump_rows::of(r, tables);
            return clump_rows::impulse(r, k, V, k.W, k.Winv, tables);
        }
    return lawImpulse(r, V, r.mn, r.mt, tables);
}

/// A row's new impulse, applied to its bodies.
template <bool Clumps>
[[gnu::always_inline]] inline void setImpulse(SolverRow& r, const Vec3& Pnew, std::vector<SolverBody>& bodies,
                                              const std::vector<BodyMasks>& masks, const RowTables& tables) {
    const Vec3 dP = Pnew - r.P;
    r.P = Pnew;
    applyImpulse<Clumps>(r, bodies, masks, tables, dP);
    r.dP = static_cast<float>(dP.norm());
}

/// A deforming cell's image velocity of a row (zero elsewhere).
[[gnu::always_inline]] inline Vec3 imageVelocity(const SolverRow& r, const RowTables& tables) {
    return tables.imageVelocity ? tables.imageVelocity[&r - tables.rows] : Vec3::Zero();
}

template <bool Clumps>
[[gnu::always_inline]] inline void shockLaw(SolverRow& r, std::vector<SolverBody>& bodies,
                                            const std::vector<BodyMasks>& masks, const RowTables& tables) {
    if constexpr (Clumps)
        if (r.ra < 0.0) {
            const ClumpRow& k = clump_rows::of(r, tables);
            return clump_rows::solve(r, bodies, masks, tables, k.W, k.Winv, imageVelocity(r, tables));
        }
    setImpulse<Clumps>(r, rowImpulse<Clumps>(r, relativeVelocity<Clumps>(r, bodies, tables), tables), bodies, masks,
                       tables);
}

#if MOREAU_CLUMP_ROWS_AVX2
/// A sphere row of PlainLawAvx2's pass, compiled for the baseline: inlined
/// into the AVX2 loop GCC writes a register move (vmovq xmm, xmm) that
/// valgrind 3.19 cannot run.
[[gnu::noinline]] void sphereRow(SolverRow& r, std::vector<SolverBody>& bodies, const std::vector<BodyMasks>& masks,
                                 const RowTables& tables) {
    shockLaw<true>(r, bodies, masks, tables);
}

/// PlainLaw in a world with clumps whose clump rows take the AVX2 kernel
/// (cd.simd; the same bits). Its pass runs in sweepRangeAvx2.
struct PlainLawAvx2 {
    static constexpr bool kAvx2 = true, kClumpRows = true;
    [[gnu::target("avx2"), gnu::always_inline]] void operator()(SolverRow& r, std::vector<SolverBody>& bodies,
                                                                const std::vector<BodyMasks>& masks,
                                                                const RowTables& tables) const {
        if (r.ra < 0.0)
            return clump_rows::avx2::solve(r, bodies, masks, tables,
                                           tables.imageVelocity ? &tables.imageVelocity[&r - tables.rows] : nullptr);
        sphereRow(r, bodies, masks, tables);
    }
};
#endif

/// The row solves of a pass (sweepRange's policy, fixed for the whole pass).
/// The plain shock law (eq. 34).
template <bool Clumps>
struct PlainLaw {
    static constexpr bool kClumpRows = Clumps;
    [[gnu::always_inline]] void operator()(SolverRow& r, std::vector<SolverBody>& bodies,
                                           const std::vector<BodyMasks>& masks, const RowTables& tables) const {
        shockLaw<Clumps>(r, bodies, masks, tables);
    }
};

/// The shock law of the proximal problem (cd.proximal, docs/convergence.md):
/// the velocity u + η (P − P_anchor)/m_n, so the masses become
/// (m⁻¹ + η/m_n)⁻¹ (an anisotropic tangential mass is kept: at the fixed
/// point P = P_anchor). A ClumpRow's block becomes W + (η/m_n) 1.
template <bool Clumps>
struct ProximalLaw {
    static constexpr bool kClumpRows = Clumps;
    const Vec3* anchor;  ///< per row, the anchor impulse P_k
    double eta;
    [[gnu::always_inline]] void operator()(SolverRow& r, std::vector<SolverBody>& bodies,
                                           const std::vector<BodyMasks>& masks, const RowTables& tables) const {
        if (r.mn == 0.0) {  // a row within one body: no impulse
            shockLaw<Clumps>(r, bodies, masks, tables);
            return;
        }
        const double e = eta / r.mn;  // η relative to the row's normal compliance
        if (Clumps && r.ra < 0.0) {
            const ClumpRow& k = clump_rows::of(r, tables);
            const Mat3 W = k.W + e * Mat3::Identity();
            return clump_rows::solve(r, bodies, masks, tables, W, W.inverse(),
                                     imageVelocity(r, tables) + e * (r.P - anchor[&r - tables.rows]));
        }
        const Vec3 V = relativeVelocity<Clumps>(r, bodies, tables) + e * (r.P - anchor[&r - tables.rows]);
        const double mt = r.mt > 0.0 ? r.mt / (1.0 + e * r.mt) : r.mt;
        setImpulse<Clumps>(r, lawImpulse(r, V, r.mn / (1.0 + e * r.mn), mt, tables), bodies, masks, tables);
    }
};

/// Before updating entry k of idx[..end): the order is known, so rows are
/// fetched 16 updates early and, once a row is in cache, its two bodies 8
/// updates early.
[[gnu::always_inline]] inline void prefetchAhead(const std::int32_t* idx, std::size_t k, std::size_t end,
                                                 const std::vector<SolverRow>& rows,
                                                 const std::vector<SolverBody>& bodies) {
    if (k + 16 < end) {
        const char* p = reinterpret_cast<const char*>(&rows[static_cast<std::size_t>(idx[k + 16])]);
        __builtin_prefetch(p);
        __builtin_prefetch(p + 64);
        __builtin_prefetch(p + sizeof(SolverRow) - 1);
    }
    if (k + 8 < end) {
        const SolverRow& ahead = rows[static_cast<std::size_t>(idx[k + 8])];
        __builtin_prefetch(&bodies[static_cast<std::size_t>(ahead.a)]);
        __builtin_prefetch(&bodies[static_cast<std::size_t>(ahead.b)]);
    }
}

/// With prefetchAhead in a world with clumps: a clump row's ClumpRow (six
/// cache lines) and its bodies' tensors, 8 updates early, once its row is in
/// cache. (Without them a clump row's update waits on memory: 8 M updates
/// a second against the sphere rows' 30 M, at 1.4 times their instructions.)
[[gnu::always_inline]] inline void prefetchClumpAhead(const std::int32_t* idx, std::size_t k, std::size_t end,
                                                      const std::vector<SolverRow>& rows, const RowTables& tables) {
    if (k + 8 >= end) return;
    const SolverRow& ahead = rows[static_cast<std::size_t>(idx[k + 8])];
    if (!(ahead.ra < 0.0)) return;
    const char* c = reinterpret_cast<const char*>(&clump_rows::of(ahead, tables));
    for (std::size_t off = 0; off < sizeof(ClumpRow); off += 64) __builtin_prefetch(c + off);
    __builtin_prefetch(c + sizeof(ClumpRow) - 1);
    for (const BodyId id : {ahead.a, ahead.b}) {
        const char* t = reinterpret_cast<const char*>(&tables.spin[static_cast<std::size_t>(id)]);
        __builtin_prefetch(t);
        __builtin_prefetch(t + sizeof(SpinTensor) - 1);
    }
}

/// Whether a pass's row solve meets clump rows (its kClumpRows).
template <class Update>
constexpr bool clumpRows = [] {
    if constexpr (requires { Update::kClumpRows; }) return Update::kClumpRows;
    else return false;
}();

/// Updates rows idx[begin..end) in that order with the row solve `update`,
/// prefetching ahead: the one loop of every pass (SweepSchedule runs its ranges).
template <class Update>
void sweepRange(const std::int32_t* idx, std::size_t begin, std::size_t end, std::vector<SolverRow>& rows,
                std::vector<SolverBody>& bodies, const std::vector<BodyMasks>& masks, const RowTables& tables,
                Update update) {
    for (std::size_t k = begin; k < end; ++k) {
        prefetchAhead(idx, k, end, rows, bodies);
        if constexpr (clumpRows<Update>) prefetchClumpAhead(idx, k, end, rows, tables);
        update(rows[static_cast<std::size_t>(idx[k])], bodies, masks, tables);
    }
}
#if MOREAU_CLUMP_ROWS_AVX2
/// sweepRange compiled for AVX2, for PlainLawAvx2 (run only where the CPU
/// has it; the loop is sweepRange's, which cannot inline an AVX2 update).
template <class Update>
[[gnu::target("avx2")]] void sweepRangeAvx2(const std::int32_t* idx, std::size_t begin, std::size_t end,
                                            std::vector<SolverRow>& rows, std::vector<SolverBody>& bodies,
                                            const std::vector<BodyMasks>& masks, const RowTables& tables,
                                            Update update) {
    for (std::size_t k = begin; k < end; ++k) {
        prefetchAhead(idx, k, end, rows, bodies);
        prefetchClumpAhead(idx, k, end, rows, tables);
        update(rows[static_cast<std::size_t>(idx[k])], bodies, masks, tables);
    }
}
#endif

/// A pass's ranges through sweepRange (one virtual call per range).
template <class Update>
class RangePass final : public RowPass {
public:
    RangePass(std::vector<SolverRow>& rows, std::vector<SolverBody>& bodies, const std::vector<BodyMasks>& masks,
              const RowTables& tables, Update update)
        : rows_(rows), bodies_(bodies), masks_(masks), tables_(tables), update_(update) {}
    void run(const std::int32_t* order, std::size_t begin, std::size_t end) override {
#if MOREAU_CLUMP_ROWS_AVX2
        if constexpr (requires { Update::kAvx2; })
            sweepRangeAvx2(order, begin, end, rows_, bodies_, masks_, tables_, update_);
        else
#endif
            sweepRange(order, begin, end, rows_, bodies_, masks_, tables_, update_);
    }

private:
    std::vector<SolverRow>& rows_;
    std::vector<SolverBody>& bodies_;
    const std::vector<BodyMasks>& masks_;
    const RowTables& tables_;
    Update update_;
};

/// A row that touches a clump (ClumpRow): its arms, frame and Delassus
/// block, from the spin tensors already in `tables`; `share` as in prepare.
void poseClumpRow(const World& world, const Contact& k, SolverRow& r, RowTables& tables,
                  const std::vector<double>& shares) {
    auto share = [&](std::size_t i) { return shares.empty() ? 1.0 : shares[i]; };
    ClumpRow row;
    row.la = leverArm(world, k, k.a);
    row.lb = leverArm(world, k, k.b);
    if (tables.planar) {  // the in-plane tangent, then z (locked)
        row.t1 = Vec3(-k.n.y(), k.n.x(), 0.0).normalized();
        row.t2 = Vec3::UnitZ();
    } else {
        contactFrame(k.n, row.t1, row.t2);
    }
    // W = Σ M⁻¹ + [l×]ᵀ I_w⁻¹ [l×] over the two bodies (the rows act on the
    // carriers: a glued grain's wall, whose tensor is zero), in the frame.
    const auto ia = static_cast<std::size_t>(r.a), ib = static_cast<std::size_t>(r.b);
    const Mat3 sa = crossMatrix(row.la), sb = crossMatrix(row.lb);
    Mat3 W = Mat3::Zero();
    W.diagonal() = world.invMass[ia] * share(ia) + world.invMass[ib] * share(ib);
    W += sa.transpose() * tables.spin[ia].matrix() * sa + sb.transpose() * tables.spin[ib].matrix() * sb;
    Mat3 F;
    F << k.n, row.t1, row.t2;
    row.W = F.transpose() * W * F;
    row.W = 0.5 * (row.W + row.W.transpose());
    if (tables.planar) {
        row.Winv = Mat3::Zero();
    } else {
        Eigen::SelfAdjointEigenSolver<Mat3> es(row.W);
        const Vec3 l = es.eigenvalues();
        Vec3 inv = Vec3::Zero();
        for (int i = 0; i < 3; ++i)
            if (l[i] > 1e-12 * l.cwiseAbs().maxCoeff()) inv[i] = 1.0 / l[i];
        row.Winv = es.eigenvectors() * inv.asDiagonal() * es.eigenvectors().transpose();
    }
    for (int c = 0; c < 3; ++c) {
        row.frameT[c][0] = k.n[c];
        row.frameT[c][1] = row.t1[c];
        row.frameT[c][2] = row.t2[c];
        row.frameT[c][3] = 0.0;
    }
    r.mn = row.W(0, 0) > 0.0 ? 1.0 / row.W(0, 0) : 0.0;
    r.mt = 0.0;
    r.ra = -1.0 - static_cast<double>(tables.clump.size());
    r.rb = 0.0;
    tables.clump.push_back(row);
}

/// This process's own schedule (stateless: one for every solver).
SweepSchedule gLocalSchedule;

}  // namespace

CdSolver::CdSolver(const CdSettings& settings) : settings_(settings), schedule_(&gLocalSchedule) {
    if (settings.solver != CdSolverFamily::GaussSeidel && settings.criterion != Criterion::Natural &&
        settings.criterion != Criterion::Fixed)
        throw InputError("key 'cd.criterion': cd.solver = " + std::string(lawName(kCdSolverNames, settings.solver)) +
                         " stops by the natural-map error or after cd.iterations (allowed: natural, fixed)");
}

bool CdSolver::vectorRows() const {
#if MOREAU_CLUMP_ROWS_AVX2
    static const bool cpu = __builtin_cpu_supports("avx2");
    return settings_.vectorRows && cpu;
#else
    return false;
#endif
}

void CdSolver::setSchedule(SweepSchedule* schedule) { schedule_ = schedule ? schedule : &gLocalSchedule; }

double CdSolver::updateRow(SolverRow& r, std::vector<SolverBody>& bodies, const std::vector<BodyMasks>& masks,
                          const RowTables& tables) {
    shockLaw<true>(r, bodies, masks, tables);
    return r.dP;
}

void CdSolver::prepare(const World& world, const std::vector<Contact>& contacts, const StepContext& ctx) {
    const std::size_t nb = world.numBodies();
    const double tNew = world.time + ctx.dt;  // implicit Euler: forces at the end of the step
    schedule_->begin(world, contacts, ownRows_, share_, orderKeys_);
    if (orderKeys_.empty() && settings_.order == SweepOrder::RandomKeys)
        for (const Contact& c : contacts) orderKeys_.push_back(c.key);
    // A body several processes move has its inverse mass multiplied by their
    // number here (mass splitting; sim/distributed_cd.hpp).
    auto share = [this](std::size_t i) { return share_.empty() ? 1.0 : share_[i]; };
    resizeHuge(bodies_, nb);
    mobile_.resize(nb);
    masks_.clear();  // allocated only if some body has locked axes
    for (std::size_t i = 0; i < nb; ++i) {
        SolverBody& s = bodies_[i];
        const Vec3& im = world.invMass[i];
        const Vec3& ii = world.invInertia[i];
        s.v = world.v[i];
        s.w = world.w[i];
        const Vec3 F = world.appliedForce(static_cast<BodyId>(i), tNew);
        for (int k = 0; k < 3; ++k)
            if (im[k] > 0.0) s.v[k] += ctx.dt * (im[k] * F[k] + world.gravity[k]);
        // Scalar inverse masses; locked axes (zero entries among non-zero
        // ones) turn the body into a masked one, flagged by a negative sign.
        s.invMass = im.maxCoeff() * share(i);
        s.invInertia = ii.maxCoeff() * share(i);
        const bool isoM = im.minCoeff() == s.invMass, isoI = ii.minCoeff() == s.invInertia;
        if (!isoM || !isoI) {
            if (masks_.empty()) masks_.resize(nb);
            masks_[i].linear = (im.array() > 0.0).cast<double>();
            masks_[i].angular = (ii.array() > 0.0).cast<double>();
            // The sign is the flag; a body locked in all translations keeps
            // it through the tiny magnitude, its zero mask does the locking.
            s.invMass = -std::max(s.invMass, 1e-300);
        }
        mobile_[i] = (im.squaredNorm() + ii.squaredNorm()) > 0.0;
    }
    const std::size_t m = contacts.size();
    resizeHuge(rows_, m);  // read in random order: 2 MB pages spare the TLB
    // The pair list serves the parallel path: its dependency levels.
    const bool parallel = omp_get_max_threads() > 1 && m > kParallelRows;
    if (parallel) pairs_.resize(m);
    tables_.aniso.clear();
    tables_.imageVelocities.clear();
    if (world.deforming()) {
        tables_.imageVelocities.resize(m);
        for (std::size_t c = 0; c < m; ++c) {
            const Contact& k = contacts[c];
            tables_.imageVelocities[c] =
                world.isWall(k.b) ? Vec3::Zero()
                                  : world.imageVelocity(world.x[static_cast<std::size_t>(k.b)] - world.x[static_cast<std::size_t>(k.a)]);
        }
    }
    tables_.imageVelocity = tables_.imageVelocities.empty() ? nullptr : tables_.imageVelocities.data();
    tables_.rows = rows_.data();
    tables_.mu.assign(1, world.muGrain);
    for (std::size_t w = 0; w < world.numWalls(); ++w) tables_.mu.push_back(world.wallShape[w].mu);
    const bool threeD = world.dimension == 3;
    // A world with clumps: each body's inverse inertia tensor at this step's
    // orientation (implicit Euler with I_w(q_n): docs/clumps.md), and the
    // rows that touch a clump.
    tables_.clump.clear();
    tables_.spin.clear();
    tables_.planar = !threeD;
    if (world.hasShapes()) {
        tables_.spin.resize(nb);
        for (std::size_t i = 0; i < nb; ++i) {
            const Vec3 ii = world.invInertia[i] * share(i);
            tables_.spin[i] = SpinTensor(world.tumbles(i) ? inverseInertiaWorld(world.q[i], ii) : Mat3(ii.asDiagonal()));
        }
    }
    // A grain glued to a wall is part of it (World::DrivenGrain): its rows
    // act on the wall's body, with the wall's velocity and mass. Walls never
    // rotate, so the grain's lever arm meets no spin and no inverse inertia.
    carrier_ = world.carriers();
    for (std::size_t c = 0; c < m; ++c) {
        const Contact& k = contacts[c];
        SolverRow& r = rows_[c];
        r.a = carrier_.empty() ? k.a : carrier_[static_cast<std::size_t>(k.a)];
        r.b = carrier_.empty() ? k.b : carrier_[static_cast<std::size_t>(k.b)];
        r.n = k.n;
        r.bias = (settings_.gapPositive ? std::max(k.gap, 0.0) : k.gap) / ctx.dt;  // eq. 33
        const auto ia = static_cast<std::size_t>(r.a), ib = static_cast<std::size_t>(r.b);
        r.friction = world.isWall(k.b) ? static_cast<std::uint32_t>(1 + ib - world.numGrains) : 0u;
        r.P = Vec3::Zero();
        r.dP = 0.0f;
        if (!pairs_.empty()) pairs_[c] = {mobile_[ia] ? r.a : -1, mobile_[ib] && ib != ia ? r.b : -1};
        const bool solved = ia != ib && (ownRows_.empty() || ownRows_[c]);
        const auto ga = static_cast<std::size_t>(k.a), gb = static_cast<std::size_t>(k.b);
        if (!tables_.spin.empty() &&
            (world.clumpOf(ga) || world.clumpOf(gb) || world.polygonOf(ga) || world.polygonOf(gb))) {
            poseClumpRow(world, k, r, tables_, share_);
            if (!solved) r.mn = 0.0;
            continue;
        }
        r.ra = world.radius[static_cast<std::size_t>(k.a)];
        r.rb = world.radius[static_cast<std::size_t>(k.b)];
        // W = H^T M^-1 H (eq. 15) with per-axis inverse masses:
        // Σ diag(m⁻¹) + [l×]^T diag(I⁻¹) [l×]. (Two grains glued to one
        // wall: a row within one body, W = 0, no impulse.)
        const Mat3 sa = crossMatrix(r.ra * k.n), sb = crossMatrix(-r.rb * k.n);
        Mat3 W = Mat3::Zero();
        W.diagonal() = world.invMass[ia] * share(ia) + world.invMass[ib] * share(ib);
        W += sa.transpose() * (world.invInertia[ia] * share(ia)).asDiagonal() * sa;
        W += sb.transpose() * (world.invInertia[ib] * share(ib)).asDiagonal() * sb;
        const double wn = k.n.dot(W * k.n);
        r.mn = wn > 0.0 ? 1.0 / wn : 0.0;
        Vec3 t1, t2;
        contactFrame(k.n, t1, t2);
        const double w11 = t1.dot(W * t1), w12 = t1.dot(W * t2), w22 = t2.dot(W * t2);
        const double lmax = std::max(w11, w22) + std::abs(w12);
        const bool isotropic = std::abs(w11 - w22) <= 1e-12 * lmax && std::abs(w12) <= 1e-12 * lmax;
        if (isotropic || !threeD) {
            // In 1D and 2D tangential velocities never leave the free
            // directions, so the largest eigenvalue's inverse is exact there.
            const double l = 0.5 * (w11 + w22) + std::sqrt(0.25 * (w11 - w22) * (w11 - w22) + w12 * w12);
            r.mt = l > 0.0 ? 1.0 / l : 0.0;
        } else {
            const Eigen::Matrix2d M2 = pseudoInverse2(w11, w12, w22);
            Eigen::Matrix<double, 3, 2> T;
            T.col(0) = t1;
            T.col(1) = t2;
            const Mat3 Mt = T * M2 * T.transpose();
            r.mt = -1.0 - static_cast<double>(tables_.aniso.size());  // exact: an integer below 2⁵³
            tables_.aniso.push_back({Mt(0, 0), Mt(0, 1), Mt(0, 2), Mt(1, 1), Mt(1, 2), Mt(2, 2)});
        }
        if (!solved) r.mn = r.mt = 0.0;  // no impulse here
    }
}


void CdSolver::warmStart(const std::vector<Contact>& contacts, double dt) {
    if (!settings_.warmStart) return;
    // Serially in key order (across the processes): the same sums for any thread count.
    SweepPlan plan;
    for (std::size_t c = 0; c < rows_.size(); ++c) {
        if (rows_[c].mn == 0.0) continue;
        rows_[c].P = contacts[c].history.reaction * dt;
        plan.seq.push_back(static_cast<std::int32_t>(c));
    }
    runPass(plan, PassOrder{}, [](SolverRow& r, std::vector<SolverBody>& bodies, const std::vector<BodyMasks>& masks,
                                  const RowTables& tables) { applyImpulse<true>(r, bodies, masks, tables, r.P); });
}

void CdSolver::buildOrder(std::vector<std::int32_t>& order, const StepContext& ctx, int sweep) const {
    // The rows solved here: all of them, or the schedule's own.
    order.clear();
    const bool subset = !ownRows_.empty();
    for (std::size_t i = 0; i < rows_.size(); ++i)
        if (!subset || ownRows_[i]) order.push_back(static_cast<std::int32_t>(i));
    const std::size_t m = order.size();
    const auto step = static_cast<std::uint64_t>(ctx.step);
    switch (settings_.order) {
        case SweepOrder::Fixed:
        case SweepOrder::Jacobi:  // (runSweep updates all rows at once, in no order)
            break;
        case SweepOrder::ShuffleOnce:
        case SweepOrder::RandomSweep: {
            // Shuffle-once draws the same stream for every sweep of the step.
            const auto s = static_cast<std::uint64_t>(settings_.order == SweepOrder::ShuffleOnce ? 0 : sweep);
            Rng rng = Rng::stream(ctx.seed, step, s, 1);
            rng.shuffle(std::span<std::int32_t>(order));
            break;
        }
        case SweepOrder::RandomSequential: {
            // Draws among the rows solved here (serially: all of them, no copy).
            const std::vector<std::int32_t> rows = subset ? order : std::vector<std::int32_t>{};
            Rng rng = Rng::stream(ctx.seed, step, static_cast<std::uint64_t>(sweep), 2);
            for (std::size_t i = 0; i < m; ++i) {
                const std::uint32_t k = rng.below(static_cast<std::uint32_t>(m));
                order[i] = subset ? rows[k] : static_cast<std::int32_t>(k);
            }
            break;
        }
        case SweepOrder::RandomKeys: {
            // Ascending priority: a key drawn per contact and sweep, so that
            // each process orders its own rows as the serial sweep would.
            std::vector<std::pair<std::uint64_t, ContactKey>> prio(rows_.size());
            for (const std::int32_t i : order) {
                const auto c = static_cast<std::size_t>(i);
                const ContactKey key = orderKeys_[c];
                prio[c] = {sweepPriority(ctx.seed, step, sweep, key), key};
            }
            std::sort(order.begin(), order.end(), [&](std::int32_t a, std::int32_t b) {
                return prio[static_cast<std::size_t>(a)] < prio[static_cast<std::size_t>(b)];
            });
            break;
        }
    }
}

void CdSolver::planSweep(SweepPlan& plan, LevelScratch& scratch, const StepContext& ctx, int sweep,
                         bool levels) const {
    buildOrder(plan.seq, ctx, sweep);
    plan.levelStart.clear();
    // More levels than levelOrder handles (a mobile body on hundreds of
    // contacts) leave the plan without levels: that sweep runs serially.
    if (levels)
        levelOrder(plan.seq, plan.levelStart, pairs_, bodies_.size(),
                   settings_.order != SweepOrder::RandomSequential && ownRows_.empty(),  // or a subset
                   scratch);
}

template <class Update>
void CdSolver::runPass(const SweepPlan& plan, const PassOrder& order, Update update) {
    RangePass<Update> pass(rows_, bodies_, masks_, tables_, update);
    schedule_->run(plan, order, pass, bodies_);
}

bool CdSolver::oneOrder() const {
    return settings_.order == SweepOrder::Fixed || settings_.order == SweepOrder::ShuffleOnce ||
           settings_.order == SweepOrder::Jacobi;
}

void CdSolver::planSweeps(const StepContext& ctx, int sweep, int count, bool parallel) {
    planned_ = ctx;
    plannedSweep_ = sweep;
    const auto threads = static_cast<std::size_t>(omp_get_max_threads());
    const auto plans = static_cast<std::size_t>(count);
    if (plans_.size() < plans) plans_.resize(plans);
    if (scratch_.size() < threads) scratch_.resize(threads);
    // The plans of a batch's sweeps are independent of each other: built in
    // parallel, one sweep per thread. One order per step (fixed,
    // shuffle-once) is planned once.
    const int toBuild = (oneOrder() && sweep > 0) ? 0 : (oneOrder() ? 1 : count);
#pragma omp parallel for schedule(static, 1) if (parallel && toBuild > 1)
    for (int s = 0; s < toBuild; ++s) {
        const auto me = static_cast<std::size_t>(omp_get_thread_num());
        planSweep(plans_[static_cast<std::size_t>(s)], scratch_[me], ctx, sweep + s,
                  parallel && settings_.order != SweepOrder::Jacobi);  // (Jacobi applies in row order)
    }
}

std::size_t CdSolver::runSweep(int s) {
    if (settings_.order == SweepOrder::Jacobi) {
        // Not Gauss–Seidel: every row's impulse from the velocities at the
        // sweep's start, then all applied together (the parallel update CD §2.5
        // calls unstable). Applied in row (key) order: the same bits for any threads.
        jacobi_.resize(rows_.size());
        for (std::size_t c = 0; c < rows_.size(); ++c) {
            const SolverRow& r = rows_[c];
            jacobi_[c] = rowImpulse<true>(r, relativeVelocity(r, bodies_, tables_), tables_);
        }
        runPass(plans_[0], PassOrder{}, [this](SolverRow& r, std::vector<SolverBody>& bodies,
                                               const std::vector<BodyMasks>& masks, const RowTables& tables) {
            setImpulse<true>(r, jacobi_[static_cast<std::size_t>(&r - tables.rows)], bodies, masks, tables);
        });
        return 0;
    }
    const SweepPlan& plan = plans_[oneOrder() ? 0 : static_cast<std::size_t>(s)];
    if (settings_.order == SweepOrder::RandomSequential)
        for (SolverRow& r : rows_) r.dP = 0.0f;  // a row drawn no time in this sweep did not change
    const PassOrder order{settings_.order == SweepOrder::RandomKeys, planned_.seed,
                          static_cast<std::uint64_t>(planned_.step), plannedSweep_ + s};
    const bool clumps = !tables_.clump.empty();
    if (proximal_ && clumps) runPass(plan, order, ProximalLaw<true>{anchors_.data(), settings_.proximalEta});
    else if (proximal_) runPass(plan, order, ProximalLaw<false>{anchors_.data(), settings_.proximalEta});
#if MOREAU_CLUMP_ROWS_AVX2
    else if (clumps && vectorRows()) runPass(plan, order, PlainLawAvx2{});
#endif
    else if (clumps) runPass(plan, order, PlainLaw<true>{});
    else runPass(plan, order, PlainLaw<false>{});
    return plan.levelStart.empty() ? 0 : plan.levelStart.size() - 1;
}

void CdSolver::sums(double impulseFloor, double& sumDP, double& sumP, std::int64_t& violations) const {
    const double eps = settings_.epsilon;
    const auto all = rowSums<3>(
        [&](const SolverRow& r, std::array<double, 3>& acc) {
            const double p = r.P.norm(), dp = static_cast<double>(r.dP);
            acc[0] += dp;
            acc[1] += p;
            if (dp > eps * p + impulseFloor) acc[2] += 1.0;  // eq. 35 with floor, in impulse units
        },
        kSumBlock);
    sumDP = all[0];
    sumP = all[1];
    violations = static_cast<std::int64_t>(all[2]);  // counts are exact below 2^53
}

Vec3 CdSolver::relativeVelocityOf(const SolverRow& r) const { return relativeVelocity(r, bodies_, tables_); }

template <std::size_t N, class Term>
std::array<double, N> CdSolver::rowSums(Term term, std::size_t block) const {
    const std::size_t m = rows_.size();
    std::array<double, N> total{};
    if (schedule_->keyedSums()) {
        std::vector<double> terms(N * m, 0.0);
        for (std::size_t c = 0; c < m; ++c) {
            std::array<double, N> one{};
            term(rows_[c], one);
            std::copy(one.begin(), one.end(), terms.begin() + static_cast<std::ptrdiff_t>(N * c));
        }
        schedule_->keyedSum(terms, N, block, total.data());
        return total;
    }
    // Fixed blocks summed in block order: the same bits for any thread count.
    const std::size_t nBlocks = m == 0 ? 0 : (m - 1) / block + 1;
    std::vector<std::array<double, N>> part(nBlocks, std::array<double, N>{});
#pragma omp parallel for schedule(static) if (m > kParallelRows)
    for (std::size_t blk = 0; blk < nBlocks; ++blk) {
        const std::size_t end = blk + 1 == nBlocks ? m : (blk + 1) * block;
        for (std::size_t c = blk * block; c < end; ++c) term(rows_[c], part[blk]);
    }
    for (const auto& p : part)
        for (std::size_t k = 0; k < N; ++k) total[k] += p[k];
    schedule_->sum(total.data(), N);
    return total;
}

double CdSolver::freeVelocityNorm2() const {
    // u with no impulse applied yet: q = H^T v_free (+ the gap term of eq. 33).
    return rowSums<1>(
        [this](const SolverRow& r, std::array<double, 1>& acc) {
            if (r.mn > 0.0) acc[0] += (relativeVelocity(r, bodies_, tables_) + r.bias * r.n).squaredNorm();
        },
        kSumBlock)[0];
}

double CdSolver::naturalError() const {
    const auto s = rowSums<3>(
        [this](const SolverRow& r, std::array<double, 3>& acc) {
            if (r.mn == 0.0) return;
            const Vec3 u = relativeVelocity(r, bodies_, tables_) + r.bias * r.n;
            acc[0] += naturalMapResidual2(r.P, u, r.n, tables_.mu[r.friction]);
            acc[1] += r.P.squaredNorm();
            acc[2] += u.squaredNorm();
        },
        kSumBlock);
    return moreau::naturalError(s[0], qNorm2_, s[1], s[2]);
}

CdStepStats CdSolver::step(World& world, std::vector<Contact>& contacts, const StepContext& ctx) {
    const CdStepStats stats = solve(world, contacts, ctx);
    integrate(world, ctx.dt);
    return stats;
}

CdStepStats CdSolver::solve(World& world, std::vector<Contact>& contacts, const StepContext& ctx) {
    StepProfile& t = stageSeconds_;
    t = StepProfile{};
    auto clock = std::chrono::steady_clock::now();
    prepare(world, contacts, ctx);         // free velocities (eq. 23); rows: m_n, M_t (eqs. 17-18), g_pos/dt (eq. 33)
    qNorm2_ = needsError() ? freeVelocityNorm2() : 0.0;  // ‖q‖ of the natural-map error
    if (stepObserver_) stepObserver_->posed(*this);  // before any impulse
    lap(clock, t.cdPrepare);
    CdStepStats stats;
    if (settings_.solver != CdSolverFamily::GaussSeidel) {
        // Another family (cd.solver): the step posed as a local problem,
        // solved whole from last step's reactions, its impulses applied.
        if (schedule_->shared())
            throw InputError("key 'cd.solver': " + std::string(lawName(kCdSolverNames, settings_.solver)) +
                             " solves a step's whole problem on one process (allowed on MPI ranks: gauss-seidel)");
        lap(clock, t.cdWarmStart);
        stats = solveWhole(contacts, ctx);
        lap(clock, t.cdSweeps);
    } else {
        schedule_->start(bodies_);
        warmStart(contacts, ctx.dt);           // last step's reactions applied
        schedule_->synchronize(bodies_);       // ... by every process
        lap(clock, t.cdWarmStart);
        stats = iterate(ctx);  // sweeps of the shock law (eq. 34) until the criterion (eqs. 35-37)
        lap(clock, t.cdSweeps);
    }
    if (stepObserver_) stepObserver_->solved(*this);
    checkFinite(world, ctx);               // a diverged step writes nothing back
    store(world, contacts, ctx.dt);        // reactions into the contacts, new velocities into the world (eq. 2)
    releaseBuffers();
    lap(clock, t.cdStore);
    return stats;
}

void CdSolver::addStageSeconds(StepProfile& profile) const {
    profile.cdPrepare += stageSeconds_.cdPrepare;
    profile.cdWarmStart += stageSeconds_.cdWarmStart;
    profile.cdSweeps += stageSeconds_.cdSweeps;
    profile.cdStore += stageSeconds_.cdStore;
}

/// The stopping rule of the sweeps: fixed N_I (eq. 37), local (eq. 35 with
/// the force floor δ) or global (eq. 36), and the residual Σ|ΔP|/Σ|P|.
struct CdSolver::StopRule {
    const CdSolver& solver;
    double impulseFloor;  ///< eq. 35's floor δ is a force; the sweeps work with impulses R Δt
    bool needSums;
    double prevSumP = 0.0;
    /// Natural criterion: the error at its last halving, and the sweep then
    /// (the stall of cd.proximal = stall: kStallSweeps without halving).
    double best = std::numeric_limits<double>::infinity();
    int bestSweep = 0;
    static constexpr int kStallSweeps = 1000;
    bool stalled(int sweeps) const { return sweeps - bestSweep >= kStallSweeps; }

    StopRule(const CdSolver& s, const StepContext& ctx)
        : solver(s),
          impulseFloor(s.settings_.delta * ctx.dt),
          needSums((s.settings_.criterion != Criterion::Fixed && s.settings_.criterion != Criterion::Natural) ||
                   s.recordHistory_) {
        if (s.settings_.criterion == Criterion::Global)  // one block: a plain running sum
            prevSumP = s.rowSums<1>([](const SolverRow& r, std::array<double, 1>& acc) { acc[0] += r.P.norm(); },
                                    std::numeric_limits<std::size_t>::max())[0];
    }
    /// Whether the natural criterion evaluates its error after `sweeps` sweeps.
    bool checks(int sweeps, bool last) const {
        return solver.settings_.criterion == Criterion::Natural &&
               (last || sweeps % std::max(1, solver.settings_.checkEvery) == 0);
    }
    /// The residual Σ|ΔP|/Σ|P| of the last sweep (and the local criterion's count).
    void residual(CdStepStats& stats, std::vector<double>& history, std::int64_t& violations, double& sumP) const {
        double sumDP = 0.0;
        solver.sums(impulseFloor, sumDP, sumP, violations);
        stats.residual = sumP > 0.0 ? sumDP / sumP : 0.0;
        if (solver.recordHistory_) history.push_back(stats.residual);
    }
    /// After `sweeps` sweeps: whether the criterion is met; `last` forces the residual.
    bool met(CdStepStats& stats, std::vector<double>& history, int sweeps, bool last) {
        double sumP = 0.0;
        std::int64_t violations = 0;
        if (needSums || last) residual(stats, history, violations, sumP);
        switch (solver.settings_.criterion) {
            case Criterion::Fixed: return false;
            case Criterion::Natural:
                if (!checks(sweeps, last)) return false;
                stats.error = solver.naturalError();
                if (stats.error < 0.5 * best) {
                    best = stats.error;
                    bestSweep = sweeps;
                }
                return stats.error <= solver.settings_.epsilon;
            case Criterion::Local: return violations == 0;
            case Criterion::Global: {
                const bool done = std::abs(sumP - prevSumP) <= solver.settings_.epsilon * sumP;  // eq. 36
                prevSumP = sumP;
                return done;
            }
        }
        return false;
    }
};

CdStepStats CdSolver::iterate(const StepContext& ctx) {
    residualHistory_.clear();
    CdStepStats stats;
    const std::size_t m = rows_.size();
    const bool fixed = settings_.criterion == Criterion::Fixed;
    const int maxSweeps = fixed ? settings_.iterations : settings_.maxIterations;
    StopRule criterion(*this, ctx);
    const auto sweepStart = std::chrono::steady_clock::now();
    levelsPerSweep_ = 0.0;
    if (m > 0 || schedule_->shared()) {  // every process sweeps as often as the others: their exchanges pair up
        // (A replayed serial sweep keeps its order: no levels.)
        const bool parallel = omp_get_max_threads() > 1 && m > kParallelRows && schedule_->levels();
        const int batch = parallel ? std::min(maxSweeps, omp_get_max_threads()) : 1;
        bool done = false;
        int sweep = 0;
        std::size_t levels = 0;
        // The proximal term (docs/convergence.md): from the start (on), once
        // the natural error stalls (stall), or never (off). Every
        // cd.proximal_every sweeps its anchor moves to the current impulses.
        int proxStart = settings_.proximal == Proximal::On ? 0 : -1;
        auto anchor = [&] {
            anchors_.resize(m);
            for (std::size_t c = 0; c < m; ++c) anchors_[c] = rows_[c].P;
            proximal_ = true;
        };
        if (proxStart == 0) anchor();
        while (!done && sweep < maxSweeps) {
            const int count = std::min(batch, maxSweeps - sweep);
            planSweeps(ctx, sweep, count, parallel);
            for (int s = 0; s < count && !done; ++s, ++sweep) {
                levels += runSweep(s);
                schedule_->synchronize(bodies_);  // the shared bodies from every process's sweep
                if (proxStart >= 0 && (sweep + 1 - proxStart) % std::max(1, settings_.proximalEvery) == 0) anchor();
                done = criterion.met(stats, residualHistory_, sweep + 1, sweep + 1 == maxSweeps);
                if (proxStart < 0 && settings_.proximal == Proximal::Stall && criterion.stalled(sweep + 1)) {
                    proxStart = sweep + 1;
                    anchor();
                }
                if (observer_ && observer_(sweep + 1, rows_)) done = true;
            }
        }
        proximal_ = false;
        stats.proximalFrom = proxStart;
        stats.iterations = sweep;
        stats.converged = fixed || done;
        levelsPerSweep_ = sweep > 0 ? static_cast<double>(levels) / sweep : 0.0;
        if (!criterion.needSums && sweep < maxSweeps) {
            double sumP = 0.0;
            std::int64_t violations = 0;
            criterion.residual(stats, residualHistory_, violations, sumP);
        }
        // The error of the final iterate, where asked for and not just measured.
        if (settings_.measureError && !criterion.checks(sweep, sweep == maxSweeps)) stats.error = naturalError();
    } else if (needsError()) {
        stats.error = 0.0;
    }
    sweepSeconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - sweepStart).count();
    return stats;
}

/// cd.solver other than gauss-seidel: the step posed as a local problem
/// (localProblem, before any impulse), solved whole by its family from last
/// step's reactions (warm start), and the impulses applied to the bodies.
CdStepStats CdSolver::solveWhole(const std::vector<Contact>& contacts, const StepContext& ctx) {
    const LocalProblem p = localProblem();  // the bodies at their free velocities
    const std::size_t m = rows_.size();
    std::vector<Mat3> frame(m);
    std::vector<double> r(3 * m, 0.0);
    for (std::size_t c = 0; c < m; ++c) {
        frame[c] = contactFrameMatrix(rows_[c].n);
        if (settings_.warmStart && rows_[c].mn != 0.0) {  // last step's reaction, in the contact's frame
            const Vec3 f = frame[c].transpose() * Vec3(contacts[c].history.reaction * ctx.dt);
            for (int k = 0; k < 3; ++k) r[3 * c + static_cast<std::size_t>(k)] = f[k];
        }
    }
    const auto start = std::chrono::steady_clock::now();
    const LocalSolveResult res = solveLocalProblem(p, r, settings_, ctx.seed, iterateObserver_);
    // The impulses onto the bodies, serially in key order (as warmStart's).
    SweepPlan plan;
    for (std::size_t c = 0; c < m; ++c) {
        rows_[c].P = rows_[c].mn != 0.0 ? Vec3(frame[c] * Vec3(r[3 * c], r[3 * c + 1], r[3 * c + 2])) : Vec3::Zero();
        if (rows_[c].mn != 0.0) plan.seq.push_back(static_cast<std::int32_t>(c));
    }
    runPass(plan, PassOrder{}, [](SolverRow& row, std::vector<SolverBody>& bodies, const std::vector<BodyMasks>& masks,
                                  const RowTables& tables) { applyImpulse<true>(row, bodies, masks, tables, row.P); });
    sweepSeconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    levelsPerSweep_ = 0.0;
    residualHistory_.clear();
    CdStepStats stats;
    stats.iterations = res.sweeps;
    stats.converged = res.converged;
    stats.error = res.error;
    return stats;
}

void CdSolver::checkFinite(const World& world, const StepContext& ctx) {
    std::size_t bad = bodies_.size();
    for (std::size_t i = 0; i < bodies_.size() && bad == bodies_.size(); ++i)
        if (!bodies_[i].v.allFinite() || !bodies_[i].w.allFinite()) bad = i;
    const bool here = bad < bodies_.size();
    if (!schedule_->any(here)) return;
    // (A grain's number is local to a rank's part in a distributed run.)
    const std::string what = !here ? std::string("a body of another rank")
                             : world.isWall(static_cast<BodyId>(bad)) ? "wall '" + world.wallName[bad - world.numGrains] + "'"
                                                                      : "grain " + std::to_string(bad);
    releaseBuffers();
    throw DivergenceError("step " + std::to_string(ctx.step + 1) + " (t = " + std::to_string(world.time + ctx.dt) +
                          "): the velocity of " + what +
                          " became non-finite in the contact solver; check the time step, masses and applied "
                          "forces of the scene (the state before this step is kept)");
}

void CdSolver::releaseBuffers() {
    // Everything here is rebuilt by the next step. Releasing it keeps the peak
    // memory of a run to one copy of the contacts plus the rows (about 950
    // bytes per grain at 3 contacts per grain); re-allocating costs ~1% of a step.
    std::vector<SolverRow>().swap(rows_);
    std::vector<std::array<std::int32_t, 2>>().swap(pairs_);
    std::vector<SolverBody>().swap(bodies_);
    std::vector<BodyMasks>().swap(masks_);
    std::vector<SweepPlan>().swap(plans_);
    std::vector<LevelScratch>().swap(scratch_);
    std::vector<ContactKey>().swap(orderKeys_);
}

void CdSolver::store(World& world, std::vector<Contact>& contacts, double dt) const {
    for (std::size_t c = 0; c < rows_.size(); ++c) contacts[c].history.reaction = rows_[c].P / dt;
    const std::size_t nb = world.numBodies();
    for (std::size_t i = 0; i < nb; ++i) {
        if (!mobile_[i]) continue;
        world.v[i] = bodies_[i].v;
        world.w[i] = bodies_[i].w;
    }
}

void CdSolver::integrate(World& world, double dt) const {
    // Eq. 1 with the new velocities: every body the solver moves, and the
    // walls whose motion is prescribed.
    const std::size_t nb = world.numBodies();
#pragma omp parallel for schedule(static) if (nb > kParallelRows)
    for (std::size_t i = 0; i < nb; ++i) {
        const bool moves = world.invMass[i].squaredNorm() + world.invInertia[i].squaredNorm() > 0.0 || world.prescribed[i];
        if (moves) world.advancePose(i, dt);
    }
    world.time += dt;
    ++world.step;
}

}  // namespace moreau
