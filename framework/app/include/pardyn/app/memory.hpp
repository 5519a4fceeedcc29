// SPDX-License-Identifier: BSD-3-Clause
// How much memory a run may still take, for the estimates made before anything large is allocated
// (a count of 10^12 particles is refused with the number, not met with std::bad_alloc).
#pragma once

#include <cstddef>
#include <string>

namespace pardyn {

// Bytes this process can still allocate on the host: /proc/meminfo's MemAvailable, less where the
// control group (a container, a batch job's limit) or the address-space limit (ulimit -v) allows
// less. 0 when none of them can be read (then nothing is refused on its account).
std::size_t host_memory_available();

// A size for a message: "512 B", "3.2 MiB", "1.5 GiB", "2.4 TiB".
std::string bytes_text(double bytes);

// Throws an Error when `bytes` exceed what the host has available:
// "<what> need(s) at least <bytes> of host memory; <available> is available: <advice>".
void require_host_memory(double bytes, const std::string& what, const std::string& advice);

}  // namespace pardyn
