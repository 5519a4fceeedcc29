// SPDX-License-Identifier: BSD-3-Clause
// Load balance of the all-pairs ring: blocks resized by the ranks' measured speed and the
// particles moved between ranks to match.
#include "pardyn/app/simulation.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <vector>

#include "parallel/communicator.hpp"
#include "parallel/ring.hpp"
#include "parallel/store_ops.hpp"
#include "parallel/tree_exchange.hpp"

namespace pardyn {

void Simulation::redistribute(const std::vector<double>& weights) {
  const int K = comm_->size(), me = comm_->rank();
  std::uint64_t mine = store_->size();
  std::vector<std::uint64_t> counts(static_cast<std::size_t>(K));
  comm_->allgather(&mine, sizeof mine, counts.data());
  // Ranks' blocks in rank order form one sequence; the new blocks cut it by the weights.
  std::vector<std::uint64_t> old_begin(static_cast<std::size_t>(K) + 1, 0),
      new_begin(static_cast<std::size_t>(K) + 1, 0);
  for (int r = 0; r < K; ++r)
    old_begin[std::size_t(r) + 1] = old_begin[std::size_t(r)] + counts[std::size_t(r)];
  const std::uint64_t n = old_begin[std::size_t(K)];
  double total = 0, acc = 0;
  for (double w : weights) total += w;
  for (int r = 0; r < K; ++r) {
    acc += weights[std::size_t(r)];
    new_begin[std::size_t(r) + 1] =
        r == K - 1 ? n : std::uint64_t(std::llround(double(n) * acc / total));
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
  std::snprintf(
      buf, sizeof buf,
      "all-pairs ring: blocks resized by measured speed (slowest rank took %.3g s, fastest %.3g s)",
      hi, lo);
  progress_->message(buf);
  return true;
}

}  // namespace pardyn

namespace pardyn {

// Every rank's time of tree build and walks, and particles; the imbalance (the slowest rank over the mean) goes to
// log.txt, and above 10% the Morton curve is re-dealt before the next evaluation: each rank's share
// moves half way from what it holds to its share of the ranks' speeds (particles per second of
// building the tree and walking). Half way, and undone when the next measurement finds it worse: the cost per particle
// depends not only on the particles (a dense core costs more than a halo) but on the pieces' shapes,
// which a re-deal changes (a piece cut off a Morton curve's quadrant has more surface, so more
// sources to walk): measured on 4 H100s, a uniform real gas re-dealt by speeds alone went from 7%
// to 59%, 94% and 210% above the mean. After an undo the next re-deals wait 1, 2, 4, ...
// measurements.
void Simulation::judge_balance(double work_seconds) {
  balance_.measured_step = step_;
  const int K = comm_->size();
  const double mine[2] = {work_seconds, double(store_->size())};
  std::vector<double> all(2 * static_cast<std::size_t>(K));
  comm_->allgather(mine, sizeof mine, all.data());
  double sum = 0, worst = 0, n = 0, speeds = 0;
  std::vector<double> held(static_cast<std::size_t>(K)), speed(held.size());
  for (std::size_t r = 0; r < held.size(); ++r) {
    const double t = all[2 * r];
    held[r] = all[2 * r + 1];
    speed[r] = held[r] / std::max(t, 1e-9);  // particles per second of building and walking
    sum += t;
    worst = std::max(worst, t);
    n += held[r];
    speeds += speed[r];
  }
  const double mean = sum / K;
  if (!(mean > 0) || !(n > 0)) return;
  const double imbalance = worst / mean - 1;
  if (balance_.log_only) {
    char line[200];
    std::snprintf(line, sizeof line,
                  "balance: step %llu: list builds and forces %.3g s (slowest rank) against %.3g s "
                  "(mean), %.1f%% above (the sub-boxes stay as cut)",
                  (unsigned long long)step_, worst, mean, 100 * imbalance);
    progress_->log_only(line);
    return;
  }
  const bool undo = balance_.redealt_at >= 0 && imbalance > balance_.redealt_at;
  balance_.redealt_at = -1;
  const bool wait = !undo && balance_.skip > 0;
  if (wait) --balance_.skip;
  const bool redeal = !undo && !wait && imbalance > 0.10 && worst > 1e-4;
  char line[240];
  std::snprintf(line, sizeof line,
                "balance: step %llu: tree build and walks %.3g s (slowest rank) against %.3g s "
                "(mean), %.1f%% above%s",
                (unsigned long long)step_, worst, mean, 100 * imbalance,
                undo     ? "; worse than before the last re-deal, which is undone"
                : redeal ? "; the Morton curve re-dealt by speed"
                         : "");
  progress_->log_only(line);
  if (undo) {
    balance_.weights = balance_.before;
    balance_.hold = std::max<std::uint64_t>(1, 2 * balance_.hold);
    balance_.skip = balance_.hold;
    balance_.pending = true;
    return;
  }
  if (!redeal) return;
  balance_.before = balance_.weights;
  if (balance_.before.empty()) balance_.before.assign(static_cast<std::size_t>(K), 1.0);
  balance_.weights.resize(held.size());
  for (std::size_t r = 0; r < held.size(); ++r)
    balance_.weights[r] = 0.5 * (held[r] / n + speed[r] / speeds);
  balance_.redealt_at = imbalance;
  balance_.pending = true;
}

// Each rank's particles go to the rank whose piece of the Morton curve (cut by balance_.weights)
// holds them, as records (positions, velocities, masses, types, ids, image counts); the forces
// are computed afresh by the evaluation that follows.
void Simulation::redeal_morton() {
  balance_.pending = false;
  ++balance_.redeals;
  const int K = comm_->size(), me = comm_->rank();
  HostParticles hp(run_.dim);
  store_->download(hp, ParticleStore::kPosition);
  const std::vector<int> owner =
      parallel::morton_owners(hp.x, run_.dim, hp.size(), *comm_, balance_.weights);
  std::vector<parallel::IndexList> to(static_cast<std::size_t>(K));
  std::vector<std::uint32_t> leaving;
  for (std::size_t i = 0; i < owner.size(); ++i)
    if (owner[i] != me) {
      to[std::size_t(owner[i])].host.push_back(std::uint32_t(i));
      leaving.push_back(std::uint32_t(i));
    }
  std::vector<std::vector<char>> send(static_cast<std::size_t>(K));
  for (int r = 0; r < K; ++r) {
    to[std::size_t(r)].changed();
    if (r != me) parallel::gather_records(*store_, to[std::size_t(r)], send[std::size_t(r)]);
  }
  auto got = comm_->alltoallv(std::move(send));
  parallel::remove_particles(*store_, leaving);
  const std::size_t rb = parallel::record_bytes(*store_);
  for (int r = 0; r < K; ++r)
    if (r != me)
      parallel::append_records(*store_, got[std::size_t(r)].data(),
                               got[std::size_t(r)].size() / rb);
  store_->touch();
}

}  // namespace pardyn
