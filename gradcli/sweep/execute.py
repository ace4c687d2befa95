"""Run a sweep's runs: in this process, on a local process pool, or as Dask tasks.

Each executor yields (digest, text) per run, as runs finish (in any order): the run
file's JSON text, made where the run ran, and the small digest the report needs.
A Worker (one per process) parses the spec once and builds each distinct graph
once: a run whose experiment has a graph it already built (replay.structure_key)
rebinds that Program to the run's values instead of building another.
A failed run (an error, a non-finite stop, an unmet expect) is a document with
"error" and "exit_code", never an exception: the sweep goes on.

Turning a Result into its JSON document is the caller's `to_doc` (render.to_json):
nothing in this package renders. Dask is imported only by dask_runs' caller.
"""
from __future__ import annotations

import json
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections import OrderedDict
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool

import numpy as np

from .. import backends, runner
from ..errors import GradcliError
from ..spec.build import build_experiment
from ..spec.document import Source, compose
from ..spec.opcount import MAX_OPS, count_ops
from ..spec.overrides import apply_overrides
from ..spec.sweep import set_text
from .failures import ERROR, EXPECT, STOPPED
from .replay import structure_key

MAX_PROGRAMS = 8   # built graphs a worker keeps for replay (least recently used goes first)
OUT_OF_MEMORY = "out of memory: the run needs more memory than this machine gives it"


class Worker:
    """One spec's runs in one process: the YAML composed once, graphs kept for replay."""

    def __init__(self, text: str, path: str, to_doc, numeric: bool = True,
                 max_memory: int | None = None, texts: bool = True, overrides=()) -> None:
        self.path, self.to_doc, self.numeric, self.max_memory = path, to_doc, numeric, max_memory
        self.texts = texts  # False: no run files are written, so no JSON text is made
        # `overrides`: the sweep's --set KEY=VALUE, the same for every run (applied first)
        self.root = apply_overrides(compose(Source(path, text)), overrides)
        self.programs: OrderedDict = OrderedDict()
        self.builds = 0   # graphs built (for tests and the benchmark: replays = runs - builds)

    def experiment(self, params: dict):
        """The run's Experiment: the composed spec with --set KEY=VALUE per param."""
        overrides = [set_text(k, v) for k, v in params.items()]
        experiment = build_experiment(apply_overrides(self.root, overrides), self.path)
        count_ops(experiment, MAX_OPS)
        return experiment

    def run(self, run_id: str, params: dict) -> tuple[dict, str | None]:
        """(digest, text) of one run: the run file's JSON text (its result or its error, plus
        run, params and time; None unless self.texts) and the digest the report needs.

        `time` is the run's own time (`cpu` its processor time): building its experiment,
        building or replaying its graph, running it and producing its JSON text (what
        `gradcli run --format json` does for one spec, less starting Python).
        """
        start, cpu = time.perf_counter(), time.process_time()
        result = None
        try:
            result, doc = self._result_doc(params)
        except GradcliError as exc:
            doc = failed(ERROR, str(exc), exc.exit_code)
        except MemoryError:
            doc = failed(ERROR, OUT_OF_MEMORY, 2)
        except Exception as exc:  # a bug of ours: recorded, and the other runs still run
            doc = failed(ERROR, f"internal error: {type(exc).__name__}: {exc}", 2)
        doc = {"run": run_id, "params": dict(params), **doc}
        text = json.dumps(doc, allow_nan=False, separators=(",", ":")) if self.texts else None
        elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
        if text is not None:  # "time" and "cpu" last, once they are known
            text = f'{text[:-1]},"time":{json.dumps(elapsed)},"cpu":{json.dumps(cpu)}}}\n'
        digest = digest_of(doc, result)
        digest.update(time=elapsed, cpu=cpu)
        return digest, text

    def _result_doc(self, params: dict):
        experiment = self.experiment(params)
        key = structure_key(experiment)
        program = self.programs.pop(key, None)
        if program is not None and not program.rebind(experiment):
            program = None
        with runner.budget(self.max_memory):
            if program is None:
                program = backends.build(experiment)
                self.builds += 1
            result = runner.run(experiment, numeric=self.numeric, max_memory=self.max_memory,
                                program=program)
        self.programs[key] = program  # kept only after a run that went through
        while len(self.programs) > MAX_PROGRAMS:
            self.programs.popitem(last=False)
        doc = self.to_doc(result)
        failure = failure_of(result)
        if failure is not None:
            doc.update(failed(*failure, 1))
        return result, doc


def digest_of(doc: dict, result=None) -> dict:
    """What the client keeps of a run for results.csv and the report: its params, error,
    final loss and metrics, summary, and the overridden and true gradients (as arrays,
    which cross processes far cheaper than the run's whole JSON)."""
    digest = {k: doc[k] for k in ("run", "params", "error", "exit_code", "failure", "summary")
              if k in doc}
    train = doc.get("train")
    if isinstance(train, dict):
        digest["train"] = {k: train[k] for k in ("final_loss", "final") if k in train}
        metrics = getattr(getattr(result, "train", None), "final_metrics", None)
        if metrics and "final" not in digest["train"]:  # from the record, if the JSON lacks it
            digest["train"]["final"] = {"loss": train.get("final_loss"), **metrics}
    if result is not None:
        digest["gradients"] = {o: {i: {"overridden": _array(r.overridden), "true": _array(r.true)}
                                   for i, r in row.items()} for o, row in result.gradients.items()}
    return digest


def _array(value):
    return None if value is None else np.asarray(value, dtype=np.float64)


def failure_of(result) -> tuple[str, str] | None:
    """(kind, text): why a run that produced a result still failed, a non-finite stop or an
    unmet expect."""
    stopped = getattr(result.train, "stopped", None) if result.train is not None else None
    if stopped:
        return STOPPED, f"training stopped at step {stopped.get('step')}: {stopped.get('reason')}"
    if result.expect is not None and not result.expect.passed:
        return EXPECT, "expect: " + "; ".join(result.expect.failures)
    return None


def failed(kind: str, text: str, exit_code: int) -> dict:
    """A failed run's fields, the one place its kind is written (sweep/failures.py)."""
    return {"error": text, "exit_code": exit_code, "failure": kind}


# ----- in this process -----
def local_runs(runs, worker: Worker):
    """Every run in this process, one after another (--jobs 1: no pool to start)."""
    for run_id, params in runs:
        yield worker.run(run_id, params)


# ----- a local process pool -----
_POOL_WORKER: Worker | None = None


def _pool_start(text, path, to_doc, numeric, max_memory, texts, overrides=(), parent=None) -> None:
    global _POOL_WORKER
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the client's to handle
    # a forked worker inherits the client's SIGTERM handler; the client's _stop_pool
    # terminates workers with SIGTERM, which must end them
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _unblock(_STOPS)  # held since pool_runs made this process: now they act as set just above
    if parent is not None:
        _die_with(parent)
    _one_blas_thread()
    _POOL_WORKER = Worker(text, path, to_doc, numeric, max_memory, texts, overrides)


def _die_with(parent: int) -> None:
    """End this worker when the client process dies. A client killed by SIGKILL (the OOM
    killer) stops nothing, and the pool's workers would wait on their queue for ever. On
    Linux the kernel sends SIGKILL at the parent's death (PR_SET_PDEATHSIG: the parent is the
    thread that started the pool, the one that consumes pool_runs); elsewhere a thread polls
    the parent pid. A run in progress has no file yet: the same command redoes it."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            if ctypes.CDLL(None).prctl(1, int(signal.SIGKILL), 0, 0, 0) == 0:  # PR_SET_PDEATHSIG
                if os.getppid() != parent:  # it died before prctl: nobody will signal
                    os._exit(1)
                return
        except (OSError, AttributeError):
            pass
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(1.0)
    os._exit(1)


_LIMITS = []


def _one_blas_thread() -> None:
    """One BLAS thread per worker process (as Dask's nanny sets OMP_NUM_THREADS=1): N workers
    with a multi-threaded BLAS each would fight over the cores. threadpoolctl (scikit-learn's
    dependency) changes it after numpy's import; without it the pool runs as it is."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return
    _LIMITS.append(threadpool_limits(1))


def _pool_run(run_id: str, params: dict) -> tuple:
    return _POOL_WORKER.run(run_id, params)


def pool_runs(runs, jobs: int, text: str, path: str, to_doc, numeric: bool = True,
              max_memory: int | None = None, texts: bool = True, overrides=()):
    """Every run on a pool of `jobs` processes, yielded as each finishes. Closing the
    generator (Ctrl-C in the caller) cancels what has not started and stops the workers."""
    # fork: the workers start with gradcli already imported. Not once a threaded framework
    # is loaded in this process (a library caller's): forking it can deadlock.
    threaded = any(name in sys.modules for name in ("jax", "tensorflow", "torch"))
    method = "fork" if sys.platform.startswith("linux") and not threaded else "spawn"
    context = multiprocessing.get_context(method)
    # A forked worker starts with the client's handlers (raise Terminated, KeyboardInterrupt)
    # until _pool_start sets its own: a SIGTERM from _stop_pool or a Ctrl-C reaching it in
    # between was a traceback on stderr (review7). The processes are forked (by the submits)
    # with the two signals blocked, so in a worker they wait for _pool_start, in the client for
    # the submits. (A spawned worker starts afresh: SIGTERM's default action, no mask.)
    held = _block(_STOPS)
    try:
        pool = ProcessPoolExecutor(jobs, mp_context=context, initializer=_pool_start,
                                   initargs=(text, path, to_doc, numeric, max_memory, texts,
                                             tuple(overrides), os.getpid()))
    except BaseException:
        _unblock(held)
        raise
    finished = False
    try:
        pending, unsent = {}, []
        for run_id, params in runs:
            try:
                pending[pool.submit(_pool_run, run_id, params)] = run_id
            except BrokenProcessPool as exc:  # a worker died (a SIGTERM) while runs were sent
                unsent.append((run_id, exc))
        _unblock(held)  # a Ctrl-C held meanwhile is raised here: the pool is stopped below
        held = frozenset()
        for run_id, exc in unsent:
            yield _worker_failed(run_id, runs, exc)
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                run_id = pending.pop(future)
                yield _outcome(future, run_id, runs)
        finished = True
    finally:
        _unblock(held)
        if not finished:
            _stop_pool(pool)
        pool.shutdown(wait=finished, cancel_futures=True)


def _outcome(future, run_id: str, runs) -> tuple:
    """A finished task's (digest, text); a task that died (its process was killed, its Dask
    worker lost) is a failed run, with no text (the client writes its digest)."""
    try:
        return future.result()
    except Exception as exc:
        return _worker_failed(run_id, runs, exc)


def _worker_failed(run_id: str, runs, exc: Exception) -> tuple:
    params = dict(next(p for r, p in runs if r == run_id))
    return {"run": run_id, "params": params, "time": None,
            **failed(ERROR, f"the worker running it failed: {type(exc).__name__}: {exc}",
                     2)}, None


_STOPS = frozenset({signal.SIGINT, signal.SIGTERM})


def _block(signals) -> frozenset:
    """Block these signals in this thread (and the threads and processes it starts); the ones
    it blocks that were not blocked before, for _unblock."""
    if not hasattr(signal, "pthread_sigmask"):  # not POSIX: no mask to inherit
        return frozenset()
    return frozenset(signals) - signal.pthread_sigmask(signal.SIG_BLOCK, signals)


def _unblock(signals) -> None:
    if signals and hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, signals)


def _stop_pool(pool: ProcessPoolExecutor) -> None:
    """Terminate the pool's processes: a run in progress is dropped (it has no file yet).

    The tasks queued for them stay in the call queue's pipe, which nobody reads any more:
    without cancel_join_thread its feeder thread, joined at exit, would wait for ever.
    """
    queue = getattr(pool, "_call_queue", None)
    if queue is not None:
        queue.cancel_join_thread()
    for process in list(getattr(pool, "_processes", {}).values()):
        if process.is_alive():
            process.terminate()


def default_jobs() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


# ----- Dask -----
_DASK_WORKERS: dict = {}
_DASK_LOCK = threading.Lock()


def dask_task(text: str, path: str, to_doc, numeric: bool, max_memory, texts: bool,
              run_id: str, params: dict, overrides=()) -> tuple:
    """One run as a Dask task; the worker process keeps a Worker per spec (parsed once)."""
    key = (hash(text), path, to_doc, numeric, max_memory, texts, tuple(overrides))
    with _DASK_LOCK:  # one run at a time per process: the core's graph state is global
        worker = _DASK_WORKERS.get(key)
        if worker is None:
            if not _DASK_WORKERS:  # the first task in this process
                _roomy_allocator()
                _one_blas_thread()
            _DASK_WORKERS.clear()
            worker = _DASK_WORKERS[key] = Worker(text, path, to_doc, numeric, max_memory, texts,
                                                 overrides)
        return worker.run(run_id, params)


def _roomy_allocator() -> None:
    """Undo what Dask's nanny sets (MALLOC_TRIM_THRESHOLD_=65536): with a fixed trim
    threshold glibc also fixes its mmap threshold at 128 KiB, so every larger temporary is
    mapped, faulted in and unmapped again, which doubled a W8 run's processor time. These are
    the thresholds glibc itself reaches once a process frees a large block."""
    import ctypes

    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(-3, 32 * 2**20)  # M_MMAP_THRESHOLD
        libc.mallopt(-1, 64 * 2**20)  # M_TRIM_THRESHOLD
    except (OSError, AttributeError):  # not glibc: nothing to undo
        pass


def dask_runs(client, runs, text: str, path: str, to_doc, numeric: bool = True,
              max_memory: int | None = None, texts: bool = True, overrides=()):
    """Every run as a task on the client's cluster, yielded as each finishes (the client
    writes them). Closing the generator cancels the tasks not yet finished."""
    from dask.distributed import as_completed

    futures = {client.submit(dask_task, text, path, to_doc, numeric, max_memory, texts, run_id,
                             params, tuple(overrides),
                             pure=False, key=f"gradcli-run-{run_id}-{os.getpid()}-{time.time_ns()}"):
               run_id for run_id, params in runs}
    finished = False
    try:
        for future in as_completed(futures):
            yield _outcome(future, futures[future], runs)
        finished = True
    finally:
        if not finished:
            client.cancel(list(futures))
