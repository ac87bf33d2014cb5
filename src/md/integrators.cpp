#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "moreau/core/parallel.hpp"
#include "moreau/contact/detection.hpp"
#include "moreau/core/bytes.hpp"
#include "moreau/core/error.hpp"
#include "moreau/md/md_solver.hpp"
#include "moreau/model/integrator_table.hpp"

// ---------------------------------------------------------------------------
// Stepping of every scheme but cd (docs/md-integrators.md). The state of a
// body is the 6-vector pair (X, V): X the displacement and rotation vector
// since the step start, V the velocity and angular velocity; A = d V/dt.
// Spheres' forces do not depend on their orientation, so the rotation vector
// is integrated like a position and applied to the quaternion once, at the end.

namespace moreau {

namespace {

using Vec6 = MdSolver::Vec6;
using Field = std::vector<Vec6>;

constexpr double kBababEps = 0.193183328;       // Omelyan et al., eq. 12
constexpr double kForestRuthEps = 0.175603596;  // eq. 13
/// Fixed-point iterations of the implicit kick and of the Khakimov divisions;
/// both contract by ~(c Δt)² k/m or c Δt γ/m per iteration.
constexpr int kFixedPointIterations = 12;

/// out = Σ c_k f_k, body by body.
void combine(Field& out, std::initializer_list<std::pair<double, const Field*>> terms) {
    const std::size_t n = terms.begin()->second->size();
    out.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
        Vec6 s = Vec6::Zero();
        for (const auto& [c, f] : terms)
            if (c != 0.0) s += c * (*f)[i];
        out[i] = s;
    }
}


/// v turned into the plane ⊥ n with its length kept (v lies in the plane of
/// the step's first normal: in 2D this is the exact rotation).
Vec3 intoPlane(const Vec3& v, const Vec3& n) {
    const Vec3 in = v - n.dot(v) * n;
    const double len = v.norm(), lenIn = in.norm();
    return lenIn > 0.0 ? Vec3(in * (len / lenIn)) : Vec3::Zero();
}

/// Tangential displacement of b's contact point against a's since the step
/// start (n0 the normal then, k.n the stage's), in the stage's tangent plane.
/// The Cundall spring grows by ∫ P_n(s) V ds with V = v_b − v_a − (r_a ω_a +
/// r_b ω_b) × n(s); with a turning normal both the lever arms and the
/// projection are taken at the mean normal n̄ (midpoint rule: O(Δt³) per step
/// instead of O(Δt²) with the stage normal), then turned into the stage plane.
Vec3 relativeDisplacement(const Field& X, const World& world, const Contact& k, const Vec3& n0) {
    const auto ia = static_cast<std::size_t>(k.a), ib = static_cast<std::size_t>(k.b);
    const Vec3 sum = n0 + k.n;
    const double len = sum.norm();
    const Vec3 mean = len > 0.0 ? Vec3(sum / len) : k.n;
    const Vec3 u = X[ib].head<3>() - X[ia].head<3>() -
                   (world.radius[ia] * X[ia].tail<3>() + world.radius[ib] * X[ib].tail<3>()).cross(mean);
    return intoPlane(u - mean.dot(u) * mean, k.n);
}

/// Acceleration by gravity and applied forces at time t (no contacts).
Vec6 externalAcceleration(const World& world, std::size_t i, double t) {
    Vec6 a = Vec6::Zero();
    const Vec3& im = world.invMass[i];
    if (im.squaredNorm() + world.invInertia[i].squaredNorm() == 0.0) return a;
    const Vec3 F = world.appliedForce(static_cast<BodyId>(i), t);
    for (int k = 0; k < 3; ++k)
        if (im[k] > 0.0) a[k] = im[k] * F[k] + world.gravity[k];
    return a;
}

/// Adams–Bashforth coefficients of v_t, v_{t−Δt}, … (Table 1, signs included).
std::vector<double> adamsBashforth(int k) {
    switch (k) {
        case 2: return {3.0 / 2.0, -1.0 / 2.0};
        case 3: return {23.0 / 12.0, -16.0 / 12.0, 5.0 / 12.0};
        case 4: return {55.0 / 24.0, -59.0 / 24.0, 37.0 / 24.0, -9.0 / 24.0};
        default: return {1901.0 / 720.0, -2774.0 / 720.0, 2616.0 / 720.0, -1274.0 / 720.0, 251.0 / 720.0};
    }
}

/// Adams–Moulton coefficients of v_{t+Δt}, v_t, v_{t−Δt}, … (Table 2, signs included).
std::vector<double> adamsMoulton(int order) {
    switch (order) {
        case 3: return {5.0 / 12.0, 8.0 / 12.0, -1.0 / 12.0};
        case 4: return {9.0 / 24.0, 19.0 / 24.0, -5.0 / 24.0, 1.0 / 24.0};
        default: return {251.0 / 720.0, 646.0 / 720.0, -264.0 / 720.0, 106.0 / 720.0, -19.0 / 720.0};
    }
}

}  // namespace

void MdSolver::reset() {
    history_ = 0;
    haveSignature_ = false;
    pendingKick_ = 0.0;
    gearA_.clear();
}

void MdSolver::saveState(ByteWriter& out) const {
    out.put(std::uint32_t{1});  // the layout of this block
    out.put(workIn_);
    out.put(lawWork_);
    out.put(elastic_);
    out.put(elasticBase_);
    out.put(pendingKick_);
    out.put(static_cast<std::int64_t>(history_));
    out.put(static_cast<std::int64_t>(stepNumber_));
    out.put(static_cast<std::uint8_t>(haveSignature_));
    out.put(touchingSignature_);
    out.put(static_cast<std::uint64_t>(pastV_.size()));
    for (std::size_t k = 0; k < pastV_.size(); ++k) {
        out.putDense(pastV_[k]);
        out.putDense(pastA_[k]);
    }
    for (const Field* f : {&pastDX_, &gearA_, &gearB_, &gearC_, &gearD_}) out.putDense(*f);
}

void MdSolver::loadState(ByteReader& in, std::size_t bodies) {
    if (in.get<std::uint32_t>("MD solver state") != 1) in.fail("MD solver state of another layout");
    workIn_ = in.get<double>("MD work");
    lawWork_ = in.get<TangentialWork>("MD law work");
    elastic_ = in.get<double>("MD elastic energy");
    elasticBase_ = in.get<double>("MD elastic energy");
    pendingKick_ = in.get<double>("MD pending kick");
    history_ = static_cast<long>(in.get<std::int64_t>("MD history length"));
    stepNumber_ = static_cast<long>(in.get<std::int64_t>("MD step"));
    haveSignature_ = in.getBool("MD contact signature");
    touchingSignature_ = in.get<std::uint64_t>("MD contact signature");
    const std::size_t past = in.count(16, "MD history");
    if (past != 0 && past != 4) in.fail("MD history of " + std::to_string(past) + " steps (allowed: 0 or 4)");
    pastV_.assign(past, Field());
    pastA_.assign(past, Field());
    for (std::size_t k = 0; k < past; ++k) {
        pastV_[k] = in.getDense<Vec6>("MD history velocities");
        pastA_[k] = in.getDense<Vec6>("MD history accelerations");
    }
    for (Field* f : {&pastDX_, &gearA_, &gearB_, &gearC_, &gearD_}) *f = in.getDense<Vec6>("MD scheme state");
    if (history_ < 0 || history_ > 4) in.fail("MD history length " + std::to_string(history_) + " (allowed: 0 to 4)");
    auto check = [&](const Field& f) {
        if (!f.empty() && f.size() != bodies)
            in.fail("MD scheme state of " + std::to_string(f.size()) + " bodies, the world has " + std::to_string(bodies));
    };
    for (std::size_t k = 0; k < past; ++k) {
        check(pastV_[k]);
        check(pastA_[k]);
    }
    for (const Field* f : {&pastDX_, &gearA_, &gearB_, &gearC_, &gearD_}) check(*f);
}

std::vector<std::vector<MdSolver::Vec6>*> MdSolver::schemeFields() {
    std::vector<Field*> f;
    for (Field& p : pastV_) f.push_back(&p);
    for (Field& p : pastA_) f.push_back(&p);
    for (Field* p : {&pastDX_, &gearA_, &gearB_, &gearC_, &gearD_}) f.push_back(p);
    return f;
}

std::vector<const std::vector<MdSolver::Vec6>*> MdSolver::schemeFields() const {
    std::vector<const Field*> f;
    for (Field* p : const_cast<MdSolver*>(this)->schemeFields()) f.push_back(p);
    return f;
}

MdSolver::SchemeCarry MdSolver::schemeCarry() const {
    SchemeCarry c;
    c.history = history_;
    c.pendingKick = pendingKick_;
    c.haveSignature = haveSignature_;
    c.signature = touchingSignature_;
    c.past = pastV_.size() == 4;
    const auto fields = schemeFields();
    for (std::size_t j = 0; j < fields.size(); ++j)
        if (!fields[j]->empty()) c.fields |= 1u << j;
    return c;
}

void MdSolver::bodyScheme(std::size_t i, Vec6* out) const {
    for (const Field* f : schemeFields())
        if (!f->empty()) *out++ = (*f)[i];
}

void MdSolver::adoptScheme(const SchemeCarry& carry, std::size_t bodies,
                           const std::function<void(std::size_t, Vec6*)>& entry) {
    history_ = carry.history;
    pendingKick_ = carry.pendingKick;
    haveSignature_ = carry.haveSignature;
    touchingSignature_ = carry.signature;
    pastV_.assign(carry.past ? 4 : 0, Field());
    pastA_.assign(carry.past ? 4 : 0, Field());
    for (Field* f : {&pastDX_, &gearA_, &gearB_, &gearC_, &gearD_}) f->clear();
    const auto fields = schemeFields();
    std::vector<Field*> held;
    for (std::size_t j = 0; j < fields.size(); ++j)
        if (carry.fields & (1u << j)) {
            fields[j]->assign(bodies, Vec6::Zero());
            held.push_back(fields[j]);
        }
    std::vector<Vec6> one(held.size());
    for (std::size_t i = 0; i < bodies && !held.empty(); ++i) {
        entry(i, one.data());
        for (std::size_t j = 0; j < held.size(); ++j) (*held[j])[i] = one[j];
    }
}

void MdSolver::contactDisplacement(const World& world, const std::vector<Vec6>& X, std::vector<Vec3>& out) const {
    const std::size_t m = stage_.size();
    out.resize(m);
    forEachIndex(m, m > 4096, [&](std::size_t c) { out[c] = relativeDisplacement(X, world, stage_[c], n0_[c]); });
}

const std::vector<MdSolver::Vec6>& MdSolver::placeState(World& world, const std::vector<Vec6>& X,
                                                         const std::vector<Vec6>& V) {
    for (std::size_t i = 0; i < world.numBodies(); ++i) {
        world.x[i] = x0_[i] + X[i].head<3>();
        world.v[i] = V[i].head<3>();
        world.w[i] = V[i].tail<3>();
    }
    if (!stageHook_) return X;
    placedX_ = X;
    stageHook_(world, placedX_);
    return placedX_;
}

void MdSolver::evaluate(World& world, const std::vector<Vec6>& X, const std::vector<Vec6>& V, double t,
                        std::vector<Vec6>& A, bool project) {
    const std::size_t nb = world.numBodies(), m = stage_.size();
    const Field& Xs = placeState(world, X, V);
    if (historyMode_) {
        historyForces(world, Xs, t - t0_);
    } else {
        refreshContactGeometry(world, stage_);
        // Stage springs: the step's spring base plus the tangential displacement
        // of the contact point since the step start (the scheme integrates it).
        contactDisplacement(world, Xs, disp_);
        // The laws evaluate from the step's base memory with the stage's
        // spring, indexed by contact, with dt = 0 (the elongation is already
        // the stage's; no Euler increment).
        stageSlots_ = base_;
        if (lawRow(settings_.tangential).spring)
            for (std::size_t c = 0; c < m; ++c) {
                double* spring = stageSlots_.data() + c * layout_.stride + layout_.tangential;
                setSlotVec3(spring, intoPlane(slotVec3(spring), stage_[c].n) + disp_[c]);
            }
        computeForces(world, stage_, stageSlots_.data(), 0.0);
    }
    gather(world, stage_);
    if (forceHook_) forceHook_(stage_, contactForce_, force_);
    A.resize(nb);
    for (std::size_t i = 0; i < nb; ++i) {
        if (!(force_[i].allFinite() && torque_[i].allFinite()))
            throw DivergenceError("step " + std::to_string(stepNumber_ + 1) + ": the contact force on body " +
                                  std::to_string(i) +
                                  " became non-finite; the time step may be too large for md.kn and md.integrator");
        const Vec3& im = world.invMass[i];
        Vec6 a = Vec6::Zero();
        if (im.squaredNorm() + world.invInertia[i].squaredNorm() > 0.0) {
            const Vec3 F = force_[i] + world.appliedForce(static_cast<BodyId>(i), t);
            for (int k = 0; k < 3; ++k)
                if (im[k] > 0.0) a[k] = im[k] * F[k] + world.gravity[k];
            a.tail<3>() = world.invInertia[i].cwiseProduct(torque_[i]);
        }
        A[i] = a;
    }
    if (project && historyMode_) {
        elasticBase_ = elastic_;
    } else if (project) {
        // Coulomb-limited springs of this evaluation become the step's base.
        base_ = next_;
        if (lawRow(settings_.tangential).spring)
            for (std::size_t c = 0; c < m; ++c) {
                double* spring = base_.data() + c * layout_.stride + layout_.tangential;
                setSlotVec3(spring, slotVec3(spring) - disp_[c]);
            }
        elasticBase_ = elastic_;
    }
}

void MdSolver::stageIncrements(const World& world, const std::vector<Vec6>& X, double tau) {
    // What the law adds to the step-start memory at this stage (its dt is 0):
    // Cundall's V_t τ (md.spring_increment = velocity), Kuhn's movement Δū of
    // the contact points in the middle of the overlap and the twirl angle,
    // otherwise the contact point's tangential displacement since the step
    // start (Peña's geometric increment is taken by the law itself from the
    // step-start reference R, q, for contacts that have one).
    const std::size_t m = stage_.size();
    stageIncrement_.resize(m);
    stageTwirl_.assign(m, 0.0);
    const TangentialLaw law = settings_.tangential;
    const bool velocity = law == TangentialLaw::Spring && settings_.springVelocityIncrement;
    // At the step start itself (τ = 0) the increment vanishes, and the laws
    // that tell sliding from sticking by the direction of the increment
    // (walton-braun's "moving along its force", Kuhn's slip test, the sliding
    // flag) would call a sliding contact sticking and add contact damping:
    // they get the limit τ → 0⁺ instead, V_t τ_ε with τ_ε = 1e-9 Δt.
    const bool atStart = tau == 0.0;
    const double tauEps = 1e-9 * stepDt_;
    for (std::size_t c = 0; c < m; ++c) {
        const Contact& k = stage_[c];
        const auto ia = static_cast<std::size_t>(k.a), ib = static_cast<std::size_t>(k.b);
        if (atStart) {
            const Vec3 V = world.v[ib] - world.v[ia] -
                           (world.radius[ia] * world.w[ia] + world.radius[ib] * world.w[ib]).cross(k.n);
            const double overlap = std::max(-k.gap, 0.0);
            if (law == TangentialLaw::Kuhn) {
                stageIncrement_[c] = tauEps * (V + 0.5 * overlap * (world.w[ia] + world.w[ib]).cross(k.n));
                stageTwirl_[c] = tauEps * (world.w[ia] + world.w[ib]).dot(k.n);
            } else {
                stageIncrement_[c] = tauEps * (V - k.n.dot(V) * k.n);
            }
        } else if (velocity) {
            const Vec3 V = world.v[ib] - world.v[ia] -
                           (world.radius[ia] * world.w[ia] + world.radius[ib] * world.w[ib]).cross(k.n);
            stageIncrement_[c] = tau * (V - k.n.dot(V) * k.n);
        } else if (law == TangentialLaw::Kuhn) {
            const Vec3 sum = n0_[c] + k.n;
            const Vec3 mean = sum.norm() > 0.0 ? Vec3(sum.normalized()) : k.n;
            const Vec3 ta = X[ia].tail<3>(), tb = X[ib].tail<3>();
            stageIncrement_[c] = X[ib].head<3>() - X[ia].head<3>() -
                                 (world.radius[ia] * ta + world.radius[ib] * tb).cross(mean) +
                                 0.5 * std::max(-k.gap, 0.0) * (ta + tb).cross(mean);
            stageTwirl_[c] = (ta + tb).dot(mean);
        } else {
            stageIncrement_[c] = relativeDisplacement(X, world, k, n0_[c]);
        }
    }
}

void MdSolver::historyForces(World& world, const std::vector<Vec6>& X, double tau) {
    const std::size_t nb = world.numBodies();
    if (settings_.tangential == TangentialLaw::Pena)
        for (std::size_t i = 0; i < nb; ++i) {
            // Peña's reference is the orientation at the step start: the stage's is needed.
            const Vec3 theta = X[i].tail<3>();
            const double angle = theta.norm();
            world.q[i] = angle > 0.0 ? Quat((Quat(Eigen::AngleAxisd(angle, theta / angle)) * q0_[i]).normalized())
                                     : q0_[i];
        }
    refreshContactGeometry(world, stage_);
    stageIncrements(world, X, tau);
    const StageIncrements increments{stageIncrement_.data(), stageTwirl_.data(), tau == 0.0};
    computeForces(world, stage_, base_.data(), 0.0, &increments);
    if (settings_.tangential == TangentialLaw::Pena)
        for (std::size_t i = 0; i < nb; ++i) world.q[i] = q0_[i];
}

void MdSolver::trackChange(std::size_t i, const Vec6& next, const Vec6& previous, double& change, double& size) const {
    if (fieldRanks_.counts && !fieldRanks_.counts(i)) return;  // another process's body
    change = std::max(change, (next - previous).lpNorm<Eigen::Infinity>());
    size = std::max(size, next.lpNorm<Eigen::Infinity>());
}

bool MdSolver::fixedPointDone(double change, double size) const {
    if (fieldRanks_.max) fieldRanks_.max(change, size);  // over every process's bodies
    return change <= 1e-15 * size;
}

void MdSolver::implicitKick(World& world, const std::vector<Vec6>& X, std::vector<Vec6>& V, double c, double dt,
                            double t, std::vector<Vec6>& A) {
    evaluate(world, X, V, t, A, true);
    if (c == 0.0) return;
    // v = v_pre + c Δt a(x, v): the forces are linear in v through the
    // dashpots, a(x, v_pre + δ) = a(x, v_pre) + G δ with G = ∂a/∂v from the
    // laws' linearisation (exact for linear dashpots); solve δ = cΔt (a + G δ).
    // Gravity and applied forces were kicked at the end of the last step
    // already (they do not depend on the state): only the contacts' part is owed.
    Field& delta = scratch_[10];
    Field& Gd = scratch_[11];
    Field& Ac = scratch_[12];
    Ac.resize(A.size());
    for (std::size_t i = 0; i < A.size(); ++i) Ac[i] = A[i] - externalAcceleration(world, i, t);
    combine(delta, {{c * dt, &Ac}});
    for (int it = 0; it < kFixedPointIterations; ++it) {
        forceDerivative(world, stage_, nullptr, &delta, Gd);
        double change = 0.0, size = 0.0;
        for (std::size_t i = 0; i < delta.size(); ++i) {
            const Vec6 next = c * dt * (Ac[i] + Gd[i]);
            trackChange(i, next, delta[i], change, size);
            delta[i] = next;
        }
        if (fixedPointDone(change, size)) break;
    }
    forceDerivative(world, stage_, nullptr, &delta, Gd);
    for (std::size_t i = 0; i < V.size(); ++i) {
        V[i] += delta[i];
        A[i] += Gd[i];
    }
}

void MdSolver::solvePositionJacobian(const World& world, double c, const std::vector<Vec6>& y,
                                     std::vector<Vec6>& z) {
    // (1 − c J) z = y, J = da/dr applied matrix-free through the laws'
    // linearisation (every contact, no block-diagonal approximation).
    Field& Jz = scratch_[11];
    z = y;
    for (int it = 0; it < kFixedPointIterations; ++it) {
        forceDerivative(world, stage_, &z, nullptr, Jz);
        double change = 0.0, size = 0.0;
        for (std::size_t i = 0; i < z.size(); ++i) {
            const Vec6 next = y[i] + c * Jz[i];
            trackChange(i, next, z[i], change, size);
            z[i] = next;
        }
        if (fixedPointDone(change, size)) break;
    }
}

void MdSolver::rungeKutta(World& world, const std::vector<Vec6>& V0, std::vector<Vec6>& A0, double t, double dt,
                          std::vector<Vec6>& X1, std::vector<Vec6>& V1) {
    // Eq. 9 (the paper's r_1, v_1 in the second stage are r_2, v_2).
    const std::size_t nb = V0.size();
    Field &X = scratch_[4], &V2 = scratch_[5], &V3 = scratch_[6], &V4 = scratch_[7], &A1 = scratch_[8],
          &A2 = scratch_[9], &A3 = X1;
    const Field zero(nb, Vec6::Zero());
    evaluate(world, zero, V0, t, A0, true);
    combine(X, {{0.5 * dt, &V0}});
    combine(V2, {{1.0, &V0}, {0.5 * dt, &A0}});
    evaluate(world, X, V2, t + 0.5 * dt, A1, false);
    combine(X, {{0.5 * dt, &V2}});
    combine(V3, {{1.0, &V0}, {0.5 * dt, &A1}});
    evaluate(world, X, V3, t + 0.5 * dt, A2, false);
    combine(X, {{dt, &V3}});
    combine(V4, {{1.0, &V0}, {dt, &A2}});
    evaluate(world, X, V4, t + dt, A3, false);
    combine(V1, {{1.0, &V0}, {dt / 6.0, &A0}, {dt / 3.0, &A1}, {dt / 3.0, &A2}, {dt / 6.0, &A3}});
    combine(X1, {{dt / 6.0, &V0}, {dt / 3.0, &V2}, {dt / 3.0, &V3}, {dt / 6.0, &V4}});
}

void MdSolver::commitScheme(World& world, std::vector<Contact>& contacts, ContactSlots& slots, const std::vector<Vec6>& X,
                            const std::vector<Vec6>& V, double dt) {
    const std::size_t nb = world.numBodies(), m = stage_.size();
    const Field& Xs = placeState(world, X, V);
    if (historyMode_) {
        // The laws' memory at the end state: one evaluation from the
        // step-start memory with the whole step's increment, committed.
        historyForces(world, Xs, dt);
        slots.values.swap(next_);
        if (lawRow(settings_.tangential).ownWork)
            for (const Vec3& w : lawWorkStep_) {
                lawWork_.total += w[0];
                lawWork_.elastic += w[1];
                lawWork_.dissipated += w[2];
            }
        for (std::size_t c = 0; c < m; ++c) contacts[c].history.reaction = contactForce_[c];
        for (std::size_t i = 0; i < nb; ++i) {
            const Vec3 theta = Xs[i].tail<3>();
            const double angle = theta.norm();
            if (angle > 0.0) world.q[i] = (Quat(Eigen::AngleAxisd(angle, theta / angle)) * world.q[i]).normalized();
            world.advancePose(i, 0.0);
        }
        world.time += dt;
        ++world.step;
        return;
    }
    // Springs at the end positions: base + displacement of the whole step.
    refreshContactGeometry(world, stage_);
    contactDisplacement(world, Xs, disp_);
    slots.values = base_;
    if (lawRow(settings_.tangential).spring)
        for (std::size_t c = 0; c < m; ++c) {
            double* spring = slots.at(c) + layout_.tangential;
            setSlotVec3(spring, intoPlane(slotVec3(spring), stage_[c].n) + disp_[c]);
        }
    elastic_ = elasticBase_;
    for (std::size_t c = 0; c < m; ++c) contacts[c].history.reaction = contactForce_[c];
    for (std::size_t i = 0; i < nb; ++i) {
        const Vec3 theta = Xs[i].tail<3>();
        const double angle = theta.norm();
        if (angle > 0.0) world.q[i] = (Quat(Eigen::AngleAxisd(angle, theta / angle)) * world.q[i]).normalized();
        world.advancePose(i, 0.0);  // periodic wrap only (zero velocity step)
    }
    world.time += dt;
    ++world.step;
}

void MdSolver::stepScheme(World& world, std::vector<Contact>& contacts, ContactSlots& slots, const StepContext& ctx) {
    if (!checked_) {
        checkIntegratorLaws(settings_);
        checked_ = true;
    }
    stepNumber_ = ctx.step;
    const double h = ctx.dt, t = world.time;
    const std::size_t nb = world.numBodies(), m = contacts.size();
    if (!pastV_.empty() && !pastV_[0].empty() && pastV_[0].size() != nb) reset();
    x0_ = world.x;
    stage_ = contacts;
    n0_.resize(m);
    for (std::size_t c = 0; c < m; ++c) n0_[c] = contacts[c].n;
    t0_ = world.time;
    stepDt_ = ctx.dt;
    if (historyMode_) q0_ = world.q;
    // The stages evaluate from the committed memory (history mode), or from
    // it with their own springs (evaluate()).
    base_ = slots.values;
    Field &V0 = scratch_[0], &A0 = scratch_[1], &X1 = scratch_[2], &V1 = scratch_[3];
    V0.resize(nb);
    for (std::size_t i = 0; i < nb; ++i) V0[i] << world.v[i], world.w[i];
    const Field zero(nb, Vec6::Zero());
    if (pastV_.size() != 4) {
        pastV_.assign(4, Field());
        pastA_.assign(4, Field());
    }
    const Integrator scheme = settings_.integrator;
    const int needHistory = integratorInfo(scheme).historySteps;
    const double kick = pendingKick_;
    pendingKick_ = 0.0;
    bool recordHistory = needHistory > 0;
    const bool gear = scheme == Integrator::GPC3 || scheme == Integrator::GPC4 || scheme == Integrator::Gear5;

    // A contact that opens or closes between the last step and this one, or
    // within this step (its overlap extrapolated with the relative normal
    // velocity changes sign): the force has a kink there. Multi-step and Gear
    // schemes would extrapolate their history across it (O(Δt²) errors
    // whatever their order); they take this step with RK4 and start afresh.
    bool kink = false;
    if (settings_.restartOnContactChange && (needHistory > 0 || gear)) {
        std::uint64_t signature = 0;
        for (const Contact& k : contacts) {
            if (changes_.counts && !changes_.counts(k)) continue;  // another process's
            const auto ia = static_cast<std::size_t>(k.a), ib = static_cast<std::size_t>(k.b);
            const Vec3 V = world.v[ib] - world.v[ia] -
                           (world.radius[ia] * world.w[ia] + world.radius[ib] * world.w[ib]).cross(k.n);
            const double overlap = -k.gap, next = overlap - h * k.n.dot(V);
            if ((overlap > 0.0) != (next > 0.0)) kink = true;
            // With md.clip_attractive the force also has a kink where the law
            // starts to pull and is clipped: such a contact does not count as
            // touching (found a step late: the step across it extrapolates).
            const double* memory = slots.stride > 0 ? slots.values.data() + (&k - contacts.data()) * slots.stride +
                                                          layout_.normal
                                                    : nullptr;
            const bool clipped = settings_.clipsAttraction() && overlap > 0.0 && normalForcePulls(world, k, memory);
            const ContactKey key = changes_.key ? changes_.key(k) : k.key;
            if (overlap > 0.0 && !clipped) signature += (key * 0x9e3779b97f4a7c15ULL) | 1u;
        }
        if (changes_.reduce) changes_.reduce(signature, kink);
        if (haveSignature_ && signature != touchingSignature_) kink = true;
        touchingSignature_ = signature;
        haveSignature_ = true;
        if (kink) {
            history_ = 0;
            gearA_.clear();
            recordHistory = false;
        }
    }

    // Start-up of multi-step schemes: classical RK4 steps (order 4, local
    // error O(Δt⁵) on a fixed number of steps: no loss of order up to 5).
    if (needHistory > history_ || kink) {
        rungeKutta(world, V0, A0, t, h, X1, V1);
    } else {
        switch (scheme) {
            case Integrator::FE:
            case Integrator::TY2:
            case Integrator::TY3:
            case Integrator::TY4: {
                evaluate(world, zero, V0, t, A0, true);
                const double p2 = scheme == Integrator::FE ? 0.0 : 0.5 * h * h;
                combine(X1, {{h, &V0}, {p2, &A0}});
                combine(V1, {{1.0, &V0}, {h, &A0}});
                if (scheme == Integrator::TY3 || scheme == Integrator::TY4) {
                    Field &B = scratch_[4], &C = scratch_[5];
                    forceDerivative(world, stage_, &V0, &A0, B);  // b = da/dt (eq. 7)
                    combine(X1, {{1.0, &X1}, {h * h * h / 6.0, &B}});
                    combine(V1, {{1.0, &V1}, {0.5 * h * h, &B}});
                    if (scheme == Integrator::TY4) {
                        forceDerivative(world, stage_, &A0, &B, C);  // c = db/dt (eq. 8; the paper's "1/2 4" is 1/24)
                        combine(X1, {{1.0, &X1}, {h * h * h * h / 24.0, &C}});
                        combine(V1, {{1.0, &V1}, {h * h * h / 6.0, &C}});
                    }
                }
                break;
            }
            case Integrator::RK: rungeKutta(world, V0, A0, t, h, X1, V1); break;
            case Integrator::PV: {
                Field& Xm = scratch_[4];
                combine(Xm, {{0.5 * h, &V0}});
                evaluate(world, Xm, V0, t + 0.5 * h, A0, true);  // eq. 11: a(r_{t+Δt/2}, v_t)
                combine(V1, {{1.0, &V0}, {h, &A0}});
                combine(X1, {{1.0, &Xm}, {0.5 * h, &V1}});
                break;
            }
            case Integrator::BABAB: {
                const double e = kBababEps;
                implicitKick(world, zero, V0, kick, h, t, A0);  // completes v_t = v_2 + ε Δt a_t
                Field &Va = scratch_[4], &Xa = scratch_[5], &Aa = scratch_[6];
                combine(Va, {{1.0, &V0}, {e * h, &A0}});
                combine(Xa, {{0.5 * h, &Va}});
                evaluate(world, Xa, Va, t + 0.5 * h, Aa, false);
                combine(V1, {{1.0, &Va}, {(1.0 - 2.0 * e) * h, &Aa}});
                combine(X1, {{1.0, &Xa}, {0.5 * h, &V1}});
                pendingKick_ = e;
                break;
            }
            case Integrator::BABABAB: {
                const double e = kForestRuthEps;
                implicitKick(world, zero, V0, kick, h, t, A0);
                Field &Va = scratch_[4], &Xa = scratch_[5], &Aa = scratch_[6], &Vb = scratch_[7], &Xb = scratch_[8],
                      &Ab = scratch_[9];
                combine(Va, {{1.0, &V0}, {(e + 0.5) * h, &A0}});
                combine(Xa, {{(2.0 * e + 1.0) * h, &Va}});
                evaluate(world, Xa, Va, t + (2.0 * e + 1.0) * h, Aa, false);
                combine(Vb, {{1.0, &Va}, {-e * h, &Aa}});
                combine(Xb, {{1.0, &Xa}, {(-4.0 * e - 1.0) * h, &Vb}});
                evaluate(world, Xb, Vb, t - 2.0 * e * h, Ab, false);
                combine(V1, {{1.0, &Vb}, {-e * h, &Ab}});
                combine(X1, {{1.0, &Xb}, {(2.0 * e + 1.0) * h, &V1}});
                pendingKick_ = e + 0.5;
                break;
            }
            case Integrator::VE: {
                evaluate(world, zero, V0, t, A0, true);
                combine(X1, {{1.0, &pastDX_}, {h * h, &A0}});             // eq. 14
                combine(V1, {{1.5 / h, &X1}, {-0.5 / h, &pastDX_}});       // (3r₊ − 4r + r₋)/(2Δt)
                break;
            }
            case Integrator::AB2:
            case Integrator::AB3:
            case Integrator::AB4:
            case Integrator::AB5:
            case Integrator::AB2AM3:
            case Integrator::AB3AM4:
            case Integrator::AB4AM5: {
                const int k = scheme == Integrator::AB2 || scheme == Integrator::AB2AM3   ? 2
                              : scheme == Integrator::AB3 || scheme == Integrator::AB3AM4 ? 3
                              : scheme == Integrator::AB4 || scheme == Integrator::AB4AM5 ? 4
                                                                                          : 5;
                evaluate(world, zero, V0, t, A0, true);
                const std::vector<double> d = adamsBashforth(k);
                X1.assign(nb, Vec6::Zero());
                V1 = V0;
                for (int j = 0; j < k; ++j) {
                    const Field& Vj = j == 0 ? V0 : pastV_[static_cast<std::size_t>(j - 1)];
                    const Field& Aj = j == 0 ? A0 : pastA_[static_cast<std::size_t>(j - 1)];
                    for (std::size_t i = 0; i < nb; ++i) {
                        X1[i] += h * d[static_cast<std::size_t>(j)] * Vj[i];
                        V1[i] += h * d[static_cast<std::size_t>(j)] * Aj[i];
                    }
                }
                if (scheme == Integrator::AB2AM3 || scheme == Integrator::AB3AM4 || scheme == Integrator::AB4AM5) {
                    // Eq. 19: evaluate at the prediction, correct with Adams–Moulton of order k + 1.
                    Field& Ap = scratch_[4];
                    evaluate(world, X1, V1, t + h, Ap, false);
                    const std::vector<double> eta = adamsMoulton(k + 1);
                    Field Vp = V1;
                    X1.assign(nb, Vec6::Zero());
                    V1 = V0;
                    for (std::size_t i = 0; i < nb; ++i) {
                        X1[i] += h * eta[0] * Vp[i];
                        V1[i] += h * eta[0] * Ap[i];
                    }
                    for (int j = 0; j < k; ++j) {
                        const Field& Vj = j == 0 ? V0 : pastV_[static_cast<std::size_t>(j - 1)];
                        const Field& Aj = j == 0 ? A0 : pastA_[static_cast<std::size_t>(j - 1)];
                        for (std::size_t i = 0; i < nb; ++i) {
                            X1[i] += h * eta[static_cast<std::size_t>(j + 1)] * Vj[i];
                            V1[i] += h * eta[static_cast<std::size_t>(j + 1)] * Aj[i];
                        }
                    }
                }
                break;
            }
            case Integrator::D12:
            case Integrator::T12: {
                implicitKick(world, zero, V0, kick, h, t, A0);  // completes v_t of the AM3 velocity (5/12 a_t)
                const Field& Am1 = pastA_[0];
                Field& y = scratch_[4];
                if (scheme == Integrator::T12) {
                    combine(y, {{h, &V0}, {7.0 * h * h / 12.0, &A0}, {-h * h / 12.0, &Am1}});  // eq. 16
                    solvePositionJacobian(world, h * h / 12.0, y, X1);
                } else {
                    combine(y, {{1.0, &pastDX_}, {h, &V0}, {0.5 * h * h, &A0}});  // eq. 17
                    solvePositionJacobian(world, h * h / 12.0, y, X1);
                    combine(X1, {{1.0, &X1}, {-1.0, &pastDX_}});
                }
                combine(V1, {{1.0, &V0}, {8.0 * h / 12.0, &A0}, {-h / 12.0, &Am1}});
                pendingKick_ = 5.0 / 12.0;
                break;
            }
            case Integrator::T16: {
                evaluate(world, zero, V0, t, A0, true);
                Field &JV = scratch_[4], &y = scratch_[5];
                forceDerivative(world, stage_, &V0, nullptr, JV);  // (da/dr) v_t
                combine(X1, {{h, &V0}, {0.5 * h * h, &A0}, {h * h * h / 6.0, &JV}});
                combine(y, {{1.0, &V0}, {h, &A0}, {h * h / 3.0, &JV}});
                // (da/dr) at t + Δt: the contacts' geometry at r_{t+Δt}.
                placeState(world, X1, y);
                refreshContactGeometry(world, stage_);
                solvePositionJacobian(world, h * h / 6.0, y, V1);  // eq. 18
                break;
            }
            case Integrator::GPC3:
            case Integrator::GPC4:
            case Integrator::Gear5: {
                // Corrector weights on (r Δt⁻², v Δt⁻¹, a, b Δt, c Δt², d Δt³):
                // Table 3, and Peña's α_k scaled by k!/2 (α₀/2, α₁/2, α₂, 3α₃, 12α₄, 60α₅).
                const double w[3][6] = {{1.0 / 12.0, 5.0 / 12.0, 1.0, 1.0, 0.0, 0.0},
                                        {19.0 / 240.0, 3.0 / 8.0, 1.0, 1.5, 1.0, 0.0},
                                        {3.0 / 32.0, 251.0 / 720.0, 1.0, 11.0 / 6.0, 2.0, 1.0}};
                const int g = scheme == Integrator::GPC3 ? 0 : scheme == Integrator::GPC4 ? 1 : 2;
                if (gearA_.size() != nb) {
                    // Start-up: the higher derivatives from the force laws.
                    evaluate(world, zero, V0, t, A0, false);
                    gearA_ = A0;
                    forceDerivative(world, stage_, &V0, &A0, gearB_);
                    gearC_.assign(nb, Vec6::Zero());
                    gearD_.assign(nb, Vec6::Zero());
                    if (g >= 1) forceDerivative(world, stage_, &A0, &gearB_, gearC_);
                    if (g >= 2) forceDerivative(world, stage_, &gearB_, &gearC_, gearD_);
                }
                Field &Vp = scratch_[4], &Ap = scratch_[5], &Bp = scratch_[6], &Cp = scratch_[7], &Af = scratch_[8];
                const double h2 = h * h, h3 = h2 * h, h4 = h3 * h, h5 = h4 * h;
                combine(X1, {{h, &V0}, {h2 / 2, &gearA_}, {h3 / 6, &gearB_}, {h4 / 24, &gearC_}, {h5 / 120, &gearD_}});
                combine(Vp, {{1.0, &V0}, {h, &gearA_}, {h2 / 2, &gearB_}, {h3 / 6, &gearC_}, {h4 / 24, &gearD_}});
                combine(Ap, {{1.0, &gearA_}, {h, &gearB_}, {h2 / 2, &gearC_}, {h3 / 6, &gearD_}});
                combine(Bp, {{1.0, &gearB_}, {h, &gearC_}, {h2 / 2, &gearD_}});
                combine(Cp, {{1.0, &gearC_}, {h, &gearD_}});
                evaluate(world, X1, Vp, t + h, Af, true);  // eq. 21 / Peña eq. 17
                V1.resize(nb);
                for (std::size_t i = 0; i < nb; ++i) {
                    const Vec6 da = Af[i] - Ap[i];
                    X1[i] += w[g][0] * h2 * da;
                    V1[i] = Vp[i] + w[g][1] * h * da;
                    gearA_[i] = Ap[i] + w[g][2] * da;
                    gearB_[i] = Bp[i] + w[g][3] / h * da;
                    if (g >= 1) gearC_[i] = Cp[i] + w[g][4] / h2 * da;
                    if (g >= 2) gearD_[i] += w[g][5] / h3 * da;
                }
                // A0 is not a_t here; Gear keeps no multi-step history.
                recordHistory = false;
                break;
            }
            case Integrator::CD: break;  // handled by MdSolver::step
        }
    }
    // The owed kick's part from gravity and applied forces is known now (it
    // does not depend on the state): give it at once, so that world.v of a
    // grain out of contact is its velocity at t + Δt.
    if (pendingKick_ != 0.0)
        for (std::size_t i = 0; i < nb; ++i) V1[i] += pendingKick_ * h * externalAcceleration(world, i, t + h);
    if (recordHistory) {
        std::rotate(pastV_.begin(), pastV_.end() - 1, pastV_.end());
        std::rotate(pastA_.begin(), pastA_.end() - 1, pastA_.end());
        pastV_[0] = V0;
        pastA_[0] = A0;
        pastDX_ = X1;
        history_ = std::min<long>(history_ + 1, 4);
    }
    commitScheme(world, contacts, slots, X1, V1, h);
}

}  // namespace moreau
