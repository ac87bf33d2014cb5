#pragma once
/// Soft-sphere molecular dynamics on the shared geometry: the normal laws of
/// the force-schemes paper (eqs. 2, 6, 8, 9, 10), tangential Coulomb,
/// viscous, Coulomb-limited viscous, Cundall–Strack spring, Walton–Braun/
/// Mindlin spring and saw-tooth laws (eqs. 13–22), Kuhn's refined 3D
/// algorithm and Peña's geometric spring (md/force_laws.hpp,
/// docs/md-force-laws.md), and velocity Verlet. The law pair is chosen once
/// per step and the per-contact loop is compiled for it (no branch on the
/// law per contact).
///
/// The step is the CD step's pipeline with a different solve stage:
/// detect → match → computeForces → integrate. Velocity Verlet is written in
/// its leapfrog form so that detection stays first: the world holds the
/// half-step velocities v_{n−1/2}; forces at x_n use them for damping (as
/// LAMMPS's gran styles do), then v_{n+1/2} = v_{n−1/2} + Δt F_n/m and
/// x_{n+1} = x_n + Δt v_{n+1/2} — the same positions as velocity Verlet.
#include <cstdint>
#include <vector>

#include "moreau/cd/step_context.hpp"
#include "moreau/contact/contact.hpp"
#include "moreau/model/scene.hpp"
#include "moreau/model/world.hpp"

namespace moreau {

class MdSolver {
public:
    explicit MdSolver(const MdSettings& settings) : settings_(settings) {}

    /// One step. `contacts` hold this step's geometry; `previousIndex` maps
    /// each to last step's contact (−1: new), from matchContacts, so the
    /// tangential springs carry over. On return history.reaction holds the
    /// force on body b of each contact.
    void step(World& world, std::vector<Contact>& contacts, const std::vector<std::int32_t>& previousIndex,
              const StepContext& ctx);

    /// Elastic energy stored in the contacts at the last force evaluation:
    /// Σ ½ k_n ξ² + ½ k_t |s|².
    double elasticEnergy() const { return elastic_; }

    const MdSettings& settings() const { return settings_; }

    /// Turns Kuhn's refinements (md.kuhn_*) on or off between steps; the
    /// contact memory is kept. The rigid-rotation experiment rotates one
    /// prepared packing with different switches.
    void setKuhnSwitches(bool onset, bool slipOnset, bool slipRotation, bool projection, bool twirl) {
        settings_.kuhnOnset = onset;
        settings_.kuhnSlipOnset = slipOnset;
        settings_.kuhnSlipRotation = slipRotation;
        settings_.kuhnProjection = projection;
        settings_.kuhnTwirl = twirl;
    }

    /// Work delivered to the contacts since the solver started (trapezoidal
    /// in each step: −½ (F_prev + F) · ΔU, ΔU the relative displacement of
    /// the contact points; Kuhn's law uses its own tangential increments).
    double contactWork() const { return workIn_; }
    /// Energy the contacts have dissipated so far: contactWork() minus what
    /// they store now (damping, friction, plastic set, springs of ended contacts).
    double dissipatedWork() const { return workIn_ - elastic_; }
    /// Kuhn's law: the sums of its tangential work increments over all steps
    /// and contacts (Fig. 1, lines 45, 52 and 53); zero for the other laws.
    struct TangentialWork {
        double total = 0.0, elastic = 0.0, dissipated = 0.0;
    };
    const TangentialWork& kuhnWork() const { return kuhnWork_; }
    /// Per contact of the last step (same order as the contacts): Kuhn's
    /// dissipated tangential work accumulated over the contact's life.
    std::vector<double> kuhnContactDissipation() const;

private:
    void computeForces(const World& world, const std::vector<Contact>& contacts,
                       const std::vector<std::int32_t>& previousIndex, double dt);
    template <NormalLaw N, TangentialLaw T>
    void forceLoop(const World& world, const std::vector<Contact>& contacts,
                   const std::vector<std::int32_t>& previousIndex, double dt);
    /// Makes this evaluation's contact memory the committed one (springs,
    /// plastic memory, aux_, work sums) and stores the forces in history.reaction.
    void commitContacts(std::vector<Contact>& contacts);
    void gather(const World& world, const std::vector<Contact>& contacts);
    void integrate(World& world, double dt);

    MdSettings settings_;
    std::vector<Vec3> spring_, springNext_;     ///< tangential spring per contact (this method's history)
    std::vector<double> plastic_, plasticNext_;  ///< Walton–Braun F_max per contact
    /// Further memory of the laws that need it, auxStride_ doubles per
    /// contact (0 for the default linear + spring pair with μ_s = μ_d):
    /// Walton–Braun tangential: d̂, F_s*, sign; Kuhn: f^{n,t}, dissipated
    /// work; Peña: R and both orientations at the last evaluation; then a
    /// sliding flag when μ_s ≠ μ_d.
    std::vector<double> aux_, auxNext_;
    std::size_t auxStride_ = 0;
    std::vector<double> contactWork_;           ///< work delivered to each contact in the step
    std::vector<Vec3> kuhnWorkStep_;            ///< Kuhn per contact: (ΔW^t, rev, irrev) of the step
    double workIn_ = 0.0;
    TangentialWork kuhnWork_;
    std::vector<Vec3> contactForce_;         ///< force on b per contact
    std::vector<Vec3> contactTorque_;        ///< r n × F_t per contact (torques are −r_a, −r_b times it)
    std::vector<double> contactElastic_;
    std::vector<Vec3> force_, torque_;       ///< per body
    std::vector<std::int32_t> aStart_, bStart_, byB_;  ///< contacts by body, in key order
    double elastic_ = 0.0;
};

}  // namespace moreau
