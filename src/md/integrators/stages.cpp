#include "stages.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "moreau/contact/detection.hpp"
#include "moreau/core/error.hpp"
#include "moreau/core/parallel.hpp"
#include "../law_kernels.hpp"

namespace moreau {

namespace {

/// Fixed-point iterations of the implicit kick and of the Khakimov divisions;
/// both contract by ~(c Δt)² k/m or c Δt γ/m per iteration.
constexpr int kFixedPointIterations = 12;
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
    Vec3 u = X[ib].head<3>() - X[ia].head<3>();
    if (world.hasPolygons()) {  // the arms to the overlap's centroid, not r n
        Vec3 la, lb;
        polygonLeverArms(world, k, la, lb);
        u += X[ib].tail<3>().cross(lb) - X[ia].tail<3>().cross(la);
    } else {
        u -= (world.radius[ia] * X[ia].tail<3>() + world.radius[ib] * X[ib].tail<3>()).cross(mean);
    }
    return intoPlane(u - mean.dot(u) * mean, k.n);
}

/// Acceleration by gravity and applied forces at time t, and by the
/// contacts' force F and torque T (none: external forces only).
Vec6 acceleration(const World& world, std::size_t i, double t, const Vec3& F = Vec3::Zero(),
                  const Vec3& T = Vec3::Zero()) {
    Vec6 a = Vec6::Zero();
    const Vec3& im = world.invMass[i];
    if (im.squaredNorm() + world.invInertia[i].squaredNorm() == 0.0) return a;
    const Vec3 all = F + world.appliedForce(static_cast<BodyId>(i), t);
    for (int k = 0; k < 3; ++k)
        if (im[k] > 0.0) a[k] = im[k] * all[k] + world.gravity[k];
    a.tail<3>() = world.invInertia[i].cwiseProduct(T);
    return a;
}

}  // namespace

void SchemeStages::stageSprings(World& world, const Field& X, std::vector<double>& out) {
    refreshContactGeometry(world, stage_);
    out = base_;
    if (!lawRow(forces_->settings().tangential).spring) return;
    // The step's spring base plus the tangential displacement of the contact
    // point since the step start (the scheme integrates it).
    const std::size_t m = stage_.size();
    disp_.resize(m);
    forEachIndex(m, m > 4096, [&](std::size_t c) {
        disp_[c] = relativeDisplacement(X, world, stage_[c], n0_[c]);
        double* spring = out.data() + c * forces_->layout().stride + forces_->layout().tangential;
        setSlotVec3(spring, intoPlane(slotVec3(spring), stage_[c].n) + disp_[c]);
    });
}

const Field& SchemeStages::placeState(World& world, const Field& X, const Field& V) {
    for (std::size_t i = 0; i < world.numBodies(); ++i) {
        world.x[i] = x0_[i] + X[i].head<3>();
        world.v[i] = V[i].head<3>();
        world.w[i] = V[i].tail<3>();
    }
    if (!stageHook) return X;
    placedX_ = X;
    stageHook(world, placedX_);
    return placedX_;
}

void SchemeStages::evaluate(World& world, const Field& X, const Field& V, double t, Field& A, bool project) {
    const std::size_t nb = world.numBodies(), m = stage_.size();
    const Field& Xs = placeState(world, X, V);
    auto clock = std::chrono::steady_clock::now();
    if (historyMode_) {
        historyForces(world, Xs, t - t0_);
    } else {
        // The laws evaluate from the step's base memory with the stage's
        // spring, indexed by contact, with dt = 0 (the elongation is already
        // the stage's; no Euler increment).
        stageSprings(world, Xs, stageSlots_);
        forces_->evaluate(world, stage_, stageSlots_.data(), 0.0);
    }
    forces_->gather(world, stage_);
    lap(clock, forceSeconds);
    std::vector<Vec3>& force = forces_->force();
    const std::vector<Vec3>& torque = forces_->torque();
    if (forceHook) forceHook(stage_, forces_->contactForces(), force);
    A.resize(nb);
    for (std::size_t i = 0; i < nb; ++i) {
        if (!(force[i].allFinite() && torque[i].allFinite()))
            throw DivergenceError("step " + std::to_string(state.stepNumber + 1) + ": the contact force on body " +
                                  std::to_string(i) +
                                  " became non-finite; the time step may be too large for md.kn and md.integrator");
        A[i] = acceleration(world, i, t, force[i], torque[i]);
    }
    if (!project) return;
    state.elasticBase = forces_->elastic();
    if (historyMode_) return;
    // Coulomb-limited springs of this evaluation become the step's base.
    base_ = forces_->memory();
    if (lawRow(forces_->settings().tangential).spring)
        for (std::size_t c = 0; c < m; ++c) {
            double* spring = base_.data() + c * forces_->layout().stride + forces_->layout().tangential;
            setSlotVec3(spring, slotVec3(spring) - disp_[c]);
        }
}

void SchemeStages::stageIncrements(const World& world, const Field& X, double tau) {
    // What the law adds to the step-start memory at this stage (its dt is 0):
    // Cundall's V_t τ (md.spring_increment = velocity), Kuhn's movement Δū of
    // the contact points in the middle of the overlap and the twirl angle,
    // otherwise the contact point's tangential displacement since the step
    // start (Peña's geometric increment is taken by the law itself from the
    // step-start reference R, q, for contacts that have one).
    const std::size_t m = stage_.size();
    stageIncrement_.resize(m);
    stageTwirl_.assign(m, 0.0);
    const ForceLawRow& law = lawRow(forces_->settings().tangential);
    const bool velocity = law.velocityIncrement && forces_->settings().springVelocityIncrement;
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
            const Vec3 V = md_kernels::contactVelocity(world, k);
            const double overlap = std::max(-k.gap, 0.0);
            if (law.stageTwirl) {
                stageIncrement_[c] = tauEps * (V + 0.5 * overlap * (world.w[ia] + world.w[ib]).cross(k.n));
                stageTwirl_[c] = tauEps * (world.w[ia] + world.w[ib]).dot(k.n);
            } else {
                stageIncrement_[c] = tauEps * (V - k.n.dot(V) * k.n);
            }
        } else if (velocity) {
            const Vec3 V = md_kernels::contactVelocity(world, k);
            stageIncrement_[c] = tau * (V - k.n.dot(V) * k.n);
        } else if (law.stageTwirl) {
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

void SchemeStages::historyForces(World& world, const Field& X, double tau) {
    const std::size_t nb = world.numBodies();
    if (lawRow(forces_->settings().tangential).stageOrientations)
        for (std::size_t i = 0; i < nb; ++i) {
            // Peña's reference is the orientation at the step start: the stage's is needed.
            const Vec3 theta = X[i].tail<3>();
            const double angle = theta.norm();
            world.q[i] = angle > 0.0 ? Quat((Quat(Eigen::AngleAxisd(angle, theta / angle)) * q0_[i]).normalized())
                                     : q0_[i];
        }
    refreshContactGeometry(world, stage_);
    stageIncrements(world, X, tau);
    const MdForceStage::StageIncrements increments{stageIncrement_.data(), stageTwirl_.data(), tau == 0.0};
    forces_->evaluate(world, stage_, base_.data(), 0.0, &increments);
    if (lawRow(forces_->settings().tangential).stageOrientations) world.q = q0_;
}

template <class Next>
void SchemeStages::fixedPoint(const World& world, Field& z, bool position, Field& D, Next next) {
    for (int it = 0; it < kFixedPointIterations; ++it) {
        forceDerivative(world, position ? &z : nullptr, position ? nullptr : &z, D);
        double change = 0.0, size = 0.0;
        for (std::size_t i = 0; i < z.size(); ++i) {
            const Vec6 zi = next(i);
            if (!fieldRanks.counts || fieldRanks.counts(i)) {  // else another process's body
                change = std::max(change, (zi - z[i]).lpNorm<Eigen::Infinity>());
                size = std::max(size, zi.lpNorm<Eigen::Infinity>());
            }
            z[i] = zi;
        }
        if (fieldRanks.max) fieldRanks.max(change, size);  // over every process's bodies
        if (change <= 1e-15 * size) break;
    }
}

void SchemeStages::implicitKick(World& world, const Field& X, Field& V, double c, double dt, double t, Field& A) {
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
    for (std::size_t i = 0; i < A.size(); ++i) Ac[i] = A[i] - acceleration(world, i, t);
    combine(delta, {{c * dt, &Ac}});
    fixedPoint(world, delta, false, Gd, [&](std::size_t i) { return Vec6(c * dt * (Ac[i] + Gd[i])); });
    forceDerivative(world, nullptr, &delta, Gd);
    for (std::size_t i = 0; i < V.size(); ++i) {
        V[i] += delta[i];
        A[i] += Gd[i];
    }
}

void SchemeStages::solvePositionJacobian(const World& world, double c, const Field& y, Field& z) {
    // (1 − c J) z = y, J = da/dr applied matrix-free through the laws'
    // linearisation (every contact, no block-diagonal approximation).
    Field& Jz = scratch_[11];
    z = y;
    fixedPoint(world, z, true, Jz, [&](std::size_t i) { return Vec6(y[i] + c * Jz[i]); });
}

void SchemeStages::rungeKutta(World& world, const Field& V0, Field& A0, double t, double dt, Field& X1, Field& V1) {
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

void SchemeStages::commit(World& world, std::vector<Contact>& contacts, ContactSlots& slots, const Field& X,
                          const Field& V, double dt) {
    const std::size_t nb = world.numBodies();
    const Field& Xs = placeState(world, X, V);
    if (historyMode_) {
        // The laws' memory at the end state: one evaluation from the
        // step-start memory with the whole step's increment, committed.
        historyForces(world, Xs, dt);
        forces_->commit(contacts, slots, false);
    } else {
        stageSprings(world, Xs, slots.values);  // at the end positions: the whole step's displacement
        forces_->setElastic(state.elasticBase);
        forces_->setReactions(contacts);
    }
    for (std::size_t i = 0; i < nb; ++i) {
        const Vec3 theta = Xs[i].tail<3>();
        const double angle = theta.norm();
        if (angle > 0.0) world.q[i] = (Quat(Eigen::AngleAxisd(angle, theta / angle)) * world.q[i]).normalized();
        world.advancePose(i, 0.0);  // periodic wrap only (zero velocity step)
    }
    world.time += dt;
    ++world.step;
}

bool SchemeStages::contactsChange(const World& world, const std::vector<Contact>& contacts, const ContactSlots& slots,
                                  double h) {
    bool kink = false;
    std::uint64_t signature = 0;
    for (const Contact& k : contacts) {
        if (changes.counts && !changes.counts(k)) continue;  // another process's
        const Vec3 V = md_kernels::contactVelocity(world, k);
        const double overlap = -k.gap, next = overlap - h * k.n.dot(V);
        if ((overlap > 0.0) != (next > 0.0)) kink = true;
        // With md.clip_attractive the force also has a kink where the law
        // starts to pull and is clipped: such a contact does not count as
        // touching (found a step late: the step across it extrapolates).
        const double* memory = slots.stride > 0 ? slots.values.data() + (&k - contacts.data()) * slots.stride +
                                                      forces_->layout().normal
                                                : nullptr;
        const bool clipped = forces_->settings().clipsAttraction() && overlap > 0.0 && forces_->normalForcePulls(world, k, memory);
        const ContactKey key = changes.key ? changes.key(k) : k.key;
        if (overlap > 0.0 && !clipped) signature += (key * 0x9e3779b97f4a7c15ULL) | 1u;
    }
    if (changes.reduce) changes.reduce(signature, kink);
    if (state.haveSignature && signature != state.touchingSignature) kink = true;
    state.touchingSignature = signature;
    state.haveSignature = true;
    return kink;
}

void SchemeStages::step(World& world, std::vector<Contact>& contacts, ContactSlots& slots, const StepContext& ctx,
                        MdIntegrator& integrator) {
    if (!checked_) {
        checkIntegratorLaws(forces_->settings());
        checked_ = true;
    }
    state.stepNumber = ctx.step;
    const double h = ctx.dt, t = world.time;
    const std::size_t nb = world.numBodies(), m = contacts.size();
    if (!state.pastV.empty() && !state.pastV[0].empty() && state.pastV[0].size() != nb) state.reset();
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
    if (state.pastV.size() != 4) {
        state.pastV.assign(4, Field());
        state.pastA.assign(4, Field());
    }
    const Integrator scheme = forces_->settings().integrator;
    const IntegratorInfo& info = integratorInfo(scheme);
    const int needHistory = info.historySteps;
    const double kick = state.pendingKick;
    state.pendingKick = 0.0;
    bool recordHistory = needHistory > 0;

    // A contact that opens or closes between the last step and this one, or
    // within this step (its overlap extrapolated with the relative normal
    // velocity changes sign): the force has a kink there. Multi-step and Gear
    // schemes would extrapolate their history across it (O(Δt²) errors
    // whatever their order); they take this step with RK4 and start afresh.
    bool kink = false;
    if (forces_->settings().restartOnContactChange && (needHistory > 0 || integrator.keepsDerivatives())) {
        kink = contactsChange(world, contacts, slots, h);
        if (kink) {
            state.history = 0;
            state.gearA.clear();
            recordHistory = false;
        }
    }

    // Start-up of multi-step schemes: classical RK4 steps (order 4, local
    // error O(Δt⁵) on a fixed number of steps: no loss of order up to 5).
    if (needHistory > state.history || kink) {
        rungeKutta(world, V0, A0, t, h, X1, V1);
    } else {
        const Field zero(nb, Vec6::Zero());
        SchemeStep one{world, scheme, info, t, h, kick, V0, A0, X1, V1, zero};
        integrator.advance(*this, one);
        state.pendingKick = one.owe;
        recordHistory = recordHistory && one.recordHistory;
    }
    // The owed kick's part from gravity and applied forces is known now (it
    // does not depend on the state): give it at once, so that world.v of a
    // grain out of contact is its velocity at t + Δt.
    if (state.pendingKick != 0.0)
        for (std::size_t i = 0; i < nb; ++i) V1[i] += state.pendingKick * h * acceleration(world, i, t + h);
    if (recordHistory) {
        std::rotate(state.pastV.begin(), state.pastV.end() - 1, state.pastV.end());
        std::rotate(state.pastA.begin(), state.pastA.end() - 1, state.pastA.end());
        state.pastV[0] = V0;
        state.pastA[0] = A0;
        state.pastDX = X1;
        state.history = std::min<long>(state.history + 1, 4);
    }
    commit(world, contacts, slots, X1, V1, h);
}

std::vector<Field*> SchemeState::fields() {
    std::vector<Field*> f;
    for (Field& p : pastV) f.push_back(&p);
    for (Field& p : pastA) f.push_back(&p);
    for (Field* p : {&pastDX, &gearA, &gearB, &gearC, &gearD}) f.push_back(p);
    return f;
}

void SchemeState::reset() {
    history = 0;
    haveSignature = false;
    pendingKick = 0.0;
    gearA.clear();
}

void SchemeStages::placeGeometry(World& world, const Field& X, const Field& V) {
    placeState(world, X, V);
    refreshContactGeometry(world, stage_);
}

std::unique_ptr<MdIntegrator> makeIntegrator(Integrator id) {
    switch (integratorInfo(id).family) {
        case IntegratorFamily::Taylor: return taylorFamily();
        case IntegratorFamily::RungeKutta: return rungeKuttaFamily();
        case IntegratorFamily::Verlet: return verletFamily(id);
        case IntegratorFamily::Adams: return adamsFamily();
        case IntegratorFamily::Khakimov: return khakimovFamily();
        case IntegratorFamily::Gear: return gearFamily();
    }
    throw std::logic_error("makeIntegrator: an integrator without a family");
}

}  // namespace moreau
