// SPDX-License-Identifier: BSD-3-Clause
// pardyn._pardyn: the Python layer over libpardyn (docs/python.md). Everything a run does is the
// library's: scenarios are read and validated by load_scenario, the run is pardyn::Simulation,
// stepped with begin_run / advance / end_run. This file converts: arguments, NumPy arrays (in the
// order of particle ids, copied from and to the backend), exceptions, Python callbacks as
// observers, and Ctrl-C (polled while the steps run without the GIL).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <mutex>
#include <numeric>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "pardyn/app/config.hpp"
#include "pardyn/app/registry.hpp"
#include "pardyn/app/simulation.hpp"
#include "pardyn/version.hpp"

namespace py = pybind11;

namespace pardyn::python {
namespace {

// One registry (the loaded plugins) shared by every Simulation alive, made when the first needs it.
std::shared_ptr<Registry> registry() {
  static std::mutex m;
  static std::weak_ptr<Registry> shared;
  std::lock_guard<std::mutex> lock(m);
  std::shared_ptr<Registry> r = shared.lock();
  if (!r) {
    r = std::make_shared<Registry>();
    r->load_default();
    shared = r;
  }
  return r;
}

// A Python exception raised inside a callback while the steps ran: kept here, the run stopped
// with this C++ exception, and raised again when control is back in Python.
struct CallbackFailed : std::runtime_error {
  CallbackFailed() : std::runtime_error("a Python callback raised an exception") {}
};

class PySimulation;

// add_callback(fn, interval): an observer that calls fn(simulation) every `interval` steps.
class PythonCallback final : public Observer {
 public:
  PythonCallback(py::function fn, std::uint64_t interval, PySimulation* owner)
      : fn_(std::move(fn)), interval_(interval), owner_(owner) {}
  ~PythonCallback() override {
    py::gil_scoped_acquire gil;
    fn_ = py::function();
  }
  std::uint64_t interval() const override { return interval_; }
  void observe(const ObserveContext& ctx) override;

 private:
  py::function fn_;
  std::uint64_t interval_;
  PySimulation* owner_;
};

class PySimulation {
 public:
  // From a file (text empty) or from scenario text (a dict turned into TOML by the package).
  PySimulation(const std::string& path, const std::string& text, const std::string& dir,
               const std::vector<std::string>& overrides, const std::string& output, bool quiet)
      : registry_(registry()) {
    ScenarioSource source{text, dir};
    try {
      scenario_ = load_scenario(path, overrides, *registry_, text.empty() ? nullptr : &source);
      RunOptions opt;
      opt.quiet = quiet;
      opt.output = output;
      opt.serial = true;  // one process: the module does not run over MPI
      sim_ = std::make_unique<Simulation>(scenario_, *registry_, opt);
    } catch (const ScenarioError&) {
      throw;
    } catch (const Error& e) {
      // What the plugins' factories refuse names its section ("[[particles]] #1 (lattice)
      // (file:12:1): ..."): a scenario error too, at that place.
      static const std::regex place(R"(([^\s():]+):(\d+):(\d+))");
      const std::string what = e.what();
      std::smatch m;
      if (!std::regex_search(what, m, place)) throw;
      throw ScenarioError(what, {{m[1].str(), std::stoi(m[2].str()), std::stoi(m[3].str()), what}});
    }
    sim_->keep_history(true);
    sim_->set_poll([this] { return poll(); });
  }

  ~PySimulation() {
    // Outputs are flushed and closed as at the end of a run when the object goes.
    if (sim_ && !sim_->ended()) {
      try {
        sim_->end_run();
      } catch (...) {}
    }
    sim_.reset();
  }

  Simulation& sim() {
    if (!sim_) throw Error("this Simulation is closed");
    return *sim_;
  }

  // Steps `steps` more steps (to_end: up to the scenario's end, as `pardyn run` does).
  std::uint64_t run(std::optional<std::uint64_t> steps) {
    Simulation& s = sim();
    if (s.ended())
      throw Error(s.failed() ? "the run ended with an error; make a new Simulation"
                             : "the run was closed; make a new Simulation");
    s.clear_stop();
    pending_.reset();
    std::uint64_t done = 0;
    {
      py::gil_scoped_release nogil;
      last_poll_ = std::chrono::steady_clock::now();
      try {
        if (steps) done = s.advance(s.step() + *steps, false);
        else done = s.advance(s.scenario().steps, true);
      } catch (const CallbackFailed&) {
        // The callback's exception is raised below, with the GIL.
      }
    }
    raise_pending();
    return done;
  }

  void close() {
    if (!sim_) return;
    py::gil_scoped_release nogil;
    try {
      sim_->end_run();
    } catch (const CallbackFailed&) {}
    py::gil_scoped_acquire gil;
    raise_pending();
  }

  void add_callback(py::function fn, std::uint64_t interval) {
    if (interval == 0) throw py::value_error("add_callback: interval must be at least 1 step");
    sim().add_observer(std::make_shared<PythonCallback>(std::move(fn), interval, this));
  }

  py::dict thermo() {
    Simulation& s = sim();
    Thermo t;
    {
      py::gil_scoped_release nogil;
      try {
        t = s.thermo();
      } catch (const CallbackFailed&) {}
    }
    raise_pending();
    return row(t);
  }

  py::dict thermo_history() {
    const auto& rows = sim().history();
    py::dict out;
    if (rows.empty()) return out;
    const auto names = thermo_columns(rows.front(), sim().run_info());
    std::vector<py::array_t<double>> cols;
    for (std::size_t c = 0; c < names.size(); ++c) cols.emplace_back(py::ssize_t(rows.size()));
    for (std::size_t r = 0; r < rows.size(); ++r) {
      const auto values = thermo_columns(rows[r], sim().run_info());
      for (std::size_t c = 0; c < names.size() && c < values.size(); ++c)
        cols[c].mutable_at(py::ssize_t(r)) = values[c].second;
    }
    for (std::size_t c = 0; c < names.size(); ++c) out[py::str(names[c].first)] = cols[c];
    return out;
  }

  // --- particles, in the order of their ids ---
  enum class What { Position, Velocity, Force, Mass, Type, Image, Id };

  py::array get(What w) {
    Simulation& s = sim();
    const int dim = s.run_info().dim;
    HostParticles h(dim);
    unsigned fields = ParticleStore::kId;
    switch (w) {
      case What::Position: fields |= ParticleStore::kPosition; break;
      case What::Velocity: fields |= ParticleStore::kVelocity; break;
      case What::Force: fields |= ParticleStore::kAcceleration | ParticleStore::kMass; break;
      case What::Mass: fields |= ParticleStore::kMass; break;
      case What::Type: fields |= ParticleStore::kType; break;
      case What::Image: fields |= ParticleStore::kImage; break;
      case What::Id: break;
    }
    if (w == What::Force) forces_ready(s);
    s.store().download(h, fields);
    const std::vector<std::size_t> order = by_id(h);
    const std::size_t n = order.size();
    auto vectors = [&](const std::vector<double>* src, const std::vector<double>* scale) {
      py::array_t<double> a({py::ssize_t(n), py::ssize_t(dim)});
      auto m = a.mutable_unchecked<2>();
      for (std::size_t k = 0; k < n; ++k)
        for (int d = 0; d < dim; ++d)
          m(py::ssize_t(k), d) = src[d][order[k]] * (scale ? (*scale)[order[k]] : 1.0);
      return py::array(a);
    };
    switch (w) {
      case What::Position: return vectors(h.x, nullptr);
      case What::Velocity: return vectors(h.v, nullptr);
      case What::Force: return vectors(h.a, &h.mass);
      case What::Mass: {
        py::array_t<double> a(py::ssize_t{static_cast<py::ssize_t>(n)});
        for (std::size_t k = 0; k < n; ++k) a.mutable_at(py::ssize_t(k)) = h.mass[order[k]];
        return py::array(a);
      }
      case What::Type: {
        py::array_t<std::int32_t> a(py::ssize_t{static_cast<py::ssize_t>(n)});
        for (std::size_t k = 0; k < n; ++k) a.mutable_at(py::ssize_t(k)) = h.type[order[k]];
        return py::array(a);
      }
      case What::Image: {
        py::array_t<std::int32_t> a({py::ssize_t(n), py::ssize_t(dim)});
        auto m = a.mutable_unchecked<2>();
        for (std::size_t k = 0; k < n; ++k)
          for (int d = 0; d < dim; ++d)
            m(py::ssize_t(k), d) = h.image[d].empty() ? 0 : h.image[d][order[k]];
        return py::array(a);
      }
      case What::Id: {
        py::array_t<std::int64_t> a(py::ssize_t{static_cast<py::ssize_t>(n)});
        for (std::size_t k = 0; k < n; ++k) a.mutable_at(py::ssize_t(k)) = h.id[order[k]];
        return py::array(a);
      }
    }
    return py::none();
  }

  void set(What w, const py::array& value) {
    Simulation& s = sim();
    const int dim = s.run_info().dim;
    const char* name = w == What::Position   ? "positions"
                       : w == What::Velocity ? "velocities"
                       : w == What::Mass     ? "masses"
                                             : "types";
    const bool moves = w != What::Velocity;  // positions, masses and types change the forces
    if (moves && s.begun() && s.integrator().particle_state())
      throw Error(std::string("cannot set ") + name + " during a run with integrator '" +
                  s.scenario().integrator.type +
                  "': it keeps earlier forces of every particle, which would no longer belong to "
                  "the particles; set them before the first run() or use an integrator without "
                  "history (velocity_verlet, leapfrog, rk4, ...)");
    HostParticles h(dim);
    s.store().download(h, ParticleStore::kAll);
    const std::vector<std::size_t> order = by_id(h);
    const py::ssize_t n = py::ssize_t(order.size());
    const bool vector = w == What::Position || w == What::Velocity;
    auto shape_error = [&](const std::string& got) {
      return py::value_error(std::string(name) + " must have shape " +
                             (vector ? "(" + std::to_string(n) + ", " + std::to_string(dim) + ")"
                                     : "(" + std::to_string(n) + ",)") +
                             " (particles in the order of their ids), not " + got);
    };
    std::string got = "(";
    for (py::ssize_t k = 0; k < value.ndim(); ++k)
      got += (k ? ", " : "") + std::to_string(value.shape(k));
    got += value.ndim() == 1 ? ",)" : ")";
    if (vector) {
      auto a = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(value);
      if (!a || a.ndim() != 2 || a.shape(0) != n || a.shape(1) != dim) throw shape_error(got);
      auto m = a.unchecked<2>();
      for (py::ssize_t k = 0; k < n; ++k)
        for (int d = 0; d < dim; ++d) {
          const double x = m(k, d);
          if (!std::isfinite(x))
            throw py::value_error(std::string(name) + "[" + std::to_string(k) + ", " +
                                  std::to_string(d) + "] is not finite");
          (w == What::Position ? h.x : h.v)[d][order[std::size_t(k)]] = x;
        }
    } else if (w == What::Mass) {
      auto a = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(value);
      if (!a || a.ndim() != 1 || a.shape(0) != n) throw shape_error(got);
      for (py::ssize_t k = 0; k < n; ++k) {
        const double m = a.at(k);
        if (!(m > 0) || !std::isfinite(m))
          throw py::value_error("masses[" + std::to_string(k) + "] = " + std::to_string(m) +
                                ": masses must be finite and > 0");
        h.mass[order[std::size_t(k)]] = m;
      }
    } else {
      auto a = py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>::ensure(value);
      if (!a || a.ndim() != 1 || a.shape(0) != n) throw shape_error(got);
      for (py::ssize_t k = 0; k < n; ++k) {
        const std::int64_t t = a.at(k);
        if (t < 0 || t > 1000000)
          throw py::value_error("types[" + std::to_string(k) + "] = " + std::to_string(t) +
                                ": types are whole numbers from 0");
        h.type[order[std::size_t(k)]] = std::int32_t(t);
      }
    }
    s.store().upload(h);
    s.particles_changed(moves);
  }

  py::dict row(const Thermo& t) {
    py::dict d;
    for (const auto& [name, value] : thermo_columns(t, sim().run_info())) {
      if (name == "step" || name == "force_evaluations" || name == "rejected_steps")
        d[py::str(name)] = py::int_(std::uint64_t(value));
      else d[py::str(name)] = value;
    }
    return d;
  }

  // Called by the observers with the GIL held.
  void callback_failed(py::error_already_set& e) {
    pending_ = std::make_shared<py::error_already_set>(std::move(e));
  }
  py::object self;  // a weak reference to the Python Simulation that wraps this

 private:
  // The store's accelerations are those of the current positions (after a setter they are not).
  void forces_ready(Simulation& s) {
    py::gil_scoped_release nogil;
    try {
      (void)s.thermo();
    } catch (const CallbackFailed&) {}
  }

  // Store indices in the order of the particles' ids.
  static std::vector<std::size_t> by_id(const HostParticles& h) {
    std::vector<std::size_t> order(h.id.size());
    std::iota(order.begin(), order.end(), std::size_t(0));
    std::sort(order.begin(), order.end(),
              [&](std::size_t a, std::size_t b) { return h.id[a] < h.id[b]; });
    return order;
  }

  // Every few hundredths of a second while the steps run: Ctrl-C (and any other signal Python
  // handles) stops the run after the current step, which is then observed and checkpointed.
  bool poll() {
    const auto now = std::chrono::steady_clock::now();
    if (now - last_poll_ < std::chrono::milliseconds(50)) return false;
    last_poll_ = now;
    py::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() != 0) {
      pending_ = std::make_shared<py::error_already_set>();
      return true;
    }
    return false;
  }

  void raise_pending() {
    if (!pending_) return;
    auto e = std::move(pending_);
    pending_.reset();
    e->restore();
    throw py::error_already_set();
  }

  std::shared_ptr<Registry> registry_;
  Scenario scenario_;
  std::unique_ptr<Simulation> sim_;
  std::shared_ptr<py::error_already_set> pending_;
  std::chrono::steady_clock::time_point last_poll_;
};

void PythonCallback::observe(const ObserveContext&) {
  py::gil_scoped_acquire gil;
  try {
    // The Python Simulation, through a weak reference (gone while it is being deleted).
    py::object sim = owner_->self ? owner_->self() : py::none();
    if (sim.is_none()) return;
    fn_(sim);
  } catch (py::error_already_set& e) {
    owner_->callback_failed(e);
    throw CallbackFailed();
  }
}

// pardyn::ScenarioError becomes pardyn.ScenarioError, every other pardyn::Error pardyn.Error.
void raise_error(const std::string& what, const std::vector<ScenarioError::Problem>* problems) {
  py::module_ pkg = py::module_::import("pardyn");
  if (!problems) {
    py::object cls = pkg.attr("Error");
    PyErr_SetObject(cls.ptr(), cls(what).ptr());
    return;
  }
  py::list list;
  for (const auto& p : *problems) list.append(py::make_tuple(p.file, p.line, p.column, p.message));
  py::object cls = pkg.attr("ScenarioError");
  py::object exc = cls(what, list);
  PyErr_SetObject(cls.ptr(), exc.ptr());
}

py::list plugin_list() {
  auto reg = registry();
  py::list out;
  for (const FactoryInfo* f : reg->list()) {
    py::dict d;
    d["name"] = f->name;
    d["kind"] = to_string(f->kind);
    d["summary"] = f->summary;
    d["doc"] = f->doc;
    py::list dims, backends, precisions;
    if (f->dims & kDim2) dims.append(2);
    if (f->dims & kDim3) dims.append(3);
    if (f->backends & kCpu) backends.append("cpu");
    if (f->backends & kCuda) backends.append("cuda");
    if (f->precisions & kFloat) precisions.append("float");
    if (f->precisions & kDouble) precisions.append("double");
    d["dimensions"] = dims;
    d["backends"] = backends;
    d["precisions"] = precisions;
    d["library"] = f->library;
    py::list params;
    for (const ParamSpec& p : f->schema.specs()) {
      py::dict q;
      q["name"] = p.name;
      q["type"] = to_string(p.type);
      q["unit"] = p.unit;
      q["doc"] = p.doc;
      q["required"] = !p.default_value.has_value();
      q["default"] = p.default_value ? py::cast(format_value(*p.default_value)) : py::none();
      q["min"] = p.min ? py::cast(*p.min) : py::none();
      q["max"] = p.max ? py::cast(*p.max) : py::none();
      q["choices"] = p.choices;
      params.append(q);
    }
    d["parameters"] = params;
    out.append(d);
  }
  return out;
}

}  // namespace
}  // namespace pardyn::python

PYBIND11_MODULE(_pardyn, m) {
  using namespace pardyn;
  using namespace pardyn::python;
  m.doc() = "The compiled part of the pardyn package; use `import pardyn` (docs/python.md).";
  m.attr("__version__") = PARDYN_VERSION_STRING;
  m.attr("build_id") = Registry::build_id();
  m.attr("plugin_dir") = Registry::builtin_plugin_dir();

  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const ScenarioError& e) {
      raise_error(e.what(), &e.problems());
    } catch (const Error& e) {
      raise_error(e.what(), nullptr);
    } catch (const CallbackFailed& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    }
  });

  m.def("plugins", &plugin_list,
        "plugins() -> list of dict\n\n"
        "Every plugin pardyn found (the built-in folder and $PARDYN_PLUGIN_PATH): name, kind\n"
        "(potential, scheme, integrator, modifier, generator, observer), summary, doc (what\n"
        "`pardyn plugins show NAME` prints), dimensions, backends, precisions, library, and\n"
        "parameters: a list of dicts with name, type, unit, doc, required, default, min, max,\n"
        "choices.");

  using W = PySimulation::What;
  py::class_<PySimulation>(m, "_Simulation")
      .def(py::init<const std::string&, const std::string&, const std::string&,
                    const std::vector<std::string>&, const std::string&, bool>(),
           py::arg("path"), py::arg("text"), py::arg("dir"), py::arg("overrides"),
           py::arg("output"), py::arg("quiet"))
      .def("_bind", [](PySimulation& s, py::object self) { s.self = self; })
      .def("run", &PySimulation::run, py::arg("steps") = py::none())
      .def("close", &PySimulation::close)
      .def("add_callback", &PySimulation::add_callback, py::arg("fn"), py::arg("interval"))
      .def("thermo", &PySimulation::thermo)
      .def("thermo_history", &PySimulation::thermo_history)
      .def("get",
           [](PySimulation& s, const std::string& what) {
             static const std::pair<const char*, W> names[] = {{"positions", W::Position},
                                                               {"velocities", W::Velocity},
                                                               {"forces", W::Force},
                                                               {"masses", W::Mass},
                                                               {"types", W::Type},
                                                               {"images", W::Image},
                                                               {"ids", W::Id}};
             for (const auto& [n, w] : names)
               if (what == n) return s.get(w);
             throw py::key_error(what);
           })
      .def("set",
           [](PySimulation& s, const std::string& what, const py::array& v) {
             if (what == "positions") return s.set(W::Position, v);
             if (what == "velocities") return s.set(W::Velocity, v);
             if (what == "masses") return s.set(W::Mass, v);
             if (what == "types") return s.set(W::Type, v);
             throw py::key_error(what);
           })
      .def_property_readonly("step", [](PySimulation& s) { return s.sim().step(); })
      .def_property_readonly("time", [](PySimulation& s) { return s.sim().time(); })
      .def_property_readonly("n", [](PySimulation& s) { return s.sim().store().size(); })
      .def_property_readonly("dimension", [](PySimulation& s) { return s.sim().run_info().dim; })
      .def_property_readonly(
          "backend", [](PySimulation& s) { return std::string(to_string(s.sim().backend())); })
      .def_property_readonly(
          "precision",
          [](PySimulation& s) { return std::string(to_string(s.sim().run_info().precision)); })
      .def_property_readonly("dt", [](PySimulation& s) { return s.sim().dt(); })
      .def_property_readonly("steps", [](PySimulation& s) { return s.sim().scenario().steps; })
      .def_property_readonly("output_dir", [](PySimulation& s) { return s.sim().output_dir(); })
      .def_property_readonly("scenario_toml",
                             [](PySimulation& s) { return s.sim().scenario().resolved_toml; })
      .def_property_readonly("box",
                             [](PySimulation& s) {
                               const RunInfo& r = s.sim().run_info();
                               py::list lo, hi, b;
                               for (int d = 0; d < r.dim; ++d) {
                                 lo.append(r.box.lo[d]);
                                 hi.append(r.box.hi[d]);
                                 b.append(to_string(r.box.boundary[d]));
                               }
                               py::dict out;
                               out["lo"] = lo;
                               out["hi"] = hi;
                               out["boundary"] = b;
                               return out;
                             })
      .def_property_readonly("ended", [](PySimulation& s) { return s.sim().ended(); })
      .def_property_readonly("stopped", [](PySimulation& s) { return s.sim().stopped_by() != 0; });
}
