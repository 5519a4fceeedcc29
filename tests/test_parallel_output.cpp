// SPDX-License-Identifier: BSD-3-Clause
// The observers in a parallel run, without MPI: the ranks are threads of this test, each with its
// own observer, joined by an in-process Comm (every collective is an exchange of bytes through a
// shared board, tagged with the operation so that ranks calling different collectives fail).
//   vtk          one piece per rank (frames/NNNNNN_<rank>.vtp), a summary frames/NNNNNN.pvtp by
//                rank 0 that VTK's parallel reader reads back as all particles, run.pvd listing
//                the .pvtp files
//   grid_fields  cell sums over all ranks, files by rank 0 only
//   thermo       thermo.csv by rank 0 only
//   clusters     the clusters of all ranks' particles, as one rank finds them
#include <gtest/gtest.h>
#include <vtkCellData.h>
#include <vtkDataArray.h>
#include <vtkFieldData.h>
#include <vtkImageData.h>
#include <vtkNew.h>
#include <vtkPointData.h>
#include <vtkPoints.h>
#include <vtkPolyData.h>
#include <vtkSmartPointer.h>
#include <vtkXMLDataElement.h>
#include <vtkXMLDataParser.h>
#include <vtkXMLImageDataReader.h>
#include <vtkXMLPPolyDataReader.h>
#include <vtkXMLPolyDataReader.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "pardyn/plugin.hpp"
#include "pardyn/app/registry.hpp"
#include "support.hpp"

namespace fs = std::filesystem;
using namespace pardyn;

namespace {

// --- An in-process communicator -----------------------------------------------------------------
// Where the ranks (threads) meet: exchange() returns every rank's contribution, in rank order, once
// all have made theirs. If a rank fails, the board breaks and the others' collectives throw instead
// of waiting for it.
class Board {
 public:
  explicit Board(int size) : size_(size), slots_(std::size_t(size)) {}

  std::vector<std::vector<char>> exchange(int rank, std::vector<char> mine) {
    std::unique_lock<std::mutex> lk(m_);
    if (broken_) throw std::runtime_error("another rank failed");
    const std::uint64_t round = round_;
    slots_[std::size_t(rank)] = std::move(mine);
    if (++arrived_ == size_) {
      result_ = std::move(slots_);
      slots_.assign(std::size_t(size_), {});
      arrived_ = 0;
      ++round_;
      cv_.notify_all();
      return result_;
    }
    if (!cv_.wait_for(lk, std::chrono::seconds(60), [&] { return round_ != round || broken_; }))
      throw std::runtime_error("a collective waited 60 s for the other ranks");
    if (round_ == round) throw std::runtime_error("another rank failed");
    return result_;
  }

  void breakdown() {
    std::lock_guard<std::mutex> lk(m_);
    broken_ = true;
    cv_.notify_all();
  }

 private:
  int size_;
  std::mutex m_;
  std::condition_variable cv_;
  std::vector<std::vector<char>> slots_, result_;
  int arrived_ = 0;
  std::uint64_t round_ = 0;
  bool broken_ = false;
};

class ThreadComm final : public Comm {
 public:
  ThreadComm(Board& board, int rank, int size) : board_(board), rank_(rank), size_(size) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void sum(double* values, std::size_t n) override {
    reduce("sum", values, n, [](double a, double b) { return a + b; });
  }
  void max(double* values, std::size_t n) override {
    reduce("max", values, n, [](double a, double b) { return std::max(a, b); });
  }
  std::vector<std::vector<char>> gather(const std::vector<char>& mine) override {
    auto all = collective("gather", mine);
    if (rank_ != 0) return {};
    return all;
  }
  void sum(std::int64_t* values, std::size_t n) override {
    std::vector<char> mine(n * sizeof(std::int64_t));
    if (n) std::memcpy(mine.data(), values, mine.size());
    const auto all = collective("sum64 " + std::to_string(n), mine);
    for (std::size_t i = 0; i < n; ++i) {
      std::int64_t acc = 0;
      for (const auto& bytes : all) {
        std::int64_t v;
        std::memcpy(&v, bytes.data() + i * sizeof v, sizeof v);
        acc += v;
      }
      values[i] = acc;
    }
  }
  // Every rank's messages go to every rank (a test's are small); each keeps those addressed to it.
  std::vector<std::vector<char>> alltoallv(std::vector<std::vector<char>> send) override {
    std::vector<char> mine;
    for (const auto& m : send) {
      const std::uint64_t len = m.size();
      const char* p = reinterpret_cast<const char*>(&len);
      mine.insert(mine.end(), p, p + sizeof len);
      mine.insert(mine.end(), m.begin(), m.end());
    }
    const auto all = collective("alltoallv", mine);
    std::vector<std::vector<char>> got(all.size());
    for (std::size_t from = 0; from < all.size(); ++from) {
      std::size_t at = 0;
      for (int to = 0; to < size_; ++to) {
        std::uint64_t len = 0;
        std::memcpy(&len, all[from].data() + at, sizeof len);
        at += sizeof len;
        if (to == rank_)
          got[from].assign(all[from].begin() + std::ptrdiff_t(at),
                           all[from].begin() + std::ptrdiff_t(at + len));
        at += len;
      }
    }
    return got;
  }
  void barrier() override { collective("barrier", {}); }

  std::vector<std::string> calls;  // the collectives this rank made, in order ("sum 13", ...)

 private:
  std::vector<std::vector<char>> collective(const std::string& op, const std::vector<char>& mine) {
    calls.push_back(op);
    std::vector<char> tagged(op.begin(), op.end());
    tagged.push_back('\0');
    tagged.insert(tagged.end(), mine.begin(), mine.end());
    auto all = board_.exchange(rank_, std::move(tagged));
    for (auto& bytes : all) {
      const std::string theirs(bytes.data());
      if (theirs != op)
        throw std::runtime_error("rank " + std::to_string(rank_) + " called " + op +
                                 " while another rank called " + theirs);
      bytes.erase(bytes.begin(), bytes.begin() + std::ptrdiff_t(op.size() + 1));
    }
    return all;
  }

  void reduce(const char* op, double* values, std::size_t n,
              const std::function<double(double, double)>& f) {
    std::vector<char> mine(n * sizeof(double));
    if (n) std::memcpy(mine.data(), values, mine.size());
    const auto all = collective(std::string(op) + " " + std::to_string(n), mine);
    for (std::size_t i = 0; i < n; ++i) {
      double acc = 0;
      for (std::size_t r = 0; r < all.size(); ++r) {
        double v;
        std::memcpy(&v, all[r].data() + i * sizeof(double), sizeof v);
        acc = r == 0 ? v : f(acc, v);
      }
      values[i] = acc;
    }
  }

  Board& board_;
  int rank_, size_;
};

// Runs body(rank, comm) on `ranks` threads; after all have ended, rethrows the first failure (by
// rank).
// Returns every rank's collective calls.
std::vector<std::vector<std::string>> run_ranks(int ranks,
                                                const std::function<void(int, Comm&)>& body) {
  Board board(ranks);
  std::vector<std::unique_ptr<ThreadComm>> comms;
  for (int r = 0; r < ranks; ++r) comms.push_back(std::make_unique<ThreadComm>(board, r, ranks));
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(ranks));
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r)
    threads.emplace_back([&, r] {
      try {
        body(r, *comms[std::size_t(r)]);
      } catch (...) {
        errors[std::size_t(r)] = std::current_exception();
        board.breakdown();
      }
    });
  for (auto& t : threads) t.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
  std::vector<std::vector<std::string>> calls;
  for (auto& c : comms) calls.push_back(c->calls);
  return calls;
}

RunInfo rank_info(const std::string& dir, int dim, Precision precision, Comm& comm) {
  RunInfo run;
  run.dim = dim;
  run.precision = precision;
  run.output_dir = dir;
  run.rank = comm.rank();
  run.ranks = comm.size();
  run.comm = &comm;
  return run;
}

std::shared_ptr<Observer> make(const std::string& type, const std::string& keys,
                               const RunInfo& run) {
  return test::registry().make_observer(type, test::params_for(PluginKind::Observer, type, keys),
                                        run);
}

// --- Particles and files ----------------------------------------------------------------------
// n particles of one rank; ids first_id, first_id + 1, ...
HostParticles particles(int dim, std::size_t n, std::int64_t first_id, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-2.0, 2.0);
  HostParticles p(dim);
  for (int d = 0; d < dim; ++d) {
    p.x[d].resize(n);
    p.v[d].resize(n);
    p.a[d].resize(n);
  }
  p.mass.resize(n);
  p.type.resize(n);
  p.id.resize(n);
  p.epot.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    for (int d = 0; d < dim; ++d) {
      p.x[d][i] = u(rng);
      p.v[d][i] = u(rng);
      p.a[d][i] = u(rng);
    }
    p.mass[i] = 1.5 + u(rng) / 4;
    p.type[i] = std::int32_t(i % 3);
    p.id[i] = first_id + std::int64_t(i);
    p.epot[i] = -std::abs(u(rng));
  }
  return p;
}

void observe(Observer& obs, const RunInfo& run, std::uint64_t step, double time,
             const HostParticles& p) {
  ObserveContext ctx;
  ctx.step = step;
  ctx.time = time;
  ctx.run = &run;
  ctx.particles = &p;
  obs.observe(ctx);
}

struct Parsed {
  vtkSmartPointer<vtkXMLDataParser> parser;
  vtkXMLDataElement* root = nullptr;
};

Parsed parse_xml(const std::string& path) {
  Parsed x;
  x.parser = vtkSmartPointer<vtkXMLDataParser>::New();
  x.parser->SetFileName(path.c_str());
  EXPECT_EQ(x.parser->Parse(), 1) << path << " does not parse";
  x.root = x.parser->GetRootElement();
  return x;
}

// run.pvd's (timestep, file) entries.
std::vector<std::pair<double, std::string>> read_pvd(const std::string& path) {
  std::vector<std::pair<double, std::string>> entries;
  const Parsed x = parse_xml(path);
  if (!x.root) return entries;
  vtkXMLDataElement* coll = x.root->FindNestedElementWithName("Collection");
  if (!coll) return entries;
  for (int i = 0; i < coll->GetNumberOfNestedElements(); ++i) {
    vtkXMLDataElement* ds = coll->GetNestedElement(i);
    entries.push_back(
        {std::strtod(ds->GetAttribute("timestep"), nullptr), ds->GetAttribute("file")});
  }
  return entries;
}

// The VTK XML word of an array's type, as a .vtp header says it.
std::string xml_type(vtkDataArray* a) {
  if (a->GetDataType() == VTK_FLOAT) return "Float32";
  if (a->GetDataType() == VTK_DOUBLE) return "Float64";
  return "Int" + std::to_string(8 * a->GetDataTypeSize());
}

std::vector<std::string> files_under(const std::string& dir) {
  std::vector<std::string> found;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) found.push_back(fs::relative(e.path(), dir).string());
  std::sort(found.begin(), found.end());
  return found;
}

std::string frame(const char* fmt, int index) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, index);
  return buf;
}

// Checks a .pvtp against its pieces: the pieces it lists, that its declared arrays are the pieces'
// arrays (name, type, components), and that VTK's parallel reader gives every rank's particles
// (piece 0's first), point by point.
void check_summary(const std::string& dir, int index, const std::vector<HostParticles>& ranks,
                   int dim, Precision precision) {
  const std::string summary = dir + "/" + frame("frames/%06d.pvtp", index);
  SCOPED_TRACE(summary);
  ASSERT_TRUE(fs::exists(summary));
  const Parsed x = parse_xml(summary);
  ASSERT_TRUE(x.root);
  EXPECT_STREQ(x.root->GetAttribute("type"), "PPolyData");
  vtkXMLDataElement* ppoly = x.root->FindNestedElementWithName("PPolyData");
  ASSERT_TRUE(ppoly);
  std::vector<std::string> sources;
  for (int i = 0; i < ppoly->GetNumberOfNestedElements(); ++i) {
    vtkXMLDataElement* e = ppoly->GetNestedElement(i);
    if (std::string(e->GetName()) == "Piece") sources.push_back(e->GetAttribute("Source"));
  }
  std::vector<std::string> want_sources;
  for (std::size_t r = 0; r < ranks.size(); ++r)
    want_sources.push_back(frame("%06d", index) + "_" + std::to_string(r) + ".vtp");
  EXPECT_EQ(sources, want_sources);

  // The declared point arrays are exactly every piece's.
  std::map<std::string, std::pair<std::string, int>> declared;  // name -> (type, components)
  vtkXMLDataElement* ppd = ppoly->FindNestedElementWithName("PPointData");
  ASSERT_TRUE(ppd);
  for (int i = 0; i < ppd->GetNumberOfNestedElements(); ++i) {
    vtkXMLDataElement* a = ppd->GetNestedElement(i);
    int comps = 1;
    a->GetScalarAttribute("NumberOfComponents", comps);
    declared[a->GetAttribute("Name")] = {a->GetAttribute("type"), comps};
  }
  vtkXMLDataElement* ppoints = ppoly->FindNestedElementWithName("PPoints");
  ASSERT_TRUE(ppoints && ppoints->GetNumberOfNestedElements() == 1);
  EXPECT_STREQ(ppoints->GetNestedElement(0)->GetAttribute("type"),
               precision == Precision::Float ? "Float32" : "Float64");
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    const std::string piece = dir + "/frames/" + want_sources[r];
    ASSERT_TRUE(fs::exists(piece)) << piece;
    vtkNew<vtkXMLPolyDataReader> reader;
    reader->SetFileName(piece.c_str());
    reader->Update();
    EXPECT_EQ(reader->GetErrorCode(), 0u) << piece;
    vtkPolyData* pd = reader->GetOutput();
    EXPECT_EQ(pd->GetNumberOfPoints(), vtkIdType(ranks[r].size())) << piece;
    vtkPointData* pt = pd->GetPointData();
    std::map<std::string, std::pair<std::string, int>> in_piece;
    for (int k = 0; k < pt->GetNumberOfArrays(); ++k)
      in_piece[pt->GetArray(k)->GetName()] = {xml_type(pt->GetArray(k)),
                                              pt->GetArray(k)->GetNumberOfComponents()};
    EXPECT_EQ(in_piece, declared) << piece;
  }

  // VTK's parallel reader: every rank's particles, in rank order.
  vtkNew<vtkXMLPPolyDataReader> preader;
  preader->SetFileName(summary.c_str());
  preader->Update();
  EXPECT_EQ(preader->GetErrorCode(), 0u);
  vtkPolyData* all = preader->GetOutput();
  std::size_t total = 0;
  for (const auto& p : ranks) total += p.size();
  ASSERT_EQ(all->GetNumberOfPoints(), vtkIdType(total));
  EXPECT_EQ(all->GetNumberOfVerts(), vtkIdType(total));
  vtkPointData* pt = all->GetPointData();
  for (const auto& [name, spec] : declared) {
    vtkDataArray* a = pt->GetArray(name.c_str());
    ASSERT_TRUE(a) << name;
    EXPECT_EQ(xml_type(a), spec.first) << name;
    EXPECT_EQ(a->GetNumberOfComponents(), spec.second) << name;
  }
  vtkDataArray* id = pt->GetArray("id");
  vtkDataArray* mass = pt->GetArray("mass");
  vtkDataArray* vel = pt->GetArray("velocity");
  ASSERT_TRUE(id && mass && vel);
  vtkIdType k = 0;
  for (const auto& p : ranks)
    for (std::size_t i = 0; i < p.size(); ++i, ++k) {
      EXPECT_EQ(std::int64_t(id->GetComponent(k, 0)), p.id[i]);
      const double want_m = precision == Precision::Float ? double(float(p.mass[i])) : p.mass[i];
      EXPECT_EQ(mass->GetComponent(k, 0), want_m);
      for (int d = 0; d < 3; ++d) {
        const double x = d < dim ? p.x[d][i] : 0.0, v = d < dim ? p.v[d][i] : 0.0;
        EXPECT_EQ(all->GetPoint(k)[d], precision == Precision::Float ? double(float(x)) : x);
        EXPECT_EQ(vel->GetComponent(k, d), precision == Precision::Float ? double(float(v)) : v);
      }
    }
}

// Two ranks write three frames into one folder (as on a shared file system); frame 1 has no
// particles on rank 0 and frame 2 none on rank 1: empty pieces.
void two_rank_frames(const std::string& name, int dim, Precision precision) {
  const std::string dir = test::scratch_dir(name);
  const std::size_t counts[3][2] = {{5, 4}, {0, 6}, {7, 0}};
  const double times[3] = {0.0, 0.15, 0.3};
  std::vector<std::vector<HostParticles>> frames(3);  // [frame][rank]
  for (int f = 0; f < 3; ++f)
    for (int r = 0; r < 2; ++r)
      frames[std::size_t(f)].push_back(
          particles(dim, counts[f][r], 1000 * (r + 1) + 100 * f, std::uint64_t(10 * f + r)));

  const auto calls = run_ranks(2, [&](int rank, Comm& comm) {
    const RunInfo run = rank_info(dir, dim, precision, comm);
    auto obs = make("vtk", "interval = 10", run);
    obs->begin(run);
    for (int f = 0; f < 3; ++f)
      observe(*obs, run, std::uint64_t(10 * f), times[f],
              frames[std::size_t(f)][std::size_t(rank)]);
    obs->end();
  });
  // One gather per frame, on both ranks.
  EXPECT_EQ(calls[0], (std::vector<std::string>{"gather", "gather", "gather"}));
  EXPECT_EQ(calls[1], calls[0]);

  const auto entries = read_pvd(dir + "/run.pvd");
  ASSERT_EQ(entries.size(), 3u);
  for (int f = 0; f < 3; ++f) {
    EXPECT_EQ(entries[std::size_t(f)].first, times[f]);
    EXPECT_EQ(entries[std::size_t(f)].second, frame("frames/%06d.pvtp", f));
    check_summary(dir, f, frames[std::size_t(f)], dim, precision);
  }
  // Nothing else: no serial frames, no temporary files.
  std::vector<std::string> want;
  for (int f = 0; f < 3; ++f)
    for (const char* fmt : {"frames/%06d.pvtp", "frames/%06d_0.vtp", "frames/%06d_1.vtp"})
      want.push_back(frame(fmt, f));
  want.push_back("run.pvd");
  EXPECT_EQ(files_under(dir), want);
}

}  // namespace

TEST(ParallelOutput, VtkTwoRanksDouble3D) { two_rank_frames("vtk3d", 3, Precision::Double); }
TEST(ParallelOutput, VtkTwoRanksFloat2D) { two_rank_frames("vtk2d", 2, Precision::Float); }

// Each rank writes its own pieces only; the summaries and run.pvd are rank 0's. (Separate folders
// here, to see who wrote what.)
TEST(ParallelOutput, VtkRankOneWritesOnlyItsPieces) {
  const std::string dir0 = test::scratch_dir("rank0"), dir1 = test::scratch_dir("rank1");
  run_ranks(2, [&](int rank, Comm& comm) {
    const RunInfo run = rank_info(rank == 0 ? dir0 : dir1, 3, Precision::Double, comm);
    auto obs = make("vtk", "", run);
    obs->begin(run);
    observe(*obs, run, 0, 0.0, particles(3, 3, 10 * rank, 1));
    observe(*obs, run, 100, 1.0, particles(3, 2, 10 * rank, 2));
    obs->end();
  });
  EXPECT_EQ(files_under(dir1),
            (std::vector<std::string>{"frames/000000_1.vtp", "frames/000001_1.vtp"}));
  EXPECT_EQ(files_under(dir0),
            (std::vector<std::string>{"frames/000000.pvtp", "frames/000000_0.vtp",
                                      "frames/000001.pvtp", "frames/000001_0.vtp", "run.pvd"}));
}

// run.pvd takes a frame in only once every rank has reported its piece written: at frame 0 no rank
// can have, so a run that stops there without end() (killed) lists nothing, although rank 0 wrote
// the summary; end() lists every frame.
TEST(ParallelOutput, VtkRunPvdListsOnlyFramesEveryRankFinished) {
  const std::string dir = test::scratch_dir("interrupted");
  run_ranks(2, [&](int rank, Comm& comm) {
    const RunInfo run = rank_info(dir, 2, Precision::Double, comm);
    auto obs = make("vtk", "", run);
    obs->begin(run);
    observe(*obs, run, 0, 0.0, particles(2, 4, 10 * rank, 1));
    if (rank == 1) obs->end();
    obs.reset();  // rank 0: no end(); the destructor still writes what was submitted
  });
  EXPECT_TRUE(fs::exists(dir + "/frames/000000.pvtp"));
  EXPECT_TRUE(fs::exists(dir + "/frames/000000_1.vtp"));
  EXPECT_TRUE(read_pvd(dir + "/run.pvd").empty());

  const std::string dir2 = test::scratch_dir("ended");
  run_ranks(2, [&](int rank, Comm& comm) {
    const RunInfo run = rank_info(dir2, 2, Precision::Double, comm);
    auto obs = make("vtk", "", run);
    obs->begin(run);
    observe(*obs, run, 0, 0.0, particles(2, 4, 10 * rank, 1));
    obs->end();
  });
  const auto entries = read_pvd(dir2 + "/run.pvd");
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].second, "frames/000000.pvtp");
}

// Pieces that would not match one summary (a label array on one rank only) are refused by rank 0.
TEST(ParallelOutput, VtkRefusesRanksWithDifferentArrays) {
  const std::string dir = test::scratch_dir("mismatch");
  try {
    run_ranks(2, [&](int rank, Comm& comm) {
      const RunInfo run = rank_info(dir, 3, Precision::Double, comm);
      auto obs = make("vtk", "", run);
      obs->begin(run);
      HostParticles p = particles(3, 3, 10 * rank, 1);
      if (rank == 1) p.labels.push_back({"cluster", {0, 0, -1}});
      observe(*obs, run, 0, 0.0, p);
      obs->end();
    });
    FAIL() << "rank 0 accepted pieces with different arrays";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("rank 1"), std::string::npos) << what;
    EXPECT_NE(what.find("cluster"), std::string::npos) << what;
  }
}

// A one-rank run with a communicator (mpirun -np 1) writes the serial layout.
TEST(ParallelOutput, VtkOneRankWritesPlainFrames) {
  const std::string dir = test::scratch_dir("one");
  const auto calls = run_ranks(1, [&](int, Comm& comm) {
    const RunInfo run = rank_info(dir, 3, Precision::Double, comm);
    auto obs = make("vtk", "", run);
    obs->begin(run);
    observe(*obs, run, 0, 0.5, particles(3, 3, 0, 1));
    obs->end();
  });
  EXPECT_TRUE(calls[0].empty());
  EXPECT_EQ(files_under(dir), (std::vector<std::string>{"frames/000000.vtp", "run.pvd"}));
  const auto entries = read_pvd(dir + "/run.pvd");
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].second, "frames/000000.vtp");
}

namespace {

void add(HostParticles& p, std::vector<double> x, std::vector<double> v, double m) {
  for (int d = 0; d < p.dim; ++d) {
    p.x[d].push_back(x[d]);
    p.v[d].push_back(v[d]);
  }
  p.mass.push_back(m);
}

vtkSmartPointer<vtkImageData> read_vti(const std::string& path) {
  EXPECT_TRUE(fs::exists(path)) << path;
  vtkNew<vtkXMLImageDataReader> r;
  r->SetFileName(path.c_str());
  r->Update();
  return r->GetOutput();
}

double cell(vtkImageData* img, const char* name, vtkIdType c, int comp = 0) {
  vtkDataArray* a = img->GetCellData()->GetArray(name);
  if (!a) throw Error(std::string("no cell array ") + name);
  return a->GetComponent(c, comp);
}

}  // namespace

// The known layout of GridFields.KnownLayoutGivesKnownCellValues2D split over two ranks: the
// fields are those of all particles (box [0,2] x [0,0.5], cells [2, 1]).
//   cell 0: masses 1 (rank 0), 1 (rank 1), 2 (rank 0); velocities (1,0), (-1,0), (0,3):
//           u = (0, 1.5), T = 11 / (2 (3 - 1)) = 2.75 (needs the flow of all three), densities 6, 8
//   cell 1: one particle (rank 1) of mass 0.5, velocity (2, 2): T NaN, densities 2, 1
//   one particle of rank 1 is outside the box.
TEST(ParallelOutput, GridFieldsSumsOverRanks) {
  const std::string dir0 = test::scratch_dir("rank0"), dir1 = test::scratch_dir("rank1");
  const auto calls = run_ranks(2, [&](int rank, Comm& comm) {
    RunInfo run = rank_info(rank == 0 ? dir0 : dir1, 2, Precision::Double, comm);
    run.box.lo[0] = 0, run.box.hi[0] = 2, run.box.lo[1] = 0, run.box.hi[1] = 0.5;
    auto obs = make("grid_fields", "cells = [2, 1]\ninterval = 1", run);
    HostParticles p(2);
    if (rank == 0) {
      add(p, {0.25, 0.25}, {1, 0}, 1);
      add(p, {0.75, 0.4}, {0, 3}, 2);
    } else {
      add(p, {0.5, 0.1}, {-1, 0}, 1);
      add(p, {2.0, 0.5}, {2, 2}, 0.5);
      add(p, {3.0, 0.2}, {0, 0}, 1);
    }
    obs->begin(run);
    observe(*obs, run, 0, 0.0, p);
    observe(*obs, run, 0, 0.0, p);  // the last step coinciding with a regular one: no second file
    obs->end();
  });
  // Two sums per observation (the cells' counts, masses and momenta; then their kinetic energy
  // about the flow), the same on both ranks.
  EXPECT_EQ(calls[0], (std::vector<std::string>{"sum 9", "sum 2"}));
  EXPECT_EQ(calls[1], calls[0]);
  EXPECT_FALSE(fs::exists(dir1 + "/fields.pvd"));
  EXPECT_FALSE(fs::exists(dir1 + "/fields"));
  EXPECT_EQ(files_under(dir0), (std::vector<std::string>{"fields.pvd", "fields/000000.vti"}));

  auto img = read_vti(dir0 + "/fields/000000.vti");
  ASSERT_TRUE(img);
  ASSERT_EQ(img->GetNumberOfCells(), 2);
  EXPECT_DOUBLE_EQ(cell(img, "count", 0), 3);
  EXPECT_DOUBLE_EQ(cell(img, "number_density", 0), 6.0);
  EXPECT_DOUBLE_EQ(cell(img, "mass_density", 0), 8.0);
  EXPECT_DOUBLE_EQ(cell(img, "velocity", 0, 0), 0.0);
  EXPECT_DOUBLE_EQ(cell(img, "velocity", 0, 1), 1.5);
  EXPECT_DOUBLE_EQ(cell(img, "temperature", 0), 2.75);
  EXPECT_DOUBLE_EQ(cell(img, "count", 1), 1);
  EXPECT_DOUBLE_EQ(cell(img, "number_density", 1), 2.0);
  EXPECT_DOUBLE_EQ(cell(img, "mass_density", 1), 1.0);
  EXPECT_DOUBLE_EQ(cell(img, "velocity", 1, 0), 2.0);
  EXPECT_TRUE(std::isnan(cell(img, "temperature", 1)));
  vtkDataArray* outside = img->GetFieldData()->GetArray("particles_outside");
  ASSERT_TRUE(outside);
  EXPECT_EQ(outside->GetComponent(0, 0), 1.0);
}

// thermo's values are global already: rank 0 writes thermo.csv, the other ranks nothing, and
// neither communicates.
TEST(ParallelOutput, ThermoWritesOnRankZeroOnly) {
  const std::string dir0 = test::scratch_dir("rank0"), dir1 = test::scratch_dir("rank1");
  const auto calls = run_ranks(2, [&](int rank, Comm& comm) {
    const RunInfo run = rank_info(rank == 0 ? dir0 : dir1, 3, Precision::Double, comm);
    auto obs = make("thermo", "file = \"logs/thermo.csv\"", run);
    obs->begin(run);
    for (std::uint64_t step : {0u, 10u}) {
      Thermo t;
      t.step = step;
      t.r.kinetic = 1.25 + double(step);
      ObserveContext ctx;
      ctx.step = step;
      ctx.time = 0.1 * double(step);
      ctx.run = &run;
      ctx.thermo = &t;
      obs->observe(ctx);
    }
    obs->end();
  });
  EXPECT_TRUE(calls[0].empty());
  EXPECT_TRUE(calls[1].empty());
  EXPECT_TRUE(files_under(dir1).empty());
  EXPECT_FALSE(fs::exists(dir1 + "/logs"));
  std::ifstream f(dir0 + "/logs/thermo.csv");
  std::vector<std::string> lines;
  for (std::string l; std::getline(f, l);) lines.push_back(l);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0].rfind("step,time,kinetic,", 0), 0u) << lines[0];
  EXPECT_EQ(lines[2].rfind("10,1,11.25,", 0), 0u) << lines[2];
}

// --- clusters: the join over the ranks ----------------------------------------------------------
// The analysis of particles spread over ranks (threads) by any ownership must be the one of all
// of them on one rank: the thermo columns, clusters.csv and the partition (matched by id).

// What analyse() needs of a step: the store and the run (no forces, no steps).
class AnalysisContext final : public StepContext {
 public:
  AnalysisContext(ParticleStore& s, const RunInfo& run) : s_(s), run_(run) {}
  ParticleStore& store() override { return s_; }
  BackendOps& ops() override { throw Error("AnalysisContext: no backend operations"); }
  const RunInfo& run() const override { return run_; }
  void compute_forces() override {}
  void apply_boundaries() override {}
  std::uint64_t step() const override { return 0; }
  double time() const override { return 0; }
  double dt() const override { return 0; }
  double dof() const override { return 0; }

 private:
  ParticleStore& s_;
  const RunInfo& run_;
};

// Droplets (Gaussian clumps) in a gas: cluster sizes from 1 to a few hundred at distance 1.
HostParticles droplets(int dim, const Box& box, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::normal_distribution<double> g(0.0, 0.9);
  std::vector<std::array<double, 3>> x;
  for (int c = 0; c < 50; ++c) {
    std::array<double, 3> centre{};
    for (int d = 0; d < dim; ++d) centre[d] = box.lo[d] + box.length(d) * u(rng);
    const int members = 2 + int(u(rng) * u(rng) * 120);
    for (int m = 0; m < members; ++m) {
      std::array<double, 3> p{};
      for (int d = 0; d < dim; ++d) {
        p[d] = centre[d] + g(rng);
        if (box.boundary[d] == Boundary::Periodic)
          p[d] -= box.length(d) * std::floor((p[d] - box.lo[d]) / box.length(d));
        else p[d] = std::clamp(p[d], box.lo[d], box.hi[d]);
      }
      x.push_back(p);
    }
  }
  for (int k = 0; k < 800; ++k) {
    std::array<double, 3> p{};
    for (int d = 0; d < dim; ++d) p[d] = box.lo[d] + box.length(d) * u(rng);
    x.push_back(p);
  }
  HostParticles hp(dim);
  hp.resize(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    for (int d = 0; d < dim; ++d) hp.x[d][i] = x[i][std::size_t(d)], hp.v[d][i] = 0;
    hp.mass[i] = 1;
    hp.type[i] = 0;
    hp.id[i] = std::int64_t(3 * i + 7);  // ids that are not store indices
  }
  return hp;
}

struct Analysed {
  std::vector<double> extra[8];                       // each rank's thermo columns
  std::map<std::int64_t, std::pair<int, int>> label;  // id -> (rank, cluster)
  std::string csv;
};

// The particles whose owner is `rank` analysed by clusters on that rank of `ranks` (one: no Comm).
void analyse_part(const HostParticles& all, const std::vector<int>& owner, const Box& box,
                  Precision precision, const std::string& dir, Comm* comm, std::mutex& m,
                  Analysed& out) {
  const int rank = comm ? comm->rank() : 0;
  HostParticles mine(all.dim);
  std::vector<std::size_t> pick;
  for (std::size_t i = 0; i < all.size(); ++i)
    if (owner[i] == rank) pick.push_back(i);
  mine.resize(pick.size());
  for (std::size_t k = 0; k < pick.size(); ++k) {
    for (int d = 0; d < all.dim; ++d) mine.x[d][k] = all.x[d][pick[k]], mine.v[d][k] = 0;
    mine.mass[k] = 1, mine.type[k] = 0, mine.id[k] = all.id[pick[k]];
  }
  ParticleStore store(all.dim, precision, host_memory());
  store.upload(mine);
  RunInfo run;
  if (comm) run = rank_info(dir, all.dim, precision, *comm);
  run.dim = all.dim, run.precision = precision, run.output_dir = dir, run.box = box;
  auto obs = make("clusters", "distance = 1.0\nmin_size = 4", run);
  obs->begin(run);
  AnalysisContext ctx(store, run);
  Thermo t;
  t.extra.assign(3, std::nan(""));
  obs->analyse(ctx, t, 0);
  obs->end();
  HostParticles got(all.dim);
  store.download(got, ParticleStore::kId | ParticleStore::kLabels);
  std::lock_guard<std::mutex> lk(m);
  out.extra[rank] = t.extra;
  ASSERT_EQ(got.labels.size(), 1u);
  for (std::size_t i = 0; i < got.id.size(); ++i)
    out.label[got.id[i]] = {rank, got.labels[0].second[i]};
}

Analysed analyse_on(int ranks, const HostParticles& all, const std::vector<int>& owner,
                    const Box& box, Precision precision, const std::string& dir) {
  Analysed out;
  std::mutex m;
  if (ranks == 1) analyse_part(all, owner, box, precision, dir, nullptr, m, out);
  else
    run_ranks(ranks, [&](int, Comm& comm) {
      analyse_part(all, owner, box, precision, dir, &comm, m, out);
    });
  std::ifstream in(dir + "/clusters.csv");
  out.csv.assign(std::istreambuf_iterator<char>(in), {});
  return out;
}

// Compares with one rank's analysis; returns the clusters with particles on several ranks.
std::size_t expect_same_clusters(const Analysed& par, const Analysed& ser, int ranks) {
  for (int r = 0; r < ranks; ++r)
    EXPECT_EQ(par.extra[r], ser.extra[0]) << "thermo columns of rank " << r;
  EXPECT_FALSE(ser.csv.empty());
  EXPECT_EQ(par.csv, ser.csv);
  EXPECT_EQ(par.label.size(), ser.label.size());
  std::map<int, int> to_ser, to_par;
  std::map<int, std::set<int>> ranks_of;
  std::size_t differ = 0;
  for (const auto& [id, rl] : par.label) {
    const int p = rl.second, s = ser.label.at(id).second;
    if (p >= 0) ranks_of[p].insert(rl.first);
    const bool same = (p < 0 || s < 0) ? p == -1 && s == -1
                                       : to_ser.emplace(p, s).first->second == s &&
                                             to_par.emplace(s, p).first->second == p;
    differ += !same;
  }
  EXPECT_EQ(differ, 0u) << "particles in another cluster than on one rank";
  EXPECT_GE(ranks_of.size(), 20u) << "too few clusters";
  std::size_t crossing = 0;
  for (const auto& [c, rs] : ranks_of) crossing += rs.size() > 1;
  return crossing;
}

// Slabs along x (a domain decomposition), stripes along y dealt out in turn (each rank's particles
// everywhere along y), particles dealt out at random, dealt out in turn to all ranks but the last,
// which holds none, and slabs shifted by half a slab (rank 0's across the face of the box).
std::vector<int> owners(const HostParticles& hp, const Box& box, int ranks, int kind) {
  std::mt19937_64 rng(5);
  std::vector<int> o(hp.size());
  for (std::size_t i = 0; i < hp.size(); ++i) {
    const double fx = (hp.x[0][i] - box.lo[0]) / box.length(0);
    if (kind == 0) o[i] = std::min(ranks - 1, int(fx * ranks));
    else if (kind == 1) o[i] = int(std::floor((hp.x[1][i] - box.lo[1]) / 2.5)) % ranks;
    else if (kind == 2) o[i] = int(rng() % std::uint64_t(ranks));
    else if (kind == 3) o[i] = int(i % std::size_t(ranks - 1));
    else o[i] = int(fx * ranks + 0.5) % ranks;
  }
  return o;
}

TEST(ParallelOutput, ClustersOnSeveralRanksAreOneRanksClusters) {
  struct Case {
    int dim;
    Boundary boundary;
    Precision precision;
  };
  for (const Case& c :
       {Case{2, Boundary::Periodic, Precision::Double},
        Case{3, Boundary::Periodic, Precision::Float}, Case{2, Boundary::Wall, Precision::Float},
        Case{3, Boundary::Open, Precision::Double}}) {
    Box box;
    for (int d = 0; d < 3; ++d)
      box.lo[d] = -3, box.hi[d] = c.dim == 2 ? 37 : 17, box.boundary[d] = c.boundary;
    const HostParticles all = droplets(c.dim, box, 17 + std::uint64_t(c.dim));
    const std::string tag =
        std::to_string(c.dim) + "d" + to_string(c.boundary) + to_string(c.precision);
    const Analysed ser = analyse_on(1, all, std::vector<int>(all.size(), 0), box, c.precision,
                                    test::scratch_dir("clusters-" + tag + "-1"));
    for (int ranks : {2, 3, 5})
      for (int kind = 0; kind < 5; ++kind) {
        SCOPED_TRACE(tag + ", " + std::to_string(ranks) + " ranks, ownership " +
                     std::to_string(kind));
        const std::string dir = test::scratch_dir("clusters-" + tag + "-" + std::to_string(ranks) +
                                                  std::to_string(kind));
        const Analysed par =
            analyse_on(ranks, all, owners(all, box, ranks, kind), box, c.precision, dir);
        const std::size_t crossing = expect_same_clusters(par, ser, ranks);
        if (kind != 3 || ranks > 2) {  // (2 ranks, the last empty: all on rank 0)
          EXPECT_GT(crossing, 0u) << "no cluster spans ranks";
        }
      }
  }
}
