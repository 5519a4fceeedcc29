// SPDX-License-Identifier: BSD-3-Clause
// A pardyn built without CUDA has no device links (Domain never asks for one).
#include "device_link.hpp"

namespace pardyn::parallel {

struct DeviceLink::Impl {};
DeviceLink::DeviceLink(Communicator&, int, int) {
  throw Error("internal: device links need the CUDA backend");
}
DeviceLink::~DeviceLink() = default;
bool DeviceLink::usable(Communicator&, int) { return false; }
char* DeviceLink::buffer(std::size_t) { return nullptr; }
void DeviceLink::post(std::size_t) {}
const char* DeviceLink::receive(std::size_t& bytes) {
  bytes = 0;
  return nullptr;
}
void DeviceLink::done() {}

}  // namespace pardyn::parallel
