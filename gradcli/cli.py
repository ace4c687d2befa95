"""The gradcli command line: parse arguments, call the runner, render, exit.

Exit codes: 0 success; 1 an expect block or a comparison not met; 2 a bad
spec, bad arguments or a missing backend.
"""
from __future__ import annotations

import functools
import os
import sys
from pathlib import Path

import click
from rich.console import Console
from rich.text import Text

from . import __version__, render, runner
from .errors import GradcliError, SpecError

FORMATS = ("table", "json", "markdown", "csv")


def _consoles(quiet: bool = False) -> tuple[Console, Console]:
    no_color = bool(os.environ.get("NO_COLOR"))
    return (Console(no_color=no_color, quiet=quiet, highlight=False),
            Console(stderr=True, no_color=no_color, highlight=False))


def reports_errors(command):
    """Map gradcli's errors to a message on stderr and an exit code; no tracebacks."""

    @functools.wraps(command)
    def wrapper(*args, debug: bool = False, **kwargs):
        _, err = _consoles()
        try:
            return command(*args, **kwargs)
        except GradcliError as exc:
            if debug:
                raise
            err.print(Text.assemble(("error: ", "bold red"), str(exc)))
            raise SystemExit(exc.exit_code) from None
        except (KeyboardInterrupt, click.exceptions.Exit, click.ClickException, SystemExit):
            raise
        except MemoryError:  # the budget (--max-memory) did not foresee it: still the user's spec
            if debug:
                raise
            err.print(Text.assemble(("error: ", "bold red"), "out of memory: the spec needs more "
                                    "memory than this machine gives it; make its tensors smaller "
                                    "or lower --max-memory (see docs/untrusted.md)"))
            raise SystemExit(2) from None
        except Exception as exc:  # a bug of ours: say so plainly, keep the traceback for --debug
            if debug:
                raise
            err.print(Text.assemble(("internal error: ", "bold red"), f"{type(exc).__name__}: {exc}\n"
                                    "run again with --debug for the traceback, and please report it"))
            raise SystemExit(2) from None

    return click.option("--debug", is_flag=True, help="Show Python tracebacks (for bug reports).")(wrapper)


def _load(paths, overrides=()):
    from .spec import load_spec  # imported here so `gradcli --help` stays fast
    return [load_spec(Path(p), overrides=overrides) for p in paths]


def _lint(experiments, strict: bool, err: Console) -> None:
    from .spec import lint
    problems = [w for exp in experiments for w in lint(exp)]
    for warning in problems:
        err.print(Text.assemble(("warning: ", "yellow"), str(warning)))
    if strict and problems:
        raise SpecError(f"{len(problems)} lint warning(s) and --strict is set")


def _write(text: str, output: Path | None, console: Console) -> None:
    """Print, or write atomically: a failed run never leaves half a file behind."""
    if output is None:
        console.file.write(text)
        console.file.flush()
        return
    output.parent.mkdir(parents=True, exist_ok=True)
    import tempfile

    fd, tmp = tempfile.mkstemp(dir=output.parent, prefix=f".{output.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, output)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _progress(err: Console, quiet: bool):
    if quiet or not err.is_terminal:
        return lambda iterable, **kw: iterable
    from rich.progress import track
    return lambda iterable, description="working": track(iterable, description=description,
                                                           console=err, transient=True)


def _memory_size(ctx, param, value):
    if value is None:
        return None
    from .core.budget import parse_size
    try:
        return parse_size(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


max_memory = click.option("--max-memory", default=None, metavar="SIZE", callback=_memory_size,
                          help="Memory budget for a run's tensors, e.g. 16GiB (default 4GiB; "
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
@click.option("--backend", default=None, help="Run on this backend instead of the spec's "
              "(numpy, torch, jax, tensorflow).")
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE",
              help="Change a spec key, e.g. --set inputs.x=[1,2,3] --set train.steps=5 (repeatable).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True,
              help="table for people; json (one document on stdout), markdown or csv for tools.")
@click.option("--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the json/markdown/csv output to this file (atomically).")
@click.option("--quiet", "-q", is_flag=True, help="One line per spec: passed, FAILED or ran.")
@click.option("--strict", is_flag=True, help="Treat lint warnings (unused overrides) as errors.")
@click.option("--no-numeric", is_flag=True, help="Skip finite differences (faster on big specs).")
@max_memory
@reports_errors
def run(specs, backend, overrides, fmt, output, quiet, strict, no_numeric, max_memory) -> None:
    """Run each SPEC and print its values and gradient tables.

    Exit 1 when an expect block is not met, 2 for a bad spec or backend.
    """
    out, err = _consoles(quiet=quiet and fmt == "table")
    experiments = _load(specs, overrides)
    _lint(experiments, strict, err)
    results = []
    for exp in experiments:
        result = runner.run(exp, backend=backend, numeric=not no_numeric,
                            progress=_progress(err, quiet), max_memory=max_memory)
        results.append(result)
        if fmt == "table":
            if quiet:
                err.print(render.quiet_line(result))
            else:
                for part in render.result_renderables(result):
                    out.print(part)
    if fmt == "json":
        _write(render.json_text(results) + "\n", output, out)
    elif fmt == "markdown":
        _write("\n".join(render.to_markdown(r) for r in results), output, out)
    elif fmt == "csv":
        _write(render.to_csv(results), output, out)
    failed = [r for r in results if r.exit_code]
    if quiet and fmt == "table":
        err.print(f"{len(results) - len(failed)} passed, {len(failed)} failed")
    raise SystemExit(1 if failed else 0)


@cli.command()
@spec_paths
@click.option("--backends", default=None, metavar="B1,B2,...",
              help="Run one spec on several backends, one column each (e.g. numpy,torch).")
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE", help="As for run.")
@click.option("--tolerance", type=float, default=None,
              help="Exit 1 when any gradient differs from the first column by more than this.")
@click.option("--format", "fmt", type=click.Choice(("table", "json")), default="table",
              show_default=True)
@max_memory
@reports_errors
def compare(specs, backends, overrides, tolerance, fmt, max_memory) -> None:
    """Put the overridden gradients of several SPECs (or backends) side by side."""
    out, err = _consoles()
    experiments = _load(specs, overrides)
    if backends:
        names = [b.strip() for b in backends.split(",") if b.strip()]
        runs = [(f"{exp.name} [{b}]" if len(experiments) > 1 else b, exp, b)
                for exp in experiments for b in names]
    else:
        runs = [(exp.name, exp, None) for exp in experiments]
    if len(runs) < 2:
        raise GradcliError("compare needs two specs, or one spec and --backends with two backends")
    results = [runner.run(exp, backend=b, max_memory=max_memory) for _, exp, b in runs]
    labels = [label for label, _, _ in runs]
    rows, ok = runner.compare(results, tolerance, labels)
    if fmt == "json":
        doc = {"runs": labels, "tolerance": tolerance, "within_tolerance": ok,
               "rows": [{"output": r.output, "input": r.input,
                         "overridden": render.jsonable(r.overridden), "true": render.jsonable(r.true),
                         "max_diff": render.jsonable(r.max_diff), "within": r.within,
                         "notes": r.notes} for r in rows]}
        import json

        _write(json.dumps(doc, indent=2, allow_nan=False) + "\n", None, out)
    else:
        out.print(render.comparison_table(labels, rows, tolerance))
        notes = render.convention_notes(labels, results, rows)
        if notes is not None:
            out.print(notes)
        losses = render.loss_table(labels, results)
        if losses is not None:
            out.print(losses)
    raise SystemExit(0 if ok else 1)


@cli.command()
@spec_paths
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE", help="As for run.")
@click.option("--strict", is_flag=True, help="Treat lint warnings as errors.")
@reports_errors
def check(specs, overrides, strict) -> None:
    """Load, validate and lint each SPEC without running it."""
    out, err = _consoles()
    experiments = _load(specs, overrides)
    _lint(experiments, strict, err)
    for exp in experiments:
        out.print(Text.assemble(("ok ", "green"), f"{exp.path} ({exp.name})"))


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
            table.add_row(spec.signature, spec.doc)
    elif what == "gradients":
        table.add_column("gradient")
        table.add_column("backward pass")
        for name, doc in BUILTIN_GRADIENTS.items():
            table.add_row(name, doc)
    else:
        table.add_column("backend")
        table.add_column("available")
        table.add_column("version / how to install")
        for name in backends.NAMES:
            ok, detail = backends.availability(name)
            table.add_row(name, "yes" if ok else "no", detail)
    out.print(table)


@cli.command()
@reports_errors
def schema() -> None:
    """Print a JSON Schema of the spec format (for editors and the YAML language server)."""
    from .spec import json_schema
    out, _ = _consoles()
    import json

    _write(json.dumps(json_schema(), indent=2) + "\n", None, out)


def main() -> None:
    cli(prog_name="gradcli")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
