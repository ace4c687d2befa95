"""What every gradcli command shares: consoles, error reporting, per-spec attempts, options.

Only the command modules (cli.py, cli_figures.py) import this. rich is imported when a console
is made or a message styled, not here: `gradcli --help` and `gradcli schema` never need it.
"""
from __future__ import annotations

import functools
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from . import output as outputs
from .errors import GradcliError, SpecError
from .printable import printable, printable_lines
from .record import record

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

# Tables written to a pipe or a file are as wide as their columns need, up to this: rich
# would otherwise cut every cell to fit 80 columns, the width it assumes off a terminal.
UNBOUNDED_WIDTH = 240


def _width(stream) -> int | None:
    """None (rich's own choice: the terminal's width or $COLUMNS) on a terminal or when COLUMNS
    is set; otherwise wide enough that no table is cut."""
    if os.environ.get("COLUMNS") or getattr(stream, "isatty", lambda: False)():
        return None
    return UNBOUNDED_WIDTH


def consoles(quiet: bool = False) -> tuple[Console, Console]:
    from rich.console import Console

    no_color = bool(os.environ.get("NO_COLOR"))
    stdout, stderr = outputs.Stdout(), outputs.Stderr()
    return (Console(file=stdout, no_color=no_color, quiet=quiet, highlight=False,
                    width=_width(stdout)),
            Console(file=stderr, no_color=no_color, highlight=False, width=_width(stderr)))


class _LazyConsole:
    """One of consoles(), made on first use: a command that prints nothing through it (most
    `gradcli check` runs; `run` off a terminal, see render_plain) does not import rich."""

    def __init__(self, which: int = 1, quiet: bool = False) -> None:
        self._console = None
        self._which, self._quiet = which, quiet

    def __getattr__(self, name):
        if self._console is None:
            self._console = consoles(self._quiet)[self._which]
        return getattr(self._console, name)

    def plain(self) -> bool:
        """True when rich would see no terminal here (render_plain.plain_ok), told without
        making the console."""
        from .render_plain import plain_ok

        return plain_ok(outputs.Stdout() if self._which == 0 else sys.stderr)


def stderr_console() -> Console:
    """consoles()[1], made when first printed to (only for code that uses .print/.is_terminal)."""
    return _LazyConsole()  # type: ignore[return-value]


def lazy_consoles(quiet: bool = False) -> tuple[Console, Console]:
    """consoles(quiet), each made when first printed to."""
    return _LazyConsole(0, quiet), _LazyConsole(1)  # type: ignore[return-value]


def file_console() -> Console:
    """A console that renders the tables as plain text (no ANSI codes) for --output."""
    import io

    from rich.console import Console

    return Console(file=io.StringIO(), color_system=None, force_terminal=False, highlight=False,
                   emoji=False, width=int(os.environ.get("COLUMNS") or UNBOUNDED_WIDTH))


def error_line(message: str) -> Text:
    from rich.text import Text

    return Text.assemble(("error: ", "bold red"), printable_lines(message))


OUT_OF_MEMORY = ("out of memory: the spec needs more memory than this machine gives it; make its "
                 "tensors smaller or lower --max-memory (see docs/untrusted.md)")


def reports_errors(command):
    """Map gradcli's errors to a message on stderr and an exit code; no tracebacks."""

    def err() -> Console:  # made when there is something to say: rich costs start-up time
        return consoles()[1]

    @functools.wraps(command)
    def wrapper(*args, debug: bool = False, **kwargs):
        click.get_current_context().meta["gradcli.debug"] = debug
        try:
            reporting(*args, debug=debug, **kwargs)
        except outputs.ClosedPipe as exc:  # also while saying an error, on a closed stderr
            raise SystemExit(exc.exit_code) from None
        except (click.exceptions.Exit, click.ClickException):
            raise  # click says these itself (a usage error: exit 2)
        except Exception as exc:
            if debug:
                _traceback()
                raise SystemExit(1) from None  # what Python's own traceback at exit gives
            # reporting() turns every exception into a message; one raised while it says that
            # message (stderr failing otherwise than as a closed pipe, an exception whose str()
            # fails) ends here: said plainly if stderr still takes it, never as a traceback
            _say_plainly(f"internal error while reporting an error: {type(exc).__name__}\n"
                         "run again with --debug for the traceback, and please report it")
            raise SystemExit(2) from None

    def reporting(*args, debug: bool, **kwargs):
        try:
            command(*args, **kwargs)
            outputs.flush_stdout()  # a full disk shows here, as an error, not at exit
        except GradcliError as exc:
            if debug:
                raise
            if str(exc):  # a closed pipe has nothing to say
                err().print(error_line(str(exc)), soft_wrap=True)
            raise SystemExit(exc.exit_code) from None
        except KeyboardInterrupt as stop:  # 130 (143) as a shell reports SIGINT (SIGTERM); 1
            from rich.text import Text  # would mean "expect failed"

            terminated = isinstance(stop, Terminated)
            err().print(Text("terminated" if terminated else "interrupted", style="bold red"))
            raise SystemExit(143 if terminated else 130) from None
        except (click.exceptions.Exit, click.ClickException, SystemExit):
            raise
        except MemoryError:  # the budget (--max-memory) did not foresee it: still the user's spec
            if debug:
                raise
            err().print(error_line(OUT_OF_MEMORY), soft_wrap=True)
            raise SystemExit(2) from None
        except Exception as exc:  # a bug of ours: say so plainly, keep the traceback for --debug
            if debug:
                raise
            err().print(internal_error(exc), soft_wrap=True)
            raise SystemExit(2) from None

    return click.option("--debug", is_flag=True, help="Show Python tracebacks (for bug reports).")(wrapper)


class Terminated(KeyboardInterrupt):
    """SIGTERM (`timeout`, a CI runner's cancel, `kill`) stops a command as Ctrl-C does: what
    was being made is dropped (an --output file is replaced atomically or not at all), one
    line on stderr, exit 143 as a shell reports SIGTERM."""


def raise_terminated(signum, frame):
    raise Terminated


def on_sigterm(handler):
    """Set SIGTERM's handler; the one it replaces. Only the main thread may (a command run
    on another thread by a library caller keeps what it has)."""
    import signal
    import threading

    if handler is None or threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGTERM, handler)


def terminable(command):
    """While the command runs, SIGTERM raises Terminated (reports_errors says "terminated" and
    exits 143; the default action would end it silently, -15); the handler it replaced is back
    once the command ends, so a second SIGTERM while the message is said ends at once."""

    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        previous = on_sigterm(raise_terminated)
        try:
            return command(*args, **kwargs)
        finally:
            on_sigterm(previous)

    return wrapper


def _say_plainly(message: str) -> None:
    try:
        sys.stderr.write(printable_lines(message) + "\n")
        sys.stderr.flush()
    except Exception:  # noqa: BLE001, S110 - stderr is what failed: the exit code says it
        pass


def _traceback() -> None:
    """--debug's traceback, written here rather than by Python at exit: a closed stderr then
    ends the command as it does without --debug (141), not as a failed write (1)."""
    import traceback

    stderr = outputs.Stderr()
    try:
        traceback.print_exc(file=stderr)
        stderr.flush()
    except outputs.ClosedPipe as exc:
        raise SystemExit(exc.exit_code) from None


def internal_error(exc: Exception, where: str = "") -> Text:
    from rich.text import Text

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


def attempt(path, work, err: Console, quiet: bool = False):
    """work() for one spec; a failure is reported beside the spec and returned, so the
    other specs still run (KeyboardInterrupt still stops everything). quiet (`run -q`): a
    training stopped on a non-finite loss (on_nonfinite: error, exit 1, the only failure
    with that code) is the spec's FAILED line, as quiet_summary counts it, not an error."""
    try:
        return work()
    except outputs.OutputError:
        raise  # --output is the whole command's: nothing may be written, the other specs neither
    except Exception as exc:
        if click.get_current_context().meta.get("gradcli.debug"):
            raise
        message = str(exc)
        if not message.startswith(str(path)):
            message = f"{path}: {message}"
        if isinstance(exc, (GradcliError, MemoryError)):
            if isinstance(exc, MemoryError):
                message = f"{path}: {OUT_OF_MEMORY}"
            code = getattr(exc, "exit_code", 2)
            if quiet and code == 1:
                from .render import quiet_stopped

                err.print(quiet_stopped(getattr(exc, "name", "") or path, str(exc)), soft_wrap=True)
            else:
                err.print(error_line(message), soft_wrap=True)
            return Failure(path, message, code)
        err.print(internal_error(exc, f"{path}: "), soft_wrap=True)
        return Failure(path, f"internal error: {path}: {type(exc).__name__}: {exc}", 2)


def worst(codes) -> int:
    return max(codes, default=0)  # 2 (an error) > 1 (an expectation not met) > 0


# ctx.meta key: the words of the command line after `gradcli`, as the shell passed them
WORDS = "gradcli.words"


def split_backends(path) -> str | None:
    """Why a spec path that does not exist is a backend's name, when it is one the shell split
    off a --backends value at a space after a comma (`--backends numpy, torch`: the specs get
    'torch'); None otherwise."""
    ctx = click.get_current_context(silent=True)
    words = ctx.meta.get(WORDS, ()) if ctx is not None else ()
    if not any(word.startswith("--backends") for word in words):
        return None  # (without --backends, as in check, gradcli.backends is not imported)
    from .backends import NAMES

    name = str(path)
    if name.rstrip(",") not in NAMES or Path(path).exists():
        return None
    for k, word in enumerate(words):
        if word == "--backends" and k + 1 < len(words):
            parts, k = [words[k + 1]], k + 2
        elif word.startswith("--backends="):
            parts, k = [word.split("=", 1)[1]], k + 1
        else:
            continue
        while parts[-1].endswith(",") and k < len(words) and words[k].rstrip(",") in NAMES:
            parts.append(words[k])  # each word after a comma and a space: a backend taken as a spec
            k += 1
        if name in parts[1:]:
            return printable(f"the spec file {name!r} does not exist; it is a backend split off "
                             f"`--backends {' '.join(parts)}` by the space after a comma: write "
                             f"`--backends {''.join(parts).rstrip(',')}` (no spaces)")
    return None


def load_one(path, overrides, strict: bool, err: Console, output: str | None = None):
    """The spec at path; an OutputError if --output (output) is a file it reads."""
    from .spec import lint, load_spec  # imported here so `gradcli --help` stays fast
    split = split_backends(path)
    if split is not None:
        raise SpecError(split)
    experiment = load_spec(Path(path), overrides=overrides)
    outputs.refuse_read_files(output, experiment)
    problems = list(lint(experiment))
    for warning in problems:
        from rich.text import Text

        err.print(Text.assemble(("warning: ", "yellow"), printable_lines(str(warning))), soft_wrap=True)
    if strict and problems:
        raise SpecError(f"{len(problems)} lint warning(s) and --strict is set", path=str(path))
    return experiment


def progress(err: Console, quiet: bool):
    """The runner's progress callback: a transient bar on stderr, only on a terminal and not
    with --quiet (elsewhere the iterable as it is). `total` sizes a bar over an iterator."""
    if quiet or (isinstance(err, _LazyConsole) and err.plain()) or not err.is_terminal:
        return lambda iterable, **kw: iterable
    from rich.progress import track

    def bar(iterable, description: str = "working", total: float | None = None, **_):
        return track(iterable, description=description, total=total, console=err, transient=True)
    return bar


def known_backend(name: str) -> str:
    from .backends import NAMES

    if name not in NAMES:
        from .errors import did_you_mean

        hint = did_you_mean(name, NAMES)
        raise click.BadParameter(f"unknown backend {printable(name)!r}"
                                 + (f" ({hint})" if hint else "") + f"; choose from {', '.join(NAMES)}")
    return name


def backend_option(ctx, param, value: str | None) -> str | None:
    return None if value is None else known_backend(value.strip())


def backends_option(ctx, param, value: str | None) -> list[str] | None:
    """--backends B1,B2,...: checked before anything runs, so a typo costs no run."""
    if value is None:
        return None
    return [known_backend(b.strip()) for b in value.split(",") if b.strip()]


def memory_size(ctx, param, value):
    if value is None:
        return None
    from .core.budget import parse_size
    try:
        return parse_size(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


max_memory = click.option("--max-memory", default=None, metavar="SIZE", callback=memory_size,
                          help="Memory budget for a run's tensors, e.g. 16GiB (default 2GiB; "
                               "one tensor may take half). See docs/untrusted.md.")

# Not click.Path(exists=True): a missing spec is reported beside it while the others still run.
spec_paths = click.argument("specs", nargs=-1, required=True, type=click.Path(path_type=Path))
