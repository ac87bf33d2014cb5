#pragma once
/// Basic numeric types shared by every layer of Moreau.
#include <Eigen/Core>
#include <Eigen/Geometry>
#include <cstdint>

namespace moreau {

using Vec3 = Eigen::Vector3d;
using Mat3 = Eigen::Matrix3d;
using Quat = Eigen::Quaterniond;

/// Index of a body (grain or wall) in the World arrays.
using BodyId = std::int32_t;

/// Component-wise product, used for per-axis inverse masses (locked axes are 0).
inline Vec3 cwise(const Vec3& a, const Vec3& b) { return a.cwiseProduct(b); }

/// [l×]: the matrix with [l×] v = l × v.
inline Mat3 crossMatrix(const Vec3& l) {
    Mat3 s;
    s << 0, -l.z(), l.y(), l.z(), 0, -l.x(), -l.y(), l.x(), 0;
    return s;
}

/// q v q* for a unit quaternion q: Eigen's formula (t = 2 u × v, then
/// v + w t + u × t, u the vector part) written out in scalars, the same
/// bits without an FMA unit, in fewer instructions than Eigen's SSE2 form
/// on three unaligned doubles. Hot in clump worlds (each component's
/// offset, each tumbling body's drift).
inline Vec3 turned(const Quat& q, const Vec3& v) {
    const double ux = q.x(), uy = q.y(), uz = q.z(), w = q.w();
    double tx = uy * v.z() - uz * v.y(), ty = uz * v.x() - ux * v.z(), tz = ux * v.y() - uy * v.x();
    tx += tx;
    ty += ty;
    tz += tz;
    return {v.x() + w * tx + (uy * tz - uz * ty), v.y() + w * ty + (uz * tx - ux * tz),
            v.z() + w * tz + (ux * ty - uy * tx)};
}

}  // namespace moreau
