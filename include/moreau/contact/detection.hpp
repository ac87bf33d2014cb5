#pragma once
/// Shared contact detection: broad phase (uniform cell grid, O(n) per call),
/// narrow phase (sphere–sphere, sphere–plane, sphere–cylinder inside/outside,
/// periodic minimum image) and the persistent contact store.
#include <array>
#include <cstdint>
#include <vector>

#include "moreau/contact/shape_poses.hpp"
#include "moreau/contact/contact.hpp"
#include "moreau/contact/contact_store.hpp"
#include "moreau/model/world.hpp"

namespace moreau {

/// Narrow phase for one grain pair / grain–wall pair. Returns true and fills
/// `c` (geometry only, history untouched) when gap < margin.
bool narrowSphereSphere(const World& world, BodyId a, BodyId b, double margin, Contact& c);
bool narrowSphereWall(const World& world, BodyId grain, BodyId wall, double margin, Contact& c);
/// The contact of component ca of grain a with component cb of body b > a
/// (a wall: cb = 0), its key's feature componentFeature(ca, cb); false when
/// their gap is not below margin. For spheres (ca = cb = 0) the arithmetic
/// of narrowSphereSphere / narrowSphereWall.
bool narrowComponents(const World& world, BodyId a, BodyId b, unsigned ca, unsigned cb, double margin, Contact& c);

/// Recomputes the geometry (n, gap) of every contact at the world's current
/// positions, keeping keys, bodies and history: the narrow phase of each
/// listed pair with no margin (periodic minimum image included). Multi-stage
/// MD integrators evaluate forces at stage positions on the step's contact
/// list this way. A pair the kernel rejects (non-finite positions) gets gap +∞.
void refreshContactGeometry(const World& world, std::vector<Contact>& contacts);
/// The same with every grain's balls read from `poses`, updated at the
/// world's current pose (a world with clumps: no component turned again).
void refreshContactGeometry(const World& world, const ShapePoses& poses, std::vector<Contact>& contacts);

/// Uniform cell grid broad phase. Cell size = largest diameter + margin, so
/// each grain only needs its own and neighbouring cells. Reuses its buffers
/// between calls; call once per step.
class CellGridDetector {
public:
    /// All candidates with gap < margin (absolute length), sorted by key.
    /// Geometry is filled in, history is default.
    void detect(const World& world, double margin, std::vector<Contact>& out);

    /// A candidate pair without its geometry: grain a < body b (the narrow
    /// phase recomputes the minimum image from the positions, so no image
    /// offset is stored). 8 bytes instead of a 80-byte Contact.
    struct Pair {
        BodyId a = 0, b = 0;
    };
    /// The same candidates as detect(), as pairs in key order.
    void detectPairs(const World& world, double margin, std::vector<Pair>& out);
    /// Frees the buffers kept between calls (~95 bytes per grain, and the
    /// balls of a world with clumps); the next call allocates them again.
    /// For callers that detect rarely.
    void releaseBuffers();

private:
    /// Geometry of this call's grid. Axis k has n[k] cells; a grain's cell
    /// coordinate is clamped into [0, n[k]) (clamping is monotone and never
    /// separates neighbours, so it is always safe). Periodic axes tile the box
    /// exactly and wrap; a periodic axis shorter than 3 cells gets 1 cell (all
    /// pairs along it). When the dense grid would exceed ~4 cells per grain
    /// (grains flown far away) cells are hashed into a table of ~2n buckets.
    struct Grid {
        std::array<double, 3> origin{};   ///< bounding-box min, or boxMin on periodic axes
        std::array<double, 3> invCell{};  ///< 1 / cell size (periodic: n / L)
        std::array<double, 3> length{};   ///< periodic box length (0 on other axes)
        double reach = 0.0;               ///< 2 r_max + margin: the farthest a candidate pair lies
        double shift = 0.0;               ///< Lees–Edwards offset along x of the image across +y (World::shift)
        std::array<std::int32_t, 3> n{1, 1, 1};
        std::array<bool, 3> periodic{};
        bool hashed = false;
        int hashBits = 0;
        std::size_t numCells = 0;
    };
    using CellCoord = std::array<std::int32_t, 3>;
    /// Position and radius of a grain, copied in cell order (32 bytes): the
    /// neighbour scan reads rows of cells contiguously whatever the grain ids.
    struct CellBody {
        Vec3 x;
        double r = 0.0;
    };

    /// Builds grid_ and bins the grains (count sort). False when no pair of
    /// grains can be a candidate (no grains, or largest diameter + margin ≤ 0).
    bool buildGrid(const World& world, double margin);
    CellCoord cellCoord(const Vec3& x) const;
    std::size_t cellIndex(const CellCoord& c) const;
    /// Broad + narrow phase of the grain in cell-order slot `slot` (grain
    /// `slot` itself when there is no grid): appends its partners j > i
    /// (grains sorted by id, then walls) to `partners`.
    void collectPartners(const World& world, double margin, bool pairs, std::size_t slot,
                         std::vector<BodyId>& partners) const;

    /// Pass 1 of detect() and detectPairs(): broad + narrow phase of every
    /// grain into chunks_, grainCount_ and grainPartners_; returns the prefix
    /// sums in grainOffset_ (grainOffset_[n] candidates in all).
    void findPartners(const World& world, double margin);

    /// findPartners, then emit(i, j, out[k]) for each candidate k = (i, j)
    /// in grain order (one thread per block of grains).
    template <class Out, class Emit>
    void eachCandidate(const World& world, double margin, std::vector<Out>& out, Emit emit);

    /// Partners found by one block of the first pass. Padded against false sharing.
    struct alignas(64) Chunk {
        std::vector<BodyId> partners;
    };

    Grid grid_;
    std::vector<std::int32_t> cellStart_, cellGrain_;  ///< count-sorted grains, ascending id per cell
    std::vector<CellBody> cellBody_;                   ///< position and radius of cellGrain_[p]
    std::vector<CellCoord> cellCoord_;                 ///< cell coordinate of cellGrain_[p]
    std::vector<std::size_t> grainCell_;               ///< cell (or bucket) of each grain
    std::vector<std::uint32_t> grainCount_;            ///< candidates of each grain
    std::vector<std::array<std::uint32_t, 2>> grainPartners_;  ///< (chunk, start) of each grain's partners
    std::vector<std::size_t> grainOffset_;             ///< prefix sum of grainCount_: output offsets
    std::vector<Chunk> chunks_;
    ShapePoses poses_;  ///< a world with clumps or polygons: its shapes, updated at each detect()
};

/// Verlet list on top of the cell grid: pairs within margin + skin are found
/// by the grid only when some body has moved more than skin/2 since the last
/// build; in between, each call re-runs the narrow phase over the listed
/// pairs. The output equals CellGridDetector's for the same margin (a pair
/// that came within the margin was within margin + skin at the build).
class VerletListDetector {
public:
    /// skin: extra distance of the list, absolute length (0: rebuild every call).
    explicit VerletListDetector(double skin = 0.0) : skin_(skin) {}
    void setSkin(double skin) { skin_ = skin; }
    void detect(const World& world, double margin, std::vector<Contact>& out);
    /// The same as rememberContacts(out, previous) followed by detect(world,
    /// margin, out); the remembering runs as a parallel pass first.
    void detect(const World& world, double margin, std::vector<Contact>& out, std::vector<ContactMemory>& previous);
    /// The shapes of the last detect() (ShapePoses: clumps' balls,
    /// polygons' turned vertices), for a reader at the same pose.
    const ShapePoses& shapePoses() const { return poses_; }
    /// Builds of the list so far (for benches and tests).
    long builds() const { return builds_; }
    /// Entries in the list now (within margin + skin at the last build):
    /// pairs of bodies, or of components in a world with clumps.
    std::size_t listPairs() const { return list_.size(); }

private:
    void detectInto(const World& world, double margin, std::vector<Contact>& out, std::vector<ContactMemory>* previous);

    // Memory layout (a dense packing has ~3 candidates per grain, so every
    // byte per candidate costs ~3 bytes per grain): the list holds 8-byte
    // pairs, not Contacts, and the narrow phase writes Contacts straight into
    // `out` through one chunk-sized buffer per thread, so the only full
    // Contact array is the caller's. A build frees `out` (its contents are
    // about to be replaced) before running the grid, and the grid's buffers
    // after: the two never coexist, so the grid adds nothing to the peak.

    /// Narrow-phase output of one chunk of the list. Padded against false sharing.
    struct alignas(64) Scratch {
        std::vector<Contact> contacts;
    };
    /// A world with clumps: the list of pairs of components (expandComponents).
    void expandComponents(const World& world, double reach);
    /// Whether some body may have closed a gap of more than the skin since
    /// the build: its travel (minimum image) within `limit`, plus, for a
    /// clump, what its turn can move a component.
    bool travelled(const World& world, double limit) const;

    CellGridDetector grid_;
    /// Sphere worlds: the pairs of bodies within margin + skin at the build,
    /// in key order. Worlds with clumps: the pairs of components within it
    /// (a body pair once per pair of its components, in key order), each
    /// entry's components in `features_` (ca << 4 | cb; ca alone for a wall).
    std::vector<CellGridDetector::Pair> list_;
    std::vector<std::uint8_t> features_;
    std::vector<Scratch> scratch_;  ///< one per thread
    ShapePoses poses_;          ///< a world with clumps or polygons: its shapes, updated at each call
    std::vector<Vec3> builtAt_;
    std::vector<Quat> builtTurn_;    ///< a world with clumps: orientations at the build
    std::vector<double> builtReach_; ///< ... and each body's farthest component centre (0: a sphere)
    World::CellState builtCell_;  ///< the periodic cell at the build (deforming cells)
    double skin_ = 0.0, builtMargin_ = -1.0;
    std::size_t lastSize_ = 0;  ///< contacts output by the last call
    long builds_ = 0;
};

/// O(n²) reference used by the tests as the judge of the cell grid.
void detectBruteForce(const World& world, double margin, std::vector<Contact>& out);

/// Merge-join of last step's contacts (sorted by key) with this step's
/// candidates (sorted by key) in O(n): matched contacts inherit the history
/// (age + 1), new ones start clean, vanished ones drop.
void matchContacts(const std::vector<Contact>& previous, std::vector<Contact>& current);

/// memory[k] = the key and history of contacts[k] (same order, so sorted by key).
void rememberContacts(const std::vector<Contact>& contacts, std::vector<ContactMemory>& memory);

/// matchContacts with last step's contacts as remembered by
/// rememberContacts: the same result.
void matchContactMemory(const std::vector<ContactMemory>& previous, std::vector<Contact>& current);
/// The same merge-join carrying whole records: `slots` (resized to
/// current.size() records of previousSlots.stride doubles) gets the slots of
/// the contact of the same key in `previous`, 0 for a new contact.
/// previousSlots holds one record per entry of `previous` (or stride 0).
void matchContactMemory(const std::vector<ContactMemory>& previous, const ContactSlots& previousSlots,
                        std::vector<Contact>& current, ContactSlots& slots);

}  // namespace moreau
