#include "moreau/md/md_solver.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>

#include "moreau/core/error.hpp"

namespace moreau {

namespace {

constexpr std::size_t kParallelContacts = 4096;

}  // namespace

void MdSolver::computeForces(const World& world, const std::vector<Contact>& contacts,
                             const std::vector<std::int32_t>& previousIndex, double dt) {
    const std::size_t m = contacts.size();
    springNext_.resize(m);
    contactForce_.resize(m);
    contactTorque_.resize(m);
    contactElastic_.resize(m);
    const MdSettings& s = settings_;
#pragma omp parallel for schedule(static) if (m > kParallelContacts)
    for (std::size_t c = 0; c < m; ++c) {
        const Contact& k = contacts[c];
        const auto ia = static_cast<std::size_t>(k.a), ib = static_cast<std::size_t>(k.b);
        const double overlap = -k.gap;
        Vec3& spring = springNext_[c];
        spring = Vec3::Zero();
        contactForce_[c] = contactTorque_[c] = Vec3::Zero();
        contactElastic_[c] = 0.0;
        if (overlap <= 0.0) continue;  // the contact ends when the overlap vanishes; its spring is forgotten
        // Effective mass: walls (fixed or mobile) count with their own mass, fixed ones as infinite.
        const double invMb = world.mass[ib] > 0.0 ? 1.0 / world.mass[ib] : 0.0;
        const double meff = 1.0 / (1.0 / world.mass[ia] + invMb);
        const double kScale = s.meff == EffectiveMass::Both ? meff : 1.0;
        const double gScale = s.meff == EffectiveMass::None ? 1.0 : meff;
        const double ra = world.radius[ia], rb = world.radius[ib];
        const Vec3& n = k.n;
        // Relative velocity of b's contact point against a's (CD eq. 3 with
        // l_a = r_a n, l_b = −r_b n).
        const Vec3 V = world.v[ib] - world.v[ia] - (ra * world.w[ia] + rb * world.w[ib]).cross(n);
        const double Vn = n.dot(V);
        const Vec3 Vt = V - Vn * n;
        // Normal (eq. 2): ξ = overlap, ξ̇ = −V_n; force on b along +n.
        const double kn = kScale * s.kn, gn = gScale * s.gammaN;
        double Fn = kn * overlap - gn * Vn;
        if (s.clipAttractive && Fn < 0.0) Fn = 0.0;
        Vec3 Ft = Vec3::Zero();
        double springEnergy = 0.0;
        if (s.tangentialSpring) {
            const double kt = kScale * s.kt, gt = gScale * s.gammaT;
            const double mu = world.isWall(k.b) ? world.wall(k.b).mu : world.muGrain;
            if (c < previousIndex.size() && previousIndex[c] >= 0) {
                // Carry the spring over, turned into the new tangent plane
                // with its length kept (the contact frame rotates with the pair).
                const Vec3& old = spring_[static_cast<std::size_t>(previousIndex[c])];
                const Vec3 inPlane = old - n.dot(old) * n;
                const double len = old.norm(), lenIn = inPlane.norm();
                if (lenIn > 0.0) spring = inPlane * (len / lenIn);
            }
            spring += Vt * dt;  // eq. 17: ζ = ∫ v_s dt
            Ft = -kt * spring - gt * Vt;
            const double limit = mu * std::abs(Fn);
            const double ft = Ft.norm();
            if (ft > limit) {
                // Coulomb (eq. 16): the force slides at μ|F_n|; the spring is
                // shortened to the length that gives exactly that force.
                Ft *= ft > 0.0 ? limit / ft : 0.0;
                spring = kt > 0.0 ? Vec3(-(Ft + gt * Vt) / kt) : Vec3::Zero();
            }
            springEnergy = 0.5 * kt * spring.squaredNorm();
        }
        contactForce_[c] = Fn * n + Ft;
        contactTorque_[c] = n.cross(Ft);
        contactElastic_[c] = 0.5 * kn * overlap * overlap + springEnergy;
    }
    elastic_ = 0.0;
    for (double e : contactElastic_) elastic_ += e;
}

void MdSolver::gather(const World& world, const std::vector<Contact>& contacts) {
    // Per-body sums in a fixed order (contacts where the body is a, then where
    // it is b, each in key order): the same bits for any thread count, no
    // atomics on doubles (STYLE.md §8).
    const std::size_t nb = world.numBodies(), m = contacts.size();
    aStart_.assign(nb + 1, 0);
    bStart_.assign(nb + 1, 0);
    for (const Contact& c : contacts) {
        ++aStart_[static_cast<std::size_t>(c.a) + 1];
        ++bStart_[static_cast<std::size_t>(c.b) + 1];
    }
    for (std::size_t i = 0; i < nb; ++i) {
        aStart_[i + 1] += aStart_[i];
        bStart_[i + 1] += bStart_[i];
    }
    byB_.resize(m);
    {
        std::vector<std::int32_t> fill(bStart_.begin(), bStart_.end() - 1);
        for (std::size_t c = 0; c < m; ++c)
            byB_[static_cast<std::size_t>(fill[static_cast<std::size_t>(contacts[c].b)]++)] = static_cast<std::int32_t>(c);
    }
    force_.resize(nb);
    torque_.resize(nb);
#pragma omp parallel for schedule(static) if (nb > kParallelContacts)
    for (std::size_t i = 0; i < nb; ++i) {
        Vec3 f = Vec3::Zero(), t = Vec3::Zero();
        const double r = world.radius[i];
        // Contacts are sorted by a, so those where i is a are contiguous.
        for (auto c = aStart_[i]; c < aStart_[i + 1]; ++c) {
            f -= contactForce_[static_cast<std::size_t>(c)];
            t -= r * contactTorque_[static_cast<std::size_t>(c)];
        }
        for (auto k = bStart_[i]; k < bStart_[i + 1]; ++k) {
            const auto c = static_cast<std::size_t>(byB_[static_cast<std::size_t>(k)]);
            f += contactForce_[c];
            t -= r * contactTorque_[c];
        }
        force_[i] = f;
        torque_[i] = t;
    }
}

void MdSolver::integrate(World& world, double dt) {
    const std::size_t nb = world.numBodies();
    const double tNow = world.time;
#pragma omp parallel for schedule(static) if (nb > kParallelContacts)
    for (std::size_t i = 0; i < nb; ++i) {
        const Vec3& im = world.invMass[i];
        const Vec3& ii = world.invInertia[i];
        if (im.squaredNorm() + ii.squaredNorm() == 0.0 && !world.prescribed[i]) continue;
        const Vec3 F = force_[i] + world.appliedForce(static_cast<BodyId>(i), tNow);
        for (int k = 0; k < 3; ++k)
            if (im[k] > 0.0) world.v[i][k] += dt * (im[k] * F[k] + world.gravity[k]);
        world.w[i] += dt * ii.cwiseProduct(torque_[i]);
        world.advancePose(i, dt);
    }
    world.time += dt;
    ++world.step;
}

void MdSolver::step(World& world, std::vector<Contact>& contacts, const std::vector<std::int32_t>& previousIndex,
                    const StepContext& ctx) {
    computeForces(world, contacts, previousIndex, ctx.dt);
    gather(world, contacts);
    for (std::size_t i = 0; i < world.numBodies(); ++i) {
        if (force_[i].allFinite() && torque_[i].allFinite()) continue;
        throw DivergenceError("step " + std::to_string(ctx.step + 1) + ": the contact force on body " +
                              std::to_string(i) +
                              " became non-finite; the time step may be too large for md.kn (keep dt below t_n/20, "
                              "eq. 4)");
    }
    for (std::size_t c = 0; c < contacts.size(); ++c) contacts[c].history.reaction = contactForce_[c];
    spring_.swap(springNext_);
    integrate(world, ctx.dt);
}

}  // namespace moreau
