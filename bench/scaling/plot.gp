# SPDX-License-Identifier: BSD-3-Clause
# The speed-up plot of docs/parallel.md from a table of bench/scaling.sh rates (first column the
# GPU count, its first row one GPU's rates):
#   gnuplot -e "data='bench/scaling/h100x4.dat'; out='docs/scaling.svg'" bench/scaling/plot.gp
if (!exists("term")) term = "svg size 900,420 font 'sans,12'"
eval "set terminal ".term
set output out
set termoption noenhanced
array base[6]
do for [c=1:6] { stats data every ::0::0 using (column(c + 1)) nooutput; base[c] = STATS_min }
set title "Speed-up over one GPU, whole pardyn runs (4x H200, NVLink)"
set xlabel "GPUs"
set ylabel "speed-up"
set xrange [0.8:4.2]
set yrange [0:4.4]
set xtics (1, 2, 4)
set key outside right
set grid
array name[6] = ["real gas 10^7, every output", "real gas 10^7, thermo at the ends", \
                 "Plummer 10^7 (tree)", "2D log 10^7 (tree)", "LJ 16.4M (domain)", \
                 "all-pairs 4.2M (ring)"]
plot x title "ideal" with lines dashtype 2 lc rgb "#888888", \
  for [c=1:6] data using 1:(column(c + 1) / base[c]) with linespoints pt 7 title name[c]
