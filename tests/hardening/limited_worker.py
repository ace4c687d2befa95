"""The capped child of limited.run_limited: set RLIMIT_AS, run each job, print JSON results."""
import json
import resource
import signal
import sys

SECONDS_PER_JOB = 120


class TimedOut(BaseException):
    """Raised by the alarm: a BaseException, so the CLI's own handlers let it through."""


def _alarm(signum, frame):
    raise TimedOut(f"the job ran for more than {SECONDS_PER_JOB} s")


def main() -> None:
    limit, jobs = int(sys.argv[1]), json.loads(sys.argv[2])
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    from click.testing import CliRunner

    from gradcli.cli import cli

    signal.signal(signal.SIGALRM, _alarm)
    results = []
    for args in jobs:
        print("job:", *args, file=sys.stderr, flush=True)  # names the culprit if the child dies
        signal.alarm(SECONDS_PER_JOB)
        try:
            outcome = CliRunner().invoke(cli, args, catch_exceptions=True)
        except TimedOut as exc:
            results.append({"exit_code": -1, "stdout": "", "stderr": f"timed out: {exc}"})
            continue
        finally:
            signal.alarm(0)
        stderr = outcome.stderr
        if outcome.exception is not None and not isinstance(outcome.exception, SystemExit):
            stderr += f"\nTraceback (escaped the CLI): {outcome.exception!r}"
        # Only the tail of stdout is kept: the child must not grow with every job's output.
        results.append({"exit_code": outcome.exit_code, "stdout": outcome.stdout[-4000:],
                        "stderr": stderr[-8000:]})
    json.dump(results, sys.stdout)


if __name__ == "__main__":
    main()
