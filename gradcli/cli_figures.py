"""The figure commands (`gradcli plot curve|train|sweep`) and `gradcli report`.

matplotlib is imported only when a figure is drawn, so the rest of the CLI starts without it;
rich and the runner only when a command runs (`gradcli --help` imports neither).
"""
from __future__ import annotations

import functools
from pathlib import Path

import click

from . import __version__
from . import output as outputs
from .cli_common import (
    Failure,
    attempt,
    backend_option,
    backends_option,
    consoles,
    load_one,
    max_memory,
    printable,
    reports_errors,
    spec_paths,
    worst,
)


def figure_text(renames: bool):
    """The options that replace a figure's words (for a paper), as one decorator; the
    command receives them as `text` (a plot.text.FigureText)."""
    options = [
        click.option("--title", default=None, metavar="TEXT",
                     help="The figure's title (default: the spec's name; '' for none)."),
        click.option("--subtitle", default=None, metavar="TEXT",
                     help="The line under the title (default: what is drawn; '' for none)."),
        click.option("--xlabel", default=None, metavar="TEXT", help="The x axis' label."),
        click.option("--ylabel", multiple=True, metavar="TEXT",
                     help="A y axis' label; repeat for several axes, top to bottom."),
        click.option("--legend-title", default=None, metavar="TEXT",
                     help="The legend's title ('' for none)."),
    ]
    if renames:
        options.append(click.option(
            "--label", "labels", multiple=True, metavar="OLD=NEW",
            help="Draw the line named OLD (a --hue value, a spec's name) as NEW; repeatable. "
                 "OLD may hold '=': the split is at the '=' that leaves a line's name on the "
                 "left."))

    def wrap(command):
        def with_text(*args, title, subtitle, xlabel, ylabel, legend_title, labels=(), **kwargs):
            from .plot.text import FigureText, parse_labels
            return command(*args, text=FigureText(title, subtitle, xlabel, tuple(ylabel),
                                                  legend_title, labels=parse_labels(labels)),
                           **kwargs)
        with_text = functools.wraps(command)(with_text)
        for option in reversed(options):
            with_text = option(with_text)
        return with_text
    return wrap


@click.group()
def plot() -> None:
    """Draw a figure to .png, .svg or .pdf (the --output extension); needs gradcli[plot]."""


@plot.command(name="curve")
@click.argument("spec", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--input", "name", default=None, help="The input to sweep (default: the first "
              "float input in wrt).")
@click.option("--of", "of", default=None, metavar="NAME",
              help="The output drawn, by its name in the spec's outputs (default: the first "
                   "output; the file is --output).")
@click.option("--range", "span", default=None, metavar="LOW:HIGH",
              help="The values swept (default: the input's own min..max, widened).")
@click.option("--points", type=int, default=401, show_default=True,
              help="How many values of the input are swept, evenly over the range (2 to 100000).")
@click.option("--element", default=None, metavar="INDEX",
              help="The input's element whose gradients are drawn: one index per dimension, "
                   "e.g. 3 or 0,5 (default: the element with the largest |overridden gradient| "
                   "at the spec's values; the figure's title says which).")
@click.option("--backend", default=None, callback=backend_option,
              help="Run on this backend instead of the spec's.")
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE", help="As for run.")
@click.option("--output", "-o", default=None, metavar="FILE", help="Default: <spec name>-curve.png.")
@max_memory
@reports_errors
@figure_text(renames=False)
def plot_curve(spec, name, of, span, points, element, backend, overrides, output, max_memory,
               text) -> None:
    """The forward value, true derivative, overridden gradient and numeric derivative of
    one of SPEC's outputs (the first, or --of NAME) along one element of one input (the
    straight-through figure): that element takes each value of the range, while the input's
    other elements and the other inputs keep the spec's values; the gradients drawn are with
    respect to that element (of the output's same element, or its element 0, as the figure's
    title says)."""
    from . import curve
    from .plot import figure_bytes, figure_target
    from .plot.curve import curve_figure
    out, err = consoles()
    span = curve.parse_range(span) if span is not None else None
    element = curve.parse_element(element) if element is not None else None
    experiment = load_one(spec, overrides, False, err, output)
    if name is not None and name not in experiment.inputs:  # curve's message, with the hint
        from .errors import GradcliError, did_you_mean  # every other unknown name gives
        hint = did_you_mean(name, list(experiment.inputs))
        raise GradcliError(curve.sweepable(experiment, name) + (f" ({hint})" if hint else ""))
    of = curve.output_named(experiment, of)  # before any file is named: an unknown one exits 2
    target, fmt, shown = figure_target(output, experiment.name, "curve", [spec])
    data = curve.sweep(experiment, name or curve.first_input(experiment), backend=backend,
                       span=span, points=points, max_memory=max_memory, element=element,
                       output=of)
    outputs.write_file(target, figure_bytes(curve_figure(data, text), fmt), shown)
    _wrote(out, shown)


@plot.command(name="train")
@spec_paths
@click.option("--backends", default=None, metavar="B1,B2,...", callback=backends_option,
              help="One line per backend.")
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE", help="As for run.")
@click.option("--output", "-o", default=None, metavar="FILE", help="Default: <spec name>-train.png.")
@max_memory
@reports_errors
@figure_text(renames=True)
def plot_train(specs, backends, overrides, output, max_memory, text) -> None:
    """The training loss of each SPEC against steps (and its final loss on the whole training
    part as a star), and every train.metrics entry at its evaluation steps (training part
    solid, test part dashed): one line per spec (or per backend)."""
    from . import runner
    from .labels import told_apart
    from .plot import figure_bytes, figure_target
    from .plot.train import train_figure, training_runs
    out, err = consoles()
    for path in specs:
        if (path / "sweep.json").is_file():  # the curves of a sweep's runs: plot sweep's job
            from .errors import GradcliError
            raise GradcliError(f"{printable(path)} is a sweep directory: its learning curves are "
                               f"`gradcli plot sweep {printable(path)} --x step --y loss "
                               "--hue KEY` (mean ± std over seeds per step; docs/plots.md)")
    loaded = [load_one(p, overrides, False, err, output) for p in specs]
    names = backends or [None]
    title = printable(loaded[0].name if len(loaded) == 1
                      else " vs ".join(told_apart([e.name for e in loaded])))
    target, fmt, shown = figure_target(output, loaded[0].name, "train", specs)
    runs = training_runs([(exp, b, runner.run(exp, backend=b, numeric=False,
                                                      max_memory=max_memory))
                          for exp in loaded for b in names], several_specs=len(loaded) > 1)
    outputs.write_file(target, figure_bytes(train_figure(title, runs, text=text), fmt), shown)
    _wrote(out, shown)


@plot.command(name="sweep")
@click.argument("directory", metavar="DIR", type=click.Path(path_type=Path))
@click.option("--x", "x", required=True, metavar="KEY",
              help="The swept key along x, or `step`: learning curves (the training step).")
@click.option("--y", "y", required=True, metavar="COLUMN",
              help="The results.csv column drawn; with --x step a quantity the runs keep per "
                   "step: loss, <metric>.train, <metric>.test.")
@click.option("--hue", default=None, metavar="KEY", help="One line per value of this swept key.")
@click.option("--where", multiple=True, metavar="KEY=VALUE",
              help="Only the runs where the swept KEY is VALUE (repeatable); unfixed keys "
                   "other than --x and --hue are pooled.")
@click.option("--output", "-o", default=None, metavar="FILE", help="Default: <sweep name>-sweep.png.")
@reports_errors
@figure_text(renames=True)
def plot_sweep(directory, x, y, hue, where, output, text) -> None:
    """A column of DIR's results.csv against a swept key, or with `--x step` a per-step
    quantity of the runs (loss, a metric) against the training step: mean line and ±1 std
    band (ddof 1) over seeds, one line per --hue value (DIR: written by `gradcli sweep --out
    DIR`). E.g. `--x step --y accuracy.test --hue override_map.sign --where
    train.optimizer.lr=0.01`."""
    from .plot import figure_bytes, figure_target
    from .plot.sweep import sweep_figure, sweep_series
    from .plot.sweep_dir import load, parse_where, refuse_own_files
    out, _ = consoles()
    sweep = load(directory)
    series = sweep_series(sweep, x, y, hue, parse_where(sweep, where))
    refuse_own_files(output, [directory])
    target, fmt, shown = figure_target(output, sweep.name, "sweep", [])
    outputs.write_file(target, figure_bytes(sweep_figure(sweep.name, series, text), fmt), shown)
    _wrote(out, shown)


@click.command()
@spec_paths
@click.option("--backend", default=None, callback=backend_option,
              help="Run on this backend instead of the spec's (specs only).")
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE", help="As for run (specs only).")
@click.option("--output", "-o", default="report.html", show_default=True, metavar="FILE")
@max_memory
@reports_errors
def report(specs, backend, overrides, output, max_memory) -> None:
    """Write one self-contained HTML page (styles and figures inline) about each SPEC, or
    about a sweep DIR (`gradcli sweep --out DIR`): its grouped table and sweep plots."""
    from rich.text import Text

    from . import curve, report_sweep
    from . import report as html
    from .plot import pyplot
    from .plot.sweep_dir import refuse_own_files

    out, err = consoles()
    pyplot()
    refuse_own_files(output, [p for p in specs if p.is_dir()])
    target = outputs.prepare(output, specs)
    entries, codes, failures = [], [], 0
    for path in specs:
        work = ((lambda path=path: report_sweep.entry(path)) if path.is_dir() else
                (lambda path=path: html.entry(load_one(path, overrides, False, err, output),
                                              backend, curve, max_memory)) if path.exists() else
                (lambda path=path: _neither(path)))
        outcome = attempt(path, work, err)
        failures += isinstance(outcome, Failure)
        entries.append((path, outcome.message) if isinstance(outcome, Failure) else outcome)
        codes.append(outcome.exit_code if isinstance(outcome, Failure) else
                     outcome.exit_code if isinstance(outcome, report_sweep.SweepEntry) else
                     outcome[0].exit_code)
    if failures == len(specs):
        # nothing but errors (already printed): a page of them would only replace a good one
        err.print(Text.assemble("nothing to report: ", printable(output), " not written"), soft_wrap=True)
        raise SystemExit(worst(codes))
    outputs.write_file(target, html.page(entries, version=__version__), output)
    _wrote(out, output)
    raise SystemExit(worst(codes))


def _neither(path: Path):
    """report takes a spec file or a sweep directory: a missing path is neither (load_spec's
    own message would call it the spec file)."""
    from .errors import SpecError
    raise SpecError(f"no spec file or sweep directory {str(path)!r}: the path does not exist",
                    path=str(path))


def _wrote(out, shown) -> None:
    from rich.text import Text

    out.print(Text.assemble("wrote ", printable(shown)))
