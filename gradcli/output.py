"""Where the CLI's output goes: an --output file, written without damage, or stdout.

`--output` is checked before anything runs, so a long run never ends in a
write that was bound to fail. A regular file is replaced atomically (a
temporary file renamed over it, so Ctrl-C or a crash never leaves half a
file); anything else that already exists is treated as `open(path, "w")`
would treat it: a device or FIFO is written in place, a symlink is followed.
What `open()` would only do by force is refused: a read-only file (even for
root), a directory, the spec being run, and a file in a folder that does not
exist (no folders are created), and a file the spec reads (`load:`).
"""
from __future__ import annotations

import errno
import os
import stat
import sys
from pathlib import Path

from .errors import GradcliError
from .printable import printable


class OutputError(GradcliError):
    """--output or stdout cannot take the output (exit code 2)."""


class ClosedPipe(OutputError):
    """stdout's (or stderr's) reader went away (`gradcli run ... | head`): stop quietly, as a command
    killed by SIGPIPE would (exit 128 + 13)."""

    exit_code = 141


def _fail(shown: str, why: str) -> OutputError:
    return OutputError(f"--output '{printable(shown)}': {why}")


def prepare(path_text: str, specs=()) -> Path:
    """The file --output PATH will write (symlinks followed), or an OutputError saying why not."""
    if not path_text:
        raise _fail(path_text, "the file name is empty")
    target = Path(os.path.realpath(path_text))
    try:
        info = os.stat(target)
    except FileNotFoundError:
        _check_can_create(path_text, target)
        return target
    except OSError as exc:
        raise _fail(path_text, exc.strerror or str(exc)) from None
    for spec in specs:  # by inode: a symlink or a hard link to the spec is the spec
        if os.path.exists(spec) and os.path.samestat(info, os.stat(spec)):
            raise _fail(path_text, f"is the spec being run ({printable(spec)}); pick another file")
    if stat.S_ISDIR(info.st_mode):
        raise _fail(path_text, "is a directory")
    if stat.S_ISREG(info.st_mode):
        # Root may write a 0444 file, but a read-only file says "do not change me": refuse.
        if not (info.st_mode & 0o222 and os.access(target, os.W_OK)):
            raise _fail(path_text, "is read-only; gradcli does not replace it")
        _check_can_create(path_text, target)
    elif stat.S_ISCHR(info.st_mode) or stat.S_ISBLK(info.st_mode) or stat.S_ISFIFO(info.st_mode):
        if not os.access(target, os.W_OK):
            raise _fail(path_text, "is not writable")
        if stat.S_ISFIFO(info.st_mode):
            _open_fifo(path_text, target)
    else:
        raise _fail(path_text, "is a socket or other special file, not something gradcli can write")
    return target


FIFO_GRACE = 2.0  # seconds a reader started just before us (`cat ff & gradcli ...`) gets
_fifos: dict = {}  # FIFO path -> the write end opened by prepare(), kept for write_file()


def _open_fifo(shown: str, target: Path) -> None:
    """Open a FIFO's write end now, without blocking: with no reader, a blocking open
    would hang once the whole run is done. Kept open, so the reader sees no early EOF."""
    import time

    if target in _fifos:  # checked once already (--output's option check, then the write)
        return
    deadline = time.monotonic() + FIFO_GRACE
    while True:
        try:
            fd = os.open(target, os.O_WRONLY | os.O_NONBLOCK)
            break
        except OSError as exc:
            if exc.errno != errno.ENXIO:
                raise _fail(shown, exc.strerror or str(exc)) from None
            if time.monotonic() > deadline:
                raise _fail(shown, "no process is reading the FIFO; start the reader "
                                   "first") from None
            time.sleep(0.02)
    os.set_blocking(fd, True)
    _fifos[target] = fd


def refuse_read_files(path_text: str | None, experiment) -> None:
    """An OutputError if --output PATH is a file the spec reads (its `load:` files): by
    inode, as prepare() refuses the spec itself. Called once the spec is loaded."""
    if path_text is None:
        return
    try:
        info = os.stat(path_text)
    except OSError:
        return  # nothing there (yet) to destroy; prepare() judged the rest
    for spec in experiment.inputs.values():
        if spec.loaded_from is not None and os.path.samestat(info, os.stat(spec.loaded_from)):
            raise _fail(path_text, f"is the file input {spec.name!r} of the spec loads "
                                   f"({printable(spec.loaded_from)}); pick another file")


def _check_can_create(shown: str, target: Path) -> None:
    """A temporary file can be made beside target, in a folder that exists: like a shell's
    `>`, --output creates no folders (a typo in a folder name should not become one)."""
    folder = target.parent
    if not folder.exists():
        raise _fail(shown, f"the folder {printable(folder)} does not exist; create it first")
    if not folder.is_dir():
        raise _fail(shown, f"{printable(folder)} is not a directory")
    import tempfile

    try:  # os.access cannot see read-only file systems, /proc or root's privileges: try it
        fd, probe = tempfile.mkstemp(dir=folder, prefix=".gradcli-probe.")
    except OSError as exc:
        raise _fail(shown, f"cannot create files in {printable(folder)}: "
                           f"{exc.strerror or exc}") from None
    try:
        os.close(fd)
    finally:  # even on Ctrl-C: the probe must not stay behind
        os.unlink(probe)


def write_file(target: Path, text: str | bytes, shown: str) -> None:
    """Write text (or a figure's bytes) to a target that prepare() accepted."""
    try:
        info = os.stat(target)
    except FileNotFoundError:
        info = None
    try:
        if info is not None and not stat.S_ISREG(info.st_mode):
            with _open(_fifos.pop(target, target), text) as handle:  # a device or FIFO: in place
                handle.write(text)
        else:
            _replace(target, text, info)
    except OSError as exc:
        raise _fail(shown, f"cannot write: {exc.strerror or exc}") from None


def _open(file, text: str | bytes):
    return open(file, "wb") if isinstance(text, bytes) else open(file, "w", encoding="utf-8")


def _replace(target: Path, text: str | bytes, old: os.stat_result | None) -> None:
    """Write a temporary file beside target, give it the mode open() would, rename it over."""
    import tempfile

    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with _open(fd, text) as handle:
            handle.write(text)
            if old is not None:  # a replaced file keeps its mode and, where allowed, its owner
                os.fchmod(handle.fileno(), stat.S_IMODE(old.st_mode))
                try:
                    os.fchown(handle.fileno(), old.st_uid, old.st_gid)
                except PermissionError:
                    pass
            else:  # mkstemp makes 0600; a new file gets what the umask allows, as with open()
                os.fchmod(handle.fileno(), 0o666 & ~_umask())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _umask() -> int:
    mask = os.umask(0o022)  # the only way to read it is to set it
    os.umask(mask)
    return mask


def checked_option(ctx, param, value: str | None) -> str | None:
    """--output's click callback: a target that cannot be written is refused before anything
    runs. The specs are not known yet (click reads arguments after options): deliver()
    checks against them before it writes."""
    if value is not None:
        try:
            prepare(value)
        except OutputError as exc:
            import click

            raise click.UsageError(str(exc)) from None
    return value


def plain_text(renderables) -> str:
    """Tables as --output writes them: plain text, no colour codes, as wide as they need."""
    from .cli_common import file_console

    console = file_console()
    for part in renderables:
        console.print(part)
    return console.file.getvalue()


def deliver(text: str, output: str | None, specs=(), experiments=()) -> None:
    """A command's whole output on stdout, or in the --output file. The file is refused if
    it is one of the specs or a file they load, and written atomically (nothing is written
    when anything before this failed)."""
    if output is None:
        write_stdout(text)
        return
    target = prepare(output, specs)
    for experiment in experiments:
        refuse_read_files(output, experiment)
    write_file(target, text, output)


def write_stdout(text: str) -> None:
    """Write to stdout; a full disk or closed pipe becomes an OutputError."""
    stdout = Stdout()
    stdout.write(text)
    stdout.flush()


def flush_stdout() -> None:
    """Flush what rich printed; called once before exit, so a failed write is reported."""
    Stdout().flush()


class Stdout:
    """sys.stdout for rich's Console, whose failed writes (a full disk, a closed pipe)
    become an OutputError instead of a traceback."""

    _which = "stdout"  # not `name`: that is the stream's own attribute, passed through below

    @property
    def _stream(self):
        return getattr(sys, self._which)  # as it is now: tests swap sys.stdout and sys.stderr

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except OSError as exc:
            raise stream_failed(self._which, exc) from None

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError as exc:
            raise stream_failed(self._which, exc) from None

    def __getattr__(self, name):  # isatty, fileno, encoding: as the stream has them now
        return getattr(self._stream, name)


class Stderr(Stdout):
    """sys.stderr, the same way: its reader going away (`gradcli ... 2>&1 | head -1`) ends
    the command as a closed stdout does (141), not with rich's exit 1 ("expect failed")."""

    _which = "stderr"


def stream_failed(name: str, exc: OSError) -> OutputError:
    """The error for a failed write to sys.<name>; the stream is pointed at /dev/null so that
    Python's own flush at exit (or a message about this very error) does not fail a second
    time with a traceback."""
    stream = getattr(sys, name)
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # no real file descriptor (tests)
        pass
    if exc.errno == errno.EPIPE:
        return ClosedPipe("")
    where = "standard output" if name == "stdout" else "standard error"
    return OutputError(f"cannot write to {where}: {exc.strerror or exc}")
