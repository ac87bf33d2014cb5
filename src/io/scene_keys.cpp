// The key table of scene files: every built-in key with its type, default,
// allowed values and description, in reference order (`moreau run --help`,
// docs/scenes.md). Adding a key: docs/recipes.md.
#include <map>
#include <string>
#include <vector>

#include "moreau/model/integrator_table.hpp"
#include "scene_schema.hpp"

namespace moreau::scene_io {

namespace {

/// A law choice key's description: `what`, then each law's name and row summary.
template <class Table>
std::string lawChoiceText(const std::string& what, const Table& table) {
    std::string text = what;
    for (const auto& entry : table) text.append(" ").append(entry.row.name).append(": ").append(entry.row.summary).append(".");
    return text;
}

/// A key of one type, its value checked by the type alone; `choices` for KeyType::Choice.
Rule typedKey(KeyType type, std::string key, std::string def, std::string desc,
              std::vector<std::string> choices = {}) {
    Rule r;
    r.spec = KeySpec(std::move(key), type, std::move(def), std::move(desc), -kInf, kInf, std::move(choices));
    return r;
}

Rule boolKey(std::string key, std::string def, std::string desc) {
    return typedKey(KeyType::Bool, std::move(key), std::move(def), std::move(desc));
}

Rule vectorKey(std::string key, std::string def, std::string desc) {
    return typedKey(KeyType::Vector, std::move(key), std::move(def), std::move(desc));
}

Rule textKey(std::string key, std::string def, std::string desc) {
    return typedKey(KeyType::Text, std::move(key), std::move(def), std::move(desc));
}

Rule choiceKey(std::string key, std::string def, std::string desc, std::vector<std::string> choices) {
    return typedKey(KeyType::Choice, std::move(key), std::move(def), std::move(desc), std::move(choices));
}

Rule realKey(std::string key, std::string def, std::string desc, double min = -kInf, bool minExclusive = false,
             double max = kInf) {
    Rule r;
    r.spec = KeySpec(std::move(key), KeyType::Real, std::move(def), std::move(desc), min, max, {}, minExclusive);
    return r;
}

Rule intKey(std::string key, std::string def, std::string desc, double min = -kInf, double max = kInf) {
    Rule r;
    r.spec = KeySpec(std::move(key), KeyType::Integer, std::move(def), std::move(desc), min, max);
    return r;
}

Rule specialKey(Special special, KeyType type, std::string key, std::string def, std::string desc) {
    Rule r = typedKey(type, std::move(key), std::move(def), std::move(desc));
    r.special = special;
    return r;
}

Rule withInfinity(Rule r) {
    r.allowInfinity = true;
    return r;
}

}  // namespace

/// Built-in keys of the fixed sections, in reference order.
std::vector<Rule> fixedRules() {
    using K = KeyType;
    std::vector<Rule> r;
    // [simulation]
    r.insert(r.end(), {
        choiceKey("simulation.method", "cd",
                  "Time stepping: rigid grains with contact dynamics (cd) or soft grains with molecular "
                  "dynamics (md). Both run the same scene.",
                  {"cd", "md"}),
        intKey("simulation.dimension", "3",
               "1: motion along x only, no rotation (the sound-wave chain); 2: motion in the x-y plane, "
               "rotation about z only; 3: free.",
               1, 3),
        realKey("simulation.dt", "1.0", "Time step.", 0.0, true),
        intKey("simulation.steps", "1000", "Number of time steps.", 0),
        intKey("simulation.seed", "1",
               "Seed (64-bit) of every random choice: sweep orders, the random packing, lattice jitter. "
               "The same seed gives the same bits.",
               0),
        vectorKey("simulation.gravity", "0 0 0", "Gravitational acceleration."),
    });
    // [contact]
    r.insert(r.end(), {
        realKey("contact.mu", "0", "Coulomb friction coefficient of grain-grain contacts "
                                   "(grain-wall: wall.NAME.mu).",
                0.0),
        realKey("contact.skin", "0.2",
                "Verlet-list skin as a fraction of the smallest grain radius: pairs within margin + skin are "
                "listed, and the cell grid runs again only when a body has moved more than skin/2. Changes "
                "speed, never results; 0 detects from scratch every step.",
                0.0),
        realKey("contact.inner_skin", "0.05",
                "Skin of the fused MD pipeline's working list, as a fraction of the smallest grain radius: "
                "the force pass runs over the pairs of the Verlet list within margin + inner_skin, filtered "
                "again when a body has moved more than inner_skin/2 (no cell grid). Changes speed, never "
                "results; 0, or at least contact.skin, works on the Verlet list itself.",
                0.0),
        intKey("contact.rank_check_every", "1",
               "On MPI ranks: the most steps between the ranks' checks, one allreduce over all of them that "
               "decides whether a grain has moved skin/2 since the grains were last shared out (then they "
               "are again) and carries signals and guard.max_travel. 1: a check after every step. More: "
               "between checks each rank tests its own grains, and keeps the state of its part at the last "
               "check (about 150-200 bytes per grain); should a test fail, every rank goes back to it and "
               "steps again with a check after every step. Checks come sooner where the fastest grain "
               "would use the skin up first, and at every step that writes output. Changes speed and "
               "memory, never results.",
               1),
        realKey("contact.margin", "0.1",
                "Detection margin as a fraction of the smallest grain radius: pairs whose gap is below it "
                "become contact candidates (CD needs small positive gaps, eq. 25). Keep margin * r_min "
                "above the distance a grain travels in one step.",
                0.0),
    });
    // [cd]
    r.insert(r.end(), {
        intKey("cd.iterations", "40", "N_I: iterations per time step of the fixed criterion (eq. 37).", 1),
        choiceKey("cd.criterion", "fixed",
                  "When the iteration of a step stops: after cd.iterations sweeps (fixed, eq. 37), when every "
                  "contact force has converged (local, eq. 35 with the floor cd.delta), when the mean "
                  "force has (global, eq. 36), or when the Siconos/FCLIB error (natural map with De Saxce's "
                  "velocity over |q|, docs/convergence.md) is at most cd.epsilon (natural).",
                  {"fixed", "local", "global", "natural"}),
        realKey("cd.epsilon", "1e-4", "Relative accuracy of the local, global and natural criteria.", 0.0,
                true),
        intKey("cd.check_every", "10",
               "Natural criterion: sweeps between evaluations of the error (each costs about one sweep; "
               "docs/convergence.md).",
               1),
        realKey("cd.delta", "1e-9",
                "Force floor added to the local criterion's tolerance, so contacts near zero force count "
                "as converged.",
                0.0),
        intKey("cd.max_iterations", "10000", "Cap on iterations per step for the local and global criteria.",
               1),
        choiceKey("cd.order", "random-sweep",
                  "Order of contact updates: a fresh random permutation every sweep (the paper's), one "
                  "permutation per time step, the fixed contact order, random draws with replacement, or "
                  "jacobi: not Gauss-Seidel but every contact from the sweep's starting velocities, applied "
                  "together (the parallel update CD 2.5 calls unstable); random-keys: a fresh permutation every sweep "
                  "drawn as a random key per contact, which every MPI rank computes for its own contacts.",
                  lawNames(kSweepOrderNames)),
        choiceKey("cd.solver", "gauss-seidel",
                  "Solver family of a step's local problem (docs/convergence.md): gauss-seidel, the paper's "
                  "sweeps over the one-contact law (cd.order); newton, a global semi-smooth Newton method on "
                  "the Alart-Curnier function (sparse LU, line search); apgd, Nesterov's accelerated projected "
                  "gradient on the cone complementarity problem (Mazhar et al. 2015; De Saxce's convex "
                  "relaxation: sliding contacts separate at mu |u_t|). newton and apgd solve each step's whole "
                  "problem from last step's reactions, on one process (cd.criterion natural or fixed; "
                  "cd.max_iterations counts their iterations), and FCLIB problems (moreau bench fclib).",
                  lawNames(kCdSolverNames)),
        choiceKey("cd.distributed", "domains",
                  "How MPI ranks share a step (docs/distributed.md; no effect on one process). domains: "
                  "each rank sweeps its own contacts and the bodies several ranks move are made consistent "
                  "after every sweep (Shojaaee et al. 2012, with mass splitting): its own bits per rank "
                  "count. exact: the serial sweep replayed across the ranks, the serial run's bits for any "
                  "rank count (needs cd.order = random-keys, fixed or jacobi).",
                  {"domains", "exact"}),
        choiceKey("cd.proximal", "off",
                  "Proximal term of the sweeps, for piles where Gauss-Seidel cycles (docs/convergence.md): "
                  "each row solves the shock law of u + eta (P - P_anchor) / m_n, the anchor moving to the "
                  "current impulses every cd.proximal_every sweeps. off: the paper's sweeps; on: from the "
                  "first sweep; stall: once the natural criterion's error has not halved in 1000 sweeps "
                  "(needs cd.criterion = natural).",
                  {"off", "on", "stall"}),
        realKey("cd.proximal_eta", "0.1", "Weight eta of the proximal term (relative to each row's normal "
                                          "compliance 1/m_n).",
                0.0, true),
        intKey("cd.proximal_every", "50", "Sweeps between moves of the proximal term's anchor.", 1),
        choiceKey("cd.simd", "auto",
                  "Vector unit of the sweep's rows that touch a clump or a polygon (their 3x3 Delassus "
                  "blocks): avx2 takes each row's vectors and matrix columns four doubles at a time, with "
                  "the scalar rows' bits. auto: avx2 where the CPU has it, else off; off: scalar only. "
                  "Sphere rows and the proximal term's rows are scalar either way.",
                  {"auto", "avx2", "off"}),
        boolKey("cd.warm_start", "true",
                "Start each step's iteration from last step's contact reactions."),
        choiceKey("cd.gap", "pos",
                  "Gap in the shock law: g_pos = max(g, 0) (pos, eq. 33: overlaps are not pushed apart) or "
                  "the plain gap g.",
                  {"pos", "plain"}),
    });
    // [md]
    r.insert(r.end(), {
        choiceKey("md.normal", "linear", lawChoiceText("Normal force law.", kNormalLaws),
                  lawNames(kNormalLawNames)),
        realKey("md.kn", "2e5",
                "Normal stiffness: k_n (linear, N/m), k~_n (Hertz family, N/m^1.5) or k_1 (Walton-Braun).",
                0.0, true),
        realKey("md.gamma_n", "50",
                "Normal damping: gamma_n (linear, hertz-damped; see md.meff) or gamma~_n (hkk).", 0.0),
        realKey("md.s", "0", "Walton-Braun: unloading stiffness k_2 = k_1 + s F_max (1/length).", 0.0),
        choiceKey("md.tangential", "spring", lawChoiceText("Tangential force law.", kTangentialLaws),
                  lawNames(kTangentialLawNames)),
        realKey("md.kt", "57142.857142857145", "Tangential spring stiffness k_t.", 0.0),
        realKey("md.gamma_t", "25", "Tangential damping gamma_t (units as gamma_n).", 0.0),
        choiceKey("md.rolling", "none", lawChoiceText("Rolling resistance law.", kRollingLaws),
                  lawNames(kRollingLawNames)),
    });
    // The keys the laws declare (model/law_table.hpp).
    for (const LawKey& k : kLawKeys)
        r.push_back(realKey(std::string(k.name), formatNumber(k.fallback), std::string(k.description), k.min,
                            k.minExclusive, k.max));
    r.insert(r.end(), {
        choiceKey("md.meff", "none",
                  "Where the effective mass enters: none (eq. 2 as written, F = -k xi - gamma xi'), damping "
                  "(F = -k xi - m_eff gamma xi', gamma a rate as in LAMMPS gran/hooke) or both constants.",
                  {"none", "damping", "both"}),
        realKey("md.en", "0",
                "Linear law from eqs. 3-4: restitution e_n in (0, 1]; with md.tn it replaces md.kn and "
                "md.gamma_n per contact (m_eff on both constants). 0: use md.kn, md.gamma_n.",
                0.0, false, 1.0),
        realKey("md.tn", "0", "Linear law from eqs. 3-4: contact duration t_n (with md.en). 0: unused.", 0.0),
        realKey("md.mu_static_ratio", "1",
                "Static over dynamic friction, mu_s/mu_d >= 1: contact.mu and wall.NAME.mu are the dynamic "
                "coefficients; the history laws (spring, walton-braun, kuhn, pena) stick up to mu_s F_n and "
                "slide at mu_d F_n.",
                1.0),
        realKey("md.zeta0", "1e-8", "Saw-tooth period zeta_0 (length, eq. 22).", 0.0, true),
        boolKey("md.kuhn_onset", "true",
                "Kuhn: only the movement after the touch loads a contact that starts within the step."),
        boolKey("md.kuhn_slip_onset", "true",
                "Kuhn: elastic movement before slip starts within the step (eqs. 9-15)."),
        boolKey("md.kuhn_slip_rotation", "true",
                "Kuhn: the force turns towards the movement while sliding (eqs. 16-21); false adds the "
                "increment and scales back onto the friction circle."),
        boolKey("md.kuhn_projection", "true",
                "Kuhn: project the tangential force onto the new tangent plane (eq. 22)."),
        boolKey("md.kuhn_twirl", "true",
                "Kuhn: turn the tangential force with the pair's mean spin about the normal (eq. 23)."),
        choiceKey("md.pena_translation", "slip",
                  "Pena: translation part of eq. 14 from the full change of the centre line (slip: agrees "
                  "with v_t dt as dt -> 0) or weighted by a_i/(a_i + a_j) as printed (paper).",
                  {"slip", "paper"}),
        choiceKey("md.spring_increment", "displacement",
                  "Schemes other than cd: the spring's elongation at a stage is the committed spring plus the "
                  "contact point's displacement since the step start (displacement) or plus V_t times the "
                  "elapsed time (velocity: Cundall's update, Pena eq. 7). cd always adds V_t dt.",
                  {"displacement", "velocity"}),
        boolKey("md.clip_attractive", "true",
                "Set a normal force that would turn attractive (late in a damped collision) to zero; "
                "false keeps eq. 2 as written until the overlap vanishes."),
        intKey("md.substeps", "1",
               "MD steps per simulation step (each detects contacts anew): MD must resolve a collision "
               "(dt / substeps well below t_n, force schemes eq. 4) where CD takes simulation.dt as is.",
               1),
    });
    {
        std::vector<std::string> names;
        for (const IntegratorInfo& i : integrators()) names.emplace_back(i.name);
        r.push_back(choiceKey("md.integrator", "cd",
                              "Time integration (integration-schemes paper, Table 4; gear5: Pena et al., appendix). "
                              "cd: central difference in leapfrog form, the fast default. ty3, ty4, gpc3, gpc4, gear5 "
                              "need time derivatives of the force, d12, t12, t16 its position Jacobian, from the "
                              "laws that provide them. See `moreau list integrators` and docs/md-integrators.md.",
                              std::move(names)));
    }
    r.insert(r.end(), {
        choiceKey("md.pipeline", "auto",
                  "How an MD step is organised. fused: one pass over a persistent Verlet pair list does the "
                  "narrow phase, the laws and the spring update in place (integrator cd; normal laws linear, "
                  "hertz, hertz-damped, hkk; tangential none, coulomb, viscous, viscous-coulomb, spring; "
                  "mu_static_ratio 1). staged: detect, match, forces, gather (every law and integrator). "
                  "Both give the same trajectory bits; auto takes fused where it applies.",
                  {"auto", "fused", "staged"}),
        choiceKey("md.simd", "auto",
                  "Vector width of the fused pipeline's contact kernel: the touching grain-grain pairs of a "
                  "non-periodic world go through it 8 (avx512), 4 (avx2) or 2 (sse2) at a time, with the "
                  "scalar pass's bits. auto: avx512 where the CPU has it, else off (the narrower kernels "
                  "were no faster than the scalar pass, docs/md-performance.md); a named width is an upper "
                  "bound (a CPU without it uses the next narrower one); off: scalar only.",
                  {"auto", "avx512", "avx2", "sse2", "off"}),
        boolKey("md.restart_on_contact_change", "true",
                "Multi-step (ve, ab*, ab*-am*, d12, t12) and Gear (gpc3, gpc4, gear5) schemes: take an RK4 "
                "step and restart their history when a contact opens or closes (or will within the step), "
                "so the history never spans the kink of a force law. Keeps their order through collisions; "
                "in dense packings, where some contact changes every step, they then cost as much as rk."),
    });
    // [output]
    r.insert(r.end(), {
        intKey("output.every", "1", "A row of series.csv every N steps (0: first and last step only).", 0),
        intKey("output.vtk_every", "0", "A VTK snapshot every N steps (0: none).", 0),
        choiceKey("output.vtk_pieces", "auto",
                  "Under mpirun: each rank writes its own grains and contacts as pieces "
                  "(grains_XXXXXX_pR.vtp, contacts_XXXXXX_pR.vtp), rank 0 a parallel file per step "
                  "(grains_XXXXXX.pvtp, contacts_XXXXXX.pvtp) that run.pvd lists (docs/distributed.md). "
                  "auto: pieces on MPI ranks; false, and serial runs: one file per part and step.",
                  {"auto", "true", "false"}),
        intKey("output.fclib_every", "0",
               "CD: every N steps the step's contact problem as an FCLIB local problem with Moreau's "
               "solution, OUT/fclib/step_XXXXXX.hdf5 (docs/convergence.md; 0: none).",
               0),
        boolKey("output.natural_error", "false",
                "CD: a column natural_error in series.csv, the Siconos/FCLIB error of each step's "
                "reactions (nan on the first row, before any step; docs/convergence.md; costs about one sweep "
                "per step)."),
        intKey("output.log_every", "0",
               "A line of the run log every N steps (step, time, kinetic energy, contacts, iterations, "
               "residual, wall time, ETA) on stderr and in OUT/log.txt; 0: about 20 lines per run.",
               0),
        intKey("output.checkpoint_every", "0",
               "Write OUT/checkpoint every N steps (0: only when the run is stopped by a signal or "
               "diverges); `moreau run --resume OUT` continues from it with the uninterrupted run's bits. "
               "Written atomically: a kill at any moment leaves the previous one whole.",
               0),
        textKey("output.stage", "",
                "Name of the protocol's current stage (prepare, compress, shear, ...): series.csv ends "
                "with a column stage holding it on every row, and Python's sim.set_stage(NAME) moves it "
                "on between steps (kept in the checkpoint). 1 to 64 letters, digits, '_', '-' or '.'; "
                "empty: no stage column."),
        textKey("output.stress_region", "",
                "Box 'xmin ymin zmin xmax ymax zmax' that the measurements of series.csv average over "
                "(stress, pressure, deviator, packing fraction, coordination, fabric; not the wall "
                "columns): each contact's Love-Weber term weighted by the fraction of its branch vector "
                "inside, the kinetic term and the coordination from the grains whose centre is inside, "
                "the packing fraction from the grains' volume inside. min < max on the dimension's axes "
                "(others ignored); on a periodic axis at most one period long, its images included. "
                "Empty: the periodic box or the grains' extent."),
    });
    // [guard]
    r.insert(r.end(), {
        intKey("guard.contact_steps", "10",
               "MD: `moreau run` refuses (exit 2) an MD step simulation.dt / md.substeps longer than the "
               "contact duration over this, the duration estimated from the normal law, md.kn (and md.kt "
               "for the spring laws) and the smallest effective mass (Hertz laws: at the largest speed the "
               "start state, gravity and the applied forces give). 0: no check.",
               0),
        intKey("guard.every", "50",
               "Steps between the run's checks of overlaps and energy (travel is checked every step); the "
               "state of the last such check that passed is what the divergence checkpoint holds.",
               1),
        realKey("guard.max_overlap", "0.5",
                "Stop (exit 3) when an overlap exceeds this fraction of the smallest grain radius. 0: no "
                "check.",
                0.0),
        realKey("guard.max_travel", "1",
                "Stop (exit 3) when a grain moves farther than this fraction of its radius in one step "
                "(|v| simulation.dt): contacts are then missed. 0: no check.",
                0.0),
        boolKey("guard.energy", "true",
                "Stop (exit 3) when the grains' energy (kinetic, rotational, elastic and gravitational) "
                "rises above its start by more than the start state and gravity over the packing's "
                "height can give. Checked only where nothing else feeds energy in (no applied force, no "
                "moving wall, gravity not along a periodic axis)."),
        withInfinity(realKey(
"guard.start_overlap", "0.01",
"`moreau run` refuses (exit 2, naming the grains or the wall) a start where grains overlap each other or a "
"wall by more than this fraction of the smallest radius (a settled soft-sphere packing overlaps a little; a "
"grain behind a wall overlaps it by more than its radius); inf: no check. Grains outside the periodic box "
"on a periodic axis are always refused.",
0.0)),
    });
    // [grains]
    r.insert(r.end(), {
        choiceKey("grains.source", "chain",
                  "Where the grains come from: the [chain], [lattice], [random] or [packing] section.",
                  {"chain", "lattice", "random", "file"}),
        realKey("grains.density", "1", "Mass per area (disk) or per volume (sphere).", 0.0, true),
        realKey("grains.mass", "0", "If > 0, every grain gets this mass, overriding grains.density.", 0.0),
        choiceKey("grains.inertia", "auto",
                  "Mass and inertia model: disk (mass = density * pi r^2, I = m r^2 / 2) or sphere (mass = "
                  "density * 4/3 pi r^3, I = 2/5 m r^2); auto is disk in 1D and 2D, sphere in 3D. disk in "
                  "3D is an error.",
                  {"auto", "disk", "sphere"}),
        vectorKey("grains.velocity", "0 0 0",
                  "Initial velocity of every grain (components along locked axes are dropped)."),
        choiceKey("grains.shape", "sphere",
                  "sphere (a disk in 2D), or clump: a rigid cluster of the spheres (2D: disks) of "
                  "clump.spheres, scaled by each grain's size (the radius keys, a packing file's size "
                  "column); generators place clumps by their bounding sphere and draw their orientations "
                  "from simulation.seed. Mass from the union's volume (area) at grains.density, inertia "
                  "from its shape; each clump is kept in its principal frame. Clumps run in CD, and in "
                  "MD with md.integrator = cd (see docs/clumps.md). polygon (2D only): a convex polygon "
                  "of polygon.vertices or polygon.shape, scaled by each grain's size; generators place "
                  "polygons inside the circle of that size about their frame's origin and draw their "
                  "angles from simulation.seed; mass and moment of inertia exact (docs/polygons.md).",
                  {"sphere", "clump", "polygon"}),
    });
    // [clump]
    r.insert(r.end(), {
        textKey("clump.spheres", "",
                "The clump's spheres for grains.shape = clump: 'x y z r; x y z r; ...' in the clump's "
                "own frame and in units of the grain's size (1 to 16 spheres; 2D: disks, z ignored)."),
    });
    // [polygon]
    r.insert(r.end(), {
        intKey("polygon.vertices", "6",
               "For grains.shape = polygon: the regular polygon of this many vertices, circumradius the "
               "grain's size, vertices at angles -pi/2 + (2k+1) pi/N (at angle 0 its lowest edge is flat).",
               3, 64),
        textKey("polygon.shape", "",
                "For grains.shape = polygon: a convex vertex list 'x y; x y; ...' in units of the grain's size "
                "(3 to 64 vertices, either orientation), used instead of polygon.vertices. The body is kept "
                "with its centre of mass at its position (a packing file's row gives the list's origin)."),
        realKey("polygon.irregularity", "0",
                "For grains.shape = polygon with polygon.vertices: 0 gives the regular polygon; up to 0.95, "
                "each grain is an irregular convex polygon whose vertices lie on the circle of its size at "
                "angles moved by up to irregularity * pi/N from the regular ones, drawn from "
                "simulation.seed and the grain's index (docs/polygons.md).",
                0.0, false, 0.95),
    });
    // [chain]
    r.insert(r.end(), {
        intKey("chain.count", "50", "Number of grains, in a line along +x.", 1, kMaxGrains),
        realKey("chain.radius", "0.5", "Grain radius.", kMinRadius, false, kMaxRadius),
        realKey("chain.spacing", "0", "Gap between neighbouring grains' surfaces.", 0.0),
        vectorKey("chain.origin", "0 0 0", "Centre of the first grain."),
    });
    // [lattice]
    r.insert(r.end(), {
        choiceKey("lattice.type", "cubic",
                  "square and hex (triangular: rows along x, sqrt(3)/2 pitch apart along y, odd rows "
                  "shifted by half a pitch) need dimension 2 and lie in the x-y plane at z = 0; cubic needs "
                  "dimension 3.",
                  {"square", "hex", "cubic"}),
        specialKey(Special::Counts, K::Vector, "lattice.counts", "10 10 10",
                   "Grains along x, y and z (z may be left out and is ignored in 2D)."),
        realKey("lattice.radius", "0.5", "Grain radius.", kMinRadius, false, kMaxRadius),
        realKey("lattice.spacing", "0",
                "Gap between neighbouring grains' surfaces; the pitch is 2 radius + spacing.", 0.0),
        vectorKey("lattice.origin", "0 0 0", "Centre of the first grain (z ignored in 2D)."),
        realKey("lattice.jitter", "0",
                "Random displacement of each free coordinate, uniform up to jitter * radius, drawn from "
                "simulation.seed.",
                0.0),
    });
    // [random]
    r.insert(r.end(), {
        intKey("random.count", "1000",
               "Number of grains, placed one by one, largest first, at random positions without overlap "
               "(random sequential addition); grain indices follow that order.",
               1, kMaxGrains),
        realKey("random.r_min", "0.5", "Smallest radius; radii are uniform in [r_min, r_max].", kMinRadius,
                false, kMaxRadius),
        realKey("random.r_max", "0.5", "Largest radius; must be >= r_min.", kMinRadius, false, kMaxRadius),
        vectorKey("random.box_min", "0 0 0",
                  "Lower corner of the box the grains lie fully inside (2D: z ignored, grains at z = 0; 1D: "
                  "x only)."),
        vectorKey("random.box_max", "10 10 10", "Upper corner of that box."),
    });
    // [packing]
    r.insert(r.end(), {
        textKey("packing.file", "",
                "Packing file for grains.source = file: rows 'x y z radius' or 'id x y z radius', '#' "
                "comments; for clumps and polygons 'x y z size' and an orientation after it, 3D 'qw qx qy qz' (unit "
                "quaternion), 2D 'angle' (radians), none meaning identity. A relative path is taken from the scene file's folder (from the working "
                "directory for built-in scenes and --set)."),
    });
    // [periodic]
    r.insert(r.end(), {
        specialKey(Special::Axes, K::Text, "periodic.axes", "",
                   "Periodic axes, a subset of xyz within the dimension (e.g. x); empty: none."),
        vectorKey("periodic.box_min", "",
                  "Lower corner of the periodic box; required when periodic.axes is set."),
        vectorKey("periodic.box_max", "",
                  "Upper corner of the periodic box; above box_min on the periodic axes."),
        realKey("periodic.shear_rate", "0",
                "Lees-Edwards simple shear v_x = rate * y (x and y periodic): the image of the cell across +y "
                "slides along x at rate * L_y."),
        vectorKey("periodic.strain_rate", "0 0 0",
                  "Rate at which each periodic length grows, dL/dt = rate * L, about the box centre "
                  "(negative: compression; only on periodic axes)."),
        specialKey(Special::Axes, K::Text, "periodic.stress_axes", "",
                   "Periodic axes whose strain rate a servo sets to hold periodic.stress (e.g. yz for "
                   "triaxial compression along x, xyz for isotropic); empty: none."),
        vectorKey("periodic.stress", "0 0 0",
                  "Normal stresses (compression positive) the servo holds on periodic.stress_axes."),
        realKey("periodic.stress_gain", "",
                "Servo: strain rate per unit stress error, d(rate) = gain (sigma_kk - stress_k) (> 0; "
                "required with stress_axes).",
                0.0, true),
        withInfinity(realKey("periodic.stress_time", "inf",
                             "Servo: the integral time tau, rate = gain (e + (1/tau) integral of e dt) with e = "
                             "sigma_kk - stress_k; it removes the offset rate/gain of the proportional part while "
                             "the cell must move (inf: proportional only).",
                             0.0, true)),
        withInfinity(realKey("periodic.max_strain_rate", "inf",
                             "Servo: the largest strain rate it sets, in magnitude.", 0.0, true)),
        boolKey("periodic.affine_start", "true",
                "With a shear or strain rate: the grains start with the mean flow's velocity added to theirs "
                "(else only the images move and the flow enters from the faces)."),
    });
    return r;
}

/// Keys of the dynamic sections [force.NAME], [wall.NAME] and [group.NAME],
/// relative ("grains" of [force.NAME]).
std::map<std::string, std::vector<Rule>> dynamicRules() {
    using K = KeyType;
    std::map<std::string, std::vector<Rule>> sections;
    sections["force"] = {
        specialKey(Special::GrainList, K::Text, "grains", "last",
                   "Grains the force acts on: first, last, all, or a comma list of indices (0-based in "
                   "generation order; negative ones count from the end). Forces of several sections on one "
                   "grain add up."),
        vectorKey("value", "0 0 0", "Force on each chosen grain until change_time."),
        withInfinity(realKey("change_time", "inf",
                             "Time at which the force becomes value_after (inf or never: no change).")),
        vectorKey("value_after", "", "Force after change_time (empty: same as value)."),
    };
    sections["wall"] = {
        choiceKey("type", "plane", "Shape of the wall.", {"plane", "cylinder"}),
        vectorKey("point", "0 0 0", "A point on the plane, or on the cylinder's axis."),
        vectorKey("normal", "0 0 1",
                  "Plane: normal pointing into the grains' side (normalised; must not be zero)."),
        vectorKey("axis", "0 0 1", "Cylinder: axis direction (normalised; must not be zero)."),
        realKey("radius", "1", "Cylinder radius.", 0.0, true),
        choiceKey("side", "inside", "Cylinder: grains live inside or outside.",
                  {"inside", "outside"}),
        realKey("mu", "", "Coulomb friction of grain-wall contacts (empty: contact.mu).", 0.0),
        realKey("youngs_modulus", "",
                "Young's modulus E of the wall for md.normal = hertz-material (Pa; empty: md.youngs_modulus).", 0.0,
                true),
        realKey("poisson_ratio", "",
                "Poisson's ratio of the wall for md.normal = hertz-material (empty: md.poisson_ratio).", -1.0, true,
                0.5),
        boolKey("mobile", "false",
                "A mobile wall moves along its free axes under contact forces and its force; a fixed wall "
                "never moves unless given a velocity."),
        realKey("mass", "0", "Mass of a mobile wall (must be > 0 when mobile).", 0.0),
        specialKey(Special::Axes, K::Text, "free", "xyz",
                   "Translation axes a mobile wall may move along, a subset of xyz (e.g. y)."),
        vectorKey("force", "0 0 0", "External force on a mobile wall until change_time."),
        withInfinity(realKey("change_time", "inf",
                             "Time at which the wall's force becomes force_after (inf or never: no change).")),
        vectorKey("force_after", "", "Force after change_time (empty: same as force)."),
        vectorKey("velocity", "0 0 0",
                  "Fixed wall: a non-zero velocity drives it kinematically (prescribed). Mobile wall: the "
                  "initial velocity along its free axes and a prescribed one along the others (a shear plate "
                  "under a normal force: free = y, force = 0 -F 0, velocity = U 0 0). Servo wall: the part "
                  "along the plane; the servo sets the normal part."),
        realKey("servo_stress", "",
                "Plane wall: the normal stress (compression positive) a servo holds by moving the wall along "
                "its normal, v_n = servo_gain (servo_stress - sigma), sigma the grains' normal force on the "
                "wall and its glued grains over servo_area (empty: no servo; the wall must not be mobile).",
                0.0),
        realKey("servo_gain", "", "Servo: wall speed per unit stress error (> 0; required with servo_stress).",
                0.0, true),
        realKey("servo_area", "",
                "Servo: the area (2D: length) sigma refers to (empty: the periodic box across the normal, "
                "which must be periodic on the dimension's other axes).",
                0.0, true),
        withInfinity(realKey("servo_max_speed", "inf", "Servo: the largest normal speed it gives the wall.",
                             0.0, true)),
        withInfinity(realKey("servo_time", "inf",
                             "Servo: the integral time tau, v_n = servo_gain (e + (1/tau) integral of e dt) with "
                             "e = servo_stress - sigma; it removes the offset v_n/gain of the proportional part "
                             "while the wall must move (inf: proportional only).",
                             0.0, true)),
    };
    sections["group"] = {
        specialKey(Special::GrainList, K::Text, "grains", "",
                   "Grains of the group: first, last, all, or a comma list of indices and ranges i..j "
                   "(0-based in generation order, both ends included; negative ones count from the end)."),
        specialKey(Special::Box, K::Text, "region", "",
                   "And the grains whose centre lies in this box at the start: 'xmin ymin zmin xmax ymax "
                   "zmax' (empty: none)."),
        vectorKey("velocity", "0 0 0", "Velocity the group's grains keep (not with wall)."),
        vectorKey("spin", "0 0 0", "Angular velocity the group's grains keep (not with wall)."),
        textKey("wall", "",
                "Glue the grains to this wall: they move with it, without spin, and the contact forces on "
                "them act on it (a rough plate; empty: velocity and spin instead)."),
    };
    return sections;
}

}  // namespace moreau::scene_io
