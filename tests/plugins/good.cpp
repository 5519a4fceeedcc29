// A well-formed out-of-tree plugin: one pair law (a harmonic spring between all pairs).
#include "pardyn/pair_potential.hpp"

struct TestSpring {
  struct Params {
    double k;
    static Params from(const pardyn::ParamSet& p) { return {p.real("k")}; }
  };
  template <typename Real>
  struct Evaluator {
    Real k;
    explicit Evaluator(const Params& p) : k(Real(p.k)) {}
    PARDYN_HD void pair(Real r2, Real, Real, int, int, Real& fdivr, Real& e) const {
      fdivr = -k;
      e = Real(0.5) * k * r2;
    }
  };
  static pardyn::FactoryInfo info() {
    pardyn::FactoryInfo f;
    f.name = "test_spring";
    f.summary = "U = k r^2 / 2 between every pair (test plugin)";
    f.schema.real("k", 1.0, "energy/length^2", "spring constant", 0.0);
    return f;
  }
};

PARDYN_PAIR_POTENTIAL_PLUGIN(TestSpring)
