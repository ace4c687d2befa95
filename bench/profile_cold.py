"""Profiles of gradcli's cold path (cProfile, phase by phase) and of its commands' start-up imports.

    python bench/profile_cold.py --workload W1 [--n 2000] [--top 25] [--sort tottime] [--by-phase]
    python bench/profile_cold.py --command "run {demo}" --command "--help" [--top 20]

Profiles count CPU time (time.process_time), not wall time: the machine is shared.
--workload: cProfile of bench/peers/gradcli_core.py's cold_wN (build forward, one gradient set,
values by gc.evaluate), the phases' wall and CPU seconds without the profiler first, µs per
forward op where the workload counts them, and the growth of resident memory.
--command: `python -X importtime` of `gradcli <command>` ("{demo}": the bundled demo experiment),
with bytecode cached as in W6, the slowest imports by cumulative time.
"""
from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make `bench` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import cold, measure  # noqa: E402
from bench.peers import gradcli_core  # noqa: E402
from bench.workloads import SIZES, cold_sizes, function_name, make_data  # noqa: E402


def cold_profile(workload: str, n: int | None, top: int, sort: str) -> str:
    sizes = cold_sizes(workload, quick=False)
    if n:
        sizes["n"] = n
    d = make_data(workload, sizes)
    fn = getattr(gradcli_core, f"cold_{function_name(workload)}")
    fn(make_data(workload, {**sizes, "n": 20} if "n" in sizes else SIZES[workload]["quick"]))  # warm
    mb, wall, result = measure.rss_growth(lambda: fn(d))
    lines = [f"{workload} {sizes}: cold {wall * 1e3:.1f} ms wall, +{mb:.1f} MB resident (peak growth)"]
    for name, p in result.phases.items():
        per_op = (f", {p['cpu_s'] / result.forward_ops * 1e6:.2f} µs CPU per forward op"
                  if result.forward_ops else "")
        lines.append(f"  {name:24} {p['wall_s'] * 1e3:9.1f} ms wall {p['cpu_s'] * 1e3:9.1f} ms CPU{per_op}")
    costs = getattr(gradcli_core, f"build_costs_{function_name(workload)}", None)
    if costs is not None and result.forward_ops:
        true = costs(d)["true_gradients"]["cpu_s"]
        lines.append(f"  {'true_gradients (apart)':24} {true * 1e3:28.1f} ms CPU, "
                     f"{true / result.forward_ops * 1e6:.2f} µs CPU per forward op")
    del result
    prof = cProfile.Profile(time.process_time)
    prof.enable()
    fn(d)
    prof.disable()
    out = io.StringIO()
    stats = pstats.Stats(prof, stream=out).strip_dirs().sort_stats(sort)
    stats.print_stats(top)
    text = out.getvalue()
    lines += ["", f"cProfile of one cold, by {sort}:", text[text.find("   ncalls"):].rstrip()]
    return "\n".join(lines)


class PhaseProfiles:
    """A clock for gradcli_core's _wN_graph builders: one cProfile per phase (forward, gradients)."""

    def __init__(self) -> None:
        self.profiles: dict[str, cProfile.Profile] = {}
        self._current = cProfile.Profile(time.process_time)
        self._current.enable()

    def mark(self, name: str) -> None:
        self._current.disable()
        self.profiles[name] = self._current
        self._current = cProfile.Profile(time.process_time)
        self._current.enable()

    def stop(self) -> None:
        self._current.disable()


def phase_profiles(workload: str, n: int | None, top: int, sort: str) -> str:
    """cProfile of each phase of the cold apart: forward, gradients, values (gc.evaluate)."""
    import gradcli as gc

    sizes = cold_sizes(workload, quick=False)
    if n:
        sizes["n"] = n
    graph = getattr(gradcli_core, f"_{function_name(workload)}_graph")
    clock = PhaseProfiles()
    fetches, _, _ = graph(make_data(workload, sizes), clock)
    gc.evaluate(fetches)
    clock.mark("values")
    clock.stop()
    lines = []
    for name, prof in clock.profiles.items():
        out = io.StringIO()
        pstats.Stats(prof, stream=out).strip_dirs().sort_stats(sort).print_stats(top)
        text = out.getvalue()
        total = text[:text.find("   ncalls")].strip().splitlines()
        lines += [f"--- {workload} phase {name}: {' '.join(total[-1:])}",
                  text[text.find("   ncalls"):].rstrip(), ""]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workload", action="append", default=[], help="W1..W5 (repeatable)")
    parser.add_argument("--n", type=int, help="chain length for W1/W4 (default: the workload's)")
    parser.add_argument("--command", action="append", default=[], help="gradcli arguments (repeatable)")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--sort", default="tottime", help="pstats key: tottime, cumulative, ...")
    parser.add_argument("--by-phase", action="store_true", help="--workload: one profile per phase")
    args = parser.parse_args(argv)
    measure.settle_allocator()
    for w in args.workload:
        if w not in cold.COLD_WORKLOADS:
            raise SystemExit(f"unknown cold workload {w!r}; choose from {', '.join(cold.COLD_WORKLOADS)}")
        print(cold_profile(w, args.n, args.top, args.sort), "\n", flush=True)
        if args.by_phase:
            print(phase_profiles(w, args.n, args.top, args.sort), flush=True)
    for command in args.command:
        case = gradcli_core.w6({"command": command}, top=args.top)
        case.run()  # fills the private bytecode cache, as W6's first run does
        print(f"gradcli {command}\n{case.profile()}\n", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
