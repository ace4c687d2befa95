"""The capped child of limited.run_limited: set RLIMIT_AS, run each job, print JSON results."""
import json
import resource
import sys


def main() -> None:
    limit, jobs = int(sys.argv[1]), json.loads(sys.argv[2])
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    from click.testing import CliRunner

    from gradcli.cli import cli

    results = []
    for args in jobs:
        outcome = CliRunner().invoke(cli, args, catch_exceptions=True)
        stderr = outcome.stderr
        if outcome.exception is not None and not isinstance(outcome.exception, SystemExit):
            stderr += f"\nTraceback (escaped the CLI): {outcome.exception!r}"
        results.append({"exit_code": outcome.exit_code, "stdout": outcome.stdout,
                        "stderr": stderr})
    json.dump(results, sys.stdout)


if __name__ == "__main__":
    main()
