#pragma once
/// The sphere piles of the Siconos harness (../shared/peers/siconos,
/// gen_sphere_pile.py) as Moreau worlds with their contacts: `moreau bench
/// fclib` reads them (bench.bodies), `moreau experiment solver-convergence`
/// builds them. One contact-dynamics step of a frictional pyramid on a floor.
#include <vector>

#include "moreau/contact/contact.hpp"
#include "moreau/model/world.hpp"

namespace moreau {

struct Pile {
    World world;
    std::vector<Contact> contacts;  ///< in the harness's order
    /// Per contact: the harness's body A is Moreau's body b (the harness's
    /// impulse acts on A, n from B to A; Moreau's on b, n from a to b).
    std::vector<char> aIsB;
    double dt = 0.0;
    BodyId floor = -1;  ///< the plane z = 0, once a contact touches it
};

/// Solid spheres (I = 2/5 m R²) at `positions`, at rest, gravity g along −z,
/// μ between grains `muGrain`.
Pile pileOf(const std::vector<Vec3>& positions, double radius, double mass, double dt, double g, double muGrain);

/// The contact between the harness's bodies A and B (B = −1: the floor,
/// made at the first such contact with μ `muFloor`), n from B to A, touching
/// (no gap term, as the harness's problems).
void addPileContact(Pile& pile, long A, long B, const Vec3& nFromBToA, double muFloor);

/// gen_sphere_pile.py's pile with its defaults: kx × ky spheres of radius
/// 0.05 and mass 1 in the bottom layer, `layers` face-centred-cubic layers
/// (each one sphere shorter per side), Δt = 0.005, g = 9.81, μ 0.5 on the
/// floor and 0.3 between spheres (its --mu-floor, --mu-sphere); the contacts
/// in its order (the floor's, then sphere pairs i < j, each found by
/// |x_i − x_j| ≤ 2R(1 + 10⁻⁹)).
Pile harnessPile(int kx, int ky, int layers, double muFloor = 0.5, double muGrain = 0.3);

}  // namespace moreau
