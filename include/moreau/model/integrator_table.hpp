#pragma once
/// The time-integration schemes of the integration-schemes paper (Kruggel-Emden
/// et al. 2008, §3, Table 4) plus Gear's fifth-order predictor–corrector of the
/// geometrical-friction paper (Peña et al., appendix): one record per scheme,
/// read by the scene parser (md.integrator) and by `moreau list integrators`.
/// How each scheme is stepped is its family's object in src/md/integrators/
/// (docs/md-integrators.md).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "moreau/model/scene.hpp"

namespace moreau {

/// The family object that steps a scheme (src/md/integrators/: one file each).
enum class IntegratorFamily {
    Taylor,      ///< fe, ty2, ty3, ty4
    RungeKutta,  ///< rk
    Verlet,      ///< cd (leapfrog), pv, babab, bababab, ve
    Adams,       ///< ab2-ab5, ab2-am3, ab3-am4, ab4-am5
    Khakimov,    ///< d12, t12, t16
    Gear,        ///< gpc3, gpc4, gear5
};

struct IntegratorInfo {
    Integrator id;
    const char* name;        ///< value of md.integrator (lower-case paper abbreviation)
    const char* label;       ///< the paper's abbreviation (Table 4)
    const char* equation;    ///< equations of the paper that define it
    int order;               ///< formal global order of convergence (positions and velocities)
    int dampedOrder;         ///< order with velocity-dependent (dashpot) forces, as the scheme is written
    int forceEvaluations;    ///< force-law evaluations per step, as implemented here
    int historySteps;        ///< earlier steps kept (multi-step schemes); 0 for one-step schemes
    int timeDerivatives;     ///< highest d^k a/dt^k the scheme needs (0: none; Gear: at start-up)
    bool needsPositionJacobian;  ///< needs da/dr (Khakimov schemes)
    const char* description;
    IntegratorFamily family;     ///< which family object steps it
    /// Steps clumps (bodies whose inertia is not isotropic): its rotation is
    /// the kick of the angular momentum and the free rotor's drift
    /// (model/clump.hpp). The others integrate the rotation vector as a
    /// position, right for spheres only, and refuse clumps.
    bool clumps = false;
};

/// Every scheme, in the order of Table 4, then gear5.
const std::vector<IntegratorInfo>& integrators();
const IntegratorInfo& integratorInfo(Integrator id);
std::optional<Integrator> integratorFromName(std::string_view name);

/// Highest time derivative of the acceleration the normal / tangential law
/// can provide (d^k a/dt^k, k ≤ returned value; a large number for laws that
/// are linear in the contact kinematics), and whether it provides da/dr.
/// Laws that provide nothing return 0 / false.
int normalLawTimeDerivatives(NormalLaw law);
int tangentialLawTimeDerivatives(TangentialLaw law);
bool normalLawPositionJacobian(NormalLaw law);
bool tangentialLawPositionJacobian(TangentialLaw law);

/// Whether the general schemes' stages carry this tangential law's history
/// (the spring and plastic memory, remapped per contact by the stages of
/// src/md/integrators/). A law with other per-contact state must say in its
/// row what a stage must carry for it first; until then every scheme but cd
/// refuses it.
bool tangentialLawStagesSupported(TangentialLaw law);

/// Throws InputError naming md.integrator, md.normal / md.tangential and
/// what is allowed when the scheme needs a derivative a chosen law cannot give.
void checkIntegratorLaws(const MdSettings& md);

}  // namespace moreau
