// SPDX-License-Identifier: BSD-3-Clause
// The clusters analysis on the store's backend: the Finder's steps, each one or two runs of the
// functors of clusters_kernels.hpp by the framework's per-particle loop (for_each_index), on the
// host's OpenMP threads or on the GPU. Only counters and the short lists the steps produce come to
// the host.
#include <chrono>
#include <cstdio>
#include <ctime>
#include <limits>
#include <type_traits>

#include "clusters.hpp"
#include "pardyn/for_each.hpp"

namespace pardyn::plugins::clusters {

template <class F>
void Finder::typed(F&& f) const {
  const bool single = store_->precision() == Precision::Float;
  if (store_->dim() == 2) {
    if (single) f(float(), std::integral_constant<int, 2>());
    else f(double(), std::integral_constant<int, 2>());
  } else {
    if (single) f(float(), std::integral_constant<int, 3>());
    else f(double(), std::integral_constant<int, 3>());
  }
}

std::uint64_t* Finder::counters(std::size_t n) { return counters_.zeroed(*mem_, n); }

void Finder::read_counters(std::size_t n) { download(counters_, host_counters_, n); }

template <class T>
void Finder::download(const BackendBuffer<T>& from, std::vector<T>& to, std::uint64_t n) {
  from.download(to, std::size_t(n));
  to_host_ += n * sizeof(T);
}

void Finder::sync() {
  if (store_ && store_->backend() == Backend::Cuda) {
    std::uint64_t word;
    mem_->copy_to_host(&word, counters_.get(*mem_, 1), sizeof word);
  }
}

template <class T>
bool Finder::fits(BackendBuffer<T>& list, std::uint64_t needed) {
  if (needed <= list.capacity()) return true;
  list.get(*mem_, std::size_t(needed + needed / 4 + 64));
  return false;
}

const CellList& Finder::list() const { return *cl_; }

const CellList& Finder::find(const ParticleStore& s, const Box& box, double distance) {
  CellListOptions o;
  o.cutoff = distance;
  o.skin = 0;
  o.neighbour_list = false;
  builder_.update(s, box, o);
  store_ = &s;
  cl_ = &builder_.list();
  mem_ = &s.memory();
  box_ = box;
  distance_ = distance;
  const CellList& cl = *cl_;
  const std::size_t n = cl.n;
  const Backend b = s.backend();
  std::uint32_t* parent = parent_.get(*mem_, n);
  for_each_index(b, n, InitParents{parent});
  typed([&](auto real, auto dim) {
    using Real = decltype(real);
    constexpr int Dim = decltype(dim)::value;
    for_each_index(
        b, n,
        Link<Dim, Real>{cl, PeriodicImage<Real>::make(box), Real(distance * distance), parent});
  });
  for_each_index(b, n, Flatten{parent});
  std::uint32_t* size = size_.zeroed(*mem_, n);
  for_each_index(b, n, CountSizes{parent, size});
  return cl;
}

void Finder::select(std::uint32_t min_size, Found& out) {
  const std::size_t n = cl_->n;
  if (!big_.capacity()) big_.get(*mem_, n / 64 + 64);
  do {
    for_each_index(store_->backend(), n,
                   Select{parent_.data(), size_.data(), min_size, big_.data(), big_.capacity(),
                          counters(1 + kBins)});
    read_counters(1 + kBins);
  } while (!fits(big_, counter(0)));
  for (int b = 0; b < kBins; ++b) out.hist[b] = counter(std::size_t(1 + b));
  download(big_, out.big, counter(0));
}

void Finder::label(const std::vector<Component>& big, const std::vector<std::int32_t>& id_of_big,
                   std::int32_t* labels) {
  const std::size_t n = cl_->n;
  const Backend b = store_->backend();
  std::int32_t* id_of_root = id_of_root_.get(*mem_, n);
  for_each_index(b, n, Fill<std::int32_t>{id_of_root, -1});
  if (!big.empty()) {
    const Component* dbig = big_.upload(*mem_, big);
    const std::int32_t* dids = ids_.upload(*mem_, id_of_big);
    for_each_index(b, big.size(), ScatterIds{dbig, dids, id_of_root});
  }
  for_each_index(b, n, Label{parent_.data(), id_of_root, cl_->order, labels});
}

void Finder::occupy(const CoarseGrid& g, std::vector<std::uint64_t>& bits) {
  const std::size_t n = cl_->n, words = (g.cells() + 63) / 64;
  const Backend b = store_->backend();
  std::int64_t* min_id = min_id_.get(*mem_, n);
  for_each_index(b, n, Fill<std::int64_t>{min_id, std::numeric_limits<std::int64_t>::max()});
  std::uint64_t* dbits = bits_.zeroed(*mem_, words);
  typed([&](auto real, auto dim) {
    using Real = decltype(real);
    constexpr int Dim = decltype(dim)::value;
    const std::int64_t* id = store_->view<Real, Dim>().id;
    for_each_index(b, n,
                   Occupy<Dim, Real>{cl_->positions<Real>(), g, parent_.data(), cl_->order, id,
                                     dbits, min_id});
  });
  download(bits_, bits, words);
}

void Finder::boundary(const CoarseGrid& g, const std::vector<std::uint64_t>& boundary,
                      const std::vector<std::uint64_t>& send, std::vector<Outgoing>& out) {
  const std::size_t n = cl_->n;
  const Backend b = store_->backend();
  std::uint32_t* flag = flag_.zeroed(*mem_, n);
  const std::uint64_t* dboundary = boundary_bits_.upload(*mem_, boundary);
  const std::uint64_t* dsend = send_bits_.upload(*mem_, send);
  if (!out_.capacity()) out_.get(*mem_, n / 64 + 64);
  do {
    std::uint64_t* count = counters(1);
    typed([&](auto real, auto dim) {
      using Real = decltype(real);
      constexpr int Dim = decltype(dim)::value;
      for_each_index(b, n,
                     MarkBoundary<Dim, Real>{cl_->positions<Real>(), g, parent_.data(), dboundary,
                                             dsend, flag, out_.data(), out_.capacity(), count});
    });
    read_counters(1);
  } while (!fits(out_, counter(0)));
  download(out_, out, counter(0));
}

void Finder::link(const std::vector<Incoming>& in, std::vector<Edge>& edges) {
  edges.clear();
  if (in.empty()) return;
  const Backend b = store_->backend();
  const Incoming* din = in_.upload(*mem_, in);
  if (!edges_.capacity()) edges_.get(*mem_, 4 * in.size() + 64);
  do {
    std::uint64_t* count = counters(1);
    typed([&](auto real, auto dim) {
      using Real = decltype(real);
      constexpr int Dim = decltype(dim)::value;
      for_each_index(b, in.size(),
                     LinkIncoming<Dim, Real>{*cl_, PeriodicImage<Real>::make(box_),
                                             Real(distance_ * distance_), parent_.data(), din,
                                             edges_.data(), edges_.capacity(), count});
    });
    read_counters(1);
  } while (!fits(edges_, counter(0)));
  download(edges_, edges, counter(0));
}

void Finder::components(std::uint32_t min_size, std::vector<CompRec>& boundary,
                        std::vector<CompRec>& inner_big, std::uint64_t (&hist)[kBins]) {
  const std::size_t n = cl_->n;
  if (!boundary_.capacity()) boundary_.get(*mem_, n / 64 + 64);
  if (!inner_.capacity()) inner_.get(*mem_, n / 64 + 64);
  for (;;) {
    for_each_index(store_->backend(), n,
                   Records{parent_.data(), size_.data(), min_id_.data(), flag_.data(), min_size,
                           boundary_.data(), boundary_.capacity(), inner_.data(), inner_.capacity(),
                           counters(2 + kBins)});
    read_counters(2 + kBins);
    const bool room_boundary = fits(boundary_, counter(0));  // both grow before it runs again
    const bool room_inner = fits(inner_, counter(1));
    if (room_boundary && room_inner) break;
  }
  for (int b = 0; b < kBins; ++b) hist[b] = counter(std::size_t(2 + b));
  download(boundary_, boundary, counter(0));
  download(inner_, inner_big, counter(1));
}

void JoinStats::lap(int part, Finder* f) {
  if (!on) return;
  if (f) f->sync();
  const double t =
      std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  const double c = double(std::clock()) / CLOCKS_PER_SEC;
  if (part >= 0 && t_ >= 0) {
    wall[part] += t - t_;
    cpu[part] += c - c_;
  }
  t_ = t, c_ = c;
}

void JoinStats::print(int rank, std::uint64_t to_host) const {
  if (!on || !analyses) return;
  const double a = double(analyses);
  std::string parts;
  double total = 0, total_cpu = 0;
  for (int p = 0; p < kParts; ++p) {
    char b[96];
    std::snprintf(b, sizeof b, "%s%s %.4f (cpu %.4f)", p ? ", " : "", kNames[p], wall[p] / a,
                  cpu[p] / a);
    parts += b;
    total += wall[p], total_cpu += cpu[p];
  }
  std::fprintf(stderr,
               "rank %d: clusters, %llu analyses, per analysis %.4f s (cpu %.4f s): %s; to the "
               "host %.0f bytes, to other ranks %.0f bytes\n",
               rank, (unsigned long long)analyses, total / a, total_cpu / a, parts.c_str(),
               double(to_host) / a, double(sent) / a);
}

}  // namespace pardyn::plugins::clusters
