"""deploy/aws's IAM policies: the tables and their indexes only, no table administration
for the web and batch roles, and the comparison the run's record is checked with
(tests/ddb_operations.py; the run itself fails at its end when they disagree)."""

from __future__ import annotations

import json

from tests.ddb_operations import (
    RUNTIME_POLICY,
    SETUP_POLICY,
    TABLE_ADMIN,
    compare,
    iam_actions,
    policy_actions,
)

TABLES = ("RecurringPayments", "OnlineShop")


def statements(path) -> list[dict]:
    return json.loads(path.read_text())["Statement"]


def test_the_policies_name_the_tables_and_their_indexes_only() -> None:
    allowed = {f"arn:aws:dynamodb:REGION:ACCOUNT_ID:table/{t}" for t in TABLES}
    allowed |= {f"{arn}/index/*" for arn in allowed}
    for path in (RUNTIME_POLICY, SETUP_POLICY):
        for statement in statements(path):
            assert statement["Effect"] == "Allow"
            resources = statement["Resource"]
            assert set(resources) <= allowed, path.name
            assert all(action.startswith("dynamodb:") and "*" not in action for action in statement["Action"])


def test_the_web_and_batch_roles_may_not_scan_or_administer_tables() -> None:
    runtime = policy_actions(RUNTIME_POLICY)
    assert "dynamodb:Scan" not in runtime
    assert not runtime & TABLE_ADMIN
    assert {"dynamodb:CreateTable", "dynamodb:UpdateTable"} <= policy_actions(SETUP_POLICY)
    assert "dynamodb:DeleteTable" not in policy_actions(SETUP_POLICY)  # deletion protection stays on


def test_a_transaction_needs_the_actions_of_its_items() -> None:
    params = {"TransactItems": [{"Put": {}}, {"ConditionCheck": {}}, {"Update": {}}]}
    assert iam_actions("TransactWriteItems", params) == {
        "dynamodb:PutItem", "dynamodb:ConditionCheckItem", "dynamodb:UpdateItem"}
    assert iam_actions("TransactGetItems", {"TransactItems": [{"Get": {}}]}) == {"dynamodb:GetItem"}
    assert iam_actions("Query", {}) == {"dynamodb:Query"}


def test_missing_actions_fail_any_run_and_unused_ones_a_whole_run() -> None:
    gaps = compare(runtime_used={"dynamodb:GetItem", "dynamodb:Scan"}, setup_used={"dynamodb:CreateTable"},
                   runtime_policy={"dynamodb:GetItem", "dynamodb:PutItem"},
                   setup_policy={"dynamodb:CreateTable", "dynamodb:TagResource"})
    assert gaps.missing_runtime == {"dynamodb:Scan"}
    assert gaps.extra_runtime == {"dynamodb:PutItem"}
    assert gaps.extra_setup == {"dynamodb:TagResource"}
    assert gaps.problems(whole_suite=False) == [
        "web/batch (deploy/aws/iam-policy.json) lacks: dynamodb:Scan"]
    assert gaps.problems(whole_suite=True) == [
        "web/batch (deploy/aws/iam-policy.json) lacks: dynamodb:Scan",
        "web/batch policy grants, never used: dynamodb:PutItem",
        "setup policy grants, never used: dynamodb:TagResource",
    ]
    assert compare({"dynamodb:GetItem"}, set(), {"dynamodb:GetItem"}, set()).problems(whole_suite=True) == []


def test_table_administration_in_the_web_policy_is_a_problem() -> None:
    gaps = compare({"dynamodb:GetItem"}, set(), {"dynamodb:GetItem", "dynamodb:DeleteTable"}, set())
    assert "web/batch policy grants table administration: dynamodb:DeleteTable" in gaps.problems(whole_suite=False)


def fake_session(args: list[str], *, keyword: str = "", markexpr: str = "", failed: int = 0):
    from types import SimpleNamespace

    option = SimpleNamespace(keyword=keyword, markexpr=markexpr, deselect=None, lf=False)
    return SimpleNamespace(config=SimpleNamespace(option=option, args=args), testsfailed=failed, testscollected=9)


def test_unused_actions_are_judged_only_after_a_whole_clean_run(monkeypatch) -> None:
    from tests import ddb_operations

    monkeypatch.setattr("tests.system_packages.missing_packages", lambda: ())
    tests = str(ddb_operations.ROOT / "tests")
    assert ddb_operations.ran_whole_suite(fake_session([tests]))
    assert not ddb_operations.ran_whole_suite(fake_session([tests + "/test_production_iam.py"]))
    assert not ddb_operations.ran_whole_suite(fake_session([tests], keyword="iam"))
    assert not ddb_operations.ran_whole_suite(fake_session([tests], markexpr="not browser"))
    assert not ddb_operations.ran_whole_suite(fake_session([tests], failed=1))
    monkeypatch.setattr("tests.system_packages.missing_packages", lambda: ("chromium",))
    assert not ddb_operations.ran_whole_suite(fake_session([tests]))
