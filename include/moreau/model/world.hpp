#pragma once
/// The simulated world: every body (grains first, then walls) as structure of
/// arrays, plus the global settings the stages share.
///
/// Hot per-body arrays (read every contact update): x, v, w, invMass,
/// invInertia, radius — 3*24 + 2*24 + 8 = 128 bytes per body. Cold arrays
/// (names, shapes of walls, force schedules) sit apart.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "moreau/core/types.hpp"
#include "moreau/model/clump.hpp"
#include "moreau/model/polygon.hpp"

namespace moreau {

enum class ShapeKind : std::uint8_t { Sphere, Plane, Cylinder };

/// Geometry of a wall body. A wall's body position x is a point on the plane or
/// on the cylinder axis; walls never rotate.
struct WallShape {
    ShapeKind kind = ShapeKind::Plane;
    /// Plane: unit normal pointing into the half space where grains live.
    /// Cylinder: unit axis direction.
    Vec3 direction = Vec3::UnitZ();
    double radius = 0.0;  ///< cylinder radius
    bool inside = true;   ///< cylinder: grains live inside (true) or outside
    double mu = 0.0;      ///< Coulomb friction of grain–wall contacts
};

/// A force that is `before` until time `switchTime`, then `after` (the piston
/// of CD §3.3.2: F, then F + ΔF).
struct ForceSchedule {
    Vec3 before = Vec3::Zero();
    Vec3 after = Vec3::Zero();
    double switchTime = std::numeric_limits<double>::infinity();
    Vec3 at(double t) const { return t < switchTime ? before : after; }
};

struct World {
    int dimension = 3;  ///< 1: motion along x only; 2: x–y plane, spin about z; 3: free
    std::size_t numGrains = 0;

    // --- hot, one entry per body -------------------------------------------
    std::vector<Vec3> x;           ///< centre of mass (walls: point on plane/axis)
    std::vector<Vec3> v;           ///< velocity
    std::vector<Vec3> w;           ///< angular velocity (world frame)
    std::vector<Vec3> invMass;     ///< per-axis inverse mass; 0 on locked axes and fixed walls
    /// Per-axis inverse moment of inertia: a sphere's (isotropic) in any
    /// frame, a clump's principal ones (its body frame; 2D: about z only).
    std::vector<Vec3> invInertia;
    std::vector<double> radius;    ///< sphere radius, a clump's bounding radius about its centre; 0 for walls

    // --- cold ----------------------------------------------------------------
    std::vector<Quat> q;               ///< orientation, body (principal) frame to world
    std::vector<double> mass;          ///< mass (walls: their finite mass or 0 if fixed)
    /// Moment of inertia of a sphere or disk; a clump's about z in 2D, the
    /// mean of its principal moments in 3D (principalInertia() has them).
    std::vector<double> inertia;
    /// Applied external forces (gravity excluded), one per body, or empty
    /// when no body has one (saves 56 bytes per grain in large packings).
    /// Write through forceSchedule(), read through appliedForce().
    std::vector<ForceSchedule> force;
    std::vector<bool> prescribed;      ///< velocity is prescribed (walls moved kinematically)
    std::vector<WallShape> wallShape;  ///< indexed by body - numGrains
    std::vector<std::string> wallName; ///< indexed by body - numGrains
    std::vector<bool> wallMobile;      ///< indexed by body - numGrains
    /// A grain moved kinematically (a scene's [group.NAME]): its inverse mass
    /// and inertia are 0 on every axis and prescribed[grain] is set. With a
    /// `wall` it is glued to that wall: it takes the wall's velocity at each
    /// step and no spin (walls never rotate), and the contact forces on it act
    /// on the wall (a mobile wall carries its glued grains as one rigid body
    /// whose mass is the wall's). Without (wall = −1) it keeps the velocity
    /// and spin it was given.
    struct DrivenGrain {
        BodyId grain = 0;
        BodyId wall = -1;
    };
    std::vector<DrivenGrain> driven;  ///< ascending grain ids; empty in most worlds

    // --- clumps (model/clump.hpp); the per-body arrays are empty in a world of spheres
    std::vector<ClumpShape> clumpShapes;
    /// Per body: 0 for a sphere (disk) or a wall, k for a clump of
    /// clumpShapes[k − 1].
    std::vector<std::uint16_t> shape;
    /// Per body: a clump's or polygon's size (its shape's scale); a sphere's
    /// radius; 0 for walls. Empty unless some body is a clump or a polygon.
    std::vector<double> size;

    // --- polygons (model/polygon.hpp; 2D only); empty in a world without them
    std::vector<PolygonShape> polygonShapes;
    /// Per body: 0 for anything else, k for a polygon of polygonShapes[k − 1].
    std::vector<std::uint32_t> polygon;
    /// How polygons touch: false, contact dynamics' vertex–edge points (up
    /// to two per pair of polygons, one per vertex on a wall); true,
    /// molecular dynamics' overlap region (one contact per pair, its force
    /// from the overlap area: docs/polygons.md). Set by the method.
    bool polygonOverlaps = false;

    // --- global ----------------------------------------------------------------
    Vec3 gravity = Vec3::Zero();
    double muGrain = 0.0;  ///< Coulomb friction of grain–grain contacts
    /// Periodic box: on axis k with periodic[k], positions wrap into
    /// [boxMin[k], boxMax[k]) and contacts use the minimum image.
    std::array<bool, 3> periodic{false, false, false};
    Vec3 boxMin = Vec3::Zero();
    Vec3 boxMax = Vec3::Zero();
    /// A deforming periodic cell (docs/mechanics.md, "Periodic cells that
    /// deform"), the mean flow v = diag(ε̇) (x − c) + γ̇ (y − c_y) e_x about
    /// the box centre c. On each periodic axis k the length grows at
    /// L̇_k = ε̇_k L_k (strainRate), about the centre. Lees–Edwards
    /// (sliding-brick) simple shear at rate γ̇ (shearRate; x and y
    /// periodic): the image of the cell across +y lies `shift` further
    /// along x and moves at γ̇ L_y along x. An image of a body thus moves
    /// with the body's velocity plus the cell's (imageVelocity), and a
    /// grain that leaves through a face comes back through the other with
    /// the velocity jump of the image it becomes (advancePose).
    Vec3 strainRate = Vec3::Zero();
    double shearRate = 0.0;
    double shift = 0.0;  ///< Lees–Edwards image offset δ along x, in [0, L_x)
    double shearStrain = 0.0;  ///< the Lees–Edwards shear strain ∫ γ̇ dt, never wrapped
    /// The cell's stress servo's memory (CellServo): ∫ (σ_kk − target_k) dt per axis.
    Vec3 stressErrorIntegral = Vec3::Zero();
    /// The wall servos' memory (WallServo): ∫ (target − σ) dt per wall
    /// (body − numGrains); empty until a servo with an integral time runs.
    std::vector<double> wallErrorIntegral;

    double time = 0.0;
    long step = 0;
    /// From `from`: the cell (box, its rates and offset), the servos' memory
    /// and the clock; not the bodies.
    void copyCellAndClock(const World& from);

    std::size_t numBodies() const { return x.size(); }
    std::size_t numWalls() const { return x.size() - numGrains; }
    bool isWall(BodyId b) const { return static_cast<std::size_t>(b) >= numGrains; }
    const WallShape& wall(BodyId b) const { return wallShape[static_cast<std::size_t>(b) - numGrains]; }
    bool anyPeriodic() const { return periodic[0] || periodic[1] || periodic[2]; }
    /// Whether some grain is glued to a wall (World::DrivenGrain).
    bool anyGlued() const {
        for (const DrivenGrain& d : driven)
            if (d.wall >= 0) return true;
        return false;
    }
    /// Per body, the body whose motion it follows: its wall for a glued
    /// grain, itself otherwise. Empty when no grain is glued (every body
    /// its own carrier).
    std::vector<BodyId> carriers() const {
        std::vector<BodyId> c;
        if (!anyGlued()) return c;
        c.resize(numBodies());
        for (std::size_t i = 0; i < c.size(); ++i) c[i] = static_cast<BodyId>(i);
        for (const DrivenGrain& d : driven)
            if (d.wall >= 0) c[static_cast<std::size_t>(d.grain)] = d.wall;
        return c;
    }
    /// Prescribes grain i's motion (World::DrivenGrain): velocity v and spin
    /// w on the dimension's axes, or glued to `wall` (v and w are then the
    /// wall's velocity and 0). Grains are driven in ascending order.
    void drive(BodyId grain, const Vec3& velocity, const Vec3& spin, BodyId wall = -1);
    /// Sets each glued grain's velocity to its wall's and its spin to 0.
    void followWalls() {
        for (const DrivenGrain& d : driven)
            if (d.wall >= 0) {
                v[static_cast<std::size_t>(d.grain)] = v[static_cast<std::size_t>(d.wall)];
                w[static_cast<std::size_t>(d.grain)] = Vec3::Zero();
            }
    }
    /// Adds each glued grain's entry of a per-body force array to its
    /// wall's (the glued grains and their wall are one rigid body; walls
    /// never rotate, so torques stay where they are). In grain order.
    void addGluedForces(std::vector<Vec3>& f) const {
        for (const DrivenGrain& d : driven)
            if (d.wall >= 0) f[static_cast<std::size_t>(d.wall)] += f[static_cast<std::size_t>(d.grain)];
    }

    /// Whether the cell deforms or its images are offset (Lees–Edwards).
    bool deforming() const { return shearRate != 0.0 || shift != 0.0 || strainRate != Vec3::Zero(); }
    bool leesEdwards() const { return shearRate != 0.0 || shift != 0.0; }

    /// The mean flow of a deforming cell at x: diag(ε̇) (x − c) + γ̇ (y − c_y) e_x
    /// about the box centre c (0 elsewhere).
    Vec3 meanFlow(const Vec3& at) const {
        if (!deforming()) return Vec3::Zero();
        const Vec3 r = at - 0.5 * (boxMin + boxMax);
        Vec3 u = strainRate.cwiseProduct(r);
        u[0] += shearRate * r[1];
        return u;
    }

    /// Minimum-image difference b − a on periodic axes. Under Lees–Edwards
    /// the image across y is first taken, with its offset along x.
    Vec3 minimumImage(Vec3 d) const {
        if (leesEdwards()) {
            const double ky = std::round(d[1] / (boxMax[1] - boxMin[1]));
            d[1] -= (boxMax[1] - boxMin[1]) * ky;
            d[0] -= shift * ky;
        }
        for (int k = 0; k < 3; ++k) {
            if (!periodic[k]) continue;
            const double L = boxMax[k] - boxMin[k];
            d[k] -= L * std::round(d[k] / L);
        }
        return d;
    }

    /// The velocity of b's image that minimumImage(raw) picks, less b's
    /// own: for raw = x_b − x_a, v_b − v_a + imageVelocity(raw) is the
    /// relative velocity of the pair (0 in a cell that does not deform).
    Vec3 imageVelocity(const Vec3& raw) const {
        Vec3 dv = Vec3::Zero();
        if (!deforming()) return dv;
        double dx = raw[0];
        if (periodic[1]) {
            const double Ly = boxMax[1] - boxMin[1], ky = std::round(raw[1] / Ly);
            dx -= shift * ky;
            dv[0] -= ky * shearRate * Ly;
            dv[1] -= ky * strainRate[1] * Ly;
        }
        if (periodic[0]) {
            const double Lx = boxMax[0] - boxMin[0];
            dv[0] -= std::round(dx / Lx) * strainRate[0] * Lx;
        }
        if (periodic[2]) {
            const double Lz = boxMax[2] - boxMin[2];
            dv[2] -= std::round(raw[2] / Lz) * strainRate[2] * Lz;
        }
        return dv;
    }

    /// The periodic lengths and the Lees–Edwards offset: what a neighbour
    /// list remembers of the cell it was built in.
    struct CellState {
        Vec3 length = Vec3::Zero();
        double shift = 0.0;
    };
    CellState cellState() const { return {boxMax - boxMin, shift}; }
    /// How far the cell's images moved since `built`: the largest change of
    /// the distance between a body and an image of another that the cell
    /// alone makes (Σ |ΔL_k| plus the offset's change). A neighbour list of
    /// skin s stays good while 2 (largest travel) + cellChange < s.
    double cellChange(const CellState& built) const {
        if (!deforming()) return 0.0;
        double c = 0.0;
        for (int k = 0; k < 3; ++k)
            if (periodic[k]) c += std::abs(boxMax[k] - boxMin[k] - built.length[k]);
        const double Lx = boxMax[0] - boxMin[0], d = std::abs(shift - built.shift);
        return c + std::min(d, std::abs(Lx - d));
    }

    /// The cell over dt: lengths L_k (1 + ε̇_k dt) about the centre, the
    /// Lees–Edwards offset by γ̇ L_y dt (modulo L_x). Called once per
    /// (sub)step before the bodies move (Simulation::integrate): they wrap
    /// into the cell of the step's end.
    void advanceCell(double dt);

    /// minimumImage(d) without its division and rounding where no periodic
    /// axis needs them: for |d_k| ≤ L/4 the quotient rounds to 0 and the
    /// minimum image is d_k itself (the same bits). For the separations of
    /// contact candidates, which are almost always that short.
    Vec3 minimumImageNear(const Vec3& d) const {
        for (int k = 0; k < 3; ++k)
            if (periodic[k] && !(std::abs(d[k]) * 4.0 <= boxMax[k] - boxMin[k])) return minimumImage(d);
        return d;
    }

    /// Room for `bodies` bodies in every per-body array, so that adding them
    /// one by one leaves no growth slack (a 10⁵-grain world otherwise keeps
    /// ~30% spare capacity, ~55 B per grain).
    void reserve(std::size_t bodies);
    /// Append a grain; locks follow `dimension`. Returns its id.
    BodyId addGrain(const Vec3& pos, double r, double m, double I);
    /// Append a clump of clumpShapes[shapeIndex − 1] at size s, mass m and
    /// orientation q (body frame to world); its inertia follows from its
    /// shape, m and s. Returns its id.
    BodyId addClump(const Vec3& pos, std::uint16_t shapeIndex, double s, const Quat& orientation, double m);
    /// Whether some body is a clump.
    bool hasClumps() const { return !shape.empty(); }
    /// Append a polygon of polygonShapes[shapeIndex − 1] at size s, mass m
    /// and angle (radians about z, body frame to world); its moment of
    /// inertia follows from its shape, m and s. 2D worlds only. Returns its id.
    BodyId addPolygon(const Vec3& pos, std::uint32_t shapeIndex, double s, double angle, double m);
    /// Whether some body is a polygon.
    bool hasPolygons() const { return !polygon.empty(); }
    /// Body i's polygon shape, or null for anything else.
    const PolygonShape* polygonOf(std::size_t i) const {
        return i < polygon.size() && polygon[i] != 0 ? &polygonShapes[polygon[i] - 1u] : nullptr;
    }
    /// Whether some body is not round (a clump or a polygon): contacts then
    /// need lever arms that do not follow from n and the radii alone.
    bool hasShapes() const { return hasClumps() || hasPolygons(); }
    /// Body i's angle about z (2D): from its orientation.
    double angle(std::size_t i) const { return 2.0 * std::atan2(q[i].z(), q[i].w()); }
    /// Body i's clump shape, or null for a sphere, disk or wall.
    const ClumpShape* clumpOf(std::size_t i) const {
        return i < shape.size() && shape[i] != 0 ? &clumpShapes[shape[i] - 1u] : nullptr;
    }
    /// Whether body i's spin changes with its orientation (a free 3D clump:
    /// its inertia is not isotropic), so that a torque turns into an
    /// angular velocity through R diag(invInertia) Rᵀ and its torque-free
    /// motion is no constant spin (freeRotorDrift).
    bool tumbles(std::size_t i) const {
        return dimension == 3 && i < shape.size() && shape[i] != 0 && invInertia[i] != Vec3::Zero();
    }
    /// The change of body i's angular velocity for an angular impulse t (world frame): I_w⁻¹ t.
    Vec3 spinChange(std::size_t i, const Vec3& t) const {
        return tumbles(i) ? inverseInertiaTimes(q[i], invInertia[i], t) : Vec3(invInertia[i].cwiseProduct(t));
    }
    /// Component k of body i (a sphere or disk: k = 0, itself): its
    /// centre's offset from the body's centre (world frame) and its radius.
    Vec3 componentOffset(std::size_t i, unsigned k) const {
        const ClumpShape* c = clumpOf(i);
        return c ? turned(q[i], size[i] * c->centre[k]) : Vec3::Zero();
    }
    double componentRadius(std::size_t i, unsigned k) const {
        const ClumpShape* c = clumpOf(i);
        return c ? size[i] * c->radius[k] : radius[i];
    }
    /// Body i's number of components (1 for a sphere, disk or wall).
    unsigned components(std::size_t i) const {
        const ClumpShape* c = clumpOf(i);
        return c ? static_cast<unsigned>(c->radius.size()) : 1u;
    }
    /// Body i's principal moments of inertia (a sphere's three equal ones; 0 for walls).
    Vec3 principalInertia(std::size_t i) const;
    /// Body i's rotational kinetic energy ½ ωᵀ I_w ω.
    double rotationalEnergy(std::size_t i) const;
    /// Append a wall body; mobile walls get the given mass on the axes in
    /// `freeAxes` (others locked). Returns its id.
    BodyId addWall(const std::string& name, const WallShape& shape, const Vec3& pos, bool mobile,
                   double m, const std::array<bool, 3>& freeAxes);

    /// The force schedule of body b, for writing (allocates `force` on first use).
    ForceSchedule& forceSchedule(BodyId b) {
        if (force.size() < numBodies()) force.resize(numBodies());
        return force[static_cast<std::size_t>(b)];
    }
    /// Applied force on body b at time t (zero when none was set).
    Vec3 appliedForce(BodyId b, double t) const {
        const auto i = static_cast<std::size_t>(b);
        return i < force.size() ? force[i].at(t) : Vec3::Zero();
    }

    /// Move body i with its current velocities over dt: x += v dt (CD eq. 1),
    /// the orientation by the exact rotation exp(ω dt), then the periodic
    /// wrap. Shared by every method's integrate stage.
    void advancePose(std::size_t i, double dt) {
        x[i] += dt * v[i];
        turn(i, dt);
        if (deforming()) return wrapDeforming(i);
        for (int k = 0; k < 3; ++k) {
            if (!periodic[k]) continue;
            const double L = boxMax[k] - boxMin[k];
            x[i][k] -= L * std::floor((x[i][k] - boxMin[k]) / L);
        }
    }
    /// Body i's orientation over dt with its spin: the exact rotation at
    /// constant spin (rotate), or a tumbling body's torque-free motion
    /// (freeRotorDrift), which changes its spin too.
    void turn(std::size_t i, double dt) {
        if (tumbles(i))
            freeRotorDrift(q[i], w[i], invInertia[i].cwiseInverse(), dt);
        else
            rotate(q[i], w[i], dt);
    }
    /// advancePose's wrap in a deforming cell: a body that crossed a face
    /// takes the position and the velocity of its image inside the box.
    void wrapDeforming(std::size_t i);

    /// q ← exp(ω dt) q, normalised: the rotation by the angle |ω| dt about
    /// ω. The unit quaternion of the step is (cos h, sin h ω/|ω|), h = |ω| dt/2;
    /// below h = 10⁻² (every step of a resolved simulation) cos h and
    /// sin h / |ω| come from their Taylor series in h² to h⁸, exact to
    /// rounding (the next terms are below 10⁻²⁰), which needs neither |ω|
    /// nor sin and cos. The product of two unit quaternions is unit to
    /// rounding, so the renormalisation is one Newton step of 1/√s about 1,
    /// (3 − s)/2, exact to rounding for |s − 1| < 10⁻⁸ (error ≈ (s − 1)²);
    /// farther from 1 (an orientation given off unit length) it divides by √s.
    static void rotate(Quat& q, const Vec3& w, double dt) {
        const double w2 = w.squaredNorm();
        if (!(w2 > 0.0) || dt == 0.0) return;
        const double h2 = 0.25 * (dt * dt) * w2;
        double c, sOverW;
        if (h2 < 1e-4) {
            // Products with the reciprocals (no divisions in the hot loop).
            constexpr double c2 = 1.0 / 2.0, c4 = 1.0 / 12.0, c6 = 1.0 / 30.0, c8 = 1.0 / 56.0;
            constexpr double s3 = 1.0 / 6.0, s5 = 1.0 / 20.0, s7 = 1.0 / 42.0;
            c = 1.0 - h2 * c2 * (1.0 - h2 * c4 * (1.0 - h2 * c6 * (1.0 - h2 * c8)));
            sOverW = 0.5 * dt * (1.0 - h2 * s3 * (1.0 - h2 * s5 * (1.0 - h2 * s7)));
        } else {
            const double wn = std::sqrt(w2), h = 0.5 * wn * dt;
            c = std::cos(h);
            sOverW = std::sin(h) / wn;
        }
        const Quat r(c, sOverW * w.x(), sOverW * w.y(), sOverW * w.z());
        q = r * q;
        const double s = q.coeffs().squaredNorm();
        q.coeffs() *= std::abs(s - 1.0) < 1e-8 ? 0.5 * (3.0 - s) : 1.0 / std::sqrt(s);
    }

    /// Per-axis masks for the dimension: translation and rotation.
    Vec3 translationMask() const;
    Vec3 rotationMask() const;
};

}  // namespace moreau
