#include "moreau/model/integrator_table.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "moreau/core/error.hpp"

namespace moreau {

namespace {

std::string normalName(NormalLaw law) { return std::string(lawName(kNormalLawNames, law)); }
std::string tangentialName(TangentialLaw law) { return std::string(lawName(kTangentialLawNames, law)); }

const char* derivativeName(int k) {
    switch (k) {
        case 1: return "the time derivative da/dt of the acceleration";
        case 2: return "the second time derivative d2a/dt2 of the acceleration";
        default: return "the third time derivative d3a/dt3 of the acceleration";
    }
}

}  // namespace

const std::vector<IntegratorInfo>& integrators() {
    using I = Integrator;
    using F = IntegratorFamily;
    static const std::vector<IntegratorInfo> table = {
        {I::FE, "fe", "FE", "5", 1, 1, 1, 0, 0, false, "forward Euler", F::Taylor},
        {I::TY2, "ty2", "TY2", "6", 1, 1, 1, 0, 0, false,
         "2nd-order Taylor expansion of the positions, Euler velocities (global order 1)", F::Taylor},
        {I::TY3, "ty3", "TY3", "7", 2, 2, 1, 0, 1, false,
         "3rd-order Taylor expansion with b = da/dt (velocities one term shorter: global order 2)", F::Taylor},
        {I::TY4, "ty4", "TY4", "8", 3, 3, 1, 0, 2, false,
         "4th-order Taylor expansion with b = da/dt, c = db/dt (velocities one term shorter: global order 3)", F::Taylor},
        {I::RK, "rk", "RK", "9", 4, 4, 4, 0, 0, false, "classical 4-stage Runge-Kutta", F::RungeKutta},
        {I::CD, "cd", "CD", "10", 2, 1, 1, 0, 0, false,
         "central difference (leapfrog velocity Verlet): half-step velocities, damping with v(t - dt/2); default", F::Verlet,
         true},
        {I::PV, "pv", "PV", "11", 2, 1, 1, 0, 0, false, "position Verlet: forces at the half-step positions", F::Verlet},
        {I::BABAB, "babab", "BABAB", "12", 2, 1, 2, 0, 0, false,
         "Omelyan's optimized Verlet-like scheme, eps = 0.193183328; last kick implicit in the damping", F::Verlet},
        {I::BABABAB, "bababab", "BABABAB", "13", 4, 1, 3, 0, 0, false,
         "Forest-Ruth 4th-order symplectic scheme, eps = 0.175603596; last kick implicit in the damping", F::Verlet},
        {I::VE, "ve", "VE", "14", 2, 2, 1, 1, 0, false,
         "Verlet: r(t+dt) = 2r - r(t-dt) + a dt^2; velocity by the 2nd-order backward difference", F::Verlet},
        {I::AB2, "ab2", "AB2", "15, Table 1", 2, 2, 1, 1, 0, false, "2-step Adams-Bashforth", F::Adams},
        {I::AB3, "ab3", "AB3", "15, Table 1", 3, 3, 1, 2, 0, false, "3-step Adams-Bashforth", F::Adams},
        {I::AB4, "ab4", "AB4", "15, Table 1", 4, 4, 1, 3, 0, false, "4-step Adams-Bashforth", F::Adams},
        {I::AB5, "ab5", "AB5", "15, Table 1", 5, 5, 1, 4, 0, false, "5-step Adams-Bashforth", F::Adams},
        {I::AB2AM3, "ab2-am3", "AB2+AM3", "15, 19, Tables 1-2", 3, 3, 2, 1, 0, false,
         "Adams-Bashforth 2 predictor, Adams-Moulton 3 corrector (PECE)", F::Adams},
        {I::AB3AM4, "ab3-am4", "AB3+AM4", "15, 19, Tables 1-2", 4, 4, 2, 2, 0, false,
         "Adams-Bashforth 3 predictor, Adams-Moulton 4 corrector (PECE)", F::Adams},
        {I::AB4AM5, "ab4-am5", "AB4+AM5", "15, 19, Tables 1-2", 5, 5, 2, 3, 0, false,
         "Adams-Bashforth 4 predictor, Adams-Moulton 5 corrector (PECE)", F::Adams},
        {I::D12, "d12", "D12", "17", 3, 2, 1, 1, 0, true,
         "Khakimov D12: positions from r(t-dt), divided by 1 - (da/dr) dt^2/12; AM3 velocities", F::Khakimov},
        {I::T12, "t12", "T12", "16", 3, 2, 1, 1, 0, true,
         "Khakimov T12: positions divided by 1 - (da/dr) dt^2/12; AM3 velocities", F::Khakimov},
        {I::T16, "t16", "T16", "18", 3, 1, 1, 0, 0, true,
         "Khakimov T16: (da/dr) v replaces da/dt; velocities divided by 1 - (da/dr)(t+dt) dt^2/6", F::Khakimov},
        {I::GPC3, "gpc3", "GPC3", "20-22, Table 3", 3, 3, 1, 0, 1, false,
         "Gear predictor-corrector, 4 values (r, v, a, b); b = da/dt at start-up", F::Gear},
        {I::GPC4, "gpc4", "GPC4", "20-22, Table 3", 4, 4, 1, 0, 2, false,
         "Gear predictor-corrector, 5 values (r ... c); b, c from the force law at start-up", F::Gear},
        {I::Gear5, "gear5", "Gear 5th order", "Pena et al. appendix", 5, 5, 1, 0, 3, false,
         "Gear predictor-corrector, 6 values, alpha = 3/16, 251/360, 1, 11/18, 1/6, 1/60", F::Gear},
    };
    return table;
}

const IntegratorInfo& integratorInfo(Integrator id) {
    for (const IntegratorInfo& i : integrators())
        if (i.id == id) return i;
    throw std::logic_error("integratorInfo: unknown integrator");
}

std::optional<Integrator> integratorFromName(std::string_view name) {
    for (const IntegratorInfo& i : integrators())
        if (name == i.name) return i.id;
    return std::nullopt;
}

int normalLawTimeDerivatives(NormalLaw law) { return lawRow(law).timeDerivatives; }
int tangentialLawTimeDerivatives(TangentialLaw law) { return lawRow(law).timeDerivatives; }

bool tangentialLawStagesSupported(TangentialLaw) {
    // Every law: the history laws run in the stages' history mode
    // (SchemeStages::historyForces, docs/md-integrators.md).
    return true;
}

bool normalLawPositionJacobian(NormalLaw law) { return lawRow(law).positionJacobian; }
bool tangentialLawPositionJacobian(TangentialLaw law) { return lawRow(law).positionJacobian; }

void checkIntegratorLaws(const MdSettings& md) {
    const IntegratorInfo& info = integratorInfo(md.integrator);
    // The stages carry the tangential law's memory only: a rolling law that
    // keeps memory (its spring moment) runs with cd's single evaluation.
    if (lawRow(md.rolling).extraSlots > 0 && md.integrator != Integrator::CD)
        throw InputError("md.rolling '" + std::string(lawRow(md.rolling).name) + "' runs with md.integrator = cd only, not '" +
                         std::string(info.name) + "' (allowed with it: md.integrator cd; or md.rolling none)");
    const int need = info.timeDerivatives;
    auto fail = [&](const std::string& what, const std::string& key, const std::string& law,
                    const std::string& allowed) {
        throw InputError("md.integrator '" + std::string(info.name) + "' needs " + what + ", which " + key + " '" +
                         law + "' does not provide (allowed with it: " + key + " " + allowed +
                         "; or an integrator without derivatives: fe, ty2, rk, cd, pv, babab, bababab, ve, ab2-ab5, "
                         "ab2-am3, ab3-am4, ab4-am5)");
    };
    // The laws that provide what the scheme needs, from the law table.
    auto providing = [&](const auto& table) {
        std::string names;
        for (const auto& entry : table)
            if (entry.row.timeDerivatives >= need && (!info.needsPositionJacobian || entry.row.positionJacobian))
                names.append(names.empty() ? "" : "|").append(entry.row.name);
        return names;
    };
    const std::string normals = providing(kNormalLaws), tangentials = providing(kTangentialLaws);
    if (need > 0) {
        if (normalLawTimeDerivatives(md.normal) < need)
            fail(derivativeName(need), "md.normal", normalName(md.normal), normals);
        if (tangentialLawTimeDerivatives(md.tangential) < need)
            fail(derivativeName(need), "md.tangential", tangentialName(md.tangential), tangentials);
    }
    if (info.needsPositionJacobian) {
        if (!normalLawPositionJacobian(md.normal))
            fail("the position Jacobian da/dr", "md.normal", normalName(md.normal), normals);
        if (!tangentialLawPositionJacobian(md.tangential))
            fail("the position Jacobian da/dr", "md.tangential", tangentialName(md.tangential), tangentials);
    }
}

}  // namespace moreau

