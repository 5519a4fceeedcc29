#include "pardyn/simulation.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <limits>
#include <random>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <csignal>
#include <cstring>

#include "checkpoint.hpp"
#include "pardyn/cuda.hpp"
#include "pardyn/math.hpp"
#include "pardyn/memory.hpp"
#include "pardyn/output.hpp"
#include "parallel/communicator.hpp"
#include "parallel/domain.hpp"
#include "parallel/ring.hpp"
#include "parallel/store_ops.hpp"

namespace fs = std::filesystem;

namespace pardyn {

namespace {

// Adds thermal velocities at temperature T (k_B = 1) to particles [b, e): each component Gaussian
// (Maxwell-Boltzmann) or, with `uniform`, uniform in [-1, 1) times sqrt(3 T / m) (the same variance);
// the thermal part has zero net momentum and is rescaled to exactly T with dim*(n-1) degrees of
// freedom.
void add_thermal_velocities(HostParticles& hp, std::size_t b, std::size_t e, double T,
                            std::mt19937_64& rng, bool uniform) {
  const std::size_t n = e - b;
  if (T <= 0 || n < 2) return;
  const int dim = hp.dim;
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_real_distribution<double> flat(-1.0, 1.0);
  auto gauss = [&](std::mt19937_64& r) { return uniform ? std::sqrt(3.0) * flat(r) : normal(r); };
  std::vector<double> u[3];
  double p[3] = {0, 0, 0}, mtot = 0;
  for (int d = 0; d < dim; ++d) u[d].resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double m = hp.mass[b + i];
    mtot += m;
    for (int d = 0; d < dim; ++d) {
      u[d][i] = gauss(rng) * std::sqrt(T / m);
      p[d] += m * u[d][i];
    }
  }
  double k = 0;
  for (std::size_t i = 0; i < n; ++i)
    for (int d = 0; d < dim; ++d) {
      u[d][i] -= p[d] / mtot;
      k += 0.5 * hp.mass[b + i] * u[d][i] * u[d][i];
    }
  const double target = 0.5 * dim * double(n - 1) * T;
  const double s = k > 0 ? std::sqrt(target / k) : 0.0;
  for (std::size_t i = 0; i < n; ++i)
    for (int d = 0; d < dim; ++d) hp.v[d][b + i] += s * u[d][i];
}

void check_generated(const HostParticles& hp, const ParticleBlock& pb, int dim) {
  const std::size_t n = hp.size();
  const std::string who = "generator \"" + pb.type + "\" (" + pb.where + ")";
  if (n == 0) throw Error(who + " produced no particles; check its count");
  for (int d = 0; d < dim; ++d)
    if (hp.x[d].size() != n || (hp.v[d].size() != n && !hp.v[d].empty()))
      throw Error("internal: " + who + " returned arrays of mismatched length");
  for (std::size_t i = 0; i < n; ++i) {
    if (!(hp.mass[i] > 0) || !std::isfinite(hp.mass[i]))
      throw Error(who + ": particle " + std::to_string(i) + " has mass " +
                  format_number(hp.mass[i]) + "; masses must be positive and finite");
    for (int d = 0; d < dim; ++d)
      if (!std::isfinite(hp.x[d][i]))
        throw Error(who + ": particle " + std::to_string(i) + " has a non-finite position");
  }
}

// After the block's offset and bulk velocity are added: every position, velocity and mass is finite
// and, in a float run, within the range of a float (1e308 becomes inf in the store).
void check_representable(const HostParticles& hp, const ParticleBlock& pb, int dim,
                         Precision precision) {
  const double limit = precision == Precision::Float ? double(std::numeric_limits<float>::max())
                                                     : std::numeric_limits<double>::max();
  const std::string who = "[[particles]] generator \"" + pb.type + "\" (" + pb.where + ")";
  auto check = [&](const std::vector<double>& v, const char* what, std::size_t i) {
    if (i < v.size() && !(std::fabs(v[i]) <= limit))
      throw Error(who + ": particle " + std::to_string(i) + " has " + what + " " +
                  format_number(v[i]) +
                  (std::isfinite(v[i]) ? ", beyond the range of precision " +
                                             std::string(to_string(precision)) + " (" +
                                             format_number(limit) + ")"
                                       : "") +
                  "; check the block's offset, velocity, temperature and the generator's sizes" +
                  (precision == Precision::Float && std::isfinite(v[i])
                       ? " (or set [simulation] precision = \"double\")"
                       : ""));
  };
  for (std::size_t i = 0; i < hp.size(); ++i) {
    for (int d = 0; d < dim; ++d) {
      check(hp.x[d], "position coordinate", i);
      check(hp.v[d], "velocity component", i);
    }
    check(hp.mass, "mass", i);
  }
}

// The particles the blocks say they make (their `count`); a block without one (a lattice filling its
// region, a file) adds nothing here and checks its own size when it runs.
double counted_particles(const Scenario& sc) {
  double n = 0;
  for (const auto& b : sc.particles)
    if (b.params.has("count")) n += double(std::max<std::int64_t>(0, b.params.integer("count")));
  return n;
}

// What n particles need at least, checked before they are made (`generated`: the host copies a
// generator makes, a block's and all blocks' together while they are appended) and again before the
// store takes them: the particle store and its second copy, which holds the accelerations while
// energies are computed, on this rank's backend. Neighbour schemes and integrators need more; the
// check refuses what cannot fit, it does not promise that the rest fits.
void check_particle_memory(double n, bool generated, const ParticleStore& store, int ranks,
                           const std::string& what) {
  if (n > double(kMaxParticles))
    throw Error(what + " are " + format_number(n) + " particles; a run holds at most " +
                format_number(double(kMaxParticles)) + ": lower the [[particles]] counts");
  const double per_rank = n / std::max(1, ranks);
  const double stored = 2.0 * double(store.bytes_per_particle());
  const double host_made = generated ? 2.0 * (16.0 * store.dim() + 20.0) : 0.0;
  const bool device = store.backend() == Backend::Cuda;
  const double host = host_made * n + (device ? 0.0 : stored * per_rank);
  const std::string count = what + " (" + format_number(n) + " particles" +
                            (ranks > 1 ? ", " + format_number(per_rank) + " per rank" : "") + ")";
  std::string parts;
  if (host_made > 0) parts = format_number(host_made) + " bytes per particle to generate them";
  if (!device)
    parts += (parts.empty() ? "" : ", ") + format_number(stored) +
             " bytes per particle for the particle store and its copy for the energies";
  require_host_memory(host, count + " need",
                      "lower the [[particles]] counts (" + parts +
                          "; neighbour schemes and integrators need more)");
  if (!device) return;
  const double need = stored * per_rank;
  const cuda::DeviceInfo d = cuda::device_info();
  if (need > double(d.free_memory))
    throw Error(count + " need at least " + bytes_text(need) + " of GPU memory (" +
                format_number(stored) +
                " bytes per particle for the particle store and its copy for the energies; "
                "neighbour schemes and integrators need more); " + bytes_text(double(d.free_memory)) +
                " is free on GPU " + std::to_string(d.id) + " (" + d.name +
                "): lower the [[particles]] counts, run on several GPUs (mpirun), or set "
                "[simulation] backend = \"cpu\"");
}

// A finite cut-off longer than half a periodic side: the minimum image counts every pair once, at
// its nearest image, so the law would be cut at half the side along that axis instead of at its
// cut-off (and particles would miss neighbours they should see twice).
void check_cutoff_in_box(const Potential& pot, const std::string& label, const Box& box, int dim) {
  if (pot.external()) return;
  const double cut = pot.cutoff();
  if (!std::isfinite(cut)) return;
  for (int d = 0; d < dim; ++d) {
    if (box.boundary[d] != Boundary::Periodic || !(cut > 0.5 * box.length(d))) continue;
    throw Error(label + ": its cut-off " + format_number(cut) + " is more than half the periodic box "
                "side along " + "xyz"[d] + " (" + format_number(box.length(d)) +
                "): the minimum-image convention sees each pair once, at its nearest image, so the "
                "law would end at " + format_number(0.5 * box.length(d)) + " along that axis and "
                "forces and energies would be wrong; make the box at least " +
                format_number(2 * cut) + " wide along " + "xyz"[d] + " (twice the cut-off) or lower "
                "the cut-off");
  }
}

// [[output]] type = "checkpoint": a marker the scheduler recognises and takes out of the observers;
// it writes the checkpoints itself (it alone sees the integrator's and modifiers' states).
class CheckpointOutput final : public Observer {
public:
  CheckpointOutput(std::uint64_t interval, double seconds, std::size_t keep)
      : interval_(interval), seconds_(seconds), keep_(keep) {}
  std::uint64_t interval() const override { return interval_ ? interval_ : ~std::uint64_t(0); }
  void observe(const ObserveContext&) override {}
  std::vector<std::string> files() const override { return {"checkpoints/"}; }
  std::uint64_t steps() const { return interval_; }
  double seconds() const { return seconds_; }
  std::size_t keep() const { return keep_; }

private:
  std::uint64_t interval_;
  double seconds_;
  std::size_t keep_;
};

const char* const kCheckpointDoc = R"(Writes the whole state of the run to
<output>/checkpoints/checkpoint-<step>.h5 every `interval` steps and/or every `every_seconds` of
wall-clock time, and once more when the run ends or is interrupted (SIGINT, SIGTERM: the run exits
130 or 143 after writing it). A non-finite state is never written: a run that stops on NaN names
its newest checkpoint, the last finite state saved.
`pardyn run --resume <output folder>` continues from the newest intact one, bit for bit: the same
thermo rows and the same positions as a run that never stopped (same build, backend, precision,
thread and rank count). The file is HDF5 in the H5MD layout (particles/all/position/value, ...)
with pardyn's own group /pardyn (step, time, integrator and modifier states, the scenario), after
a 512-byte header with a CRC-32 of the rest; it is written to a temporary name and renamed, so a
run killed at any moment leaves the previous checkpoint intact. Format, h5py example and what may
change on resume: docs/checkpoints.md.
Example:
  [[output]]
  type = "checkpoint"
  interval = 10000
  every_seconds = 1800
  keep = 2)";

// Per-rank particles as bytes, for the gather of a parallel run's checkpoint.
template <class T>
void put_array(std::vector<char>& b, const std::vector<T>& v) {
  const std::uint64_t n = v.size();
  const char* p = reinterpret_cast<const char*>(&n);
  b.insert(b.end(), p, p + sizeof n);
  p = reinterpret_cast<const char*>(v.data());
  b.insert(b.end(), p, p + n * sizeof(T));
}
template <class T>
void get_array(const std::vector<char>& b, std::size_t& at, std::vector<T>& v) {
  std::uint64_t n = 0;
  if (at + sizeof n > b.size()) throw Error("internal: a malformed checkpoint block from a rank");
  std::memcpy(&n, b.data() + at, sizeof n);
  at += sizeof n;
  if (at + n * sizeof(T) > b.size()) throw Error("internal: a malformed checkpoint block from a rank");
  v.resize(n);
  std::memcpy(v.data(), b.data() + at, n * sizeof(T));
  at += n * sizeof(T);
}
std::vector<char> pack(const HostParticles& p) {
  std::vector<char> b;
  for (int d = 0; d < p.dim; ++d) {
    put_array(b, p.x[d]);
    put_array(b, p.v[d]);
    put_array(b, p.a[d]);
    put_array(b, p.image[d]);
  }
  put_array(b, p.mass);
  put_array(b, p.type);
  put_array(b, p.id);
  const std::uint64_t labels = p.labels.size();
  put_array(b, std::vector<std::uint64_t>{labels});
  for (const auto& [name, values] : p.labels) {
    put_array(b, std::vector<char>(name.begin(), name.end()));
    put_array(b, values);
  }
  return b;
}
void unpack_append(const std::vector<char>& b, HostParticles& all) {
  HostParticles p(all.dim);
  std::size_t at = 0;
  for (int d = 0; d < p.dim; ++d) {
    get_array(b, at, p.x[d]);
    get_array(b, at, p.v[d]);
    get_array(b, at, p.a[d]);
    get_array(b, at, p.image[d]);
  }
  get_array(b, at, p.mass);
  get_array(b, at, p.type);
  get_array(b, at, p.id);
  std::vector<std::uint64_t> labels;
  get_array(b, at, labels);
  for (std::uint64_t k = 0; k < (labels.empty() ? 0 : labels[0]); ++k) {
    std::vector<char> name;
    std::vector<std::int32_t> values;
    get_array(b, at, name);
    get_array(b, at, values);
    p.labels.emplace_back(std::string(name.begin(), name.end()), std::move(values));
  }
  const std::size_t n0 = all.size();
  all.append(p);
  // append() leaves labels alone: a label every rank has is joined; others are dropped.
  if (n0 == 0) {
    all.labels = p.labels;
  } else {
    std::vector<std::pair<std::string, std::vector<std::int32_t>>> joined;
    for (auto& [name, values] : all.labels)
      for (const auto& [pname, pvalues] : p.labels)
        if (pname == name) {
          values.insert(values.end(), pvalues.begin(), pvalues.end());
          joined.emplace_back(name, std::move(values));
          break;
        }
    all.labels = std::move(joined);
  }
}

}  // namespace

void register_builtin_outputs(Registrar& r) {
  FactoryInfo f;
  f.kind = PluginKind::Observer;
  f.name = "checkpoint";
  f.summary = "the whole state of the run in an HDF5 file, to resume it exactly (pardyn run --resume)";
  f.doc = kCheckpointDoc;
  f.backends = kCpu | kCuda;
  f.schema
      .integer("interval", 0,
               "write a checkpoint every this many steps (0: none by step count; the final one is "
               "written anyway)",
               0.0, double(kMaxSteps))
      .real("every_seconds", 0.0, "s (wall clock)",
            "write a checkpoint when this much wall-clock time has passed since the last one (0: "
            "none by time)",
            0.0)
      .integer("keep", 2, "how many checkpoints to keep; older ones are deleted", 1.0, 1000000.0);
  r.add(std::move(f), Factory<Observer>([](const ParamSet& p, const RunInfo&) {
          return std::unique_ptr<Observer>(new CheckpointOutput(
              std::uint64_t(p.integer("interval")), p.real("every_seconds"),
              std::size_t(p.integer("keep"))));
        }));
}

void check_output_files(const std::vector<OutputFiles>& outputs) {
  struct Claim {
    std::string name;  // lexically normal, relative
    std::vector<std::string> parts;
    bool folder;
    const OutputFiles* by;
  };
  std::vector<Claim> claims;
  auto who = [](const OutputFiles& o) { return o.where; };
  for (const auto& o : outputs) {
    for (const auto& given : o.files) {
      const bool folder = !given.empty() && given.back() == '/';
      const fs::path p(given);
      if (given.empty() || given == "/")
        throw Error(who(o) + " names an empty file; give it a file name");
      if (p.is_absolute())
        throw Error(who(o) + " writes " + given +
                    ", an absolute path; every output is written inside the run's output folder: "
                    "give a name relative to it (e.g. " + p.filename().string() + ")");
      const fs::path n = p.lexically_normal();
      Claim c{n.string(), {}, folder, &o};
      for (const auto& part : n)
        if (!part.empty()) c.parts.push_back(part.string());
      if (!c.parts.empty() && c.parts.back() == ".") c.parts.pop_back();
      if (c.parts.empty() || c.parts.front() == "..")
        throw Error(who(o) + " writes " + given +
                    ", which is outside the run's output folder; give a name inside it (e.g. " +
                    p.filename().string() + ", or use -o to choose the folder)");
      if (c.name.size() > 1 && c.name.back() == '/') c.name.pop_back();
      claims.push_back(std::move(c));
    }
  }
  for (std::size_t i = 0; i < claims.size(); ++i)
    for (std::size_t j = 0; j < i; ++j) {
      const Claim& a = claims[j];
      const Claim& b = claims[i];
      const std::size_t k = std::min(a.parts.size(), b.parts.size());
      if (!std::equal(a.parts.begin(), a.parts.begin() + long(k), b.parts.begin())) continue;
      auto shown = [](const Claim& c) { return c.name + (c.folder ? "/" : ""); };
      const std::string what =
          a.parts.size() == b.parts.size()
              ? shown(b) + ", which " + who(*a.by) + " writes too"
              : shown(b) + ", and " + who(*a.by) + " writes " + shown(a) +
                    " (the one would lie inside the other)";
      throw Error(who(*b.by) + " writes " + what +
                  "; every output needs names of its own in the output folder: give one of them "
                  "another file = \"...\", or remove one of the two" +
                  (a.by->type == b.by->type && a.by->type != "thermo" && a.by->type != "pardyn"
                       ? " (one " + a.by->type + " output per run: its names are fixed)"
                       : ""));
    }
}

// "[[output]] #2 (thermo, scenario.toml:40:1)" for messages.
static std::string output_label(std::size_t k, const PluginSpec& o) {
  return "[[output]] #" + std::to_string(k + 1) + " (" + o.type +
         (o.where.empty() ? std::string() : ", " + o.where) + ")";
}

static std::vector<OutputFiles> framework_files() {
  return {{"pardyn (the resolved configuration)", "pardyn", {"config.toml"}},
          {"pardyn (the run's log)", "pardyn", {"log.txt"}},
          {"pardyn (the folder's lock)", "pardyn", {".pardyn.lock"}},
          {"pardyn (the list of the run's files)", "pardyn", {".pardyn.files"}}};
}

Simulation::Simulation(const Scenario& sc, const Registry& registry, const RunOptions& opt)
    : scenario_(sc), quiet_(opt.quiet) {
  resume_ = opt.resume;
  resume_file_ = opt.resume_file;
  resume_changed_ = opt.resume_changed;
  comm_ = opt.serial ? nullptr : parallel::world();
  if (comm_) {
    run_.rank = comm_->rank();
    run_.ranks = comm_->size();
    run_.comm = comm_;
    // Ranks on one node share its cores unless [simulation] threads says otherwise.
    if (sc.threads == 0 && !std::getenv("OMP_NUM_THREADS"))
      omp_set_num_threads(std::max(1, omp_get_num_procs() / std::max(1, comm_->local_size())));
    if (!sc.rank_weights.empty() && int(sc.rank_weights.size()) != comm_->size())
      throw Error("[simulation] rank_weights has " + std::to_string(sc.rank_weights.size()) +
                  " values but the run has " + std::to_string(comm_->size()) +
                  " ranks; give one weight per rank (or none)");
  }
  if (sc.threads > 0) omp_set_num_threads(sc.threads);
  std::string note;
  // One GPU per rank on each node: the node's ranks take its devices in turn.
  if (comm_ && sc.backend != "cpu" && cuda::device_count() > 0)
    cuda::select_device(comm_->local_rank() % cuda::device_count());
  parallel::agree(comm_, [&] { backend_ = make_backend(sc.backend, note); });

  if (resume_ && !resume_changed_) {
    // The same arithmetic as the run that wrote the checkpoint: backend and CPU thread count.
    if (resume_->backend != to_string(backend_.backend))
      throw Error("checkpoint " + resume_file_ + " was written on the " + resume_->backend +
                  " backend; this run got " + to_string(backend_.backend) +
                  ": set [simulation] backend = \"" + resume_->backend +
                  "\" (or give --resume-changed to continue on this one, not bit for bit)");
    if (backend_.backend == Backend::Cpu && resume_->threads != omp_get_max_threads())
      throw Error("checkpoint " + resume_file_ + " was written by " +
                  std::to_string(resume_->threads) + " CPU threads; this run has " +
                  std::to_string(omp_get_max_threads()) + ", which sums forces in another order: "
                  "set [simulation] threads = " + std::to_string(resume_->threads) +
                  " (or OMP_NUM_THREADS), or give --resume-changed");
  }
  run_.dim = sc.dim;
  run_.precision = sc.precision;
  run_.backend = backend_.backend;
  run_.box = sc.box;
  run_.seed = sc.seed;
  run_.output_dir = fs::absolute(opt.output.empty() ? sc.output : opt.output).lexically_normal().string();
  run_.scenario_dir = sc.dir;
  run_.quiet = opt.quiet;
  run_.end_time = sc.end_time;
  if (resume_) {
    run_.resume = true;
    run_.resume_step = resume_->step;
    run_.resume_time = resume_->time;
    first_step_ = resume_->step;
  }
  progress_ = std::make_unique<Progress>(sc.steps, opt.quiet || run_.rank != 0);
  if (!note.empty()) progress_->message(note);

  // Every object is made (and so every parameter problem a factory finds is reported) before any
  // output is written. In a parallel run the ranks agree on the outcome before going on, so that an
  // error on one rank is reported once and no rank waits for the others in vain.
  parallel::agree(comm_, [&] {
  store_ = std::make_unique<ParticleStore>(sc.dim, sc.precision, *backend_.memory);
  for (const auto& p : sc.potentials) {
    ForceTerm ft;
    ft.label = "potential \"" + p.type + "\" (" + p.where + ")";
    ft.potential = registry.make_potential(p.type, p.params, run_);
    if (p.scheme_auto && run_.ranks > 1 && p.scheme.type != "all_pairs") {
      // The automatic choice (config.cpp) is for one rank; several ranks share the all-pairs ring.
      const FactoryInfo* ap = registry.find(PluginKind::Scheme, "all_pairs");
      ft.scheme = registry.make_scheme("all_pairs", parse_params(ap->schema, "", "all_pairs"), run_);
    } else {
      ft.scheme = registry.make_scheme(p.scheme.type, p.scheme.params, run_);
    }
    const auto kind = ft.scheme->neighbourhood().kind;
    if (!ft.potential->supports(kind)) {
      const std::string why = ft.potential->unsupported_reason(kind);
      throw Error(ft.label + " cannot be used with scheme \"" + p.scheme.type + "\"" +
                  (why.empty() ? "" : ": " + why));
    }
    check_cutoff_in_box(*ft.potential, ft.label, run_.box, run_.dim);
    if (ft.potential->enforces_boundaries()) {
      if (boundary_) throw Error(ft.label + ": only one walls potential may be given");
      boundary_ = ft.potential;
    }
    if (ft.potential->external()) momentum_conserved_ = false;
    forces_.push_back(std::move(ft));
  }
  integrator_ = registry.make_integrator(sc.integrator.type, sc.integrator.params, run_);
  dt_max_ = integrator_->dt();
  // Parallel runs: the all-pairs ring for all-pairs terms, a domain decomposition for cell lists.
  if (comm_) {
    double width = 0, trigger = std::numeric_limits<double>::infinity();
    bool cells = false, pairs = false;
    for (std::size_t k = 0; k < forces_.size(); ++k) {
      const auto& ft = forces_[k];
      if (ft.potential->external()) continue;
      const auto kind = ft.scheme->neighbourhood().kind;
      if (kind == NeighbourhoodKind::Tree)
        throw Error(ft.label + ": scheme \"tree\" does not run on several ranks yet; use scheme "
                    "\"all_pairs\" (the all-pairs ring scales over GPUs) or run on one rank");
      if (kind == NeighbourhoodKind::AllPairs) pairs = true;
      if (kind == NeighbourhoodKind::CellList) {
        const double cut = ft.potential->cutoff();
        if (!std::isfinite(cut))
          throw Error(ft.label + ": cell_list far zones (a long-range law) do not run on several "
                      "ranks; use scheme \"all_pairs\" (the all-pairs ring) or run on one rank");
        double skin = 0;
        const ParamSet& ps = sc.potentials[k].scheme.params;
        if (ps.has("skin")) skin = ps.real("skin");
        // Ghosts reach one skin beyond the cut-off: they are chosen again (and particles
        // migrate) when the Verlet list would be rebuilt anyway (measured on 2 H200s, LJ 16M: 1
        // skin 207 steps/s, 2 skins 199, 3 skins 200; PARDYN_GHOST_MARGIN sets the factor).
        double factor = 1;
        if (const char* e = std::getenv("PARDYN_GHOST_MARGIN")) factor = std::max(1.0, std::atof(e));
        const double margin = std::max(factor * skin, 0.1 * cut);
        width = std::max(width, cut + margin);
        trigger = std::min(trigger, 0.5 * margin);
        cells = true;
      }
    }
    if (cells) {
      if (integrator_->particle_state())
        throw Error("integrator \"" + sc.integrator.type + "\" keeps per-particle state between "
                    "force evaluations, which particles moving between ranks (the cell list's "
                    "domain decomposition) would break; use leapfrog, yoshida4, symplectic_euler or "
                    "euler, or run on one rank");
      domain_ = std::make_unique<parallel::Domain>(*comm_, sc.box, sc.dim, width, trigger,
                                                   backend_.backend);
    }
    if (pairs) ring_ = std::make_unique<parallel::Ring>(*comm_, backend_.backend);
  }
  if (resume_) {
    restore_particles(*resume_);
  } else {
    check_particle_memory(counted_particles(sc), true, *store_, run_.ranks,
                          "the [[particles]] blocks' counts");
    generate(sc, registry);
  }
  bool wall_axis = false;
  for (int d = 0; d < sc.dim; ++d) wall_axis = wall_axis || sc.box.boundary[d] == Boundary::Wall;
  if (boundary_ && !wall_axis)
    throw Error("a walls potential is given but no axis of [box] has boundary \"wall\"; set "
                "boundary = \"wall\" (or one value per axis) in [box]");
  if (wall_axis) {
    has_walls_ = true;
    if (!boundary_) {
      // boundary = "wall" without a walls potential: the walls plugin's defaults (elastic mirror
      // walls), enforced but not among the force terms.
      const FactoryInfo* walls = registry.find(PluginKind::Potential, "walls");
      if (!walls)
        throw Error("[box] has boundary \"wall\", but the walls plugin that enforces it is not "
                    "installed");
      boundary_ = registry.make_potential("walls", parse_params(walls->schema, "", "walls"), run_);
    }
    momentum_conserved_ = false;
    check_inside_walls();
  }
  // Potential labels for thermo: the type, numbered when a type appears more than once.
  for (std::size_t k = 0; k < sc.potentials.size(); ++k) {
    std::size_t same = 0, index = 0;
    for (std::size_t j = 0; j < sc.potentials.size(); ++j)
      if (sc.potentials[j].type == sc.potentials[k].type) {
        if (j < k) ++index;
        ++same;
      }
    run_.potential_labels.push_back(same > 1 ? sc.potentials[k].type + "_" + std::to_string(index)
                                             : sc.potentials[k].type);
  }
  for (const auto& m : sc.modifiers) {
    modifiers_.push_back(registry.make_modifier(m.type, m.params, run_));
    if (!modifiers_.back()->conserves_momentum()) momentum_conserved_ = false;
  }
  std::vector<OutputFiles> files = framework_files();
  for (std::size_t k = 0; k < sc.outputs.size(); ++k) {
    const auto& o = sc.outputs[k];
    auto obs = registry.make_observer(o.type, o.params, run_);
    files.push_back({output_label(k, o), o.type, obs->files()});
    if (const auto* c = dynamic_cast<const CheckpointOutput*>(obs.get())) {
      if (ckpt_.on)
        throw Error("[[output]] type = \"checkpoint\" (" + o.where +
                    ") is given twice; one checkpoint output takes interval, every_seconds and "
                    "keep together");
      ckpt_.on = true;
      ckpt_.interval = c->steps();
      ckpt_.every_seconds = c->seconds();
      ckpt_.keep = c->keep();
      continue;
    }
    observers_.push_back(std::move(obs));
    analysis_first_.push_back(run_.extra_columns.size());
    for (const auto& c : observers_.back()->columns()) run_.extra_columns.push_back(c);
  }
  check_output_files(files);
  for (std::size_t k = framework_files().size(); k < files.size(); ++k)  // the outputs' own
    for (const auto& f : files[k].files)
      output_names_.push_back(fs::path(f).lexically_normal().string());
  });

  progress_interval_ = sc.progress_interval ? sc.progress_interval : std::max<std::uint64_t>(1, sc.steps / 10);
  timing_.force.assign(forces_.size(), 0.0);
  timing_.cuda = backend_.backend == Backend::Cuda;

  // Output folder: a previous run's frames are removed so that the series is never a mix of two runs.
  // `pardyn validate` stops before it: everything is made and checked, nothing is written.
  if (opt.check_only) {
    parallel::agree(comm_, [&] { build_neighbourhoods(); });
    return;
  }
  parallel::agree(comm_, [&] {
    if (run_.rank != 0) return;
    make_directories(run_.output_dir);
    lock_output_folder();
    std::error_code ec;
    // Checkpoints: temporary files of a run killed while writing one are deleted; a resumed run
    // deletes the checkpoints after its own (they belong to the run that died).
    for (const auto& e : fs::directory_iterator(fs::path(run_.output_dir) / "checkpoints", ec))
      if (e.path().filename().string().find(".h5.tmp-") != std::string::npos) fs::remove(e.path(), ec);
    ec.clear();
    const auto earlier = checkpoint::list(run_.output_dir);
    if (resume_) {
      for (const auto& [step, file] : earlier)
        if (step > resume_->step) fs::remove(file, ec);
    } else if (!earlier.empty()) {
      // A fresh run would mix its checkpoints with an earlier run's (and delete them by `keep`).
      throw Error("the output folder " + run_.output_dir + " holds checkpoints of an earlier run " +
                  "(the newest at step " + std::to_string(earlier.back().first) +
                  "); continue that run with `pardyn run --resume " + run_.output_dir +
                  "`, or delete " + (fs::path(run_.output_dir) / "checkpoints").string() +
                  " (or choose another folder with -o) to start afresh");
    }
    // A resumed run continues the series: its observers drop what follows the checkpoint.
    if (!resume_) replace_earlier_run();
    write_file_atomic((fs::path(run_.output_dir) / "config.toml").string(), sc.resolved_toml);
    // log.txt: what the terminal shows (a resumed run adds to its run's log).
    progress_->open_log((fs::path(run_.output_dir) / "log.txt").string(), resume_ != nullptr);
    if (resume_) progress_->log_only("");
    for (const auto& note : sc.notes) progress_->log_only("note: " + note);
  });

  char dt[32];
  std::snprintf(dt, sizeof dt, "%g", integrator_->dt());
  std::string ranks;
  if (comm_) {
    ranks = ", " + std::to_string(comm_->size()) + " ranks (" +
            (domain_ ? "domain decomposition: " + domain_->describe() +
                           (domain_->device_links() ? ", ghosts GPU to GPU" : "")
                     : std::string("")) +
            (domain_ && ring_ ? "; " : "") + (ring_ ? "all-pairs ring" : "") + ")";
  }
  progress_->message("pardyn: " + std::to_string(n_global_) + " particles, " +
                     std::to_string(sc.dim) + "D, " + to_string(sc.precision) + ", backend " +
                     backend_.description + ranks + ", " + std::to_string(sc.steps) +
                     " steps of dt = " + dt);
  progress_->message("output: " + run_.output_dir);
  if (comm_ && std::getenv("PARDYN_PARALLEL_STATS"))
    std::fprintf(stderr, "rank %d of %d: %zu particles, backend %s\n", comm_->rank(), comm_->size(),
                 store_->size(), backend_.description.c_str());
}

Simulation::~Simulation() {
  if (lock_fd_ >= 0) ::close(lock_fd_);  // the lock goes with it (and with the process, however it ends)
}

void Simulation::lock_output_folder() {
  // One run per folder at a time: an flock on <output>/.pardyn.lock, held for the run's life and
  // released by the system when the process ends, even by kill -9. The file holds the pid for the
  // message another run gets.
  const std::string path = (fs::path(run_.output_dir) / ".pardyn.lock").string();
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw Error("cannot create " + path + ": " + std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    char buf[32] = {};
    const ssize_t got = ::pread(fd, buf, sizeof buf - 1, 0);
    ::close(fd);
    const std::string pid = got > 0 ? std::string(buf, std::size_t(got)) : "?";
    throw Error("the output folder " + run_.output_dir + " is in use by another pardyn run (pid " +
                pid + "); two runs in one folder would mix their files: wait for it to end, or "
                "choose another folder with -o");
  }
  const std::string pid = std::to_string(::getpid());
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) < 0) {
    // The lock holds without the pid; only the message of a second run would lack it.
  }
  lock_fd_ = fd;
}

// The output folder of a fresh run holds this run's files only: the series files of an earlier run
// (frames, grid files) go, and so does every file the earlier run listed in .pardyn.files that this
// run does not write (say thermo.csv when this run has no thermo output). Then this run's list.
void Simulation::replace_earlier_run() {
  const fs::path dir(run_.output_dir);
  const fs::path manifest = dir / ".pardyn.files";
  std::error_code ec;
  // Frame files in a folder an output owns ("frames/"): only the kinds pardyn writes, and
  // temporary files of a run that died while writing one.
  auto clear_folder = [&](const fs::path& folder) {
    std::error_code fec;
    if (fs::is_symlink(folder, fec) || !fs::is_directory(folder, fec)) return;
    for (fs::directory_iterator it(folder, fec), end; !fec && it != end; it.increment(fec)) {
      const fs::path f = it->path();
      const std::string ext = f.extension().string();
      std::error_code rec;
      if (!fs::is_regular_file(fs::symlink_status(f, rec))) continue;
      if (ext == ".vtp" || ext == ".pvtp" || ext == ".vti" ||
          f.filename().string().find(".tmp-") != std::string::npos)
        fs::remove(f, rec);
    }
  };
  std::vector<std::string> earlier;
  {
    std::ifstream in(manifest);
    for (std::string line; std::getline(in, line);)
      if (!line.empty()) earlier.push_back(line);
  }
  // An earlier pardyn wrote no list: its frames are found where they always were.
  if (earlier.empty() && !fs::exists(manifest, ec)) earlier.push_back("frames/");
  const std::set<std::string> mine(output_names_.begin(), output_names_.end());
  for (const auto& n : earlier) {
    // Only names an output may claim (check_output_files): relative, inside the folder.
    const fs::path p = fs::path(n).lexically_normal();
    if (p.is_absolute() || p.empty() || *p.begin() == "..") continue;
    if (n.back() == '/') {
      clear_folder(dir / p);
      if (!mine.count(p.string())) fs::remove(dir / p, ec);  // only if empty now
    } else if (!mine.count(p.string()) && fs::is_regular_file(fs::symlink_status(dir / p, ec))) {
      fs::remove(dir / p, ec);
    }
    ec.clear();
  }
  std::string list;
  for (const auto& n : output_names_) {
    if (n.back() == '/') clear_folder(dir / n);
    list += n + "\n";
  }
  write_file_atomic(manifest.string(), list);
}

void Simulation::generate(const Scenario& sc, const Registry& registry) {
  HostParticles all(sc.dim);
  int block = 0;
  for (const auto& pb : sc.particles) {
    // Each block has its own stream, so adding a block does not change the others.
    std::seed_seq seq{std::uint64_t(sc.seed), std::uint64_t(block++), std::uint64_t(0x9e3779b9)};
    std::mt19937_64 rng(seq);
    auto gen = registry.make_generator(pb.type, pb.params, run_);
    GenerateContext ctx{sc.dim, &sc.box, &rng, sc.dir};
    HostParticles hp = gen->generate(ctx);
    hp.dim = sc.dim;
    const std::size_t n = hp.size();
    check_generated(hp, pb, sc.dim);
    for (int d = 0; d < sc.dim; ++d) {
      if (hp.v[d].empty()) hp.v[d].assign(n, 0.0);
      for (std::size_t i = 0; i < n; ++i) {
        if (!pb.offset.empty()) hp.x[d][i] += pb.offset[d];
        if (!pb.velocity.empty()) hp.v[d][i] += pb.velocity[d];
      }
    }
    if (hp.type.size() != n) hp.type.assign(n, 0);
    // A generator may give some particles their own type (the galaxy's central body); the block's
    // type is added to it.
    for (auto& t : hp.type) t += pb.particle_type;
    add_thermal_velocities(hp, 0, n, pb.temperature, rng, pb.uniform_velocities);
    check_representable(hp, pb, sc.dim, sc.precision);
    all.append(hp);
  }
  for (std::size_t i = 0; i < all.size(); ++i) all.id[i] = std::int64_t(i);
  n_global_ = all.size();
  check_particle_memory(double(n_global_), false, *store_, run_.ranks, "the generated particles");
  if (comm_) distribute(all);
  store_->upload(all);
}

void Simulation::distribute(HostParticles& all) {
  const int K = comm_->size(), me = comm_->rank();
  const std::size_t n = all.size();
  std::vector<std::size_t> keep;
  if (domain_) {
    // By position: the rank whose sub-box holds the particle (periodic axes wrapped first).
    const Box& b = run_.box;
    for (std::size_t i = 0; i < n; ++i) {
      double x[3] = {0, 0, 0};
      for (int d = 0; d < run_.dim; ++d) {
        x[d] = all.x[d][i];
        if (b.boundary[d] == Boundary::Periodic)
          x[d] -= b.length(d) * std::floor((x[d] - b.lo[d]) / b.length(d));
      }
      if (domain_->owner(x) == me) keep.push_back(i);
    }
  } else {
    // Contiguous blocks, by the weights given or equal.
    std::vector<double> w = scenario_.rank_weights;
    if (w.empty()) w.assign(std::size_t(K), 1.0);
    double total = 0, before = 0;
    for (double v : w) total += v;
    for (int r = 0; r < me; ++r) before += w[std::size_t(r)];
    const std::size_t b = std::size_t(std::llround(double(n) * before / total));
    const std::size_t e = std::size_t(std::llround(double(n) * (before + w[std::size_t(me)]) / total));
    for (std::size_t i = b; i < std::min(e, n); ++i) keep.push_back(i);
  }
  HostParticles mine(all.dim);
  mine.resize(keep.size());
  for (std::size_t k = 0; k < keep.size(); ++k) {
    const std::size_t i = keep[k];
    for (int d = 0; d < all.dim; ++d) {
      mine.x[d][k] = all.x[d][i];
      mine.v[d][k] = all.v[d][i];
      // Image counts from a generator (a LAMMPS data file's image flags).
      if (all.image[d].size() == n) mine.image[d][k] = all.image[d][i];
    }
    mine.mass[k] = all.mass[i];
    mine.type[k] = all.type[i];
    mine.id[k] = all.id[i];
  }
  all = std::move(mine);
}

void Simulation::redistribute(const std::vector<double>& weights) {
  const int K = comm_->size(), me = comm_->rank();
  std::uint64_t mine = store_->size();
  std::vector<std::uint64_t> counts(static_cast<std::size_t>(K));
  comm_->allgather(&mine, sizeof mine, counts.data());
  // Ranks' blocks in rank order form one sequence; the new blocks cut it by the weights.
  std::vector<std::uint64_t> old_begin(static_cast<std::size_t>(K) + 1, 0), new_begin(static_cast<std::size_t>(K) + 1, 0);
  for (int r = 0; r < K; ++r) old_begin[std::size_t(r) + 1] = old_begin[std::size_t(r)] + counts[std::size_t(r)];
  const std::uint64_t n = old_begin[std::size_t(K)];
  double total = 0, acc = 0;
  for (double w : weights) total += w;
  for (int r = 0; r < K; ++r) {
    acc += weights[std::size_t(r)];
    new_begin[std::size_t(r) + 1] = r == K - 1 ? n : std::uint64_t(std::llround(double(n) * acc / total));
  }
  const std::size_t rb = parallel::record_bytes(*store_);
  std::vector<char> all_mine;
  parallel::IndexList every;
  every.host.resize(store_->size());
  for (std::size_t i = 0; i < every.host.size(); ++i) every.host[i] = std::uint32_t(i);
  every.changed();
  parallel::gather_records(*store_, every, all_mine);
  // Every rank sends each other rank the overlap of its old block with that rank's new block.
  std::vector<std::vector<char>> in(static_cast<std::size_t>(K));
  std::vector<std::unique_ptr<parallel::Communicator::Request>> reqs;
  std::vector<std::uint64_t> in_count(std::size_t(K), 0);
  auto overlap = [&](int a, int b) {  // old block of a with new block of b: [lo, hi) global
    const std::uint64_t lo = std::max(old_begin[std::size_t(a)], new_begin[std::size_t(b)]);
    const std::uint64_t hi = std::min(old_begin[std::size_t(a) + 1], new_begin[std::size_t(b) + 1]);
    return std::make_pair(lo, std::max(lo, hi));
  };
  for (int r = 0; r < K; ++r) {
    const auto o = overlap(r, me);
    in[std::size_t(r)].resize((o.second - o.first) * rb);
    if (r != me && !in[std::size_t(r)].empty())
      reqs.push_back(comm_->irecv(in[std::size_t(r)].data(), in[std::size_t(r)].size(), r, 7500));
  }
  for (int r = 0; r < K; ++r) {
    const auto o = overlap(me, r);
    if (o.second == o.first) continue;
    const char* src = all_mine.data() + (o.first - old_begin[std::size_t(me)]) * rb;
    if (r == me) std::copy(src, src + (o.second - o.first) * rb, in[std::size_t(me)].begin());
    else reqs.push_back(comm_->isend(src, (o.second - o.first) * rb, r, 7500));
  }
  for (auto& q : reqs) q->wait();
  store_->resize(0);
  for (int r = 0; r < K; ++r)
    parallel::append_records(*store_, in[std::size_t(r)].data(), in[std::size_t(r)].size() / rb);
}

bool Simulation::balance_ring() {
  // Each rank's speed (its particles per second of its own computing) at the first evaluation
  // sizes the blocks, so that unequal devices finish the ring together (seed 003).
  const int K = comm_->size();
  double t = ring_->compute_seconds();
  ring_->reset_timer();
  std::vector<double> times(static_cast<std::size_t>(K)), counts(static_cast<std::size_t>(K));
  const double n = double(store_->size());
  comm_->allgather(&t, sizeof t, times.data());
  comm_->allgather(&n, sizeof n, counts.data());
  double lo = std::numeric_limits<double>::infinity(), hi = 0;
  std::vector<double> speed(static_cast<std::size_t>(K));
  for (int r = 0; r < K; ++r) {
    lo = std::min(lo, times[std::size_t(r)]);
    hi = std::max(hi, times[std::size_t(r)]);
    speed[std::size_t(r)] = counts[std::size_t(r)] / std::max(times[std::size_t(r)], 1e-9);
  }
  // Small differences are noise; a short evaluation says nothing.
  if (hi < 1e-3 || hi < 1.1 * lo) return false;
  redistribute(speed);
  char buf[160];
  std::snprintf(buf, sizeof buf, "all-pairs ring: blocks resized by measured speed (slowest rank took %.3g s, fastest %.3g s)", hi, lo);
  progress_->message(buf);
  return true;
}

Reductions Simulation::reduce_all() {
  Reductions r = backend_.ops->reduce(*store_);
  if (!comm_) return r;
  double v[17] = {double(r.n), r.mass, r.kinetic, r.potential, r.virial};
  for (int d = 0; d < 3; ++d) {
    v[5 + d] = r.momentum[d];
    v[8 + d] = r.angular_momentum[d];
    v[11 + d] = r.mass_moment[d];
    v[14 + d] = r.image_moment[d];
  }
  comm_->sum(v, 17);
  double m[2] = {r.max_accel, r.finite ? 0.0 : 1.0};
  comm_->max(m, 2);
  r.n = std::size_t(std::llround(v[0]));
  r.mass = v[1], r.kinetic = v[2], r.potential = v[3], r.virial = v[4];
  for (int d = 0; d < 3; ++d) {
    r.momentum[d] = v[5 + d];
    r.angular_momentum[d] = v[8 + d];
    r.mass_moment[d] = v[11 + d];
    r.image_moment[d] = v[14 + d];
  }
  r.max_accel = m[0];
  r.finite = m[1] == 0.0;
  return r;
}

bool Simulation::wants_energy(std::uint64_t step) const {
  if (step == scenario_.steps || step % progress_interval_ == 0) return true;
  for (const auto& o : observers_)
    if (step % std::max<std::uint64_t>(1, o->interval()) == 0) return true;
  return false;
}

void Simulation::compute_forces() {
  if (!need_energy_) {
    energy_fresh_ = false;
    evaluate_forces();
    ++force_evals_;
    return;
  }
  // Energies in a pass of their own: the accelerations always come from an evaluation without
  // energies, so that how often a run observes never changes its trajectory (force kernels with and
  // without energies may sum in different orders). A resumed run that observes at other steps, or
  // an extended one, therefore continues bit for bit. Costs one more evaluation per observed step.
  need_energy_ = false;
  evaluate_forces();
  need_energy_ = true;
  energy_fresh_ = true;
  if (!energy_store_ || energy_store_->capacity() != store_->capacity()) {
    energy_store_ = std::make_unique<ParticleStore>(run_.dim, run_.precision, store_->memory());
    energy_store_->reserve(store_->capacity());
  }
  store_->swap_accelerations(*energy_store_);
  evaluate_forces();
  store_->swap_accelerations(*energy_store_);
  ++force_evals_;
}

void Simulation::evaluate_forces() {
  // PARDYN_PARALLEL_STATS=2: the time of each part, the device synchronised after each (slower).
  static const bool phases = [] {
    const char* e = std::getenv("PARDYN_PARALLEL_STATS");
    return e && e[0] == '2';
  }();
  auto mark = [&](int k) {
    if (!phases) return;
    if (backend_.backend == Backend::Cuda) cuda::synchronize("phase statistics");
    const auto now = std::chrono::steady_clock::now();
    if (k >= 0) phase_[k] += std::chrono::duration<double>(now - phase_t_).count();
    phase_t_ = now;
  };
  mark(-1);
  timing_.lap(&timing_.integrate);  // the integrator's work since its last evaluation
  // Parallel short range: particles that left their sub-box move first, then the ghosts come.
  if (domain_) {
    domain_->prepare(*store_);
    timing_.lap(&timing_.comm);
  }
  mark(0);
  // When the first term is a cell list on the work store, its forces are copied into the store
  // (owned particles: all of them), which spares zeroing the store first.
  const bool first_on_work = domain_ && !forces_.empty() && !forces_[0].potential->external() &&
                             forces_[0].scheme->neighbourhood().kind == NeighbourhoodKind::CellList;
  if (!first_on_work) backend_.ops->zero_forces(*store_, need_energy_, need_energy_);
  ForceRequest req;
  req.energy = need_energy_;
  req.virial = need_energy_;
  req.box = &run_.box;
  // With several potentials, each one's energy is the growth of the total it leaves behind.
  const bool split = need_energy_ && forces_.size() > 1;
  if (need_energy_) term_energy_.assign(forces_.size(), 0.0);
  double before = 0;
  for (std::size_t k = 0; k < forces_.size(); ++k) {
    auto& f = forces_[k];
    const auto kind = f.scheme->neighbourhood().kind;
    if (f.potential->external()) {
      // An external potential acts on each particle alone: no neighbourhood to build for it.
      f.potential->compute(*store_, f.scheme->neighbourhood(), req);
      timing_.lap(&timing_.force[k]);
    } else if (domain_ && kind == NeighbourhoodKind::CellList) {
      // On the work store (owned particles, then ghosts), whose forces on the owned ones are added.
      ParticleStore& w = domain_->work();
      ForceRequest wreq = req;
      wreq.box = &domain_->work_box();
      backend_.ops->zero_forces(w, need_energy_, need_energy_);
      f.scheme->update(w, domain_->work_box(), f.potential->reach());
      mark(1);
      timing_.lap(&timing_.neighbour);
      f.potential->compute(w, f.scheme->neighbourhood(), wreq);
      mark(2);
      timing_.lap(&timing_.force[k]);
      if (k == 0 && forces_.size() == 1) domain_->take_forces(*store_, need_energy_);
      else parallel::add_forces(w, *store_, domain_->owned(), need_energy_, k == 0);
      mark(3);
      timing_.lap(&timing_.comm);
    } else if (ring_ && kind == NeighbourhoodKind::AllPairs) {
      ring_->compute(*f.potential, *store_, req, time_ring_);
      timing_.lap(&timing_.force[k]);  // the ring's messages included
    } else {
      f.scheme->update(*store_, run_.box, f.potential->reach());
      if (f.scheme->reuses_structure() && f.scheme->rebuilt()) {
        // Where the structure was built: a checkpoint saves it (restore_states rebuilds from it).
        if (!f.built_at || built_at_size_ != store_->size())
          f.built_at = backend_.ops->new_state(*store_);
        built_at_size_ = store_->size();
        backend_.ops->get_state(*store_, *f.built_at);
      }
      mark(1);
      timing_.lap(&timing_.neighbour);
      f.potential->compute(*store_, f.scheme->neighbourhood(), req);
      mark(2);
      timing_.lap(&timing_.force[k]);
    }
    if (split) {
      const double now = backend_.ops->reduce(*store_).potential;
      term_energy_[k] = now - before;
      before = now;
      timing_.lap(&timing_.output);  // the energies' split is for thermo
    }
  }
}

void Simulation::build_neighbourhoods() {
  apply_boundaries();
  if (domain_) domain_->prepare(*store_);
  for (auto& f : forces_) {
    if (f.potential->external()) continue;
    const auto kind = f.scheme->neighbourhood().kind;
    if (domain_ && kind == NeighbourhoodKind::CellList)
      f.scheme->update(domain_->work(), domain_->work_box(), f.potential->reach());
    else if (!(ring_ && kind == NeighbourhoodKind::AllPairs))
      f.scheme->update(*store_, run_.box, f.potential->reach());
  }
}

void Simulation::check_inside_walls() {
  HostParticles hp(run_.dim);
  store_->download(hp, ParticleStore::kPosition);
  for (int d = 0; d < run_.dim; ++d) {
    if (run_.box.boundary[d] != Boundary::Wall) continue;
    for (std::size_t i = 0; i < hp.size(); ++i)
      if (hp.x[d][i] < run_.box.lo[d] || hp.x[d][i] > run_.box.hi[d])
        throw Error("particle " + std::to_string(i) + " starts outside the walled box: its " +
                    "xyz"[d] + " = " + format_number(hp.x[d][i]) + " is not in [" +
                    format_number(run_.box.lo[d]) + ", " + format_number(run_.box.hi[d]) +
                    "]; generate the particles inside [box] (a generator's region, or the block's "
                    "offset)");
  }
}

void Simulation::drift(double dt) {
  if (boundary_) boundary_->before_drift(*store_, run_.box, dt);
  backend_.ops->drift(*store_, dt);
  apply_boundaries();
}

void Simulation::compute_stage_forces() {
  const bool energy = need_energy_;
  need_energy_ = false;
  compute_forces();
  need_energy_ = energy;
}

void Simulation::apply_boundaries() {
  if (run_.box.any_periodic(run_.dim)) backend_.ops->wrap_periodic(*store_, run_.box);
  if (boundary_) boundary_->apply_boundaries(*store_, run_.box);
}

Thermo Simulation::thermo_now() {
  Thermo t;
  t.step = step_;
  t.time = time_;
  t.r = reduce_all();
  t.total = t.r.kinetic + t.r.potential;
  double com[3] = {0, 0, 0};
  // The centre of mass of the unwrapped positions: a particle that crosses a periodic face moves
  // the centre of mass by its own displacement, not by a box length back.
  for (int d = 0; d < run_.dim; ++d) {
    const double moment = t.r.mass_moment[d] + t.r.image_moment[d] * run_.box.length(d);
    com[d] = t.r.mass > 0 ? moment / t.r.mass : 0.0;
  }
  if (!have_e0_) {
    e0_ = t.total;
    std::copy(com, com + 3, com0_);
    have_e0_ = true;
  }
  t.com_drift = std::sqrt(sq(com[0] - com0_[0]) + sq(com[1] - com0_[1]) + sq(com[2] - com0_[2]));
  t.dt = last_dt_;
  t.rejected_steps = integrator_->rejected_steps();
  t.initial_total = e0_;
  t.relative_drift = e0_ != 0 ? (t.total - e0_) / std::fabs(e0_) : t.total - e0_;
  const double dof = this->dof();
  t.dof = dof;
  t.temperature = dof > 0 ? 2.0 * t.r.kinetic / dof : 0.0;
  t.force_evaluations = force_evals_;
  bool open = false;
  t.volume = 1;
  for (int d = 0; d < run_.dim; ++d) {
    t.volume *= run_.box.length(d);
    open = open || run_.box.boundary[d] == Boundary::Open;
  }
  t.pressure = open ? std::nan("") : (2.0 * t.r.kinetic + t.r.virial) / (run_.dim * t.volume);
  t.potential_terms = forces_.size() == 1 ? std::vector<double>{t.r.potential} : term_energy_;
  if (comm_ && forces_.size() > 1 && !t.potential_terms.empty())
    comm_->sum(t.potential_terms.data(), t.potential_terms.size());
  t.extra.assign(run_.extra_columns.size(), std::nan(""));
  return t;
}

Thermo Simulation::measure() {
  need_energy_ = true;
  compute_forces();
  return thermo_now();
}

void Simulation::observe(bool final_step) {
  if (seen_step_ != step_) {
    seen_now_.clear();
    line_now_ = false;
    seen_step_ = step_;
  }
  // Each observer sees a step once (a run stepped in pieces may ask for the final observation of a
  // step that was observed as a regular one).
  std::vector<Observer*> due;
  for (auto& o : observers_)
    if ((final_step || step_ % std::max<std::uint64_t>(1, o->interval()) == 0) &&
        std::find(seen_now_.begin(), seen_now_.end(), o.get()) == seen_now_.end())
      due.push_back(o.get());
  const bool line = (final_step || step_ % progress_interval_ == 0) && !line_now_;
  if (final_step) observed_now_ = true;
  if (due.empty() && !line) return;
  seen_now_.insert(seen_now_.end(), due.begin(), due.end());
  line_now_ = line_now_ || line;

  const bool cuda = backend_.backend == Backend::Cuda;
  if (cuda) cuda::synchronize("timing");
  auto t0 = std::chrono::steady_clock::now();
  Thermo t = thermo_now();
  // Analyses (cluster counts, ...) run on the backend before the host copy: their per-particle
  // labels travel with it.
  for (std::size_t k = 0; k < observers_.size(); ++k)
    if (!observers_[k]->columns().empty() || std::find(due.begin(), due.end(), observers_[k].get()) != due.end())
      observers_[k]->analyse(*this, t, analysis_first_[k]);
  if (cuda) cuda::synchronize("timing");
  const auto t1 = std::chrono::steady_clock::now();
  timing_.analysis += std::chrono::duration<double>(t1 - t0).count();
  struct AddOutput {
    Timing& timing;
    std::chrono::steady_clock::time_point from;
    ~AddOutput() {
      timing.output += std::chrono::duration<double>(std::chrono::steady_clock::now() - from).count();
    }
  } add_output{timing_, t1};
  if (!t.r.finite) throw Error(non_finite_message());
  last_finite_step_ = step_;
  unsigned fields = 0;
  for (auto* o : due) fields |= o->fields();
  std::shared_ptr<HostParticles> host;
  if (fields) {
    host = std::make_shared<HostParticles>(run_.dim);
    store_->download(*host, fields);
  }
  if (keep_history_) {
    if (!history_.empty() && history_.back().step == t.step) history_.back() = t;
    else history_.push_back(t);
  }
  last_thermo_ = t;
  ObserveContext ctx{step_, time_, &run_, host.get(), &t, host};
  for (auto* o : due) o->observe(ctx);
  if (line) progress_->thermo_line(t, run_.dim);
}

std::vector<std::pair<std::string, double>> thermo_columns(const Thermo& t, const RunInfo& run) {
  std::vector<std::pair<std::string, double>> c;
  c.reserve(24 + t.extra.size());
  c.emplace_back("step", double(t.step));
  c.emplace_back("time", t.time);
  c.emplace_back("kinetic", t.r.kinetic);
  c.emplace_back("potential", t.r.potential);
  c.emplace_back("total", t.total);
  c.emplace_back("relative_drift", t.relative_drift);
  if (run.dim == 2) {
    c.emplace_back("px", t.r.momentum[0]);
    c.emplace_back("py", t.r.momentum[1]);
    c.emplace_back("lz", t.r.angular_momentum[2]);
  } else {
    const char* p[3] = {"px", "py", "pz"};
    const char* l[3] = {"lx", "ly", "lz"};
    for (int d = 0; d < 3; ++d) c.emplace_back(p[d], t.r.momentum[d]);
    for (int d = 0; d < 3; ++d) c.emplace_back(l[d], t.r.angular_momentum[d]);
  }
  c.emplace_back("temperature", t.temperature);
  c.emplace_back("force_evaluations", double(t.force_evaluations));
  c.emplace_back("dt", t.dt);
  c.emplace_back("rejected_steps", double(t.rejected_steps));
  c.emplace_back("com_drift", t.com_drift);
  c.emplace_back("pressure", t.pressure);
  if (run.potential_labels.size() > 1)
    for (std::size_t k = 0; k < run.potential_labels.size(); ++k)
      c.emplace_back("potential_" + run.potential_labels[k],
                     k < t.potential_terms.size() ? t.potential_terms[k] : std::nan(""));
  for (std::size_t k = 0; k < run.extra_columns.size(); ++k)
    c.emplace_back(run.extra_columns[k], k < t.extra.size() ? t.extra[k] : std::nan(""));
  return c;
}

template <typename F>
void Simulation::guarded(F&& f) {
  try {
    f();
  } catch (...) {
    failed_ = true;
    ended_ = true;
    progress_->finish(steps_done_);
    try {
      throw;
    } catch (const std::exception& e) {
      progress_->log_only(std::string("error: ") + e.what());
    } catch (...) {
    }
    try {
      for (auto& o : observers_) o->end();
    } catch (...) {
    }
    throw;
  }
}

void Simulation::run() {
  begin_run();
  advance(scenario_.steps, true);
  end_run();
}

void Simulation::add_observer(std::shared_ptr<Observer> o) {
  if (ended_) throw Error("add an observer before the run has ended");
  analysis_first_.push_back(run_.extra_columns.size());
  for (const auto& c : o->columns()) run_.extra_columns.push_back(c);
  observers_.push_back(o);
  if (begun_) guarded([&] { o->begin(run_); });
}

void Simulation::refresh() {
  particles_changed_ = false;
  store_->touch();
  apply_boundaries();
  if (has_walls_) check_inside_walls();
  need_energy_ = true;
  compute_forces();
  observed_now_ = false;
}

Thermo Simulation::thermo() {
  begin_run();
  if (ended_) throw Error("the run has ended" + std::string(failed_ ? " with an error" : ""));
  Thermo t;
  guarded([&] {
    if (particles_changed_) refresh();
    if (!energy_fresh_) {
      need_energy_ = true;
      compute_forces();
    }
    // The observation of this step, with its analyses' columns, when there was one; else the
    // quantities now (the analyses' columns NaN: they run only at observations).
    t = seen_step_ == step_ && !seen_now_.empty() && last_thermo_.step == step_ ? last_thermo_
                                                                                : thermo_now();
  });
  return t;
}

void Simulation::begin_run() {
  if (begun_) return;
  if (ended_) throw Error("the run has ended");
  begun_ = true;
  guarded([&] {
    for (auto& o : observers_) o->begin(run_);
    if (resume_) {
      // The state after step s of the run that wrote the checkpoint: particles and their forces
      // (restored in the constructor), the clocks and counters, the plugins' states. Nothing is
      // observed at step s again: the files already hold it.
      const checkpoint::Data& ck = *resume_;
      step_ = ck.step;
      time_ = ck.time;
      last_dt_ = ck.last_dt;
      force_evals_ = ck.force_evaluations;
      last_finite_step_ = ck.last_finite_step;
      if (!resume_changed_) {
        have_e0_ = ck.have_e0;
        e0_ = ck.e0;
        std::copy(ck.com0, ck.com0 + 3, com0_);
      }
      restore_states(ck);
      last_checkpoint_ = resume_file_;
      last_checkpoint_step_ = ck.step;
      have_checkpoint_step_ = true;
      observed_now_ = true;
      resume_.reset();  // the particles may be many: free them before stepping
      progress_->message("resumed from " + last_checkpoint_ + " at step " +
                         std::to_string(step_) + ", time " + format_value(time_));
    } else {
      particles_changed_ = false;  // the first forces are computed here
      need_energy_ = true;
      apply_boundaries();
      if (has_walls_) check_inside_walls();
      time_ring_ = ring_ && scenario_.balance_by_speed && scenario_.rank_weights.empty();
      compute_forces();
      if (time_ring_) {
        time_ring_ = false;
        if (balance_ring()) compute_forces();
      }
      step_ = 0;
      observe(scenario_.steps == 0);
    }
    loop_first_ = step_;
    ckpt_clock_ = std::chrono::steady_clock::now();
    progress_->start(step_);
  });
}

std::uint64_t Simulation::advance(std::uint64_t target, bool to_end) {
  begin_run();
  if (ended_) throw Error("the run has ended" + std::string(failed_ ? " with an error" : ""));
  const std::uint64_t first = step_;
  guarded([&] {
    const double dt_max = dt_max_;
    const bool control = scenario_.dt_acceleration && !integrator_->adaptive();
    const double end_time = to_end ? scenario_.end_time : 0.0;
    const auto loop_start = std::chrono::steady_clock::now();
    bool already_done = first >= target || (end_time > 0 && time_ >= end_time * (1 - 1e-12));
    if (to_end && already_done && first > 0 && first == loop_first_)
      progress_->message("the checkpoint is at step " + std::to_string(first) +
                         ", where the scenario ends: nothing to do (extend the run with --set "
                         "simulation.steps=M)");
    for (std::uint64_t s = first + 1; s <= target && !already_done; ++s) {
      if (particles_changed_) refresh();
      step_ = s;
      observed_now_ = false;
      energy_fresh_ = false;
      if (control) {
        // dt = eta sqrt(length / max|a|), reduced on the backend (on the GPU for CUDA runs).
        const double amax = reduce_all().max_accel;
        const double dt = amax > 0 ? scenario_.dt_eta * std::sqrt(scenario_.dt_length / amax) : dt_max;
        integrator_->set_dt(std::min(dt_max, dt));
      }
      const bool last = s == target ||
                        (end_time > 0 && time_ + integrator_->dt() >= end_time * (1 - 1e-12));
      need_energy_ = wants_energy(s) || last;
      // Phase timing (the closing breakdown): every step on the CPU; on the GPU every 8th step
      // without observation, with the device synchronised between phases.
      timing_.sample = backend_.backend != Backend::Cuda || (!need_energy_ && s % 8 == 5);
      if (timing_.sample) ++timing_.sampled;
      timing_.lap(nullptr);
      integrator_->step(*this);  // its force evaluations go to their own sections
      timing_.lap(&timing_.integrate);
      for (auto& m : modifiers_) m->apply(*this);
      timing_.lap(&timing_.modifiers);
      timing_.sample = false;
      last_dt_ = integrator_->last_dt();
      // A fixed step's time is step x dt, exactly as a user writes it (a running sum drifts:
      // 1.9999999999999793 after 1000 steps of 0.002); adaptive or controlled steps add up.
      if (!control && !integrator_->adaptive())
        time_ = double(s) * dt_max;
      else
        time_ += last_dt_;
      steps_done_ = s;
      const bool finished = end_time > 0 && time_ >= end_time * (1 - 1e-12);
      bool stopping = stop_requested_.load() || finished;
      int signal = stop_requested_.load() ? stop_signal_.load() : 0;
      bool seconds_due = ckpt_.on && ckpt_.every_seconds > 0 &&
                         std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                                       ckpt_clock_).count() >= ckpt_.every_seconds;
      if (comm_) {
        // A signal reaches the ranks at slightly different times: they stop at the same step (and
        // agree on the wall-clock checkpoints, whose clocks differ).
        double v[3] = {stopping ? 1.0 : 0.0, double(signal), seconds_due ? 1.0 : 0.0};
        comm_->max(v, 3);
        stopping = v[0] > 0;
        signal = int(v[1]);
        seconds_due = v[2] > 0;
      }
      const bool at_end = to_end && s == scenario_.steps;
      const bool final_step = at_end || stopping;
      // An interrupted run's checkpoint holds this step's forces as the integrator left them,
      // before the energies of the final observation are computed.
      if (ckpt_.on && stopping && !finished && !at_end) write_checkpoint("interrupt");
      if (stopping && !need_energy_) {
        need_energy_ = true;  // the final observation needs energies
        compute_forces();
      }
      observe(final_step);
      const bool wrote = have_checkpoint_step_ && last_checkpoint_step_ == s;
      if (ckpt_.on && !wrote) {
        if (final_step) write_checkpoint("end");
        else if (ckpt_.interval && s % ckpt_.interval == 0) write_checkpoint("interval");
        else if (seconds_due) write_checkpoint("seconds");
      }
      progress_->update(s, end_time > 0 ? time_ / end_time : -1.0);
      if (finished) break;
      if (!stopping && poll_ && poll_()) {
        stop();
        stopping = true;
        // The last observation was not the final one: observe this state (energies first).
        if (!energy_fresh_) {
          need_energy_ = true;
          compute_forces();
        }
        if (!observed_now_) observe(true);
        if (ckpt_.on && !(have_checkpoint_step_ && last_checkpoint_step_ == s))
          write_checkpoint("interrupt");
      }
      if (stopping) {
        stopped_by_ = signal;
        progress_->message("stopped at step " + std::to_string(s) +
                           " on request; output is complete up to it" +
                           (last_checkpoint_.empty() ? "" : "; checkpoint: " + last_checkpoint_));
        break;
      }
    }
    loop_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - loop_start).count();
  });
  return step_ - first;
}

void Simulation::end_run() {
  if (ended_) return;
  if (!begun_) {
    ended_ = true;
    return;
  }
  guarded([&] {
    // A run stepped in pieces (advance without to_end) has not observed its final state yet.
    if (particles_changed_) refresh();
    if (!observed_now_) {
      if (!energy_fresh_) {
        need_energy_ = true;
        compute_forces();
      }
      observe(true);
    }
    if (ckpt_.on && !(have_checkpoint_step_ && last_checkpoint_step_ == step_))
      write_checkpoint("end");
    if (std::getenv("PARDYN_PARALLEL_STATS") && std::getenv("PARDYN_PARALLEL_STATS")[0] == '2')
      std::fprintf(stderr,
                   "rank %d: loop %.4f s: prepare %.4f, zero + neighbours %.4f, forces %.4f, add %.4f s\n",
                   run_.rank, loop_seconds_, phase_[0], phase_[1], phase_[2], phase_[3]);
    progress_->finish(steps_done_);
    report_timing(steps_done_ > loop_first_ ? steps_done_ - loop_first_ : 0);
  });
  ended_ = true;
  for (auto& o : observers_) o->end();
}

// ---------------------------------------------------------------------------------------------------
// Checkpoints.

namespace {

// StateOut for the checkpoint: values as given; vectors downloaded through a scratch store of the
// run's kind and gathered over the ranks (rank 0 keeps them, component-major).
class StateSaver final : public StateOut {
public:
  StateSaver(checkpoint::PluginState& out, ParticleStore& store, BackendOps& ops,
             parallel::Communicator* comm)
      : out_(out), store_(store), ops_(ops), comm_(comm) {}
  void real(const std::string& name, double v) override { out_.reals[name] = v; }
  void integer(const std::string& name, std::int64_t v) override { out_.integers[name] = v; }
  void vector(const std::string& name, const StateVector& y) override {
    const int dim = store_.dim();
    const std::size_t n = store_.size();
    ParticleStore tmp(dim, store_.precision(), store_.memory());
    tmp.resize(n);
    ops_.set_state(tmp, y);
    HostParticles h(dim);
    tmp.download(h, ParticleStore::kPosition | ParticleStore::kVelocity);
    std::vector<double> mine;
    mine.reserve(std::size_t(2 * dim) * n);
    for (int c = 0; c < 2 * dim; ++c) {
      const auto& a = c < dim ? h.x[c] : h.v[c - dim];
      mine.insert(mine.end(), a.begin(), a.end());
    }
    if (!comm_) {
      out_.vectors[name] = std::move(mine);
      return;
    }
    std::vector<char> bytes(mine.size() * sizeof(double));
    std::memcpy(bytes.data(), mine.data(), bytes.size());
    const auto all = comm_->gather(bytes);
    if (comm_->rank() != 0) return;
    std::vector<std::size_t> counts;
    for (const auto& b : all) counts.push_back(b.size() / sizeof(double) / std::size_t(2 * dim));
    std::vector<double>& v = out_.vectors[name];
    for (int c = 0; c < 2 * dim; ++c)
      for (std::size_t r = 0; r < all.size(); ++r) {
        const double* p = reinterpret_cast<const double*>(all[r].data()) + std::size_t(c) * counts[r];
        v.insert(v.end(), p, p + counts[r]);
      }
  }

private:
  checkpoint::PluginState& out_;
  ParticleStore& store_;
  BackendOps& ops_;
  parallel::Communicator* comm_;
};

// StateIn from a checkpoint: this rank's part of every vector (particles [offset, offset + n) of
// the saved order).
class StateLoader final : public StateIn {
public:
  StateLoader(const checkpoint::PluginState& in, const std::string& file, ParticleStore& store,
              BackendOps& ops, std::size_t offset, std::size_t total)
      : in_(in), file_(file), store_(store), ops_(ops), offset_(offset), total_(total) {}
  double real(const std::string& name) override {
    const auto it = in_.reals.find(name);
    if (it == in_.reals.end()) missing(name);
    return it->second;
  }
  std::int64_t integer(const std::string& name) override {
    const auto it = in_.integers.find(name);
    if (it == in_.integers.end()) missing(name);
    return it->second;
  }
  bool has(const std::string& name) const override {
    return in_.reals.count(name) || in_.integers.count(name) || in_.vectors.count(name);
  }
  void vector(const std::string& name, StateVector& y) override {
    const auto it = in_.vectors.find(name);
    if (it == in_.vectors.end()) missing(name);
    const int dim = store_.dim();
    const std::size_t n = store_.size();
    if (it->second.size() != std::size_t(2 * dim) * total_)
      throw Error("checkpoint " + file_ + ": " + in_.type + "'s vector '" + name + "' has " +
                  std::to_string(it->second.size()) + " values, expected " +
                  std::to_string(std::size_t(2 * dim) * total_));
    HostParticles h(dim);
    h.resize(n);
    for (int c = 0; c < 2 * dim; ++c) {
      auto& a = c < dim ? h.x[c] : h.v[c - dim];
      const double* src = it->second.data() + std::size_t(c) * total_ + offset_;
      std::copy(src, src + n, a.begin());
    }
    std::fill(h.mass.begin(), h.mass.end(), 1.0);
    ParticleStore tmp(dim, store_.precision(), store_.memory());
    tmp.upload(h);
    ops_.get_state(tmp, y);
  }

private:
  [[noreturn]] void missing(const std::string& name) const {
    throw Error("checkpoint " + file_ + ": the saved state of " + in_.type + " has no '" + name +
                "' (written by another version of the plugin?)");
  }
  const checkpoint::PluginState& in_;
  std::string file_;
  ParticleStore& store_;
  BackendOps& ops_;
  std::size_t offset_, total_;
};

}  // namespace

std::size_t Simulation::rank_offset(const checkpoint::Data& ck) const {
  // Where this rank's particles begin in the checkpoint's order (rank by rank).
  std::size_t offset = 0;
  for (int r = 0; r < (comm_ ? comm_->rank() : 0); ++r)
    offset += std::size_t(ck.rank_counts[std::size_t(r)]);
  return offset;
}

void Simulation::restore_particles(const checkpoint::Data& ck) {
  const HostParticles& all = ck.particles;
  n_global_ = all.size();
  const int ranks = comm_ ? comm_->size() : 1;
  if (ck.ranks != ranks && !resume_changed_)
    throw Error("checkpoint " + resume_file_ + " was written by a run of " +
                std::to_string(ck.ranks) + " rank(s); this one has " + std::to_string(ranks) +
                ": resume it with the same number of ranks" +
                (ck.ranks > 1 ? " (mpirun -np " + std::to_string(ck.ranks) + ")" : "") +
                ", or give --resume-changed to redistribute the particles (not bit for bit)");
  if (ck.ranks != ranks) {
    HostParticles copy = all;
    if (comm_) distribute(copy);
    store_->upload(copy);
    return;
  }
  const int me = comm_ ? comm_->rank() : 0;
  const std::size_t offset = rank_offset(ck);
  const std::size_t n = std::size_t(ck.rank_counts[std::size_t(me)]);
  HostParticles mine(all.dim);
  mine.resize(n);
  auto slice = [&](auto& dst, const auto& src) {
    dst.assign(src.begin() + std::ptrdiff_t(offset), src.begin() + std::ptrdiff_t(offset + n));
  };
  for (int d = 0; d < all.dim; ++d) {
    slice(mine.x[d], all.x[d]);
    slice(mine.v[d], all.v[d]);
    slice(mine.a[d], all.a[d]);
    slice(mine.image[d], all.image[d]);
  }
  slice(mine.mass, all.mass);
  slice(mine.type, all.type);
  slice(mine.id, all.id);
  for (const auto& [name, values] : all.labels) {
    std::vector<std::int32_t> part;
    slice(part, values);
    mine.labels.emplace_back(name, std::move(part));
  }
  store_->upload(mine);
}

void Simulation::restore_states(const checkpoint::Data& ck) {
  const bool exact_ranks = ck.ranks == (comm_ ? comm_->size() : 1);
  const std::size_t offset = exact_ranks ? rank_offset(ck) : 0;
  auto load = [&](const checkpoint::PluginState& st, const std::string& type, auto& object,
                  const std::string& what) {
    if (st.type != type) {
      // Only with --resume-changed (main compares the scenarios first).
      progress_->message("resume: " + what + " is now \"" + type + "\" (was \"" + st.type +
                         "\"): it starts without the saved state");
      return;
    }
    if (!exact_ranks && !st.vectors.empty()) {
      progress_->message("resume: " + what + " \"" + type + "\" starts afresh: its per-particle "
                         "state cannot follow particles to another number of ranks");
      return;
    }
    StateLoader in(st, resume_file_, *store_, *backend_.ops, offset, ck.particles.size());
    object.load(in, *this);
  };
  load(ck.integrator, scenario_.integrator.type, *integrator_, "the integrator");
  for (std::size_t k = 0; k < modifiers_.size(); ++k) {
    if (k >= ck.modifiers.size()) {
      progress_->message("resume: modifier " + std::to_string(k + 1) + " \"" +
                         scenario_.modifiers[k].type + "\" is new: it starts afresh");
      continue;
    }
    load(ck.modifiers[k], scenario_.modifiers[k].type, *modifiers_[k],
         "modifier " + std::to_string(k + 1));
  }
  // Verlet lists: built again from the positions the run that wrote the checkpoint built them
  // from, then the current positions are put back (without a new generation of the store, so the
  // list is kept until particles have moved far enough, exactly as in that run).
  if (domain_ || !exact_ranks) return;
  for (std::size_t k = 0; k < forces_.size() && k < ck.schemes.size(); ++k) {
    auto& f = forces_[k];
    if (!ck.schemes[k].vectors.count("built_at") || !f.scheme->reuses_structure()) continue;
    StateLoader in(ck.schemes[k], resume_file_, *store_, *backend_.ops, offset, ck.particles.size());
    auto now = backend_.ops->new_state(*store_);
    backend_.ops->get_state(*store_, *now);
    f.built_at = backend_.ops->new_state(*store_);
    built_at_size_ = store_->size();
    in.vector("built_at", *f.built_at);
    backend_.ops->set_state(*store_, *f.built_at);
    f.scheme->update(*store_, run_.box, f.potential->reach());
    backend_.ops->set_state(*store_, *now);
  }
}

Resume prepare_resume(const std::string& where, const std::string& file,
                      const std::vector<std::string>& overrides, Registry& registry,
                      bool allow_changes) {
  Resume r;
  std::vector<std::string> skipped;
  r.file = checkpoint::find(where, &skipped);
  for (const auto& why : skipped) r.notes.push_back("skipped " + why);
  auto data = std::make_shared<checkpoint::Data>(checkpoint::read(r.file));
  if (file.empty()) {
    ScenarioSource src{data->scenario_toml, data->scenario_dir};
    r.scenario = load_scenario(data->scenario_path, overrides, registry, &src);
  } else {
    r.scenario = load_scenario(file, overrides, registry);
  }
  std::vector<std::string> changed = scenario_changes(data->scenario_toml, r.scenario.resolved_toml);
  if (data->pardyn_version != PARDYN_VERSION_STRING || data->build_id != Registry::build_id())
    changed.push_back("the pardyn build (the checkpoint's: " + data->pardyn_version + ", " +
                      data->build_id + ")");
  if (!changed.empty() && !allow_changes) {
    std::string list;
    for (const auto& k : changed) list += "\n  " + k;
    throw Error("--resume " + r.file + ": the scenario differs from the checkpoint's in what the "
                "run's exact continuation depends on:" + list +
                "\nresume without these changes, or give --resume-changed to continue anyway (not "
                "bit for bit; the energy-drift reference starts afresh)");
  }
  for (const auto& k : changed) r.notes.push_back("changed on resume: " + k);
  r.output_dir = fs::path(r.file).parent_path().parent_path().string();
  r.data = std::move(data);
  return r;
}

void Simulation::Timing::lap(double* bucket) {
  if (!sample) return;
  if (cuda) cuda::synchronize("timing");
  const auto now = std::chrono::steady_clock::now();
  if (bucket) *bucket += std::chrono::duration<double>(now - last).count();
  last = now;
}

void Simulation::report_timing(std::uint64_t steps) {
  if (steps == 0 || loop_seconds_ <= 0) return;
  // Observations and checkpoints are timed whenever they happen. The per-step phases: on the CPU
  // every step is timed; on the GPU the sampled steps (slowed by the synchronisations) give each
  // phase's share of the rest of the loop.
  const double loop = loop_seconds_;
  double scale = timing_.sampled ? double(steps) / double(timing_.sampled) : 0.0;
  if (timing_.cuda && timing_.sampled) {
    double per_step = timing_.neighbour + timing_.comm + timing_.integrate + timing_.modifiers;
    for (double f : timing_.force) per_step += f;
    const double rest = loop - timing_.analysis - timing_.output - timing_.checkpoint;
    scale = per_step > 0 ? std::max(0.0, rest) / per_step : 0.0;
  }
  std::vector<std::pair<std::string, double>> rows;
  for (std::size_t k = 0; k < forces_.size(); ++k)
    rows.emplace_back("force " + run_.potential_labels[k], timing_.force[k] * scale);
  rows.emplace_back("neighbour build", timing_.neighbour * scale);
  rows.emplace_back("communication", timing_.comm * scale);
  rows.emplace_back("integration", timing_.integrate * scale);
  rows.emplace_back("modifiers", timing_.modifiers * scale);
  rows.emplace_back("analysis", timing_.analysis);
  rows.emplace_back("output", timing_.output);
  rows.emplace_back("checkpoints", timing_.checkpoint);
  double sum = 0;
  for (const auto& r : rows) sum += r.second;
  rows.emplace_back("other", std::max(0.0, loop - sum));
  char line[160];
  std::snprintf(line, sizeof line, "timing: %.4g s in the loop, %llu steps%s", loop,
                (unsigned long long)steps,
                backend_.backend == Backend::Cuda
                    ? (" (GPU: each step's phases in the shares measured on " +
                       std::to_string(timing_.sampled) + " steps with the device synchronised)")
                          .c_str()
                    : "");
  progress_->message(line);
  progress_->message("  section                      seconds   % loop");
  for (const auto& r : rows) {
    std::snprintf(line, sizeof line, "  %-26s %9.3f   %6.1f", r.first.c_str(), r.second,
                  100.0 * r.second / loop);
    progress_->message(line);
  }
}

std::string Simulation::non_finite_message() {
  std::string head = "the state has non-finite values (NaN or Inf) at step " + std::to_string(step_);
  if (step_ > 0)
    head += " (it was finite at step " + std::to_string(last_finite_step_) + ")";
  // What happened: the particles of this rank, on the host.
  HostParticles hp(run_.dim);
  store_->download(hp, ParticleStore::kPosition | ParticleStore::kVelocity |
                           ParticleStore::kAcceleration | ParticleStore::kMass | ParticleStore::kId);
  const int dim = run_.dim;
  auto where = [&](std::size_t i) {
    std::string s = "(";
    for (int d = 0; d < dim; ++d) s += (d ? ", " : "") + format_number(hp.x[d][i]);
    return s + ")";
  };
  // Two particles at one place: a law without softening divides by their distance, 0.
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < hp.size(); ++i) {
    bool finite = true;
    for (int d = 0; d < dim; ++d) finite = finite && std::isfinite(hp.x[d][i]);
    if (finite) order.push_back(i);
  }
  auto key = [&](std::size_t i, int d) { return hp.x[d][i]; };
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    for (int d = 0; d < dim; ++d)
      if (key(a, d) != key(b, d)) return key(a, d) < key(b, d);
    return a < b;
  });
  for (std::size_t k = 1; k < order.size(); ++k) {
    const std::size_t a = order[k - 1], b = order[k];
    bool same = true;
    for (int d = 0; d < dim; ++d) same = same && hp.x[d][a] == hp.x[d][b];
    if (!same) continue;
    return head + ": particles " + std::to_string(hp.id[a]) + " and " + std::to_string(hp.id[b]) +
           " are at the same place " + where(a) +
           ", where the force between them is infinite (a law without softening divides by their "
           "distance, 0)" +
           (step_ == 0 ? "; place them apart (the [[particles]] blocks or the file that made them) "
                         "or give the law a softening (eps > 0)"
                       : "; lower dt (they met in one step) or give the law a softening (eps > 0)") +
           non_finite_hint();
  }
  // The first particle with a non-finite position, else velocity, else acceleration.
  std::string who, what;
  for (const char* kind : {"position", "velocity", "acceleration"}) {
    const std::vector<double>* v = kind[0] == 'p' ? hp.x : kind[0] == 'v' ? hp.v : hp.a;
    for (std::size_t i = 0; i < hp.size() && who.empty(); ++i)
      for (int d = 0; d < dim && who.empty(); ++d)
        if (i < v[d].size() && !std::isfinite(v[d][i])) {
          who = "; particle " + std::to_string(hp.id[i]) + " has a non-finite " + kind;
          what = kind;
        }
    if (!who.empty()) break;
  }
  if (step_ == 0) {
    if (what == "acceleration")
      return head + ", before any step" + who +
             ": the forces of the initial positions overflow; are particles too close for a law "
             "without softening? Space them out or give the law a softening (eps > 0)";
    if (!what.empty())
      return head + ", before any step" + who +
             ": check the [[particles]] blocks (temperature, velocity, offset) and the generator's "
             "sizes";
    return head + ", before any step: every position, velocity and force is finite but the energy "
                  "sums overflow (velocities, masses, forces or potential parameters near 1e154 "
                  "or more); check the [[particles]] blocks and the [[potential]] parameters";
  }
  return head + who +
         "; the time step is probably too large for the closest encounters: lower dt or raise the "
         "softening" + non_finite_hint();
}

std::string Simulation::non_finite_hint() const {
  if (last_checkpoint_.empty()) return "";
  return "; the last checkpoint, " + last_checkpoint_ + " (step " +
         std::to_string(last_checkpoint_step_) +
         "), holds a finite state: continue from it with a smaller step, e.g. `pardyn run --resume " +
         last_checkpoint_ + " --resume-changed --set integrator.dt=...`";
}

void Simulation::write_checkpoint(const char* reason) {
  struct AddTime {
    double& to;
    std::chrono::steady_clock::time_point from = std::chrono::steady_clock::now();
    ~AddTime() { to += std::chrono::duration<double>(std::chrono::steady_clock::now() - from).count(); }
  } add_time{timing_.checkpoint};
  // Everything observed so far is on disk before the checkpoint that a resumed run trusts.
  for (auto& o : observers_) o->sync();
  const Reductions r = reduce_all();
  if (!r.finite)
    throw Error("the state has non-finite values (NaN or Inf) at step " + std::to_string(step_) +
                " (it was finite at step " + std::to_string(last_finite_step_) +
                "); no checkpoint is written of it" + non_finite_hint());
  checkpoint::Data d;
  d.pardyn_version = PARDYN_VERSION_STRING;
  d.build_id = Registry::build_id();
  d.plugin_abi = kPluginAbi;
  d.reason = reason;
  d.scenario_toml = scenario_.resolved_toml;
  d.scenario_path = fs::absolute(scenario_.path).lexically_normal().string();
  d.scenario_dir = scenario_.dir;
  d.output_dir = run_.output_dir;
  d.dim = run_.dim;
  d.box = run_.box;
  d.precision = run_.precision;
  d.backend = to_string(run_.backend);
  d.threads = omp_get_max_threads();
  d.ranks = comm_ ? comm_->size() : 1;
  d.step = step_;
  d.time = time_;
  d.last_dt = last_dt_;
  d.force_evaluations = force_evals_;
  d.last_finite_step = step_;
  d.have_e0 = have_e0_;
  d.e0 = e0_;
  std::copy(com0_, com0_ + 3, d.com0);
  HostParticles mine(run_.dim);
  store_->download(mine, ParticleStore::kPosition | ParticleStore::kVelocity |
                             ParticleStore::kAcceleration | ParticleStore::kType |
                             ParticleStore::kId | ParticleStore::kLabels | ParticleStore::kImage);
  if (comm_) {
    const auto all = comm_->gather(pack(mine));
    d.particles = HostParticles(run_.dim);
    for (const auto& b : all) {
      const std::size_t before = d.particles.size();
      unpack_append(b, d.particles);
      d.rank_counts.push_back(d.particles.size() - before);
    }
  } else {
    d.rank_counts.push_back(mine.size());
    d.particles = std::move(mine);
  }
  d.integrator.type = scenario_.integrator.type;
  StateSaver si(d.integrator, *store_, *backend_.ops, comm_);
  integrator_->save(si);
  for (std::size_t k = 0; k < modifiers_.size(); ++k) {
    d.modifiers.emplace_back();
    d.modifiers.back().type = scenario_.modifiers[k].type;
    StateSaver sm(d.modifiers.back(), *store_, *backend_.ops, comm_);
    modifiers_[k]->save(sm);
  }
  for (auto& f : forces_) {
    d.schemes.emplace_back();
    checkpoint::PluginState& st = d.schemes.back();
    st.type = "scheme";
    if (f.built_at && !domain_) {
      StateSaver ss(st, *store_, *backend_.ops, comm_);
      ss.vector("built_at", *f.built_at);
    }
  }
  const std::string path = checkpoint::path_for(run_.output_dir, step_);
  parallel::agree(comm_, [&] {
    if (run_.rank != 0) return;
    checkpoint::write(path, d);
    // Keep the newest `keep`.
    auto files = checkpoint::list(run_.output_dir);
    std::error_code ec;
    while (files.size() > ckpt_.keep) {
      fs::remove(files.front().second, ec);
      files.erase(files.begin());
    }
  });
  last_checkpoint_ = path;
  last_checkpoint_step_ = step_;
  have_checkpoint_step_ = true;
  ckpt_clock_ = std::chrono::steady_clock::now();
  // A domain decomposition's ghosts and the Verlet lists over them are chosen again at the next
  // evaluation, as they are in a run resumed from this checkpoint: both continue identically.
  // (Serial runs save where their Verlet lists were built instead: see restore_states.)
  if (domain_) store_->touch();
}

}  // namespace pardyn
