"""Every DynamoDB operation a test run makes, compared with deploy/aws's IAM policies.

A pytest plugin (tests/conftest.py lists it). It wraps botocore's ``_make_api_call`` for
the whole run, so every client sees it (PynamoDB makes one per thread; the live server's
threads too), and files each DynamoDB call by who made it:

* **setup**: made under the table's set-up code (``setup_dynamodb``, ``ensure_table``,
  core/dynamo/safety.py): deploy/aws/iam-setup-policy.json;
* **runtime**: any other rpay code (pages, batches, commands): deploy/aws/iam-policy.json,
  the web and batch roles;
* **tests**: made by the tests' own code (a test reading the table back, the fixtures'
  DeleteTable, devtools' ListTables probe): in no policy.

A call is named by the IAM actions it needs, which are not always its operation's name:
a ``TransactWriteItems`` is authorized item by item (PutItem, UpdateItem, DeleteItem,
ConditionCheckItem), a ``TransactGetItems`` as GetItem.

At the end of the run the record goes to artifacts/ddb-operations.json. An action rpay
used that its policy lacks fails any run; an action a policy grants that nothing used
fails a run of the whole suite (it is only known then).
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import botocore.client
import pytest

ROOT = Path(__file__).resolve().parent.parent
RUNTIME_POLICY = ROOT / "deploy" / "aws" / "iam-policy.json"
SETUP_POLICY = ROOT / "deploy" / "aws" / "iam-setup-policy.json"
REPORT = ROOT / "artifacts" / "ddb-operations.json"

# The code that sets a table up: a call with one of these on its stack is a setup call.
SETUP_CODE = {
    ("billing/management/commands/setup_dynamodb.py", None),
    ("core/dynamo/safety.py", None),
    ("core/dynamo/table.py", "ensure_table"),
    ("core/dynamo/table.py", "enable_ttl"),
    ("core/dynamo/table.py", "ttl_status"),
}
# Test, demo and developer tooling, wherever on the stack: the fixtures' DeleteTable, the
# loaders of test, demo and benchmark data (BatchWriteItem: seed_demo for make run and
# compose, the tests' builders, the benchmarks; never a production role), the benchmarks' Scan.
TOOLING_CODE = {
    ("core/dynamo/table.py", "delete_table"),
    ("billing/access/bulk.py", "batch_items"),
    ("shop/access/sample.py", "load_seed_sample"),
    ("billing/management/commands/seed_demo.py", None),
    ("shop/demo.py", None),
    ("scripts/bench.py", None),
    ("scripts/benchkit.py", None),
    ("scripts/bench_shop.py", None),
    ("scripts/profile_payments.py", None),
    ("scripts/capacity.py", None),
}
# The tests' own calls and devtools' probes: when the nearest frame of the repository is theirs.
TEST_CODE = ("tests/", "devtools/")
# Never granted to the web and batch roles: table administration, and reading every item.
TABLE_ADMIN = {"dynamodb:Scan", "dynamodb:CreateTable", "dynamodb:DeleteTable", "dynamodb:UpdateTable",
               "dynamodb:UpdateTimeToLive", "dynamodb:UpdateContinuousBackups", "dynamodb:TagResource",
               "dynamodb:UntagResource", "dynamodb:RestoreTableToPointInTime", "dynamodb:ListTables"}
_TRANSACT_ACTIONS = {"Put": "PutItem", "Update": "UpdateItem", "Delete": "DeleteItem",
                     "ConditionCheck": "ConditionCheckItem", "Get": "GetItem"}


def iam_actions(operation: str, params: dict[str, Any]) -> set[str]:
    """The IAM actions one DynamoDB call needs."""
    if operation in ("TransactWriteItems", "TransactGetItems"):
        return {f"dynamodb:{_TRANSACT_ACTIONS[kind]}" for item in params.get("TransactItems", []) for kind in item}
    return {f"dynamodb:{operation}"}


@dataclass
class Recorder:
    runtime: set[str] = field(default_factory=set)
    setup: set[str] = field(default_factory=set)
    tests: set[str] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, operation: str, params: dict[str, Any], caller: Any) -> None:
        actions = iam_actions(operation, params)
        kind = classify(caller)
        with self.lock:
            getattr(self, kind).update(actions)

    def as_json(self) -> dict[str, list[str]]:
        return {"runtime": sorted(self.runtime), "setup": sorted(self.setup), "tests": sorted(self.tests)}


def classify(frame: Any) -> str:
    """"setup", "runtime" or "tests": the innermost frame of tooling or setup code on the
    stack decides; otherwise the nearest frame of this repository (outside libraries)
    says whose call it is."""
    nearest = None
    while frame is not None:
        path = frame.f_code.co_filename
        if path.startswith(str(ROOT)) and "/.venv/" not in path and "/site-packages/" not in path:
            relative = path[len(str(ROOT)) + 1:]
            if (relative, None) in TOOLING_CODE or (relative, frame.f_code.co_name) in TOOLING_CODE:
                return "tests"
            if (relative, None) in SETUP_CODE or (relative, frame.f_code.co_name) in SETUP_CODE:
                return "setup"
            if nearest is None:
                nearest = relative
        frame = frame.f_back
    return "tests" if nearest is None or nearest.startswith(TEST_CODE) else "runtime"


def policy_actions(path: Path) -> set[str]:
    """The DynamoDB actions an IAM policy document allows."""
    document = json.loads(path.read_text())
    actions: set[str] = set()
    for statement in document["Statement"]:
        if statement.get("Effect") != "Allow":
            continue
        granted = statement["Action"]
        actions.update([granted] if isinstance(granted, str) else granted)
    return {a for a in actions if a.startswith("dynamodb:")}


@dataclass(frozen=True)
class PolicyGaps:
    missing_runtime: set[str]
    missing_setup: set[str]
    extra_runtime: set[str]
    extra_setup: set[str]
    admin_in_runtime: set[str]

    def problems(self, *, whole_suite: bool) -> list[str]:
        """The lines to fail on: missing actions always, unused ones after a whole run."""
        lines = []
        for label, actions in (("web/batch (deploy/aws/iam-policy.json) lacks", self.missing_runtime),
                               ("setup (deploy/aws/iam-setup-policy.json) lacks", self.missing_setup),
                               ("web/batch policy grants table administration", self.admin_in_runtime)):
            if actions:
                lines.append(f"{label}: {', '.join(sorted(actions))}")
        if whole_suite:
            for label, actions in (("web/batch policy grants, never used", self.extra_runtime),
                                   ("setup policy grants, never used", self.extra_setup)):
                if actions:
                    lines.append(f"{label}: {', '.join(sorted(actions))}")
        return lines


def compare(runtime_used: Iterable[str], setup_used: Iterable[str], runtime_policy: set[str],
            setup_policy: set[str]) -> PolicyGaps:
    """What the policies lack or grant beyond what the run used. The setup role runs
    setup_dynamodb only; the web and batch roles everything else."""
    runtime_used, setup_used = set(runtime_used), set(setup_used)
    return PolicyGaps(
        missing_runtime=runtime_used - runtime_policy,
        missing_setup=setup_used - setup_policy,
        extra_runtime=runtime_policy - runtime_used,
        extra_setup=setup_policy - setup_used,
        admin_in_runtime=runtime_policy & TABLE_ADMIN,
    )


RECORDER = Recorder()
_real_make_api_call = botocore.client.BaseClient._make_api_call


def _recording_make_api_call(self: Any, operation_name: str, api_params: dict[str, Any]) -> Any:
    if self.meta.service_model.service_name == "dynamodb":
        RECORDER.record(operation_name, api_params, sys._getframe(1))
    return _real_make_api_call(self, operation_name, api_params)


def pytest_configure(config: pytest.Config) -> None:
    # Not under mutmut (`make mutate`): its copy of the project has no deploy/, and each
    # mutant's run is a small selection anyway.
    if os.environ.get("MUTANT_UNDER_TEST") is None:
        botocore.client.BaseClient._make_api_call = _recording_make_api_call
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(_MergeWorkers(), "ddb-operations-xdist")


def pytest_unconfigure(config: pytest.Config) -> None:
    botocore.client.BaseClient._make_api_call = _real_make_api_call


def ran_whole_suite(session: pytest.Session) -> bool:
    """No selection (paths, -k, -m, --deselect, --lf), every test passed, and none skipped
    for a missing system package (a machine without Chromium skips the browser tests)."""
    from tests.system_packages import missing_packages

    option = session.config.option
    args = [Path(a).resolve() for a in session.config.args]
    return (args == [ROOT / "tests"] and not option.keyword and not option.markexpr
            and not getattr(option, "deselect", None) and not getattr(option, "lf", False)
            and session.testsfailed == 0 and session.testscollected > 0 and not missing_packages())


class _MergeWorkers:
    """Under pytest-xdist each worker records its own share of the run: the controller adds
    up what the workers send back, and judges the policies once, for the whole run."""

    @pytest.hookimpl
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        shared = getattr(node, "workeroutput", {}).get("ddb_operations")
        if shared:
            with RECORDER.lock:
                for kind in ("runtime", "setup", "tests"):
                    getattr(RECORDER, kind).update(shared[kind])


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # an xdist worker: the controller judges
        workeroutput["ddb_operations"] = RECORDER.as_json()
        return
    if not (RECORDER.runtime or RECORDER.setup or RECORDER.tests) or not RUNTIME_POLICY.exists():
        return
    REPORT.parent.mkdir(exist_ok=True)
    REPORT.write_text(json.dumps(RECORDER.as_json(), indent=2) + "\n")
    gaps = compare(RECORDER.runtime, RECORDER.setup, policy_actions(RUNTIME_POLICY), policy_actions(SETUP_POLICY))
    problems = gaps.problems(whole_suite=ran_whole_suite(session))
    if problems:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        message = "DynamoDB operations and deploy/aws's IAM policies disagree (record: artifacts/ddb-operations.json):"
        if reporter is not None:
            reporter.write("\n")
            reporter.write_line(message, red=True, bold=True)
            for line in problems:
                reporter.write_line(f"  {line}", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
