# SPDX-License-Identifier: BSD-3-Clause
# Coarsening of the large real gas: droplet count and mean droplet size against time (from
# clusters.csv), and the droplet-size distribution at five times.
#   gnuplot -e "dir='out/real_gas_2d_large'" examples/real_gas_2d_large/coarsening.gp
# writes DIR/coarsening.png. Needs gnuplot (Debian: gnuplot-nox, which scripts/setup installs) and
# awk.
if (!exists("dir")) dir = 'out/real_gas_2d_large'
f = dir.'/clusters.csv'
set datafile separator ','
set terminal pngcairo size 1200,480 font ',11' noenhanced
set output dir.'/coarsening.png'
set multiplot layout 1,2
set title 'droplets (clusters of at least min_size particles)'
set xlabel 'time'
set logscale y
set ylabel 'number of droplets'
set y2label 'mean droplet size (particles)'
set y2tics
set logscale y2
set ytics nomirror
set key top center
plot f using 2:($3 > 0 ? $3 : 1/0) skip 1 with lines lw 2 title 'number', \
     f using 2:($4 > 0 ? $4 : 1/0) skip 1 axes x1y2 with lines lw 2 title 'mean size'
unset y2tics; unset y2label; unset logscale y2
set title 'droplet-size distribution'
set xlabel 'cluster size (particles; bins 2^b to 2^(b+1) - 1, plotted at 2^b)'
set ylabel 'clusters in the bin'
set logscale x 2
set key top right
set datafile separator whitespace
rows = int(system('awk "END {print NR - 1}" '.f))
# five analyses spread over the run: the first, three between, the last
pick(k) = 1 + (rows - 1) * k / 4
row(k) = sprintf('< awk -F, "NR == %d {for (i = 5; i <= NF; i++) if (\$i > 0) print 2^(i - 5), \$i}" %s', pick(k) + 1, f)
tim(k) = system(sprintf('awk -F, "NR == %d {print \$2}" %s', pick(k) + 1, f))
plot for [k = 0:4] row(k) using 1:2 with linespoints lw 2 title 't = '.tim(k)
unset multiplot
