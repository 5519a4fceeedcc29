// SPDX-License-Identifier: BSD-3-Clause
// A shared library that is not a pardyn plugin: it exports no descriptor.
extern "C" __attribute__((visibility("default"))) int not_a_plugin() { return 42; }
