// SPDX-License-Identifier: BSD-3-Clause
// Particle set-up: the [[particles]] blocks generated (velocities, offsets, checks), each rank making
// only its part of them, the memory they need estimated, and each rank's share kept.
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

#include "io/checkpoint.hpp"
#include "simulation_parts.hpp"
#include "pardyn/cuda.hpp"
#include "pardyn/exact_sum.hpp"
#include "pardyn/generator_support.hpp"
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

// Adds thermal velocities at temperature T (k_B = 1) to hp, particles [first, first + hp.size()) of
// a block of n: each component Gaussian (Maxwell-Boltzmann, Box-Muller from two uniform numbers) or,
// with `uniform`, uniform in [-1, 1) times sqrt(3 T / m) (the same variance), from the block's
// thermal chunk streams (chunk_stream purpose 1), so that a particle gets the same numbers however
// the block is cut between ranks. The thermal part has zero net momentum and is rescaled to exactly
// T with dim*(n-1) degrees of freedom; its sums are exact and taken over every rank of comm (which
// hold the block's other particles), so the result is the same bit for bit as a serial run's.
void add_thermal_velocities(HostParticles& hp, std::uint64_t first, std::uint64_t n, double T,
                            std::uint64_t seed, std::uint64_t block, bool uniform, Comm* comm) {
  if (T <= 0 || n < 2) return;
  const int dim = hp.dim;
  const std::size_t m = hp.size();
  const std::uint64_t draws = std::uint64_t(uniform ? dim : 2 * dim);  // per particle
  std::vector<double> u[3];
  for (int d = 0; d < dim; ++d) u[d].resize(m);
  ExactSum sums[4];  // momentum per axis, mass
  std::size_t k = 0;
  while (k < m) {
    const std::uint64_t i = first + k, chunk = i / kGenerateChunk;
    std::mt19937_64 rng = chunk_stream(seed, block, chunk, 1);
    rng.discard(draws * (i - chunk * kGenerateChunk));  // the chunk's particles before this range
    const std::size_t stop =
        std::size_t(std::min<std::uint64_t>(m, (chunk + 1) * kGenerateChunk - first));
    for (; k < stop; ++k) {
      const double mass = hp.mass[k];
      sums[3].add(mass);
      for (int d = 0; d < dim; ++d) {
        double g = 0;
        if (uniform) {
          g = std::sqrt(3.0) * (2.0 * uniform01(rng) - 1.0);
        } else {
          const double u1 = 1.0 - uniform01(rng), u2 = uniform01(rng);  // u1 in (0, 1]
          g = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * kPi * u2);
        }
        u[d][k] = g * std::sqrt(T / mass);
        sums[d].add(mass * u[d][k]);
      }
    }
  }
  reduce(comm, sums, 4);
  const double mtot = sums[3].value();
  double p[3] = {0, 0, 0};
  for (int d = 0; d < dim; ++d) p[d] = sums[d].value() / mtot;
  ExactSum kinetic;
  for (std::size_t j = 0; j < m; ++j)
    for (int d = 0; d < dim; ++d) {
      u[d][j] -= p[d];
      kinetic.add(0.5 * hp.mass[j] * u[d][j] * u[d][j]);
    }
  reduce(comm, &kinetic, 1);
  const double target = 0.5 * dim * double(n - 1) * T;
  const double kin = kinetic.value();
  const double s = kin > 0 ? std::sqrt(target / kin) : 0.0;
  for (std::size_t j = 0; j < m; ++j)
    for (int d = 0; d < dim; ++d) hp.v[d][j] += s * u[d][j];
}

std::string generator_name(const ParticleBlock& pb) {
  return "generator \"" + pb.type + "\" (" + pb.where + ")";
}

// hp: particles [first, first + hp.size()) of the block, as the generator made them.
void check_generated(const HostParticles& hp, const ParticleBlock& pb, int dim,
                     std::uint64_t first) {
  const std::size_t n = hp.size();
  const std::string who = generator_name(pb);
  for (int d = 0; d < dim; ++d)
    if (hp.x[d].size() != n || (hp.v[d].size() != n && !hp.v[d].empty()))
      throw Error("internal: " + who + " returned arrays of mismatched length");
  for (std::size_t i = 0; i < n; ++i) {
    if (!(hp.mass[i] > 0) || !std::isfinite(hp.mass[i]))
      throw Error(who + ": particle " + std::to_string(first + i) + " has mass " +
                  format_number(hp.mass[i]) + "; masses must be positive and finite");
    for (int d = 0; d < dim; ++d)
      if (!std::isfinite(hp.x[d][i]))
        throw Error(who + ": particle " + std::to_string(first + i) + " has a non-finite position");
  }
}

// After the block's offset and bulk velocity are added: every position, velocity and mass is finite
// and, in a float run, within the range of a float (1e308 becomes inf in the store).
void check_representable(const HostParticles& hp, const ParticleBlock& pb, int dim,
                         Precision precision, std::uint64_t first) {
  const double limit = precision == Precision::Float ? double(std::numeric_limits<float>::max())
                                                     : std::numeric_limits<double>::max();
  const std::string who = "[[particles]] generator \"" + pb.type + "\" (" + pb.where + ")";
  auto check = [&](const std::vector<double>& v, const char* what, std::size_t i) {
    if (i < v.size() && !(std::fabs(v[i]) <= limit))
      throw Error(who + ": particle " + std::to_string(first + i) + " has " + what + " " +
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

// The particles of the blocks whose generators make their block whole (no particles()) that say how
// many they make (their `count`); a block without one (a file) adds nothing here and checks its own
// size when it runs.
double counted_whole_particles(const Scenario& sc, const std::vector<std::int64_t>& sizes) {
  double n = 0;
  for (std::size_t b = 0; b < sc.particles.size(); ++b)
    if (sizes[b] < 0 && sc.particles[b].params.has("count"))
      n += double(std::max<std::int64_t>(0, sc.particles[b].params.integer("count")));
  return n;
}

// What n particles need at least, checked before they are made (`generated`: the particles this
// rank's host makes, its part of the blocks and the blocks made whole, of which a block's and all
// blocks' copies exist together while they are placed) and again before the store takes them
// (generated = 0): the particle store and its second copy, which holds the accelerations while
// energies are computed, on this rank's backend. Neighbour schemes and integrators need more; the
// check refuses what cannot fit, it does not promise that the rest fits.
void check_particle_memory(double n, double generated, const ParticleStore& store, int ranks,
                           const std::string& what) {
  if (n > double(kMaxParticles))
    throw Error(what + " are " + format_number(n) + " particles; a run holds at most " +
                format_number(double(kMaxParticles)) + ": lower the [[particles]] counts");
  const double per_rank = n / std::max(1, ranks);
  const double stored = 2.0 * double(store.bytes_per_particle());
  const double host_made = generated > 0 ? 2.0 * (16.0 * store.dim() + 20.0) : 0.0;
  const bool device = store.backend() == Backend::Cuda;
  const double host = host_made * generated + (device ? 0.0 : stored * per_rank);
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

namespace {

// A block's particles [f, e) of a block made whole.
HostParticles slice(const HostParticles& whole, std::size_t f, std::size_t e) {
  HostParticles part(whole.dim);
  const std::size_t n = whole.size();
  auto cut = [&](auto& dst, const auto& src) {
    if (src.size() == n)
      dst.assign(src.begin() + std::ptrdiff_t(f), src.begin() + std::ptrdiff_t(e));
  };
  for (int d = 0; d < whole.dim; ++d) {
    cut(part.x[d], whole.x[d]);
    cut(part.v[d], whole.v[d]);
    cut(part.image[d], whole.image[d]);
  }
  cut(part.mass, whole.mass);
  cut(part.type, whole.type);
  return part;
}

// The ids [b, e) of n that rank `me` of `ranks` holds: contiguous blocks in proportion to the
// weights (none: equal blocks), in rank order.
std::pair<std::size_t, std::size_t> id_block(std::size_t n, int ranks, int me,
                                             std::vector<double> w) {
  if (w.empty()) w.assign(std::size_t(ranks), 1.0);
  double total = 0, before = 0;
  for (double v : w) total += v;
  for (int r = 0; r < me; ++r) before += w[std::size_t(r)];
  const std::size_t b = std::size_t(std::llround(double(n) * before / total));
  const std::size_t e =
      std::size_t(std::llround(double(n) * (before + w[std::size_t(me)]) / total));
  return {std::min(b, n), std::min(e, n)};
}

// A particle as it travels to the rank whose sub-box holds it.
struct Record {
  std::int64_t id;
  double x[3], v[3], mass;
  std::int32_t type;
  std::int32_t image[3];
};

// The [[particles]] blocks about to be made: their generators, their sizes, and the blocks of
// generators without ranges, made whole.
struct Blocks {
  std::vector<std::shared_ptr<Generator>> gens;
  std::vector<std::int64_t> sizes;  // -1 until known
  std::vector<HostParticles> whole;
};

GenerateContext block_context(const Scenario& sc, std::size_t b) {
  GenerateContext ctx;
  ctx.dim = sc.dim;
  ctx.box = &sc.box;
  ctx.base_dir = sc.dir;
  ctx.seed = sc.seed;
  ctx.block = b;
  return ctx;
}

// The generators and the sizes of the blocks made in ranges (the memory they need checked); then the
// blocks of generators without ranges, made whole on every rank from one stream each (ctx.rng,
// drawn in sequence).
Blocks prepare_blocks(const Scenario& sc, const Registry& registry, const RunInfo& run,
                      parallel::Communicator* comm, const ParticleStore& store) {
  const std::size_t blocks = sc.particles.size();
  const int ranks = comm ? comm->size() : 1;
  Blocks bl;
  bl.gens.resize(blocks);
  bl.sizes.assign(blocks, -1);
  bl.whole.assign(blocks, HostParticles(sc.dim));
  parallel::agree(comm, [&] {
    double ranged = 0;
    for (std::size_t b = 0; b < blocks; ++b) {
      const ParticleBlock& pb = sc.particles[b];
      bl.gens[b] = registry.make_generator(pb.type, pb.params, run);
      bl.sizes[b] = bl.gens[b]->particles(block_context(sc, b));
      if (bl.sizes[b] == 0)
        throw Error(generator_name(pb) + " produced no particles; check its count");
      if (bl.sizes[b] > 0) ranged += double(bl.sizes[b]);
    }
    const double whole = counted_whole_particles(sc, bl.sizes);
    check_particle_memory(ranged + whole, ranged / ranks + whole, store, ranks,
                          "the [[particles]] blocks' counts");
  });
  for (std::size_t b = 0; b < blocks; ++b) {
    if (bl.sizes[b] >= 0) continue;
    const ParticleBlock& pb = sc.particles[b];
    HostParticles& hp = bl.whole[b];
    parallel::agree(comm, [&] {
      std::seed_seq seq{std::uint64_t(sc.seed), std::uint64_t(b), std::uint64_t(0x9e3779b9)};
      std::mt19937_64 rng(seq);
      GenerateContext ctx = block_context(sc, b);
      ctx.rng = &rng;
      hp = bl.gens[b]->generate(ctx);
      hp.dim = sc.dim;
      if (hp.size() == 0)
        throw Error(generator_name(pb) + " produced no particles; check its count");
      check_generated(hp, pb, sc.dim, 0);
    });
    bl.sizes[b] = std::int64_t(hp.size());
  }
  return bl;
}

// Particles [f, e) of block b, finished: made by its generator (or cut from the block made whole,
// which is then freed), checked, moved by the block's offset and velocity, typed, given thermal
// velocities, and numbered from `id0` (the block's first id). Every rank calls it for every block,
// in order, also for an empty range: the generator and the thermal velocities sum over all ranks.
HostParticles make_block_part(const Scenario& sc, std::size_t b, Blocks& bl, std::size_t f,
                              std::size_t e, std::size_t id0, parallel::Communicator* comm) {
  const ParticleBlock& pb = sc.particles[b];
  const std::size_t n = std::size_t(bl.sizes[b]);
  HostParticles hp(sc.dim);
  const bool made_whole = bl.whole[b].size() > 0;
  parallel::agree(comm, [&] {
    if (made_whole) {
      hp = slice(bl.whole[b], f, e);
      bl.whole[b] = HostParticles(sc.dim);
    } else {
      GenerateContext ctx = block_context(sc, b);
      ctx.first = f;
      ctx.count = e - f;
      ctx.comm = comm;
      hp = bl.gens[b]->generate(ctx);
      hp.dim = sc.dim;
      if (hp.size() != e - f)
        throw Error("internal: " + generator_name(pb) + " made " + std::to_string(hp.size()) +
                    " particles for the range " + std::to_string(f) + " .. " + std::to_string(e) +
                    " of its block");
    }
    check_generated(hp, pb, sc.dim, f);
  });
  bl.gens[b].reset();
  const std::size_t m = hp.size();
  for (int d = 0; d < sc.dim; ++d) {
    if (hp.v[d].empty()) hp.v[d].assign(m, 0.0);
    for (std::size_t i = 0; i < m; ++i) {
      if (!pb.offset.empty()) hp.x[d][i] += pb.offset[d];
      if (!pb.velocity.empty()) hp.v[d][i] += pb.velocity[d];
    }
  }
  if (hp.type.size() != m) hp.type.assign(m, 0);
  // A generator may give some particles their own type (the galaxy's central body); the block's
  // type is added to it.
  for (auto& t : hp.type) t += pb.particle_type;
  add_thermal_velocities(hp, f, n, pb.temperature, sc.seed, b, pb.uniform_velocities, comm);
  parallel::agree(comm, [&] { check_representable(hp, pb, sc.dim, sc.precision, f); });
  hp.id.resize(m);
  for (std::size_t i = 0; i < m; ++i) hp.id[i] = std::int64_t(id0 + f + i);
  return hp;
}

}  // namespace

// Every rank makes only its part of the particles: the ids [lo, hi) of the whole run in serial
// order (a contiguous block; with the all-pairs ring, exactly the block it keeps). A generator that
// makes ranges (Generator::particles) makes each block's part from the block's chunk streams; one
// that makes its block whole does so on every rank, and the rank keeps its part. Then the block's
// offset, velocity and thermal velocities (from chunk streams too, their sums over all ranks). With
// a domain decomposition the particles then go to the ranks whose sub-boxes hold them. The particles
// are the same bit for bit however many ranks share the work.
void Simulation::generate(const Scenario& sc, const Registry& registry) {
  const int ranks = comm_ ? comm_->size() : 1, me = comm_ ? comm_->rank() : 0;
  SetupStats& st = setup_stats_;
  st = SetupStats{};
  Blocks bl = prepare_blocks(sc, registry, run_, comm_, *store_);
  std::size_t held = 0;  // particles in this rank's host arrays now
  for (const HostParticles& w : bl.whole) st.whole += w.size();
  auto hold = [&](std::size_t more) {
    held += more;
    st.peak = std::max(st.peak, held);
  };
  hold(st.whole);

  std::size_t total = 0;
  for (std::int64_t n : bl.sizes) total += std::size_t(n);
  n_global_ = total;
  check_particle_memory(double(n_global_), 0.0, *store_, run_.ranks, "the generated particles");
  // rank_weights size the ring's blocks (and are for as many ranks as this run has only then).
  const bool weighted = comm_ && !domain_;
  const auto [lo, hi] =
      id_block(total, ranks, me, weighted ? scenario_.rank_weights : std::vector<double>{});
  st.first = lo;
  st.generated = hi - lo;

  // The part of each block in [lo, hi). When one block holds all of them (the usual case), its part
  // becomes the rank's particles; else the parts are copied one by one into place.
  const std::size_t blocks = sc.particles.size();
  std::vector<std::pair<std::size_t, std::size_t>> part(blocks);
  std::size_t offset = 0, parts = 0;
  for (std::size_t b = 0; b < blocks; ++b) {
    const std::size_t n = std::size_t(bl.sizes[b]);
    part[b] = {std::clamp(lo, offset, offset + n) - offset,
               std::clamp(hi, offset, offset + n) - offset};
    if (part[b].second > part[b].first) ++parts;
    offset += n;
  }
  HostParticles all(sc.dim);
  if (parts > 1) {
    all.resize(hi - lo);
    hold(hi - lo);
  }
  std::size_t at = 0;
  offset = 0;
  for (std::size_t b = 0; b < blocks; ++b) {
    const std::size_t whole = bl.whole[b].size();
    const auto [f, e] = part[b];
    HostParticles hp = make_block_part(sc, b, bl, f, e, offset, comm_);
    hold(hp.size());
    held -= whole;
    if (parts > 1) {
      all.assign_at(at, hp);
      held -= hp.size();
    } else if (e > f) {
      all = std::move(hp);
    }
    at += e - f;
    offset += std::size_t(bl.sizes[b]);
  }
  // The domain's sub-boxes, or a tree term's pieces of the Morton curve, own the particles.
  if (domain_ || morton_) exchange_by_position(all);
  st.share = all.size();
  if (comm_ && std::getenv("PARDYN_PARALLEL_STATS"))
    std::fprintf(stderr,
                 "rank %d of %d: generated ids %zu .. %zu, kept %zu, sent %zu, received %zu; the "
                 "host arrays held at most %zu particles while they were made (%zu of blocks "
                 "made whole)\n",
                 me, ranks, st.first, st.first + st.generated, st.share, st.sent, st.received,
                 st.peak, st.whole);
  store_->upload(all);
}

void Simulation::exchange_by_position(HostParticles& mine) {
  SetupStats& st = setup_stats_;
  const int ranks = comm_->size(), me = comm_->rank();
  const std::size_t n = mine.size();
  const Box& box = run_.box;
  // Where each particle goes: the rank whose sub-box holds it (periodic axes wrapped first).
  // (Without a domain: the rank whose piece of the Morton curve holds it, for the tree exchange.)
  std::vector<int> to =
      domain_ ? std::vector<int>(n)
              : parallel::morton_owners(mine.x, run_.dim, n, *comm_, scenario_.rank_weights);
  std::vector<std::size_t> count(std::size_t(ranks), 0);
  for (std::size_t i = 0; i < n; ++i) {
    if (domain_) {
      double x[3] = {0, 0, 0};
      for (int d = 0; d < run_.dim; ++d) {
        x[d] = mine.x[d][i];
        if (box.boundary[d] == Boundary::Periodic)
          x[d] -= box.length(d) * std::floor((x[d] - box.lo[d]) / box.length(d));
      }
      to[i] = domain_->owner(x);
    }
    ++count[std::size_t(to[i])];
  }
  // Packed in id order, one message per rank (this rank's own among them), then the arrays freed:
  // the host holds at most twice the larger of the generated block and the share it ends with.
  std::vector<std::vector<char>> send(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r)
    send[std::size_t(r)].reserve(count[std::size_t(r)] * sizeof(Record));
  const bool images = mine.image[0].size() == n;
  for (std::size_t i = 0; i < n; ++i) {
    Record rec{};
    rec.id = mine.id[i];
    for (int d = 0; d < mine.dim; ++d) {
      rec.x[d] = mine.x[d][i];
      rec.v[d] = mine.v[d][i];
      rec.image[d] = images ? mine.image[d][i] : 0;
    }
    rec.mass = mine.mass[i];
    rec.type = mine.type[i];
    auto& buf = send[std::size_t(to[i])];
    const char* p = reinterpret_cast<const char*>(&rec);
    buf.insert(buf.end(), p, p + sizeof rec);
  }
  st.peak = std::max(st.peak, 2 * n);
  for (int r = 0; r < ranks; ++r)
    if (r != me) st.sent += count[std::size_t(r)];
  mine = HostParticles(mine.dim);
  std::vector<int>().swap(to);
  auto got = comm_->alltoallv(std::move(send));
  std::size_t received = 0, total = 0;
  for (int r = 0; r < ranks; ++r) {
    const std::size_t k = got[std::size_t(r)].size() / sizeof(Record);
    total += k;
    if (r != me) received += k;
  }
  st.received = received;
  st.peak = std::max(st.peak, n + received);
  // Unpacked in rank order, which is id order: every rank generated a contiguous block of ids.
  mine.resize(total);
  st.peak = std::max(st.peak, 2 * total);
  std::size_t at = 0;
  for (auto& buf : got) {
    const std::size_t k = buf.size() / sizeof(Record);
    for (std::size_t j = 0; j < k; ++j, ++at) {
      Record rec;
      std::memcpy(&rec, buf.data() + j * sizeof(Record), sizeof rec);
      mine.id[at] = rec.id;
      for (int d = 0; d < mine.dim; ++d) {
        mine.x[d][at] = rec.x[d];
        mine.v[d][at] = rec.v[d];
        mine.image[d][at] = rec.image[d];
      }
      mine.mass[at] = rec.mass;
      mine.type[at] = rec.type;
    }
    std::vector<char>().swap(buf);
  }
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
    const auto [b, e] = id_block(n, K, me, scenario_.rank_weights);
    const std::vector<std::size_t> order =
        morton_ ? parallel::morton_order(all.x, run_.dim, n) : std::vector<std::size_t>();
    for (std::size_t i = b; i < e; ++i) keep.push_back(morton_ ? order[i] : i);
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
