#pragma once
/// The MD force laws: one stateless kernel per law (md/laws/*.hpp, each
/// citing its paper and equations) and what the force stage needs to run
/// them — where a contact's memory lies in its slots, and the dispatch from
/// the scene's law to its kernel. The laws' names, summaries, memory and
/// capabilities are their rows in model/law_table.hpp.
#include <cstddef>
#include <utility>

#include "moreau/md/laws/hertz_material.hpp"
#include "moreau/md/laws/kernel.hpp"
#include "moreau/md/laws/kuhn.hpp"
#include "moreau/md/laws/luding.hpp"
#include "moreau/md/laws/mindlin.hpp"
#include "moreau/md/laws/normal.hpp"
#include "moreau/md/laws/pena.hpp"
#include "moreau/md/laws/rolling_ai.hpp"
#include "moreau/md/laws/saw_tooth.hpp"
#include "moreau/md/laws/spring.hpp"
#include "moreau/md/laws/velocity.hpp"
#include "moreau/md/laws/walton_braun.hpp"

namespace moreau {

/// Where the laws' memory lies in a contact's record of slots
/// (ContactSlots): the normal law's, then the tangential law's (its spring
/// vector first where it keeps one, then its further slots), then the
/// sliding flag where there is one, then the rolling law's. Offsets in doubles.
struct LawSlots {
    std::size_t normal = 0, tangential = 0;
    int sliding = -1;  ///< the flag's slot (1: the contact slid at its last evaluation), −1: none
    std::size_t rolling = 0;
    std::size_t stride = 0;
};

/// The layout for the laws of `s`. The sliding flag is kept where the
/// tangential law declares one and μ_s ≠ μ_d, or, for a law that reads it
/// at the step start of multi-stage schemes (Kuhn), where `stages`.
inline LawSlots lawSlots(const MdSettings& s, bool stages) {
    const ForceLawRow& n = lawRow(s.normal);
    const ForceLawRow& t = lawRow(s.tangential);
    LawSlots l;
    l.normal = 0;
    l.tangential = static_cast<std::size_t>(n.extraSlots);
    l.stride = l.tangential + (t.spring ? 3 : 0) + static_cast<std::size_t>(t.extraSlots);
    const bool flag = s.muStaticRatio != 1.0 || (stages && t.stageSlidingFlag);
    if (t.slidingFlag && flag) l.sliding = static_cast<int>(l.stride++);
    l.rolling = l.stride;
    l.stride += static_cast<std::size_t>(lawRow(s.rolling).extraSlots);
    return l;
}

/// The tangential force on b of a law the lane schedule takes, at one
/// contact of the staged loop: its number-generic arithmetic (`apply`, the
/// same the fused pass and its lane kernel run) from the contact's committed
/// memory `before` into `mem` (its spring), and its spring's energy into `out`.
template <TangentialLaw T>
[[gnu::always_inline]] inline Vec3 laneLawForce(const Constants& c, const Vec3& n, const Vec3& Vt, double Vn, double Fn,
                                                const Vec3& movement, const double* before, double* mem, bool& sliding,
                                                LawOutput& out) {
    static_assert(lawRow(T).lanes);
    Vec3 spring = lawRow(T).spring ? slotVec3(before) : Vec3::Zero();
    const Vec3 Ft = TangentialKernel<T>::apply(c, n, Vt, Vn, Fn, movement, spring, sliding);
    if constexpr (lawRow(T).spring) {
        setSlotVec3(mem, spring);
        out.energy = 0.5 * c.kt * spring.squaredNorm();
    }
    return Ft;
}

namespace detail {
/// Calls f<law>() where the law's row has `Admits` set (every law with
/// null); returns false for a law without it, which is then not compiled.
template <bool ForceLawRow::*Admits, class Law, class F, std::size_t... I>
bool dispatchLaw(Law law, F& f, std::index_sequence<I...>) {
    bool called = false;
    auto one = [&]<Law L>() {
        if constexpr (Admits == nullptr || lawRow(L).*Admits) {
            f.template operator()<L>();
            called = true;
        }
    };
    (void)((static_cast<std::size_t>(law) == I ? (one.template operator()<static_cast<Law>(I)>(), true) : false) || ...);
    return called;
}
}  // namespace detail

/// f.template operator()<N>() for the normal law `law` (every law of the
/// table is compiled: a law without a kernel does not build). With `Admits`
/// (a row flag, e.g. &ForceLawRow::fused) only the laws whose row sets it
/// are compiled; for another law nothing is called and it returns false
/// (a schedule's admission, MdSolver::pairListAdmits, keeps it out first).
template <bool ForceLawRow::*Admits = nullptr, class F>
bool withNormalLaw(NormalLaw law, F&& f) {
    return detail::dispatchLaw<Admits>(law, f, std::make_index_sequence<kNormalLaws.size()>{});
}
/// f.template operator()<T>() for the tangential law `law` (as withNormalLaw).
template <bool ForceLawRow::*Admits = nullptr, class F>
bool withTangentialLaw(TangentialLaw law, F&& f) {
    return detail::dispatchLaw<Admits>(law, f, std::make_index_sequence<kTangentialLaws.size()>{});
}

/// The rolling law's kernel; null for no rolling resistance.
inline RollingMoment rollingMoment(RollingLaw law) {
    RollingMoment kernel = nullptr;
    auto pick = [&]<RollingLaw R>() {
        if constexpr (R != RollingLaw::None) kernel = &RollingKernel<R>::moment;
    };
    detail::dispatchLaw<nullptr>(law, pick, std::make_index_sequence<kRollingLaws.size()>{});
    return kernel;
}

}  // namespace moreau
