#pragma once
/// Contact candidates and their persistent history, shared by CD and MD.
#include <cstdint>
#include <vector>

#include "moreau/core/types.hpp"

namespace moreau {

/// 64-bit contact key: (low body, high body, feature). Sorting by key gives a
/// deterministic order independent of how candidates were found.
using ContactKey = std::uint64_t;

inline ContactKey makeContactKey(BodyId a, BodyId b, std::uint32_t feature = 0) {
    return (static_cast<std::uint64_t>(a) << 34) | (static_cast<std::uint64_t>(b) << 4) | (feature & 0xFu);
}

/// What survives from one step to the next for one contact. CD keeps its
/// reaction for the warm start; MD fields are added by the MD module.
struct ContactHistory {
    Vec3 reaction = Vec3::Zero();  ///< CD: last reaction force R acting on body b (CD eq. 6)
    Vec3 spring = Vec3::Zero();    ///< MD: tangential spring / displacement
    double plastic = 0.0;          ///< MD: plastic memory (Walton–Braun ξ₀, max force)
    std::uint32_t age = 0;         ///< steps this contact has existed
};

/// One contact candidate: geometry from the narrow phase plus history.
/// Conventions (CD paper §2.4): n points from body a to body b, the reaction
/// acts on body b, gap < 0 is an overlap, la/lb point from the centres of mass
/// to the contact point.
struct Contact {
    ContactKey key = 0;
    BodyId a = 0, b = 0;
    Vec3 n = Vec3::UnitX();
    Vec3 la = Vec3::Zero();
    Vec3 lb = Vec3::Zero();
    double gap = 0.0;
    ContactHistory history;
};

}  // namespace moreau
