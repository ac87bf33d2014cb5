#pragma once
/// Shared pieces of the CD solver experiments (force-relaxation,
/// sweep-orders, convergence-criteria): statically loaded systems and the
/// number of sweeps a single load step needs to reach a given accuracy.
///
/// Internal to src/experiments; not part of the public API.
#include <cstdint>
#include <string>
#include <vector>

#include <optional>

#include "moreau/cd/solver.hpp"
#include "moreau/contact/contact.hpp"
#include "moreau/model/scene.hpp"
#include "moreau/model/world.hpp"
#include "moreau/sim/simulation.hpp"

namespace moreau::loadstep {

/// Scene name of an order (`cd.order`, kSweepOrderNames).
std::string orderName(SweepOrder order);

/// A world at rest with its contacts (reactions zero) and the load already
/// applied: one CD step from here is the "load step" that is measured.
struct LoadedSystem {
    /// The loaded state as a run (Δt = 1) whose load step is detected and
    /// matched, reactions zero: a copy's solve() is the load step.
    std::optional<Simulation> run;
    const std::vector<Contact>& contacts() const { return run->contacts(); }
    std::size_t grains = 0;
    double depth = 0.0;           ///< extent along the load, in largest-grain diameters
    double meanDiameter = 0.0;    ///< mean grain diameter
    std::vector<Vec3> exact;      ///< exact reactions where known (the chain), else empty
    /// Packings: the contacts with the base, whose summed force along `probeAxis`
    /// is the measured quantity (the load arriving at the base).
    std::vector<std::size_t> probe;
    Vec3 probeAxis = Vec3::Zero();
    double prepKinetic = 0.0;     ///< packings: kinetic energy left at the end of the preparation
    double pistonSpeed = 0.0;     ///< packings: piston speed at the end of the preparation
    double grainSpeed = 0.0;      ///< packings: the fastest grain's speed at the end of the preparation
    long quenchSteps = 0;         ///< packings: steps from rest the preparation needed to stop the grains
    double load = 0.0;            ///< packings: the piston force
};

/// CD eq. 48's system: L touching grains (d = 1, m = 1) along x, squeezed by
/// +F on the first and −F on the last grain; every reaction is exactly F.
LoadedSystem loadedChain(std::size_t length, double force);

struct PackingSpec {
    int dimension = 2;             ///< 2: disks r ∈ [0.25, 0.5]; 3: spheres r ∈ [0.4, 0.5]
    std::size_t grains = 1000;
    std::uint64_t seed = 1;
    double mu = 0.05;              ///< grain–grain and grain–wall friction
    double pressure = 0.02;        ///< piston force per unit length (2D) or area (3D)
    int prepIterations = 40;       ///< N_I of the compression
    /// 0: 40 steps per grain diameter of box width, at least 600; then on in
    /// chunks of a quarter of that until the piston's largest speed over a
    /// chunk is below 2e-5 d/Δt (at most four times as long in all).
    long prepSteps = 0;
};

/// A random packing compressed by a piston in a box without gravity (the
/// setup of CD §3.1 Fig. 5 and §3.3.2), the square (cube) box's width chosen
/// for a final packing fraction of ~0.82 (~0.62 in 3D); then every velocity
/// is zeroed, the contacts are detected afresh and their reactions cleared:
/// the load step rebuilds the whole force network carrying the piston.
LoadedSystem loadedPacking(const PackingSpec& spec);

/// The scene text of loadedPacking (for experiments that run it themselves).
std::string packingSceneText(const PackingSpec& spec);

struct Convergence {
    /// Chain: first sweep after which max |R − R*| ≤ ε ⟨|R*|⟩. Packings: first
    /// sweep from which on the base force stays within ε of its limit.
    int sweeps = 0;
    bool reached = false;
    /// After each sweep (when asked): chain max |R − R*| / ⟨|R*|⟩; packings
    /// |F_base − F*_base| / F*_base.
    std::vector<double> error;
    int referenceSweeps = 0;   ///< packings: sweeps until the base force settled (0: chain)
    double scale = 0.0;        ///< chain: ⟨|R*|⟩; packings: the base force's limit
};

/// Sweeps of one cold-started CD step (reactions from zero, `settings.order`,
/// seed) until it is within ε of the exact solution. Chain (exact reactions
/// given): every reaction within ε ⟨|R*|⟩ of R*. Packings (a probe given):
/// the force on the base within ε of its limit for good, the limit being the
/// value at the first sweep s where it changed by less than 10⁻² ε since
/// sweep s/2 (geometric convergence: then it is settled well below ε).
Convergence sweepsToEpsilon(const LoadedSystem& system, CdSettings settings, std::uint64_t seed, double epsilon,
                            int maxSweeps, bool keepHistory);

/// Parses a list of positive integers ("10 20 40" or "10,20,40") of key `key`;
/// throws InputError naming the key.
std::vector<long> parseCounts(const std::string& key, const std::string& text, long minValue);

}  // namespace moreau::loadstep
