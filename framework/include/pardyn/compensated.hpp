// SPDX-License-Identifier: BSD-3-Clause
// Compensated (Kahan-Babuska-Neumaier) summation in double. Energies and conserved quantities are
// summed with it: a plain double sum of 10^6 terms of mixed sign loses digits that the energy drift of a
// good integrator lives in.
#pragma once

#include <cmath>

#include "pardyn/core.hpp"

namespace pardyn {

struct CompensatedSum {
  double sum = 0.0;
  double c = 0.0;

  PARDYN_HD void add(double x) {
    double t = sum + x;
    if (fabs(sum) >= fabs(x)) c += (sum - t) + x;
    else c += (x - t) + sum;
    sum = t;
  }
  PARDYN_HD void add(const CompensatedSum& o) {
    add(o.sum);
    add(o.c);
  }
  // The accumulator interface of sum_over_index (reduce.hpp).
  PARDYN_HD void merge(const CompensatedSum& o) { add(o); }
  PARDYN_HD double value() const { return sum + c; }
};

}  // namespace pardyn
