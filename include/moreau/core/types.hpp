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

}  // namespace moreau
