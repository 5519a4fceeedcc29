// SPDX-License-Identifier: BSD-3-Clause
// The communicator over MPI (OpenMPI from Debian, or whichever MPI the machine runs).
#define OMPI_SKIP_MPICXX 1
#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>

#include "communicator.hpp"

namespace pardyn::parallel {
namespace {

// Messages above this go in pieces (MPI counts are ints).
constexpr std::size_t kPiece = std::size_t(1) << 30;

class MpiRequest final : public Communicator::Request {
 public:
  std::vector<MPI_Request> reqs;
  void wait() override {
    if (!reqs.empty()) MPI_Waitall(int(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE);
    reqs.clear();
  }
  ~MpiRequest() override { wait(); }
};

// A message of `bytes` at p as one request per piece of at most kPiece bytes: post is MPI_Isend or
// MPI_Irecv (the same signature but for the buffer's constness, whence the template).
template <class Byte, class Post>
std::unique_ptr<Communicator::Request> in_pieces(Byte* p, std::size_t bytes, int peer, int tag,
                                                 Post post) {
  auto r = std::make_unique<MpiRequest>();
  std::size_t off = 0;
  do {
    const std::size_t len = std::min(kPiece, bytes - off);
    r->reqs.emplace_back();
    post(p + off, int(len), MPI_BYTE, peer, tag, MPI_COMM_WORLD, &r->reqs.back());
    off += len;
  } while (off < bytes);
  return r;
}

class MpiComm final : public Communicator {
 public:
  MpiComm() {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &local_rank_);
    MPI_Comm_size(node, &local_size_);
    // Each node is named by the world rank of its first process.
    int leader = rank_;
    MPI_Bcast(&leader, 1, MPI_INT, 0, node);
    node_of_.resize(static_cast<std::size_t>(size_));
    MPI_Allgather(&leader, 1, MPI_INT, node_of_.data(), 1, MPI_INT, MPI_COMM_WORLD);
    MPI_Comm_free(&node);
#if defined(MPIX_CUDA_AWARE_SUPPORT)
    device_aware_ = MPIX_Query_cuda_support() == 1;
#endif
    if (const char* e = std::getenv("PARDYN_MPI_DEVICE"))
      device_aware_ = device_aware_ && e[0] == '1';
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int local_rank() const override { return local_rank_; }
  int local_size() const override { return local_size_; }
  bool device_aware() const override { return device_aware_; }
  bool same_node(int r) const override {
    return r >= 0 && r < size_ && node_of_[std::size_t(r)] == node_of_[std::size_t(rank_)];
  }

  void sum(double* v, std::size_t n) override {
    MPI_Allreduce(MPI_IN_PLACE, v, int(n), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  }
  void max(double* v, std::size_t n) override {
    MPI_Allreduce(MPI_IN_PLACE, v, int(n), MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  }
  void sum(std::int64_t* v, std::size_t n) override {
    MPI_Allreduce(MPI_IN_PLACE, v, int(n), MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  }
  void barrier() override { MPI_Barrier(MPI_COMM_WORLD); }

  std::vector<std::vector<char>> gather(const std::vector<char>& mine) override {
    std::uint64_t len = mine.size();
    std::vector<std::uint64_t> lens(static_cast<std::size_t>(size_));
    MPI_Gather(&len, 1, MPI_UINT64_T, lens.data(), 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    std::vector<std::vector<char>> out;
    if (rank_ == 0) {
      out.resize(static_cast<std::size_t>(size_));
      out[0] = mine;
      std::vector<std::unique_ptr<Request>> rs;
      for (int r = 1; r < size_; ++r) {
        out[std::size_t(r)].resize(lens[std::size_t(r)]);
        rs.push_back(irecv(out[std::size_t(r)].data(), lens[std::size_t(r)], r, kGatherTag));
      }
      for (auto& r : rs) r->wait();
    } else {
      isend(mine.data(), mine.size(), 0, kGatherTag)->wait();
    }
    return out;
  }

  std::vector<std::vector<char>> alltoallv(std::vector<std::vector<char>> send) override {
    if (send.size() != std::size_t(size_))
      throw Error("internal: alltoallv needs one message per rank");
    const std::size_t ranks = static_cast<std::size_t>(size_);
    std::vector<std::uint64_t> out_len(ranks), in_len(ranks);
    for (int r = 0; r < size_; ++r) out_len[std::size_t(r)] = send[std::size_t(r)].size();
    MPI_Alltoall(out_len.data(), 1, MPI_UINT64_T, in_len.data(), 1, MPI_UINT64_T, MPI_COMM_WORLD);
    std::vector<std::vector<char>> got(ranks);
    std::vector<std::unique_ptr<Request>> reqs;
    for (int r = 0; r < size_; ++r) {
      const std::size_t k = std::size_t(r);
      if (r == rank_ || in_len[k] == 0) continue;
      got[k].resize(in_len[k]);
      reqs.push_back(irecv(got[k].data(), in_len[k], r, kAlltoallTag));
    }
    for (int r = 0; r < size_; ++r) {
      const std::size_t k = std::size_t(r);
      if (r == rank_ || send[k].empty()) continue;
      reqs.push_back(isend(send[k].data(), send[k].size(), r, kAlltoallTag));
    }
    got[std::size_t(rank_)] = std::move(send[std::size_t(rank_)]);
    for (auto& q : reqs) q->wait();
    return got;
  }

  std::unique_ptr<Request> isend(const void* data, std::size_t bytes, int dest, int tag) override {
    return in_pieces(static_cast<const char*>(data), bytes, dest, tag, MPI_Isend);
  }
  std::unique_ptr<Request> irecv(void* data, std::size_t bytes, int source, int tag) override {
    return in_pieces(static_cast<char*>(data), bytes, source, tag, MPI_Irecv);
  }
  void allgather(const void* mine, std::size_t bytes, void* all) override {
    MPI_Allgather(mine, int(bytes), MPI_BYTE, all, int(bytes), MPI_BYTE, MPI_COMM_WORLD);
  }
  [[noreturn]] void abort(int code) override {
    std::fflush(stdout);
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, code);
    std::_Exit(code);
  }

 private:
  static constexpr int kGatherTag = 7001;
  static constexpr int kAlltoallTag = 7003;
  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1;
  bool device_aware_ = false;
  std::vector<int> node_of_;
};

std::unique_ptr<MpiComm> g_world;

}  // namespace

bool built_with_mpi() { return true; }
Communicator* world() { return g_world.get(); }

void init(int* argc, char*** argv) {
  if (g_world) return;
  // Started by a launcher (mpirun, srun, hydra) as one of several processes? A plain `pardyn run`
  // does not start MPI at all: no singleton start-up cost, no daemons.
  const char* vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"};
  bool launched = false;
  for (const char* v : vars) launched = launched || std::getenv(v) != nullptr;
  if (!launched) return;
  int provided = 0;
  MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
  // Errors return codes that pardyn does not check one by one; the default handler aborts the whole
  // job with MPI's message, which is what a user needs when a rank or the network fails.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  g_world = std::make_unique<MpiComm>();
  if (size == 1) g_world.reset();  // mpirun -np 1: a serial run (MPI stays initialised)
}

void finalize() {
  int started = 0, ended = 0;
  MPI_Initialized(&started);
  MPI_Finalized(&ended);
  g_world.reset();
  if (started && !ended) MPI_Finalize();
}

void agree_status(Communicator* comm, const std::string& error) {
  const int n = comm->size();
  const int failed = error.empty() ? 0 : 1;
  std::vector<int> all(std::size_t(n), 0);
  comm->allgather(&failed, sizeof(int), all.data());
  int first = -1;
  for (int r = 0; r < n; ++r)
    if (all[std::size_t(r)]) {
      first = r;
      break;
    }
  if (first < 0) return;
  // The first failing rank's message travels to rank 0, which reports it.
  if (first == 0) {
    if (comm->rank() == 0) throw AgreedError(error);
    throw QuietError();
  }
  constexpr int kTag = 7002;
  if (comm->rank() == first) {
    const std::uint64_t len = error.size();
    comm->isend(&len, sizeof len, 0, kTag)->wait();
    comm->isend(error.data(), error.size(), 0, kTag)->wait();
    throw QuietError();
  }
  if (comm->rank() == 0) {
    std::uint64_t len = 0;
    comm->irecv(&len, sizeof len, first, kTag)->wait();
    std::string msg(len, '\0');
    comm->irecv(msg.data(), len, first, kTag)->wait();
    throw AgreedError("rank " + std::to_string(first) + ": " + msg);
  }
  throw QuietError();
}

void check_same(Communicator* comm, const std::string& what, const std::string& value,
                const std::string& advice) {
  const int n = comm->size();
  const std::uint64_t h = std::hash<std::string>{}(value);
  std::vector<std::uint64_t> all(static_cast<std::size_t>(n));
  comm->allgather(&h, sizeof h, all.data());
  for (int r = 1; r < n; ++r)
    if (all[std::size_t(r)] != all[0]) {
      if (comm->rank() != 0) throw QuietError();
      throw AgreedError("rank " + std::to_string(r) + " has a different " + what + " than rank 0" +
                        (what == "pardyn build" ? " (rank 0: " + value + ")" : std::string("")) +
                        "; " + advice);
    }
}

}  // namespace pardyn::parallel
