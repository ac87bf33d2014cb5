#pragma once
/// The contact duration the run guard sizes the MD step by (sim/guards.cpp):
/// each law's kernel gives its own (`duration(settings, probe)`: the normal
/// law's collision, a tangential spring's oscillation), and a contact lasts
/// no longer than the shortest. Not included by md/force_laws.hpp (it
/// includes that header for the dispatch).
#include <algorithm>
#include <limits>

#include "moreau/md/force_laws.hpp"

namespace moreau {

/// The time an MD step must resolve for the collision `p` under the laws
/// of `s` (undamped, so an upper bound on what damping leaves): the normal
/// law's contact duration and, for a tangential law that declares one, its
/// period, whichever is shorter. Infinity where nothing sets a scale (a
/// Hertz law at speed 0).
inline double contactDuration(const MdSettings& s, const CollisionProbe& p) {
    double t = std::numeric_limits<double>::infinity();
    withNormalLaw(s.normal, [&]<NormalLaw N>() { t = NormalKernel<N>::duration(s, p); });
    withTangentialLaw(s.tangential, [&]<TangentialLaw T>() {
        if constexpr (requires { TangentialKernel<T>::duration(s, p); }) t = std::min(t, TangentialKernel<T>::duration(s, p));
    });
    return t;
}

}  // namespace moreau
