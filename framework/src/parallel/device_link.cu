// SPDX-License-Identifier: BSD-3-Clause
#include "device_link.hpp"

#include <cuda_runtime.h>

#include <cstdlib>
#include <cstring>

#include "pardyn/cuda_check.hpp"
#include "pardyn/for_each_cuda.cuh"

namespace pardyn::parallel {

namespace {
struct Header {
  std::uint64_t bytes = 0;
  std::uint64_t fresh = 0;  // 1: a new buffer, handle follows
  cudaIpcMemHandle_t handle;
};
}  // namespace

struct DeviceLink::Impl {
  Communicator* comm = nullptr;
  int peer = -1, tag = 0;
  // send side
  char* buf = nullptr;
  std::size_t capacity = 0;
  bool fresh = false;
  Header out;
  std::unique_ptr<Communicator::Request> header_send;
  // receive side
  char* mapped = nullptr;
  Header in;

  ~Impl() {
    if (header_send) header_send->wait();
    if (mapped) cudaIpcCloseMemHandle(mapped);
    if (buf) cudaFree(buf);
  }
};

DeviceLink::DeviceLink(Communicator& comm, int peer, int tag) : impl_(std::make_unique<Impl>()) {
  impl_->comm = &comm;
  impl_->peer = peer;
  impl_->tag = tag;
}
DeviceLink::~DeviceLink() = default;

bool DeviceLink::usable(Communicator& comm, int peer) {
  if (const char* e = std::getenv("PARDYN_DEVICE_LINKS"))
    if (e[0] == '0') return false;
  if (peer < 0 || !comm.same_node(peer)) return false;
  // The peer's device: ranks of a node take its devices in turn (Simulation), by local rank. Both
  // ranks ask about the same pair of devices, so both get the same answer.
  int count = 0, mine = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count < 1) return false;
  PARDYN_CUDA_CHECK(cudaGetDevice(&mine));
  int can = 1;
  // Without knowing the peer's local rank here, require peer access to every other device.
  for (int d = 0; d < count; ++d)
    if (d != mine) {
      int c = 0;
      PARDYN_CUDA_CHECK(cudaDeviceCanAccessPeer(&c, mine, d));
      can = can && c;
    }
  return can != 0;
}

char* DeviceLink::buffer(std::size_t bytes) {
  Impl& m = *impl_;
  if (m.header_send) {
    m.header_send->wait();
    m.header_send.reset();
  }
  if (bytes > m.capacity || !m.buf) {
    if (m.buf) PARDYN_CUDA_CHECK(cudaFree(m.buf));
    m.capacity = bytes + bytes / 4 + 4096;
    PARDYN_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&m.buf), m.capacity));
    m.fresh = true;
  }
  return m.buf;
}

void DeviceLink::post(std::size_t bytes) {
  Impl& m = *impl_;
  PARDYN_CUDA_CHECK(cudaStreamSynchronize(cuda::launch_stream()));  // the packing (SideWork)
  m.out.bytes = bytes;
  m.out.fresh = m.fresh ? 1 : 0;
  if (m.fresh) PARDYN_CUDA_CHECK(cudaIpcGetMemHandle(&m.out.handle, m.buf));
  m.fresh = false;
  m.header_send = m.comm->isend(&m.out, sizeof(Header), m.peer, m.tag);
}

const char* DeviceLink::receive(std::size_t& bytes) {
  Impl& m = *impl_;
  m.comm->irecv(&m.in, sizeof(Header), m.peer, m.tag)->wait();
  if (m.in.fresh) {
    if (m.mapped) PARDYN_CUDA_CHECK(cudaIpcCloseMemHandle(m.mapped));
    m.mapped = nullptr;
    PARDYN_CUDA_CHECK(cudaIpcOpenMemHandle(reinterpret_cast<void**>(&m.mapped), m.in.handle,
                                           cudaIpcMemLazyEnablePeerAccess));
  }
  bytes = std::size_t(m.in.bytes);
  return m.mapped;
}

void DeviceLink::done() {
  // Nothing to say: the sender refills its buffer only after the next global step decision (the
  // displacement allreduce of Domain::prepare), which every rank reaches with its stream drained,
  // so the copies out of the buffer are over by then.
}

}  // namespace pardyn::parallel
