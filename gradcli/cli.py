"""The gradcli command line: parse arguments, call the runner, render, exit.

Exit codes: 0 success; 1 an expect block or a comparison not met; 2 a bad
spec, bad arguments, a missing backend or output that cannot be written;
130 interrupted (Ctrl-C); 141 stdout's reader went away. With several
specs every one runs, and the exit code is the worst of theirs.
"""
from __future__ import annotations

import functools
import io
import os
import sys
from pathlib import Path

import click
from rich.console import Console
from rich.text import Text

from . import __version__, render, runner
from . import output as outputs
from .errors import GradcliError, SpecError
from .printable import printable, printable_lines
from .record import record

FORMATS = ("table", "json", "markdown", "csv")


def _consoles(quiet: bool = False) -> tuple[Console, Console]:
    no_color = bool(os.environ.get("NO_COLOR"))
    return (Console(file=outputs.Stdout(), no_color=no_color, quiet=quiet, highlight=False),
            Console(stderr=True, no_color=no_color, highlight=False))


def _file_console() -> Console:
    """A console that renders the tables as plain text (no ANSI codes) for --output."""
    return Console(file=io.StringIO(), color_system=None, force_terminal=False, highlight=False,
                   emoji=False)


def _error_line(message: str) -> Text:
    return Text.assemble(("error: ", "bold red"), printable_lines(message))


OUT_OF_MEMORY = ("out of memory: the spec needs more memory than this machine gives it; make its "
                 "tensors smaller or lower --max-memory (see docs/untrusted.md)")


def reports_errors(command):
    """Map gradcli's errors to a message on stderr and an exit code; no tracebacks."""

    @functools.wraps(command)
    def wrapper(*args, debug: bool = False, **kwargs):
        _, err = _consoles()
        click.get_current_context().meta["gradcli.debug"] = debug
        try:
            command(*args, **kwargs)
            outputs.flush_stdout()  # a full disk shows here, as an error, not at exit
        except GradcliError as exc:
            if debug:
                raise
            if str(exc):  # a closed pipe has nothing to say
                err.print(_error_line(str(exc)), soft_wrap=True)
            raise SystemExit(exc.exit_code) from None
        except KeyboardInterrupt:  # 130 as a shell reports SIGINT; 1 would mean "expect failed"
            err.print(Text("interrupted", style="bold red"))
            raise SystemExit(130) from None
        except (click.exceptions.Exit, click.ClickException, SystemExit):
            raise
        except MemoryError:  # the budget (--max-memory) did not foresee it: still the user's spec
            if debug:
                raise
            err.print(_error_line(OUT_OF_MEMORY), soft_wrap=True)
            raise SystemExit(2) from None
        except Exception as exc:  # a bug of ours: say so plainly, keep the traceback for --debug
            if debug:
                raise
            err.print(_internal_error(exc), soft_wrap=True)
            raise SystemExit(2) from None

    return click.option("--debug", is_flag=True, help="Show Python tracebacks (for bug reports).")(wrapper)


def _internal_error(exc: Exception, where: str = "") -> Text:
    return Text.assemble(("internal error: ", "bold red"),
                         printable_lines(f"{where}{type(exc).__name__}: {exc}\n"
                                         "run again with --debug for the traceback, and please "
                                         "report it"))


@record
class Failure:
    """A spec that could not be loaded or run: what to say, and its exit code."""

    path: object
    message: str
    exit_code: int


def _attempt(path, work, err: Console):
    """work() for one spec; a failure is reported beside the spec and returned, so the
    other specs still run (KeyboardInterrupt still stops everything)."""
    try:
        return work()
    except Exception as exc:
        if click.get_current_context().meta.get("gradcli.debug"):
            raise
        message = str(exc)
        if not message.startswith(str(path)):
            message = f"{path}: {message}"
        if isinstance(exc, (GradcliError, MemoryError)):
            if isinstance(exc, MemoryError):
                message = f"{path}: {OUT_OF_MEMORY}"
            err.print(_error_line(message), soft_wrap=True)
            return Failure(path, message, getattr(exc, "exit_code", 2))
        err.print(_internal_error(exc, f"{path}: "), soft_wrap=True)
        return Failure(path, f"internal error: {path}: {type(exc).__name__}: {exc}", 2)


def _worst(codes) -> int:
    return max(codes, default=0)  # 2 (an error) > 1 (an expectation not met) > 0


def _load_one(path, overrides, strict: bool, err: Console):
    from .spec import lint, load_spec  # imported here so `gradcli --help` stays fast
    experiment = load_spec(Path(path), overrides=overrides)
    problems = list(lint(experiment))
    for warning in problems:
        err.print(Text.assemble(("warning: ", "yellow"), printable_lines(str(warning))), soft_wrap=True)
    if strict and problems:
        raise SpecError(f"{len(problems)} lint warning(s) and --strict is set", path=str(path))
    return experiment


def _progress(err: Console, quiet: bool):
    if quiet or not err.is_terminal:
        return lambda iterable, **kw: iterable
    from rich.progress import track
    return lambda iterable, description="working": track(iterable, description=description,
                                                           console=err, transient=True)


def _known_backend(name: str) -> str:
    from .backends import NAMES

    if name not in NAMES:
        from .spec.fields import did_you_mean

        hint = did_you_mean(name, NAMES)
        raise click.BadParameter(f"unknown backend {printable(name)!r}"
                                 + (f" ({hint})" if hint else "") + f"; choose from {', '.join(NAMES)}")
    return name


def _backend_option(ctx, param, value: str | None) -> str | None:
    return None if value is None else _known_backend(value.strip())


def _backends_option(ctx, param, value: str | None) -> list[str] | None:
    """--backends B1,B2,...: checked before anything runs, so a typo costs no run."""
    if value is None:
        return None
    return [_known_backend(b.strip()) for b in value.split(",") if b.strip()]


def _memory_size(ctx, param, value):
    if value is None:
        return None
    from .core.budget import parse_size
    try:
        return parse_size(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


max_memory = click.option("--max-memory", default=None, metavar="SIZE", callback=_memory_size,
                          help="Memory budget for a run's tensors, e.g. 16GiB (default 2GiB; "
                               "one tensor may take half). See docs/untrusted.md.")

spec_paths = click.argument("specs", nargs=-1, required=True,
                            type=click.Path(exists=True, dir_okay=False, path_type=Path))


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="gradcli")
def cli() -> None:
    """See, test and trust custom gradients.

    A YAML spec names inputs, an expression and gradient overrides; gradcli
    runs it and compares the gradient training would use (overridden) with
    the true and the numeric one. Start with `gradcli run experiments/*.yaml`
    or `gradcli list ops`.
    """


@cli.command()
@spec_paths
@click.option("--backend", default=None, callback=_backend_option,
              help="Run on this backend instead of the spec's (numpy, torch, jax, tensorflow).")
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE",
              help="Change a spec key, e.g. --set inputs.x=[1,2,3] --set train.steps=5 (repeatable).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True,
              help="table for people; json (one document on stdout), markdown or csv for tools.")
@click.option("--output", default=None, metavar="FILE",
              help="Write the output to this file instead of stdout (tables as plain text). A "
                   "regular file is replaced atomically; a read-only file, the spec or a "
                   "missing folder is refused (no folders are created).")
@click.option("--quiet", "-q", is_flag=True,
              help="Instead of the tables, one line per spec on stderr (passed, FAILED or ran), "
                   "never wrapped, and a count. Only the table format has a quiet form: json, "
                   "markdown and csv are always whole. Not with --output (the tables would "
                   "have nowhere to go).")
@click.option("--strict", is_flag=True, help="Treat lint warnings (unused overrides) as errors.")
@click.option("--no-numeric", is_flag=True, help="Skip finite differences (faster on big specs).")
@max_memory
@reports_errors
def run(specs, backend, overrides, fmt, output, quiet, strict, no_numeric, max_memory) -> None:
    """Run each SPEC and print its values and gradient tables.

    Every spec runs even when another fails. Exit 2 when a spec is bad or its
    backend missing, else 1 when an expect block is not met, else 0.
    """
    if quiet and fmt == "table" and output is not None:
        raise GradcliError("--quiet prints one line per spec on stderr instead of the tables, so "
                           "--output would get nothing: drop one of them (or use --format json)")
    target = None if output is None else outputs.prepare(output, specs)
    out, err = _consoles(quiet=quiet and fmt == "table")
    tables_file = _file_console() if fmt == "table" and target is not None else None
    if tables_file is not None:
        out = tables_file
    outcomes = []
    for path in specs:
        outcome = _attempt(path, lambda path=path: runner.run(
            _load_one(path, overrides, strict, err), backend=backend, numeric=not no_numeric,
            progress=_progress(err, quiet), max_memory=max_memory), err)
        outcomes.append(outcome)
        if fmt == "table":
            _show_table(outcome, out, err, quiet, to_file=target is not None)
    results = [o for o in outcomes if not isinstance(o, Failure)]
    text = _formatted(fmt, outcomes, tables_file) if results else None
    if text is not None:
        if target is None:
            outputs.write_stdout(text)
        else:
            outputs.write_file(target, text, output)
    if quiet and fmt == "table":
        err.print(Text(render.quiet_summary(results, len(outcomes) - len(results))), soft_wrap=True)
    raise SystemExit(_worst(o.exit_code for o in outcomes))


def _show_table(outcome, out: Console, err: Console, quiet: bool, to_file: bool) -> None:
    if isinstance(outcome, Failure):
        if to_file:  # stderr has it already; the file should not look complete without it
            out.print(_error_line(outcome.message))
        return
    if quiet:
        err.print(render.quiet_line(outcome), soft_wrap=True)  # one line each, for grep
        return
    for part in render.result_renderables(outcome):
        out.print(part)


def _formatted(fmt: str, outcomes: list, tables_file: Console | None) -> str | None:
    """The whole output of a run in a tool format, or the tables rendered for --output."""
    if fmt == "json":
        return render.json_text([render.error_doc(o.path, o.message, o.exit_code)
                                 if isinstance(o, Failure) else o for o in outcomes]) + "\n"
    from . import render_formats as formats

    if fmt == "markdown":
        return "\n".join(formats.markdown_error(o.path, o.message) if isinstance(o, Failure)
                         else formats.to_markdown(o) for o in outcomes)
    if fmt == "csv":
        return formats.to_csv([render.error_doc(o.path, o.message, o.exit_code)
                               if isinstance(o, Failure) else o for o in outcomes])
    return None if tables_file is None else tables_file.file.getvalue()


@cli.command()
@spec_paths
@click.option("--backends", default=None, metavar="B1,B2,...", callback=_backends_option,
              help="Run each spec on these backends, one column each (e.g. numpy,torch); "
                   "several specs are each compared across the backends on their own.")
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE", help="As for run.")
@click.option("--tolerance", type=float, default=None,
              help="Exit 1 when any gradient, training loss or final parameter differs from the "
                   "first column by more than this (NaN against a number always differs).")
@click.option("--format", "fmt", type=click.Choice(("table", "json")), default="table",
              show_default=True)
@max_memory
@reports_errors
def compare(specs, backends, overrides, tolerance, fmt, max_memory) -> None:
    """Put the overridden gradients and training of several SPECs (or backends) side by side.

    Without --backends the SPECs are compared with each other, the first the
    reference; with it, each SPEC across the backends, and every SPEC must agree.
    A run that does not train shows "not trained" and does not fail training.
    """
    out, err = _consoles()
    if tolerance is not None and not tolerance >= 0:
        raise GradcliError(f"--tolerance must be a number >= 0, not {tolerance}")
    loaded = [_attempt(p, lambda p=p: _load_one(p, overrides, False, err), err) for p in specs]
    _require_all(loaded, specs)
    if backends:  # each spec against itself on every backend, on its own
        groups = [[(b, exp, b) for b in backends] for exp in loaded]
    else:  # the specs against each other, the first the reference
        groups = [[(exp.name, exp, None) for exp in loaded]]
    if any(len(group) < 2 for group in groups):
        raise GradcliError("compare needs two specs, or one spec and --backends with two backends")
    runs = [run for group in groups for run in group]
    names = [f"{exp.name} [{b}]" if b and len(loaded) > 1 else label for label, exp, b in runs]
    results = [_attempt(name, lambda exp=exp, b=b: runner.run(exp, backend=b,
                                                              max_memory=max_memory), err)
               for name, (_, exp, b) in zip(names, runs)]
    _require_all(results, names)
    done = iter(results)
    comparisons = [runner.comparison([next(done) for _ in group], [label for label, _, _ in group],
                                     tolerance) for group in groups]
    from . import render_compare as layout

    if fmt == "json":
        outputs.write_stdout(layout.comparison_json(comparisons, tolerance) + "\n")
    else:
        for part in layout.comparison_renderables(comparisons, tolerance):
            out.print(part)
    raise SystemExit(0 if all(c.ok for c in comparisons) else 1)


def _require_all(outcomes: list, names: list) -> None:
    """compare lines runs up against each other: one missing run spoils the comparison."""
    failed = [str(name) for name, o in zip(names, outcomes) if isinstance(o, Failure)]
    if failed:
        raise GradcliError(f"compare needs every run; {len(failed)} of {len(outcomes)} failed: "
                           + ", ".join(failed))


@cli.command()
@spec_paths
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE", help="As for run.")
@click.option("--strict", is_flag=True, help="Treat lint warnings as errors.")
@reports_errors
def check(specs, overrides, strict) -> None:
    """Load, validate and lint each SPEC without running it (every SPEC, even after a bad one)."""
    out, err = _consoles()
    codes = []
    for path in specs:
        exp = _attempt(path, lambda path=path: _load_one(path, overrides, strict, err), err)
        if isinstance(exp, Failure):
            codes.append(exp.exit_code)
        else:
            out.print(Text.assemble(("ok ", "green"), printable(f"{exp.path} ({exp.name})")))
    raise SystemExit(_worst(codes))


@cli.command(name="list")
@click.argument("what", type=click.Choice(("ops", "gradients", "backends")))
@reports_errors
def list_(what) -> None:
    """List the expression language's ops, the built-in named gradients, or the backends."""
    from rich.table import Table

    from . import backends
    from .opset import BUILTIN_GRADIENTS, OPS
    out, _ = _consoles()
    table = Table(show_header=True)
    if what == "ops":
        table.add_column("op")
        table.add_column("what it does")
        for spec in OPS.values():
            table.add_row(Text(spec.signature), Text(spec.doc))  # Text: "[lo, hi]" is not markup
    elif what == "gradients":
        table.add_column("gradient")
        table.add_column("backward pass")
        for name, doc in BUILTIN_GRADIENTS.items():
            table.add_row(Text(name), Text(doc))
    else:
        table.add_column("backend")
        table.add_column("available")
        table.add_column("version / how to install")
        for name in backends.NAMES:
            ok, detail = backends.availability(name)
            table.add_row(Text(name), "yes" if ok else "no", Text(detail))
    out.print(table)


@cli.command()
@reports_errors
def schema() -> None:
    """Print a JSON Schema of the spec format (for editors and the YAML language server)."""
    import json

    from .spec import json_schema

    outputs.write_stdout(json.dumps(json_schema(), indent=2) + "\n")


def main() -> None:
    cli(prog_name="gradcli")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())


# ----- figures and the HTML report (matplotlib is imported only when one is drawn) -----
@cli.group()
def plot() -> None:
    """Draw a figure to .png, .svg or .pdf (the --output extension); needs gradcli[plot]."""


@plot.command(name="curve")
@click.argument("spec", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--input", "name", default=None, help="The input to sweep (default: the first "
              "float input in wrt).")
@click.option("--range", "span", default=None, metavar="LOW:HIGH",
              help="The values swept (default: the input's own min..max, widened).")
@click.option("--points", type=int, default=401, show_default=True)
@click.option("--backend", default=None, help="Run on this backend instead of the spec's.")
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE", help="As for run.")
@click.option("--output", default=None, metavar="FILE", help="Default: <spec name>-curve.png.")
@reports_errors
def plot_curve(spec, name, span, points, backend, overrides, output) -> None:
    """The forward value, true derivative, overridden gradient and numeric derivative of
    SPEC's first output along one input swept elementwise (the straight-through figure)."""
    from . import curve
    from .plot import figure_bytes, figure_target
    from .plot.curve import curve_figure
    out, err = _consoles()
    span = curve.parse_range(span) if span is not None else None
    experiment = _load_one(spec, overrides, False, err)
    target, fmt, shown = figure_target(output, experiment.name, "curve", [spec])
    data = curve.sweep(experiment, name or curve.first_input(experiment), backend=backend,
                       span=span, points=points)
    outputs.write_file(target, figure_bytes(curve_figure(data), fmt), shown)
    out.print(Text.assemble("wrote ", printable(shown)))


@plot.command(name="train")
@spec_paths
@click.option("--backends", default=None, metavar="B1,B2,...", help="One line per backend.")
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE", help="As for run.")
@click.option("--output", default=None, metavar="FILE", help="Default: <spec name>-train.png.")
@reports_errors
def plot_train(specs, backends, overrides, output) -> None:
    """The training loss of each SPEC against steps, one line per spec (or per backend)."""
    from .plot import figure_bytes, figure_target
    from .plot.train import train_figure, training_runs
    out, err = _consoles()
    loaded = [_load_one(p, overrides, False, err) for p in specs]
    names = [b.strip() for b in backends.split(",") if b.strip()] if backends else [None]
    title = loaded[0].name if len(loaded) == 1 else " vs ".join(e.name for e in loaded)
    target, fmt, shown = figure_target(output, loaded[0].name, "train", specs)
    runs = training_runs([(exp, b, runner.run(exp, backend=b, numeric=False))
                          for exp in loaded for b in names], several_specs=len(loaded) > 1)
    outputs.write_file(target, figure_bytes(train_figure(title, runs), fmt), shown)
    out.print(Text.assemble("wrote ", printable(shown)))


@cli.command()
@spec_paths
@click.option("--backend", default=None, help="Run on this backend instead of the spec's.")
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE", help="As for run.")
@click.option("--output", default="report.html", show_default=True, metavar="FILE")
@reports_errors
def report(specs, backend, overrides, output) -> None:
    """Write one self-contained HTML page (styles and figures inline) about each SPEC."""
    from . import curve
    from . import report as html
    from .plot import pyplot
    out, err = _consoles()
    pyplot()
    target = outputs.prepare(output, specs)
    entries, codes = [], []
    for path in specs:
        outcome = _attempt(path, lambda path=path: html.entry(
            _load_one(path, overrides, False, err), backend, curve), err)
        entries.append((path, outcome.message) if isinstance(outcome, Failure) else outcome)
        codes.append(outcome.exit_code if isinstance(outcome, Failure) else outcome[0].exit_code)
    outputs.write_file(target, html.page(entries, version=__version__), output)
    out.print(Text.assemble("wrote ", printable(output)))
    raise SystemExit(_worst(codes))
