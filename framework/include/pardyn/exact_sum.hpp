// SPDX-License-Identifier: BSD-3-Clause
// Exact summation of doubles: the sum of any number of terms, in any order and cut into any pieces
// (the ranks of a parallel run), rounded once to the nearest double at the end. What a generator or
// the set-up of a [[particles]] block sums over all its particles (a centre of mass, a momentum, a
// kinetic energy) is then the same bit for bit however the block is cut between ranks: a plain or
// compensated double sum depends on the order of its terms.
//
// Every finite double is an integer multiple of 2^-1074 below 2^1024, so the sum is kept as a
// fixed-point integer of kLimbs 32-bit digits from 2^-1074 up (with room for 2^64 terms), each digit
// in an int64_t that absorbs carries between normalisations. Adding a term costs a few integer
// operations; the value is converted to double with correct rounding (to nearest, ties to even).
// Infinities and NaNs are counted and give inf or NaN.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace pardyn {

class ExactSum {
 public:
  // 2^-1074 .. 2^1024 is 2098 bits; 64 more for carries: 68 digits of 32 bits.
  static constexpr int kLimbs = 68;
  // The digits, with the counts of +inf, -inf and NaN terms after them: what a reduction over ranks
  // adds up as 64-bit integers (reduce() in generator_support.hpp).
  static constexpr int kWords = kLimbs + 3;

  void add(double x) {
    std::uint64_t bits = 0;
    std::memcpy(&bits, &x, sizeof bits);
    const int exponent = int((bits >> 52) & 0x7ff);
    const bool negative = (bits >> 63) != 0;
    if (exponent == 0x7ff) {
      if ((bits & 0xfffffffffffffull) != 0) w_[kLimbs + 2] += 1;
      else w_[kLimbs + (negative ? 1 : 0)] += 1;
      return;
    }
    std::uint64_t mantissa = bits & 0xfffffffffffffull;
    if (exponent != 0) mantissa |= 0x10000000000000ull;
    if (mantissa == 0) return;
    // x = mantissa * 2^(max(exponent, 1) - 1075) = mantissa * 2^p * 2^-1074.
    const int p = (exponent == 0 ? 1 : exponent) - 1;
    const int k = p >> 5, s = p & 31;
    const unsigned __int128 v = static_cast<unsigned __int128>(mantissa) << s;
    const std::int64_t d0 = std::int64_t(std::uint64_t(v) & 0xffffffffull);
    const std::int64_t d1 = std::int64_t(std::uint64_t(v >> 32) & 0xffffffffull);
    const std::int64_t d2 = std::int64_t(std::uint64_t(v >> 64));
    if (negative) {
      w_[k] -= d0;
      w_[k + 1] -= d1;
      w_[k + 2] -= d2;
    } else {
      w_[k] += d0;
      w_[k + 1] += d1;
      w_[k + 2] += d2;
    }
    // Each digit moves by less than 2^32 per term: normalised every 2^30 terms, none overflows.
    if (++pending_ == (1u << 30)) normalise();
  }

  void add(const ExactSum& o) {
    ExactSum b = o;
    b.normalise();
    normalise();
    for (int i = 0; i < kWords; ++i) w_[i] += b.w_[i];
  }

  // The sum, rounded to the nearest double.
  double value() const {
    const std::int64_t pos_inf = w_[kLimbs], neg_inf = w_[kLimbs + 1], nan = w_[kLimbs + 2];
    if (nan > 0 || (pos_inf > 0 && neg_inf > 0)) return std::nan("");
    if (pos_inf > 0) return HUGE_VAL;
    if (neg_inf > 0) return -HUGE_VAL;
    ExactSum s = *this;
    s.normalise();
    bool negative = s.w_[kLimbs - 1] < 0;
    if (negative) {
      for (int i = 0; i < kLimbs; ++i) s.w_[i] = -s.w_[i];
      s.normalise();
    }
    int h = kLimbs - 1;
    while (h >= 0 && s.w_[h] == 0) --h;
    if (h < 0) return 0.0;
    // The top three digits (96 bits, below index 0 zero), and whether anything below them is not.
    auto digit = [&](int i) -> std::uint64_t { return i >= 0 ? std::uint64_t(s.w_[i]) : 0; };
    const unsigned __int128 v = (static_cast<unsigned __int128>(digit(h)) << 64) |
                                (static_cast<unsigned __int128>(digit(h - 1)) << 32) | digit(h - 2);
    bool sticky = false;
    for (int i = h - 3; i >= 0 && !sticky; --i) sticky = s.w_[i] != 0;
    const int base = 32 * (h - 2) - 1074;  // the exponent of v's lowest bit
    int length = 0;
    for (unsigned __int128 t = v; t != 0; t >>= 1) ++length;
    double out = 0;
    if (length <= 53) {
      out = std::ldexp(double(std::uint64_t(v)), base);  // exact (sticky is false here)
    } else {
      const int shift = length - 53;
      std::uint64_t m = std::uint64_t(v >> shift);
      const unsigned __int128 rest = v & ((static_cast<unsigned __int128>(1) << shift) - 1);
      const unsigned __int128 half = static_cast<unsigned __int128>(1) << (shift - 1);
      if (rest > half || (rest == half && (sticky || (m & 1)))) ++m;
      out = std::ldexp(double(m), base + shift);
    }
    return negative ? -out : out;
  }

  // The 64-bit words a reduction adds (after normalise(): digits below 2^32, so the sum over up to
  // 2^31 ranks fits).
  std::int64_t* words() { return w_; }
  // Carries propagated: every digit but the top one in [0, 2^32), the top one signed.
  void normalise() {
    for (int i = 0; i + 1 < kLimbs; ++i) {
      // w = low + c 2^32 with low in [0, 2^32) (the low bits of w's two's complement).
      const std::int64_t low = std::int64_t(std::uint64_t(w_[i]) & 0xffffffffull);
      w_[i + 1] += (w_[i] - low) / (std::int64_t(1) << 32);
      w_[i] = low;
    }
    pending_ = 0;
  }

 private:
  std::int64_t w_[kWords] = {};
  std::uint32_t pending_ = 0;
};

}  // namespace pardyn
