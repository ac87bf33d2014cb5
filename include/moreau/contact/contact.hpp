#pragma once
/// Contact candidates and their persistent history, shared by CD and MD.
///
/// Hot record: Contact is 80 bytes (see the static_assert below).
#include <cassert>
#include <cmath>
#include <cstdint>
#include <vector>

#include "moreau/contact/shape_poses.hpp"
#include "moreau/core/types.hpp"
#include "moreau/model/world.hpp"

namespace moreau {

/// 64-bit contact key: (low body, high body, feature), 28 + 28 + 8 bits.
/// Sorting by key gives a deterministic order independent of how candidates
/// were found. The feature tells a pair's contacts apart: for clumps the
/// component of a (high 4 bits) and of b (low 4 bits; 0 for a wall or a
/// sphere), 0 for two spheres.
using ContactKey = std::uint64_t;
constexpr int kKeyFeatureBits = 8;
constexpr int kKeyBodyBits = 28;
constexpr std::uint32_t kKeyFeatureMask = (1u << kKeyFeatureBits) - 1u;

inline ContactKey makeContactKey(BodyId a, BodyId b, std::uint32_t feature = 0) {
    return (static_cast<std::uint64_t>(a) << (kKeyBodyBits + kKeyFeatureBits)) |
           (static_cast<std::uint64_t>(b) << kKeyFeatureBits) | (feature & kKeyFeatureMask);
}
/// The feature of a key.
inline std::uint32_t keyFeature(ContactKey key) { return static_cast<std::uint32_t>(key & kKeyFeatureMask); }
/// The feature of a contact between component ca of a and cb of b.
inline std::uint32_t componentFeature(std::uint32_t ca, std::uint32_t cb) { return ca << 4 | cb; }

/// Polygon contacts (docs/polygons.md). A vertex–edge point's feature names
/// its vertex: kVertexOfB set for a vertex of b, the vertex's index in the
/// bits below; kOverlapFeature names the overlap region of a pair (molecular
/// dynamics: one contact per pair or per polygon and wall).
constexpr std::uint32_t kVertexOfB = 0x80u;
constexpr std::uint32_t kOverlapFeature = 0xFFu;

/// What survives from one step to the next for one contact, common to every
/// method. The force laws' own memory (MD springs, plastic memory) is the
/// rest of the contact's record: its slots (contact_store.hpp), carried by
/// the same merge-join.
struct ContactHistory {
    Vec3 reaction = Vec3::Zero();  ///< last contact force acting on body b (CD: reaction R, CD eq. 6)
    std::uint32_t age = 0;         ///< steps this contact has existed
};

/// One contact candidate: geometry from the narrow phase plus history.
/// Conventions (CD paper §2.4): n points from body a to body b, the reaction
/// acts on body b, gap < 0 is an overlap. Body a is always a grain (the lower
/// id; walls come after the grains), body b a grain or a wall.
///
/// Lever arms are not stored: they follow from n and the radii. For spheres
/// the arm of a is r_a n and the arm of b is −r_b n (see leverArm); walls never
/// rotate, so a wall's arm is never needed (its radius is 0, and leverArm
/// returns 0 for it). The contact point is contactPoint().
struct Contact {
    ContactKey key = 0;
    BodyId a = 0, b = 0;
    Vec3 n = Vec3::UnitX();
    double gap = 0.0;
    ContactHistory history;
};

/// A contact of bodies a < b with its key and no geometry or history yet
/// (the narrow phase, e.g. refreshContactGeometry, fills n and gap).
inline Contact pairContact(BodyId a, BodyId b) {
    Contact c;
    c.key = makeContactKey(a, b);
    c.a = a;
    c.b = b;
    return c;
}

// key 8 + a, b 8 + n 24 + gap 8 + history (reaction 24 + age 4, padded to 32)
// = 80 bytes, half of the 160 it took with stored lever arms la/lb and the MD
// spring/plastic fields. Each grain of a dense packing owns several candidate
// contacts, held both as this step's and last step's list, so this record
// decides whether memory per grain stays under 1 KB in 100k-grain runs.
static_assert(sizeof(Contact) <= 80, "Contact is a hot record: keep it at 80 bytes or less");

/// Overlap statistics over the contacts that carry a force (made by
/// analysis' overlapStats, or by the fused MD pipeline from its pairs).
struct OverlapStats {
    std::size_t contacts = 0;  ///< contacts with history.reaction ≠ 0
    double mean = 0.0;         ///< mean of max(−gap, 0) over those contacts (0 if none)
    double max = 0.0;          ///< largest max(−gap, 0) over those contacts (0 if none)
};

/// leverArm in a world of polygons (src/contact/polygon_contacts.cpp): a
/// vertex–edge point's vertex offset for the vertex's body, the vertex
/// moved by the gap along n for the other; an overlap's centroid from each
/// centre; 0 for a wall.
Vec3 polygonLeverArm(const World& world, const Contact& c, BodyId body);
/// Both arms of a polygon contact at once (one overlap for the two).
void polygonLeverArms(const World& world, const Contact& c, Vec3& la, Vec3& lb);

/// A polygon overlap contact (kOverlapFeature) at the world's pose: the arms
/// to the overlap's centroid, the normal of the contact line (a to b) and
/// the equivalent gap −A/l_c (Peña et al. eq. 5); apart (no area), the
/// contact's own normal and gap, not below 0.
struct PolygonOverlapGeometry {
    Vec3 la = Vec3::Zero(), lb = Vec3::Zero(), n = Vec3::UnitX();
    double gap = 0.0;
};
PolygonOverlapGeometry polygonOverlapGeometry(const World& world, const Contact& c);
/// The same from the polygons of `poses` (updated at the world's pose): the same bits.
PolygonOverlapGeometry polygonOverlapGeometry(const World& world, const ShapePoses& poses, const Contact& c);

/// Every contact of polygon a with body b > a (a polygon or a plane wall)
/// whose gap is at most margin, in key order, constructed in out (room for
/// two, or for a's vertices when b is a wall; it may be raw storage); returns how many; the polygons from `poses`
/// (updated at the world's pose). Vertex–edge points, or where
/// world.polygonOverlaps one overlap contact (kOverlapFeature): for two
/// polygons when their separating axis (polygonSeparatingAxis) separates
/// them by at most margin, with its normal and separation as n and gap;
/// for a wall, the deepest vertex's.
int polygonContacts(const World& world, const ShapePoses& poses, BodyId a, BodyId b, double margin, Contact* out);

/// Lever arm of `body` (c.a or c.b) from its centre of mass to the contact
/// point: r_a n for a, −r_b n for b; for a clump, from its centre to the
/// touching component's centre plus that radius along ±n. For a wall it is
/// 0 (radius 0): walls never rotate, so no arm of theirs enters any equation.
inline Vec3 leverArm(const World& world, const Contact& c, BodyId body) {
    assert(body == c.a || body == c.b);
    if (world.hasPolygons()) return polygonLeverArm(world, c, body);
    if (world.hasClumps()) {
        const std::uint32_t f = keyFeature(c.key);
        const auto i = static_cast<std::size_t>(body);
        if (world.isWall(body)) return Vec3::Zero();
        const unsigned k = body == c.a ? f >> 4 : f & 0xFu;
        const double r = world.componentRadius(i, k);
        return world.componentOffset(i, k) + (body == c.a ? r : -r) * c.n;
    }
    return body == c.a ? Vec3(world.radius[static_cast<std::size_t>(c.a)] * c.n)
                       : Vec3(-world.radius[static_cast<std::size_t>(c.b)] * c.n);
}

/// leverArm with the component's ball read from `poses` (updated at the
/// world's current pose) instead of turned again: the same arm, bit for
/// bit. For the hot loops of a world with clumps.
inline Vec3 leverArm(const ShapePoses& poses, const Contact& c, BodyId body) {
    assert(body == c.a || body == c.b);
    const auto i = static_cast<std::size_t>(body);
    if (i >= poses.grains()) return Vec3::Zero();  // a wall
    const std::uint32_t f = keyFeature(c.key);
    const ComponentBall& ball = poses.ball(i, body == c.a ? f >> 4 : f & 0xFu);
    return ball.offset + (body == c.a ? ball.radius : -ball.radius) * c.n;
}

/// The radius of `body`'s sphere that touches at c (c.a or c.b): its own,
/// or its clump's component's; a polygon's equivalent radius √(A/π) (Peña
/// et al. eq. 5); 0 for a wall.
inline double contactRadius(const World& world, const Contact& c, BodyId body) {
    assert(body == c.a || body == c.b);
    const auto i = static_cast<std::size_t>(body);
    if (const PolygonShape* p = world.polygonOf(i)) return world.size[i] * std::sqrt(p->area / M_PI);
    if (!world.hasClumps()) return world.radius[i];
    const std::uint32_t f = keyFeature(c.key);
    return world.componentRadius(i, body == c.a ? f >> 4 : f & 0xFu);
}

/// The contact point on grain a's surface, x_a + r_a n (x_a + leverArm). It lies next to x_a
/// even in a periodic world (no minimum image needed). On b's side the point
/// is x_a + (r_a + gap) n: for a wall it lies on the wall's surface, for a
/// grain it is x_b − r_b n in the minimum image.
inline Vec3 contactPoint(const World& world, const Contact& c) {
    assert(!world.isWall(c.a));
    return world.x[static_cast<std::size_t>(c.a)] + leverArm(world, c, c.a);
}

}  // namespace moreau
