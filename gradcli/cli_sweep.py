"""`gradcli sweep`: one spec over a grid of keys and seeds, on a pool or a Dask cluster.

Wiring only: the grid, execution, results directory and statistics are in
gradcli/sweep/, the layout of the report in render_sweep.py. Exit 0 when every
run went through, 1 when any failed (recorded in its run file), 2 for a bad spec,
grid, flag or DIR, 130 on Ctrl-C and 143 on SIGTERM (finished runs stay; the same command
resumes).
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from . import output as outputs
from .cli_common import (
    Terminated,
    backend_option,
    consoles,
    max_memory,
    on_sigterm,
    raise_terminated,
    reports_errors,
)
from .errors import GradcliError, SpecError

DASK_HINT = "pip install 'gradcli[dask]'"
TIMEOUT_VARIABLE = "GRADCLI_DASK_TIMEOUT"  # how long to try reaching --scheduler (default 10s)


@click.command()
@click.argument("spec", type=click.Path(path_type=Path))
@click.option("--param", "params", multiple=True, metavar="KEY=V1,V2,...",
              help="Sweep a dotted key (as --set) over these values; replaces the key in the "
                   "spec's sweep block or adds it to the grid (repeatable).")
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE",
              help="As for run: set a key in every run (before the swept values; repeatable).")
@click.option("--backend", default=None, metavar="NAME", callback=backend_option,
              help="Run every run on this backend (as --set backend=NAME).")
@click.option("--seeds", default=None, metavar="N | A:B",
              help="Sweep seed over 0…N−1, or A…B−1 (as Python's range).")
@click.option("--jobs", type=click.IntRange(min=1), default=None,
              help="Worker processes (default: the cores); --dask: the local cluster's workers.")
@click.option("--dask", "use_dask", is_flag=True,
              help="Run on a Dask cluster started on this machine (needs gradcli[dask]).")
@click.option("--scheduler", default=None, metavar="ADDRESS",
              help="Run on an existing Dask cluster, e.g. tcp://10.0.0.5:8786 (its workers need "
                   "gradcli and the spec's backend installed).")
@click.option("--out", default=None, metavar="DIR",
              help="Keep sweep.json, runs/<id>.json and results.csv here; the same command "
                   "with the same DIR resumes, skipping the runs already there.")
@click.option("--format", "fmt", type=click.Choice(("table", "json", "csv")), default="table",
              show_default=True, help="The grouped report: a table, JSON, or CSV (one row per group).")
@click.option("--output", "-o", default=None, metavar="FILE",
              help="Write the report to this file instead of stdout.")
@click.option("--numeric/--no-numeric", default=False, show_default=True,
              help="Also compute each run's finite-difference gradients (the report does not use "
                   "them; they cost one forward pass per input element).")
@max_memory
@reports_errors
def sweep(spec, params, overrides, backend, seeds, jobs, use_dask, scheduler, out, fmt, output, numeric,
          max_memory) -> None:
    """Run SPEC once per combination of the swept keys and report the runs grouped by every
    swept key but seed, with the statistics of the overridden gradient across seeds."""
    from . import render
    from .spec import load_spec_text
    from .spec.document import Source, compose, read_file
    from .spec.sweep import build_sweep, parse_param
    from .spec.sweepcheck import check_sweep
    from .sweep import execute, results, stats
    from .sweep.grid import axes, grid, parse_seeds

    if use_dask and scheduler:
        raise GradcliError("--dask starts a cluster here and --scheduler uses an existing one: "
                           "give one of them")
    _, err = consoles()
    path = str(spec)
    text = read_file(spec)
    _refuse_grid_sets(overrides)
    sets = tuple(overrides) + (() if backend is None else (f"backend={backend}",))
    base = load_spec_text(text, path=path, overrides=sets)  # exit 2 before any run
    param_axes = [parse_param(p) for p in params]
    the_grid = grid(axes(build_sweep(_sweep_node(text, path)), param_axes,
                         None if seeds is None else parse_seeds(seeds)))  # run count first
    check_sweep(compose(Source(path, text)), path, sets, param_axes)  # each value, before any run
    runs = [(r.id, r.params) for r in the_grid.runs]
    texts = out is not None  # run files are written only with --out
    worker = execute.Worker(text, path, render.to_json, numeric, max_memory, texts, sets)
    try:  # the first run's spec must load too: a bad value fails here, not in every run
        worker.experiment(runs[0][1])
    except SpecError as exc:
        raise SpecError(f"run {runs[0][0]} ({_params_text(runs[0][1])}): {exc}") from None
    if output is not None:  # refused before any run; _emit's deliver() writes it
        outputs.prepare(output, [spec])

    place = None
    if out is not None:
        place = results.ResultsDir(out, {"spec": path, "spec_text": text,
                                         "keys": list(the_grid.keys),
                                         "runs": [{"run": i, "params": p} for i, p in runs],
                                         **({"set": list(sets)} if sets else {}),
                                         "name": base.name})  # what plot sweep, report title it
        place.open()
    docs = place.finished() if place is not None else {}
    todo = [(i, p) for i, p in runs if i not in docs]
    jobs = jobs or execute.default_jobs()
    client = cluster = None
    if todo and (use_dask or scheduler):
        client, cluster = _dask_client(scheduler, jobs)
    pool = False
    # While runs go, SIGTERM is Terminated: the pool is stopped, the finished runs and
    # results.csv kept, and the exit is 143 (the default action would leave the workers
    # running and say nothing)
    previous = on_sigterm(raise_terminated)
    try:
        if client is not None:
            finished = execute.dask_runs(client, todo, text, str(Path(path).resolve()),
                                         render.to_json, numeric, max_memory, texts, sets)
        elif jobs == 1 or len(todo) <= 1:
            finished = execute.local_runs(todo, worker)
        else:
            pool = True
            finished = execute.pool_runs(todo, min(jobs, len(todo)), text, path, render.to_json,
                                         numeric, max_memory, texts, sets)
        _collect(finished, len(todo), len(runs) - len(todo), docs, place, err)
    except KeyboardInterrupt as stop:
        on_sigterm(previous)  # a second SIGTERM ends at once
        _interrupted(out, place, docs, runs, the_grid, pool, err, isinstance(stop, Terminated))
    finally:
        on_sigterm(previous)
        if place is not None:
            place.write_csv(list(docs.values()), the_grid.keys)
        if client is not None:
            client.close()
        if cluster is not None:
            cluster.close()

    report = stats.report(list(docs.values()), the_grid.keys)
    _emit(report, fmt, output, spec, base.name, stats.zero_true(list(docs.values())))
    raise SystemExit(1 if any(d.get("error") for d in docs.values()) else 0)


def _interrupted(out, place, docs, runs, the_grid, pool: bool, err, terminated: bool = False) -> None:
    """Ctrl-C (or SIGTERM): keep what finished (results.csv too), say how to resume, exit
    130 (143, as a shell reports SIGTERM)."""
    from rich.text import Text

    code = 143 if terminated else 130
    if place is not None:
        # a stop that fell between a run file's writing and its digest's keeping: the file
        # is whole, so the run is finished, and results.csv lists it (resuming skips it)
        for run_id, doc in place.finished().items():
            docs.setdefault(run_id, doc)
        place.write_csv(list(docs.values()), the_grid.keys)
    kept = f"; {len(docs)} of {len(runs)} runs are in {out}: the same command resumes" \
        if place is not None else ""
    err.print(Text(f"{'terminated' if terminated else 'interrupted'}{kept}", style="bold red"),
              soft_wrap=True)
    if pool:
        # A pool worker stopped while sending its result leaves the pool's manager thread
        # waiting for the rest of the message, and Python joins that thread at exit: leave
        # at once instead (every file is written, each atomically; no Dask to close).
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    raise SystemExit(code)


def _refuse_grid_sets(overrides) -> None:
    """--set gives every run one value; the grid is read from the spec's sweep block, so a
    --set of a sweep key would be taken and then change nothing."""
    for item in overrides:
        key = item.partition("=")[0].strip()
        if key == "sweep" or key.startswith("sweep."):
            raise GradcliError(f"--set {item}: --set gives every run one value and the grid is "
                               "the spec's sweep block; change the grid with --param KEY=V1,V2,... "
                               "(e.g. --param seed=0,1,2) or --seeds N")


def _sweep_node(text: str, path: str):
    from .spec.document import Map, Source, compose

    root = compose(Source(path, text))
    return root.get("sweep") if isinstance(root, Map) else None


def _params_text(params: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in params.items())


def _collect(finished, total: int, already: int, docs: dict, place, err) -> None:
    """Each run as it arrives: its file written (with --out), its digest kept for the
    report, counted on the progress bar."""
    import json

    from rich.text import Text

    from .printable import printable

    bar = _progress(err, total, already)
    try:
        for doc, text in finished:
            # the file first: a run in docs (and so in results.csv) always has its file
            if place is not None:
                place.write_run(doc["run"], text if text is not None else
                                json.dumps(doc, allow_nan=False) + "\n")
            docs[doc["run"]] = doc
            if doc.get("error"):
                err.print(Text(printable(f"run {doc['run']} ({_params_text(doc['params'])}) "
                                         f"failed: {doc['error']}"), style="red"), soft_wrap=True)
            bar(1)
    finally:
        finished.close()
        bar(None)


def _progress(err, total: int, already: int):
    """A progress bar over the runs on stderr (only on a terminal): call with 1 per run,
    None at the end."""
    if not err.is_terminal or not total:
        return lambda step: None
    from rich.progress import Progress

    progress = Progress(console=err, transient=True)
    task = progress.add_task(f"runs ({already} already done)" if already else "runs",
                             total=total)
    progress.start()

    def advance(step):
        if step is None:
            progress.stop()
        else:
            progress.advance(task, step)
    return advance


def _dask_client(scheduler: str | None, jobs: int):
    """A Dask client on the scheduler at ADDRESS, or on a local cluster of `jobs` workers."""
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise GradcliError(f"--dask and --scheduler need Dask: {DASK_HINT}") from None
    if scheduler is not None:
        try:
            return Client(scheduler, timeout=os.environ.get(TIMEOUT_VARIABLE, "10s")), None
        except (OSError, TimeoutError, ValueError) as exc:
            raise GradcliError(f"cannot reach the Dask scheduler at {scheduler}: {exc}") from None
    import logging  # dask imports it anyway; the rest of the CLI need not

    # No parent-death setting is needed here, unlike the pool's workers: each worker process
    # distributed starts (AsyncProcess) exits at once when its parent_alive_pipe closes, so a
    # SIGKILLed client takes them with it (measured: gone within 0.5 s, mid-run)
    cluster = LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True,
                           dashboard_address=":0", silence_logs=logging.ERROR)
    return Client(cluster), cluster


def _emit(report: dict, fmt: str, output: str | None, spec: Path, name: str,
          zero_true=()) -> None:
    """The report in fmt on stdout or in --output's file (tables as plain text, with the
    failed runs, which stderr had as they failed)."""
    from . import render_sweep as layout

    if fmt == "json":
        text = layout.report_json(report)
    elif fmt == "csv":
        text = layout.report_csv(report)
    else:
        tables = (layout.report_tables(report, f"sweep of {name}", zero_true)
                  if report["groups"] else [])
        if output is None:
            out = consoles()[0]
            for table in tables:
                out.print(table)
            return
        failures = layout.failures_text(report)
        text = outputs.plain_text([*tables, *([failures] if failures is not None else [])])
    outputs.deliver(text, output, [spec])
