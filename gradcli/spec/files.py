"""Open the files a spec names (the spec itself, `load:` data) as regular files only.

A FIFO would block the open until someone writes to it, and a device can be
endless, so every file is opened non-blocking and checked with fstat on the
open descriptor (no window between the check and the read).
"""
from __future__ import annotations

import os
import stat
from pathlib import Path

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a named pipe (FIFO)"),
          (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"))


class NotRegular(OSError):
    """The path exists but is not a regular file; `kind` says what it is."""

    def __init__(self, kind: str) -> None:
        super().__init__(kind)
        self.kind = kind


def kind_of(mode: int) -> str | None:
    """What a non-regular file is ('a directory', 'a named pipe (FIFO)', ...); None if regular."""
    if stat.S_ISREG(mode):
        return None
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def open_regular(path: str | Path):
    """A binary file object for `path`, refusing anything but a regular file without blocking.

    Raises FileNotFoundError, NotRegular (with .kind) or another OSError.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags)
    try:
        kind = kind_of(os.fstat(fd).st_mode)
        if kind is not None:
            raise NotRegular(kind)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


class TooLarge(OSError):
    """The file holds more than the bytes a reader allows; `limit` is that number."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"larger than {limit} bytes")
        self.limit = limit


def read_regular(path: str | Path, limit: int) -> bytes:
    """The bytes of the regular file at `path`, at most `limit` of them.

    The size is what is read, never stat's st_size: that is 0 for a FIFO and for
    /dev/zero (stat follows symlinks), which are endless. Raises FileNotFoundError,
    NotRegular, TooLarge or another OSError.
    """
    with open_regular(path) as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise TooLarge(limit)
    return data
