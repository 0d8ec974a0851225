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

It prints ``killed <mutant>`` or ``SURVIVED <mutant>`` (or ``exit <code> <mutant>``) per mutant.
"""

from __future__ import annotations

import os
import sys
import tomllib
from pathlib import Path

import pytest
from mutmut.mutation.trampoline import set_mutant_under_test

# What [tool.mutmut] pytest_add_cli_args gives mutmut's own runs (mutants/ holds a copy of pyproject.toml).
SELECTION = tomllib.loads(Path("pyproject.toml").read_text())["tool"]["mutmut"]["pytest_add_cli_args"]
VERDICT = {0: "SURVIVED", 1: "killed"}


def main(mutants: list[str], tests: list[str]) -> None:
    set_mutant_under_test("list_all_tests")
    pytest.main(["--rootdir=.", "--collect-only", "-qqq", *tests, *SELECTION])
    for mutant in mutants:
        pid = os.fork()
        if pid == 0:
            sys.stdout = sys.stderr = open(os.devnull, "w")  # noqa: SIM115 (the fork exits)
            set_mutant_under_test(mutant)
            os._exit(int(pytest.main(["--rootdir=.", "-x", "-q", "-p", "no:randomly", *tests, *SELECTION])))
        _, status = os.waitpid(pid, 0)
        code = os.waitstatus_to_exitcode(status)
        print(VERDICT.get(code, f"exit {code}"), mutant, flush=True)


if __name__ == "__main__":
    main([name for name in sys.argv[1].split(",") if name], sys.argv[2:])
