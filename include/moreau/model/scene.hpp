#pragma once
/// A scene: the settings of a run plus the world it starts from. Scenes are
/// read from INI files with `--set section.key=value` overrides by
/// io/scene_file.hpp; this header only holds the typed result.
#include <cstdint>
#include <map>
#include <string>

#include "moreau/model/world.hpp"

namespace moreau {

enum class Method { CD, MD };

/// Gauss–Seidel sweep order (DESIGN.md, "Contact dynamics").
enum class SweepOrder { RandomSweep, ShuffleOnce, Fixed, RandomSequential };

/// Convergence criterion of the iteration loop (CD §2.5.1).
enum class Criterion { Fixed, Local, Global };

struct CdSettings {
    int iterations = 40;         ///< N_I for the fixed criterion (eq. 37)
    Criterion criterion = Criterion::Fixed;
    double epsilon = 1e-4;       ///< relative accuracy of eqs. 35 and 36
    double delta = 1e-9;         ///< force floor added to eq. 35's right-hand side
    int maxIterations = 10000;   ///< cap for the local and global criteria
    SweepOrder order = SweepOrder::RandomSweep;
    bool warmStart = true;       ///< start each step from last step's reactions
    bool gapPositive = true;     ///< use g_pos = max(g, 0) (eq. 33) instead of g
};

/// How the effective mass m_eff = m_a m_b/(m_a + m_b) enters the linear
/// spring–dashpot (force schemes §2, last paragraph): not at all (eq. 2 as
/// written: F = −k_n ξ − γ_n ξ̇), on the damping only (γ a rate, LAMMPS's
/// gran/hooke convention), or on both constants.
enum class EffectiveMass { None, Damping, Both };

/// Soft-sphere MD settings (first slice: linear spring–dashpot, Cundall–Strack
/// tangential spring, velocity Verlet).
struct MdSettings {
    double kn = 2e5;          ///< normal stiffness (eq. 2)
    double gammaN = 50.0;     ///< normal damping (eq. 2)
    bool tangentialSpring = true;  ///< Cundall–Strack spring (eqs. 16–17); false: no tangential force
    double kt = 2e5 * 2.0 / 7.0;   ///< tangential stiffness
    double gammaT = 25.0;     ///< tangential damping
    EffectiveMass meff = EffectiveMass::None;
    bool clipAttractive = true;  ///< a normal force that would pull is set to zero
    /// MD steps per simulation step: MD resolves each collision (Δt ≪ t_n),
    /// CD does not need to, so one scene serves both with output on the same clock.
    int substeps = 1;
};

struct SimulationSettings {
    Method method = Method::CD;
    double dt = 1.0;
    long steps = 1000;
    std::uint64_t seed = 1;
    /// Detection margin: candidates with gap < margin are kept (absolute length).
    double margin = 0.0;
    /// Verlet-list skin (absolute length): speed only, results are the same.
    double skin = 0.0;
};

struct OutputSettings {
    long every = 1;       ///< series.csv row every N steps (0: first and last only)
    long vtkEvery = 0;    ///< VTK snapshot every N steps (0: none)
};

struct Scene {
    std::string origin;   ///< file name or "<built-in NAME>" for messages
    SimulationSettings simulation;
    CdSettings cd;
    MdSettings md;
    OutputSettings output;
    World world;
    /// Every key with its final value as text (defaults, file, --set), for
    /// summary.json and for experiments that read their own keys.
    std::map<std::string, std::string> values;
};

}  // namespace moreau
