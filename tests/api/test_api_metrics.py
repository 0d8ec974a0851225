"""The API's revenue figures (/api/v1/metrics/...): the staff Revenue page's numbers on the
same data, per month, quarter, year or day; bad input a 400 naming its field, read nothing."""

from __future__ import annotations

import re
from datetime import date

import pytest
from django.test import Client
from django.urls import reverse
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from billing import access
from billing.models import AuditAction
from tests.api.conftest import ApiClient, error_of
from tests.billing.test_revenue_analytics import URL, on, scenario, staff  # noqa: F401 (scenario: a fixture)

TODAY = date(2027, 4, 20)


def usage_paid(account: access.Account, currency: str, net: int, day: date) -> None:
    """A charge paid on ``day`` that billed ``net`` of usage, as its ``payment.succeeded``
    event records it (billing/access/receipts.py): the figures read nothing else."""
    [sub] = [s for s in access.get_subscriptions_by_account(account.account_id) if s.Currency == currency][:1]
    with on(day):
        access.new_event(account.account_id, actor="batch", action=AuditAction.PAYMENT_SUCCEEDED, subject=sub.SK,
                         after={"Amount": sub.PaymentAmount + net, "Currency": currency, "UsageNet": net}).save()


def with_usage(accounts) -> None:
    """Ada's renewal of 10 March billed 2.50 USD of usage, Bo's of 12 February 1.20 EUR."""
    ada, bo, _ = accounts
    usage_paid(ada, "USD", 250, date(2027, 3, 10))
    usage_paid(bo, "EUR", 120, date(2027, 2, 12))


def test_the_api_gives_the_page_s_numbers(read_api: ApiClient, client: Client, scenario) -> None:  # noqa: F811
    with_usage(scenario)
    with on(TODAY):
        staff(client, "finance")
        response = client.get(reverse(URL), {"month": "2027-03"})
        page = response.context["report"].as_dict()
        figures_csv = client.get(reverse(URL), {"month": "2027-03", "format": "csv", "table": "figures"})
        moves = read_api.get("/metrics/movements", **{"from": "2026-04", "to": "2027-03"})
        mrr = read_api.get("/metrics/mrr", **{"from": "2026-04", "to": "2027-03"})
        grid = read_api.get("/metrics/cohorts", **{"from": "2026-04", "to": "2027-03"})
    assert moves.status_code == mrr.status_code == grid.status_code == 200
    assert [(r["period"], r["close"], r["currencies"]) for r in moves.json()["data"]] == [
        (r["month"], r["close"], r["currencies"]) for r in page["movements"]]
    assert mrr.json()["data"][-1]["mrr"] == page["mrr"] == {"EUR": 2000, "USD": 1400}
    # usage revenue beside the MRR, never in it: the month's, as the page's figures say
    assert mrr.json()["data"][-1]["usage_revenue"] == {
        c: f["usage_revenue"] for c, f in page["figures"]["currencies"].items() if f["usage_revenue"]} == {"USD": 250}
    assert [r["usage_revenue"] for r in mrr.json()["data"][-3:]] == [{}, {"EUR": 120}, {"USD": 250}]
    # the page's column (after MRR and ARR) and its CSV say the same
    row = response.content.decode().split('data-testid="figures-USD"')[1].split("</tr>")[0]
    assert re.findall(r'<td class="num">([^<]*)</td>', row)[:3] == ["14.00 USD", "168.00 USD", "2.50 USD"]
    assert "USD,14.00,168.00,2.50," in figures_csv.content.decode()
    assert [(c["cohort"], c["customers"], c["retained"], c["shares"]) for c in grid.json()["data"]] == [
        (c["month"], c["customers"], c["retained"], c["shares"]) for c in page["cohorts"]]


def test_quarters_years_days_and_one_currency(read_api: ApiClient, scenario) -> None:  # noqa: F811
    with_usage(scenario)
    with on(TODAY):
        quarters = read_api.get("/metrics/movements", **{"from": "2027-01", "interval": "quarter"}).json()
        years = read_api.get("/metrics/mrr", **{"from": "2027-01", "interval": "year", "currency": "usd"}).json()
        days = read_api.get("/metrics/mrr", **{"from": "2027-02", "to": "2027-02", "interval": "day"}).json()
    q1, q2 = quarters["data"]
    assert (q1["period"], q1["start"], q1["close"]) == ("2027Q1", "2027-01-01", "2027-03-31")
    assert q1["currencies"]["USD"] == {"opening": 0, "new": 1500, "expansion": 0, "contraction": 100,
                                       "churn": 500, "reactivation": 500, "closing": 1400}
    assert (q2["period"], q2["close"], q2["currencies"]["EUR"]["churn"]) == ("2027Q2", "2027-04-20", 2000)
    assert years["data"] == [{"period": "2027", "start": "2027-01-01", "close": "2027-04-20", "mrr": {"USD": 1400},
                              "usage_revenue": {"USD": 250}}]  # the EUR usage is not the currency asked for
    assert years["currency"] == "USD"
    assert len(days["data"]) == 28
    by_day = {d["period"]: d["mrr"].get("USD") for d in days["data"]}
    assert (by_day["2027-02-04"], by_day["2027-02-05"], by_day["2027-02-08"]) == (1500, 1000, 900)
    assert {d["period"]: d["usage_revenue"] for d in days["data"] if d["usage_revenue"]} == {"2027-02-12": {"EUR": 120}}


def test_a_product_or_a_price_interval_gives_the_filtered_page_s_numbers(read_api: ApiClient, client: Client,
                                                                         ddb_requests, scenario) -> None:  # noqa: F811
    access.create_product("NEWS-LITE", "News Lite", 500, "USD")
    access.create_product("NEWS-DAILY", "Daily News", 1000, "USD")
    with_usage(scenario)
    with on(TODAY):
        staff(client, "finance")
        page = client.get(reverse(URL), {"month": "2027-03", "product": "NEWS-LITE"}).context["report"].as_dict()
        moves = read_api.get("/metrics/movements", **{"from": "2026-04", "to": "2027-03", "product": "NEWS-LITE"})
        mrr = read_api.get("/metrics/mrr", **{"from": "2026-04", "to": "2027-03", "product": "NEWS-LITE"})
        daily = read_api.get("/metrics/mrr", **{"from": "2027-03", "to": "2027-03", "product": "NEWS-DAILY"})
        yearly = read_api.get("/metrics/mrr", **{"to": "2027-03", "price_interval": "YEAR"})
        ddb_requests.reset()
        unknown = read_api.get("/metrics/mrr", product="NO-SUCH")
        queries = ddb_requests.ops.count("Query")
        wrong = read_api.get("/metrics/cohorts", price_interval="fortnight")
    assert moves.status_code == mrr.status_code == 200
    assert moves.json()["product"] == "NEWS-LITE" and moves.json()["figures"] == "recomputed"
    assert [(r["period"], r["currencies"]) for r in moves.json()["data"]] == [
        (r["month"], r["currencies"]) for r in page["movements"]]
    march = moves.json()["data"][-1]["currencies"]["USD"]
    # Cy's first NEWS-LITE payment is new within the product, a reactivation in the whole
    assert (march["opening"], march["new"], march["reactivation"], march["closing"]) == (0, 500, 0, 500)
    assert mrr.json()["data"][-1]["mrr"] == page["mrr"] == {"USD": 500}
    # the usage billed by a subscription's charge counts where the subscription was that day
    assert mrr.json()["data"][-1]["usage_revenue"] == {}
    assert daily.json()["data"][-1] == {**daily.json()["data"][-1], "mrr": {"EUR": 2000, "USD": 900},
                                        "usage_revenue": {"USD": 250}}
    assert yearly.status_code == 200 and yearly.json()["price_interval"] == "year"
    assert all(r["mrr"] == {} for r in yearly.json()["data"])  # nothing in the scenario is yearly
    assert unknown.status_code == 400 and error_of(unknown)["param"] == "product"
    assert queries == 1  # the catalog's one Query, then nothing
    assert wrong.status_code == 400 and error_of(wrong)["param"] == "price_interval"


@pytest.mark.parametrize(("params", "field"), [
    ({"from": "2027-13"}, "from"), ({"to": "x"}, "to"), ({"to": "2027-05"}, "to"),
    ({"from": "2027-03", "to": "2027-01"}, "from"), ({"interval": "week"}, "interval"),
    ({"currency": "US"}, "currency"), ({"from": "2020-01", "interval": "day"}, "from"),
    ({"price_interval": "quarter"}, "price_interval"),
])
def test_bad_input_is_a_400_naming_the_field_and_reads_nothing(read_api: ApiClient, ddb_requests, params,
                                                               field) -> None:
    for kind in ("mrr", "movements", "cohorts"):
        with on(TODAY):
            ddb_requests.reset()
            response = read_api.get(f"/metrics/{kind}", **params)
        assert response.status_code == 400
        assert error_of(response)["param"] == field
        assert "Query" not in ddb_requests.ops and "BatchGetItem" not in ddb_requests.ops


def test_no_key_no_figures(db, moto_table) -> None:
    response = Client().get("/api/v1/metrics/mrr")
    assert response.status_code == 401
    assert error_of(response)["type"] == "authentication_error"


WORDS = st.one_of(st.none(), st.text(max_size=25), st.sampled_from(
    ["2027-01", "2027-04", "2026-13", "1999-12", "month", "quarter", "year", "day", "usd", "EUR", "€€€"]))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(["mrr", "movements", "cohorts"]), WORDS, WORDS, WORDS, WORDS)
def test_any_query_is_an_answer_or_a_400_naming_its_field(read_api: ApiClient, kind, start, to, interval,
                                                          currency) -> None:
    params = {k: v for k, v in {"from": start, "to": to, "interval": interval, "currency": currency}.items()
              if v is not None}
    with on(TODAY):
        response = read_api.get(f"/metrics/{kind}", **params)
    assert response.status_code in (200, 400), response.content
    if response.status_code == 400:
        assert error_of(response)["param"] in params
    else:
        assert response.json()["object"] == f"metrics.{kind}"
