#include "moreau/md/md_solver.hpp"

#include <omp.h>

#include <algorithm>
#include <bit>
#include <cmath>

#include "moreau/core/error.hpp"
#include "moreau/md/force_laws.hpp"
#include "law_kernels.hpp"

namespace moreau {

namespace {

constexpr std::size_t kParallelContacts = 4096;
constexpr std::size_t kEnergyChunk = 256;
constexpr int kScatterThreads = 4;  ///< up to this many threads gather() scatters by body range, beyond it through a CSR  ///< contacts per partial sum of energy and work

}  // namespace


namespace {

using namespace md_kernels;

/// Relative motion of b's contact point against a's for per-body 6-vectors P
/// (translation, rotation), as CD eq. 3 does for velocities.
inline Vec3 relativeAtContact(const std::vector<MdSolver::Vec6>& P, const World& world, const Contact& k) {
    const auto ia = static_cast<std::size_t>(k.a), ib = static_cast<std::size_t>(k.b);
    const Vec3 ta = P[ia].head<3>(), tb = P[ib].head<3>(), ra = P[ia].tail<3>(), rb = P[ib].tail<3>();
    return tb - ta - (world.radius[ia] * ra + world.radius[ib] * rb).cross(k.n);
}

}  // namespace

template <NormalLaw N, TangentialLaw T, bool Stage>
void MdSolver::forceLoop(const World& world, const std::vector<Contact>& contacts,
                         const std::vector<std::int32_t>& previousIndex, double dt) {
    const std::size_t m = contacts.size();
    const MdSettings& s = settings_;
    const std::size_t stride = auxStride_;
    constexpr std::size_t slideAt = lawAux(T);  // the sliding flag's slot when stride > lawAux(T)
    const KuhnSwitches kuhnSwitches{s.kuhnOnset, s.kuhnSlipOnset, s.kuhnSlipRotation, s.kuhnProjection, s.kuhnTwirl};
    // Energy and work are summed per fixed chunk of contacts (then over the
    // chunks in order): the same bits for any thread count, and no
    // per-contact arrays for diagnostics.
    const std::size_t chunks = (m + kEnergyChunk - 1) / kEnergyChunk;
    chunkElastic_.assign(chunks, 0.0);
    chunkWork_.assign(chunks, 0.0);
    // History mode of the general schemes (src/md/integrators.cpp): the
    // increment since the step start replaces V_t dt (dt is 0 there).
    const Vec3* stageInc = Stage ? stageIncrement_.data() : nullptr;
    const double* stageTwirl = Stage ? stageTwirl_.data() : nullptr;
#pragma omp parallel for schedule(static) if (m > 4096)
    for (std::size_t chunk = 0; chunk < chunks; ++chunk) {
        double elasticSum = 0.0, workSum = 0.0;
        const std::size_t chunkEnd = std::min(m, (chunk + 1) * kEnergyChunk);
        for (std::size_t c = chunk * kEnergyChunk; c < chunkEnd; ++c) {
            const Contact& k = contacts[c];
            const auto ia = static_cast<std::size_t>(k.a), ib = static_cast<std::size_t>(k.b);
            const std::int32_t prev = c < previousIndex.size() ? previousIndex[c] : -1;
            const auto p = static_cast<std::size_t>(prev);
            Vec3& spring = springNext_[c];
            // Walton–Braun's F_max is the only normal-law memory; other laws keep no array for it.
            double plasticScratch = 0.0;
            double& plastic = N == NormalLaw::WaltonBraun ? plasticNext_[c] : plasticScratch;
            spring = Vec3::Zero();
            if constexpr (N == NormalLaw::WaltonBraun) plastic = prev >= 0 ? plastic_[p] : 0.0;
            double* aux = stride > 0 ? &auxNext_[c * stride] : nullptr;
            if (stride > 0) {
                if (prev >= 0) std::copy_n(&aux_[p * stride], stride, aux);
                else std::fill_n(aux, stride, 0.0);
            }
            contactForce_[c] = contactTorque_[c] = Vec3::Zero();
            if constexpr (T == TangentialLaw::Kuhn) kuhnWorkStep_[c] = Vec3::Zero();
            const double overlap = -k.gap;
            if (overlap <= 0.0) {  // the contact ends when the overlap vanishes; its memory is forgotten
                plastic = 0.0;
                if (stride > 0) std::fill_n(aux, stride, 0.0);
                if (k.history.reaction.squaredNorm() > 0.0) {
                    // Last step's force did work while the contact opened.
                    const Vec3 V = world.v[ib] - world.v[ia] -
                                   (world.radius[ia] * world.w[ia] + world.radius[ib] * world.w[ib]).cross(k.n);
                    workSum += -0.5 * k.history.reaction.dot(V) * dt;
                }
                continue;
            }
            const Constants cst = contactConstants(s, world, k.a, k.b);
            const double ra = world.radius[ia], rb = world.radius[ib];
            const Vec3& n = k.n;
            // Relative velocity of b's contact point against a's (CD eq. 3 with
            // l_a = r_a n, l_b = −r_b n).
            const Vec3 V = world.v[ib] - world.v[ia] - (ra * world.w[ia] + rb * world.w[ib]).cross(n);
            const double Vn = n.dot(V);
            const Vec3 Vt = V - Vn * n;
            double Fn = normalForce<N>(cst, overlap, -Vn, plastic);
            if (s.clipAttractive && Fn < 0.0) Fn = 0.0;
            bool sliding = false;
            if constexpr (hasSlidingState(T))
                if (stride > slideAt) sliding = aux[slideAt] != 0.0;
            Vec3 Ft = Vec3::Zero();
            double tangentialEnergy = 0.0;
            double work = 0.0;  // Kuhn: tangential work from the algorithm itself
            if constexpr (T == TangentialLaw::Spring) {
                // Carry the spring over, turned into the new tangent plane with
                // its length kept (the contact frame rotates with the pair).
                if (prev >= 0) spring = rotateIntoPlane(spring_[p], n);
                Ft = cundallSpring(cst, Vt, Stage ? stageInc[c] : Vec3(Vt * dt), Fn, spring, sliding);
                tangentialEnergy = 0.5 * cst.kt * spring.squaredNorm();
            } else if constexpr (T == TangentialLaw::Pena) {
                // Peña eqs. 14–15: the increment from the change of the centre
                // line and of the orientations since the last evaluation, not
                // from V_t Δt; the first step of a contact has no reference yet.
                const Vec3 R = world.minimumImage(world.x[ib] - world.x[ia]);
                const Quat& qa = world.q[ia];
                const Quat& qb = world.q[ib];
                Vec3 dxi = Stage ? stageInc[c] : Vec3(Vt * dt);
                if (prev >= 0) {
                    spring = rotateIntoPlane(spring_[p], n);
                    const Quat qaOld(aux[3], aux[4], aux[5], aux[6]), qbOld(aux[7], aux[8], aux[9], aux[10]);
                    if (qaOld.squaredNorm() > 0.0) {
                        const double weight = s.penaTranslation == PenaTranslation::Paper ? ra / (ra + rb) : 1.0;
                        dxi = penaIncrement(R - Vec3(aux[0], aux[1], aux[2]), qaOld, qa, qbOld, qb, ra, rb, n, weight);
                    }
                }
                Ft = cundallSpring(cst, Vt, dxi, Fn, spring, sliding);
                tangentialEnergy = 0.5 * cst.kt * spring.squaredNorm();
                aux[0] = R.x(), aux[1] = R.y(), aux[2] = R.z();
                aux[3] = qa.w(), aux[4] = qa.x(), aux[5] = qa.y(), aux[6] = qa.z();
                aux[7] = qb.w(), aux[8] = qb.x(), aux[9] = qb.y(), aux[10] = qb.z();
            } else if constexpr (T == TangentialLaw::SawTooth) {
                if (prev >= 0) spring = rotateIntoPlane(spring_[p], n);
                spring += Stage ? stageInc[c] : Vec3(Vt * dt);  // ζ of eq. 17, never truncated
                Ft = sawToothForce(spring, cst.mu, Fn, s.zeta0);
                // The current tooth stores |F|²/(2 k_tooth), k_tooth = μ F_n/ζ₀.
                const double muFn = cst.mu * Fn;
                tangentialEnergy = muFn > 0.0 ? Ft.squaredNorm() * s.zeta0 / (2.0 * muFn) : 0.0;
            } else if constexpr (T == TangentialLaw::WaltonBraun) {
                // The spring force T on a (b feels −T) with its Mindlin memory.
                MindlinState st;
                if (prev >= 0) {
                    spring = rotateIntoPlane(spring_[p], n);
                    const Vec3 d = Vec3(aux[0], aux[1], aux[2]);
                    const Vec3 dIn = d - n.dot(d) * n;
                    if (dIn.squaredNorm() > 0.0) st.direction = dIn.normalized();
                    st.reversalForce = aux[3];
                    st.lastSign = aux[4] < 0.0 ? -1.0 : 1.0;
                }
                // A sliding contact (at μ_d) slides on while it keeps moving
                // along its force; a sticking one starts to slide at μ_s.
                const Vec3 dxi = Stage ? stageInc[c] : Vec3(Vt * dt);
                const bool forward = dxi.dot(spring) > 0.0;
                spring = mindlinStep(spring, dxi, cst.kt, sliding ? cst.mu : cst.muStatic, Fn, st);
                const double len = spring.norm(), limitD = cst.mu * std::max(Fn, 0.0);
                if (sliding) sliding = forward && len >= limitD * (1.0 - 1e-3);
                else sliding = Fn > 0.0 && len >= cst.muStatic * Fn * (1.0 - 1e-9);
                if (sliding && len > limitD) spring *= limitD / len;
                // Contact damping while the contact sticks, the total within
                // μ_s F_n; a sliding contact feels μ_d F_n only.
                Ft = sliding ? Vec3(-spring) : capped(Vec3(-spring - cst.gt * Vt), cst.muStatic * std::max(Fn, 0.0));
                tangentialEnergy = cst.kt > 0.0 ? 0.5 * spring.squaredNorm() / cst.kt : 0.0;
                aux[0] = st.direction.x(), aux[1] = st.direction.y(), aux[2] = st.direction.z();
                aux[3] = st.reversalForce;
                aux[4] = st.lastSign;
            } else if constexpr (T == TangentialLaw::Kuhn) {
                // Kuhn et al. Fig. 1; the memory is the tangential force on a,
                // f^{t,t}, and the normal force f^{n,t} at the last evaluation.
                KuhnInput in;
                in.forceStart = prev >= 0 ? spring_[p] : Vec3::Zero();
                in.normalStart = prev >= 0 ? aux[0] : 0.0;
                in.normalEnd = Fn;
                in.overlapEnd = overlap;
                // Δū of eq. 5 with Kuhn's contact vectors, which end at the
                // contact point in the middle of the overlap (r − ξ/2): then a
                // rigid rotation of an overlapping pair moves nothing.
                in.movement = Stage ? stageInc[c] : Vec3((V + 0.5 * overlap * (world.w[ia] + world.w[ib]).cross(n)) * dt);
                in.n = n;
                in.twirlAngle = Stage ? stageTwirl[c] : dt * (world.w[ia] + world.w[ib]).dot(n);
                in.kt = cst.kt;
                in.muStatic = cst.muStatic;
                in.mu = cst.mu;
                in.slidingBefore = sliding;
                KuhnOutput out = kuhnStep(in, kuhnSwitches);
                if (Stage && stageAtStart_ && stride > slideAt && prev >= 0 && in.normalStart > 0.0 && sliding &&
                    !out.sliding) {
                    // At the step start (τ → 0⁺) the yield circle has not shrunk
                    // with the normal force yet, so a contact that the committed
                    // step found sliding would read as sticking: keep it sliding.
                    out.sliding = true;
                }
                spring = out.force;
                sliding = out.sliding;
                aux[0] = std::max(Fn, 0.0);
                aux[1] += out.workDissipated;
                kuhnWorkStep_[c] = Vec3(out.work, out.workElastic, out.workDissipated);
                // Contact damping (Kuhn §2, last paragraph: −γ_t ΔU/Δt, here its
                // tangential part) while the contact sticks; a sliding contact
                // feels μ_d F_n only, as with the spring law.
                const double damping = out.sliding ? 0.0 : cst.gt;
                Ft = -out.force - damping * Vt;
                if (!out.sliding) Ft = capped(Ft, cst.muStatic * std::max(Fn, 0.0));
                tangentialEnergy = cst.kt > 0.0 ? 0.5 * out.force.squaredNorm() / cst.kt : 0.0;
                work = out.work + damping * Vt.squaredNorm() * dt;
            } else {
                Ft = tangentialForce<T>(cst, Vt, Vn, Fn);
            }
            if constexpr (hasSlidingState(T))
                if (stride > slideAt) aux[slideAt] = sliding ? 1.0 : 0.0;
            contactForce_[c] = Fn * n + Ft;
            contactTorque_[c] = n.cross(Ft);
            // Stored energy: ½ k_n ξ² (linear), 0.4 k̃ ξ^{5/2} (Hertz family),
            // F²/(2 k₂) for Walton–Braun (what unloading gives back).
            double normalEnergy;
            if constexpr (N == NormalLaw::Linear) {
                normalEnergy = 0.5 * cst.kn * overlap * overlap;
            } else if constexpr (N == NormalLaw::WaltonBraun) {
                normalEnergy = Fn > 0.0 ? 0.5 * Fn * Fn / (cst.kn + cst.s * plastic) : 0.0;
            } else {
                normalEnergy = 0.4 * cst.kn * overlap * overlap * std::sqrt(overlap);
            }
            elasticSum += normalEnergy + tangentialEnergy;
            // Work delivered to the contact over the step, trapezoidal in the
            // force (history.reaction holds last step's force on b).
            if constexpr (T == TangentialLaw::Kuhn) {
                const double fnPrev = k.history.reaction.dot(n);
                workSum += -0.5 * (fnPrev + Fn) * Vn * dt + work;
            } else {
                workSum += -0.5 * (k.history.reaction + contactForce_[c]).dot(V) * dt;
            }
        }
        chunkElastic_[chunk] = elasticSum;
        chunkWork_[chunk] = workSum;
    }
}

void MdSolver::setAuxStride() {
    // The sliding flag: for μ_s ≠ μ_d, and for Kuhn's law in the stages'
    // history mode (its evaluation at the step start keeps the committed
    // classification, see forceLoop).
    const TangentialLaw t = settings_.tangential;
    const bool flag = settings_.muStaticRatio != 1.0 || (historyMode_ && t == TangentialLaw::Kuhn);
    auxStride_ = lawAux(t) + (hasSlidingState(t) && flag ? 1 : 0);
}

void MdSolver::computeForces(const World& world, const std::vector<Contact>& contacts,
                             const std::vector<std::int32_t>& previousIndex, double dt) {
    const std::size_t m = contacts.size();
    springNext_.resize(m);
    plasticNext_.resize(settings_.normal == NormalLaw::WaltonBraun ? m : 0);
    contactForce_.resize(m);
    contactTorque_.resize(m);
    const TangentialLaw t = settings_.tangential;
    setAuxStride();
    auxNext_.resize(m * auxStride_);
    if (t == TangentialLaw::Kuhn) kuhnWorkStep_.resize(m);
    // The law pair is chosen once per step; the loop is compiled for it.
    auto loop = [&]<NormalLaw N, TangentialLaw T>() {
        if (useStageIncrement_) forceLoop<N, T, true>(world, contacts, previousIndex, dt);
        else forceLoop<N, T, false>(world, contacts, previousIndex, dt);
    };
    auto withTangential = [&]<NormalLaw N>() {
        switch (settings_.tangential) {
            case TangentialLaw::None: loop.template operator()<N, TangentialLaw::None>(); break;
            case TangentialLaw::Coulomb: loop.template operator()<N, TangentialLaw::Coulomb>(); break;
            case TangentialLaw::Viscous: loop.template operator()<N, TangentialLaw::Viscous>(); break;
            case TangentialLaw::ViscousCoulomb:
                loop.template operator()<N, TangentialLaw::ViscousCoulomb>();
                break;
            case TangentialLaw::Spring: loop.template operator()<N, TangentialLaw::Spring>(); break;
            case TangentialLaw::WaltonBraun:
                loop.template operator()<N, TangentialLaw::WaltonBraun>();
                break;
            case TangentialLaw::SawTooth:
                loop.template operator()<N, TangentialLaw::SawTooth>();
                break;
            case TangentialLaw::Kuhn: loop.template operator()<N, TangentialLaw::Kuhn>(); break;
            case TangentialLaw::Pena: loop.template operator()<N, TangentialLaw::Pena>(); break;
        }
    };
    switch (settings_.normal) {
        case NormalLaw::Linear: withTangential.template operator()<NormalLaw::Linear>(); break;
        case NormalLaw::Hertz: withTangential.template operator()<NormalLaw::Hertz>(); break;
        case NormalLaw::HertzDamped: withTangential.template operator()<NormalLaw::HertzDamped>(); break;
        case NormalLaw::HertzKuwabaraKono: withTangential.template operator()<NormalLaw::HertzKuwabaraKono>(); break;
        case NormalLaw::WaltonBraun: withTangential.template operator()<NormalLaw::WaltonBraun>(); break;
    }
    elastic_ = 0.0;
    for (double e : chunkElastic_) elastic_ += e;
}

void MdSolver::commitContacts(std::vector<Contact>& contacts) {
    // The work of the step counts once, when its forces are committed
    // (sums in contact order: the same bits for any thread count).
    for (double w : chunkWork_) workIn_ += w;
    if (settings_.tangential == TangentialLaw::Kuhn)
        for (const Vec3& w : kuhnWorkStep_) {
            kuhnWork_.total += w[0];
            kuhnWork_.elastic += w[1];
            kuhnWork_.dissipated += w[2];
        }
    const std::size_t m = contacts.size();
#pragma omp parallel for schedule(static) if (m > kParallelContacts)
    for (std::size_t c = 0; c < m; ++c) contacts[c].history.reaction = contactForce_[c];
    spring_.swap(springNext_);
    plastic_.swap(plasticNext_);
    aux_.swap(auxNext_);
}

std::vector<double> MdSolver::kuhnContactDissipation() const {
    std::vector<double> out;
    if (settings_.tangential != TangentialLaw::Kuhn || auxStride_ == 0) return out;
    const std::size_t m = aux_.size() / auxStride_;
    out.resize(m);
    for (std::size_t c = 0; c < m; ++c) out[c] = aux_[c * auxStride_ + 1];
    return out;
}

void MdSolver::gather(const World& world, const std::vector<Contact>& contacts) {
    // Per-body sums in one fixed order, no atomics on doubles (STYLE.md §8):
    // the contacts in key order. For body i the keys (j, i), j < i, come
    // before (i, j), so its sum is: contacts where it is b, then where it is
    // a, each in key order. One thread scatters in that order directly; more
    // threads gather per body through a CSR in the same order: the same bits.
    const std::size_t nb = world.numBodies(), m = contacts.size();
    const int threads = omp_get_max_threads();
    if (threads > 1 && threads <= kScatterThreads && nb > kParallelContacts) {
        force_.resize(nb);
        torque_.resize(nb);
    } else {
        force_.assign(nb, Vec3::Zero());
        torque_.assign(nb, Vec3::Zero());
    }
    if (threads == 1 || nb <= kParallelContacts) {
        for (std::size_t c = 0; c < m; ++c) {
            const auto ia = static_cast<std::size_t>(contacts[c].a), ib = static_cast<std::size_t>(contacts[c].b);
            force_[ib] += contactForce_[c];
            torque_[ib] -= world.radius[ib] * contactTorque_[c];
            force_[ia] -= contactForce_[c];
            torque_[ia] -= world.radius[ia] * contactTorque_[c];
        }
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
            const std::size_t lo = nb * t / nt, hi = nb * (t + 1) / nt;
            std::fill(force_.begin() + static_cast<std::ptrdiff_t>(lo), force_.begin() + static_cast<std::ptrdiff_t>(hi), Vec3::Zero());
            std::fill(torque_.begin() + static_cast<std::ptrdiff_t>(lo), torque_.begin() + static_cast<std::ptrdiff_t>(hi), Vec3::Zero());
            for (std::size_t c = 0; c < m; ++c) {
                const auto ia = static_cast<std::size_t>(contacts[c].a), ib = static_cast<std::size_t>(contacts[c].b);
                if (ib - lo < hi - lo) {
                    force_[ib] += contactForce_[c];
                    torque_[ib] -= world.radius[ib] * contactTorque_[c];
                }
                if (ia - lo < hi - lo) {
                    force_[ia] -= contactForce_[c];
                    torque_[ia] -= world.radius[ia] * contactTorque_[c];
                }
            }
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

bool md_kernels::advanceLeapfrog(World& world, std::vector<Vec3>& force, std::vector<Vec3>& torque, double dt,
                                 const std::vector<Vec3>* builtAt, double limit2, md_block::DriftKernel drift,
                                 int lanes, bool clearForces) {
    const std::size_t nb = world.numBodies();
    const double tNow = world.time;
    const bool periodic = world.anyPeriodic();
    const bool applied = !world.force.empty();
    const Vec3 g = world.gravity;
    // Raw pointers: the stores must not make the compiler reload the vectors' data pointers.
    Vec3* __restrict X = world.x.data();
    Vec3* __restrict V = world.v.data();
    Vec3* __restrict W = world.w.data();
    Quat* __restrict Q = world.q.data();
    const Vec3* __restrict invMass = world.invMass.data();
    const Vec3* __restrict invInertia = world.invInertia.data();
    Vec3* __restrict F = force.data();
    Vec3* __restrict T = torque.data();
    const Vec3* __restrict built = builtAt ? builtAt->data() : nullptr;
    // Body i; true when it moved beyond √limit2 since the build.
    auto advance = [&](std::size_t i) {
        const Vec3& im = invMass[i];
        const Vec3& ii = invInertia[i];
        const Vec3 Fb = F[i], Tb = T[i];
        if (clearForces) F[i] = T[i] = Vec3::Zero();
        if (im.squaredNorm() + ii.squaredNorm() == 0.0 && !world.prescribed[i]) return false;
        const Vec3 Fi = applied ? Vec3(Fb + world.appliedForce(static_cast<BodyId>(i), tNow)) : Fb;
        for (int k = 0; k < 3; ++k)
            if (im[k] > 0.0) V[i][k] += dt * (im[k] * Fi[k] + g[k]);
        W[i] += dt * ii.cwiseProduct(Tb);
        if (periodic) {
            world.advancePose(i, dt);
        } else {
            X[i] += dt * V[i];
            World::rotate(Q[i], W[i], dt);
        }
        if (!built) return false;
        const Vec3 d = X[i] - built[i];
        return (periodic ? world.minimumImage(d) : d).squaredNorm() > limit2;
    };
    // The grains L at a time through the drift kernel, where it applies
    // (Quat is 4 packed doubles: x, y, z, w); the rest one by one.
    static_assert(sizeof(Quat) == 4 * sizeof(double));
    const auto L = static_cast<std::size_t>(lanes);
    const std::size_t blocks = drift && L > 0 && !periodic && !applied ? world.numGrains / L : 0;
    const md_block::DriftContext ctx{X->data(), V->data(), W->data(), Q->coeffs().data(),
                                     invMass->data(), invInertia->data(), F->data(), T->data(),
                                     built ? built->data() : nullptr, {g.x(), g.y(), g.z()}, dt, limit2,
                                     clearForces};
    int moved = 0;
#pragma omp parallel reduction(| : moved) if (nb > kParallelContacts)
    {
#pragma omp for schedule(static) nowait
        for (std::size_t q = 0; q < blocks; ++q) {
            const md_block::DriftResult r = drift(ctx, q * L);
            moved |= r.moved != 0 ? 1 : 0;
            for (unsigned slow = r.slowRotation; slow != 0; slow &= slow - 1) {
                const std::size_t i = q * L + static_cast<std::size_t>(std::countr_zero(slow));
                World::rotate(Q[i], W[i], dt);
            }
        }
#pragma omp for schedule(static) nowait
        for (std::size_t i = blocks * L; i < nb; ++i) moved |= advance(i) ? 1 : 0;
    }
    world.time += dt;
    ++world.step;
    return moved != 0;
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
#pragma omp parallel reduction(| : anyBad) if (nb > kParallelContacts)
    {
        const auto t = static_cast<std::size_t>(omp_get_thread_num()), nt = static_cast<std::size_t>(omp_get_num_threads());
        anyBad |= forcesFinite(force.data(), torque.data(), t * nb / nt, (t + 1) * nb / nt) ? 0 : 1;
    }
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

template <NormalLaw N>
void MdSolver::forceDerivativeLoop(const World& world, const std::vector<Contact>& contacts,
                                   const std::vector<Vec6>* dU, const std::vector<Vec6>* dV,
                                   std::vector<Vec3>& dF) const {
    const MdSettings& s = settings_;
    const std::size_t m = contacts.size();
#pragma omp parallel for schedule(static) if (m > kParallelContacts)
    for (std::size_t c = 0; c < m; ++c) {
        const Contact& k = contacts[c];
        dF[c] = Vec3::Zero();
        const double overlap = -k.gap;
        if (overlap < 0.0) continue;
        const auto ia = static_cast<std::size_t>(k.a), ib = static_cast<std::size_t>(k.b);
        const Vec3& n = k.n;
        const Vec3 V = world.v[ib] - world.v[ia] - (world.radius[ia] * world.w[ia] + world.radius[ib] * world.w[ib]).cross(n);
        // Exactly touching: the derivative the step ahead sees is the closing side's.
        if (overlap == 0.0 && !(n.dot(V) < 0.0)) continue;
        const Constants cst = contactConstants(s, world, k.a, k.b);
        const Vec3 F = contactForce_[c];
        const double Fn = n.dot(F);
        double kU = 0.0, kV = 0.0;
        double plastic = N == NormalLaw::WaltonBraun ? plasticNext_[c] : 0.0;
        normalRates<N>(cst, overlap, -n.dot(V), plastic, kU, kV);
        if (s.clipAttractive && normalForce<N>(cst, overlap, -n.dot(V), plastic) < 0.0)
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
        const Vec3 ut = u - n.dot(u) * n, vt = v - n.dot(v) * n;
        const Vec3 Ft = F - Fn * n;
        const double ft = Ft.norm(), limit = cst.mu * std::abs(Fn);
        const bool below = limit > 0.0 && ft < limit * (1.0 - 1e-12);
        auto slide = [&] { return ft > 0.0 ? Vec3(Ft / ft * (cst.mu * (Fn < 0.0 ? -dFn : dFn))) : Vec3::Zero(); };
        switch (s.tangential) {
            case TangentialLaw::None: break;
            case TangentialLaw::Coulomb: d += slide(); break;
            case TangentialLaw::Viscous: d += -cst.gt * vt; break;
            case TangentialLaw::ViscousCoulomb: d += below ? Vec3(-cst.gt * vt) : slide(); break;
            case TangentialLaw::Spring: d += below ? Vec3(-cst.kt * ut - cst.gt * vt) : slide(); break;
            case TangentialLaw::Pena: {
                // Eqs. 14–15 to first order: w (Δx_b − Δx_a)_t − (r_a Δθ_a + r_b Δθ_b) × n.
                Vec3 up = ut;
                if (dU && s.penaTranslation == PenaTranslation::Paper) {
                    const double w = world.radius[ia] / (world.radius[ia] + world.radius[ib]);
                    const Vec3 dx = (*dU)[ib].head<3>() - (*dU)[ia].head<3>();
                    up -= (1.0 - w) * (dx - n.dot(dx) * n);
                }
                d += below ? Vec3(-cst.kt * up - cst.gt * vt) : slide();
                break;
            }
            default: break;  // laws without a declared linearisation (checkIntegratorLaws refuses them where needed)
        }
        dF[c] = d;
    }
}

void MdSolver::forceDerivative(const World& world, const std::vector<Contact>& contacts, const std::vector<Vec6>* dU,
                               const std::vector<Vec6>* dV, std::vector<Vec6>& out) const {
    std::vector<Vec3> dF(contacts.size());
    switch (settings_.normal) {
        case NormalLaw::Linear: forceDerivativeLoop<NormalLaw::Linear>(world, contacts, dU, dV, dF); break;
        case NormalLaw::Hertz: forceDerivativeLoop<NormalLaw::Hertz>(world, contacts, dU, dV, dF); break;
        case NormalLaw::HertzDamped: forceDerivativeLoop<NormalLaw::HertzDamped>(world, contacts, dU, dV, dF); break;
        case NormalLaw::HertzKuwabaraKono:
            forceDerivativeLoop<NormalLaw::HertzKuwabaraKono>(world, contacts, dU, dV, dF);
            break;
        case NormalLaw::WaltonBraun: forceDerivativeLoop<NormalLaw::WaltonBraun>(world, contacts, dU, dV, dF); break;
    }
    // One thread, contacts in key order: the same bits for any thread count.
    const std::size_t nb = world.numBodies();
    std::vector<Vec3> f(nb, Vec3::Zero()), t(nb, Vec3::Zero());
    for (std::size_t c = 0; c < contacts.size(); ++c) {
        const auto ia = static_cast<std::size_t>(contacts[c].a), ib = static_cast<std::size_t>(contacts[c].b);
        const Vec3 nxF = contacts[c].n.cross(dF[c]);
        f[ib] += dF[c];
        t[ib] -= world.radius[ib] * nxF;
        f[ia] -= dF[c];
        t[ia] -= world.radius[ia] * nxF;
    }
    out.resize(nb);
    for (std::size_t i = 0; i < nb; ++i) {
        out[i].head<3>() = world.invMass[i].cwiseProduct(f[i]);
        out[i].tail<3>() = world.invInertia[i].cwiseProduct(t[i]);
    }
}

void MdSolver::step(World& world, std::vector<Contact>& contacts, const std::vector<std::int32_t>& previousIndex,
                    const StepContext& ctx) {
    forces(world, contacts, previousIndex, ctx);
    integrate(world, contacts, previousIndex, ctx);
}

void MdSolver::forces(const World& world, std::vector<Contact>& contacts, const std::vector<std::int32_t>& previousIndex,
                      const StepContext& ctx) {
    if (settings_.integrator != Integrator::CD) return;  // the scheme evaluates its own stages (integrate)
    computeForces(world, contacts, previousIndex, ctx.dt);
    gather(world, contacts);
    checkFiniteForces(force_, torque_, ctx.step);
    commitContacts(contacts);
}

void MdSolver::integrate(World& world, std::vector<Contact>& contacts, const std::vector<std::int32_t>& previousIndex,
                         const StepContext& ctx) {
    if (settings_.integrator != Integrator::CD) {
        stepScheme(world, contacts, previousIndex, ctx);
        return;
    }
    advanceLeapfrog(world, force_, torque_, ctx.dt);
}

}  // namespace moreau
