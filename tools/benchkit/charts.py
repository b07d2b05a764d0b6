"""gnuplot charts shared by the benchmark report (tools/benchkit/report.py) and the
lab's comparison report (tools/xen-lab/lib/compare_report.py)."""

import subprocess
import sys


def histogram(png, dat, title, ncols, unity_line=False):
    """The gnuplot script of a clustered bar chart: DAT's first column labels the groups,
    its other ncols columns (with a header line) are the bars; optionally a line at 1."""
    with dat.open() as f:
        width = max(800, 60 * sum(1 for _ in f) + 200)
    extra = "set arrow from graph 0, first 1 to graph 1, first 1 nohead lc rgb 'red'\n" \
        if unity_line else ""
    return f"""set terminal pngcairo size {width},600 font ',10' noenhanced
set output '{png}'
set title '{title}'
set datafile missing 'NaN'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set key outside top center horizontal
set xtics rotate by -40 scale 0
set yrange [0:*]
set grid ytics
{extra}plot for [i=2:{ncols + 1}] '{dat}' using i:xtic(1) title columnheader(i)
"""


def render(script, who):
    """Runs one gnuplot script; a missing or failing gnuplot is reported, not fatal."""
    try:
        subprocess.run(["gnuplot"], input=script, text=True, check=True, capture_output=True)
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"{who}: gnuplot failed: {getattr(e, 'stderr', e)}", file=sys.stderr)
