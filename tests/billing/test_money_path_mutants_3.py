"""Behaviour of the money path that its mutants showed untested (docs/MUTATION.md), third
part: the modules measured again on 4 Dec 2026 (usage, seats, the tax, credit notes, batch
writes, the price models, the schedule, receipts). What a refusal answers (its reason, the
field at fault, its sentence), the edges of every bound, and the rules' arithmetic where
the selected tests did not reach it. Pure or moto-backed, each test well under a second."""

from __future__ import annotations

import os
import time
from datetime import UTC, date, datetime
from decimal import Decimal

import pytest

from billing.models import MeterAggregation
from billing.rules import usage
from billing.rules.usage import EventRefused

NOW = datetime(2027, 3, 10, 12, 0, 0, tzinfo=UTC)
NOW_S = int(NOW.timestamp())


def refusal(call, *args) -> tuple[str, str | None, str]:
    with pytest.raises(EventRefused) as caught:
        call(*args)
    refused = caught.value
    assert str(refused) == refused.message  # the sentence people read is the exception's text
    return refused.reason, refused.param, refused.message


# --- usage events ------------------------------------------------------------------------


def test_an_event_name_is_refused_with_its_reason_field_and_sentence() -> None:
    words = "event_name is 1-100 characters: lower-case letters, digits, '_', '.' or '-'."
    for bad in ("API-calls", "", "_calls", "a" * 101, 7, None):
        assert refusal(usage.check_event_name, bad) == ("invalid_event_name", "event_name", words)
    for good in ("a", "api_calls.v2-eu", "9" + "a" * 99):
        assert usage.check_event_name(good) == good


def test_a_timestamp_is_refused_with_its_reason_field_and_sentence() -> None:
    whole = ("invalid_timestamp", "timestamp", "timestamp is a whole number of Unix seconds.")
    for bad in (True, 1.5, "now", None):
        assert refusal(usage.event_moment, bad, NOW) == whole
    # a fraction or infinity inside the window: refused for what it is, not for its age
    for bad in (Decimal(NOW_S) + Decimal("0.5"), Decimal("Infinity"), Decimal("NaN")):
        assert refusal(usage.event_moment, bad, NOW) == whole
    oldest, latest = NOW_S - 35 * 86400, NOW_S + 300  # both bounds are in the window
    assert usage.event_moment(oldest, NOW) == oldest
    assert usage.event_moment(latest, NOW) == latest
    assert usage.event_moment(Decimal(latest), NOW) == latest
    assert refusal(usage.event_moment, oldest - 1, NOW) == (
        "timestamp_too_old", "timestamp", "timestamp is more than 35 days in the past.")
    assert refusal(usage.event_moment, latest + 1, NOW) == (
        "timestamp_in_future", "timestamp", "timestamp is more than 5 minutes in the future.")


def test_a_value_is_refused_with_its_reason_field_and_sentence() -> None:
    value = usage.event_value
    assert refusal(value, None, MeterAggregation.SUM) == ("missing_value", "value", "value is required by this meter.")
    text = ("invalid_value", "value", "value is 1-200 printable characters.")
    for bad in ("", "x" * 201, "tab\there"):
        assert refusal(value, bad, MeterAggregation.UNIQUE_COUNT) == text
    for good in ("x", "x" * 200):
        assert value(good, MeterAggregation.UNIQUE_COUNT) == good
    sum_ = MeterAggregation.SUM
    assert refusal(value, [1], sum_) == ("invalid_value", "value", "value is not a number.")
    assert refusal(value, "ten", sum_) == ("invalid_value", "value", "value is not a number.")
    assert refusal(value, "Infinity", sum_) == ("invalid_value", "value", "value is not a finite number.")
    assert refusal(value, "-0.5", sum_) == ("invalid_value", "value", "value is negative: usage is zero or more.")
    assert refusal(value, Decimal(10) ** 21, sum_) == ("invalid_value", "value", "value is too large (at most 10^21).")
    assert value(Decimal(10) ** 21 - 1, sum_) == Decimal(10) ** 21 - 1
    assert refusal(value, "0.0000001", sum_) == ("invalid_value", "value", "value has more than 6 decimal places.")
    assert value(" 0.000001 ", sum_) == Decimal("0.000001")


def test_a_usage_day_is_the_billing_zones_day_whatever_the_process_zone(monkeypatch) -> None:
    late = int(datetime(2027, 3, 31, 23, 30, tzinfo=UTC).timestamp())
    monkeypatch.setenv("TZ", "Pacific/Auckland")  # already 1 April there
    time.tzset()
    try:
        assert usage.day_of(late, "UTC") == "2027-03-31"
        assert usage.day_of(late, "Europe/Lisbon") == "2027-04-01"  # summer time: 00:30 there
    finally:
        monkeypatch.undo()
        time.tzset()
    assert os.environ.get("TZ") != "Pacific/Auckland"


def test_a_period_that_does_not_end_after_it_starts_is_refused_in_words() -> None:
    with pytest.raises(ValueError, match="^a period ends after it starts$"):
        usage.period_days(date(2027, 3, 2), date(2027, 3, 1))
    assert usage.period_days(date(2027, 3, 1), date(2027, 3, 2)) == ("2027-03-01", "2027-03-01")


def test_no_events_count_zero_and_sum_a_decimal_zero() -> None:
    for aggregation in (MeterAggregation.COUNT, MeterAggregation.UNIQUE_COUNT):
        assert type(usage.expected(aggregation, [])) is int
    for aggregation in (MeterAggregation.SUM, MeterAggregation.MAX, MeterAggregation.LAST):
        assert type(usage.expected(aggregation, [])) is Decimal
    assert usage.quantity(MeterAggregation.MAX, usage.EMPTY) == 0
    assert usage.quantity(MeterAggregation.UNIQUE_COUNT, usage.EMPTY) == 0  # no distinct values read
    assert usage.expected(MeterAggregation.LAST, [(Decimal(1), NOW_S, "a"), (Decimal(2), NOW_S, "b")]) == 2


# --- seats -------------------------------------------------------------------------------


def _team(**changes: object):
    from billing.models import Subscription, SubscriptionStatus

    fields = dict(SKU="TEAM", Email="a@example.com", PaymentDay=10, Currency="USD", PaymentAmount=3000,
                  UnitAmount=1000, Quantity=3, Status=SubscriptionStatus.ACTIVE, NextPaymentDate="2027-04-10",
                  PaidThroughDate="2027-04-09", CreatedDate="2027-03-10T00:00:00+00:00")
    fields.update(changes)
    return Subscription("ACC#a", "SUB#s#SKU#TEAM", **fields)


def test_a_change_of_seats_is_refused_in_words() -> None:
    from billing.models import SubscriptionStatus
    from billing.rules.seats import QuantityOutOfBounds, SeatsRefused, check_change

    today = date(2027, 3, 25)

    def words(sub, quantity: int = 4, bounds: tuple[int, int] = (1, 10_000)) -> str:
        with pytest.raises(SeatsRefused) as caught:
            check_change(sub, quantity, bounds, today=today)
        return str(caught.value)

    with pytest.raises(QuantityOutOfBounds) as caught:
        check_change(_team(), 11, (2, 10), today=today)
    assert str(caught.value) == "Choose between 2 and 10 seats."
    assert words(_team(Status=SubscriptionStatus.PAST_DUE)) == (
        "Only an active subscription can change its seats (a past-due one pays what it owes first).")
    assert words(_team(PausedFrom="2027-04-10")) == "A paused or cancelling subscription cannot change its seats."
    assert words(_team(SwitchFrom="NEWS")) == (
        "A switch of product waits for your next payment: change the seats after it.")
    assert words(_team(NextPaymentDate="2027-03-25")) == "Today's payment is due: change the seats once it is taken."
    assert words(_team(), 3) == "The subscription has that many seats already."
    assert check_change(_team(), 4, today=today) == 4


def test_seats_settle_from_today_through_the_last_paid_day_and_nothing_when_none_is_paid() -> None:
    from billing.rules.schedule import cadence_of, period_amount
    from billing.rules.seats import quote_seats

    last = date(2027, 4, 9)  # paid through 9 April: a change on that day settles that one day
    quote = quote_seats(_team(), 5, last)
    assert (quote.paid_from, quote.paid_through) == (last, last)
    assert quote.amount == period_amount(2000, cadence_of(_team()), last, last) > 0
    assert quote.due_now == quote.amount and quote.credit_now == 0
    mid = quote_seats(_team(), 2, date(2027, 3, 25))
    assert mid.paid_from == date(2027, 3, 25) and mid.credit_now == mid.amount > 0
    unpaid = quote_seats(_team(PaidThroughDate=None), 5, date(2027, 3, 25))  # no day paid yet: nothing to settle
    assert (unpaid.paid_through, unpaid.amount, unpaid.new_price) == (None, 0, 5000)


# --- credit notes ------------------------------------------------------------------------


def test_an_account_s_credit_notes_are_read_from_their_own_key_range(moto_table, monkeypatch) -> None:
    """One Query on the ``CRN#`` range, not the account's whole partition filtered by type
    (its receipts, events and subscriptions would be read, and paid for, too)."""
    from billing import access
    from billing.operations import refunds
    from core.dynamo.engine import dynamodb_client
    from tests.billing.test_tax_ledger import due, pay, use_seller

    use_seller(monkeypatch)
    [receipt] = pay(due(0, country="DE", amount=1000))
    refunds.refund_receipt(receipt, 100, request_id="r1", actor="staff:ann")
    queries: list[dict] = []

    def seen(params, **kwargs) -> None:
        queries.append(params)

    events = dynamodb_client().meta.events
    events.register("before-parameter-build.dynamodb.Query", seen, unique_id="mutants-3-queries")
    try:
        [note] = access.get_credit_notes_by_account(receipt.account_id)
        assert [n.Number for n in access.credit_notes_of_receipt(receipt)] == [note.Number]
    finally:
        events.unregister("before-parameter-build.dynamodb.Query", unique_id="mutants-3-queries")
    assert note.RefundId and note.Gross == -100
    assert len(queries) == 2 and all("begins_with" in q["KeyConditionExpression"] for q in queries)


# --- the tax rules -----------------------------------------------------------------------


def test_the_rate_s_country_its_date_and_its_category_on_each_branch() -> None:
    from billing.rules.tax import Buyer, Seller, TaxCategory, Treatment, applicable_rate

    rc = applicable_rate(Seller("IT", vat_number="IT00743110157"), Buyer("DE", vat_number="DE123456789"),
                         date(2027, 3, 1))
    assert (rc.percent, rc.country, rc.treatment) == (0, "DE", Treatment.REVERSE_CHARGE)  # the buyer's VAT
    # Under the threshold a Finnish seller charges its own rate of the invoice's day: 24%
    # until 31 August 2024, 25.5% since.
    small = Seller("FI", under_threshold=True)
    assert applicable_rate(small, Buyer("DE"), date(2024, 8, 31)).percent == 24
    assert applicable_rate(small, Buyer("DE"), date(2024, 9, 1)).percent == Decimal("25.5")
    # A UK seller with a VAT number sells a reduced-rate product to a UK consumer at 5%.
    home = applicable_rate(Seller("GB", vat_number="GB123456789"), Buyer("GB"), date(2027, 3, 1), TaxCategory.REDUCED)
    assert (home.percent, home.country, home.treatment) == (5, "GB", Treatment.DOMESTIC)


def test_a_line_s_tax_is_rounded_half_up_and_keeps_its_rate() -> None:
    from billing.rules.tax import Rate, Treatment, tax_line

    rate = Rate(Decimal(10), "DE", Treatment.OSS)
    added = tax_line(25, rate, prices_include_tax=False)  # 2.5 -> 3 (half even would give 2)
    assert (added.net, added.tax, added.gross, added.rate) == (25, 3, 28, rate)
    inside = tax_line(55, rate, prices_include_tax=True)  # 55 × 10/110 = 5 exactly; 0.5 cases below
    assert (inside.net, inside.tax, inside.gross, inside.rate) == (50, 5, 55, rate)
    assert tax_line(165, Rate(Decimal(25), "DK", Treatment.OSS), prices_include_tax=True).tax == 33
    assert tax_line(45, rate, prices_include_tax=False).tax == 5  # 4.5 -> 5 (half even: 4)


# --- the price models --------------------------------------------------------------------


def test_a_recurring_amount_as_a_month_s_share_rounded_half_up() -> None:
    from billing.rules.pricing import monthly_amount

    assert monthly_amount(1200, "year") == 100
    assert monthly_amount(1000) == monthly_amount(1000, None, None) == monthly_amount(1000, "month", 1) == 1000
    assert monthly_amount(3000, "month", 3) == 1000
    assert monthly_amount(100, "week") == 433  # 100 × 52 / 12 = 433.33
    assert monthly_amount(10, "day") == 304  # 10 × 365 / 12 = 304.17
    assert monthly_amount(1, "month", 2) == 1  # 0.5 -> 1
    assert monthly_amount(5, "month", 2) == 3  # 2.5 -> 3
    assert monthly_amount(2399, "year", 2) == 100  # 2399 / 24 = 99.96


def test_a_price_s_amounts_are_refused_in_words_at_their_bounds() -> None:
    from billing.rules.pricing import MAX_AMOUNT, Tier, check_tiers, decimal_amount

    assert decimal_amount(MAX_AMOUNT) == MAX_AMOUNT
    with pytest.raises(ValueError, match=f"^unit amount must be at most {MAX_AMOUNT}$"):
        decimal_amount(MAX_AMOUNT + 1)
    with pytest.raises(ValueError, match=r"^unit amount must be a number of minor units, not \[1\]$"):
        decimal_amount([1])
    with pytest.raises(ValueError, match="^a tier's unit_amount must not be negative$"):
        Tier(None, Decimal("-0.1"))
    assert str(decimal_amount("-0")) == "0" and not decimal_amount(Decimal("-0.000")).is_signed()
    with pytest.raises(ValueError, match="^a tier's flat_amount must be a whole number, not '3'$"):
        Tier(None, 1, "3")
    with pytest.raises(ValueError, match="^a tier's up_to must be from 1 to 999999999999, not 0$"):
        Tier(0, 1)
    tier = Tier(5, "0.5")
    assert tier.unit_amount == Decimal("0.5") and isinstance(tier.unit_amount, Decimal)
    with pytest.raises(ValueError, match="^a tiered price needs at least one tier$"):
        check_tiers(())


def test_price_terms_are_normalised_and_tiers_refused_by_position() -> None:
    from billing.rules.pricing import MAX_QUANTITY, BillingScheme, PriceTerms, Tier, check_tiers

    terms = PriceTerms("usd", billing_scheme="per_unit", unit_amount=1)
    assert terms.currency == "USD" and type(terms.billing_scheme) is BillingScheme
    with pytest.raises(ValueError, match="^billing_scheme must be one of per_unit, tiered, not 'flat'$"):
        PriceTerms("USD", billing_scheme="flat", unit_amount=1)
    assert Tier(MAX_QUANTITY, 1, MAX_QUANTITY).up_to == MAX_QUANTITY  # both bounds included
    with pytest.raises(ValueError, match=r"^only the last tier may have no up_to \(tier 1 has none\)$"):
        check_tiers((Tier(None), Tier(None)))
    with pytest.raises(ValueError, match=r"^the last tier must have no up_to \(it takes every unit past the others\)$"):
        check_tiers((Tier(5),))
