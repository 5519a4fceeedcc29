// SPDX-License-Identifier: BSD-3-Clause
#include "domain.hpp"

#include "device_link.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cmath>
#include <cstdio>
#include <limits>

namespace pardyn::parallel {

namespace {
constexpr int kMigrateTag = 7200, kGhostTag = 7300, kRefreshTag = 7400;
constexpr int kSelectLinkTag = 1000, kRefreshLinkTag = 2000;  // added to a swap's tag
}  // namespace

// The grid of sub-boxes: every factorisation of K over the bounded axes whose sub-boxes are at
// least the ghost width wide; the one with the least ghost-face area wins ({0, 0, 0}: none).
std::array<int, 3> Domain::split(const Box& box, int dim, int K, double width) {
  double best = std::numeric_limits<double>::infinity();
  std::array<int, 3> choice{0, 0, 0};
  for (int a = 1; a <= K; ++a) {
    if (K % a) continue;
    for (int b = 1; b <= K / a; ++b) {
      if ((K / a) % b) continue;
      const std::array<int, 3> p{a, b, K / a / b};
      bool ok = true;
      for (int d = 0; d < 3; ++d) {
        if (p[d] == 1) continue;
        if (d >= dim || box.boundary[d] == Boundary::Open) ok = false;
        else if (box.length(d) / p[d] < width) ok = false;
      }
      if (!ok) continue;
      double area = 0;
      for (int d = 0; d < dim; ++d) {
        if (p[d] == 1) continue;
        double face = 1;
        for (int e = 0; e < dim; ++e)
          if (e != d) face *= box.boundary[e] == Boundary::Open ? 1.0 : box.length(e) / p[e];
        area += face * p[d];
      }
      if (area < best) best = area, choice = p;
    }
  }
  return choice;
}

// Long: the grid of sub-boxes chosen, then this rank's neighbours and exchange plan, in one pass.
Domain::Domain(Communicator& comm, const Box& box, int dim, double width, double trigger,
               Backend backend)
    : comm_(comm), box_(box), dim_(dim), width_(width), trigger_(trigger), backend_(backend) {
  stats_on_ = std::getenv("PARDYN_PARALLEL_STATS") != nullptr;
  const std::array<int, 3> choice = split(box, dim, comm.size(), width);
  if (choice[0] == 0) {
    std::string axes;
    for (int d = 0; d < dim; ++d)
      if (box.boundary[d] != Boundary::Open)
        axes += std::string(axes.empty() ? "" : ", ") + "xyz"[d] + " (" +
                format_number(box.length(d)) + ")";
    throw Error("cannot split the box into " + std::to_string(comm.size()) +
                " sub-boxes for the cell-list scheme: each sub-box must be at least the ghost "
                "width " +
                format_number(width) +
                " (cut-off + skin; for far zones, their reach) wide, along periodic or walled "
                "axes only (bounded axes: " +
                (axes.empty() ? std::string("none") : axes) +
                "). Use fewer ranks, a larger box, or make an axis periodic or walled");
  }
  p_ = choice;
  for (int d = 0; d < 3; ++d) unwrap_.centre[d] = unwrap_.period[d] = 0;
  const int r = comm.rank();
  c_ = {r % p_[0], (r / p_[0]) % p_[1], r / (p_[0] * p_[1])};
  work_box_ = box;
  for (int d = 0; d < 3; ++d) {
    if (d >= dim || p_[d] == 1) {
      sub_lo_[d] = box.lo[d];
      sub_hi_[d] = box.hi[d];
      continue;
    }
    const double len = box.length(d) / p_[d];
    sub_lo_[d] = box.lo[d] + c_[d] * len;
    sub_hi_[d] = c_[d] == p_[d] - 1 ? box.hi[d] : box.lo[d] + (c_[d] + 1) * len;
    work_box_.boundary[d] = Boundary::Wall;  // its extent: set_work_box()
    if (box.boundary[d] == Boundary::Periodic) {
      unwrap_.centre[d] = 0.5 * (sub_lo_[d] + sub_hi_[d]);
      unwrap_.period[d] = box.length(d);
    }
  }
  set_work_box();
  // Links only if every rank can use them with every neighbour (one answer for the whole run).
  if (backend == Backend::Cuda) {
    double ok = 1;
    for (int d = 0; d < dim; ++d)
      for (int dir = -1; dir <= 1 && p_[d] > 1; dir += 2) {
        const int q = neighbour(d, dir);
        if (q >= 0 && !DeviceLink::usable(comm, q)) ok = 0;
      }
    double bad = 1 - ok;
    comm.max(&bad, 1);
    links_ = bad == 0;
  }
}

// The work store's box along a cut axis: the sub-box and its ghost layers, not periodic (the ghosts
// carry their periodic shift).
void Domain::set_work_box() {
  for (int d = 0; d < dim_; ++d) {
    if (p_[d] == 1) continue;
    const double margin = width_ + 2 * trigger_ + 1e-6 * box_.length(d);
    work_box_.lo[d] = sub_lo_[d] - margin;
    work_box_.hi[d] = sub_hi_[d] + margin;
  }
}

bool Domain::fits(double width) const {
  for (int d = 0; d < dim_; ++d)
    if (p_[d] > 1 && box_.length(d) / p_[d] < width) return false;
  return true;
}

void Domain::widen(double width, double trigger) {
  for (int d = 0; d < dim_; ++d)
    if (p_[d] > 1 && box_.length(d) / p_[d] < width)
      throw Error("cannot give the " + describe() + " ghosts " + format_number(width) +
                  " wide (the far zones' reach): a sub-box is " +
                  format_number(box_.length(d) / p_[d]) + " wide along " + "xyz"[d] +
                  ". Use fewer ranks or a larger box");
  width_ = std::max(width_, width);
  trigger_ = std::min(trigger_, trigger);
  set_work_box();
}

Domain::~Domain() {
  // PARDYN_PARALLEL_STATS=1: where the domain decomposition spends its time, per rank.
  if (std::getenv("PARDYN_PARALLEL_STATS"))
    std::fprintf(stderr,
                 "rank %d: %zu owned, %zu ghosts; %llu selections %.4f s, %llu refreshes %.4f s, "
                 "displacement checks %.4f s; selection parts: migrants found %.4f, moved %.4f, "
                 "owned copied %.4f, ghosts found %.4f, ghosts sent %.4f s\n",
                 comm_.rank(), owned_, work_ ? work_->size() - owned_ : 0,
                 (unsigned long long)selections_, stats_.select,
                 (unsigned long long)stats_.refreshes, stats_.refresh, stats_.check, stats_.part[0],
                 stats_.part[1], stats_.part[2], stats_.part[3], stats_.part[4]);
}

DeviceLink& Domain::link(int peer, int tag, bool send) {
  auto& l = link_map_[std::make_tuple(peer, tag, send)];
  if (!l) l = std::make_unique<DeviceLink>(comm_, peer, tag);
  return *l;
}

std::string Domain::describe() const {
  std::string s = std::to_string(p_[0]);
  for (int d = 1; d < dim_; ++d) s += " x " + std::to_string(p_[d]);
  return s + " sub-boxes";
}

void Domain::take_forces(ParticleStore& s, bool energy) {
  // Steps with energies (observations) copy, since epot and virial must come along.
  if (!energy && s.capacity() == work_->capacity() && s.size() == owned_)
    s.swap_accelerations(*work_);
  else add_forces(*work_, s, owned_, energy, true);
}

int Domain::owner(const double* x) const {
  int c[3] = {0, 0, 0};
  for (int d = 0; d < dim_; ++d) {
    if (p_[d] == 1) continue;
    const double f = (x[d] - box_.lo[d]) / box_.length(d) * p_[d];
    c[d] = std::clamp(int(std::floor(f)), 0, p_[d] - 1);
  }
  return c[0] + p_[0] * (c[1] + p_[1] * c[2]);
}

int Domain::neighbour(int axis, int dir) const {
  int c[3] = {c_[0], c_[1], c_[2]};
  c[axis] += dir;
  if (c[axis] < 0 || c[axis] >= p_[axis]) {
    if (box_.boundary[axis] != Boundary::Periodic) return -1;
    c[axis] = (c[axis] + p_[axis]) % p_[axis];
  }
  return c[0] + p_[0] * (c[1] + p_[1] * c[2]);
}

Slab Domain::slab(int axis, double lo_off, double hi_off) const {
  Slab s;
  s.axis = axis;
  s.centre = 0.5 * (sub_lo_[axis] + sub_hi_[axis]);
  const double half = 0.5 * (sub_hi_[axis] - sub_lo_[axis]);
  s.lo = -half + lo_off;
  s.hi = half - hi_off;
  s.period = box_.boundary[axis] == Boundary::Periodic ? box_.length(axis) : 0.0;
  return s;
}

std::vector<char> Domain::exchange(int to, const std::vector<char>& out, int from, int tag) {
  std::uint64_t n_out = out.size(), n_in = 0;
  std::unique_ptr<Communicator::Request> r, s;
  if (from >= 0) r = comm_.irecv(&n_in, sizeof n_in, from, tag);
  if (to >= 0) s = comm_.isend(&n_out, sizeof n_out, to, tag);
  if (r) r->wait();
  if (s) s->wait();
  std::vector<char> in(static_cast<std::size_t>(n_in));
  if (from >= 0) r = comm_.irecv(in.data(), in.size(), from, tag + 1);
  if (to >= 0) s = comm_.isend(out.data(), out.size(), to, tag + 1);
  if (r) r->wait();
  if (s) s->wait();
  return in;
}

void Domain::lap(int k) {
  if (!stats_on_) return;
  sync(backend_);
  const auto now = std::chrono::steady_clock::now();
  if (k >= 0) stats_.part[k] += std::chrono::duration<double>(now - lap_t_).count();
  lap_t_ = now;
}

void Domain::migrate(ParticleStore& s) {
  lap(-1);
  const std::size_t rb = record_bytes(s);
  for (int d = 0; d < dim_; ++d) {
    if (p_[d] == 1) continue;
    // Index lists kept between selections: their device buffers are allocated once.
    IndexList& down = mig_down_;
    IndexList& up = mig_up_;
    select_slab(s, 0, s.size(), slab(d, 0.0, 0.0), down, up);
    lap(0);
    const int lo = neighbour(d, -1), hi = neighbour(d, +1);
    // A particle past a wall (rounding) has nowhere to go: it stays.
    if (lo < 0) {
      down.host.clear();
      down.changed();
    }
    if (hi < 0) {
      up.host.clear();
      up.changed();
    }
    std::vector<char> out_down, out_up;
    gather_records(s, down, out_down);
    gather_records(s, up, out_up);
    down.fetch();
    up.fetch();
    std::vector<std::uint32_t> gone(down.host);
    gone.insert(gone.end(), up.host.begin(), up.host.end());
    // Both directions at once: sizes, then records (from above, then from below, in one piece).
    std::uint64_t n_out[2] = {out_down.size(), out_up.size()}, n_in[2] = {0, 0};
    const int to[2] = {lo, hi}, from[2] = {hi, lo};
    const int tag = kMigrateTag + 10 * d;
    {
      std::vector<std::unique_ptr<Communicator::Request>> q;
      for (int k = 0; k < 2; ++k) {
        if (from[k] >= 0) q.push_back(comm_.irecv(&n_in[k], sizeof n_in[k], from[k], tag + k));
        if (to[k] >= 0) q.push_back(comm_.isend(&n_out[k], sizeof n_out[k], to[k], tag + k));
      }
      for (auto& r : q) r->wait();
    }
    std::vector<char> in(std::size_t(n_in[0] + n_in[1]));
    {
      std::vector<std::unique_ptr<Communicator::Request>> q;
      const std::vector<char>* out[2] = {&out_down, &out_up};
      for (int k = 0; k < 2; ++k) {
        if (from[k] >= 0 && n_in[k])
          q.push_back(comm_.irecv(in.data() + (k ? n_in[0] : 0), std::size_t(n_in[k]), from[k],
                                  tag + 2 + k));
        if (to[k] >= 0 && n_out[k])
          q.push_back(comm_.isend(out[k]->data(), out[k]->size(), to[k], tag + 2 + k));
      }
      for (auto& r : q) r->wait();
    }
    std::sort(gone.begin(), gone.end());
    remove_particles(s, gone);
    append_records(s, in.data(), in.size() / rb);
    lap(1);
  }
}

// Long: the ghost exchange axis by axis, each a send and receive the ranks must match in order.
void Domain::select_ghosts(ParticleStore& s) {
  owned_ = s.size();
  work_->resize(owned_);
  work_->touch();
  lap(-1);
  copy_prefix(s, *work_, owned_, true, unwrap_);
  lap(2);
  // The swaps keep their index lists (and device buffers) from one selection to the next.
  const bool first = swaps_.empty();
  std::size_t next = 0;
  const std::size_t sb = static_bytes(s);
  const std::size_t real = s.precision() == Precision::Float ? 4 : 8;
  for (int d = 0; d < dim_; ++d) {
    if (p_[d] == 1) continue;
    const std::size_t n = work_->size();  // owned + the ghosts of earlier axes
    if (first) {
      swaps_.emplace_back();
      swaps_.emplace_back();
    }
    Swap& down = swaps_[next];
    Swap& up = swaps_[next + 1];
    select_slab(*work_, 0, n, slab(d, width_, width_), down.idx, up.idx);
    lap(3);
    Swap* pair[2] = {&swaps_[next], &swaps_[next + 1]};
    next += 2;
    for (int k = 0; k < 2; ++k) {
      const int dir = k == 0 ? -1 : 1;
      Swap& sw = *pair[k];
      sw.to = neighbour(d, dir);
      sw.from = neighbour(d, -dir);
      sw.tag = kGhostTag + 10 * d + (dir > 0 ? 4 : 0);
      sw.axis = d;
      if (sw.to < 0) {
        sw.idx.host.clear();
        sw.idx.changed();
      }
      sw.shift[0] = sw.shift[1] = sw.shift[2] = 0;
      // Across a periodic face the copy moves by one box length.
      if (sw.to >= 0 && ((dir < 0 && c_[d] == 0) || (dir > 0 && c_[d] == p_[d] - 1)))
        sw.shift[d] = dir < 0 ? box_.length(d) : -box_.length(d);
      sw.count = 0;
    }
    if (links_) {
      // Device to device: positions, masses, then types, in one message (each array aligned);
      // both directions of the axis travel at once.
      const std::size_t per = sb + std::size_t(dim_) * real;
      std::vector<std::pair<DeviceLink*, std::size_t>> posts;
      for (Swap* sw : pair) {
        if (sw->to < 0) continue;
        const std::size_t c = sw->idx.size();
        DeviceLink& out = link(sw->to, kSelectLinkTag + sw->tag, true);
        char* buf = out.buffer(c * per);
        pack_positions(*work_, sw->idx, sw->shift, buf);
        pack_static(*work_, sw->idx, buf + c * dim_ * real);
        posts.emplace_back(&out, c * per);
      }
      for (auto& q : posts) q.first->post(q.second);
      for (Swap* sw : pair) {
        sw->offset = work_->size();
        if (sw->from < 0) continue;
        DeviceLink& in = link(sw->from, kSelectLinkTag + sw->tag, false);
        std::size_t bytes = 0;
        const char* src = in.receive(bytes);
        sw->count = bytes / per;
        work_->resize(sw->offset + sw->count);
        unpack_positions(*work_, sw->offset, sw->count, src);
        unpack_static(*work_, sw->offset, sw->count, src + sw->count * dim_ * real);
        in.done();
      }
    } else {
      for (Swap* sw : pair) {
        sw->offset = work_->size();
        std::vector<char> out_static, out_pos;
        gather_static(*work_, sw->idx, out_static);
        gather_positions(*work_, sw->idx, sw->shift, out_pos);
        out_static.insert(out_static.end(), out_pos.begin(), out_pos.end());
        const std::vector<char> in = exchange(sw->to, out_static, sw->from, sw->tag);
        const std::size_t count = in.size() / (sb + dim_ * real);
        sw->count = count;
        work_->resize(sw->offset + count);
        put_static(*work_, sw->offset, count, in.data());
        put_positions(*work_, sw->offset, count, in.data() + count * sb);
      }
    }
  }
  lap(4);
  // Equal room in both stores, so that they can exchange their acceleration arrays (take_forces).
  const std::size_t cap = std::max(s.capacity(), work_->capacity());
  s.reserve(cap);
  work_->reserve(cap);
  work_->set_targets(owned_);
  work_->touch();
  ++selections_;
}

void Domain::refresh_linked() {
  const std::size_t real = work_->precision() == Precision::Float ? 4 : 8;
  for (std::size_t a = 0; a < swaps_.size();) {
    std::size_t b = a;
    while (b < swaps_.size() && swaps_[b].axis == swaps_[a].axis) ++b;
    std::vector<std::pair<DeviceLink*, std::size_t>> posts;
    for (std::size_t k = a; k < b; ++k) {
      Swap& sw = swaps_[k];
      const std::size_t c = sw.idx.size();
      if (sw.to < 0 || c == 0) continue;
      DeviceLink& out = link(sw.to, kRefreshLinkTag + sw.tag, true);
      const std::size_t bytes = c * std::size_t(dim_) * real;
      pack_positions(*work_, sw.idx, sw.shift, out.buffer(bytes));
      posts.emplace_back(&out, bytes);
    }
    for (auto& p : posts) p.first->post(p.second);
    for (std::size_t k = a; k < b; ++k) {
      Swap& sw = swaps_[k];
      if (sw.from < 0 || sw.count == 0) continue;
      DeviceLink& in = link(sw.from, kRefreshLinkTag + sw.tag, false);
      std::size_t bytes = 0;
      const char* src = in.receive(bytes);
      unpack_positions(*work_, sw.offset, sw.count, src);
      in.done();
    }
    a = b;
  }
}

void Domain::refresh(ParticleStore& s) {
  // The owned positions are in the work store already (Reference::copy_and_measure).
  if (links_) return refresh_linked();
  const std::size_t real = s.precision() == Precision::Float ? 4 : 8;
  // MPI reads and writes device memory itself (CUDA-aware) or through pinned host mirrors.
  const bool direct = backend_ == Backend::Cpu || comm_.device_aware();
  // The two swaps of one axis travel together; the next axis's swaps may forward ghosts just
  // received, so axes go one after the other.
  for (std::size_t a = 0; a < swaps_.size();) {
    std::size_t b = a;
    while (b < swaps_.size() && swaps_[b].axis == swaps_[a].axis) ++b;
    for (std::size_t k = a; k < b; ++k) {
      Swap& sw = swaps_[k];
      const std::size_t bytes = sw.idx.size() * std::size_t(dim_) * real;
      if (sw.to < 0 || bytes == 0) continue;
      pack_positions(*work_, sw.idx, sw.shift, sw.send.device(backend_, bytes));
      if (!direct) sw.send.to_host(backend_, bytes);
    }
    sync(backend_);
    std::vector<std::unique_ptr<Communicator::Request>> reqs;
    for (std::size_t k = a; k < b; ++k) {
      Swap& sw = swaps_[k];
      const std::size_t in = sw.count * std::size_t(dim_) * real;
      const std::size_t out = sw.idx.size() * std::size_t(dim_) * real;
      if (sw.from >= 0 && in)
        reqs.push_back(
            comm_.irecv(direct ? sw.recv.device(backend_, in) : sw.recv.host(backend_, in), in,
                        sw.from, kRefreshTag + sw.tag));
      if (sw.to >= 0 && out)
        reqs.push_back(
            comm_.isend(direct ? sw.send.device(backend_, out) : sw.send.host(backend_, out), out,
                        sw.to, kRefreshTag + sw.tag));
    }
    for (auto& q : reqs) q->wait();
    for (std::size_t k = a; k < b; ++k) {
      Swap& sw = swaps_[k];
      const std::size_t in = sw.count * std::size_t(dim_) * real;
      if (sw.from < 0 || in == 0) continue;
      if (!direct) sw.recv.to_device(backend_, in);
      unpack_positions(*work_, sw.offset, sw.count, sw.recv.device(backend_, in));
    }
    a = b;
  }
}

bool Domain::prepare(ParticleStore& s) {
  if (!work_) work_ = std::make_unique<ParticleStore>(s.dim(), s.precision(), s.memory());
  // Anything but motion changed the store (first call, a redistribution): choose again.
  const auto t0 = std::chrono::steady_clock::now();
  // Minimum-image displacements: a particle that crossed a periodic face which is also a sub-box
  // face has barely moved; the work store sees it at the image next to its sub-box (copy_prefix
  // below unwraps the cut periodic axes towards the sub-box).
  // The owned positions go to the work store in the same pass (used unless ghosts are chosen
  // again, which copies them anew).
  double moved = s.generation() != generation_ ? std::numeric_limits<double>::infinity()
                                               : ref_.copy_and_measure(s, *work_, unwrap_, box_);
  if (!std::isfinite(moved)) moved = std::numeric_limits<double>::max();
  comm_.max(&moved, 1);
  bool migrated = false;
  const auto t1 = std::chrono::steady_clock::now();
  if (moved > trigger_ * trigger_) {
    migrate(s);
    select_ghosts(s);
    ref_.save(s);
    generation_ = s.generation();
    migrated = true;
    if (stats_on_) sync(backend_);
    stats_.select += std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
  } else {
    refresh(s);
    if (stats_on_) sync(backend_);
    stats_.refresh += std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
    ++stats_.refreshes;
  }
  stats_.check += std::chrono::duration<double>(t1 - t0).count();
  return migrated;
}

}  // namespace pardyn::parallel
