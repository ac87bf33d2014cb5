// The Verlet family (integration-schemes paper eqs. 10-14): central
// difference, the default (MdSolver's force stage at the step's start state,
// then the leapfrog kick and drift below, which the fused pipeline runs too);
// position Verlet; Omelyan's BABAB and the Forest–Ruth BABABAB splittings,
// whose last kick is implicit in the damping; and Verlet's VE.
#include <omp.h>

#include <bit>
#include <cmath>
#include <stdexcept>

#include "../law_kernels.hpp"
#include "stages.hpp"

namespace moreau {

namespace {

constexpr double kBababEps = 0.193183328;       // Omelyan et al., eq. 12
constexpr double kForestRuthEps = 0.175603596;  // eq. 13
constexpr std::size_t kParallelBodies = 4096;   ///< fewer bodies: no team (core/parallel.hpp)

class Verlet final : public MdIntegrator {
public:
    explicit Verlet(Integrator id) : centralDifference_(id == Integrator::CD) {}
    bool centralDifference() const override { return centralDifference_; }

    void advance(SchemeStages& s, SchemeStep& step) override {
        World& world = step.world;
        const double h = step.h, t = step.t;
        Field& V0 = step.V0;
        Field &A0 = step.A0, &X1 = step.X1, &V1 = step.V1;
        switch (step.scheme) {
            case Integrator::PV: {
                Field& Xm = s.scratch(4);
                combine(Xm, {{0.5 * h, &V0}});
                s.evaluate(world, Xm, V0, t + 0.5 * h, A0, true);  // eq. 11: a(r_{t+Δt/2}, v_t)
                combine(V1, {{1.0, &V0}, {h, &A0}});
                combine(X1, {{1.0, &Xm}, {0.5 * h, &V1}});
                break;
            }
            case Integrator::BABAB: {
                const double e = kBababEps;
                s.implicitKick(world, step.zero, V0, step.kick, h, t, A0);  // completes v_t = v_2 + ε Δt a_t
                Field &Va = s.scratch(4), &Xa = s.scratch(5), &Aa = s.scratch(6);
                combine(Va, {{1.0, &V0}, {e * h, &A0}});
                combine(Xa, {{0.5 * h, &Va}});
                s.evaluate(world, Xa, Va, t + 0.5 * h, Aa, false);
                combine(V1, {{1.0, &Va}, {(1.0 - 2.0 * e) * h, &Aa}});
                combine(X1, {{1.0, &Xa}, {0.5 * h, &V1}});
                step.owe = e;
                break;
            }
            case Integrator::BABABAB: {
                const double e = kForestRuthEps;
                s.implicitKick(world, step.zero, V0, step.kick, h, t, A0);
                Field &Va = s.scratch(4), &Xa = s.scratch(5), &Aa = s.scratch(6), &Vb = s.scratch(7),
                      &Xb = s.scratch(8), &Ab = s.scratch(9);
                combine(Va, {{1.0, &V0}, {(e + 0.5) * h, &A0}});
                combine(Xa, {{(2.0 * e + 1.0) * h, &Va}});
                s.evaluate(world, Xa, Va, t + (2.0 * e + 1.0) * h, Aa, false);
                combine(Vb, {{1.0, &Va}, {-e * h, &Aa}});
                combine(Xb, {{1.0, &Xa}, {(-4.0 * e - 1.0) * h, &Vb}});
                s.evaluate(world, Xb, Vb, t - 2.0 * e * h, Ab, false);
                combine(V1, {{1.0, &Vb}, {-e * h, &Ab}});
                combine(X1, {{1.0, &Xb}, {(2.0 * e + 1.0) * h, &V1}});
                step.owe = e + 0.5;
                break;
            }
            case Integrator::VE: {
                const Field& pastDX = s.state.pastDX;
                s.evaluate(world, step.zero, V0, t, A0, true);
                combine(X1, {{1.0, &pastDX}, {h * h, &A0}});        // eq. 14
                combine(V1, {{1.5 / h, &X1}, {-0.5 / h, &pastDX}});  // (3r₊ − 4r + r₋)/(2Δt)
                break;
            }
            default: throw std::logic_error("Verlet: not a scheme of the family stepped by stages");
        }
    }

private:
    bool centralDifference_;
};

}  // namespace

std::unique_ptr<MdIntegrator> verletFamily(Integrator id) { return std::make_unique<Verlet>(id); }

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
    // 3D clumps: the kick is L += τ dt (ω through the world-frame inverse
    // inertia) and the drift the free rotor's (World::turn).
    const bool tumbling = world.dimension == 3 && world.hasClumps();
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
        if (tumbling && world.tumbles(i))
            W[i] += dt * world.spinChange(i, Tb);
        else
            W[i] += dt * ii.cwiseProduct(Tb);
        if (periodic) {
            world.advancePose(i, dt);
        } else {
            X[i] += dt * V[i];
            if (tumbling)
                world.turn(i, dt);
            else
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
    // (Not with driven grains: the kernel leaves a grain without mass in
    // place; nor with tumbling clumps: it turns at constant spin; nor in a
    // deforming cell, whose wrap changes a grain's velocity.)
    const bool deforming = periodic && world.deforming();
    const std::size_t blocks =
        drift && L > 0 && !deforming && !applied && !tumbling && world.driven.empty() ? world.numGrains / L : 0;
    // A periodic cell: advancePose's wrap, x ← x − L ⌊(x − min)/L⌋ per
    // periodic axis, is exactly no change for min < x < inside[k] (then
    // (x − min)/L lies in (0, 1)), so only a lane outside that takes it.
    // The kernel's moved-beyond-the-skin test is on x − x_built without the
    // minimum image, the same for every lane that has not wrapped since the
    // build and conservative for the others: a lane that wrapped now or that
    // the kernel calls moved takes the scalar test.
    double inside[3] = {HUGE_VAL, HUGE_VAL, HUGE_VAL};
    for (int k = 0; k < 3; ++k)
        if (world.periodic[k]) inside[k] = world.boxMax[k] - 1e-9 * (world.boxMax[k] - world.boxMin[k]);
    auto wrapLanes = [&](std::size_t first, unsigned moved) {
        int out = 0;
        for (std::size_t i = first; i < first + L; ++i) {
            bool wrapped = false;
            for (int k = 0; k < 3; ++k) {
                if (!world.periodic[k]) continue;
                double& x = X[i][k];
                if (x > world.boxMin[k] && x < inside[k]) continue;
                const double side = world.boxMax[k] - world.boxMin[k];
                x -= side * std::floor((x - world.boxMin[k]) / side);
                wrapped = true;
            }
            if (built && (wrapped || (moved >> (i - first) & 1u)))
                out |= world.minimumImage(Vec3(X[i] - built[i])).squaredNorm() > limit2 ? 1 : 0;
        }
        return out;
    };
    const md_block::DriftContext ctx{X->data(), V->data(), W->data(), Q->coeffs().data(),
                                     invMass->data(), invInertia->data(), F->data(), T->data(),
                                     built ? built->data() : nullptr, {g.x(), g.y(), g.z()}, dt, limit2,
                                     clearForces};
    auto driftBlock = [&](std::size_t q) {
        const md_block::DriftResult r = drift(ctx, q * L);
        for (unsigned slow = r.slowRotation; slow != 0; slow &= slow - 1) {
            const std::size_t i = q * L + static_cast<std::size_t>(std::countr_zero(slow));
            World::rotate(Q[i], W[i], dt);
        }
        if (periodic) return wrapLanes(q * L, r.moved);
        return r.moved != 0 ? 1 : 0;
    };
    int moved = 0;
    if (nb <= kParallelBodies) {  // no team of one (core/parallel.hpp)
        for (std::size_t q = 0; q < blocks; ++q) moved |= driftBlock(q);
        for (std::size_t i = blocks * L; i < nb; ++i) moved |= advance(i) ? 1 : 0;
    } else {
#pragma omp parallel reduction(| : moved)
        {
#pragma omp for schedule(static) nowait
            for (std::size_t q = 0; q < blocks; ++q) moved |= driftBlock(q);
#pragma omp for schedule(static) nowait
            for (std::size_t i = blocks * L; i < nb; ++i) moved |= advance(i) ? 1 : 0;
        }
    }
    world.time += dt;
    ++world.step;
    return moved != 0;
}

}  // namespace moreau
