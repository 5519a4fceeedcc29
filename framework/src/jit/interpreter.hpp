// SPDX-License-Identifier: BSD-3-Clause
// The interpreter of a formula's steps (lower.hpp): what runs an expression law where no compiler
// is at hand at run time. The traversals call it for every pair, inside the same loops as compiled
// code (one call per pair, a switch per step: 3-8 times slower, docs/formulas.md).
#pragma once

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "lower.hpp"
#include "pardyn/math.hpp"

namespace pardyn::expr {

template <class Real>
class Interpreted {
 public:
  static constexpr int kMaxSteps = 1024;

  // The program `p` with its outputs: fdivr and e are the values of steps f and e.
  Interpreted(const Program& p, int f, int e) : out_f_(f), out_e_(e) {
    if (p.steps.size() > std::size_t(kMaxSteps))
      throw std::length_error("the formula needs " + std::to_string(p.steps.size()) +
                              " operations; the interpreter takes at most " +
                              std::to_string(kMaxSteps));
    for (const auto& s : p.steps)
      code_.push_back(Instr{s.op, std::uint16_t(s.a < 0 ? 0 : s.a),
                            std::uint16_t(s.b < 0 ? 0 : s.b), std::uint16_t(s.c < 0 ? 0 : s.c),
                            s.index, Real(s.value)});
  }

  // Long: one case per step operation.
  void run(const Real* c, Real r2, Real s, Real& fdivr, Real& e) const {
    Real t[kMaxSteps];
    t[0] = Real(0);  // what an unused operand of the first step reads
    const std::size_t n = code_.size();
    for (std::size_t i = 0; i < n; ++i) {
      const Instr& in = code_[i];
      const Real a = t[in.a], b = t[in.b];
      Real x;
      switch (in.op) {
        case StepOp::Const: x = in.value; break;
        case StepOp::Coef: x = c[in.index]; break;
        case StepOp::R2: x = r2; break;
        case StepOp::S: x = s; break;
        case StepOp::Recip: x = reciprocal(a); break;
        case StepOp::InvSqrt: x = inv_sqrt(a); break;
        case StepOp::Sqrt: x = std::sqrt(a); break;
        case StepOp::Neg: x = -a; break;
        case StepOp::Add: x = a + b; break;
        case StepOp::Sub: x = a - b; break;
        case StepOp::Mul: x = a * b; break;
        case StepOp::Fma: x = fma(a, b, t[in.c]); break;
        case StepOp::Exp: x = exponential(a); break;
        case StepOp::Log: x = ln(a); break;
        case StepOp::Sin: x = std::sin(a); break;
        case StepOp::Cos: x = std::cos(a); break;
        case StepOp::Tanh: x = std::tanh(a); break;
        case StepOp::Erf: x = std::erf(a); break;
        case StepOp::Erfc: x = std::erfc(a); break;
        case StepOp::Pow: x = std::pow(a, b); break;
        case StepOp::Min: x = b < a ? b : a; break;
        case StepOp::Max: x = b > a ? b : a; break;
        case StepOp::Step: x = a >= Real(0) ? Real(1) : Real(0); break;
        case StepOp::Less: x = a < b ? Real(1) : Real(0); break;
        case StepOp::Select: x = a != Real(0) ? b : t[in.c]; break;
        default: x = Real(0);
      }
      t[i] = x;
    }
    fdivr = t[out_f_];
    e = t[out_e_];
  }

 private:
  struct Instr {
    StepOp op;
    std::uint16_t a, b, c;
    int index;
    Real value;
  };
  std::vector<Instr> code_;
  int out_f_, out_e_;
};

}  // namespace pardyn::expr
