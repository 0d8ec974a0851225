"""setup_dynamodb and seed_demo: idempotent, informative, and one-line errors."""

from __future__ import annotations

import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from billing import access
from core.dynamo.engine import dynamodb_client
from core.dynamo.table import describe_table
from devtools.localengine import free_port

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


@pytest.mark.django_db(databases=[])
def test_setup_dynamodb_is_idempotent_and_enables_ttl(table, settings) -> None:
    first = run("setup_dynamodb")  # the fixture already made it
    assert "already exists" in first
    # the hash keys are the derived <date>#<shard> attributes.
    assert "GSI-1: keys DueReminderKey (HASH), LastReminderDate (RANGE)" in first
    assert "GSI-2: keys DuePaymentKey (HASH), LastPaymentDate (RANGE)" in first
    assert "due indexes: 1 shard(s)" in first
    # Both engines take UpdateTimeToLive (dynalite did not): receipts expire for real.
    assert "TTL: enabled on attribute TTL" in first
    ttl = dynamodb_client().describe_time_to_live(TableName=settings.DYNAMODB_TABLE)["TimeToLiveDescription"]
    assert ttl == {"TimeToLiveStatus": "ENABLED", "AttributeName": "TTL"}
    description = describe_table()
    indexes = {i["IndexName"]: i for i in description["GlobalSecondaryIndexes"]}
    assert set(indexes) == {"GSI-1", "GSI-2"}
    for name in indexes:
        projected = set(indexes[name]["Projection"]["NonKeyAttributes"])
        assert {"EntityType", "Email", "SKU", "PaymentAmount", "Currency"} <= projected
    assert {"PaymentDay", "PaymentDetails", "Status"} <= set(indexes["GSI-2"]["Projection"]["NonKeyAttributes"])
    assert "NextPaymentDate" in indexes["GSI-1"]["Projection"]["NonKeyAttributes"]
    # The plain dates the batches check and condition on, now that they are not the keys.
    assert "NextReminderDate" in indexes["GSI-1"]["Projection"]["NonKeyAttributes"]
    assert "NextPaymentDate" in indexes["GSI-2"]["Projection"]["NonKeyAttributes"]
    assert description.get("BillingModeSummary", {}).get("BillingMode", "PAY_PER_REQUEST") == "PAY_PER_REQUEST"


@pytest.mark.django_db(databases=[])
def test_setup_dynamodb_keeps_the_tables_shard_count_and_says_so(moto_table, settings) -> None:
    from django.core.management.base import CommandError

    from billing import access

    settings.DUE_SHARDS = 8  # the table was made with 1
    with pytest.raises(CommandError) as error:
        run("setup_dynamodb")
    [line] = str(error.value).splitlines()
    assert "DUE_SHARDS=8" in line and "records 1 shard(s)" in line and "migrate_due_shards --to 8" in line
    assert access.read_due_shard_layout() == access.DueShardLayout(1)  # never changed as a side effect
    with pytest.raises(access.DueShardsMismatch):
        access.check_due_shards()


@pytest.mark.django_db
def test_setup_dynamodb_creates_a_missing_table(moto_table) -> None:
    from core.dynamo.table import delete_table

    delete_table()
    assert "created" in run("setup_dynamodb")
    assert "already exists" in run("setup_dynamodb")


@pytest.mark.django_db
def test_seed_demo_once(moto_table) -> None:
    out = run("seed_demo")
    # five, and the three customers of the invoices' demo (an Italian, a German business, a French)
    assert "seeded 8 new demo account(s)" in out
    assert "staff@rpay.localhost" in out and "customer@rpay.localhost" in out
    again = run("seed_demo")
    assert "seeded 0 new demo account(s)" in again
    User = get_user_model()
    assert User.objects.get(username="staff@rpay.localhost").is_staff
    customer = User.objects.get(username="customer@rpay.localhost")
    account_id = access.get_account_id_for_user(customer.pk)
    collection = access.get_account_collection(account_id)
    days = {s.PaymentDay for s in collection.subscriptions}
    assert {29, 31} <= days
    # three, the coffee box whose renewal today waits for the customer's bank, and a
    # subscription whose first payment waits for it (incomplete, with its Finish payment link)
    assert len(collection.subscriptions) == 5
    # eight months of receipts were written; the reads hide the ones past their TTL
    assert 12 <= len(collection.receipts) < 4 * 9
    all_days = set()
    for user in User.objects.all():
        link = access.get_account_id_for_user(user.pk)
        if link:
            all_days |= {s.PaymentDay for s in access.get_subscriptions_by_account(link)}
    assert {29, 30, 31} <= all_days
    assert len(access.list_products()) >= 3


def test_unreachable_dynamodb_is_a_one_line_command_error(tmp_path) -> None:
    port = free_port()  # nothing listens there
    env = {"DYNAMODB_ENDPOINT": f"http://127.0.0.1:{port}", "DYNAMODB_MAX_RETRY_ATTEMPTS": "0",
           "DATABASE_URL": f"sqlite:///{tmp_path}/db.sqlite3", "PATH": "/usr/bin:/bin",
           "AWS_ACCESS_KEY_ID": "x", "AWS_SECRET_ACCESS_KEY": "x"}
    proc = subprocess.run([sys.executable, "manage.py", "setup_dynamodb"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    assert "cannot reach DynamoDB" in lines[0] and str(port) in lines[0]
    assert "Traceback" not in proc.stderr


@pytest.mark.django_db
def test_seeded_users_can_log_in(moto_table, client) -> None:
    run("seed_demo")
    from billing.management.commands.seed_demo import CUSTOMER_PASSWORD, STAFF_PASSWORD

    assert client.login(username="customer@rpay.localhost", password=CUSTOMER_PASSWORD)
    assert client.login(username="staff@rpay.localhost", password=STAFF_PASSWORD)
