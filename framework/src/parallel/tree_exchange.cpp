// SPDX-License-Identifier: BSD-3-Clause
#include "tree_exchange.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>

#include "device_link.hpp"
#include "pardyn/tree.hpp"
#include "store_ops.hpp"
#include "tree_let.hpp"

namespace pardyn::parallel {

namespace {
constexpr int kTag = 7600;      // sources through MPI
constexpr int kLinkTag = 7700;  // sources device to device (the links' headers)
}  // namespace

// What the stages of an evaluation cost (PARDYN_PARALLEL_STATS; =2 waits for the device after each
// stage, so that its work is counted where it was launched).
const char* const TreeExchange::kPartNames[kParts] = {"own tree",
                                                      "region",
                                                      "walks for the others",
                                                      "posting",
                                                      "own walk",
                                                      "waiting for the sources",
                                                      "sources' tree and walk"};

TreeExchange::TreeExchange(Communicator& comm, int dim)
    : comm_(comm), dim_(dim), let_(std::make_unique<TreeLet>()) {
  if (const char* e = std::getenv("PARDYN_PARALLEL_STATS")) stats_ = e[0] == '2' ? 2 : 1;
}

TreeExchange::~TreeExchange() {
  if (!stats_) return;
  std::string parts;
  for (int k = 0; k < kParts; ++k) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "%s%s %.4f", k ? ", " : "", kPartNames[k], part_[k]);
    parts += buf;
  }
  std::fprintf(stderr,
               "rank %d: tree exchange (%s): %zu owned, %zu sources received, %zu sent (last "
               "evaluation); %llu evaluations %.4f s: %s s\n",
               comm_.rank(), links_ == 1 ? "device links" : "MPI", owned_, received_, sent_,
               (unsigned long long)evaluations_, seconds_, parts.c_str());
}

// Long: the steps of an evaluation in order (own tree and region, the others' sources, the
// transfers around the own walk, the sources' tree and walk), with the statistics' laps between.
void TreeExchange::compute(ParticleStore& own, Potential& potential, Scheme& own_scheme,
                           const Box& box, const Reach& reach, const ForceRequest& req,
                           double* work_seconds) {
  const auto t0 = std::chrono::steady_clock::now();
  const Backend b = own.backend();
  // The build and the walks timed for the load balance: the device waited for around each.
  auto timed = [&](auto&& walk) {
    if (!work_seconds) return walk();
    sync(b);
    const auto w0 = std::chrono::steady_clock::now();
    walk();
    sync(b);
    *work_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
  };
  auto last = t0;
  auto lap = [&](int k) {
    if (stats_ == 2) sync(b);
    const auto now = std::chrono::steady_clock::now();
    part_[k] += std::chrono::duration<double>(now - last).count();
    last = now;
  };
  const int K = comm_.size(), me = comm_.rank();
  const std::size_t real = own.precision() == Precision::Float ? 4 : 8;
  const std::size_t per = std::size_t(dim_ + 2) * real;  // bytes per source

  // 1. The tree over this rank's particles. Quadrupole trees on the GPU: the walk of the own
  // particles over it is launched at once and runs while the side stream (gpu::SideWork) finds the
  // region, classifies and packs the others' sources and the host waits for the other ranks
  // (allgathers, transfers). A walk timed for the load balance runs alone, after the posting.
  // The build is timed too: a rank's tree over a dense core is deeper and takes longer to build
  // (measured, Plummer 10^7 on 4 H100s: 53 ms against 11-17 ms), which a balance of the walks
  // alone leaves to the other ranks' waiting.
  timed([&] { own_scheme.update(own, box, reach); });
  const Neighbourhood nb = own_scheme.neighbourhood();
  if (nb.kind != NeighbourhoodKind::Tree || !nb.data)
    throw Error("internal: the tree exchange needs a tree scheme");
  const Tree& tree = *static_cast<const Tree*>(nb.data);
  const bool split = tree.quadrupole;
  const bool early = split && !work_seconds && b == Backend::Cuda;
  lap(0);
  std::vector<std::uint64_t> count(std::size_t(K), 0);
  std::vector<std::size_t> from(std::size_t(K) + 1, 0);  // offsets of each rank's sources
  TreeOptions opt;
  opt.theta = tree.theta;
  opt.quadrupole = tree.quadrupole;
  opt.leaf_size = tree.leaf_size;
  opt.short_range = reach.short_range;
  Tree remote;  // quadrupole trees: the sources' tree
  {
    gpu::SideWork side(early ? b : Backend::Cpu);  // waits for the tree
    if (early) side.on_default([&] { potential.compute(own, nb, req); });
    if (!mine_) mine_ = std::make_unique<Region>();
    let_->region(tree, *mine_);
    all_.resize(std::size_t(K));
    comm_.allgather(mine_.get(), sizeof(Region), all_.data());
    if (links_ < 0) decide_links(b);
    lap(1);

    // 2. What each other rank needs, packed where it leaves from.
    std::vector<char*> out(std::size_t(K), nullptr);
    send_.resize(std::size_t(K));
    for (int r = 0; r < K; ++r) {
      if (r == me) continue;
      const std::size_t c = let_->count(tree, all_[std::size_t(r)]);
      count[std::size_t(r)] = c;
      if (c == 0) continue;
      out[std::size_t(r)] =
          links_ == 1 ? link(r, true).buffer(c * per) : send_[std::size_t(r)].device(b, c * per);
      let_->pack(tree, out[std::size_t(r)]);
    }
    lap(2);

    // 3. The transfers posted (and, where the walk did not start above, the own walk launched: on
    // the GPU it runs while they travel), the transfers completed into one buffer on the backend.
    std::vector<std::uint64_t> matrix(std::size_t(K) * std::size_t(K));
    comm_.allgather(count.data(), count.size() * sizeof(std::uint64_t), matrix.data());
    for (int r = 0; r < K; ++r)
      from[std::size_t(r) + 1] =
          from[std::size_t(r)] +
          (r == me ? 0 : std::size_t(matrix[std::size_t(r) * std::size_t(K) + std::size_t(me)]));
    const std::size_t m = from[std::size_t(K)];
    char* dev = m ? recv_.device(b, m * per) : nullptr;
    post(b, count, out, from, per, dev);
    lap(3);
    if (split && !early) timed([&] { potential.compute(own, nb, req); });
    lap(4);
    finish(b, from, per, dev);
    lap(5);

    // 4. Quadrupole trees: the sources' own tree (beside the own walk where it started early),
    // walked by this rank's particles in their groups (the walks add). Monopole trees: one tree
    // over the own particles and the sources together.
    owned_ = own.size();
    received_ = m;
    sent_ = 0;
    for (const std::uint64_t c : count) sent_ += std::size_t(c);
    if (!split) {
      timed([&] { merged(own, potential, opt, dev, m, req); });
    } else if (m > 0 && own.size() > 0) {
      if (!sources_)
        sources_ = std::make_unique<ParticleStore>(own.dim(), own.precision(), own.memory());
      sources_->resize(m);
      unpack_sources(*sources_, 0, dev, m);
      remote = remote_.build(*sources_, opt);
      remote.targets = &tree;
    }
  }  // the default stream waits for the side stream's work from here on
  if (remote.built)
    timed([&] { potential.compute(own, Neighbourhood{NeighbourhoodKind::Tree, &remote}, req); });
  lap(6);
  ++evaluations_;
  seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Monopoles act on a target through each node's mass at its centre of mass alone, so they lose
// accuracy in the cells that the boundary between two ranks' pieces cuts: a half-filled cell has
// second moments a full one of a uniform gas has not (measured, 2D log, 20,000 particles in two
// halves, theta 0.6: the own half's tree alone gave an RMS force error of 7.4e-4, one tree over
// both halves 6.4e-4 in all). So monopole trees walk one tree over the own particles and the
// sources together, whose cells the sources fill again, and keep the own particles' forces.
void TreeExchange::merged(ParticleStore& own, Potential& potential, const TreeOptions& opt,
                          const char* dev, std::size_t m, const ForceRequest& req) {
  const std::size_t n = own.size();
  if (!work_) work_ = std::make_unique<ParticleStore>(own.dim(), own.precision(), own.memory());
  work_->resize(n + m);
  copy_prefix(own, *work_, n, true, Unwrap{});
  unpack_sources(*work_, n, dev, m);
  visit(*work_, [&](auto w) {
    using Real = typename decltype(w)::real;
    for (int d = 0; d < decltype(w)::dim; ++d)
      work_->memory().fill_zero(w.a[d], w.n * sizeof(Real));
    work_->memory().fill_zero(w.epot, w.n * sizeof(Real));
    work_->memory().fill_zero(w.virial, w.n * sizeof(Real));
  });
  potential.compute(*work_, Neighbourhood{NeighbourhoodKind::Tree, &remote_.build(*work_, opt)},
                    req);
  add_forces(*work_, own, n, req.energy || req.virial);
}

// Links only if this rank can use them with every other rank, and every rank with it.
void TreeExchange::decide_links(Backend b) {
  double bad = b == Backend::Cuda ? 0 : 1;
  for (int r = 0; r < comm_.size() && bad == 0; ++r)
    if (r != comm_.rank() && !DeviceLink::usable(comm_, r)) bad = 1;
  comm_.max(&bad, 1);
  links_ = bad == 0 ? 1 : 0;
}

DeviceLink& TreeExchange::link(int peer, bool send) {
  auto& l = link_map_[{peer, send}];
  if (!l) l = std::make_unique<DeviceLink>(comm_, peer, kLinkTag);
  return *l;
}

void TreeExchange::post(Backend b, const std::vector<std::uint64_t>& count,
                        const std::vector<char*>& out, const std::vector<std::size_t>& from,
                        std::size_t per, char* dev) {
  const int K = comm_.size(), me = comm_.rank();
  if (links_ == 1) {
    for (int r = 0; r < K; ++r)  // post() waits for the device to finish the packing
      if (r != me && count[std::size_t(r)]) link(r, true).post(count[std::size_t(r)] * per);
    return;
  }
  direct_ = b == Backend::Cpu || comm_.device_aware();
  if (!direct_)
    for (int r = 0; r < K; ++r)
      if (count[std::size_t(r)]) send_[std::size_t(r)].to_host(b, count[std::size_t(r)] * per);
  sync(b);
  const std::size_t m = from[std::size_t(K)];
  char* in = m ? (direct_ ? dev : recv_.host(b, m * per)) : nullptr;
  for (int r = 0; r < K; ++r) {
    const std::size_t c = from[std::size_t(r) + 1] - from[std::size_t(r)];
    if (c) reqs_.push_back(comm_.irecv(in + from[std::size_t(r)] * per, c * per, r, kTag));
  }
  for (int r = 0; r < K; ++r) {
    const std::size_t bytes = count[std::size_t(r)] * per;
    if (bytes)
      reqs_.push_back(comm_.isend(
          direct_ ? out[std::size_t(r)] : send_[std::size_t(r)].host(b, bytes), bytes, r, kTag));
  }
}

void TreeExchange::finish(Backend b, const std::vector<std::size_t>& from, std::size_t per,
                          char* dev) {
  const int K = comm_.size();
  const std::size_t m = from[std::size_t(K)];
  if (links_ == 1) {
    // Copied out of the senders' buffers on a stream of their own, beside the own walk, and waited
    // for: a sender refills its buffer only after the next evaluation's region exchange.
    for (int r = 0; r < K; ++r) {
      const std::size_t c = from[std::size_t(r) + 1] - from[std::size_t(r)];
      if (c == 0) continue;
      std::size_t bytes = 0;
      const char* src = link(r, false).receive(bytes);
      if (bytes != c * per)
        throw Error("internal: the tree exchange's link from rank " + std::to_string(r) +
                    " brought " + std::to_string(bytes) + " bytes, not " + std::to_string(c * per));
      gpu::copy_side(dev + from[std::size_t(r)] * per, src, bytes);
    }
    if (m) gpu::sync_side();
    for (int r = 0; r < K; ++r)
      if (from[std::size_t(r) + 1] > from[std::size_t(r)]) link(r, false).done();
    return;
  }
  for (auto& q : reqs_) q->wait();
  reqs_.clear();
  if (!direct_ && m) {
    gpu::copy_side(dev, recv_.host(b, m * per), m * per);
    gpu::sync_side();
  }
}

namespace {
// The Morton key of position i in the cube [lo, lo + side)^dim (21 bits per axis in 3D, 31 in 2D).
std::uint64_t morton_key(const std::vector<double>* x, std::size_t i, const double* lo, double side,
                         int dim) {
  const int bits = dim == 3 ? 21 : 31;
  const double top = double((1ULL << bits) - 1), scale = top / side;
  std::uint64_t c[3] = {0, 0, 0}, key = 0;
  for (int d = 0; d < dim; ++d)
    c[d] = std::uint64_t(std::clamp((x[d][i] - lo[d]) * scale, 0.0, top));
  for (int b = bits - 1; b >= 0; --b)
    for (int d = dim - 1; d >= 0; --d) key = (key << 1) | ((c[d] >> b) & 1);
  return key;
}
}  // namespace

std::vector<std::size_t> morton_order(const std::vector<double>* x, int dim, std::size_t n) {
  double lo[3] = {0, 0, 0}, side = 0;
  for (int d = 0; d < dim; ++d) {
    if (n == 0) break;
    const auto mm = std::minmax_element(x[d].begin(), x[d].begin() + std::ptrdiff_t(n));
    lo[d] = *mm.first;
    side = std::max(side, *mm.second - *mm.first);
  }
  if (!(side > 0)) side = 1;
  std::vector<std::pair<std::uint64_t, std::size_t>> keys(n);
  for (std::size_t i = 0; i < n; ++i) keys[i] = {morton_key(x, i, lo, side, dim), i};
  std::sort(keys.begin(), keys.end());
  std::vector<std::size_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = keys[i].second;
  return order;
}

std::vector<int> morton_owners(const std::vector<double>* x, int dim, std::size_t n,
                               Communicator& comm, std::vector<double> weights) {
  const int K = comm.size();
  // The bounding cube of every rank's particles.
  double ext[6];
  for (int d = 0; d < 3; ++d) {
    ext[d] = ext[3 + d] = -std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; d < dim && i < n; ++i) {
      ext[d] = std::max(ext[d], -x[d][i]);
      ext[3 + d] = std::max(ext[3 + d], x[d][i]);
    }
  }
  comm.max(ext, 6);
  double lo[3] = {0, 0, 0}, side = 0;
  for (int d = 0; d < dim; ++d) {
    lo[d] = std::isfinite(ext[d]) ? -ext[d] : 0.0;
    side = std::max(side, ext[3 + d] - lo[d]);
  }
  if (!(side > 0) || !std::isfinite(side)) side = 1;
  std::vector<std::uint64_t> keys(n);
  for (std::size_t i = 0; i < n; ++i) keys[i] = morton_key(x, i, lo, side, dim);
  // Splitters from a sample of every rank's sorted keys, each sample standing for n / S particles.
  constexpr std::size_t S = 1024;
  struct Sample {
    std::uint64_t key;
    double weight;
  };
  std::vector<std::uint64_t> sorted = keys;
  std::sort(sorted.begin(), sorted.end());
  std::array<Sample, S> mine{};
  const std::size_t s = std::min(S, n);
  for (std::size_t k = 0; k < S; ++k)
    mine[k] = k < s ? Sample{sorted[(2 * k + 1) * n / (2 * s)], double(n) / double(s)}
                    : Sample{~std::uint64_t(0), 0.0};
  std::vector<Sample> all(static_cast<std::size_t>(K) * S);
  comm.allgather(mine.data(), sizeof mine, all.data());
  std::sort(all.begin(), all.end(), [](const Sample& a, const Sample& b) { return a.key < b.key; });
  if (weights.empty()) weights.assign(static_cast<std::size_t>(K), 1.0);
  double wsum = 0, total = 0;
  for (double w : weights) wsum += w;
  for (const Sample& a : all) total += a.weight;
  std::vector<std::uint64_t> split;  // rank r keeps keys in (split[r - 1], split[r]]
  double acc = 0, goal = 0;
  std::size_t j = 0;
  for (int r = 0; r + 1 < K; ++r) {
    goal += total * weights[std::size_t(r)] / wsum;
    while (j < all.size() && acc + all[j].weight <= goal) acc += all[j++].weight;
    split.push_back(j == 0 ? 0 : all[j - 1].key);
  }
  std::vector<int> owner(n);
  for (std::size_t i = 0; i < n; ++i)
    owner[i] = int(std::lower_bound(split.begin(), split.end(), keys[i]) - split.begin());
  return owner;
}

}  // namespace pardyn::parallel
