# SPDX-License-Identifier: BSD-3-Clause
# Plots bench/real_gas_scaling.dat: particle-steps per second against N (docs/real-gas-scaling.png).
#   gnuplot bench/real_gas_scaling.gp
set terminal pngcairo size 900,520 font ',11' noenhanced
set output 'docs/real-gas-scaling.png'
set logscale xy
set xlabel 'particles N'
set ylabel 'particle-steps per second (whole run, every output)'
set title '2D real gas (soft_gas) on an NVIDIA H100, float'
set key bottom right
set grid
set xrange [5e3:2e8]
set yrange [5e6:2e9]
# one series per column, its NaN rows left out (so that the lines do not break)
col(c) = sprintf('< awk "!/^#/ && \$%d != \"NaN\" {print \$1, \$%d}" bench/real_gas_scaling.dat', c, c)
plot col(2) using 1:($2*$1) with linespoints lw 2 pt 7 title 'cell_list (cell pyramid)', \
     col(3) using 1:($2*$1) with linespoints lw 2 pt 5 title 'tree (theta 0.7)', \
     col(4) using 1:($2*$1) with linespoints lw 2 pt 9 dt 2 title 'before: flat far zones (N x cells)'
