#pragma once
/// The periodic triaxial state of Kuhn, Suzuki & Daouadji §3 (the setup of
/// their Figs. 5 and 6), shared by stress-probes and rigid-rotation.
///
/// A periodic cube of spheres (radius uniform in [0.4, 0.6] mm, quartz
/// density, k_n = k_t, Kuhn's refined law, contact damping) is compressed
/// isotropically without friction by the cell's stress servo to the mean
/// stress p (a dense packing, as Kuhn's porosity 0.363); then friction μ is
/// switched on and the cell is compressed along x₁ at a constant strain
/// rate while a servo on x₂ and x₃ keeps p constant (drained isobaric
/// triaxial compression), until q/p reaches the target; the cell then holds
/// its stresses while the packing comes to rest, and finally stops while the
/// packing relaxes at fixed strain. Compression positive.
///
/// Internal to src/experiments; not part of the public API.
#include <cstdint>
#include <optional>

#include "moreau/sim/simulation.hpp"

namespace moreau::kuhn {

struct TriaxialOptions {
    long particles = 10648;    ///< Kuhn's count (of sphere clusters)
    double pressure = 100e3;   ///< mean stress p (Pa)
    double qOverP = 0.8;       ///< q/p where the loading stops
    double mu = 0.55;          ///< grain–grain friction during the triaxial stage
    double stiffness = 5e4;    ///< k_n = k_t (N/m)
    bool relax = false;        ///< end with the fixed-cell relaxation (stage 4)
    std::uint64_t seed = 1;
    bool progress = false;     ///< a progress line on stderr
    const char* name = "kuhn";  ///< experiment name for messages
};

/// The prepared state and what the preparation measured.
struct TriaxialState {
    std::optional<Simulation> sim;  ///< at rest in a fixed cell (no servo, no strain rate)
    Vec3 stress = Vec3::Zero();     ///< its stress diagonal (Pa, compression positive)
    double dt = 0.0;                ///< time step (s)
    double dragRate = 0.0;          ///< drag on velocities about the mean flow (1/s), see drag()
    double stiffness = 0.0;         ///< k_n = k_t (N/m)
    double meanDiameter = 0.0;      ///< (m)
    double porosityIsotropic = 0.0; ///< after the isotropic stage
    double porosity = 0.0;          ///< at the end
    double axialStrain = 0.0;       ///< of the triaxial stage (compression positive)
    double qOverP = 0.0;            ///< at the end
    double kineticOverElastic = 0.0;
    double coordination = 0.0;      ///< contacts per grain (force-carrying)
    double meanNormalForce = 0.0;   ///< over the force-carrying grain–grain contacts (N)
    double slidingShare = 0.0;      ///< contacts with |f_t| ≥ (1 − 1e-5) μ f_n
    long steps = 0;                 ///< MD steps of the preparation
    long stepsIsotropic = 0, stepsTriaxial = 0;  ///< ... at the end of stages 1 and 2
    long stepsRelax = 0;            ///< of the last stage (fixed cell)
    double seconds = 0.0;           ///< wall-clock time of the preparation
};

TriaxialState prepareTriaxial(const TriaxialOptions& options);

/// Drag on the grains' velocities and spins about the cell's mean flow:
/// multiplies the fluctuations by (1 − rate Δt), which brings the
/// packing's slow collective modes to rest.
void drag(World& world, double keep);

/// Fraction of the grain–grain contacts at the friction limit, within a
/// relative 1e-5 (Kuhn: "sliding or with a mobilized friction within 0.001 %
/// of μ").
double slidingShare(const Simulation& sim, double mu);

}  // namespace moreau::kuhn
