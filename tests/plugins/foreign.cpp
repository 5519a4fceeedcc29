// SPDX-License-Identifier: BSD-3-Clause
// A shared library that is not a pardyn plugin, whose constructor leaves a file behind (at
// $PARDYN_TEST_MARK): the loader must refuse it without ever running it (tests/cli/plugin_files.sh).
#include <cstdio>
#include <cstdlib>

namespace {
__attribute__((constructor)) void leave_a_mark() {
  if (const char* path = std::getenv("PARDYN_TEST_MARK"))
    if (std::FILE* f = std::fopen(path, "w")) {
      std::fputs("the foreign library's constructor ran\n", f);
      std::fclose(f);
    }
}
}  // namespace

extern "C" __attribute__((visibility("default"))) int foreign_function() { return 1; }
