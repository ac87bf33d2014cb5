#pragma once
/// Shared machinery of the artificial-elasticity experiments of the CD paper
/// (§3.3–3.4): the chain theory of eqs. 46–60, the 1D chain run, the seeded
/// 2D piston packing, the piston ring after a force step, and fits of eq. 64.
/// Internal to src/experiments (sound-wave-1d, sound-wave-2d,
/// iteration-scaling, cd-md-equivalence).
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <optional>
#include <vector>

#include "chain_theory.hpp"
#include "moreau/analysis/fit.hpp"
#include "moreau/experiments/experiment.hpp"
#include "moreau/sim/simulation.hpp"
#include "moreau/io/scene_file.hpp"

namespace moreau::cdwaves {

// ChainTheory and chainTheory (eqs. 54–60): chain_theory.hpp; q of the
// random sweep (eq. 46): qRandomSweep, analysis/cd_iteration.hpp.

/// Eq. 64 with ω and τ held fixed and x0, A, φ fitted by linear least squares
/// (the paper's Fig. 7 curve: theory ω, τ drawn through the data).
DampedSine fitFixedRates(const std::vector<double>& t, const std::vector<double>& x, double omega, double tau);

/// Least-squares slope of log y against log x over the points with x > 0 and
/// finite y > 0. Not logSlope (analysis/fit.hpp): it fits with linearFit's
/// centred sums, which differ from logSlope's plain ones in the last bits, and
/// iteration-scaling's exponents were always computed this way.
double logLogSlope(const std::vector<double>& x, const std::vector<double>& y);

// --- 1D chain (CD §3.3.1) ------------------------------------------------------

/// The chain's own keys (fit window), for loadBuiltinScene("chain_1d.ini").
std::vector<KeySpec> chainKeys();

/// The built-in chain scene with N_I = `iterations` for experiments that also
/// run the piston: of the user's sets only chain.*, cd.order, cd.warm_start,
/// cd.gap, simulation.seed and experiment.* reach it. `keys`: all experiment keys;
/// `dt`, where given, replaces the scene's time step.
Scene loadChainScene(const ExperimentOptions& options, const std::vector<KeySpec>& keys, int iterations,
                     std::optional<double> dt = {});

/// A list of positive integers from a Text key ("10 20 40"); InputError names the key.
std::vector<int> integerList(const Scene& scene, const std::string& key);

struct ChainRun {
    ChainTheory theory;   ///< for the N_I the run is compared with
    int iterations = 0;   ///< N_I of the theory (CD: cd.iterations)
    bool md = false;
    std::vector<double> t, x, wallForce;
    std::vector<int> stepIterations;  ///< CD sweeps of each step (MD: 0)
    double tImpact = -1, tSettled = -1, fitStart = 0, fitEnd = 0;
    std::size_t fitPoints = 0;
    DampedSine fit;
    double seconds = 0;   ///< wall time of the run
};

/// Runs the chain scene (CD or MD, as the scene says) until the fit window
/// after the chain settled against the wall is recorded, and fits eq. 64.
/// `iterations` is the N_I of the theory (for MD: the N_I of eqs. 67–68).
ChainRun runChain(Scene scene, int iterations);

// --- 2D piston packing (CD §3.3.2) ----------------------------------------------

/// Keys of the 2D piston experiments (experiment.*) for loadBuiltinScene("piston_2d.ini").
std::vector<KeySpec> pistonKeys();

/// The built-in piston scene sized for experiment.particles disks (box, walls,
/// piston mass and force from the experiment keys), user `sets` (except
/// chain.*) applied last.
Scene loadPistonScene(const ExperimentOptions& options, const std::vector<KeySpec>& moreKeys = {});

struct PreparedPacking {
    Simulation sim;           ///< at rest under F, warm-start forces in its contacts
    BodyId piston = 0;
    double force = 0;         ///< F (magnitude, pushing down)
    double packingMass = 0, pistonMass = 0;
    double width = 0, height = 0;  ///< box width, piston height above the base at rest
    double packingFraction = 0;
    long steps = 0;           ///< steps of the preparation
    double finalSpeed = 0;    ///< largest grain/piston speed when it stopped
    double seconds = 0;
    int iterations = 0;       ///< N_I used to prepare
};

/// Compress the loose random packing of `scene` under the constant piston
/// force until everything is at rest (experiment.rest_speed), then set all
/// velocities to zero. Deterministic for a given seed.
PreparedPacking preparePacking(Scene scene);

/// Set the mass of a mobile wall (its free axes keep 1/m, locked ones 0).
void setWallMass(World& w, BodyId b, double mass);

struct RingOptions {
    double dForce = 0;          ///< ΔF (magnitude)
    int skipExtrema = 2;        ///< the fit starts at this extremum of the trace (1 = the first)
    double fitTaus = 3.0;       ///< window length in fitted τ
    long maxSteps = 8000;
    /// MD from the CD packing: settle under F until at rest (restSpeed) or
    /// settleMaxSteps, with the piston's mass times lightPiston (a light piston
    /// lets the slow piston mode die out fast; mass does not change the rest
    /// state), then velocities to zero and the heavy piston back. 0: no settling.
    long settleMaxSteps = 0;
    double restSpeed = 1e-5;
    double lightPiston = 0.1;
};

struct PistonRing {
    std::vector<double> t, y;   ///< time since the force step, piston height
    std::vector<double> extremaT;
    double fitStart = 0, fitEnd = 0;
    std::size_t fitPoints = 0;
    DampedSine fit;             ///< in time since the force step
    double y0 = 0;              ///< piston height at the force step
    double settleDrift = 0;     ///< piston displacement during the settle phase
    long settleSteps = 0;       ///< steps of the settle phase
    double settleSpeed = 0;     ///< largest speed when the settling stopped
    long steps = 0;
    double seconds = 0;
    bool md = false;
    int iterations = 0;
};

/// Step the piston force of `sim` (a copy of a prepared packing) from F to
/// F + ΔF and record the piston until the fit window is complete; fit eq. 64
/// from the chosen extremum on (ω and τ free). CD under mpirun: the ring runs
/// over the ranks (DistributedSimulation, cd.distributed).
PistonRing ringPiston(Simulation sim, BodyId piston, double force, const RingOptions& options);

/// The piston's trace from the force step on (`advance` steps once and
/// returns the time since the step and the piston height) and the fit of
/// eq. 64 (ringPiston's second half; `ring` brings the settling's numbers).
PistonRing tracePiston(PistonRing ring, double y0, const RingOptions& options,
                       std::chrono::steady_clock::time_point t0,
                       const std::function<std::pair<double, double>()>& advance);

/// CD copy of a prepared packing with N_I iterations per step.
PistonRing ringCd(const PreparedPacking& prep, int iterations, const RingOptions& options);

/// MD copy of a prepared packing with the linear spring–dashpot of eqs. 67–68
/// generalised per contact (κ = 2 q m_eff N_I/Δt², γ = 2 q m_eff N_I/Δt, the
/// paper's values for two equal grains; tangential a third of these, the
/// disks' tangential mass of eq. 18), `substeps` MD steps per Δt; it
/// settles under F first (RingOptions::settleMaxSteps).
PistonRing ringMd(const PreparedPacking& prep, int iterations, int substeps, const RingOptions& options,
                  double tangentialRatio = 1.0 / 3.0);

/// RingOptions from the experiment keys of `scene` (experiment.dforce etc.).
RingOptions ringOptions(const Scene& scene, double force);

/// JSON of a prepared packing for `params`.
nlohmann::json packingJson(const PreparedPacking& prep);

/// Write a ring to CSV rows `label,time,y,y_fit,in_fit`.
void writeRingCsv(std::ostream& out, const std::string& label, const PistonRing& ring);

}  // namespace moreau::cdwaves
