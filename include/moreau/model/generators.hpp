#pragma once
/// Initial grain configurations: a straight chain, regular lattices, a random
/// loose packing and packing files. Plain functions, usable without a scene
/// file (benches call `readPackingFile` and `makeLattice` directly); the scene
/// reader (io/scene_file.hpp) maps its `[chain]`, `[lattice]`, `[random]` and
/// `[packing]` sections onto them.
///
/// Every generator returns positions and radii only; `addGrains` turns them
/// into bodies of a World with masses and moments of inertia.
#include <array>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "moreau/core/types.hpp"

namespace moreau {

struct World;
struct ClumpShape;
struct PolygonShape;

/// One grain of a generated configuration.
struct GrainSpec {
    Vec3 position = Vec3::Zero();
    double radius = 0.0;
    /// Orientation, its frame to world (clumps; spheres ignore it).
    Quat orientation = Quat::Identity();
};

/// `count` grains of radius `radius` along +x, the first centred at `origin`,
/// neighbouring surfaces `spacing` apart (0: touching). The chain of the
/// sound-wave test (CD §3.3.1). Throws InputError for count 0, radius <= 0 or
/// spacing < 0.
std::vector<GrainSpec> makeChain(std::size_t count, double radius, double spacing = 0.0,
                                 const Vec3& origin = Vec3::Zero());
/// Grain i of makeChain(count, radius, spacing, origin), made alone.
GrainSpec chainGrain(double radius, double spacing, const Vec3& origin, std::size_t i);

enum class LatticeType {
    Square,  ///< 2D, x–y plane (z = 0)
    Hex,     ///< 2D triangular: rows along x, stacked along y √3/2 pitch apart,
             ///< odd rows shifted by half a pitch (z = 0)
    Cubic,   ///< 3D simple cubic
};

struct LatticeParams {
    LatticeType type = LatticeType::Cubic;
    /// Grains per axis (x, y, z); the z count is ignored for the 2D types.
    std::array<std::size_t, 3> counts{10, 10, 10};
    double radius = 0.5;
    double spacing = 0.0;  ///< gap between neighbouring surfaces; pitch = 2 radius + spacing
    Vec3 origin = Vec3::Zero();  ///< centre of the first grain (z ignored for 2D types)
    /// Each free coordinate (x, y in 2D; x, y, z in 3D) is displaced by a uniform
    /// draw in [−jitter·radius, jitter·radius). Jitter > spacing / (2 radius)
    /// may create overlaps; that is the caller's choice.
    double jitter = 0.0;
    std::uint64_t seed = 1;  ///< jitter stream: Rng::stream(seed, kLatticeJitterStream)
};

/// Grains ordered with x fastest, then y, then z. Throws InputError for a zero
/// count, radius <= 0, spacing < 0 or jitter < 0.
std::vector<GrainSpec> makeLattice(const LatticeParams& p);
/// The grains of makeLattice(p), and grain n of them, makeLattice(p)[n]
/// (the same bits, its jitter too: its draws of the one stream, skipped
/// to), made alone: a rank's grains without the others' (distributed input).
std::size_t latticeCount(const LatticeParams& p);
GrainSpec latticeGrain(const LatticeParams& p, std::size_t n);

struct RandomPackingParams {
    std::size_t count = 1000;
    double rMin = 0.5;  ///< radii are uniform in [rMin, rMax]
    double rMax = 0.5;
    /// Grains lie fully inside [boxMin, boxMax] on the axes of `dimension`;
    /// the other coordinates are 0 (2D: z = 0; 1D: y = z = 0).
    Vec3 boxMin = Vec3::Zero();
    Vec3 boxMax = Vec3::Constant(10.0);
    int dimension = 3;
    std::uint64_t seed = 1;  ///< Rng::stream(seed, kRandomPackingStream)
    /// Position draws tried for one grain before giving up.
    std::size_t maxAttemptsPerGrain = 20000;
};

/// Random sequential addition: all radii are drawn first and grains are placed
/// largest first (small grains then fill the holes, so polydisperse packings
/// get far denser before jamming); each draws positions until one overlaps no
/// earlier grain (touching is allowed). The result is in placement order, i.e.
/// by decreasing radius. A uniform cell grid of
/// cell size >= 2 rMax keeps each test to the neighbouring cells, so 10^5 grains
/// take well under a second at loose densities. The result depends only on the
/// parameters (same seed, same bits).
///
/// Throws InputError for invalid parameters, a box narrower than 2 rMax, and
/// when a grain cannot be placed within maxAttemptsPerGrain draws: the message
/// says how many grains fit and suggests a larger box. RSA jams near packing
/// fractions 0.55 (2D) and 0.38 (3D) for equal radii; stay below for quick
/// placement.
std::vector<GrainSpec> makeRandomLoosePacking(const RandomPackingParams& p);
/// The same grains as centre and radius, {x, y, z, r} (32 bytes a grain
/// where a GrainSpec takes 64): what it places them with.
std::vector<std::array<double, 4>> randomLoosePackingCentres(const RandomPackingParams& p);

/// Reads a packing file: one grain per row, `x y z radius` or
/// `id x y z radius` (id an integer, ignored), whitespace separated; '#'
/// starts a comment; blank lines are skipped. Throws InputError naming the file
/// and line for any other row shape, a non-number, a radius <= 0, and for an
/// unreadable file or one without grains.
std::vector<GrainSpec> readPackingFile(const std::string& path);

/// The same from a stream; `origin` names it in messages.
std::vector<GrainSpec> parsePacking(std::istream& in, const std::string& origin);

/// What a packing file's rows may hold beyond `x y z size` (an `id` first is
/// always allowed): for grains that are not round, an orientation after the
/// size — 3D `qw qx qy qz` (a unit quaternion, the grain's frame to world),
/// 2D `angle` (radians about z). Rows without it mean identity. With
/// Oriented2D a five-field row is `x y z size angle` (`id x y z size` is
/// then not allowed: give the angle, or leave out the id).
enum class PackingColumns { Plain, Oriented2D, Oriented3D };
/// readPackingFile / parsePacking for `columns`. A quaternion whose length
/// is off 1 by more than 1e-6 is refused (exit 2), naming the file and line;
/// others are normalised.
std::vector<GrainSpec> readPackingFile(const std::string& path, PackingColumns columns);
std::vector<GrainSpec> parsePacking(std::istream& in, const std::string& origin, PackingColumns columns);

/// A packing file read a row at a time, none held: parsePacking's grains
/// and refusals (parsePacking reads through one).
class PackingReader {
public:
    PackingReader(std::istream& in, std::string origin, PackingColumns columns);
    /// A share of a file's lines (its rows read by several processes):
    /// `in` starts after `linesBefore` lines of the file, the lines' numbers
    /// in messages are the file's, and a share without grains is no error.
    PackingReader(std::istream& in, std::string origin, PackingColumns columns, long linesBefore);
    /// The next row's grain into `g`; false at the end of the stream
    /// (InputError for a bad row, an unreadable stream, or one without grains).
    bool next(GrainSpec& g);
    /// The refusal of a file without grains.
    static std::string noGrainsMessage(const std::string& origin);

private:
    std::istream& in_;
    std::string origin_;
    PackingColumns columns_;
    std::string line_;
    std::vector<std::string_view> fields_;
    long lineNumber_ = 0;
    std::size_t grains_ = 0;
    bool share_ = false;
};

/// Gives every grain a random orientation drawn from `seed` (a stream of its
/// own): uniform over rotations in 3D, an angle about z uniform in [0, 2π)
/// in 2D; grain i's depends on (seed, i) only.
void randomOrientations(std::vector<GrainSpec>& grains, int dimension, std::uint64_t seed);
/// Grain i's orientation of randomOrientations, made alone.
Quat randomOrientation(int dimension, std::uint64_t seed, std::size_t i);

/// Writes `id x y z radius` rows (ids from 1) with 17 significant digits, so
/// readPackingFile gives back the same bits. Throws InputError if the file
/// cannot be written.
void writePackingFile(const std::string& path, const std::vector<GrainSpec>& grains);

/// Mass and inertia model of a grain (DESIGN.md, "Dimensions").
enum class GrainShape {
    Disk,    ///< mass = density·πr², I = m r²/2 (2D disks; also the 1D chain)
    Sphere,  ///< mass = density·4/3 πr³, I = 2/5 m r²
};

double grainMass(GrainShape shape, double radius, double density);
double grainInertia(GrainShape shape, double mass, double radius);

/// Appends the grains to `world` (before any wall; the world's dimension must
/// be set first, it fixes the locked axes). Each grain gets `fixedMass` if it is
/// > 0, else the mass of its shape at `density`; inertia follows the shape.
void addGrains(World& world, const std::vector<GrainSpec>& grains, GrainShape shape, double density,
               double fixedMass = 0.0);

/// Appends the grains as clumps of world.clumpShapes[shapeIndex − 1], each
/// of size `radius / boundingRadius` (GrainSpec::radius is its bounding
/// radius) and orientation g.orientation · frame (its shape's principal
/// frame); mass `fixedMass` if > 0, else density × size^d × the shape's
/// volume (d the world's dimension, 2 or 3). With `frameOrigins` the
/// positions are those of the frame the shape was given in (a packing
/// file's rows), else of the centre of mass (the generators').
void addClumps(World& world, const std::vector<GrainSpec>& grains, std::uint16_t shapeIndex, double density,
               double fixedMass = 0.0, bool frameOrigins = false);
/// Where addClumps puts the centre of mass of clump `g` of `shape` (g's
/// position itself unless `frameOrigin`: then its frame's origin).
Vec3 clumpCentre(const GrainSpec& g, const ClumpShape& shape, bool frameOrigin);

/// Appends the grains as polygons. Each grain's shape is
/// world.polygonShapes[shapeIndex − 1], or with shapeIndex 0 its own shape,
/// appended to world.polygonShapes in grain order (irregular polygons). A
/// grain's GrainSpec::radius is its size times the shape's reach (the
/// farthest vertex from the frame the shape was given in: 1 for regular and
/// random polygons, whose vertices lie on the unit circle), so that the
/// polygon lies in the disk of that radius about g.position, the frame's
/// origin; its centre of mass is moved to where the frame puts it. Angle
/// from g.orientation (about z). Mass `fixedMass` if > 0, else density ×
/// size² × area.
void addPolygons(World& world, const std::vector<GrainSpec>& grains, std::uint32_t shapeIndex, double density,
                 double fixedMass = 0.0);
/// The same with grain k's shape world.polygonShapes[shapeIndices[k] − 1].
void addPolygons(World& world, const std::vector<GrainSpec>& grains, const std::vector<std::uint32_t>& shapeIndices,
                 double density, double fixedMass = 0.0);
/// Where addPolygons puts grain `g` of shape `shape`: its centre of mass,
/// its size (its radius over the shape's reach) and its angle about z.
struct PolygonPlace {
    Vec3 centre;
    double size = 1.0, angle = 0.0;
};
PolygonPlace placePolygon(const GrainSpec& g, const PolygonShape& shape);
/// A polygon shape's reach: the farthest vertex from the frame it was given in (unit size).
double polygonReach(const PolygonShape& shape);

/// Stream tags of the generators' random numbers (second word of Rng::stream),
/// fixed so that scene seeds keep their meaning across versions.
inline constexpr std::uint64_t kRandomPackingStream = 0x52534150ULL;  // "RSAP"
inline constexpr std::uint64_t kLatticeJitterStream = 0x4a495454ULL;  // "JITT"
inline constexpr std::uint64_t kOrientationStream = 0x4f524e54ULL;    // "ORNT"
inline constexpr std::uint64_t kPolygonStream = 0x504f4c59ULL;        // "POLY": irregular polygons' vertices

}  // namespace moreau
