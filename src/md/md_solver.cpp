#include "moreau/md/md_solver.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>

#include "moreau/core/error.hpp"

namespace moreau {

namespace {

constexpr std::size_t kParallelContacts = 4096;

}  // namespace


namespace {

/// Constants of one contact after the effective-mass convention.
struct Constants {
    double kn, gn, s, kt, gt, mu;
};

/// Normal force on b along +n (force schemes eqs. 2, 6, 8, 9, 10) from the
/// overlap ξ and its rate ξ̇ = −V_n; `plastic` is the Walton–Braun memory
/// F_max of this contact.
template <NormalLaw N>
inline double normalForce(const Constants& c, double xi, double xiDot, double& plastic) {
    if constexpr (N == NormalLaw::Linear) {
        return c.kn * xi + c.gn * xiDot;
    } else if constexpr (N == NormalLaw::Hertz) {
        return c.kn * xi * std::sqrt(xi);
    } else if constexpr (N == NormalLaw::HertzDamped) {
        return c.kn * xi * std::sqrt(xi) + c.gn * xiDot;
    } else if constexpr (N == NormalLaw::HertzKuwabaraKono) {
        const double r = std::sqrt(xi);
        return c.kn * xi * r + c.gn * r * xiDot;
    } else {
        // Walton–Braun: load along k₁ ξ while beyond every earlier load;
        // otherwise unload (and reload) along k₂ (ξ − ξ₀), the line through
        // (F_max/k₁, F_max) with k₂ = k₁ + s F_max; ξ₀ is the permanent set.
        const double virgin = c.kn * xi;
        if (xiDot >= 0.0 && virgin >= plastic) {
            plastic = virgin;
            return virgin;
        }
        const double k2 = c.kn + c.s * plastic;
        const double xi0 = plastic / c.kn - plastic / k2;
        return std::max(0.0, k2 * (xi - xi0));
    }
}

/// Tangential force (force schemes eqs. 13–17) from the tangential velocity
/// V_t of b against a and the normal force; `spring` is this contact's
/// Cundall–Strack spring, already carried into the current tangent plane.
template <TangentialLaw T>
inline Vec3 tangentialForce(const Constants& c, const Vec3& Vt, double Fn, double dt, Vec3& spring) {
    const double limit = c.mu * std::abs(Fn);
    if constexpr (T == TangentialLaw::None) {
        return Vec3::Zero();
    } else if constexpr (T == TangentialLaw::Coulomb) {
        const double v = Vt.norm();
        return v > 0.0 ? Vec3(-limit / v * Vt) : Vec3::Zero();
    } else if constexpr (T == TangentialLaw::Viscous) {
        return -c.gt * Vt;
    } else if constexpr (T == TangentialLaw::ViscousCoulomb) {
        const double v = Vt.norm();
        return v > 0.0 ? Vec3(-std::min(c.gt * v, limit) / v * Vt) : Vec3::Zero();
    } else {
        spring += Vt * dt;  // eq. 17: ζ = ∫ v_s dt
        Vec3 Ft = -c.kt * spring - c.gt * Vt;
        const double ft = Ft.norm();
        if (ft > limit) {
            // Coulomb (eq. 16): the force slides at μ|F_n|; the spring is
            // shortened to the length that gives exactly that force.
            Ft *= limit / ft;
            spring = c.kt > 0.0 ? Vec3(-(Ft + c.gt * Vt) / c.kt) : Vec3::Zero();
        }
        return Ft;
    }
}

}  // namespace

template <NormalLaw N, TangentialLaw T>
void MdSolver::forceLoop(const World& world, const std::vector<Contact>& contacts,
                         const std::vector<std::int32_t>& previousIndex, double dt) {
    const std::size_t m = contacts.size();
    const MdSettings& s = settings_;
#pragma omp parallel for schedule(static) if (m > 4096)
    for (std::size_t c = 0; c < m; ++c) {
        const Contact& k = contacts[c];
        const auto ia = static_cast<std::size_t>(k.a), ib = static_cast<std::size_t>(k.b);
        const std::int32_t prev = c < previousIndex.size() ? previousIndex[c] : -1;
        Vec3& spring = springNext_[c];
        double& plastic = plasticNext_[c];
        spring = Vec3::Zero();
        plastic = prev >= 0 ? plastic_[static_cast<std::size_t>(prev)] : 0.0;
        contactForce_[c] = contactTorque_[c] = Vec3::Zero();
        contactElastic_[c] = 0.0;
        const double overlap = -k.gap;
        if (overlap <= 0.0) {  // the contact ends when the overlap vanishes; its memory is forgotten
            plastic = 0.0;
            continue;
        }
        // Effective mass: walls (fixed or mobile) count with their own mass, fixed ones as infinite.
        const double invMb = world.mass[ib] > 0.0 ? 1.0 / world.mass[ib] : 0.0;
        const double meff = 1.0 / (1.0 / world.mass[ia] + invMb);
        const double kScale = s.meff == EffectiveMass::Both ? meff : 1.0;
        const double gScale = s.meff == EffectiveMass::None ? 1.0 : meff;
        const Constants cst{kScale * s.kn, gScale * s.gammaN, kScale * s.s, kScale * s.kt, gScale * s.gammaT,
                            world.isWall(k.b) ? world.wall(k.b).mu : world.muGrain};
        const double ra = world.radius[ia], rb = world.radius[ib];
        const Vec3& n = k.n;
        // Relative velocity of b's contact point against a's (CD eq. 3 with
        // l_a = r_a n, l_b = −r_b n).
        const Vec3 V = world.v[ib] - world.v[ia] - (ra * world.w[ia] + rb * world.w[ib]).cross(n);
        const double Vn = n.dot(V);
        const Vec3 Vt = V - Vn * n;
        double Fn = normalForce<N>(cst, overlap, -Vn, plastic);
        if (s.clipAttractive && Fn < 0.0) Fn = 0.0;
        if constexpr (T == TangentialLaw::Spring) {
            if (prev >= 0) {
                // Carry the spring over, turned into the new tangent plane
                // with its length kept (the contact frame rotates with the pair).
                const Vec3& old = spring_[static_cast<std::size_t>(prev)];
                const Vec3 inPlane = old - n.dot(old) * n;
                const double len = old.norm(), lenIn = inPlane.norm();
                if (lenIn > 0.0) spring = inPlane * (len / lenIn);
            }
        }
        const Vec3 Ft = tangentialForce<T>(cst, Vt, Fn, dt, spring);
        contactForce_[c] = Fn * n + Ft;
        contactTorque_[c] = n.cross(Ft);
        // Stored energy of the linear springs (0.4 k̃ ξ^{5/2} for the Hertz family).
        const double normalEnergy = N == NormalLaw::Linear || N == NormalLaw::WaltonBraun
                                        ? 0.5 * cst.kn * overlap * overlap
                                        : 0.4 * cst.kn * overlap * overlap * std::sqrt(overlap);
        contactElastic_[c] = normalEnergy + (T == TangentialLaw::Spring ? 0.5 * cst.kt * spring.squaredNorm() : 0.0);
    }
}

void MdSolver::computeForces(const World& world, const std::vector<Contact>& contacts,
                             const std::vector<std::int32_t>& previousIndex, double dt) {
    const std::size_t m = contacts.size();
    springNext_.resize(m);
    plasticNext_.resize(m);
    contactForce_.resize(m);
    contactTorque_.resize(m);
    contactElastic_.resize(m);
    // The law pair is chosen once per step; the loop is compiled for it.
    auto withTangential = [&]<NormalLaw N>() {
        switch (settings_.tangential) {
            case TangentialLaw::None: forceLoop<N, TangentialLaw::None>(world, contacts, previousIndex, dt); break;
            case TangentialLaw::Coulomb: forceLoop<N, TangentialLaw::Coulomb>(world, contacts, previousIndex, dt); break;
            case TangentialLaw::Viscous: forceLoop<N, TangentialLaw::Viscous>(world, contacts, previousIndex, dt); break;
            case TangentialLaw::ViscousCoulomb:
                forceLoop<N, TangentialLaw::ViscousCoulomb>(world, contacts, previousIndex, dt);
                break;
            case TangentialLaw::Spring: forceLoop<N, TangentialLaw::Spring>(world, contacts, previousIndex, dt); break;
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
    for (double e : contactElastic_) elastic_ += e;
}

void MdSolver::gather(const World& world, const std::vector<Contact>& contacts) {
    // Per-body sums in one fixed order, no atomics on doubles (STYLE.md §8):
    // the contacts in key order. For body i the keys (j, i), j < i, come
    // before (i, j), so its sum is: contacts where it is b, then where it is
    // a, each in key order. One thread scatters in that order directly; more
    // threads gather per body through a CSR in the same order: the same bits.
    const std::size_t nb = world.numBodies(), m = contacts.size();
    force_.assign(nb, Vec3::Zero());
    torque_.assign(nb, Vec3::Zero());
    if (omp_get_max_threads() == 1 || nb <= kParallelContacts) {
        for (std::size_t c = 0; c < m; ++c) {
            const auto ia = static_cast<std::size_t>(contacts[c].a), ib = static_cast<std::size_t>(contacts[c].b);
            force_[ib] += contactForce_[c];
            torque_[ib] -= world.radius[ib] * contactTorque_[c];
            force_[ia] -= contactForce_[c];
            torque_[ia] -= world.radius[ia] * contactTorque_[c];
        }
        return;
    }
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
    plastic_.swap(plasticNext_);
    integrate(world, ctx.dt);
}

}  // namespace moreau
