#include "moreau/md/force_stage.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "moreau/core/error.hpp"
#include "moreau/core/parallel.hpp"
#include "moreau/md/force_laws.hpp"
#include "law_kernels.hpp"

namespace moreau {

namespace {

constexpr std::size_t kParallelContacts = 4096;
constexpr std::size_t kEnergyChunk = 256;  ///< contacts per partial sum of energy and work
constexpr int kScatterThreads = 4;  ///< up to this many threads gather() scatters by body range, beyond it through a CSR
/// Slots a normal law may declare (model/law_table.hpp).
constexpr std::size_t kMaxNormalSlots = 4;
static_assert([] {
    for (const auto& law : kNormalLaws)
        if (law.row.extraSlots > static_cast<int>(kMaxNormalSlots)) return false;
    return true;
}());

using namespace md_kernels;

/// Relative motion of b's contact point against a's for per-body 6-vectors P
/// (translation, rotation), as CD eq. 3 does for velocities.
inline Vec3 relativeAtContact(const std::vector<MdForceStage::Vec6>& P, const World& world, const Contact& k) {
    const auto ia = static_cast<std::size_t>(k.a), ib = static_cast<std::size_t>(k.b);
    const Vec3 ta = P[ia].head<3>(), tb = P[ib].head<3>(), ra = P[ia].tail<3>(), rb = P[ib].tail<3>();
    return tb - ta - (world.radius[ia] * ra + world.radius[ib] * rb).cross(k.n);
}

/// Zeroes bodies [lo, hi) of f, t and adds to them each contact's force F_c
/// on b (−F_c on a) and torque −r T_c on both, in contact order. `Ranged`:
/// other bodies are left alone (else [lo, hi) is every body). `Arms` (a
/// world with clumps, whose arms are not along n): the torques are the
/// moments l × F of each body's lever arm instead (for a sphere
/// l_b × F = −r_b n × F_t, the same moment), the arms from `clumps` (a
/// clump's contacts) or `polygons` (a polygon's).
template <bool Ranged, bool Arms = false>
void scatter(const World& world, const std::vector<Contact>& contacts, const Vec3* F, const Vec3* T, std::size_t lo,
             std::size_t hi, std::vector<Vec3>& f, std::vector<Vec3>& t,
             const MdForceStage::ContactArms* clumps = nullptr, const PolygonOverlapGeometry* polygons = nullptr) {
    auto arm = [&](std::size_t c, const Contact& k, BodyId body) {
        if (polygons) return body == k.a ? polygons[c].la : polygons[c].lb;
        return body == k.a ? clumps[c].la : clumps[c].lb;
    };
    std::fill(f.begin() + static_cast<std::ptrdiff_t>(lo), f.begin() + static_cast<std::ptrdiff_t>(hi), Vec3::Zero());
    std::fill(t.begin() + static_cast<std::ptrdiff_t>(lo), t.begin() + static_cast<std::ptrdiff_t>(hi), Vec3::Zero());
    for (std::size_t c = 0; c < contacts.size(); ++c) {
        const Contact& k = contacts[c];
        const auto ia = static_cast<std::size_t>(k.a), ib = static_cast<std::size_t>(k.b);
        if (!Ranged || ib - lo < hi - lo) {
            f[ib] += F[c];
            if constexpr (Arms)
                t[ib] += arm(c, k, k.b).cross(F[c]);
            else
                t[ib] -= world.radius[ib] * T[c];
        }
        if (!Ranged || ia - lo < hi - lo) {
            f[ia] -= F[c];
            if constexpr (Arms)
                t[ia] -= arm(c, k, k.a).cross(F[c]);
            else
                t[ia] -= world.radius[ia] * T[c];
        }
    }
}

}  // namespace

MdForceStage::MdForceStage(const MdSettings& settings, bool historyMode)
    : settings_(settings), layout_(lawSlots(settings, historyMode)), rollingMoment_(rollingMoment(settings.rolling)) {}

template <NormalLaw N, TangentialLaw T>
void MdForceStage::forceLoop(const World& world, const std::vector<Contact>& contacts, const double* committed,
                             double dt, const StageIncrements* stage) {
    using Normal = NormalKernel<N>;
    static_assert(!lawRow(N).beyondContact, "the loop evaluates a contact only while it overlaps");
    const std::size_t m = contacts.size();
    const MdSettings& s = settings_;
    const LawSlots L = layout_;
    const std::size_t stride = L.stride;
    // Energy and work are summed per fixed chunk of contacts (then over the
    // chunks in order): the same bits for any thread count, and no
    // per-contact arrays for diagnostics.
    const std::size_t chunks = (m + kEnergyChunk - 1) / kEnergyChunk;
    chunkElastic_.assign(chunks, 0.0);
    chunkWork_.assign(chunks, 0.0);
    // Stage evaluations of the multi-stage schemes (src/md/integrators/): the
    // increment since the step start replaces V_t dt (dt is 0 there).
    const bool staged = stage != nullptr;
    const Vec3* stageInc = staged ? stage->increment : nullptr;
    const double* stageTwirl = staged ? stage->twirl : nullptr;
    const bool atStart = staged && stage->atStepStart;
    const bool lawWork = lawRow(T).ownWork;
    const RollingMoment rolling = rollingMoment_;
    const bool deforming = world.deforming();
    double* next = next_.data();
    // A world with clumps or polygons: the lever arms of this evaluation
    // (evaluate() found them once per contact, for this loop and the
    // gather). Spheres take sphereContactVelocity, without contactVelocity's
    // shapes branch: 18 fewer instructions per contact in this loop
    // (callgrind, bench md-step staged), where passing the balls into
    // contactVelocity had cost 6 to 23 more.
    const ContactArms* clumps = world.hasClumps() ? clumpArms_.data() : nullptr;
    const PolygonOverlapGeometry* polygons = world.hasPolygons() ? polygonGeometry_.data() : nullptr;
    auto velocity = [&](std::size_t c, const Contact& k) {
        if (!clumps && !polygons) return sphereContactVelocity(world, k);
        const auto ia = static_cast<std::size_t>(k.a), ib = static_cast<std::size_t>(k.b);
        const Vec3& la = polygons ? polygons[c].la : clumps[c].la;
        const Vec3& lb = polygons ? polygons[c].lb : clumps[c].lb;
        return Vec3(world.v[ib] + world.w[ib].cross(lb) - world.v[ia] - world.w[ia].cross(la));
    };
    forEachIndex(chunks, m > 4096, [&](std::size_t chunk) {
        double elasticSum = 0.0, workSum = 0.0;
        const std::size_t chunkEnd = std::min(m, (chunk + 1) * kEnergyChunk);
        for (std::size_t c = chunk * kEnergyChunk; c < chunkEnd; ++c) {
            const Contact& k = contacts[c];
            const auto ia = static_cast<std::size_t>(k.a), ib = static_cast<std::size_t>(k.b);
            // The contact's memory: its committed record, updated in place by the laws.
            double none[1] = {0.0};
            double* mem = stride > 0 ? next + c * stride : none;
            if (stride > 0) std::copy_n(committed + c * stride, stride, mem);
            contactForce_[c] = contactTorque_[c] = Vec3::Zero();
            if (lawWork) lawWorkStep_[c] = Vec3::Zero();
            if (rolling) contactCouple_[c] = Vec3::Zero();
            const double overlap = polygons ? -polygons[c].gap : -k.gap;
            if (overlap <= 0.0) {  // the contact ends when the overlap vanishes; its memory is forgotten
                if (stride > 0) std::fill_n(mem, stride, 0.0);
                if (k.history.reaction.squaredNorm() > 0.0) {
                    // Last step's force did work while the contact opened.
                    Vec3 V = velocity(c, k);
                    if (deforming && !world.isWall(k.b)) V += world.imageVelocity(world.x[ib] - world.x[ia]);
                    workSum += -0.5 * k.history.reaction.dot(V) * dt;
                }
                continue;
            }
            const Constants cst = contactConstants<N>(s, world, k);
            const Vec3& n = polygons ? polygons[c].n : k.n;
            Vec3 V = velocity(c, k);
            if (deforming && !world.isWall(k.b)) V += world.imageVelocity(world.x[ib] - world.x[ia]);  // the image's
            const double Vn = n.dot(V);
            const Vec3 Vt = V - Vn * n;
            // The whole contact as the laws written for the staged loop see it.
            auto state = [&] {
                return ContactState{world, s, ia, ib, n, overlap, V, Vn, Vt, dt, staged, atStart,
                                    staged ? stageInc[c] : Vec3::Zero(), staged ? stageTwirl[c] : 0.0,
                                    contactRadius(world, k, k.a), contactRadius(world, k, k.b),
                                    polygons ? &polygons[c].la : nullptr, polygons ? &polygons[c].lb : nullptr};
            };
            double Fn = Normal::force(cst, overlap, -Vn, mem + L.normal);
            if (s.clipsAttraction() && Fn < 0.0) Fn = 0.0;
            bool sliding = L.sliding >= 0 && mem[L.sliding] != 0.0;
            LawOutput out;
            Vec3 Ft;
            if constexpr (lawRow(T).lanes)
                Ft = laneLawForce<T>(cst, n, Vt, Vn, Fn, staged ? stageInc[c] : Vec3(Vt * dt),
                                     committed + c * stride + L.tangential, mem + L.tangential, sliding, out);
            else
                Ft = TangentialKernel<T>::force(state(), cst, Fn, mem + L.tangential, sliding, out);
            if (L.sliding >= 0) mem[L.sliding] = sliding ? 1.0 : 0.0;
            contactForce_[c] = Fn * n + Ft;
            contactTorque_[c] = n.cross(Ft);
            elasticSum += Normal::energy(cst, overlap, Fn, mem + L.normal) + out.energy;
            // Work delivered to the contact over the step, trapezoidal in the
            // force (history.reaction holds last step's force on b), or the
            // normal force's trapezoid and the law's own tangential work.
            if (out.ownWork) {
                const double fnPrev = k.history.reaction.dot(n);
                workSum += -0.5 * (fnPrev + Fn) * Vn * dt + out.work;
                lawWorkStep_[c] = out.workParts;
            } else {
                workSum += -0.5 * (k.history.reaction + contactForce_[c]).dot(V) * dt;
            }
            if (rolling) {
                // The rolling law's moment on a (−M on b), which scales with
                // the normal law's elastic stiffness.
                LawOutput roll;
                contactCouple_[c] = rolling(state(), cst, Fn, Normal::stiffness(cst, overlap, mem + L.normal),
                                            mem + L.rolling, roll);
                elasticSum += roll.energy;
                workSum += roll.work;
            }
        }
        chunkElastic_[chunk] = elasticSum;
        chunkWork_[chunk] = workSum;
    });
}

void MdForceStage::evaluate(const World& world, const std::vector<Contact>& contacts, const double* committed,
                            double dt, const StageIncrements* stage, const ShapePoses* atThisPose) {
    const std::size_t m = contacts.size();
    next_.resize(m * layout_.stride);
    contactForce_.resize(m);
    contactTorque_.resize(m);
    if (lawRow(settings_.tangential).ownWork) lawWorkStep_.resize(m);
    if (rollingMoment_) contactCouple_.resize(m);
    shapes_ = &poses_;
    if (world.hasShapes()) {
        if (atThisPose && atThisPose->current(world)) shapes_ = atThisPose;
        else poses_.update(world);
    }
    if (world.hasPolygons()) {
        polygonGeometry_.resize(m);
        forEachIndex(m, m > kParallelContacts,
                     [&](std::size_t c) { polygonGeometry_[c] = polygonOverlapGeometry(world, *shapes_, contacts[c]); });
    } else if (world.hasClumps()) {
        clumpArms_.resize(m);
        forEachIndex(m, m > kParallelContacts, [&](std::size_t c) {
            const Contact& k = contacts[c];
            clumpArms_[c] = {leverArm(*shapes_, k, k.a), leverArm(*shapes_, k, k.b)};
        });
    }
    // The law pair is chosen once per step; the loop is compiled for it.
    withNormalLaw(settings_.normal, [&]<NormalLaw N>() {
        withTangentialLaw(settings_.tangential,
                          [&]<TangentialLaw T>() { forceLoop<N, T>(world, contacts, committed, dt, stage); });
    });
    elastic_ = 0.0;
    for (double e : chunkElastic_) elastic_ += e;
}

void MdForceStage::commit(std::vector<Contact>& contacts, ContactSlots& slots, bool work) {
    // The work of the step counts once, when its forces are committed
    // (sums in contact order: the same bits for any thread count).
    if (work)
        for (double w : chunkWork_) workIn_ += w;
    if (lawRow(settings_.tangential).ownWork)
        for (const Vec3& w : lawWorkStep_) {
            lawWork_.total += w[0];
            lawWork_.elastic += w[1];
            lawWork_.dissipated += w[2];
        }
    setReactions(contacts);
    slots.stride = layout_.stride;
    slots.values.swap(next_);
}

void MdForceStage::setReactions(std::vector<Contact>& contacts) const {
    const std::size_t m = contacts.size();
    forEachIndex(m, m > kParallelContacts, [&](std::size_t c) { contacts[c].history.reaction = contactForce_[c]; });
    if (polygonGeometry_.size() == m)  // a world of polygons: the overlap's normal and equivalent gap
        forEachIndex(m, m > kParallelContacts, [&](std::size_t c) {
            contacts[c].n = polygonGeometry_[c].n;
            contacts[c].gap = polygonGeometry_[c].gap;
        });
}

void MdForceStage::checkFinite(long step) const { md_kernels::checkFiniteForces(force_, torque_, step); }

void MdForceStage::gather(const World& world, const std::vector<Contact>& contacts) {
    gatherForces(world, contacts);
    world.addGluedForces(force_);
    if (!rollingMoment_) return;
    // The rolling moments, M on a and −M on b, in contact order (one thread:
    // the same bits for any thread count).
    for (std::size_t c = 0; c < contacts.size(); ++c) {
        torque_[static_cast<std::size_t>(contacts[c].a)] += contactCouple_[c];
        torque_[static_cast<std::size_t>(contacts[c].b)] -= contactCouple_[c];
    }
}

void MdForceStage::gatherForces(const World& world, const std::vector<Contact>& contacts) {
    // Per-body sums in one fixed order, no atomics on doubles (STYLE.md §8):
    // the contacts in key order. For body i the keys (j, i), j < i, come
    // before (i, j), so its sum is: contacts where it is b, then where it is
    // a, each in key order. One thread scatters in that order directly; more
    // threads gather per body through a CSR in the same order: the same bits.
    const std::size_t nb = world.numBodies(), m = contacts.size();
    const int threads = omp_get_max_threads();
    force_.resize(nb);
    torque_.resize(nb);
    if (world.hasShapes()) {  // one thread, in contact order: the same bits for any thread count
        scatter<false, true>(world, contacts, contactForce_.data(), nullptr, 0, nb, force_, torque_, clumpArms_.data(),
                             world.hasPolygons() ? polygonGeometry_.data() : nullptr);
        return;
    }
    if (threads == 1 || nb <= kParallelContacts) {
        scatter<false>(world, contacts, contactForce_.data(), contactTorque_.data(), 0, nb, force_, torque_);
        return;
    }
    if (threads <= kScatterThreads) {
        // Few threads: each owns a fixed range of bodies and scatters every
        // contact into the bodies it owns, in contact order — the serial
        // order for each body, with no per-step index to build.
#pragma omp parallel num_threads(threads)
        {
            const auto t = static_cast<std::size_t>(omp_get_thread_num());
            const auto nt = static_cast<std::size_t>(omp_get_num_threads());
            scatter<true>(world, contacts, contactForce_.data(), contactTorque_.data(), nb * t / nt,
                          nb * (t + 1) / nt, force_, torque_);
        }
        return;
    }
    buildByBodyIndex(
        nb, m, [&contacts](std::size_t c) { return std::pair{contacts[c].a, contacts[c].b}; }, aStart_, bStart_, byB_);
#pragma omp parallel for schedule(static)
    for (std::size_t i = 0; i < nb; ++i) {
        Vec3 f = Vec3::Zero(), t = Vec3::Zero();
        const double r = world.radius[i];
        for (auto k = bStart_[i]; k < bStart_[i + 1]; ++k) {
            const auto c = static_cast<std::size_t>(byB_[static_cast<std::size_t>(k)]);
            f += contactForce_[c];
            t -= r * contactTorque_[c];
        }
        // Contacts are sorted by a, so those where i is a are contiguous.
        for (auto c = aStart_[i]; c < aStart_[i + 1]; ++c) {
            f -= contactForce_[static_cast<std::size_t>(c)];
            t -= r * contactTorque_[static_cast<std::size_t>(c)];
        }
        force_[i] = f;
        torque_[i] = t;
    }
}

namespace {
/// Whether n doubles are all finite: x · 0 is 0 for a finite x and NaN
/// otherwise, and a NaN stays in a sum. Eight running sums, so that the
/// compiler can keep them in vector registers.
bool allFinite(const double* p, std::size_t n) {
    double sum[8] = {};
    std::size_t k = 0;
    for (; k + 8 <= n; k += 8)
        for (std::size_t j = 0; j < 8; ++j) sum[j] += p[k + j] * 0.0;
    for (; k < n; ++k) sum[0] += p[k] * 0.0;
    double total = 0.0;
    for (double s : sum) total += s;
    return total == 0.0;
}
}  // namespace

bool md_kernels::forcesFinite(const Vec3* force, const Vec3* torque, std::size_t first, std::size_t last) {
    if (last <= first) return true;
    const std::size_t n = 3 * (last - first);
    return allFinite(force[first].data(), n) && allFinite(torque[first].data(), n);
}

void md_kernels::checkFiniteForces(const std::vector<Vec3>& force, const std::vector<Vec3>& torque, long step) {
    const std::size_t nb = force.size();
    // The common case in one streaming pass (an equal share of the bodies per
    // thread); the first bad body only when there is one.
    int anyBad = 0;
    parallelRegion(nb > kParallelContacts, [&] {
        const auto t = static_cast<std::size_t>(omp_get_thread_num());
        const auto nt = static_cast<std::size_t>(omp_get_num_threads());
        const int bad = forcesFinite(force.data(), torque.data(), t * nb / nt, (t + 1) * nb / nt) ? 0 : 1;
#pragma omp atomic
        anyBad |= bad;
    });
    if (!anyBad) return;
    std::size_t bad = nb;
    for (std::size_t i = 0; i < nb; ++i)
        if (!(force[i].allFinite() && torque[i].allFinite())) {
            bad = i;
            break;
        }
    if (bad < nb)
        throw DivergenceError("step " + std::to_string(step + 1) + ": the contact force on body " +
                              std::to_string(bad) +
                              " became non-finite; the time step may be too large for md.kn (keep dt below t_n/20, "
                              "eq. 4)");
}

template <NormalLaw N, TangentialLaw T>
void MdForceStage::forceDerivativeLoop(const World& world, const std::vector<Contact>& contacts,
                                   const std::vector<Vec6>* dU, const std::vector<Vec6>* dV,
                                   std::vector<Vec3>& dF) const {
    const MdSettings& s = settings_;
    const std::size_t m = contacts.size();
    forEachIndex(m, m > kParallelContacts, [&](std::size_t c) {
        const Contact& k = contacts[c];
        dF[c] = Vec3::Zero();
        const double overlap = -k.gap;
        if (overlap < 0.0) return;
        const auto ia = static_cast<std::size_t>(k.a), ib = static_cast<std::size_t>(k.b);
        const Vec3& n = k.n;
        const Vec3 V = contactVelocity(world, k);
        // Exactly touching: the derivative the step ahead sees is the closing side's.
        if (overlap == 0.0 && !(n.dot(V) < 0.0)) return;
        const Constants cst = contactConstants<N>(s, world, k);
        const Vec3 F = contactForce_[c];
        const double Fn = n.dot(F);
        double kU = 0.0, kV = 0.0;
        // The normal law's memory after the last evaluation (a copy: force() may update it).
        double mem[kMaxNormalSlots] = {};
        std::copy_n(next_.data() + c * layout_.stride + layout_.normal, lawRow(N).extraSlots, mem);
        NormalKernel<N>::rates(cst, overlap, -n.dot(V), mem, kU, kV);
        if (s.clipsAttraction() && NormalKernel<N>::force(cst, overlap, -n.dot(V), mem) < 0.0)
            kU = kV = 0.0;  // clipped: no force, no rate
        const Vec3 u = dU ? relativeAtContact(*dU, world, k) : Vec3::Zero();
        const Vec3 v = dV ? relativeAtContact(*dV, world, k) : Vec3::Zero();
        const double dFn = -kU * n.dot(u) - kV * n.dot(v);  // ξ = −gap, so δξ = −n·δu
        Vec3 d = dFn * n;
        if (dU) {
            // The normal turns with the centres: δn = ±P(δx_b − δx_a)/ρ, ρ the
            // centre distance (sphere–sphere) or the centre's distance from a
            // cylinder's axis (planes: ρ = ∞). Gives F_n δn (first derivative
            // exact, geometric stiffness in da/dr).
            Vec3 dx = (*dU)[ib].head<3>() - (*dU)[ia].head<3>();
            double rho = 0.0, sign = 1.0;
            if (!world.isWall(k.b)) {
                rho = world.radius[ia] + world.radius[ib] + k.gap;
            } else if (world.wall(k.b).kind == ShapeKind::Cylinder) {
                const WallShape& w = world.wall(k.b);
                dx -= w.direction.dot(dx) * w.direction;
                rho = w.inside ? w.radius - world.radius[ia] - k.gap : w.radius + world.radius[ia] + k.gap;
                sign = w.inside ? -1.0 : 1.0;
            }
            if (rho > 0.0) d += (sign * Fn / rho) * (dx - n.dot(dx) * n);
        }
        const Vec3 Ft = F - Fn * n;
        const double ft = Ft.norm(), limit = cst.mu * std::abs(Fn);
        if constexpr (lawRow(T).timeDerivatives > 0 || lawRow(T).positionJacobian) {
            // The tangential law's own linearisation (laws without one are
            // refused by checkIntegratorLaws where it is needed).
            Vec3 centres = Vec3::Zero();
            if (dU) {
                const Vec3 dx = (*dU)[ib].head<3>() - (*dU)[ia].head<3>();
                centres = dx - n.dot(dx) * n;
            }
            const TangentialRate rate{cst,
                                      s,
                                      u - n.dot(u) * n,
                                      v - n.dot(v) * n,
                                      limit > 0.0 && ft < limit * (1.0 - 1e-12),
                                      ft > 0.0 ? Vec3(Ft / ft * (cst.mu * (Fn < 0.0 ? -dFn : dFn))) : Vec3::Zero(),
                                      dU != nullptr,
                                      centres,
                                      world.radius[ia],
                                      world.radius[ib]};
            TangentialKernel<T>::rate(rate, d);
        }
        dF[c] = d;
    });
}

void MdForceStage::forceDerivative(const World& world, const std::vector<Contact>& contacts, const std::vector<Vec6>* dU,
                               const std::vector<Vec6>* dV, std::vector<Vec6>& out) const {
    if (world.hasPolygons()) {
        // The laws' rates are written for spheres (the overlap's rate −n·δu,
        // the normal turning with the centre line); a polygon's overlap area
        // changes at (chord / l_c) −n·δu instead. Gear starts its higher
        // derivatives from zero there (docs/polygons.md).
        out.assign(world.numBodies(), Vec6::Zero());
        return;
    }
    auto synced = [this](const std::vector<Vec6>* f, std::vector<Vec6>& copy) -> const std::vector<Vec6>* {
        if (!ghosts_ || !f) return f;
        copy = *f;
        ghosts_(copy);  // a distributed run: the ghosts' entries from their owners
        return &copy;
    };
    dU = synced(dU, syncU_);
    dV = synced(dV, syncV_);
    const std::size_t m = contacts.size(), nb = world.numBodies();
    std::vector<Vec3> dF(m), nxF(m);
    withNormalLaw(settings_.normal, [&]<NormalLaw N>() {
        withTangentialLaw(settings_.tangential,
                          [&]<TangentialLaw T>() { forceDerivativeLoop<N, T>(world, contacts, dU, dV, dF); });
    });
    for (std::size_t c = 0; c < m; ++c) nxF[c] = contacts[c].n.cross(dF[c]);
    // One thread, contacts in key order: the same bits for any thread count.
    std::vector<Vec3> f(nb), t(nb);
    scatter<false>(world, contacts, dF.data(), nxF.data(), 0, nb, f, t);
    out.resize(nb);
    for (std::size_t i = 0; i < nb; ++i) {
        out[i].head<3>() = world.invMass[i].cwiseProduct(f[i]);
        out[i].tail<3>() = world.invInertia[i].cwiseProduct(t[i]);
    }
}

bool MdForceStage::normalForcePulls(const World& world, const Contact& k, const double* memory) const {
    const double overlap = -k.gap;
    if (overlap <= 0.0) return false;
    const Vec3 V = contactVelocity(world, k);
    bool pulls = false;
    withNormalLaw(settings_.normal, [&]<NormalLaw N>() {
        double mem[kMaxNormalSlots] = {};
        if (memory) std::copy_n(memory, lawRow(N).extraSlots, mem);
        pulls = NormalKernel<N>::force(contactConstants<N>(settings_, world, k), overlap, -k.n.dot(V), mem) < 0.0;
    });
    return pulls;
}

}  // namespace moreau
