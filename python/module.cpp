// SPDX-License-Identifier: BSD-3-Clause
// pardyn._pardyn: the Python layer over libpardyn (docs/python.md). Everything a run does is the
// library's: scenarios are read and validated by load_scenario, the run is pardyn::Simulation,
// stepped with begin_run / advance / end_run, changed with reconfigure, snapshot and restore,
// resumed with prepare_resume. This file converts: arguments, NumPy arrays (in the order of
// particle ids, copied from and to the backend), exceptions, Python callbacks as observers, and
// Ctrl-C (polled while the steps run without the GIL). The package (pardyn/__init__.py) checks
// the types and shapes of what a user passes before it comes here.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <memory>
#include <mutex>
#include <numeric>
#include <optional>
#include <regex>
#include <string>
#include <variant>
#include <vector>

#include "io/checkpoint.hpp"
#include "pardyn/app/config.hpp"
#include "pardyn/app/registry.hpp"
#include "pardyn/app/simulation.hpp"
#include "pardyn/app/cuda.hpp"
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

// --- Particle arrays, in the order of the particles' ids ---
enum class What { Position, Velocity, Force, Mass, Type, Image, Id, Energy, Virial };

What what_of(const std::string& name) {
  static const std::pair<const char*, What> names[] = {{"positions", What::Position},
                                                       {"velocities", What::Velocity},
                                                       {"forces", What::Force},
                                                       {"masses", What::Mass},
                                                       {"types", What::Type},
                                                       {"images", What::Image},
                                                       {"ids", What::Id},
                                                       {"potential_energies", What::Energy},
                                                       {"virials", What::Virial}};
  for (const auto& [n, w] : names)
    if (name == n) return w;
  throw py::key_error(name);
}

// The store's fields an array needs (the ids always come too).
unsigned fields_of(What w) {
  switch (w) {
    case What::Position: return ParticleStore::kPosition;
    case What::Velocity: return ParticleStore::kVelocity;
    case What::Force: return ParticleStore::kAcceleration | ParticleStore::kMass;
    case What::Mass: return ParticleStore::kMass;
    case What::Type: return ParticleStore::kType;
    case What::Image: return ParticleStore::kImage;
    case What::Id: return 0;
    case What::Energy: return ParticleStore::kEpot;
    case What::Virial: return ParticleStore::kVirial;
  }
  return 0;
}

// Indices of h in the order of the particles' ids.
std::vector<std::size_t> by_id(const HostParticles& h) {
  std::vector<std::size_t> order(h.id.size());
  std::iota(order.begin(), order.end(), std::size_t(0));
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return h.id[a] < h.id[b]; });
  return order;
}

// One array of h's particles (h holds its field), in the order of their ids.
py::array particle_array(const HostParticles& h, What w) {
  const int dim = h.dim;
  const std::vector<std::size_t> order = by_id(h);
  const auto n = py::ssize_t(order.size());
  auto vectors = [&](const std::vector<double>* src, const std::vector<double>* scale) {
    py::array_t<double> a({n, py::ssize_t(dim)});
    auto m = a.mutable_unchecked<2>();
    for (py::ssize_t k = 0; k < n; ++k)
      for (int d = 0; d < dim; ++d) {
        const std::size_t i = order[std::size_t(k)];
        m(k, d) = src[d][i] * (scale ? (*scale)[i] : 1.0);
      }
    return py::array(a);
  };
  auto scalars = [&](auto type_tag, const auto& src) {
    py::array_t<decltype(type_tag)> a(n);
    for (py::ssize_t k = 0; k < n; ++k) a.mutable_at(k) = src[order[std::size_t(k)]];
    return py::array(a);
  };
  switch (w) {
    case What::Position: return vectors(h.x, nullptr);
    case What::Velocity: return vectors(h.v, nullptr);
    case What::Force: return vectors(h.a, &h.mass);
    case What::Mass: return scalars(double{}, h.mass);
    case What::Type: return scalars(std::int32_t{}, h.type);
    case What::Id: return scalars(std::int64_t{}, h.id);
    case What::Energy: return scalars(double{}, h.epot);
    case What::Virial: return scalars(double{}, h.virial);
    case What::Image: {
      py::array_t<std::int32_t> a({n, py::ssize_t(dim)});
      auto m = a.mutable_unchecked<2>();
      for (py::ssize_t k = 0; k < n; ++k)
        for (int d = 0; d < dim; ++d)
          m(k, d) = h.image[d].empty() ? 0 : h.image[d][order[std::size_t(k)]];
      return py::array(a);
    }
  }
  return py::none();
}

py::object to_python(const ParamValue& v) {
  return std::visit(
      [](const auto& x) -> py::object {
        if constexpr (std::is_same_v<std::decay_t<decltype(x)>, ParamTable>) {
          py::dict d;  // a table parameter (the expression law's `parameters`) as a dict
          for (const auto& e : x) d[py::str(e.key)] = to_python(e.value);
          return std::move(d);
        } else {
          return py::cast(x);
        }
      },
      v);
}

// The GPU of this process's CUDA runs, chosen by the first of them (-1: none yet). The CUDA
// backend keeps buffers it shares between runs (its scratch memory) on one device.
int g_device = -1;

// Simulation(..., device=N): GPU N for a CUDA run, checked. Without one, a CUDA run takes the
// process's GPU (cudaSetDevice holds for one thread: a run made in another thread would
// otherwise take GPU 0).
void use_device(int device, const Scenario& sc) {
  if (device < 0) {
    if (g_device >= 0 && sc.backend != "cpu") cuda::select_device(g_device);
    return;
  }
  const std::string asked = "device=" + std::to_string(device);
  if (sc.backend == "cpu")
    throw py::value_error(asked +
                          " chooses a GPU, but the scenario runs on the CPU (simulation.backend = "
                          "\"cpu\"): set simulation.backend = \"cuda\" (or \"auto\"), or leave "
                          "device out");
  if (!cuda::built_with_cuda())
    throw Error(asked +
                ": this pardyn was built without CUDA (no nvcc at build time); leave device out "
                "to run on the CPU");
  const int count = cuda::device_count();
  if (count == 0)
    throw Error(asked +
                ": no CUDA device is visible (driver loaded? CUDA_VISIBLE_DEVICES?); leave "
                "device out to run on the CPU");
  if (device >= count) {
    const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
    throw py::value_error(
        asked + ": this machine shows " + std::to_string(count) + " CUDA device" +
        (count > 1 ? "s, numbered 0 to " + std::to_string(count - 1) : ", number 0") +
        (visible
             ? std::string(" (CUDA_VISIBLE_DEVICES=") + visible + " chooses which, numbered from 0)"
             : std::string()));
  }
  if (g_device >= 0 && device != g_device)
    throw Error(asked + ": this Python process runs on GPU " + std::to_string(g_device) +
                " already (its first CUDA Simulation's); pardyn's CUDA backend keeps its "
                "buffers on one GPU per process, so run this one in another process "
                "(multiprocessing, or CUDA_VISIBLE_DEVICES=" +
                std::to_string(device) + " python3 ...)");
  cuda::select_device(device);
}

// Runs f; a pardyn::Error that names a place in the scenario ("[[particles]] #1 (lattice)
// (file:12:1): ...", what a plugin's factory refuses) becomes a ScenarioError at that place.
template <class F>
void at_scenario_places(F&& f) {
  try {
    f();
  } catch (const ScenarioError&) {
    throw;
  } catch (const Error& e) {
    static const std::regex place(R"(([^\s():]+):(\d+):(\d+))");
    const std::string what = e.what();
    std::smatch m;
    if (!std::regex_search(what, m, place)) throw;
    throw ScenarioError(what, {{m[1].str(), std::stoi(m[2].str()), std::stoi(m[3].str()), what}});
  }
}

class PySimulation {
 public:
  // What a Simulation starts from: a scenario file (text empty), or scenario text (a dict turned
  // into TOML by the package) read as if it lay in `dir`; or, with `resume`, a checkpoint (and
  // optionally a scenario file to continue with).
  struct Start {
    std::string path, text, dir;
    std::vector<std::string> overrides;
    std::string output;
    bool quiet = true;
    int device = -1;  // -1: the backend's choice
    std::string resume;
    bool resume_changed = false;
  };

  // The run's description, live or as it was when the Simulation was closed.
  struct Info {
    std::uint64_t step = 0, steps = 0;
    double time = 0, dt = 0;
    std::size_t n = 0;
    RunInfo run;
    std::string output_dir;
    bool ended = false, stopped = false;
  };

  explicit PySimulation(const Start& st) : registry_(registry()) {
    RunOptions opt;
    opt.quiet = st.quiet;
    opt.output = st.output;
    opt.serial = true;  // one process: the module does not run over MPI
    std::vector<std::string> notes;
    at_scenario_places([&] {
      Scenario sc;
      if (st.resume.empty()) {
        const ScenarioSource source{st.text, st.dir};
        sc = load_scenario(st.path, st.overrides, *registry_, st.text.empty() ? nullptr : &source);
      } else {
        Resume r = prepare_resume(st.resume, st.path, st.overrides, *registry_, st.resume_changed);
        sc = std::move(r.scenario);
        opt.resume = r.data;
        opt.resume_file = r.file;
        opt.resume_changed = st.resume_changed;
        if (opt.output.empty()) opt.output = r.output_dir;
        notes = r.notes;
      }
      use_device(st.device, sc);
      sim_ = std::make_unique<Simulation>(sc, *registry_, opt);
    });
    if (sim_->backend() == Backend::Cuda) g_device = device_ = cuda::device_info().id;
    for (const auto& note : notes) sim_->say("note: " + note);
    sim_->keep_history(true);
    sim_->set_poll([this] { return poll(); });
    // A resumed run is at its checkpoint's step from the start (nothing is observed there
    // again: the files hold it).
    if (!st.resume.empty()) sim_->begin_run();
  }

  ~PySimulation() {
    // Outputs are flushed and closed as at the end of a run when the object goes.
    if (sim_ && !sim_->ended()) {
      try {
        if (device_ >= 0) cuda::select_device(device_);
        sim_->end_run();
      } catch (...) {}
    }
    sim_.reset();
  }

  // The live run (a closed Simulation has none), with its GPU current in this thread.
  Simulation& sim() {
    if (!sim_)
      throw Error(
          "this Simulation is closed (close(), or the end of its with block): make a new one, "
          "or continue from its last checkpoint with pardyn.Simulation.resume(folder)");
    if (device_ >= 0) cuda::select_device(device_);
    return *sim_;
  }
  int device() const { return device_; }
  bool closed() const { return !sim_; }

  Info info() {
    if (!sim_) return final_->info;
    const Simulation& s = *sim_;
    Info i;
    i.step = s.step();
    i.steps = s.scenario().steps;
    i.time = s.time();
    i.dt = s.dt();
    i.n = sim_->store().size();
    i.run = s.run_info();
    i.output_dir = s.output_dir();
    i.ended = s.ended();
    i.stopped = s.stopped_by() != 0;
    return i;
  }
  const Scenario& scenario() const { return sim_ ? sim_->scenario() : final_->scenario; }

  // Steps `steps` more steps (to_end: up to the scenario's end, as `pardyn run` does).
  std::uint64_t run(std::optional<std::uint64_t> steps) {
    Simulation& s = sim();
    if (s.ended()) throw Error("the run ended with an error; make a new Simulation");
    if (steps && *steps > std::uint64_t(kMaxSteps) - s.step())
      throw py::value_error("run(" + std::to_string(*steps) + ") from step " +
                            std::to_string(s.step()) + " would pass the largest step, " +
                            std::to_string(kMaxSteps));
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

  // Ends the run and frees it (the particles, on the GPU too, the plugins, the outputs and the
  // output folder's lock); what a closed Simulation shows is kept on the host.
  void close() {
    if (!sim_) return;
    Simulation& s = sim();
    std::exception_ptr error;
    std::optional<Thermo> last;
    {
      py::gil_scoped_release nogil;
      try {
        // The final state's forces and energies, for reading after close.
        if (s.begun() && !s.ended()) last = s.thermo();
        s.end_run();
      } catch (const CallbackFailed&) {
      } catch (...) {
        error = std::current_exception();
      }
    }
    auto f = std::make_unique<Final>();
    f->info = info();
    f->scenario = s.scenario();
    f->history = s.history();
    // The final observation (with the analyses' columns) when end_run made one at this step.
    if (last && !f->history.empty() && f->history.back().step == s.step()) last = f->history.back();
    f->thermo = last;
    f->particles = HostParticles(f->info.run.dim);
    s.store().download(f->particles, ParticleStore::kAll);
    final_ = std::move(f);
    {
      py::gil_scoped_release nogil;
      sim_.reset();
    }
    registry_.reset();  // the plugins' libraries, once no other Simulation needs them
    raise_pending();
    if (error) std::rethrow_exception(error);
  }

  void add_callback(py::function fn, std::uint64_t interval) {
    if (interval == 0) throw py::value_error("add_callback: interval must be at least 1 step");
    sim().add_observer(std::make_shared<PythonCallback>(std::move(fn), interval, this));
  }

  py::dict thermo() {
    if (!sim_) {
      if (!final_->thermo)
        throw Error("this Simulation was closed before anything was computed (it never ran)");
      return row(*final_->thermo);
    }
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
    const auto& rows = sim_ ? sim_->history() : final_->history;
    py::dict out;
    if (rows.empty()) return out;
    const RunInfo run = info().run;
    const auto names = thermo_columns(rows.front(), run);
    std::vector<py::array_t<double>> cols;
    for (std::size_t c = 0; c < names.size(); ++c) cols.emplace_back(py::ssize_t(rows.size()));
    for (std::size_t r = 0; r < rows.size(); ++r) {
      const auto values = thermo_columns(rows[r], run);
      for (std::size_t c = 0; c < names.size() && c < values.size(); ++c)
        cols[c].mutable_at(py::ssize_t(r)) = values[c].second;
    }
    for (std::size_t c = 0; c < names.size(); ++c) out[py::str(names[c].first)] = cols[c];
    return out;
  }

  py::array get(What w) {
    const bool computed = w == What::Force || w == What::Energy || w == What::Virial;
    if (!sim_) {
      if (computed && !final_->thermo)
        throw Error(
            "this Simulation was closed before its forces were computed (it never ran, "
            "or its run ended with an error)");
      return particle_array(final_->particles, w);
    }
    Simulation& s = sim();
    if (computed) {
      // The forces and energies of the current state (after a setter they are not yet).
      py::gil_scoped_release nogil;
      try {
        (void)s.thermo();
      } catch (const CallbackFailed&) {}
    }
    raise_pending();
    HostParticles h(s.run_info().dim);
    s.store().download(h, ParticleStore::kId | fields_of(w));
    return particle_array(h, w);
  }

  // Long: one check per kind of array, each naming the element that is wrong.
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
                                ": types are whole numbers from 0 to 1000000");
        h.type[order[std::size_t(k)]] = std::int32_t(t);
      }
    }
    s.store().upload(h);
    s.particles_changed(moves);
  }

  // --- Parameters, changed during the run (Simulation.configure) ---
  // `overrides` ("potential.0.epsilon=1.2") applied to the run's resolved scenario and validated
  // as a scenario is (load_scenario); then the run takes the new values (Simulation::reconfigure).
  // Every refusal is a ScenarioError (a ValueError in Python) named after the overrides.
  void configure(const std::vector<std::string>& overrides) {
    Simulation& s = sim();
    const Scenario& now = s.scenario();
    const ScenarioSource text{now.resolved_toml, now.dir};
    try {
      const Scenario next = load_scenario(now.path, overrides, *registry_, &text);
      s.reconfigure(next, *registry_);
    } catch (const ScenarioError&) {
      throw;
    } catch (const Error& e) {
      std::string given = "--set";
      for (const auto& o : overrides) given += " " + o;
      throw ScenarioError(e.what(), {{given, 0, 0, e.what()}});
    }
  }

  // The parameters of the run's [[potential]] `index`, [[modifier]] `index` or [integrator].
  py::dict params(const std::string& section, std::size_t index) {
    const Scenario& sc = scenario();
    const PluginSpec* p = nullptr;
    if (section == "integrator") p = &sc.integrator;
    else if (section == "potential" && index < sc.potentials.size()) p = &sc.potentials[index];
    else if (section == "modifier" && index < sc.modifiers.size()) p = &sc.modifiers[index];
    if (!p) throw py::index_error(section + " " + std::to_string(index));
    py::dict d;
    for (const auto& [key, value] : p->params.values()) d[py::str(key)] = to_python(value);
    return d;
  }
  // The types of the run's potentials, modifiers and integrator.
  py::dict sections() {
    const Scenario& sc = scenario();
    py::list pots, mods;
    for (const auto& p : sc.potentials) pots.append(p.type);
    for (const auto& m : sc.modifiers) mods.append(m.type);
    py::dict d;
    d["potential"] = pots;
    d["modifier"] = mods;
    d["integrator"] = sc.integrator.type;
    return d;
  }

  // --- The whole state in memory ---
  std::shared_ptr<const checkpoint::Data> snapshot() {
    Simulation& s = sim();
    std::shared_ptr<const checkpoint::Data> d;
    {
      py::gil_scoped_release nogil;
      try {
        d = s.snapshot();
      } catch (const CallbackFailed&) {}
    }
    raise_pending();
    return d;
  }
  void restore(const checkpoint::Data& d) {
    Simulation& s = sim();
    {
      py::gil_scoped_release nogil;
      try {
        s.restore(d, *registry_);
      } catch (const CallbackFailed&) {}
    }
    raise_pending();
  }

  py::dict row(const Thermo& t) {
    py::dict d;
    for (const auto& [name, value] : thermo_columns(t, info().run)) {
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
  // What a closed Simulation still shows.
  struct Final {
    Info info;
    Scenario scenario;
    std::vector<Thermo> history;
    std::optional<Thermo> thermo;  // the final state's (none: nothing was computed)
    HostParticles particles;
  };

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
  std::unique_ptr<Simulation> sim_;
  std::unique_ptr<Final> final_;
  int device_ = -1;  // the GPU of a CUDA run
  std::shared_ptr<py::error_already_set> pending_;
  std::chrono::steady_clock::time_point last_poll_;
};

// Simulation.snapshot(): the state, and its particles as arrays.
struct PySnapshot {
  std::shared_ptr<const checkpoint::Data> data;
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

  m.attr("max_steps") = py::int_(kMaxSteps);

  py::class_<PySnapshot>(m, "_Snapshot")
      .def_property_readonly("step", [](const PySnapshot& s) { return s.data->step; })
      .def_property_readonly("time", [](const PySnapshot& s) { return s.data->time; })
      .def_property_readonly("n", [](const PySnapshot& s) { return s.data->particles.size(); })
      .def_property_readonly("dimension", [](const PySnapshot& s) { return s.data->dim; })
      .def("get", [](const PySnapshot& s, const std::string& what) {
        const What w = what_of(what);
        if (w == What::Energy || w == What::Virial) throw py::key_error(what);
        return particle_array(s.data->particles, w);
      });

  using Start = PySimulation::Start;
  py::class_<PySimulation>(m, "_Simulation")
      .def(py::init([](const std::string& path, const std::string& text, const std::string& dir,
                       const std::vector<std::string>& overrides, const std::string& output,
                       bool quiet, int device, const std::string& resume, bool resume_changed) {
             return std::make_unique<PySimulation>(
                 Start{path, text, dir, overrides, output, quiet, device, resume, resume_changed});
           }),
           py::arg("path"), py::arg("text"), py::arg("dir"), py::arg("overrides"),
           py::arg("output"), py::arg("quiet"), py::arg("device"), py::arg("resume"),
           py::arg("resume_changed"))
      .def("_bind", [](PySimulation& s, py::object self) { s.self = self; })
      .def("run", &PySimulation::run, py::arg("steps") = py::none())
      .def("close", &PySimulation::close)
      .def("add_callback", &PySimulation::add_callback, py::arg("fn"), py::arg("interval"))
      .def("thermo", &PySimulation::thermo)
      .def("thermo_history", &PySimulation::thermo_history)
      .def("get", [](PySimulation& s, const std::string& what) { return s.get(what_of(what)); })
      .def("set",
           [](PySimulation& s, const std::string& what, const py::array& v) {
             const What w = what_of(what);
             if (w != What::Position && w != What::Velocity && w != What::Mass && w != What::Type)
               throw py::key_error(what);
             s.set(w, v);
           })
      .def("configure", &PySimulation::configure, py::arg("overrides"))
      .def("params", &PySimulation::params, py::arg("section"), py::arg("index"))
      .def("sections", &PySimulation::sections)
      .def("snapshot", [](PySimulation& s) { return PySnapshot{s.snapshot()}; })
      .def("restore", [](PySimulation& s, const PySnapshot& snap) { s.restore(*snap.data); })
      .def_property_readonly("step", [](PySimulation& s) { return s.info().step; })
      .def_property_readonly("time", [](PySimulation& s) { return s.info().time; })
      .def_property_readonly("n", [](PySimulation& s) { return s.info().n; })
      .def_property_readonly("dimension", [](PySimulation& s) { return s.info().run.dim; })
      .def_property_readonly(
          "backend", [](PySimulation& s) { return std::string(to_string(s.info().run.backend)); })
      .def_property_readonly(
          "precision",
          [](PySimulation& s) { return std::string(to_string(s.info().run.precision)); })
      .def_property_readonly("device",
                             [](PySimulation& s) -> py::object {
                               if (s.device() < 0) return py::none();
                               return py::int_(s.device());
                             })
      .def_property_readonly("dt", [](PySimulation& s) { return s.info().dt; })
      .def_property_readonly("steps", [](PySimulation& s) { return s.info().steps; })
      .def_property_readonly("output_dir", [](PySimulation& s) { return s.info().output_dir; })
      .def_property_readonly("scenario_toml",
                             [](PySimulation& s) { return s.scenario().resolved_toml; })
      .def_property_readonly("box",
                             [](PySimulation& s) {
                               const RunInfo r = s.info().run;
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
      .def_property_readonly("ended", [](PySimulation& s) { return s.info().ended; })
      .def_property_readonly("closed", &PySimulation::closed)
      .def_property_readonly("stopped", [](PySimulation& s) { return s.info().stopped; });
}
