#pragma once
/// Scalar and tensor observables of a world and its contacts: energies,
/// momentum, overlap statistics, the Love–Weber stress and a bit-exact state
/// hash for determinism checks. All read-only. Every sum is exact
/// (ExactSum, rounded once), so that a world cut into parts (MPI ranks,
/// WorldPart) gives the same bits as the whole.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "moreau/contact/contact.hpp"
#include "moreau/core/exact_sum.hpp"
#include "moreau/core/types.hpp"
#include "moreau/model/world.hpp"

namespace moreau {

/// Translational kinetic energy ½ m |v|² summed over grains and mobile walls
/// (fixed and kinematically driven walls have no finite mass and are left out).
double kineticEnergy(const World& world);

/// Rotational kinetic energy ½ I |w|² summed over grains (walls never rotate).
double rotationalEnergy(const World& world);

/// Total linear momentum Σ m v over grains and mobile walls.
Vec3 totalMomentum(const World& world);

/// Overlap statistics (OverlapStats, contact/contact.hpp) over the contacts
/// that carry a force. A contact counts when its reaction is non-zero; a closed but unloaded
/// candidate (a margin contact, or one the solver left at R = 0) does not.
OverlapStats overlapStats(const std::vector<Contact>& contacts);

/// FNV-1a 64 over the raw bits of every grain's position then velocity
/// (x₀ x₁ x₂ v₀ v₁ v₂ per grain, in id order; each double's 8 bytes low byte
/// first, so the digest does not depend on the host's byte order). Walls,
/// angular velocities and time are not part of it. Equal bits give equal
/// hashes; one flipped bit changes it.
std::uint64_t stateHash(const World& world);
/// stateHash grain by grain: the digest after one more grain (position,
/// velocity), from kStateHashStart (the FNV-1a offset basis).
constexpr std::uint64_t kStateHashStart = 0xcbf29ce484222325ull;
std::uint64_t stateHashStep(std::uint64_t h, const Vec3& x, const Vec3& v);

/// 16 lower-case hexadecimal digits, zero-padded (the `state_hash` format).
std::string hex64(std::uint64_t value);

/// Love–Weber average stress of the contact network,
///   σ = (1/V) Σ_c f_c ⊗ ℓ_c,   σ_ij = (1/V) Σ_c f_i ℓ_j,
/// with f_c = history.reaction (the force on body b) and ℓ_c the branch
/// vector: for grain pairs from a's centre to b's centre (minimum image of
/// x_b − x_a); for grain–wall contacts from the grain's centre to the contact
/// point, contactPoint − x_a = r_a n. A wall has no centre: x_b is an arbitrary
/// point of its plane or axis, so x_b − x_a would add a tangential part that
/// depends on where the wall was placed. With ℓ = r_a n a wall contact adds
/// the grain's term of the grain-based form σ = −(1/V) Σ_grains Σ_contacts
/// f_g ⊗ (x_contact − x_grain) (f_g the force on that grain), the mean stress
/// inside the grains; a grain pair's centre-to-centre branch is the sum of its
/// two grains' terms, up to the gap. A repulsive contact gives f ∥ ℓ, so
/// compression is positive (the soil-mechanics sign). `volume` is the volume
/// (2D: area, 1D: length) that the average refers to.
Mat3 loveStress(const World& world, const std::vector<Contact>& contacts, double volume);

/// An axis-aligned box lo ≤ x ≤ hi (on the world's dimension's axes) that
/// the measurements average over (output.stress_region).
struct MeasureRegion {
    Vec3 lo = Vec3::Zero(), hi = Vec3::Zero();
};

/// The granular measurements of series.csv (docs/scenes.md, "Units and
/// columns"). Without a region they average over the whole packing: on a
/// periodic axis the box, on the others the grains' extent (centres ± radii),
/// on the dimension's axes only (2D: an area, 1D: a length). Over a region
/// (a box lo..hi; on a periodic axis it may lie anywhere, at most one period
/// long, and stands for all its images):
///  - a grain whose centre lies inside contributes its kinetic term, its
///    contact ends to the coordination and the fabric;
///  - a contact contributes its Love–Weber term f ⊗ ℓ weighted by the
///    fraction of its branch vector (the segment from a's centre to b's, or
///    to the contact point for a wall) that lies inside. This weight is the
///    line integral of the grain-pair's stress field along the branch, so the
///    sum is the exact volume average of the stress field that Love's
///    construction spreads along the branches; a contact-point rule instead
///    counts a contact wholly or not at all and fluctuates by one layer of
///    contacts per face (docs/scenes.md);
///  - the packing fraction is the volume of the grains' parts inside the box
///    (sphere–box and disk–rectangle intersections, volumeInBox) over the box's.
/// Wall forces and torques are always those of every contact.
struct Measurements {
    double volume = 0.0;
    /// Love–Weber contact part (loveStress, weighted over a region) plus the
    /// kinetic part (1/V) Σ m u ⊗ u over the grains (over a region: those
    /// whose centre lies inside), u = v − v̄ with v̄ their mean velocity (in
    /// a deforming cell u = v − World::meanFlow(x) − the mean of that);
    /// compression positive.
    Mat3 stress = Mat3::Zero();
    double pressure = 0.0;  ///< tr σ / dimension
    /// 3D: √(3 J₂) (σ₁ − σ₃ under axisymmetric stress); 2D: 2 √J₂ = σ₁ − σ₂; 1D: 0.
    double deviator = 0.0;
    double packingFraction = 0.0;  ///< Σ grain volumes (2D: areas) inside / V
    /// Mean number of force-carrying grain–grain contacts per grain, 2 N_c / N
    /// (over a region: the contacts of the grains whose centre is inside, per
    /// such grain); and the same without rattlers (grains with fewer than
    /// dimension + 1 force-carrying contacts, walls included, and their
    /// contacts).
    double coordination = 0.0, coordinationNonRattlers = 0.0;
    /// Fabric tensor F = (1/N_c) Σ_c n_c ⊗ n_c over the force-carrying
    /// grain–grain contacts (walls do not count: a wall has no centre, so its
    /// contacts have no branch direction of the packing); over a region each
    /// contact counts once per end whose grain lies inside. tr F = 1 when
    /// there is a contact, 0 otherwise.
    Mat3 fabric = Mat3::Zero();
    std::vector<Vec3> wallForce;   ///< per wall (body − numGrains): the force the grains exert on it
    /// Per wall: the torque of those forces about the wall's reference point
    /// x_wall (the scene's `point`), Σ (x_contact − x_wall) × f with
    /// x_contact = contactPoint() in the grains' (wrapped) coordinates.
    std::vector<Vec3> wallTorque;
};
Measurements measure(const World& world, const std::vector<Contact>& contacts, const MeasureRegion* region = nullptr);

struct PartTally;

/// One part of a world cut over MPI ranks, as the measurements see it: the
/// grains and contacts it counts, and how the parts' sums meet. The sums
/// are exact and the maxima and counts order-free, so the whole's values
/// have the serial run's bits however the world is cut. A part's contacts
/// must carry their rows' forces and hold every contact of the grains it
/// counts. The default is the whole world on one process.
struct WorldPart {
    const std::vector<char>* grains = nullptr;  ///< per grain: counted here (null: every one)
    const std::vector<char>* rows = nullptr;    ///< per contact: counted here (null: every one)
    bool walls = true;                          ///< the mobile walls' kinetic energy counted here
    std::size_t wholeGrains = 0;                ///< with reduce: the grains of every part
    /// Adds the words (ExactSum::words and counts) and takes each maximum
    /// over every part (collective); null: one part.
    std::function<void(std::vector<std::uint64_t>& words, std::vector<double>& maxima)> reduce;
    /// Makes `count` (per grain here, its force-carrying neighbours among
    /// this part's contacts) right for every grain at an end of a contact
    /// counted here (collective); null: one part.
    std::function<void(std::vector<int>& count)> completeCounts;
    /// More of the caller's sums, reduced with measure()'s first pass (in
    /// place): one set of collectives for a whole row.
    PartTally* with = nullptr;
};

/// Exact sums, maxima and counts that parts add up (WorldPart::reduce).
struct PartTally {
    std::vector<ExactSum> sums;
    std::vector<double> maxima;
    std::vector<std::uint64_t> counts;
    void reduce(const WorldPart& part);
    /// reduce(), with `more`'s entries added over the parts in the same
    /// collectives (in place).
    void reduce(const WorldPart& part, PartTally* more);
};

/// measure() over the parts: each calls it with its own part (collective
/// where the part reduces); every part gets the whole's measurements.
Measurements measure(const World& world, const std::vector<Contact>& contacts, const MeasureRegion* region,
                     const WorldPart& part);

/// kineticEnergy, rotationalEnergy and, over the contacts, overlapStats,
/// each part's share added over the parts (one reduction).
struct PartEnergies {
    double kinetic = 0.0, rotational = 0.0;
    OverlapStats overlaps;
};
PartEnergies energies(const World& world, const std::vector<Contact>& contacts, const WorldPart& part);
/// energies() in two halves: this part's terms (three sums, a count, a
/// maximum: not reduced), and the energies from their sums.
PartTally energyTerms(const World& world, const std::vector<Contact>& contacts, const WorldPart& part);
PartEnergies energiesOf(const PartTally& terms);

/// The force the grains' contacts exert on each wall and on the grains
/// glued to it (World::DrivenGrain), and its torque about the wall's point
/// (Measurements::wallForce, wallTorque), indexed by body − numGrains.
void wallLoads(const World& world, const std::vector<Contact>& contacts, std::vector<Vec3>& force,
               std::vector<Vec3>& torque);

/// Grain i's solid volume (2D: area, 1D: length): its sphere's, or its
/// clump's union's at its size.
double solidVolume(const World& world, std::size_t i);

/// Volume (2D: area, 1D: length) of the part of a grain of radius r centred
/// at c that lies inside the box lo..hi, on the dimension's axes (no
/// periodic images): exact in 1D and 2D (the disk–rectangle area from the
/// antiderivative of the chord), in 3D a Gauss–Legendre quadrature over z of
/// the exact slice areas, split where a slice's circle passes a face or an
/// edge of the box (relative error below 1e-10).
double volumeInBox(const Vec3& c, double r, const Vec3& lo, const Vec3& hi, int dimension);

/// Per grain, the mean stress inside it from its contacts (the grain's term
/// of the Love–Weber sum), σ_i = −(1/V_i) Σ_{c ∋ i} f_i,c ⊗ (x_c − x_i), with
/// f_i,c the force of contact c on grain i, x_c the contact point and V_i the
/// grain's volume (2D: area, 1D: length); compression positive.
std::vector<Mat3> grainStress(const World& world, const std::vector<Contact>& contacts);

}  // namespace moreau
