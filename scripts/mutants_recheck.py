"""Run named mutants against named tests, as mutmut runs a mutant: a fork per mutant of a
process that collected the tests once, the mutant switched on in the fork, pytest with -x.

mutmut maps each test to the functions it reaches once, when the test is new; a test
strengthened later is not run on the mutants it now kills until ``mutants/mutmut-stats.json``
is deleted and the whole stats pass is made again. This checks chosen survivors against
chosen tests in seconds instead. Run it from mutmut's ``mutants/`` directory (or a copy of
it with the current tests copied in):

    cd mutants && ../.venv/bin/python ../scripts/mutants_recheck.py \\
        billing.operations.payments.x__paid__mutmut_3,billing.operations.payments.x__paid__mutmut_9 \\
        tests/billing/test_payment_paths.py tests/billing/test_money_path_mutants.py

It prints ``killed <mutant>``, ``SURVIVED <mutant>``, ``timeout <mutant>`` (stopped after
``MUTANT_TIME_LIMIT`` seconds, 120 by default: a looping mutant, killed as mutmut counts a
timeout) or ``exit <code> <mutant>`` per mutant.
"""

from __future__ import annotations

import os
import signal
import sys
import time
import tomllib
from pathlib import Path

import pytest
from mutmut.mutation.trampoline import set_mutant_under_test

# What [tool.mutmut] pytest_add_cli_args gives mutmut's own runs (mutants/ holds a copy of pyproject.toml).
SELECTION = tomllib.loads(Path("pyproject.toml").read_text())["tool"]["mutmut"]["pytest_add_cli_args"]
VERDICT = {0: "SURVIVED", 1: "killed"}
# Seconds a mutant's run may take (``MUTANT_TIME_LIMIT``): the slowest kill seen took about
# 20 s on a loaded machine; a looping mutant is stopped at this and counted "timeout".
TIME_LIMIT = float(os.environ.get("MUTANT_TIME_LIMIT", "120"))


def main(mutants: list[str], tests: list[str]) -> None:
    set_mutant_under_test("list_all_tests")
    pytest.main(["--rootdir=.", "--collect-only", "-qqq", *tests, *SELECTION])
    for mutant in mutants:
        pid = os.fork()
        if pid == 0:
            sys.stdout = sys.stderr = open(os.devnull, "w")  # noqa: SIM115 (the fork exits)
            set_mutant_under_test(mutant)
            os._exit(int(pytest.main(["--rootdir=.", "-x", "-q", "-p", "no:randomly", *tests, *SELECTION])))
        code = _wait(pid, TIME_LIMIT)
        print("timeout" if code is None else VERDICT.get(code, f"exit {code}"), mutant, flush=True)


def _wait(pid: int, limit: float) -> int | None:
    """The fork's exit code, or None when it ran past ``limit`` seconds (then killed): a
    mutant that loops for ever (a ``while`` whose step was mutated away) inside a test the
    suite's own timeout does not stop, such as a hypothesis example, counts as mutmut
    counts it, a timeout, i.e. killed."""
    deadline = time.monotonic() + limit
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return None
        time.sleep(0.05)


if __name__ == "__main__":
    main([name for name in sys.argv[1].split(",") if name], sys.argv[2:])
