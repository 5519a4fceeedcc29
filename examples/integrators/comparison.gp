# SPDX-License-Identifier: BSD-3-Clause
# Written by compare.py: the largest relative energy error against force evaluations.
# Run `gnuplot comparison.gp` in this folder to redraw comparison.png.

$m0 << EOD
# euler: force_evaluations max_rel_energy_error dt
1001 9.783455e-01 0.004
2001 7.292158e-01 0.002
4001 4.658526e-01 0.001
EOD
$m1 << EOD
# symplectic_euler: force_evaluations max_rel_energy_error dt
1001 2.783162e-02 0.004
2001 9.443996e-03 0.002
4001 4.481910e-03 0.001
EOD
$m2 << EOD
# leapfrog: force_evaluations max_rel_energy_error dt
1001 1.529436e-02 0.004
2001 1.746113e-03 0.002
4001 5.640198e-04 0.001
8001 1.393972e-04 0.0005
EOD
$m3 << EOD
# rk4: force_evaluations max_rel_energy_error dt
2001 3.690522e-01 0.008
4001 2.250619e-02 0.004
8001 1.400672e-03 0.002
16001 5.024018e-05 0.001
EOD
$m4 << EOD
# yoshida4: force_evaluations max_rel_energy_error dt
1501 6.626059e-01 0.008
3001 2.897064e-02 0.004
6001 4.948898e-04 0.002
12001 1.306919e-05 0.001
24001 9.030084e-07 0.0005
EOD
$m5 << EOD
# ab5: force_evaluations max_rel_energy_error dt
1013 3.202316e-01 0.004
2013 1.059255e-01 0.002
4013 1.235739e-03 0.001
8013 1.799696e-04 0.0005
16013 6.884615e-06 0.00025
EOD
$m6 << EOD
# dopri5: force_evaluations max_rel_energy_error rtol
6709 4.485831e-04 0.0001
10159 3.316233e-05 1e-05
15151 1.957308e-06 1e-06
21385 7.535234e-08 1e-07
EOD
$m7 << EOD
# leapfrog+dt_control: force_evaluations max_rel_energy_error dt_eta
2138 1.349976e-03 0.2
4347 2.113600e-04 0.1
8684 6.140367e-05 0.05
EOD

set terminal pngcairo size 1100,750 enhanced font 'Sans,11'
set output 'comparison.png'
set title "Two-galaxy collision, N = 512, eps = 0.02, 0 ≤ t ≤ 4: energy error against cost"
set logscale xy
set format x '%g'
set xtics (100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000, 100000, 200000)
set format y '10^{%L}'
set xlabel 'force evaluations (cost)'
set ylabel 'largest relative energy error  max_t |E(t) - E_0| / |E_0|'
set grid xtics ytics mxtics mytics lc rgb '#cccccc' lw 1, lc rgb '#eeeeee' lw 1
set autoscale xfix
set offsets graph 0.04, graph 0.04, 0, 0
set key bottom left box opaque spacing 1.2
plot $m0 using 1:2 with linespoints lc rgb '#888888' pt 7 ps 1.4 lw 2 title 'euler (1st order)', \
     $m1 using 1:2 with linespoints lc rgb '#17becf' pt 5 ps 1.4 lw 2 title 'symplectic\_euler (1st, symplectic)', \
     $m2 using 1:2 with linespoints lc rgb '#1f77b4' pt 9 ps 1.4 lw 2 title 'leapfrog (2nd, symplectic)', \
     $m3 using 1:2 with linespoints lc rgb '#ff7f0e' pt 11 ps 1.4 lw 2 title 'rk4 (4th)', \
     $m4 using 1:2 with linespoints lc rgb '#2ca02c' pt 13 ps 1.4 lw 2 title 'yoshida4 (4th, symplectic)', \
     $m5 using 1:2 with linespoints lc rgb '#9467bd' pt 15 ps 1.4 lw 2 title 'ab5 (5th, multistep)', \
     $m6 using 1:2 with linespoints lc rgb '#d62728' pt 7 ps 1.4 lw 2 title 'dopri5 (5(4), adaptive); rtol 10^{-4}...10^{-7}', \
     $m7 using 1:2 with linespoints lc rgb '#1f77b4' pt 8 ps 1.4 lw 2 dt 2 title 'leapfrog, dt\_control = acceleration; dt\_eta 0.2...0.05'
