// SPDX-License-Identifier: BSD-3-Clause
// A pardyn built without MPI: no communicator. A launch by mpirun as several processes is refused,
// since each process would otherwise run the whole scenario alone and write the same files.
#include <cstdlib>
#include <string>

#include "communicator.hpp"

namespace pardyn::parallel {

bool built_with_mpi() { return false; }
Communicator* world() { return nullptr; }

void init(int*, char***) {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}) {
    const char* s = std::getenv(v);
    if (s && std::atoi(s) > 1)
      throw Error("this pardyn was built without MPI, but it was started by mpirun as one of " +
                  std::string(s) +
                  " processes (each would run the whole scenario alone). Install OpenMPI "
                  "(scripts/setup installs libopenmpi-dev) and rebuild, or run without mpirun");
  }
}
void finalize() {}
void agree_status(Communicator*, const std::string& error) {
  if (!error.empty()) throw Error(error);
}

void check_same(Communicator*, const std::string&, const std::string&, const std::string&) {}

}  // namespace pardyn::parallel
