// SPDX-License-Identifier: BSD-3-Clause
// Random sequential addition with keys (random_addition.hpp): the tiles, their candidates, the
// decision of a candidate by the candidates before it, and the ranks' agreement on the cut and the
// ids.
#include "random_addition.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

#include "../../common/messages.hpp"

namespace pardyn::plugins {

namespace {

enum : std::uint8_t { kOpen = 0, kKept = 1, kRejected = 2 };

struct Candidate {
  double x[3];
  std::uint64_t key;
  std::uint32_t epoch;
  std::uint32_t place;  // among its tile's candidates of its epoch
  std::uint32_t cell;   // within its tile
  std::uint8_t state;
};

// A tile's candidates (kept, rejected ones dropped after each round, and open ones) and, by cell,
// where they are.
struct Tile {
  std::vector<Candidate> c;
  std::vector<std::uint32_t> start;  // cell k's candidates: c[slot[start[k] .. start[k + 1])]
  std::vector<std::uint32_t> slot;
  std::uint32_t epochs = 0;  // rounds drawn
};

// A candidate: its tile and its index there.
struct Ref {
  std::uint64_t tile;
  std::uint32_t i;
};

// A candidate's place in the order of one round's candidates: key, tile, place in the tile's
// round.
struct Key {
  std::uint64_t key, tile;
  std::uint32_t place;
  bool operator<(const Key& o) const {
    return key != o.key ? key < o.key : tile != o.tile ? tile < o.tile : place < o.place;
  }
};

class Addition {
 public:
  Addition(const AdditionSetup& s, const GenerateContext& ctx) : s_(s), ctx_(ctx) {
    plan();
    tiles_.resize(std::size_t(tiles()));
  }

  std::vector<double> make(std::uint64_t first, std::uint64_t end,
                           const std::function<void(const AdditionStalled&)>& stalled);

 private:
  std::uint64_t tiles() const { return std::uint64_t(n_[0]) * std::uint64_t(n_[1]) * n_[2]; }
  void plan();
  Tile& ensure(std::uint64_t t, std::uint32_t epoch);
  void draw(std::uint64_t t, Tile& tile);
  void index(Tile& tile) const;
  void compact();
  int scan(const Ref& r, Ref& pending);
  void decide(const Ref& r);
  void decide_round(std::uint64_t t, std::uint32_t epoch);
  Candidate& at(const Ref& r) { return tiles_[std::size_t(r.tile)]->c[r.i]; }
  void sum(std::int64_t* v, std::size_t n) const {
    if (ctx_.comm) ctx_.comm->sum(v, n);
  }
  Key cut(std::uint64_t k, const std::vector<Key>& mine);
  std::vector<std::uint64_t> own_tiles(std::uint64_t first, std::uint64_t end) const;
  void rounds(const std::vector<std::uint64_t>& mine,
              const std::function<void(const AdditionStalled&)>& stalled);
  // A kept candidate up to the cut, as the ids order them.
  struct Point {
    std::uint32_t epoch;
    Key key;
    const Candidate* c;
  };
  std::int64_t points_of(std::uint64_t t, std::vector<Point>& points) const;

  AdditionSetup s_;
  const GenerateContext& ctx_;
  double s2_ = 0;
  std::int64_t n_[3] = {1, 1, 1};  // tiles per axis
  std::int64_t k_[3] = {1, 1, 1};  // cells per tile and axis
  double side_[3] = {1, 1, 1};     // tile edge
  std::uint32_t m_ = 1;            // candidates per tile and round
  std::vector<std::unique_ptr<Tile>> tiles_;
  std::vector<Ref> stack_;
  std::uint32_t last_ = 0;  // the last round
  Key limit_{0, 0, 0};      // the last kept candidate of the last round
};

// Tiles of about kTileParticles points, at least `spacing` (and a margin for rounding) wide, of
// cells as wide, no more of them than 4 M + 64 in a tile (a tiny spacing in a big region would
// otherwise be mostly empty cells).
void Addition::plan() {
  const int dim = s_.dim;
  double len[3] = {1, 1, 1}, big = 0;
  for (int d = 0; d < dim; ++d) {
    len[d] = s_.region.length(d);
    big = std::max({big, std::abs(s_.region.lo[d]), std::abs(s_.region.hi[d])});
  }
  const double wide = s_.spacing * (1 + 1e-9) + 8 * big * std::numeric_limits<double>::epsilon();
  s2_ = s_.spacing * s_.spacing;
  std::int64_t most[3] = {1, 1, 1};
  for (int d = 0; d < dim; ++d) most[d] = std::max<std::int64_t>(1, std::int64_t(len[d] / wide));
  const double want = std::max(1.0, std::round(double(s_.count) / kTileParticles));
  auto tiles_of = [&](double side, std::int64_t(&n)[3]) {
    double t = 1;
    for (int d = 0; d < dim; ++d) {
      const double q = std::round(len[d] / side);
      n[d] = q >= double(most[d]) ? most[d] : std::max<std::int64_t>(1, std::int64_t(q));
      t *= double(n[d]);
    }
    return t;
  };
  // The smallest tile edge that makes no more tiles than wanted (the count falls as the edge grows).
  double lo = 0, hi = 0;
  for (int d = 0; d < dim; ++d) hi = std::max(hi, 2 * len[d]);
  for (int i = 0; i < 100; ++i) {
    const double mid = 0.5 * (lo + hi);
    std::int64_t n[3];
    if (tiles_of(mid, n) > want) lo = mid;
    else hi = mid;
  }
  tiles_of(hi, n_);
  m_ = std::uint32_t(std::max<std::uint64_t>(1, (s_.count + tiles() - 1) / tiles()));
  for (int d = 0; d < dim; ++d) {
    side_[d] = len[d] / double(n_[d]);
    k_[d] = std::max<std::int64_t>(1, std::int64_t(side_[d] / wide));
  }
  const double most_cells = 4.0 * double(m_) + 64;
  while (double(k_[0]) * double(k_[1]) * double(k_[2]) > most_cells) {
    std::int64_t& k = *std::max_element(k_, k_ + dim);
    k = std::max<std::int64_t>(1, k - std::max<std::int64_t>(1, k / 5));
  }
}

// Tile t's candidates of round tile.epochs: M draws of its stream for that round, each a key and a
// position uniform in the tile.
void Addition::draw(std::uint64_t t, Tile& tile) {
  const int dim = s_.dim;
  const std::uint32_t epoch = tile.epochs++;
  std::mt19937_64 rng = ctx_.stream(std::uint64_t(epoch) * tiles() + t);
  std::int64_t tc[3] = {std::int64_t(t % std::uint64_t(n_[0])),
                        std::int64_t(t / std::uint64_t(n_[0]) % std::uint64_t(n_[1])),
                        std::int64_t(t / (std::uint64_t(n_[0]) * std::uint64_t(n_[1])))};
  for (std::uint32_t j = 0; j < m_; ++j) {
    Candidate c{{0, 0, 0}, rng(), epoch, j, 0, kOpen};
    std::int64_t cell[3] = {0, 0, 0};
    for (int d = 0; d < dim; ++d) {
      const double u = uniform01(rng);
      // The cell from u, not from x: the same cell however x rounds (cells are wider than the
      // spacing by more than rounding moves a point).
      cell[d] = std::min<std::int64_t>(k_[d] - 1, std::int64_t(u * double(k_[d])));
      c.x[d] = std::clamp(s_.region.lo[d] + (double(tc[d]) + u) * side_[d], s_.lo[d], s_.hi[d]);
    }
    c.cell = std::uint32_t((cell[2] * k_[1] + cell[1]) * k_[0] + cell[0]);
    tile.c.push_back(c);
  }
}

// The candidates by cell (a counting sort).
void Addition::index(Tile& tile) const {
  const std::size_t cells = std::size_t(k_[0] * k_[1] * k_[2]);
  tile.start.assign(cells + 1, 0);
  for (const Candidate& c : tile.c) ++tile.start[c.cell + 1];
  for (std::size_t k = 0; k < cells; ++k) tile.start[k + 1] += tile.start[k];
  tile.slot.resize(tile.c.size());
  std::vector<std::uint32_t> at(tile.start.begin(), tile.start.end() - 1);
  for (std::uint32_t i = 0; i < tile.c.size(); ++i) tile.slot[at[tile.c[i].cell]++] = i;
}

Tile& Addition::ensure(std::uint64_t t, std::uint32_t epoch) {
  std::unique_ptr<Tile>& p = tiles_[std::size_t(t)];
  if (!p) p = std::make_unique<Tile>();
  if (p->epochs <= epoch) {
    while (p->epochs <= epoch) draw(t, *p);
    index(*p);
  }
  return *p;
}

// Drops the rejected candidates: nothing depends on them.
void Addition::compact() {
  for (auto& p : tiles_) {
    if (!p) continue;
    auto& c = p->c;
    c.erase(
        std::remove_if(c.begin(), c.end(), [](const Candidate& x) { return x.state == kRejected; }),
        c.end());
    index(*p);
  }
}

// Candidate r against the candidates before it closer than the spacing (in its own and the
// neighbouring cells, minimum image across periodic axes): kRejected when one of them is kept,
// kKept when none is open, else kOpen with one of the open ones (to decide first) in `pending`.
int Addition::scan(const Ref& r, Ref& pending) {
  const int dim = s_.dim;
  const Candidate c = at(r);
  std::int64_t g[3] = {0, 0, 0};  // its cell on the whole grid
  {
    const std::int64_t l[3] = {std::int64_t(c.cell) % k_[0], std::int64_t(c.cell) / k_[0] % k_[1],
                               std::int64_t(c.cell) / (k_[0] * k_[1])};
    const std::uint64_t t = r.tile;
    const std::int64_t tc[3] = {std::int64_t(t % std::uint64_t(n_[0])),
                                std::int64_t(t / std::uint64_t(n_[0]) % std::uint64_t(n_[1])),
                                std::int64_t(t / (std::uint64_t(n_[0]) * std::uint64_t(n_[1])))};
    for (int d = 0; d < dim; ++d) g[d] = tc[d] * k_[d] + l[d];
  }
  // The neighbouring cells along each axis: wrapped on periodic axes (all of them, once, when
  // there are fewer than 3), clamped elsewhere.
  std::int64_t axis[3][3] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}};
  int len[3] = {1, 1, 1};
  for (int d = 0; d < dim; ++d) {
    const std::int64_t cells = n_[d] * k_[d];
    len[d] = 0;
    if (s_.region.wrap[d] && cells < 3) {
      for (std::int64_t h = 0; h < cells; ++h) axis[d][len[d]++] = h;
      continue;
    }
    for (std::int64_t h = g[d] - 1; h <= g[d] + 1; ++h) {
      if (s_.region.wrap[d]) axis[d][len[d]++] = (h + cells) % cells;
      else if (h >= 0 && h < cells) axis[d][len[d]++] = h;
    }
  }
  bool open = false;
  for (int a2 = 0; a2 < len[2]; ++a2)
    for (int a1 = 0; a1 < len[1]; ++a1)
      for (int a0 = 0; a0 < len[0]; ++a0) {
        const std::int64_t h[3] = {axis[0][a0], axis[1][a1], axis[2][a2]};
        std::uint64_t u = 0;
        std::int64_t l = 0;
        for (int d = 2; d >= 0; --d) {
          u = u * std::uint64_t(n_[d]) + std::uint64_t(h[d] / k_[d]);
          l = l * k_[d] + h[d] % k_[d];
        }
        Tile& tu = ensure(u, c.epoch);
        for (std::uint32_t q = tu.start[std::size_t(l)]; q < tu.start[std::size_t(l) + 1]; ++q) {
          const std::uint32_t i = tu.slot[q];
          const Candidate& o = tu.c[i];
          if (o.state == kRejected) continue;
          const bool before = o.epoch != c.epoch
                                  ? o.epoch < c.epoch
                                  : Key{o.key, u, o.place} < Key{c.key, r.tile, c.place};
          if (!before) continue;
          double r2 = 0;
          for (int d = 0; d < dim; ++d) {
            double dx = c.x[d] - o.x[d];
            if (s_.region.wrap[d]) {
              const double L = s_.region.length(d);
              dx -= L * std::nearbyint(dx / L);
            }
            r2 += dx * dx;
          }
          if (!(r2 < s2_)) continue;
          if (o.state == kKept) return kRejected;
          if (!open) pending = Ref{u, i}, open = true;
        }
      }
  return open ? kOpen : kKept;
}

// Decides r, and first the open candidates before it that it depends on (each pushed candidate
// comes before the one under it: the stack ends).
void Addition::decide(const Ref& r) {
  stack_.assign(1, r);
  while (!stack_.empty()) {
    const Ref top = stack_.back();
    if (at(top).state != kOpen) {
      stack_.pop_back();
      continue;
    }
    Ref pending{0, 0};
    const int state = scan(top, pending);
    if (state == kOpen) {
      stack_.push_back(pending);
    } else {
      at(top).state = std::uint8_t(state);
      stack_.pop_back();
    }
  }
}

// Decides tile t's candidates of round `epoch`, in key order.
void Addition::decide_round(std::uint64_t t, std::uint32_t epoch) {
  Tile& tile = ensure(t, epoch);
  std::vector<std::pair<std::uint64_t, std::uint32_t>> order;
  for (std::uint32_t i = 0; i < tile.c.size(); ++i)
    if (tile.c[i].epoch == epoch) order.emplace_back(tile.c[i].key, i);
  std::sort(order.begin(), order.end());
  for (const auto& [key, i] : order) decide(Ref{t, i});
}

// The k-th (from 1) of all ranks' kept candidates of the last round (this rank's: `mine`, sorted),
// found by bisection over the keys.
Key Addition::cut(std::uint64_t k, const std::vector<Key>& mine) {
  auto count_le = [&](std::uint64_t key) {  // the candidates of all ranks with keys <= key
    const auto it =
        std::partition_point(mine.begin(), mine.end(), [&](const Key& m) { return m.key <= key; });
    std::int64_t c = std::int64_t(it - mine.begin());
    sum(&c, 1);
    return std::uint64_t(c);
  };
  std::uint64_t lo = 0, hi = std::numeric_limits<std::uint64_t>::max();
  while (lo < hi) {
    const std::uint64_t mid = lo + (hi - lo) / 2;
    if (count_le(mid) >= k) hi = mid;
    else lo = mid + 1;
  }
  const std::uint64_t before = lo ? count_le(lo - 1) : 0;
  // The candidates with key lo (almost always one): all ranks', in order.
  Out out;
  for (const Key& m : mine)
    if (m.key == lo) out.put(m);
  const std::vector<std::vector<char>> all =
      ctx_.comm ? allgather(*ctx_.comm, out.take()) : std::vector<std::vector<char>>{out.take()};
  std::vector<Key> ties;
  for (const auto& bytes : all) {
    In in(bytes, "uniform");
    while (!in.done()) ties.push_back(in.get<Key>());
  }
  std::sort(ties.begin(), ties.end());
  if (k - before - 1 >= ties.size())
    throw Error("uniform: internal error: the ranks disagree on the kept candidates");
  return ties[std::size_t(k - before - 1)];
}

// The tiles this rank decides in every round: those whose middle id, were the ids spread evenly
// over the tiles, lies in its range [first, end) (all of them for a process alone).
std::vector<std::uint64_t> Addition::own_tiles(std::uint64_t first, std::uint64_t end) const {
  const std::uint64_t nt = tiles();
  std::vector<std::uint64_t> mine;
  for (std::uint64_t t = 0; t < nt; ++t) {
    const unsigned __int128 mid = ((unsigned __int128)(2 * t + 1) * s_.count) / (2 * nt);
    if (!ctx_.comm || (mid >= first && mid < end)) mine.push_back(t);
  }
  std::int64_t covered = std::int64_t(mine.size());
  sum(&covered, 1);
  if (std::uint64_t(covered) != nt)
    throw Error("uniform: internal error: the ranks' ranges do not cover the block");
  return mine;
}

// Rounds until `count` candidates are kept (in all ranks' tiles), or the candidates' budget is
// spent; then the cut among the last round's kept candidates (last_, limit_).
void Addition::rounds(const std::vector<std::uint64_t>& mine,
                      const std::function<void(const AdditionStalled&)>& stalled) {
  const double per_round = double(m_) * double(tiles());
  const std::uint64_t most =
      std::max<std::uint64_t>(1, std::uint64_t(s_.max_attempts * double(s_.count) / per_round));
  std::uint64_t kept_before = 0;  // all ranks' kept candidates of the rounds before
  std::vector<Key> keys;          // this rank's kept candidates of the round
  for (last_ = 0;; ++last_) {
    for (std::uint64_t t : mine) decide_round(t, last_);
    keys.clear();
    for (std::uint64_t t : mine)
      for (const Candidate& c : tiles_[std::size_t(t)]->c)
        if (c.epoch == last_ && c.state == kKept) keys.push_back(Key{c.key, t, c.place});
    std::int64_t kept = std::int64_t(keys.size());
    sum(&kept, 1);
    if (kept_before + std::uint64_t(kept) >= s_.count) break;
    kept_before += std::uint64_t(kept);
    if (last_ + 1 >= most) {
      stalled(AdditionStalled{kept_before, double(most) * per_round});
      throw Error("uniform: random sequential addition stalled");
    }
    compact();
  }
  std::sort(keys.begin(), keys.end());
  limit_ = cut(s_.count - kept_before, keys);
}

// Tile t's points, in order (round, key, place): its kept candidates up to the cut.
std::int64_t Addition::points_of(std::uint64_t t, std::vector<Point>& points) const {
  points.clear();
  for (const Candidate& c : tiles_[std::size_t(t)]->c) {
    if (c.state != kKept || c.epoch > last_) continue;
    const Key key{c.key, t, c.place};
    if (c.epoch == last_ && limit_ < key) continue;
    points.push_back(Point{c.epoch, key, &c});
  }
  std::sort(points.begin(), points.end(), [](const Point& a, const Point& b) {
    return a.epoch != b.epoch ? a.epoch < b.epoch : a.key < b.key;
  });
  return std::int64_t(points.size());
}

std::vector<double> Addition::make(std::uint64_t first, std::uint64_t end,
                                   const std::function<void(const AdditionStalled&)>& stalled) {
  const int dim = s_.dim;
  const std::uint64_t nt = tiles();
  const std::vector<std::uint64_t> mine = own_tiles(first, end);
  rounds(mine, stalled);
  // Every tile's points, from the ranks that decided it: the first id of each tile.
  std::vector<std::int64_t> counts(std::size_t(nt), 0);
  std::vector<Point> points;
  for (std::uint64_t t : mine) counts[std::size_t(t)] = points_of(t, points);
  sum(counts.data(), counts.size());
  // The tiles of this rank's ids (deciding those it did not decide in the rounds).
  std::vector<double> out(std::size_t(end - first) * std::size_t(dim));
  std::uint64_t id = 0;
  for (std::uint64_t t = 0; t < nt && id < end; id += std::uint64_t(counts[std::size_t(t)]), ++t) {
    if (id + std::uint64_t(counts[std::size_t(t)]) <= first) continue;
    if (!std::binary_search(mine.begin(), mine.end(), t))
      for (std::uint32_t e = 0; e <= last_; ++e) decide_round(t, e);
    if (points_of(t, points) != counts[std::size_t(t)])
      throw Error("uniform: internal error: the ranks disagree on a tile's points");
    for (std::size_t j = 0; j < points.size(); ++j) {
      const std::uint64_t i = id + j;
      if (i < first || i >= end) continue;
      for (int d = 0; d < dim; ++d)
        out[std::size_t(i - first) * std::size_t(dim) + std::size_t(d)] = points[j].c->x[d];
    }
  }
  return out;
}

}  // namespace

std::vector<double> random_addition(const AdditionSetup& setup, const GenerateContext& ctx,
                                    std::uint64_t first, std::uint64_t end,
                                    const std::function<void(const AdditionStalled&)>& stalled) {
  Addition a(setup, ctx);
  return a.make(first, end, stalled);
}

}  // namespace pardyn::plugins
