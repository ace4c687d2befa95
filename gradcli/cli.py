"""The gradcli command line: parse arguments, call the runner, render, exit.

Exit codes: 0 success; 1 an expect block or a comparison not met; 2 a bad
spec, bad arguments, a missing backend or output that cannot be written;
130 interrupted (Ctrl-C); 143 terminated (SIGTERM, in run, compare and sweep); 141 stdout's or
stderr's reader went away. With several specs every one runs, and the exit code is the worst
of theirs.

Start-up: at module level only click and gradcli's light modules are imported. Each command
imports what it uses (numpy, rich, yaml, the spec model, the runner) in its body, so
`gradcli --help` loads none of them (tests/cli/test_cli_imports.py keeps it so).
"""
from __future__ import annotations

import atexit
import gc
import sys
from typing import TYPE_CHECKING

import click

from . import __version__
from . import output as outputs
from .cli_common import (
    WORDS,
    Failure,
    attempt,
    backend_option,
    backends_option,
    consoles,
    error_line,
    file_console,
    lazy_consoles,
    load_one,
    max_memory,
    printable,
    progress,
    reports_errors,
    spec_paths,
    stderr_console,
    terminable,
    worst,
)
from .errors import GradcliError

if TYPE_CHECKING:
    from rich.console import Console

FORMATS = ("table", "json", "markdown", "csv")


class _Commands(click.Group):
    """The commands; those defined in cli_figures.py and cli_sweep.py are imported when
    named (or listed by --help), so the other commands start without them."""

    ELSEWHERE = {"plot": "cli_figures", "report": "cli_figures", "sweep": "cli_sweep"}

    def list_commands(self, ctx) -> list[str]:
        return sorted({*self.commands, *self.ELSEWHERE})

    def get_command(self, ctx, name: str):
        if name not in self.commands and name in self.ELSEWHERE:
            module = __import__(f"{__package__}.{self.ELSEWHERE[name]}", fromlist=[name])
            self.add_command(getattr(module, name))
        return super().get_command(ctx, name)

    def parse_args(self, ctx, args: list[str]) -> list[str]:
        given = list(args)
        ctx.meta[WORDS] = tuple(given)  # the command line as typed (cli_common.split_backends)
        try:
            return super().parse_args(ctx, args)
        except click.NoSuchOption as exc:
            hint = self.misplaced(ctx, given, exc.option_name)
            if hint is None:
                raise
            raise click.UsageError(hint, ctx) from None

    def misplaced(self, ctx, args: list[str], name: str) -> str | None:
        """When the unknown option `name` (before any command: gradcli itself has only --help
        and --version) is an option of the command named later in args, where it goes:
        `gradcli --format json run s.yaml` -> "--format is an option of `gradcli run`: write
        `gradcli run --format json s.yaml`". None when no command named there has it."""
        import shlex

        for i, word in enumerate(args):
            if word == "--":
                return None
            if word.startswith("-") or word not in self.list_commands(ctx):
                continue
            path, command = [word], self.get_command(ctx, word)
            while isinstance(command, click.Group) and i + len(path) < len(args):
                sub = command.get_command(ctx, args[i + len(path)])
                if sub is None:
                    break
                path.append(args[i + len(path)])
                command = sub
            option = next((p for p in command.params if isinstance(p, click.Option)
                           and name in (*p.opts, *p.secondary_opts)), None)
            if option is None or (not option.is_flag and not option.count and args[i - 1] == name):
                continue  # not its option, or this word is the option's value (-o report)
            written = shlex.join(["gradcli", *path, *args[:i], *args[i + len(path):]])
            return printable(f"{name} is an option of `gradcli {' '.join(path)}`, so it goes "
                             f"after the command: write `{written}`")
        return None


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
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
@click.option("--backend", default=None, callback=backend_option,
              help="Run on this backend instead of the spec's (numpy, torch, jax, tensorflow).")
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE",
              help="Change a spec key, e.g. --set inputs.x=[1,2,3] --set train.steps=5 (repeatable).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True,
              help="table for people; json (one document on stdout), markdown or csv for tools.")
@click.option("--output", "-o", default=None, metavar="FILE",
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
@terminable
def run(specs, backend, overrides, fmt, output, quiet, strict, no_numeric, max_memory) -> None:
    """Run each SPEC and print its values and gradient tables.

    Every spec runs even when another fails. Exit 2 when a spec is bad or its
    backend missing, else 1 when an expect block is not met, else 0.
    """
    from . import render, runner

    if quiet and fmt == "table" and output is not None:
        raise GradcliError("--quiet prints one line per spec on stderr instead of the tables, so "
                           "--output would get nothing: drop one of them (or use --format json)")
    if output is not None:  # refused before anything runs; deliver() writes it at the end
        outputs.prepare(output, specs)
    out, err = lazy_consoles(quiet=quiet and fmt == "table")
    tables_file = file_console() if fmt == "table" and output is not None else None
    if tables_file is not None:
        out = tables_file
    outcomes = []
    for path in specs:
        outcome = attempt(path, lambda path=path: runner.run(
            check_one(path, overrides, strict, err, output), backend=backend, numeric=not no_numeric,
            progress=progress(err, quiet), max_memory=max_memory), err, quiet and fmt == "table")
        if fmt == "table":
            _show_table(outcome, out, err, quiet, to_file=output is not None)
            if not isinstance(outcome, Failure):  # shown: its tensors need not wait for the
                outcome = _Shown(outcome.expect, outcome.exit_code)  # next specs (harden8)
        outcomes.append(outcome)
    results = [o for o in outcomes if not isinstance(o, Failure)]
    # a tool format is a document even when every spec failed: the consumer gets the errors
    text = _formatted(fmt, outcomes, tables_file) if results or fmt != "table" else None
    if text is not None:
        outputs.deliver(text, output, specs)
    if quiet and fmt == "table":
        from rich.text import Text

        err.print(Text(render.quiet_summary(
            results, [o for o in outcomes if isinstance(o, Failure)])), soft_wrap=True)
    raise SystemExit(worst(o.exit_code for o in outcomes))


class _Shown:
    """A result already printed as a table: what the summary line and the exit code read.
    (A plain class: a NamedTuple would compile source at every start-up.)"""

    __slots__ = ("expect", "exit_code")

    def __init__(self, expect, exit_code: int) -> None:
        self.expect, self.exit_code = expect, exit_code


def _show_table(outcome, out: Console, err: Console, quiet: bool, to_file: bool) -> None:
    from . import render

    if isinstance(outcome, Failure):
        if to_file:  # stderr has it already; the file should not look complete without it
            out.print(error_line(outcome.message))
        return
    if quiet:
        err.print(render.quiet_line(outcome), soft_wrap=True)  # one line each, for grep
        return
    from .cli_common import UNBOUNDED_WIDTH
    from .render_parts import to_rich
    from .render_plain import part_text, plain_ok

    plain = not to_file and plain_ok(outputs.Stdout())  # what rich would print, without rich
    for part in render.result_parts(outcome):
        text = part_text(part, UNBOUNDED_WIDTH) if plain else None
        if text is None:
            out.print(to_rich(part))
        else:
            outputs.write_stdout(text)


def _formatted(fmt: str, outcomes: list, tables_file: Console | None) -> str | None:
    """The whole output of a run in a tool format, or the tables rendered for --output."""
    from . import render

    if fmt == "table":
        return None if tables_file is None else tables_file.file.getvalue()
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
    return None


@cli.command()
@spec_paths
@click.option("--backends", default=None, metavar="B1,B2,...", callback=backends_option,
              help="Run each spec on these backends, one column each (e.g. numpy,torch); "
                   "several specs are each compared across the backends on their own.")
@click.option("--backend", default=None, metavar="NAME", callback=backend_option,
              help="Run every spec on this backend (as --set backend=NAME): --backend torch "
                   "compares the specs with each other on torch. Not with --backends.")
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE",
              help="As for run, in every spec: --set backend=torch compares the specs with "
                   "each other on torch.")
@click.option("--tolerance", type=float, default=None,
              help="Exit 1 when any gradient, training loss or final parameter differs from the "
                   "first column by more than this (NaN against a number always differs).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True,
              help="table for people; json, markdown or csv (all built from the JSON document) for tools.")
@click.option("--output", "-o", default=None, metavar="FILE", callback=outputs.checked_option,
              help="As for run: write the output to this file instead of stdout (tables as "
                   "plain text), replaced atomically; checked before anything runs.")
@max_memory
@reports_errors
@terminable
def compare(specs, backends, backend, overrides, tolerance, fmt, output, max_memory) -> None:
    """Put the overridden gradients and training of several SPECs (or backends) side by side.

    Without --backends the SPECs are compared with each other, the first the
    reference; with it, each SPEC across the backends, and every SPEC must agree.
    A run that does not train shows "not trained" and does not fail training.
    The output says which backend ran each column.
    """
    from . import comparison, runner
    from .labels import run_labels

    out, err = consoles()
    if tolerance is not None and not tolerance >= 0:
        raise GradcliError(f"--tolerance must be a number >= 0, not {tolerance}")
    if backend is not None and backends:
        raise GradcliError("--backend runs every spec on one backend and --backends compares each "
                           "spec across several: give one of them")
    if backends and any(_sets_backend(o) for o in overrides):  # --backends would override it
        raise GradcliError("--set backend=NAME runs every spec on one backend and --backends "
                           "compares each spec across several: give one of them")
    if backend is not None:  # last, so that it wins over a --set backend= as in sweep
        overrides = (*overrides, f"backend={backend}")
    # check_one: a spec's sweep block is checked as run and check do, though compare ignores it
    loaded = [attempt(p, lambda p=p: check_one(p, overrides, False, err), err) for p in specs]
    _require_all(loaded, specs, fmt, output)
    if backends:  # each spec against itself on every backend, on its own
        groups = [[(b, exp, b) for b in backends] for exp in loaded]
    else:  # the specs against each other, the first the reference
        groups = [[(exp.name, exp, None) for exp in loaded]]
    if any(len(group) < 2 for group in groups):
        raise GradcliError("compare needs two specs, or one spec and --backends with two backends "
                           "(to compare specs with each other on one backend: --backend NAME, "
                           "or --set backend=NAME)")
    runs = [run for group in groups for run in group]
    names = run_labels([exp.name for exp in loaded], backends)
    # numeric=False: no compare output shows a numeric gradient, and on a framework backend
    # the finite differences would cost more than everything it does show
    results = [attempt(name, lambda exp=exp, b=b: runner.run(exp, backend=b, numeric=False,
                                                              max_memory=max_memory,
                                                              progress=progress(err, False)), err)
               for name, (_, exp, b) in zip(names, runs)]
    _require_all(results, names, fmt, output, [exp.path for _, exp, _ in runs])
    done = iter(results)
    comparisons = [comparison.comparison([next(done) for _ in group],
                                         [label for label, _, _ in group], tolerance)
                   for group in groups]
    from rich.text import Text

    from .printable import printable_lines
    for warning in (w for c in comparisons for w in c.warnings):
        err.print(Text.assemble(("warning: ", "yellow"), printable_lines(warning)), soft_wrap=True)
    from . import render_compare as layout

    layout.write_comparisons(comparisons, tolerance, fmt, out, output, specs)
    raise SystemExit(0 if all(c.ok for c in comparisons) else 1)


def _sets_backend(override: str) -> bool:
    """Whether a --set names the top-level backend key (read as spec/overrides.py reads it)."""
    key, sep, _ = override.partition("=")
    return bool(sep) and [part.strip() for part in key.strip().split(".")] == ["backend"]


def _require_all(outcomes: list, names: list, fmt: str, output: str | None, paths=None) -> None:
    """compare lines runs up against each other: one missing run spoils the comparison. A tool
    format on stdout still gets a document, the failures as run gives them (each at its spec's
    path); an --output file is left as it was."""
    failed = [str(name) for name, o in zip(names, outcomes) if isinstance(o, Failure)]
    if failed and fmt != "table" and output is None:
        outputs.write_stdout(_formatted(fmt, [Failure(path, o.message, o.exit_code) for path, o
                                              in zip(paths or names, outcomes)
                                              if isinstance(o, Failure)], None))
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
    err = stderr_console()
    codes = []
    for path in specs:
        exp = attempt(path, lambda path=path: check_one(path, overrides, strict, err), err)
        if isinstance(exp, Failure):
            codes.append(exp.exit_code)
        else:
            _ok_line(printable(f"{exp.path} ({exp.name})"))
    raise SystemExit(worst(codes))


def _ok_line(shown: str) -> None:
    """"ok SPEC (name)" in green; off a terminal plain text, as rich prints it, without rich."""
    from .cli_common import UNBOUNDED_WIDTH
    from .render_plain import plain_line, plain_ok

    line = "ok " + shown
    if plain_ok(outputs.Stdout()) and plain_line(line, UNBOUNDED_WIDTH):
        outputs.write_stdout(line + "\n")
        return
    from rich.text import Text

    consoles()[0].print(Text.assemble(("ok ", "green"), shown))


def check_one(path, overrides, strict: bool, err, output: str | None = None):
    """load_one, then each value of the spec's sweep: block applied (spec/sweepcheck): run
    refuses a bad sweep block as check does, though it runs the spec without it."""
    experiment = load_one(path, overrides, strict, err, output)
    if "sweep" in experiment.raw:  # the sweep checks only for a spec with a sweep
        from .spec.document import Source, compose, read_file
        from .spec.sweepcheck import check_sweep
        check_sweep(compose(Source(str(path), read_file(path))), str(path), overrides)
    return experiment


@cli.command(name="list")
@click.argument("what", type=click.Choice(("ops", "gradients", "backends")))
@reports_errors
def list_(what) -> None:
    """List the expression language's ops, the built-in named gradients, or the backends."""
    from .cli_common import UNBOUNDED_WIDTH
    from .render_plain import plain_ok, table_text

    headers, rows = _list_rows(what)
    text = table_text(headers, rows, UNBOUNDED_WIDTH) if plain_ok(outputs.Stdout()) else None
    if text is not None:  # what rich would print, without importing it (start-up time)
        outputs.write_stdout(text)
        return
    from rich.table import Table
    from rich.text import Text

    out, _ = consoles()
    table = Table(show_header=True)
    for header in headers:
        table.add_column(header)
    for row in rows:
        table.add_row(*(Text(cell) for cell in row))  # Text: "[lo, hi]" is not markup
    out.print(table)


def _list_rows(what: str) -> tuple[list[str], list[list[str]]]:
    """The header and rows of `gradcli list WHAT`."""
    if what == "ops":
        from .ops import LANGUAGE_FORMS, OPS

        return (["op", "what it does"], [[spec.signature, spec.doc] for spec in OPS.values()]
                + [[form, doc] for form, doc in LANGUAGE_FORMS.items()])
    if what == "gradients":
        from .ops import BUILTIN_GRADIENTS

        return ["gradient", "backward pass"], [[name, doc] for name, doc in BUILTIN_GRADIENTS.items()]
    from . import backends

    rows = []
    for name in backends.NAMES:
        ok, detail = backends.availability(name)
        rows.append([name, "yes" if ok else "no", detail])
    return ["backend", "available", "version / how to install"], rows


@cli.command()
@reports_errors
def schema() -> None:
    """Print a JSON Schema of the spec format (for editors and the YAML language server)."""
    import json

    from .spec import json_schema

    outputs.write_stdout(json.dumps(json_schema(), indent=2) + "\n")


def main() -> None:
    # At exit Python runs one last full garbage collection over every object the run made or
    # imported (numpy, click, the spec, the graph): 35 M instructions, 5% of `gradcli run`,
    # to free memory the process is about to give back anyway. Frozen objects are skipped, so
    # freezing them is the last thing done before it; atexit runs callbacks last-registered
    # first, so those registered during the command (temporary files...) run before it.
    # Objects only a reference cycle holds are then not finalized (as with os._exit):
    # gradcli writes and flushes every output itself before exiting (output.py).
    atexit.register(gc.freeze)
    cli(prog_name="gradcli")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
