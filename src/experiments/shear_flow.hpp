#pragma once
/// Steady simple shear at a fixed pressure in a Lees–Edwards cell, run by
/// one method (CD converged or at fixed N_I, MD at a stiffness level or
/// mapped from N_I by CD eqs. 67–68) over a chain of inertial numbers: the
/// flows of `mu-of-i` (docs/experiments-rheology.md). Internal to
/// src/experiments.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "moreau/analysis/steady_state.hpp"
#include "moreau/experiments/experiment.hpp"
#include "moreau/model/scene.hpp"

namespace moreau::shearflow {

enum class Kind { CdConverged, CdFixed, MdStiff, MdMapped };

struct MethodSpec {
    std::string name;  ///< cd_converged, cd_ni40, md_kappa1e4, md_mapped_ni40
    Kind kind = Kind::CdFixed;
    double value = 0.0;  ///< N_I (cd_ni, md_mapped_ni) or κ (md_kappa)
    bool cd() const { return kind == Kind::CdConverged || kind == Kind::CdFixed; }
};

struct Options {
    int dimension = 2;
    long particles = 0;
    double mu = 0.4, polydispersity = 0.2;
    double strainPerStep = 2e-3;      ///< CD: γ̇ Δt ...
    double cdDtMax = 0.1;             ///< ... but Δt at most this (units of d √(ρ/P))
    double cdEpsilon = 1e-2;          ///< cd_converged: criterion ε
    bool cdLocal = true;              ///< cd_converged: local criterion (eq. 35), else global (eq. 36)
    double convergedMinI = 0.01;      ///< cd_converged runs at I >= this (cost)
    double restitution = 0.1;         ///< MD stiffness levels: e_n of a mean pair
    double ktOverKn = 0.5;            ///< MD stiffness levels
    double stepsPerContact = 10.0;    ///< MD stiffness levels: t_c / Δt (lightest pair)
    double dampingStep = 0.5;         ///< MD mapped: γ Δt_MD / m_eff
    double maxStepsPerStrain = 2e5;   ///< MD runs needing more are skipped
    double minStrain = 2.0, maxStrain = 8.0, chunkStrain = 0.5;
    double samplesPerStrain = 200.0;
    double servoGain = 0.5;           ///< the servo's strain rate per relative stress error, over γ̇
    double servoFilter = 0.05;        ///< the servo's averaging strain
    double fitMaxI = 0.1;
    std::uint64_t seed = 1;
};

/// One run: a method at one inertial number.
struct FlowPoint {
    double inertial = 0.0;
    bool ran = false;
    std::string note;  ///< why it did not run
    double mu = kNaN, muError = kNaN, phi = kNaN, phiError = kNaN;
    double pressureRatio = kNaN, pressureError = kNaN;  ///< ⟨σ_yy⟩ / P over the steady part
    double coordination = kNaN, overlap = kNaN;  ///< mean; overlap over d
    double strain = 0.0, steadyStrain = 0.0;
    bool steady = false;
    long steps = 0;
    double seconds = 0.0, sweeps = 0.0;  ///< CD: mean sweeps per step
    double kappa = kNaN;                 ///< MD: k_n / P (mapped: for a mean pair)
    double dt = 0.0;                     ///< the method's time step
};

struct MethodRun {
    MethodSpec spec;
    std::vector<FlowPoint> points;
    LineFit muFit, phiFit;
    std::vector<std::array<double, 5>> trace;  ///< I, strain, mu, phi, sigma_yy (samples)
    double seconds = 0.0;
};

/// A method from its name (cd_converged, cd_ni<N>, md_kappa<κ>,
/// md_mapped_ni<N>); InputError naming experiment.methods otherwise.
MethodSpec parseMethod(const std::string& name);

/// The prepared packing: a random gas of the polydisperse grains compressed
/// without friction (CD, 40 sweeps) to a solid fraction just below jamming.
Scene preparePacking(const Options& o);

/// The inertial numbers of one method, largest first, each run from the
/// last one's state (grains' fluctuations scaled with the shear rate),
/// until the data say the flow is steady; fits over I <= o.fitMaxI.
MethodRun runMethod(const Scene& prepared, const MethodSpec& m, const std::vector<double>& inertial,
                    const Options& o);

}  // namespace moreau::shearflow
