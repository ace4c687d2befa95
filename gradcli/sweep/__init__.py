"""Sweeps: one spec run over a grid of keys and seeds (spec-v2 "Sweeps").

grid.py builds the runs, execute.py runs them (in process, pool or Dask),
replay.py says which runs share a built graph, results.py keeps the results
directory and results.csv, stats.py computes the grouped report. Nothing in
this package renders or prints: cli_sweep.py and render_sweep.py do.
"""
