// SPDX-License-Identifier: BSD-3-Clause
// The ideal-gas reference of the rdf analysis: for two independent particles placed uniformly in
// the box, the probability that their separation (the minimum image on periodic axes) lies in the
// shell r1 <= r < r2. g(r) of a bin is the number of pairs counted in it over the pairs expected
// from this probability.
//
// The separation Delta of two uniform points has, along an axis of length L,
//   periodic (minimum image, |Delta| <= L/2):  density 1/L,
//   walled:                                     density (1 - |Delta|/L)/L on |Delta| < L
// (the triangle of the difference of two uniform variables: a partner at Delta from a particle
// exists only where both lie in the box). The axes are independent, so
//   P(r1 <= |Delta| < r2) = (1/V) int_{r1}^{r2} r^(dim-1) A(r) dr,
//   A(r) = int over the unit sphere of prod_{walled axes d} max(0, 1 - r |n_d| / L_d) dOmega,
// V the box volume (area in 2D). With every axis periodic A = 2 pi (2D) or 4 pi (3D): the shell
// area or volume over V, the usual normalisation. With walls, A is smaller: the pairs whose partner
// would lie beyond a wall are missing from the box, and the reference leaves them out too
// (so g = 1 for an ideal gas in a walled box at every r, not only at small r).
//
// Numerics: below every walled side (r <= min L_d over walled axes) the weight is never clipped and
// A(r) has a closed form, from the integrals of |n_d|, |n_d n_e| and |n_x n_y n_z| over the circle
// or the sphere (k_d = 1/L_d on walled axes, 0 on periodic ones):
//   2D  A = 2 pi - 4 r (k_x + k_y) + 2 r^2 k_x k_y,
//   3D  A = 4 pi - 2 pi r sum_d k_d + (8/3) r^2 sum_{d<e} k_d k_e - r^3 k_x k_y k_z.
// Beyond it A is integrated numerically: the integrand is symmetric in each n_d, so A is 2^dim
// times the integral over the positive quadrant (octant), done by Gauss-Legendre quadrature: 2D
// over the angle theta in [0, pi/2] (48 nodes); 3D over theta, phi in [0, pi/2]^2 with
// n = (sin t cos p, sin t sin p, cos t) and weight sin t (48 x 48 nodes). (Where nothing is
// clipped that quadrature agrees with the closed form to round-off; the clipping's kinks slow its
// convergence, still better than 1e-4 relative.) The radial integral over each bin uses 4-node
// Gauss-Legendre, exact for the polynomial r^(dim-1) A(r) (degree <= 2 dim - 1) of the unclipped
// range. Without walls the exact shell volume is used.
//
// Host code only; no CUDA, no dependency beyond the standard library.
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

namespace pardyn::plugins::rdf {

struct IdealBox {
  int dim = 3;
  double L[3] = {1, 1, 1};
  bool periodic[3] = {true, true, true};

  double volume() const {
    double v = 1;
    for (int d = 0; d < dim; ++d) v *= L[d];
    return v;
  }
  bool all_periodic() const {
    for (int d = 0; d < dim; ++d)
      if (!periodic[d]) return false;
    return true;
  }
};

constexpr double kPi = 3.14159265358979323846;

// Gauss-Legendre nodes and weights on [-1, 1] (Newton's method on P_n from the usual initial
// guesses; converged to round-off).
inline void gauss_legendre(int n, std::vector<double>& x, std::vector<double>& w) {
  x.assign(n, 0.0);
  w.assign(n, 0.0);
  for (int i = 0; i < (n + 1) / 2; ++i) {
    double z = std::cos(kPi * (i + 0.75) / (n + 0.5)), dp = 1;
    for (int it = 0; it < 100; ++it) {
      double p0 = 1, p1 = z;
      for (int k = 2; k <= n; ++k) {
        const double p2 = ((2 * k - 1) * z * p1 - (k - 1) * p0) / k;
        p0 = p1;
        p1 = p2;
      }
      dp = n * (z * p1 - p0) / (z * z - 1);  // P_n'(z)
      const double dz = p1 / dp;
      z -= dz;
      if (std::fabs(dz) < 1e-16) break;
    }
    // The derivative at the converged node (recomputed, for the weight).
    double p0 = 1, p1 = z;
    for (int k = 2; k <= n; ++k) {
      const double p2 = ((2 * k - 1) * z * p1 - (k - 1) * p0) / k;
      p0 = p1;
      p1 = p2;
    }
    dp = n * (z * p1 - p0) / (z * z - 1);
    x[i] = -z;
    x[n - 1 - i] = z;
    w[i] = w[n - 1 - i] = 2 / ((1 - z * z) * dp * dp);
  }
}

// The shell probabilities of one box, with the quadrature nodes computed once.
class IdealReference {
 public:
  explicit IdealReference(const IdealBox& b) : box_(b) {
    gauss_legendre(kAngular, ax_, aw_);
    gauss_legendre(kRadial, rx_, rw_);
  }

  // A(r): the angular integral of the weight prod_d max(0, 1 - r |n_d| / L_d) over walled axes.
  double angular(double r) const {
    const int dim = box_.dim;
    if (box_.all_periodic()) return dim == 2 ? 2 * kPi : 4 * kPi;
    double k[3] = {0, 0, 0}, shortest = 0;
    for (int d = 0; d < dim; ++d)
      if (!box_.periodic[d]) {
        k[d] = 1 / box_.L[d];
        shortest = shortest > 0 ? std::min(shortest, box_.L[d]) : box_.L[d];
      }
    if (r > shortest) return angular_quadrature(r);
    if (dim == 2) return 2 * kPi - 4 * r * (k[0] + k[1]) + 2 * r * r * k[0] * k[1];
    return 4 * kPi - 2 * kPi * r * (k[0] + k[1] + k[2]) +
           8.0 / 3.0 * r * r * (k[0] * k[1] + k[0] * k[2] + k[1] * k[2]) -
           r * r * r * k[0] * k[1] * k[2];
  }

  // A(r) by quadrature over the directions (any r).
  double angular_quadrature(double r) const {
    const int dim = box_.dim;
    double k[3] = {0, 0, 0};  // r / L_d on walled axes, 0 on periodic ones
    for (int d = 0; d < dim; ++d) k[d] = box_.periodic[d] ? 0.0 : r / box_.L[d];
    const double h = kPi / 4;  // half of [0, pi/2], mapped from [-1, 1]
    double sum = 0;
    if (dim == 2) {
      for (int i = 0; i < kAngular; ++i) {
        const double t = h * (ax_[i] + 1);
        sum += aw_[i] * weight(k[0] * std::cos(t)) * weight(k[1] * std::sin(t));
      }
      return 4 * h * sum;
    }
    for (int i = 0; i < kAngular; ++i) {
      const double t = h * (ax_[i] + 1), st = std::sin(t), ct = std::cos(t);
      const double wz = weight(k[2] * ct);
      if (wz == 0) continue;
      double inner = 0;
      for (int j = 0; j < kAngular; ++j) {
        const double p = h * (ax_[j] + 1);
        inner += aw_[j] * weight(k[0] * st * std::cos(p)) * weight(k[1] * st * std::sin(p));
      }
      sum += aw_[i] * st * wz * h * inner;
    }
    return 8 * h * sum;
  }

  // P(r1 <= |Delta| < r2) for two independent uniform particles.
  double shell(double r1, double r2) const {
    const int dim = box_.dim;
    const double V = box_.volume();
    if (box_.all_periodic())
      return dim == 2 ? kPi * (r2 * r2 - r1 * r1) / V
                      : 4.0 / 3.0 * kPi * (r2 * r2 * r2 - r1 * r1 * r1) / V;
    const double m = 0.5 * (r1 + r2), h = 0.5 * (r2 - r1);
    double sum = 0;
    for (int i = 0; i < kRadial; ++i) {
      const double r = m + h * rx_[i];
      sum += rw_[i] * (dim == 2 ? r : r * r) * angular(r);
    }
    return h * sum / V;
  }

 private:
  static double weight(double x) { return x < 1 ? 1 - x : 0.0; }
  static constexpr int kAngular = 48;
  static constexpr int kRadial = 4;
  IdealBox box_;
  std::vector<double> ax_, aw_, rx_, rw_;
};

}  // namespace pardyn::plugins::rdf
