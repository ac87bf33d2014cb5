/// The Python module `moreau` (docs/python.md): scenes, the stepper of
/// sim/simulation.hpp with NumPy views of the world, the experiments and the
/// law and integrator lists. Errors come as moreau.InputError (a ValueError)
/// with the command line's one-line messages and moreau.DivergenceError.
#include <omp.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cctype>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "moreau/analysis/observables.hpp"
#include "moreau/core/error.hpp"
#include "moreau/experiments/experiment.hpp"
#include "moreau/io/scene_file.hpp"
#include "moreau/model/integrator_table.hpp"
#include "moreau/model/law_table.hpp"
#include "moreau/sim/guards.hpp"
#include "moreau/sim/run.hpp"
#include "moreau/sim/simulation.hpp"

namespace py = pybind11;
using namespace moreau;

namespace {

/// A scene value from Python: booleans as true/false, numbers as Python
/// writes them (the shortest text that reads back to the same double),
/// sequences of numbers as "x y z", text as is.
std::string valueText(const py::handle& v) {
    if (py::isinstance<py::bool_>(v)) return v.cast<bool>() ? "true" : "false";
    if (py::isinstance<py::str>(v)) return v.cast<std::string>();
    if (py::isinstance<py::int_>(v) || py::isinstance<py::float_>(v)) return py::str(v).cast<std::string>();
    if (py::hasattr(v, "__fspath__")) return py::str(v.attr("__fspath__")()).cast<std::string>();
    if (py::isinstance<py::sequence>(v) || py::hasattr(v, "tolist")) {
        const py::object items = py::hasattr(v, "tolist") ? v.attr("tolist")() : py::reinterpret_borrow<py::object>(v);
        std::string text;
        for (const py::handle item : items) text += (text.empty() ? "" : " ") + valueText(item);
        return text;
    }
    throw InputError("a scene value of type '" + py::str(v.get_type().attr("__name__")).cast<std::string>() +
                     "' (allowed: bool, int, float, str, a sequence of numbers)");
}

std::vector<std::string> setsOf(const py::object& set) {
    std::vector<std::string> sets;
    if (set.is_none()) return sets;
    for (const auto& [key, value] : set.cast<py::dict>()) sets.push_back(py::str(key).cast<std::string>() + "=" + valueText(value));
    return sets;
}

/// A scene from a path or from a dict of "section.key" values.
Scene sceneOf(const py::object& scene, const std::vector<std::string>& sets) {
    if (py::isinstance<py::dict>(scene)) {
        std::map<std::string, std::string> sections;
        for (const auto& [k, value] : scene.cast<py::dict>()) {
            const std::string key = py::str(k).cast<std::string>();
            const std::size_t dot = key.rfind('.');
            if (dot == std::string::npos || dot == 0)
                throw InputError("<dict>: key '" + key + "' is not section.key (e.g. 'cd.iterations')");
            std::string text = valueText(value);
            if (text.find_first_of("\n#") != std::string::npos)
                throw InputError("<dict>: key '" + key + "': a value may not hold a line break or '#'");
            sections[key.substr(0, dot)] += key.substr(dot + 1) + " = " + (text.empty() ? "\"\"" : text) + "\n";
        }
        std::string text;
        for (const auto& [section, lines] : sections) text += "[" + section + "]\n" + lines;
        try {
            return loadSceneText(text, "<dict>", sets);
        } catch (const InputError& e) {
            // The lines are of the text made here, not the user's: drop them.
            std::string what = e.what();
            const std::string prefix = "<dict>:";
            if (what.rfind(prefix, 0) == 0) {
                std::size_t end = prefix.size();
                while (end < what.size() && std::isdigit(static_cast<unsigned char>(what[end]))) ++end;
                if (end > prefix.size() && end < what.size() && what[end] == ':') what.erase(prefix.size() - 1, end - prefix.size() + 1);
            }
            throw InputError(what);
        }
    }
    if (py::isinstance<py::str>(scene) || py::hasattr(scene, "__fspath__"))
        return loadSceneFile(valueText(scene), sets);
    throw py::type_error("Simulation(scene): a path or a dict of 'section.key' values");
}

/// A read-only NumPy view of `rows` rows of `cols` doubles at `data`, kept
/// alive by `owner`.
py::array view(const double* data, std::size_t rows, std::size_t cols, const py::object& owner) {
    std::vector<py::ssize_t> shape{static_cast<py::ssize_t>(rows)}, strides{static_cast<py::ssize_t>(cols * sizeof(double))};
    if (cols > 1) {
        shape.push_back(static_cast<py::ssize_t>(cols));
        strides.push_back(sizeof(double));
    }
    py::array a(py::dtype::of<double>(), shape, strides, data, owner);
    py::detail::array_proxy(a.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
    return a;
}

py::dict recordDict(const StepRecord& r) {
    py::dict d;
    d["step"] = r.step;
    d["time"] = r.time;
    d["kinetic_energy"] = r.kineticEnergy;
    d["rotational_energy"] = r.rotationalEnergy;
    d["contacts"] = r.contacts;
    d["iterations"] = r.iterations;
    d["residual"] = r.residual;
    d["natural_error"] = r.naturalError;
    d["mean_overlap"] = r.meanOverlap;
    d["max_overlap"] = r.maxOverlap;
    d["elastic_energy"] = r.elasticEnergy;
    auto matrix = [](const Mat3& m) {
        py::array_t<double> a({py::ssize_t{3}, py::ssize_t{3}});
        auto A = a.mutable_unchecked<2>();
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j) A(i, j) = m(i, j);
        return a;
    };
    d["stress"] = matrix(r.stress);
    d["pressure"] = r.pressure;
    d["deviator"] = r.deviator;
    d["packing_fraction"] = r.packingFraction;
    d["coordination"] = r.coordination;
    d["coordination_nonrattlers"] = r.coordinationNonRattlers;
    d["fabric"] = matrix(r.fabric);
    return d;
}

py::object jsonToPython(const nlohmann::json& doc) { return py::module_::import("json").attr("loads")(doc.dump()); }

/// The Python-side Simulation: owns the C++ one, or the run (SteppedRun)
/// that owns it and writes its outputs (out=DIR).
class PySimulation {
public:
    PySimulation(const py::object& scene, const py::object& set, const py::object& threads, const py::object& out) {
        setThreads(threads);
        Scene s = sceneOf(scene, setsOf(set));
        if (!out.is_none()) {
            // `moreau run --out DIR`'s checks, folder and outputs.
            run_ = SteppedRun::start(std::move(s), outOptions(valueText(out)));
        } else {
            // What `moreau run` refuses before step 0 (sim/guards.hpp), with its messages.
            checkMdStep(s);
            checkStart(s);
            sim_ = std::make_unique<Simulation>(std::move(s));
        }
        restartGuard();
    }

    /// The run in `dir` continued from its checkpoint (`moreau run --resume DIR`).
    PySimulation(const std::string& dir, const py::object& set, const py::object& threads) {
        setThreads(threads);
        run_ = SteppedRun::resume(outOptions(dir), setsOf(set));
        restartGuard();
    }

    static void setThreads(const py::object& threads) {
        if (threads.is_none()) return;
        const int n = threads.cast<int>();
        if (n < 1 || n > 4096) throw InputError("threads=" + std::to_string(n) + " (allowed: 1 to 4096)");
        omp_set_num_threads(n);
    }

    static RunOptions outOptions(const std::string& dir) {
        RunOptions o;
        o.outDir = dir;
        o.quiet = true;  // log.txt holds the log; a script's stderr stays its own
        o.folderOption = "out=";
        return o;
    }

    /// n whole steps, each checked by `moreau run`'s guards as its run loop
    /// checks them: travel every step, overlaps and energy every guard.every
    /// steps (without out=DIR there is no last step). A failure raises
    /// DivergenceError with the diagnosis summary.json's "divergence" holds;
    /// without out=DIR the world is left at the step that failed, with it
    /// the run is finished as `moreau run`'s (the last good step's
    /// checkpoint, summary.json).
    void step(long n) {
        if (n < 0) throw InputError("step(n): n = " + std::to_string(n) + " (allowed: n >= 0)");
        for (long k = 0; k < n; ++k) {
            {
                py::gil_scoped_release free;
                if (run_) {
                    run_->step();
                } else {
                    sim_->advance();
                    if (guard_->active()) {
                        const long s = sim_->world().step;
                        const std::string why = guard_->checkStep(*sim_, s % guard_->every() == 0);
                        if (!why.empty()) throw DivergenceError("step " + std::to_string(s) + ": " + why);
                    }
                }
            }
            if (PyErr_CheckSignals() != 0) throw py::error_already_set();
        }
    }

    /// The run's folder (out=DIR), or throws InputError naming `what`.
    SteppedRun& run(const char* what) {
        if (!run_) throw InputError(std::string(what) + ": only for a Simulation with out=DIR (it has no folder)");
        return *run_;
    }
    void checkpoint() {
        py::gil_scoped_release free;
        run("checkpoint").checkpoint();
    }
    /// Flushes and writes summary.json (status "completed" at or past
    /// simulation.steps, else "closed"); returns it (None without out=DIR
    /// or once closed).
    py::object close() {
        if (!run_ || run_->finished()) return py::none();
        const char* status = world().step >= run_->steps() ? "completed" : "closed";
        RunOutcome outcome;
        {
            py::gil_scoped_release free;
            outcome = run_->finish(status);
        }
        return jsonToPython(outcome.summary);
    }
    /// The run's folder (out=DIR), or None.
    py::object folder() const { return run_ ? py::cast(run_->folder().string()) : py::none(); }

    /// The guards from the state now: a setter may add an energy source (a
    /// wall force, cell rates or a cell servo) or give the grains energy
    /// (velocities, positions), so the energy guard starts over from it.
    void restartGuard() {
        if (run_) {
            run_->restartGuards();
            return;
        }
        RunTotals fresh;  // the energy reference is made from the state now
        guard_.emplace(sim(), fresh);
    }

    Simulation& sim() { return run_ ? run_->simulation() : *sim_; }
    const Simulation& sim() const { return run_ ? run_->simulation() : *sim_; }
    const World& world() const { return sim().world(); }

    py::dict contacts() const {
        const World& w = world();
        const std::vector<Contact>& cs = sim().contacts();
        const std::size_t m = cs.size();
        py::array_t<std::int64_t> a(static_cast<py::ssize_t>(m)), b(static_cast<py::ssize_t>(m));
        py::array_t<double> normal({static_cast<py::ssize_t>(m), py::ssize_t{3}}), gap(static_cast<py::ssize_t>(m)),
            force({static_cast<py::ssize_t>(m), py::ssize_t{3}});
        py::array_t<bool> periodic(static_cast<py::ssize_t>(m));
        auto A = a.mutable_unchecked<1>(), B = b.mutable_unchecked<1>();
        auto P = periodic.mutable_unchecked<1>();
        auto N = normal.mutable_unchecked<2>(), F = force.mutable_unchecked<2>();
        auto G = gap.mutable_unchecked<1>();
        for (std::size_t k = 0; k < m; ++k) {
            const Contact& c = cs[k];
            const auto i = static_cast<py::ssize_t>(k);
            A(i) = c.a;
            B(i) = c.b;
            G(i) = c.gap;
            for (int e = 0; e < 3; ++e) {
                N(i, e) = c.n[e];
                F(i, e) = c.history.reaction[e];
            }
            bool crosses = false;
            if (!w.isWall(c.b)) {
                const Vec3 d = w.x[static_cast<std::size_t>(c.b)] - w.x[static_cast<std::size_t>(c.a)];
                crosses = w.minimumImage(d) != d;
            }
            P(i) = crosses;
        }
        py::dict d;
        d["a"] = a;
        d["b"] = b;
        d["normal"] = normal;
        d["gap"] = gap;
        d["force"] = force;
        d["periodic"] = periodic;
        return d;
    }

    py::dict walls() const {
        const World& w = world();
        const std::vector<Vec3> loads = sim().wallLoads();
        py::dict d;
        for (std::size_t k = 0; k < w.numWalls(); ++k) {
            const std::size_t i = w.numGrains + k;
            const WallShape& s = w.wallShape[k];
            py::dict wall;
            wall["body"] = i;
            wall["type"] = s.kind == ShapeKind::Plane ? "plane" : "cylinder";
            wall["position"] = std::vector<double>{w.x[i][0], w.x[i][1], w.x[i][2]};
            wall["velocity"] = std::vector<double>{w.v[i][0], w.v[i][1], w.v[i][2]};
            const Vec3 f = w.appliedForce(static_cast<BodyId>(i), w.time);
            wall["force"] = std::vector<double>{f[0], f[1], f[2]};
            wall["mobile"] = static_cast<bool>(w.wallMobile[k]);
            wall["mass"] = w.mass[i];
            wall["load"] = std::vector<double>{loads[k][0], loads[k][1], loads[k][2]};
            std::vector<int> glued;
            for (const World::DrivenGrain& g : w.driven)
                if (static_cast<std::size_t>(g.wall) == i) glued.push_back(g.grain);
            wall["glued"] = glued;
            for (const WallServo& servo : sim().scene().servos)
                if (static_cast<std::size_t>(servo.wall) == i) wall["servo_stress"] = servo.stress;
            d[py::str(w.wallName[k])] = wall;
        }
        return d;
    }

    /// Checks an (n, 3) array of finite numbers for the grains and copies it
    /// into `target`; components along locked axes must equal `locked`'s.
    void setGrainVectors(const py::array_t<double, py::array::c_style | py::array::forcecast>& values,
                         std::vector<Vec3>& target, const Vec3& mask, const char* what) {
        const World& w = world();
        if (!sim().betweenSteps())
            throw InputError(std::string(what) + ": only between steps (a stage of this step is under way)");
        if (values.ndim() != 2 || values.shape(0) != static_cast<py::ssize_t>(w.numGrains) || values.shape(1) != 3)
            throw InputError(std::string(what) + ": an array of shape (" + std::to_string(w.numGrains) +
                             ", 3) (allowed: one row per grain)");
        auto v = values.unchecked<2>();
        for (std::size_t i = 0; i < w.numGrains; ++i)
            for (int e = 0; e < 3; ++e) {
                const double x = v(static_cast<py::ssize_t>(i), e);
                if (!std::isfinite(x))
                    throw InputError(std::string(what) + ": row " + std::to_string(i) + " is not finite");
                if (mask[e] == 0.0 && x != target[i][e])
                    throw InputError(std::string(what) + ": row " + std::to_string(i) + " changes the locked axis " +
                                     static_cast<char>('x' + e) + " (allowed: the dimension's axes only)");
            }
        for (std::size_t i = 0; i < w.numGrains; ++i)
            for (int e = 0; e < 3; ++e) target[i][e] = v(static_cast<py::ssize_t>(i), e);
        sim().md().reset();  // a multi-step scheme's history is of the old state
        restartGuard();
    }

private:
    std::unique_ptr<SteppedRun> run_;  ///< with out=DIR: the run, which owns the simulation
    std::unique_ptr<Simulation> sim_;  ///< without: the simulation
    std::optional<Guard> guard_;
};

/// A property getter: the grains' rows of the world's per-body `array`.
template <class T>
auto grainView(std::vector<T> World::*array) {
    static_assert(sizeof(T) % sizeof(double) == 0);
    return [array](const py::object& self) {
        const World& w = self.cast<PySimulation&>().world();
        return view(reinterpret_cast<const double*>((w.*array).data()), w.numGrains, sizeof(T) / sizeof(double), self);
    };
}

/// An (n, K) array (a copy) of the grains' rows row(world, i), K doubles each.
template <int K, class Row>
py::array_t<double> grainRows(const World& w, Row row) {
    py::array_t<double> out({static_cast<py::ssize_t>(w.numGrains), py::ssize_t{K}});
    auto o = out.mutable_unchecked<2>();
    for (std::size_t i = 0; i < w.numGrains; ++i) {
        const auto values = row(w, i);
        for (int k = 0; k < K; ++k) o(static_cast<py::ssize_t>(i), k) = values[k];
    }
    return out;
}

py::dict lawLists() {
    py::dict d;
    auto names = [](const auto& table) {
        std::vector<std::string> out;
        for (const auto& [law, name] : table) out.emplace_back(name);
        return out;
    };
    d["normal"] = names(kNormalLawNames);
    d["tangential"] = names(kTangentialLawNames);
    d["rolling"] = names(kRollingLawNames);
    return d;
}

}  // namespace

PYBIND11_MODULE(moreau, m) {
    m.doc() = "Moreau: rigid grains with Jean-Moreau contact dynamics and soft grains with spring-dashpot "
              "molecular dynamics on one geometry (docs/python.md).";
    m.attr("__version__") = MOREAU_VERSION;
    py::register_exception<InputError>(m, "InputError", PyExc_ValueError);
    py::register_exception<DivergenceError>(m, "DivergenceError", PyExc_RuntimeError);

    py::class_<PySimulation>(m, "Simulation", R"(A scene being stepped.

Simulation(scene, set=None, threads=None, out=None)

scene    a scene file path, or a dict of 'section.key' values (every key of
         `moreau run --help`; unset keys take their defaults)
set      a dict of 'section.key' overrides, as the command line's --set
threads  OpenMP threads (default: all cores); results do not depend on it
out      a folder: the run writes there what `moreau run --out DIR` writes,
         as it steps (series.csv, VTK, log.txt, checkpoints at the scene's
         cadences; summary.json at close()), and holds it until close()

Bad input, and a scene `moreau run` refuses before step 0 (guard.contact_steps,
guard.start_overlap), raise moreau.InputError with the command line's message.
With out=DIR: `with moreau.Simulation(..., out=DIR) as sim:` closes it at the
end of the block; Simulation.resume(DIR) continues a run from its checkpoint.)")
        .def(py::init<const py::object&, const py::object&, const py::object&, const py::object&>(), py::arg("scene"),
             py::arg("set") = py::none(), py::arg("threads") = py::none(), py::arg("out") = py::none())
        .def_static(
            "resume",
            [](const py::object& dir, const py::object& set, const py::object& threads) {
                return std::make_unique<PySimulation>(valueText(dir), set, threads);
            },
            py::arg("dir"), py::arg("set") = py::none(), py::arg("threads") = py::none(),
            "The run in folder dir continued from its checkpoint, as `moreau run --resume DIR [--set ...]` continues "
            "it (set: the keys a resume may change, e.g. simulation.steps and output.*); it writes on into dir.")
        .def("checkpoint", &PySimulation::checkpoint,
             "Write DIR/checkpoint of the state now (out=DIR only): `moreau run --resume DIR` or "
             "Simulation.resume(DIR) continue from it to the bits of the run that was never stopped.")
        .def("close", &PySimulation::close,
             "Flush series.csv, write summary.json (status 'completed' once the scene's simulation.steps are "
             "done, else 'closed', with a checkpoint of the state to continue from) and release the folder; returns "
             "the summary as a dict (None without out=DIR, or when already closed). Stepping after it raises "
             "InputError.")
        .def("__enter__", [](py::object self) { return self; })
        .def(
            "__exit__",
            [](PySimulation& s, const py::object&, const py::object&, const py::object&) {
                s.close();
                return false;
            },
            py::arg("type"), py::arg("value"), py::arg("traceback"))
        .def_property_readonly("out", &PySimulation::folder, "The run's folder (out=DIR), or None.")
        .def("step", &PySimulation::step, py::arg("n") = 1,
             "Advance n whole steps (the GIL is released while stepping; Ctrl-C stops between steps with "
             "KeyboardInterrupt). Raises moreau.DivergenceError when a value turns non-finite (the world is then "
             "the step's before) or a step fails a check of `moreau run` (guard.max_travel every step, "
             "guard.max_overlap and guard.energy every guard.every steps; the world is then at that step).")
        .def("apply_controls", [](PySimulation& s) { s.sim().applyControls(); },
             "Before detect() when stepping stage by stage (step() does it): each servo wall's normal velocity "
             "from its load, each glued grain's velocity from its wall's.")
        .def("detect", [](PySimulation& s) { s.sim().detect(); }, "Stage 1 of a step: candidate contacts.")
        .def("match", [](PySimulation& s) { s.sim().match(); }, "Stage 2: last step's contact memory by key.")
        .def("solve", [](PySimulation& s) { py::gil_scoped_release free; s.sim().solve(); },
             "Stage 3: CD sweeps (new velocities) or MD forces.")
        .def("integrate", [](PySimulation& s) { s.sim().integrate(); }, "Stage 4: positions; advances the clock.")
        .def(
            "observe",
            [](PySimulation& s) {
                const StepRecord r = s.sim().measuredRecord();
                py::dict d = recordDict(r);
                py::dict walls, torques;
                const World& w = s.world();
                for (std::size_t k = 0; k < r.wallForce.size(); ++k) {
                    walls[py::str(w.wallName[k])] =
                        std::vector<double>{r.wallForce[k][0], r.wallForce[k][1], r.wallForce[k][2]};
                    torques[py::str(w.wallName[k])] =
                        std::vector<double>{r.wallTorque[k][0], r.wallTorque[k][1], r.wallTorque[k][2]};
                }
                d["wall_forces"] = walls;
                d["wall_torques"] = torques;
                return d;
            },
            "The observables of the current state, the columns of series.csv: step, time, kinetic_energy, "
            "rotational_energy, contacts (force-carrying), iterations and residual (CD, last step), mean_overlap, "
            "max_overlap, elastic_energy, stress (3 x 3, compression positive), pressure, deviator, "
            "packing_fraction, coordination, coordination_nonrattlers, fabric (3 x 3), wall_forces (by wall name: "
            "the force the grains exert on it), wall_torques (by wall name: their torque about the wall's point).")
        .def("contacts", &PySimulation::contacts,
             "This step's contacts as a dict of arrays: 'a', 'b' (body ids; walls follow the grains), 'normal' "
             "(m, 3; from a to b), 'gap' (m; negative: overlap), 'force' (m, 3; on b), 'periodic' (crosses a "
             "periodic boundary).")
        .def(
            "record_residuals",
            [](PySimulation& s, bool on) {
                if (s.sim().scene().simulation.method != Method::CD)
                    throw InputError("record_residuals: CD only (simulation.method = cd)");
                s.sim().cd().recordResidualHistory(on);
            },
            py::arg("on") = true,
            "CD: keep the residual of every sweep of each step (costs a pass per sweep); see residual_history().")
        .def(
            "set_cd_iterations",
            [](PySimulation& s, int n) { s.sim().setCdIterations(n, "set_cd_iterations"); },
            py::arg("n"),
            "CD: N_I, the sweeps of each following step under the fixed criterion (cd.iterations), e.g. many "
            "sweeps for one step of a convergence study. `settings` and the run's checkpoints say it from now on.")
        .def(
            "set_stage",
            [](PySimulation& s, const std::string& name) { s.sim().setStage(name, "set_stage"); },
            py::arg("name"),
            "The protocol's stage from the next row of series.csv on (its last column `stage`; the run must "
            "start with output.stage = the first stage's name). `settings` and the run's checkpoints say it "
            "from now on.")
        .def_property_readonly(
            "stage", [](const PySimulation& s) { return s.sim().scene().output.stage; },
            "The current stage (output.stage; empty: the run names no stages).")
        .def(
            "residual_history",
            [](PySimulation& s) {
                const std::vector<double>& r = s.sim().cd().residualHistory();
                return py::array_t<double>(static_cast<py::ssize_t>(r.size()), r.data());
            },
            "CD: the residual after each sweep of the last step (eqs. 35-36's relative change), when "
            "record_residuals() is on; a copy.")
        .def_property_readonly("walls", &PySimulation::walls,
                               "Every wall by name: body id, type, position, velocity, applied force, mobile, mass, load (the "
                               "force the grains exerted at the last step on it and its glued grains), glued (grain "
                               "ids) and, on a servo wall, servo_stress.")
        .def_property_readonly(
            "positions", grainView(&World::x),
            "Grain centres, an (n, 3) read-only view (no copy) that follows the simulation.")
        .def_property_readonly(
            "velocities", grainView(&World::v),
            "Grain velocities, an (n, 3) read-only view (MD leapfrog: the half-step velocities).")
        .def_property_readonly(
            "angular_velocities", grainView(&World::w),
            "Grain angular velocities (world frame), an (n, 3) read-only view.")
        .def_property_readonly(
            "radii", grainView(&World::radius),
            "Grain radii, an (n,) read-only view.")
        .def_property_readonly(
            "masses", grainView(&World::mass),
            "Grain masses, an (n,) read-only view.")
        .def_property_readonly(
            "orientations",
            [](PySimulation& s) {
                return grainRows<4>(s.sim().world(), [](const World& w, std::size_t i) {
                    const Quat& q = w.q[i];
                    return Eigen::Vector4d(q.w(), q.x(), q.y(), q.z());
                });
            },
            "Grain orientations, (n, 4) unit quaternions w, x, y, z (the principal frame to world; 2D: a "
            "rotation about z); a copy.")
        .def_property_readonly(
            "inertia",
            [](PySimulation& s) {
                return grainRows<3>(s.sim().world(), [](const World& w, std::size_t i) { return w.principalInertia(i); });
            },
            "Grain principal moments of inertia, (n, 3) (a sphere's three equal ones); a copy.")
        .def(
            "set_velocities",
            [](PySimulation& s, const py::array_t<double, py::array::c_style | py::array::forcecast>& v) {
                s.setGrainVectors(v, s.sim().world().v, s.world().translationMask(), "set_velocities");
            },
            py::arg("v"), "Set every grain's velocity between steps ((n, 3); locked axes unchanged).")
        .def(
            "set_angular_velocities",
            [](PySimulation& s, const py::array_t<double, py::array::c_style | py::array::forcecast>& w) {
                s.setGrainVectors(w, s.sim().world().w, s.world().rotationMask(), "set_angular_velocities");
            },
            py::arg("w"), "Set every grain's angular velocity between steps ((n, 3)).")
        .def(
            "set_positions",
            [](PySimulation& s, const py::array_t<double, py::array::c_style | py::array::forcecast>& x) {
                const World& w = s.world();
                s.setGrainVectors(x, s.sim().world().x, w.translationMask(), "set_positions");
            },
            py::arg("x"), "Move the grains between steps ((n, 3); locked axes unchanged).")
        .def(
            "set_wall_force",
            [](PySimulation& s, const std::string& name, const std::vector<double>& f) {
                World& w = s.sim().world();
                std::size_t k = 0;
                while (k < w.numWalls() && w.wallName[k] != name) ++k;
                if (k == w.numWalls()) throw InputError("set_wall_force: no wall '" + name + "'");
                if (!w.wallMobile[k])
                    throw InputError("set_wall_force: wall '" + name + "' is fixed (allowed: a mobile wall)");
                if (f.size() != 3 || !std::isfinite(f[0]) || !std::isfinite(f[1]) || !std::isfinite(f[2]))
                    throw InputError("set_wall_force: three finite numbers (allowed: [fx, fy, fz])");
                ForceSchedule& sched = w.forceSchedule(static_cast<BodyId>(w.numGrains + k));
                sched = ForceSchedule{Vec3(f[0], f[1], f[2]), Vec3(f[0], f[1], f[2])};
                s.restartGuard();
            },
            py::arg("name"), py::arg("force"), "Set a mobile wall's applied force from now on (replaces its schedule).")
        .def_property_readonly(
            "cell",
            [](PySimulation& s) {
                const World& w = s.world();
                py::dict d;
                d["periodic"] = std::vector<bool>{w.periodic[0], w.periodic[1], w.periodic[2]};
                d["box_min"] = std::vector<double>{w.boxMin[0], w.boxMin[1], w.boxMin[2]};
                d["box_max"] = std::vector<double>{w.boxMax[0], w.boxMax[1], w.boxMax[2]};
                d["strain_rate"] = std::vector<double>{w.strainRate[0], w.strainRate[1], w.strainRate[2]};
                d["shear_rate"] = w.shearRate;
                d["shift"] = w.shift;
                d["shear_strain"] = w.shearStrain;
                return d;
            },
            "The periodic cell: periodic axes, box_min, box_max, strain_rate, shear_rate, shift (Lees-Edwards offset, "
            "in [0, L_x)), shear_strain (the integral of the shear rate over time, never wrapped).")
        .def(
            "cell_stress",
            [](PySimulation& s) {
                const Mat3 m = s.sim().cellStress();
                py::array_t<double> a({py::ssize_t{3}, py::ssize_t{3}});
                auto A = a.mutable_unchecked<2>();
                for (int i = 0; i < 3; ++i)
                    for (int j = 0; j < 3; ++j) A(i, j) = m(i, j);
                return a;
            },
            "The grains' stress over the periodic cell (3 x 3, compression positive) that the cell's stress servo reads.")
        .def(
            "set_cell_rates",
            [](PySimulation& s, const std::vector<double>& strain, double shear) {
                if (!s.sim().betweenSteps()) throw InputError("set_cell_rates: only between steps");
                if (strain.size() != 3) throw InputError("set_cell_rates: strain_rate of three numbers (allowed: [ex, ey, ez])");
                s.sim().setCellRates(Vec3(strain[0], strain[1], strain[2]), shear, "set_cell_rates");
                s.restartGuard();
            },
            py::arg("strain_rate") = std::vector<double>{0.0, 0.0, 0.0}, py::arg("shear_rate") = 0.0,
            "The cell's strain rates per axis and Lees-Edwards shear rate from now on (periodic axes; md.integrator cd).")
        .def(
            "set_cell_stress",
            [](PySimulation& s, const std::string& axes, const std::vector<double>& stress, double gain, double maxRate,
               double time) {
                if (!s.sim().betweenSteps()) throw InputError("set_cell_stress: only between steps");
                if (stress.size() != 3) throw InputError("set_cell_stress: stress of three numbers (allowed: [sx, sy, sz])");
                CellServo servo;
                for (char c : axes) {
                    if (c < 'x' || c > 'z') throw InputError("set_cell_stress: axes '" + axes + "' (allowed: a subset of xyz)");
                    servo.axes[static_cast<std::size_t>(c - 'x')] = true;
                }
                servo.stress = Vec3(stress[0], stress[1], stress[2]);
                servo.gain = gain;
                servo.maxRate = maxRate;
                servo.time = time;
                s.sim().setCellServo(servo, "set_cell_stress");
                s.restartGuard();
            },
            py::arg("axes"), py::arg("stress") = std::vector<double>{0.0, 0.0, 0.0}, py::arg("gain") = 0.0,
            py::arg("max_rate") = std::numeric_limits<double>::infinity(),
            py::arg("time") = std::numeric_limits<double>::infinity(),
            "A servo on the cell's strain rates that holds these normal stresses on these axes ('' turns it off); "
            "time: its integral time (inf: proportional only).")
        .def_property_readonly("state_hash", [](PySimulation& s) { return hex64(stateHash(s.world())); },
                               "The hash of every body's state that summary.json reports: equal hashes, equal bits.")
        .def_property_readonly("step_count", [](PySimulation& s) { return s.world().step; }, "Steps taken.")
        .def_property_readonly("time", [](PySimulation& s) { return s.world().time; }, "Simulated time.")
        .def_property_readonly("dt", [](PySimulation& s) { return s.sim().scene().simulation.dt; }, "Time step.")
        .def_property_readonly("method",
                               [](PySimulation& s) {
                                   return s.sim().scene().simulation.method == Method::CD ? "cd" : "md";
                               },
                               "'cd' or 'md'.")
        .def_property_readonly("dimension", [](PySimulation& s) { return s.world().dimension; }, "1, 2 or 3.")
        .def_property_readonly("num_grains", [](PySimulation& s) { return s.world().numGrains; }, "Grains.")
        .def_property_readonly("settings", [](PySimulation& s) { return s.sim().scene().values; },
                               "Every scene key with its value, as summary.json lists them.");

    m.def(
        "experiment",
        [](const std::string& name, const py::object& set, const py::object& seed, const py::object& out) {
            const ExperimentInfo* entry = nullptr;
            for (const ExperimentInfo& e : experiments())
                if (e.name == name) entry = &e;
            if (!entry) throw InputError("unknown experiment '" + name + "' (see moreau.experiments())");
            ExperimentOptions options;
            options.sets = setsOf(set);
            if (!seed.is_none()) options.seed = seed.cast<std::uint64_t>();
            options.writeFiles = !out.is_none();
            if (!out.is_none()) options.outDir = valueText(out);
            options.quiet = true;
            nlohmann::json doc;
            {
                py::gil_scoped_release free;
                doc = entry->run(options);
            }
            doc["ranks"] = 1;  // as `moreau experiment` writes it (INTERFACE.md)
            return jsonToPython(doc);
        },
        py::arg("name"), py::arg("set") = py::none(), py::arg("seed") = py::none(), py::arg("out") = py::none(),
        "Run an experiment by name; returns its JSON record (experiment, params, results, checks, ranks) as a dict. "
        "With out=DIR it also writes its CSV and plot there.");
    m.def(
        "experiments",
        [] {
            py::dict d;
            for (const ExperimentInfo& e : experiments()) d[py::str(e.name)] = e.description;
            return d;
        },
        "The experiments by name, with what each reproduces.");
    m.def("laws", &lawLists, "The force laws by kind: normal, tangential, rolling (md.normal, md.tangential, md.rolling).");
    m.def(
        "integrators",
        [] {
            std::vector<std::string> names;
            for (const IntegratorInfo& i : integrators()) names.emplace_back(i.name);
            return names;
        },
        "The MD integrators (md.integrator).");
    m.def("scene_reference", [] { return sceneReference(); }, "Every scene key with its default, range and meaning.");
}
