// SPDX-License-Identifier: BSD-3-Clause
#include "ring.hpp"

#include <chrono>
#include <vector>

#include "store_ops.hpp"

namespace pardyn::parallel {

namespace {

class CpuRingBackend final : public RingBackend {
 public:
  const char* pack_local(const ParticleStore& s, std::size_t bytes) override {
    local_.resize(bytes);
    const std::size_t rec = 4 * (s.precision() == Precision::Float ? 4 : 8);
    pack_sources(s, local_.data(), reinterpret_cast<std::int32_t*>(local_.data() + s.size() * rec));
    return local_.data();
  }
  char* host_buffer(int which, std::size_t bytes) override {
    auto& b = buf_[which];
    if (b.size() < bytes) b.resize(bytes);
    return b.data();
  }
  SourceBlock make_block(int which, std::size_t n, std::size_t rec) override {
    SourceBlock blk;
    blk.n = n;
    blk.pos = buf_[which].data();
    blk.type = reinterpret_cast<const std::int32_t*>(buf_[which].data() + n * rec);
    return blk;
  }
  void begin_compute() override { t0_ = std::chrono::steady_clock::now(); }
  void end_compute() override {
    total_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
  }
  double total_seconds() override {
    const double t = total_;
    total_ = 0;
    return t;
  }

 private:
  // Records are 4 reals (8-byte aligned at worst): std::vector<double> keeps that alignment.
  struct Bytes {
    std::vector<double> v;
    std::size_t n = 0;
    void resize(std::size_t b) { v.resize((b + 7) / 8), n = b; }
    std::size_t size() const { return n; }
    char* data() { return reinterpret_cast<char*>(v.data()); }
  };
  Bytes local_, buf_[2];
  std::chrono::steady_clock::time_point t0_;
  double total_ = 0;
};

}  // namespace

std::unique_ptr<RingBackend> make_cpu_ring_backend() { return std::make_unique<CpuRingBackend>(); }

Ring::Ring(Communicator& comm, Backend backend) : comm_(comm) {
  backend_ = backend == Backend::Cuda ? make_cuda_ring_backend() : make_cpu_ring_backend();
}
Ring::~Ring() = default;

void Ring::compute(Potential& pot, ParticleStore& s, const ForceRequest& req, bool timed) {
  const int K = comm_.size(), r = comm_.rank();
  const std::uint64_t mine = s.size();
  std::vector<std::uint64_t> counts(static_cast<std::size_t>(K));
  comm_.allgather(&mine, sizeof mine, counts.data());
  const std::size_t rec = 4 * (s.precision() == Precision::Float ? 4 : 8);
  const std::size_t per = rec + sizeof(std::int32_t);

  const char* cur = backend_->pack_local(s, s.size() * per);
  std::size_t ncur = s.size();
  // The block in hand first: this rank's own particles, self pairs excluded.
  if (timed) backend_->begin_compute();
  pot.compute(s, Neighbourhood{NeighbourhoodKind::AllPairs, nullptr}, req);
  if (timed) backend_->end_compute();
  const int next = (r + 1) % K, prev = (r - 1 + K) % K;
  constexpr int kTag = 7100;
  for (int st = 1; st < K; ++st) {
    const int which = st % 2;
    const std::size_t nin = counts[std::size_t((r - st + K) % K)];
    char* in = backend_->host_buffer(which, nin * per);
    // While these wait, the kernels of the previous block run on the GPU.
    auto rq = comm_.irecv(in, nin * per, prev, kTag);
    auto sq = comm_.isend(cur, ncur * per, next, kTag);
    rq->wait();
    sq->wait();
    const SourceBlock blk = backend_->make_block(which, nin, rec);
    if (timed) backend_->begin_compute();
    if (nin > 0) pot.compute(s, Neighbourhood{NeighbourhoodKind::AllPairs, &blk}, req);
    backend_->computed(which);
    if (timed) backend_->end_compute();
    cur = in;
    ncur = nin;
  }
  if (timed) seconds_ += backend_->total_seconds();
}

}  // namespace pardyn::parallel
