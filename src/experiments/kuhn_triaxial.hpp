#pragma once
/// The periodic triaxial state of Kuhn, Suzuki & Daouadji §3 (the setup of
/// their Figs. 5 and 6), shared by stress-probes and rigid-rotation.
///
/// A periodic cube of grains — Kuhn's non-convex sphere clusters
/// (kClusterSpheres: our shape, the paper gives none) or spheres — of
/// volume-equivalent radius uniform in [0.4, 0.6] mm (quartz density,
/// k_n = k_t, Kuhn's refined law, contact damping) is compressed
/// isotropically without friction by the cell's stress servo to the mean
/// stress p (a dense packing, as Kuhn's porosity 0.363); then friction μ is
/// switched on and the cell is compressed along x₁ at a constant strain
/// rate while a servo on x₂ and x₃ keeps p constant (drained isobaric
/// triaxial compression), until q/p reaches the target; the cell then holds
/// its stresses while the packing comes to rest, and finally stops while the
/// packing relaxes at fixed strain. Compression positive.
///
/// Internal to src/experiments; not part of the public API.
#include <array>
#include <cstdint>
#include <vector>
#include <optional>

#include "moreau/core/progress.hpp"
#include "moreau/sim/simulation.hpp"

namespace moreau::kuhn {

/// The sphere clusters (`clump.spheres`, in units of a grain's size): a
/// central sphere and six smaller ones embedded along ±x, ±y, ±z at three
/// distances (an octahedral arrangement, as Kuhn describes his clusters in
/// his DEM papers of that period; sizes and distances are our choice), so
/// the grain is non-convex, its three axes 0.70, 0.60 and 0.55 long.
inline constexpr const char* kClusterSpheres =
    "0 0 0 0.5; 0.4 0 0 0.3; -0.4 0 0 0.3; 0 0.3 0 0.3; 0 -0.3 0 0.3; 0 0 0.25 0.3; 0 0 -0.25 0.3";

struct TriaxialOptions {
    long particles = 10648;    ///< Kuhn's count (of sphere clusters)
    bool clusters = true;      ///< Kuhn's sphere clusters (kClusterSpheres), or spheres
    double prepMu = 0.0;       ///< friction of the isotropic compression (sets the porosity)
    double pressure = 100e3;   ///< mean stress p (Pa)
    double qOverP = 0.8;       ///< q/p where the loading stops
    double mu = 0.55;          ///< grain–grain friction during the triaxial stage
    double stiffness = 5e4;    ///< k_n = k_t (N/m)
    bool relax = false;        ///< end with the fixed-cell relaxation (stage 4)
    std::uint64_t seed = 1;
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
    // The triaxial stage's loading, to continue it (continueToPeak):
    double strainRate = 0.0;        ///< ε̇₁ (1/s, compression positive)
    CellServo servo;                ///< the lateral servo (x₂, x₃)
    double lengthStart = 0.0;       ///< the cell's x₁ length when the triaxial stage began
};

/// The friction of the clusters' isotropic compression that gives Kuhn's
/// porosity 0.363 (measured: docs/md-force-laws.md, "The stress-probes experiment").
inline constexpr double kClusterPrepMu = 0.1;

/// experiment.prep_mu: a number ≥ 0, or auto (0 for spheres, kClusterPrepMu
/// for clusters); anything else throws InputError naming the key.
double prepFriction(const Scene& keys, bool clusters);

TriaxialState prepareTriaxial(const TriaxialOptions& options);

/// The continued drained triaxial compression of a prepared state (on a
/// copy), up to its peak of q/p.
struct PeakResult {
    double qOverP = 0.0;        ///< the largest q/p reached
    double axialStrain = 0.0;   ///< at the peak, from the start of the triaxial stage
    double endStrain = 0.0;     ///< where the loading stopped
    bool passed = false;        ///< q/p fell 2 % below the peak afterwards (else: stopped at maxStrain)
    long steps = 0;
    double seconds = 0.0;
    std::vector<std::array<double, 2>> curve;  ///< (axial strain, q/p) every 1e-4 of strain
};
PeakResult continueToPeak(const TriaxialState& state, const TriaxialOptions& options, double maxStrain);

/// Drag on the grains' velocities and spins about the cell's mean flow:
/// multiplies the fluctuations by (1 − rate Δt), which brings the
/// packing's slow collective modes to rest.
void drag(World& world, double keep);

/// Fraction of the grain–grain contacts at the friction limit, within a
/// relative 1e-5 (Kuhn: "sliding or with a mobilized friction within 0.001 %
/// of μ").
double slidingShare(const Simulation& sim, double mu);

}  // namespace moreau::kuhn
