"""FIFOs in tests: read all that a command writes into one, with nothing left to timing
(fifo_reader), and call what must never block on one (within).

A reader thread started beside the command used to open its end in time only by luck:
gradcli waits output.FIFO_GRACE seconds for a reader, and a loaded machine may not run the
thread that soon. Here the read end is opened (without blocking) before the command starts,
and a write end is held until it is done, so that a read never ends before gradcli opens its
own; a thread drains the FIFO, so a document larger than the pipe's buffer never blocks it.
"""
from __future__ import annotations

import os
import threading
from contextlib import contextmanager


@contextmanager
def fifo_reader(path):
    """Within the block a command may write to the FIFO at path; after it, the list holds the
    whole text written (left empty when the block fails: a writer may still be open then)."""
    received: list[str] = []
    read_end = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # returns at once, with no writer
    held = os.open(path, os.O_WRONLY)  # does not block: there is a reader
    os.set_blocking(read_end, True)

    def drain():
        with os.fdopen(read_end, "rb") as stream:
            received.append(stream.read().decode("utf-8"))

    thread = threading.Thread(target=drain, daemon=True)
    thread.start()
    try:
        yield received
    finally:
        os.close(held)
    thread.join()  # the block went through: every write end is closed, the read ends


def within(seconds, call):
    """call()'s result or exception, failing (not hanging) when it blocks, as on a FIFO."""
    box = {}

    def target():
        try:
            box["value"] = call()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            box["error"] = exc
    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "blocked (a FIFO opened blocking)"
    if "error" in box:
        raise box["error"]
    return box["value"]
