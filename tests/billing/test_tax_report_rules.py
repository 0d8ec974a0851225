"""The quarter's VAT report as a pure function of the ledger's rows
(billing/rules/tax_report.py): sums kept whatever the sharding and the order, amounts
exact in the currency's units."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from billing.rules.tax_report import (
    BadQuarter,
    LedgerRow,
    build_report,
    build_reports,
    ledger_row,
    parse_quarter,
    previous_quarters,
    rate_text,
    seller_key,
)
from core.money import minor_units

TAXED = [("IT", "22", "domestic"), ("DE", "19", "oss"), ("FI", "25.5", "oss"), ("GB", "20", "registered"),
         ("US", "0", "not_subject"), ("DE", "0", "reverse_charge")]
CURRENCIES = ["EUR", "JPY", "BHD", "USD"]
VAT_NUMBERS = ["DE136695976", "FR40303265045", "ATU13585627"]

amounts = st.integers(-10**9, 10**9)
taxed_rows = st.builds(
    lambda kind, currency, net, tax, invoices: LedgerRow(
        country=kind[0], rate=kind[1], currency=currency, treatment=kind[2], net=net,
        tax=0 if kind[2] in ("reverse_charge", "not_subject") else tax, gross=net + tax, invoices=invoices),
    st.sampled_from(TAXED), st.sampled_from(CURRENCIES), amounts, amounts, st.integers(-50, 500))
customer_rows = st.builds(
    lambda vat, currency, net: LedgerRow(country=vat[:2], rate="0", currency=currency, treatment="reverse_charge",
                                         net=net, vat_number=vat),
    st.sampled_from(VAT_NUMBERS), st.sampled_from(CURRENCIES), amounts)
ledgers = st.lists(st.one_of(taxed_rows, customer_rows), max_size=40)


def by_line(line) -> tuple:
    return (line.country, rate_text(line.rate), line.currency, line.treatment, line.vat_number)


@given(ledgers)
def test_each_line_is_the_sum_of_its_shards(rows) -> None:
    report = build_report("2026Q4", rows)
    lines = [*report.lines, *report.customers]
    expected: dict[tuple, list[int]] = {}
    for row in rows:
        sums = expected.setdefault(by_line(row), [0, 0, 0, 0])
        for i, value in enumerate((row.net, row.tax, row.gross, row.invoices)):
            sums[i] += value
    assert {by_line(line): [line.net, line.tax, line.gross, line.invoices] for line in lines} == expected
    assert len(lines) == len(expected)  # one line per key, none lost, none made up
    # the totals over the whole report are the ledger's
    assert sum(line.tax for line in report.lines) == sum(row.tax for row in rows if not row.vat_number)
    assert sum(line.net for line in report.customers) == sum(row.net for row in rows if row.vat_number)


@given(ledgers, st.randoms(use_true_random=False))
def test_the_order_of_the_rows_does_not_matter(rows, random) -> None:
    shuffled = list(rows)
    random.shuffle(shuffled)
    assert build_report("2026Q4", shuffled) == build_report("2026Q4", rows)


@given(ledgers, st.data())
def test_any_split_over_shards_gives_the_same_report(rows, data) -> None:
    """A row's figures spread over several shards (as the payments' ADDs spread them), a
    credit note's negative figures among them, sum back to the same line."""
    split: list[LedgerRow] = []
    for row in rows:
        part = data.draw(st.integers(-10**6, 10**6))
        split += [LedgerRow(row.country, row.rate, row.currency, row.treatment, part, part, part, 1, row.vat_number),
                  LedgerRow(row.country, row.rate, row.currency, row.treatment, row.net - part, row.tax - part,
                            row.gross - part, row.invoices - 1, row.vat_number)]
    assert build_report("2026Q4", split) == build_report("2026Q4", rows)


@given(ledgers)
def test_lines_are_sorted_by_country_then_rate(rows) -> None:
    report = build_report("2026Q4", rows)
    keys = [(line.country, Decimal(line.rate), line.currency, line.treatment) for line in report.lines]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)
    assert all(not line.vat_number for line in report.lines)
    assert all(line.vat_number and line.reverse_charge for line in report.customers)


@given(ledgers)
def test_exported_amounts_are_exact_decimal_strings(rows) -> None:
    report = build_report("2026Q4", rows)
    exported = report.exported()
    # each sale once: the taxed lines, then reverse charge per customer (never per country too)
    assert [line for line in exported if line.reverse_charge] == list(report.customers)
    for line in exported:
        shown = line.as_dict()
        assert minor_units(Decimal(shown["net"]), line.currency) == line.net
        assert minor_units(Decimal(shown["tax"]), line.currency) == line.tax
        assert set(shown) >= {"country", "rate", "net", "tax", "currency", "reverse_charge"}
        assert ("vat_number" in shown) == bool(line.vat_number)


def test_a_worked_quarter() -> None:
    """Two shards of Italian sales, a credit note, a German business reverse charged."""
    rows = [
        ledger_row("IT#22#EUR#domestic#03", net=81967, tax=18033, gross=100000, invoices=10),
        ledger_row("IT#22#EUR#domestic#11", net=8197, tax=1803, gross=10000, invoices=1),
        ledger_row("IT#22#EUR#domestic#11", net=-820, tax=-180, gross=-1000, invoices=0),  # a credit note
        ledger_row("FR#20#EUR#oss#00", net=833, tax=166, gross=999, invoices=1),
        ledger_row("DE#0#EUR#reverse_charge#05", net=99900, tax=0, gross=99900, invoices=1),
        ledger_row("RC#DE136695976#EUR", net=99900),
        ledger_row("JP#10#JPY#registered#01", net=1364, tax=136, gross=1500, invoices=1),
    ]
    report = build_report("2026Q4", rows)
    assert [line.as_dict() for line in report.exported()] == [
        {"country": "FR", "rate": "20", "net": "8.33", "tax": "1.66", "currency": "EUR", "reverse_charge": False,
         "treatment": "oss"},
        {"country": "IT", "rate": "22", "net": "893.44", "tax": "196.56", "currency": "EUR",
         "reverse_charge": False, "treatment": "domestic"},
        {"country": "JP", "rate": "10", "net": "1364", "tax": "136", "currency": "JPY", "reverse_charge": False,
         "treatment": "registered"},
        {"country": "DE", "rate": "0", "net": "999.00", "tax": "0.00", "currency": "EUR", "reverse_charge": True,
         "treatment": "reverse_charge", "vat_number": "DE136695976"},
    ]
    [it] = [line for line in report.lines if line.country == "IT"]
    assert (it.gross, it.invoices) == (109000, 11)  # a credit note is not an invoice
    assert [line.country for line in report.lines] == ["DE", "FR", "IT", "JP"]
    assert report.tax_by_rate()[("IT", "22", "EUR")] == 19656


def test_a_greek_vat_number_is_greece() -> None:
    assert ledger_row("RC#EL094259216#EUR", net=5).country == "GR"


def test_a_key_that_is_not_the_ledgers_is_refused() -> None:
    with pytest.raises(ValueError, match="not a tax ledger key"):
        ledger_row("IT#22#EUR", net=1)


@pytest.mark.parametrize(("text", "quarter"), [("2026Q4", "2026Q4"), (" 2027q1 ", "2027Q1")])
def test_quarters(text, quarter) -> None:
    assert parse_quarter(text) == quarter


@pytest.mark.parametrize("text", ["2026Q5", "2026Q0", "2026-Q4", "26Q4", "", "2026Q", "２０２６Q4"])
def test_bad_quarters(text) -> None:
    with pytest.raises(BadQuarter, match="is not a quarter"):
        parse_quarter(text)


def test_previous_quarters_cross_the_year() -> None:
    assert previous_quarters("2027Q2", 4) == ["2027Q2", "2027Q1", "2026Q4", "2026Q3"]


@pytest.mark.parametrize(("rate", "text"), [("22", "22"), ("22.0", "22"), ("25.50", "25.5"), ("0.00", "0"),
                                            (Decimal("5.5"), "5.5")])
def test_rate_text(rate, text) -> None:
    assert rate_text(rate) == text


SELLERS = ["IT00743110157", "IE6388047V", None]  # None: totals written before sellers were keyed


@given(st.lists(st.tuples(st.sampled_from(SELLERS), st.one_of(taxed_rows, customer_rows)), max_size=40),
       st.randoms(use_true_random=False))
def test_each_seller_s_report_is_the_sum_of_its_own_rows_only(tagged, random) -> None:
    """However two sellers' (and old unkeyed) rows are interleaved, each report is exactly
    the report of that seller's rows alone: no seller's return holds another's sales."""
    rows = [LedgerRow(**{**row.__dict__, "seller": seller, "seller_name": seller and f"name of {seller}"})
            for seller, row in tagged]
    random.shuffle(rows)
    reports = build_reports("2027Q1", rows)
    present = {row.seller for row in rows}
    assert [report.seller for report in reports] == sorted(present - {None}) + ([None] if None in present else [])
    for report in reports:
        own = build_report("2027Q1", [row for row in rows if row.seller == report.seller])
        assert (report.lines, report.customers) == (own.lines, own.customers)
        assert report.seller_name == (report.seller and f"name of {report.seller}")


def test_the_ledger_keys_name_their_seller_and_old_keys_none() -> None:
    new = ledger_row("SELLER#IT00743110157#FR#20#EUR#oss#03", net=833, tax=166, invoices=1, seller_name="Rpay")
    assert (new.seller, new.seller_name, new.country, new.rate, new.treatment) == (
        "IT00743110157", "Rpay", "FR", "20", "oss")
    rc = ledger_row("SELLER#IE6388047V#RC#DE136695976#EUR", net=999)
    assert (rc.seller, rc.vat_number, rc.country, rc.treatment) == ("IE6388047V", "DE136695976", "DE", "reverse_charge")
    old = ledger_row("FR#20#EUR#oss#03", net=833, tax=166, invoices=1, seller_name="ignored")
    assert (old.seller, old.seller_name, old.country) == (None, None, "FR")
    assert seller_key("ie 6388047v", "IE") == "IE6388047V" and seller_key(None, "us") == "US-NOVAT"
