// Particle set-up: the [[particles]] blocks generated (velocities, offsets, checks), the
// memory they need estimated, and each rank's share kept.
#include "pardyn/app/simulation.hpp"

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
#include "simulation_parts.hpp"
#include "pardyn/cuda.hpp"
#include "pardyn/math.hpp"
#include "pardyn/app/memory.hpp"
#include "pardyn/output.hpp"
#include "parallel/communicator.hpp"
#include "parallel/domain.hpp"
#include "parallel/ring.hpp"
#include "parallel/store_ops.hpp"
#include "parallel/tree_exchange.hpp"

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
                  (std::isfinite(v[i])
                       ? ", beyond the range of precision " + std::string(to_string(precision)) +
                             " (" + format_number(limit) + ")"
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
                "neighbour schemes and integrators need more); " +
                bytes_text(double(d.free_memory)) + " is free on GPU " + std::to_string(d.id) +
                " (" + d.name +
                "): lower the [[particles]] counts, run on several GPUs (mpirun), or set "
                "[simulation] backend = \"cpu\"");
}

}  // namespace

// The particles: generated (or restored from the checkpoint of a resumed run), and the walls'
// boundary settled against the box.
void Simulation::make_particles(const Scenario& sc, const Registry& registry) {
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
    throw Error(
        "a walls potential is given but no axis of [box] has boundary \"wall\"; set "
        "boundary = \"wall\" (or one value per axis) in [box]");
  if (wall_axis) {
    has_walls_ = true;
    if (!boundary_) {
      // boundary = "wall" without a walls potential: the walls plugin's defaults (elastic mirror
      // walls), enforced but not among the force terms.
      const FactoryInfo* walls = registry.find(PluginKind::Potential, "walls");
      if (!walls)
        throw Error(
            "[box] has boundary \"wall\", but the walls plugin that enforces it is not "
            "installed");
      boundary_ = registry.make_potential("walls", parse_params(walls->schema, "", "walls"), run_);
    }
    momentum_conserved_ = false;
    check_inside_walls();
  }
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
    // Contiguous blocks, by the weights given or equal: of the ids, or with a tree term of the
    // particles along a Morton curve, so that each rank holds a compact piece of space and sends
    // the others little of its tree (parallel/tree_exchange.hpp).
    std::vector<double> w = scenario_.rank_weights;
    if (w.empty()) w.assign(std::size_t(K), 1.0);
    double total = 0, before = 0;
    for (double v : w) total += v;
    for (int r = 0; r < me; ++r) before += w[std::size_t(r)];
    const std::size_t b = std::size_t(std::llround(double(n) * before / total));
    const std::size_t e =
        std::size_t(std::llround(double(n) * (before + w[std::size_t(me)]) / total));
    const std::vector<std::size_t> order =
        morton_ ? parallel::morton_order(all.x, run_.dim, n) : std::vector<std::size_t>();
    for (std::size_t i = b; i < std::min(e, n); ++i) keep.push_back(morton_ ? order[i] : i);
    if (morton_) std::sort(keep.begin(), keep.end());  // ids in order within the rank
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

}  // namespace pardyn
