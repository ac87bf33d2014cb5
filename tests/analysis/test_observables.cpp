#include <doctest/doctest.h>

#include <bit>
#include <cstdint>

#include "moreau/analysis/observables.hpp"
#include "support/contacts.hpp"

using namespace moreau;
using moreau::test::loadedContact;

namespace {

/// Two grains (m = 2, I = 0.5 and m = 3, I = 1), a fixed floor and a mobile
/// piston of mass 5.
World smallWorld() {
    World world;
    world.dimension = 3;
    world.addGrain({0, 0, 0}, 0.5, 2.0, 0.5);
    world.addGrain({1, 0, 0}, 0.5, 3.0, 1.0);
    WallShape plane;
    world.addWall("floor", plane, {0, 0, -0.5}, false, 0.0, {false, false, false});
    world.addWall("piston", plane, {0, 0, 2.0}, true, 5.0, {false, false, true});
    world.v[0] = {1, 2, 3};
    world.v[1] = {-1, 0, 0};
    world.w[0] = {0, 0, 2};
    world.w[1] = {1, 1, 0};
    world.v[3] = {0, 0, 2};
    world.v[2] = {0, 0, 7};  // a kinematically driven fixed wall carries no energy
    return world;
}


/// Reference FNV-1a 64 over a byte buffer, written out independently.
std::uint64_t fnv1a(const std::vector<unsigned char>& bytes) {
    std::uint64_t h = 14695981039346656037ull;
    for (unsigned char byte : bytes) {
        h ^= byte;
        h *= 1099511628211ull;
    }
    return h;
}

void flipBit(double& value, int bit) {
    value = std::bit_cast<double>(std::bit_cast<std::uint64_t>(value) ^ (std::uint64_t{1} << bit));
}

}  // namespace

TEST_SUITE("analysis") {
    TEST_CASE("energies and momentum of a known state") {
        const World world = smallWorld();
        // ½·2·14 + ½·3·1 + ½·5·4 (piston) = 14 + 1.5 + 10
        CHECK(kineticEnergy(world) == doctest::Approx(25.5).epsilon(1e-15));
        // ½·0.5·4 + ½·1·2
        CHECK(rotationalEnergy(world) == doctest::Approx(2.0).epsilon(1e-15));
        const Vec3 p = totalMomentum(world);
        CHECK(p[0] == doctest::Approx(2.0 - 3.0).epsilon(1e-15));
        CHECK(p[1] == doctest::Approx(4.0).epsilon(1e-15));
        CHECK(p[2] == doctest::Approx(6.0 + 10.0).epsilon(1e-15));

        SUBCASE("a world at rest has none") {
            World rest = smallWorld();
            for (auto& v : rest.v) v.setZero();
            for (auto& w : rest.w) w.setZero();
            CHECK(kineticEnergy(rest) == 0.0);
            CHECK(rotationalEnergy(rest) == 0.0);
            CHECK(totalMomentum(rest) == Vec3::Zero());
        }
    }

    TEST_CASE("overlap statistics count force-carrying contacts only") {
        std::vector<Contact> contacts{
            loadedContact(0, 1, {1, 0, 0}, -0.1),
            loadedContact(0, 2, {0, 0, 2}, -0.3),
            loadedContact(1, 2, Vec3::Zero(), -0.5),  // unloaded: ignored despite the overlap
            loadedContact(1, 3, {0, 0, -1e-30}, 0.2),  // loaded across a gap: overlap 0
        };
        const OverlapStats s = overlapStats(contacts);
        CHECK(s.contacts == 3);
        CHECK(s.mean == doctest::Approx(0.4 / 3.0).epsilon(1e-14));
        CHECK(s.max == doctest::Approx(0.3).epsilon(1e-15));

        const OverlapStats none = overlapStats({loadedContact(0, 1, Vec3::Zero(), -0.5)});
        CHECK(none.contacts == 0);
        CHECK(none.mean == 0.0);
        CHECK(none.max == 0.0);
    }

    TEST_CASE("state hash") {
        const World world = smallWorld();
        const std::uint64_t h = stateHash(world);

        SUBCASE("equal states hash equal") { CHECK(stateHash(smallWorld()) == h); }

        SUBCASE("one flipped bit of a position or velocity changes it") {
            for (int bit : {0, 31, 52, 63}) {
                World changed = smallWorld();
                flipBit(changed.x[1][2], bit);
                CHECK(stateHash(changed) != h);
                World moving = smallWorld();
                flipBit(moving.v[0][0], bit);
                CHECK(stateHash(moving) != h);
            }
        }

        SUBCASE("position and velocity are not interchangeable") {
            World swapped = smallWorld();
            std::swap(swapped.x[0], swapped.v[0]);
            CHECK(stateHash(swapped) != h);
        }

        SUBCASE("walls and spins are not part of it") {
            World other = smallWorld();
            other.x[3] = {9, 9, 9};
            other.w[0] = {5, 5, 5};
            CHECK(stateHash(other) == h);
        }

        SUBCASE("FNV-1a 64 over x then v, low byte first") {
            World one;
            one.addGrain({1.5, -2.0, 0.25}, 0.5, 1.0, 1.0);
            one.v[0] = {3.0, 0.0, -1e-300};
            std::vector<unsigned char> bytes;
            for (double value : {1.5, -2.0, 0.25, 3.0, 0.0, -1e-300}) {
                const auto bits = std::bit_cast<std::uint64_t>(value);
                for (int k = 0; k < 8; ++k) bytes.push_back(static_cast<unsigned char>(bits >> (8 * k)));
            }
            CHECK(stateHash(one) == fnv1a(bytes));
            CHECK(stateHash(World{}) == 0xcbf29ce484222325ull);
        }
    }

    TEST_CASE("hex64") {
        CHECK(hex64(0) == "0000000000000000");
        CHECK(hex64(0x0123456789abcdefull) == "0123456789abcdef");
        CHECK(hex64(~std::uint64_t{0}) == "ffffffffffffffff");
    }

    TEST_CASE("Love-Weber stress") {
        World world;
        world.addGrain({0, 0, 0}, 0.5, 1.0, 0.1);
        world.addGrain({1, 0, 0}, 0.5, 1.0, 0.1);
        world.addGrain({0, 0, 1}, 0.5, 1.0, 0.1);
        world.addWall("floor", WallShape{}, {0, 0, -0.5}, false, 0.0, {false, false, false});
        const double volume = 4.0;

        SUBCASE("grain pair: f outer branch, compression positive") {
            const std::vector<Contact> contacts{loadedContact(0, 1, {2, 1, 0}, 0.0)};
            const Mat3 s = loveStress(world, contacts, volume);
            Mat3 expected = Mat3::Zero();
            expected(0, 0) = 2.0 / volume;  // f_x ℓ_x
            expected(1, 0) = 1.0 / volume;  // f_y ℓ_x
            CHECK((s - expected).norm() == doctest::Approx(0.0).epsilon(1e-15));
        }

        SUBCASE("grain-wall contact uses r_a n, unloaded ones are ignored") {
            Contact wall = loadedContact(0, 3, {0, 0, -3}, 0.0);
            wall.n = {0, 0, -1};
            const std::vector<Contact> contacts{wall, loadedContact(0, 2, Vec3::Zero(), 0.0)};
            const Mat3 s = loveStress(world, contacts, volume);
            CHECK(s(2, 2) == doctest::Approx(1.5 / volume).epsilon(1e-15));  // (−3)(−0.5)
            CHECK(s.norm() == doctest::Approx(1.5 / volume).epsilon(1e-15));
        }

        SUBCASE("grain-wall branch does not depend on where the wall's point lies") {
            // A tilted force on a grain resting on the floor: ℓ = r_a n = (0, 0, −0.5)
            // whatever point of the plane the wall body sits at.
            Contact wall = loadedContact(0, 3, {1, 0, -3}, 0.0);
            wall.n = {0, 0, -1};
            const Mat3 before = loveStress(world, {wall}, volume);
            world.x[3] = {7, -2, -0.5};
            const Mat3 after = loveStress(world, {wall}, volume);
            Mat3 expected = Mat3::Zero();
            expected(0, 2) = -0.5 / volume;  // f_x ℓ_z
            expected(2, 2) = 1.5 / volume;   // f_z ℓ_z
            CHECK((before - expected).norm() == doctest::Approx(0.0).epsilon(1e-15));
            CHECK(after == before);
        }

        SUBCASE("periodic pair uses the minimum image") {
            World periodic;
            periodic.periodic = {true, false, false};
            periodic.boxMin = {0, -5, -5};
            periodic.boxMax = {10, 5, 5};
            periodic.addGrain({9.6, 0, 0}, 0.5, 1.0, 0.1);
            periodic.addGrain({0.4, 0, 0}, 0.5, 1.0, 0.1);
            const std::vector<Contact> contacts{loadedContact(0, 1, {1, 0, 0}, -0.2)};
            const Mat3 s = loveStress(periodic, contacts, 2.0);
            CHECK(s(0, 0) == doctest::Approx(0.8 / 2.0).epsilon(1e-12));
        }
    }
}
