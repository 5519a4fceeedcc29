// SPDX-License-Identifier: BSD-3-Clause
// The terminal progress bar fits the terminal: one line, never wider than it, whatever its width.
#include <gtest/gtest.h>

#include <string>

#include "pardyn/app/progress.hpp"

using namespace pardyn;

TEST(ProgressLine, NeverWiderThanTheTerminal) {
  for (int columns : {1, 8, 20, 40, 59, 60, 61, 80, 120, 300}) {
    for (double frac : {0.0, 0.42, 1.0}) {
      const std::string line =
          progress_line(frac, std::uint64_t(frac * 300000), 300000, 445.3, 12345.0, columns);
      EXPECT_LE(int(line.size()), std::max(1, columns - 1)) << columns << " columns: " << line;
      EXPECT_EQ(line.find('\n'), std::string::npos);
      EXPECT_EQ(line.find('\r'), std::string::npos);
    }
  }
}

TEST(ProgressLine, WideTerminalsGetTheWholeBarAndNarrowOnesKeepTheNumbers) {
  const std::string wide = progress_line(0.5, 150, 300, 445, 35, 120);
  EXPECT_EQ(wide.rfind("[###############---------------] ", 0), 0u) << wide;
  EXPECT_NE(wide.find(" 50%  step 150/300  445 steps/s  ETA 0:35"), std::string::npos) << wide;
  // At 60 columns the bar shrinks and the numbers stay whole.
  const std::string mid = progress_line(0.5, 150, 300, 445, 35, 60);
  EXPECT_EQ(mid.front(), '[');
  EXPECT_NE(mid.find("step 150/300  445 steps/s  ETA 0:35"), std::string::npos) << mid;
  // Too narrow for a bar: the numbers, cut at the edge.
  const std::string narrow = progress_line(0.5, 150, 300, 445, 35, 30);
  EXPECT_EQ(narrow.find('['), std::string::npos) << narrow;
  EXPECT_EQ(narrow, std::string(" 50%  step 150/300  445 steps/s  ETA 0:35").substr(0, 29));
}
