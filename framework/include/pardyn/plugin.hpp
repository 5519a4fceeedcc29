// SPDX-License-Identifier: BSD-3-Clause
// The plugin SDK: the interfaces a plugin implements, the registry it adds factories to, and the
// descriptor every plugin library exports. No template crosses the library boundary: plugins hand the
// framework factories of objects behind these virtual interfaces.
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "pardyn/box.hpp"
#include "pardyn/core.hpp"
#include "pardyn/params.hpp"
#include "pardyn/particles.hpp"
#include "pardyn/version.hpp"

namespace pardyn {

// ---------------------------------------------------------------------------------------------------
// The ranks of a parallel (MPI) run, as plugins see them: collective operations that every rank must
// call together, in the same order. A serial run has no communicator (RunInfo::comm is null).
class Comm {
 public:
  virtual ~Comm() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // In place, over all ranks: element-wise sums and maxima.
  virtual void sum(double* values, std::size_t n) = 0;
  virtual void max(double* values, std::size_t n) = 0;
  // In place, over all ranks: element-wise sums of 64-bit integers (exact; ExactSum's reduction).
  virtual void sum(std::int64_t* values, std::size_t n) = 0;
  // Rank 0 gets every rank's bytes, in rank order (its own first); the other ranks get nothing.
  virtual std::vector<std::vector<char>> gather(const std::vector<char>& mine) = 0;
  // Every rank sends send[r] to rank r (send has size() entries, any of them empty) and gets, in
  // rank order, the bytes each rank sent it (its own send[rank()] among them, moved, not copied).
  // Pass the messages with std::move: they are freed once sent.
  virtual std::vector<std::vector<char>> alltoallv(std::vector<std::vector<char>> send) = 0;
  virtual void barrier() = 0;
};

// What every plugin object can know about the run.
struct RunInfo {
  int dim = 3;
  Precision precision = Precision::Double;
  Backend backend = Backend::Cpu;
  Box box;
  std::uint64_t seed = 1;
  std::string output_dir;    // the run's output folder (created before observers start)
  std::string scenario_dir;  // folder of the scenario file, for relative paths
  bool quiet = false;
  double end_time = 0;  // [simulation] end_time (0: none); adaptive integrators end on it
  // Parallel runs (mpirun): this process's rank and the number of ranks. Each rank's store holds
  // only the particles it owns; observers see those, and rank 0 writes the files that are one per
  // run (thermo, the .pvd series). comm is null in a serial run.
  int rank = 0;
  int ranks = 1;
  Comm* comm = nullptr;
  // A run resumed from a checkpoint (pardyn run --resume) continues after step `resume_step` at
  // time `resume_time`: observers keep what their files hold up to that step and drop the rest
  // (rows written by the run that died after its checkpoint). Fresh runs: resume = false.
  bool resume = false;
  std::uint64_t resume_step = 0;
  double resume_time = 0;
  // Filled by the framework before observers begin (empty when plugins are made):
  std::vector<std::string> potential_labels;  // one per [[potential]]: its energy column in thermo
  std::vector<std::string> extra_columns;  // thermo columns added by analyses (Observer::columns)
};

// Sums over all particles, in double with compensated summation (see compensated.hpp).
struct Reductions {
  std::size_t n = 0;
  double mass = 0;
  double kinetic = 0;
  double potential = 0;
  double virial = 0;
  double momentum[3] = {0, 0, 0};
  double angular_momentum[3] = {0, 0, 0};  // 2D: only [2] (L_z) is used
  double mass_moment[3] = {0, 0, 0};       // sum m x (centre of mass = mass_moment / mass)
  double image_moment[3] = {0, 0, 0};      // sum m image: the unwrapped sum m x adds this times L
  double max_accel = 0;                    // max |a|
  bool finite = true;                      // no NaN/Inf in positions, velocities, accelerations
};

// Particle-shaped vectors for multi-stage integrators: one value per particle and component of the
// state (x, v), i.e. 2·dim arrays of N values in the store's precision, in the backend's memory.
class StateVector {
 public:
  virtual ~StateVector() = default;
};

// Element-wise operations on the particle store, implemented once per backend. Integrators and
// modifiers are written against these so that the same plugin runs on the CPU and the GPU.
//
// In a parallel run each rank's store holds only its own particles. The reductions a plugin acts on
// (reduce, kinetic_energy, error_norm) are therefore taken over every particle of the run, summed
// (or maximised) over the ranks, so that a thermostat or an adaptive step acts on the run's value
// and every rank acts alike; they are collective: every rank calls them together, as it does from
// Integrator::step and Modifier::apply. What a rank holds alone is named as such (rank_*).
class BackendOps {
 public:
  virtual ~BackendOps() = default;
  // --- state vectors (multi-stage integrators) ---
  virtual std::unique_ptr<StateVector> new_state(const ParticleStore& s) = 0;
  virtual void get_state(const ParticleStore& s, StateVector& y) = 0;       // y = (x, v)
  virtual void set_state(ParticleStore& s, const StateVector& y) = 0;       // (x, v) = y
  virtual void get_derivative(const ParticleStore& s, StateVector& k) = 0;  // k = (v, a)
  // (x, v) = y + sum_i c[i] k[i], for m <= 8 terms.
  virtual void set_combination(ParticleStore& s, const StateVector& y, int m, const double* c,
                               const StateVector* const* k) = 0;
  // --- element-wise ---
  virtual void kick(ParticleStore& s, double dt) = 0;   // v += a dt
  virtual void drift(ParticleStore& s, double dt) = 0;  // x += v dt
  virtual void scale_velocities(ParticleStore& s, double factor) = 0;
  virtual void zero_forces(ParticleStore& s, bool energy, bool virial) = 0;
  // Maps positions on periodic axes back into the box.
  virtual void wrap_periodic(ParticleStore& s, const Box& box) = 0;
  // --- thermostats ---
  // Langevin (Ornstein-Uhlenbeck) velocity update: v = c1 v + sqrt((1 - c1^2) T / m) xi, xi a
  // standard normal from a counter-based generator keyed by (seed, step, particle id, axis): the same
  // numbers on every backend and thread count.
  virtual void langevin(ParticleStore& s, double c1, double T, std::uint64_t seed,
                        std::uint64_t step) = 0;

  // --- reductions over every particle of the run (all ranks; collective) ---
  Reductions reduce(const ParticleStore& s);
  // The kinetic energy alone (sum m v^2 / 2, in double): what a thermostat needs at every step,
  // without the other sums of reduce().
  double kinetic_energy(const ParticleStore& s);
  // The scaled error of an embedded Runge-Kutta pair: the largest, over particles and components,
  // of |sum_i e[i] k[i]| / (atol + rtol max(|y|, |(x, v) of the store|)).
  double error_norm(const ParticleStore& s, const StateVector& y, int m, const double* e,
                    const StateVector* const* k, double atol, double rtol);

  // --- the same over this rank's particles alone (what each backend implements) ---
  virtual Reductions rank_reduce(const ParticleStore& s) = 0;
  virtual double rank_kinetic_energy(const ParticleStore& s) { return rank_reduce(s).kinetic; }
  virtual double rank_error_norm(const ParticleStore& s, const StateVector& y, int m,
                                 const double* e, const StateVector* const* k, double atol,
                                 double rtol) = 0;

  // The ranks the reductions run over, set by the framework (null: this process alone).
  Comm* comm() const { return comm_; }
  void set_comm(Comm* comm) { comm_ = comm; }

 private:
  Comm* comm_ = nullptr;
};

// Adds a rank's sums to the other ranks' (in place, on every rank; collective). Nothing without a
// communicator.
inline void sum_over_ranks(Reductions& r, Comm* comm) {
  if (!comm) return;
  double v[17] = {double(r.n), r.mass, r.kinetic, r.potential, r.virial};
  for (int d = 0; d < 3; ++d) {
    v[5 + d] = r.momentum[d];
    v[8 + d] = r.angular_momentum[d];
    v[11 + d] = r.mass_moment[d];
    v[14 + d] = r.image_moment[d];
  }
  comm->sum(v, 17);
  double m[2] = {r.max_accel, r.finite ? 0.0 : 1.0};
  comm->max(m, 2);
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
}

inline Reductions BackendOps::reduce(const ParticleStore& s) {
  Reductions r = rank_reduce(s);
  sum_over_ranks(r, comm_);
  return r;
}

inline double BackendOps::kinetic_energy(const ParticleStore& s) {
  double k = rank_kinetic_energy(s);
  if (comm_) comm_->sum(&k, 1);
  return k;
}

inline double BackendOps::error_norm(const ParticleStore& s, const StateVector& y, int m,
                                     const double* e, const StateVector* const* k, double atol,
                                     double rtol) {
  double worst = rank_error_norm(s, y, m, e, k, atol, rtol);
  if (comm_) comm_->max(&worst, 1);
  return worst;
}

// ---------------------------------------------------------------------------------------------------
// Neighbourhoods: what a spatial scheme builds and a potential's traversal consumes.
enum class NeighbourhoodKind { AllPairs, CellList, Tree };
inline const char* to_string(NeighbourhoodKind k) {
  switch (k) {
    case NeighbourhoodKind::CellList: return "cell_list";
    case NeighbourhoodKind::Tree: return "tree";
    default: return "all_pairs";
  }
}

struct Neighbourhood {
  NeighbourhoodKind kind = NeighbourhoodKind::AllPairs;
  // The structure of that kind. All-pairs: null (every pair of the store), or a SourceBlock (the
  // all-pairs ring of a parallel run: the block's particles act on every particle of the store).
  const void* data = nullptr;
};

// Particles of another rank passing by in the all-pairs ring: sources only, none of them is a
// particle of the store, so no pair is skipped as a self pair. Backend memory (device memory for a
// CUDA store), in the store's precision.
struct SourceBlock {
  std::size_t n = 0;
  const void* pos = nullptr;  // [n] records of 4 reals: {x, y, z, m} in 3D, {x, y, m, 0} in 2D
  const std::int32_t* type = nullptr;  // [n]
};

// How far a force law reaches, what a scheme is told at every update.
//   cutoff:      pairs farther apart than this do not interact (infinity: a long-range law);
//   short_range: a long-range law's short-range radius: beyond it the law equals its far-field
//                form (soft_gas: the core repulsion acts inside it); 0 when the law has none. A
//                scheme that approximates distant particles (tree, cell_list far zones) must treat
//                every pair closer than this exactly.
//   comm, ghost_reach: set by the framework for a long-range law under a domain decomposition (a
//                parallel run whose cell-list terms cut the box into sub-boxes): the store then
//                holds the rank's particles [0, targets()) followed by ghosts, every particle of
//                the other ranks within ghost_reach of a target among them. A scheme serves the
//                rest through what the ranks sum together over comm (the cell list's far zones
//                do). Null and 0 otherwise.
struct Reach {
  double cutoff = std::numeric_limits<double>::infinity();
  double short_range = 0;
  Comm* comm = nullptr;
  double ghost_reach = 0;
};

struct ForceRequest {
  bool energy = false;  // fill epot (per-particle potential energy)
  bool virial = false;  // fill virial
  const Box* box = nullptr;
};

// A force law. Built-in pair laws use PairPotential<Law> (pair_potential.hpp): the physics in one
// evaluator, the loops from the framework.
class Potential {
 public:
  virtual ~Potential() = default;
  // Adds this law's accelerations (and energies/virials when asked) to the store.
  virtual void compute(ParticleStore& s, const Neighbourhood& nb, const ForceRequest& req) = 0;
  // Interaction range; infinity for long-range laws.
  virtual double cutoff() const { return std::numeric_limits<double>::infinity(); }
  // The cut-off and the short-range radius together (what schemes are updated with).
  virtual Reach reach() const { return Reach{cutoff(), 0.0}; }
  virtual bool supports(NeighbourhoodKind k) const = 0;
  // Why supports(k) is false, in words a user can act on (empty: the framework says it generically).
  virtual std::string unsupported_reason(NeighbourhoodKind) const { return {}; }
  // An external potential (a field acting on each particle alone: uniform_field, soft walls) breaks
  // momentum conservation; the temperature's degrees of freedom then keep the centre-of-mass ones.
  virtual bool external() const { return false; }
  // --- A boundary condition the potential enforces (the walls plugin: hard walls on the faces of
  // the axes whose boundary is "wall"). The framework calls the hooks of at most one such potential
  // of a run; with "wall" axes and none given, it makes the "walls" potential with its defaults.
  virtual bool enforces_boundaries() const { return false; }
  // Before a drift x += v dt (StepContext::drift), on the store's backend.
  virtual void before_drift(ParticleStore&, const Box&, double /*dt*/) {}
  // After the positions changed (a drift, a restart), once periodic axes are wrapped: puts every
  // particle back inside the boundaries.
  virtual void apply_boundaries(ParticleStore&, const Box&) {}
  // Why this potential changes the total energy (e.g. inelastic walls), for the note on dE/E0 in
  // thermo; empty when it conserves it.
  virtual std::string energy_note() const { return {}; }
};

// A spatial scheme: builds (and keeps up to date) the neighbourhood structure of one kind.
class Scheme {
 public:
  virtual ~Scheme() = default;
  virtual void update(ParticleStore& s, const Box& box, const Reach& reach) = 0;
  virtual Neighbourhood neighbourhood() const = 0;
  // Checkpoints: whether update() may reuse what an earlier call built (a Verlet list, rebuilt only
  // once particles have moved far enough), and whether the last call built anew. The framework
  // keeps the positions of the last build, so that a resumed run rebuilds the very structure the
  // run it continues was using and both go on identically. Schemes that build at every update
  // keep the defaults.
  virtual bool reuses_structure() const { return false; }
  virtual bool rebuilt() const { return true; }
};

// What integrators and modifiers see of the running simulation.
class StepContext {
 public:
  virtual ~StepContext() = default;
  virtual ParticleStore& store() = 0;
  virtual BackendOps& ops() = 0;
  virtual const RunInfo& run() const = 0;
  // Evaluates the whole force field at the current positions into the store's accelerations (and, on
  // steps where an observer needs them, energies and virials). Counted as one force evaluation.
  virtual void compute_forces() = 0;
  // The same for an intermediate stage of a multi-stage method: forces only, never energies, which
  // are wanted only at the step's final state. Integrators call compute_forces() for that one.
  virtual void compute_stage_forces() { compute_forces(); }
  // Wraps periodic axes and applies boundary conditions after positions changed.
  virtual void apply_boundaries() = 0;
  // x += v dt with the boundaries: the boundary potential's before_drift() before (a-priori wall
  // flips), apply_boundaries() after. Integrators that drift use this rather than ops().drift() so
  // that boundaries work with every integrator.
  virtual void drift(double dt) {
    ops().drift(store(), dt);
    apply_boundaries();
  }
  virtual std::uint64_t step() const = 0;  // the step being taken (1 for the first)
  virtual double time() const = 0;         // simulation time at the start of this step
  // The size of this step; in Modifier::apply(), the step the integrator has just taken (thermostats
  // need it for their relaxation factors).
  virtual double dt() const = 0;
  // Degrees of freedom of the temperature T = 2 K / dof (k_B = 1), as thermo reports it: dim N, less
  // dim when total momentum is conserved (no walls, external fields or Langevin noise).
  virtual double dof() const = 0;
};

// Checkpoints (docs/checkpoints.md): what an integrator or modifier keeps from one step to the next,
// saved by name and restored before the first step of a resumed run, so that the run continues bit
// for bit. Values are saved exactly (doubles, 64-bit integers, state vectors in the store's
// precision); the framework gathers state vectors over the ranks of a parallel run.
class StateOut {
 public:
  virtual ~StateOut() = default;
  virtual void real(const std::string& name, double v) = 0;
  virtual void integer(const std::string& name, std::int64_t v) = 0;
  // A particle-shaped vector of the current store (StateVector of BackendOps::new_state).
  virtual void vector(const std::string& name, const StateVector& y) = 0;
};
class StateIn {
 public:
  virtual ~StateIn() = default;
  // Each throws an Error naming the checkpoint file when the value is missing.
  virtual double real(const std::string& name) = 0;
  virtual std::int64_t integer(const std::string& name) = 0;
  // Fills y (made by BackendOps::new_state for the current store) with the saved vector.
  virtual void vector(const std::string& name, StateVector& y) = 0;
  virtual bool has(const std::string& name) const = 0;
};

class Integrator {
 public:
  virtual ~Integrator() = default;
  // Advances the state by one step; forces in the store are valid for the current positions on entry
  // and must be valid for the new positions on exit.
  virtual void step(StepContext& ctx) = 0;
  // The step the next call to step() will take (for adaptive methods, the current estimate).
  virtual double dt() const = 0;
  // The step the last call to step() took (adaptive methods: the accepted step).
  virtual double last_dt() const { return dt(); }
  // Sets the step of a fixed-step method (the framework's acceleration criterion uses it). Adaptive
  // methods choose their own and ignore it.
  virtual void set_dt(double) {}
  // Whether the method controls its step itself (the framework then leaves dt alone).
  virtual bool adaptive() const { return false; }
  // Whether the method keeps per-particle values between force evaluations (state vectors: Runge-
  // Kutta stages, a multistep history). Such a method cannot run where particles move between ranks
  // during a step (domain decomposition); the framework refuses that combination.
  virtual bool particle_state() const { return false; }
  // Rejected steps so far (adaptive methods), reported in thermo.
  virtual std::uint64_t rejected_steps() const { return 0; }
  // Checkpoints: everything step() keeps between calls besides the store (the step a method chose,
  // a multistep history, counters). load() is called on a fresh object, with the store already
  // holding the saved particles and accelerations; ctx gives it the store and the backend's
  // operations to allocate state vectors.
  virtual void save(StateOut&) const {}
  virtual void load(StateIn&, StepContext&) {}
};

class Modifier {
 public:
  virtual ~Modifier() = default;
  virtual void apply(StepContext& ctx) = 0;  // after each integrator step
  // Whether total momentum survives apply() (a Langevin thermostat's random kicks do not).
  virtual bool conserves_momentum() const { return true; }
  // Checkpoints: the modifier's state between steps (see Integrator::save).
  virtual void save(StateOut&) const {}
  virtual void load(StateIn&, StepContext&) {}
};

// ---------------------------------------------------------------------------------------------------
// Generators (docs/plugins.md, "Generators"). A [[particles]] block's particles are numbered 0 .. n-1
// and fall into chunks of kGenerateChunk; the random numbers of the particles of chunk c come from a
// stream of their own, seeded from ([simulation] seed, block index, c), consumed by the chunk's
// particles one after another. Particle i then gets the same numbers however the block is cut
// between ranks: each rank of a parallel run makes only its range of the block.
constexpr std::uint64_t kGenerateChunk = 4096;
// The streams of a block: purpose 0 is the generator's, 1 the thermal velocities the framework adds
// (the block's `temperature`).
inline std::mt19937_64 chunk_stream(std::uint64_t seed, std::uint64_t block, std::uint64_t chunk,
                                    std::uint32_t purpose) {
  auto lo = [](std::uint64_t v) { return std::uint32_t(v & 0xffffffffu); };
  auto hi = [](std::uint64_t v) { return std::uint32_t(v >> 32); };
  // std::seed_seq and the Mersenne twister's seeding from it are specified by the standard: the
  // same streams with every standard library.
  std::seed_seq seq{lo(seed),  hi(seed),  lo(block), hi(block),
                    lo(chunk), hi(chunk), purpose,   std::uint32_t(0x70617267u)};
  return std::mt19937_64(seq);
}

struct GenerateContext {
  int dim = 3;
  const Box* box = nullptr;
  // One stream for the whole block, drawn in sequence: for generators that make their block at once
  // (particles() < 0). A generator that makes ranges draws from stream(chunk) instead.
  std::mt19937_64* rng = nullptr;
  std::string base_dir;  // folder of the scenario file
  // The range to make, indices of the block: [first, first + count), clipped to the block (the
  // default count: to its end). Only for generators whose particles() gives the block's size; the
  // others make the whole block and the framework keeps each rank's part.
  std::uint64_t first = 0;
  std::uint64_t count = ~std::uint64_t(0);
  // Where the streams come from: [simulation] seed and the index of the [[particles]] block.
  std::uint64_t seed = 1;
  std::uint64_t block = 0;
  // The ranks that make the block together, each its own range: what is summed over the whole block
  // (a centre of mass) is summed over them (ExactSum and reduce(), generator_support.hpp). generate()
  // is then called on every rank, also for an empty range, and its collective calls must come in
  // the same order on every rank. Null when this process makes the block alone (a serial run, a
  // generator without particles()).
  Comm* comm = nullptr;

  // The generator's stream of chunk `chunk` (particles chunk * kGenerateChunk onwards).
  std::mt19937_64 stream(std::uint64_t chunk) const { return chunk_stream(seed, block, chunk, 0); }
  // The end of the range in a block of n particles.
  std::uint64_t end(std::uint64_t n) const {
    const std::uint64_t f = first < n ? first : n;
    return count < n - f ? f + count : n;
  }
};

class Generator {
 public:
  virtual ~Generator() = default;
  // Positions, velocities, masses (and types, if the generator sets them) in double: particles
  // [ctx.first, ctx.end(n)) of the block when particles() gives its size n, else the whole block.
  virtual HostParticles generate(const GenerateContext& ctx) = 0;
  // The number of particles the block makes, known before any is made (ctx: dim, box, base_dir, seed,
  // block), or -1 (the default): the generator then makes its whole block at once, on every rank of a
  // parallel run, which costs host memory for the whole block at start-up (a file reader, a
  // sequential algorithm such as uniform's minimum spacing).
  virtual std::int64_t particles(const GenerateContext&) { return -1; }
};

// Global quantities at an observation step.
struct Thermo {
  std::uint64_t step = 0;
  double time = 0;
  Reductions r;
  double total = 0;           // kinetic + potential
  double initial_total = 0;   // total energy at step 0
  double relative_drift = 0;  // (E - E0) / |E0|
  double temperature = 0;     // 2 K / (dof k_B), k_B = 1
  std::uint64_t force_evaluations = 0;
  double dt = 0;                     // the last step's size
  std::uint64_t rejected_steps = 0;  // adaptive integrators: steps tried and rejected so far
  double com_drift = 0;              // distance of the centre of mass from where it was at step 0
  double dof = 0;                    // degrees of freedom of the temperature: dim N, less dim when
                                     // momentum is conserved (no walls, fields or Langevin noise)
  double volume = 0;                 // box volume (area in 2D)
  double pressure = 0;  // virial pressure (2 K + W) / (dim V); NaN when an axis is open
  std::vector<double> potential_terms;  // potential energy of each [[potential]] (RunInfo order)
  std::vector<double> extra;            // values of RunInfo::extra_columns, in that order
};

struct ObserveContext {
  std::uint64_t step = 0;
  double time = 0;
  const RunInfo* run = nullptr;
  const HostParticles* particles = nullptr;  // host copy of the fields the observer asked for
  const Thermo* thermo = nullptr;
  // The same host copy, owned jointly: an observer that writes in the background keeps this instead
  // of copying the particles (the framework makes a fresh copy for every observation step).
  std::shared_ptr<const HostParticles> shared_particles;
};

class Observer {
 public:
  virtual ~Observer() = default;
  virtual std::uint64_t interval() const = 0;    // observe every this many steps (and at step 0)
  virtual unsigned fields() const { return 0; }  // ParticleStore::Field bits it needs on the host
  virtual void begin(const RunInfo&) {}
  // Analyses: columns this observer adds to thermo, and the computation behind them, run on the
  // backend (device data, the store's extra fields) at this observer's steps before the host copy.
  // analyse() fills t.extra[first + k] for its k-th column (first: where its columns start).
  virtual std::vector<std::string> columns() const { return {}; }
  virtual void analyse(StepContext&, Thermo& /*t*/, std::size_t /*first*/) {}
  virtual void observe(const ObserveContext& ctx) = 0;
  // Called once after the last step (or when the run stops on an error); must flush everything.
  virtual void end() {}
  // Makes everything observed so far durable (background writes finished, files flushed): called
  // before a checkpoint is written, so that a run resumed from it finds every row and frame up to
  // the checkpoint's step.
  virtual void sync() {}
  // The files and folders it writes, as given in its parameters (a relative path is relative to the
  // run's output folder): "run.pvd", "frames/" (a trailing '/' marks a folder it owns). Known before
  // begin(), so that `pardyn validate` refuses outputs that share a name or write outside the output
  // folder.
  virtual std::vector<std::string> files() const { return {}; }
};

// ---------------------------------------------------------------------------------------------------
// Factories and the registry.
enum class PluginKind { Potential, Scheme, Integrator, Modifier, Generator, Observer };
const char* to_string(PluginKind k);

// The box a file gives, for `[box] from = "file"`: a generator that reads files offers the box of
// its format (FactoryInfo::file_box).
struct FileBox {
  std::string format;  // what the file is, for messages: "a LAMMPS data file"
  double lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
  // Whether the format says which axes are periodic (a dump's "pp ff mm", an XYZ's pbc); a LAMMPS
  // data file does not, and [box] boundary must then be given.
  bool has_boundary = false;
  Boundary boundary[3] = {Boundary::Open, Boundary::Open, Boundary::Open};
};
// Reads the box of the file `path` at frame `frame` (0 the first, -1 the last; a file of one state
// ignores it) for a run of `dim` dimensions. Returns false when the file is not of the generator's
// format (judged from its first lines, without an error); throws Error ("path:line: what is wrong")
// when it is but gives no box.
using FileBoxReader =
    std::function<bool(const std::string& path, std::int64_t frame, int dim, FileBox& out)>;

struct FactoryInfo {
  PluginKind kind = PluginKind::Potential;
  std::string name;     // what a user writes in TOML: type = "name"
  std::string summary;  // one line
  std::string doc;      // the formula, units and usage; printed by `pardyn plugins show`
  unsigned dims = kDimAll;
  unsigned precisions = kPrecisionAll;
  unsigned backends = kCpu;
  Schema schema;
  std::string library;     // set by the loader: the file the factory came from
  FileBoxReader file_box;  // generators that read a file: the box it gives (empty: none)
};

template <typename T>
using Factory = std::function<std::unique_ptr<T>(const ParamSet&, const RunInfo&)>;

// What a plugin's register function receives. Registration only records factories; objects are made
// after every plugin has loaded.
class Registrar {
 public:
  virtual ~Registrar() = default;
  virtual void add(FactoryInfo info, Factory<Potential> f) = 0;
  virtual void add(FactoryInfo info, Factory<Scheme> f) = 0;
  virtual void add(FactoryInfo info, Factory<Integrator> f) = 0;
  virtual void add(FactoryInfo info, Factory<Modifier> f) = 0;
  virtual void add(FactoryInfo info, Factory<Generator> f) = 0;
  virtual void add(FactoryInfo info, Factory<Observer> f) = 0;
};

// ---------------------------------------------------------------------------------------------------
// The binary contract. Bump kPluginAbi whenever anything in the SDK headers changes layout or
// virtual functions.
constexpr std::uint32_t kPluginAbi = 13;

struct PluginDescriptor {
  std::uint32_t abi;
  const char* pardyn_version;
  const char* build_id;  // compiler, its major version, and the C++ ABI
  int cuda_version;      // CUDA runtime version the plugin's device code was built with, 0 if none
  const char* cuda_archs;  // CUDA architectures compiled in, e.g. "80;90"; "" if none
  const char* name;
  void (*register_factories)(Registrar&);
};

// The same facts as plain bytes, which the loader reads from the file before it loads it (no code of a
// plugin runs before its file has been checked, docs/plugins.md): a record of fixed layout without
// pointers, in a section of its own (kStampSection), exported as `pardyn_plugin_stamp`.
struct PluginStamp {
  char magic[16];             // kStampMagic
  std::uint32_t abi;          // kPluginAbi
  std::int32_t cuda_version;  // as in PluginDescriptor
  char pardyn_version[32];
  char build_id[96];
  char cuda_archs[128];
  char name[64];
  std::uint32_t optimised;  // 1: its registration unit was compiled with optimisation (-O1 and up)
};
constexpr const char* kStampSection = ".pardyn_plugin";
constexpr const char* kStampMagic = "pardyn-plugin";

}  // namespace pardyn

// PARDYN_PLUGIN(fn), which exports a plugin's descriptor, is in pardyn/plugin_export.hpp: only a
// plugin's registration unit includes that (it brings in Boost.DLL). Without it the macro stops the
// compiler saying so.
#ifndef PARDYN_PLUGIN
#define PARDYN_PLUGIN(fn)                                                                    \
  static_assert(sizeof(&fn) == 0,                                                            \
                "PARDYN_PLUGIN needs #include \"pardyn/plugin_export.hpp\" in the plugin's " \
                "registration unit (the .cpp file that holds this macro)");
#endif
