"""Every table of the staff Revenue page downloads as CSV (``?format=csv&table=``): the same
figures as the table shows, for the same roles as the page."""

from __future__ import annotations

import csv
import io
import re
from datetime import date
from html.parser import HTMLParser

import pytest
from django.test import Client
from django.urls import reverse

from tests.billing.test_revenue_analytics import URL, on, scenario, staff  # noqa: F401 (scenario: a fixture)

TODAY = date(2027, 4, 20)


class Tables(HTMLParser):
    """The body rows of each ``<table data-testid=...>``, as their cells' text."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, list[list[str]]] = {}
        self.current: str | None = None
        self.in_body = False
        self.cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list) -> None:
        found = dict(attrs)
        if tag == "table":
            self.current = found.get("data-testid")
            self.tables[self.current] = []
        elif tag == "tbody":
            self.in_body = True
        elif tag == "tr" and self.in_body and self.current:
            self.tables[self.current].append([])
        elif tag in ("td", "th") and self.in_body and self.current:
            self.cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self.cell is not None:
            self.tables[self.current][-1].append("".join(self.cell).strip())
            self.cell = None
        elif tag == "tbody":
            self.in_body = False
        elif tag == "table":
            self.current = None

    def handle_data(self, data: str) -> None:
        if self.cell is not None:
            self.cell.append(data)


def plain(cell: str) -> str:
    """A page cell as the CSV writes it: no currency code, grouping, percent sign or dash."""
    cell = re.sub(r"\s+[A-Z]{3}$", "", cell.replace("\u2013", "").replace(",", ""))
    return cell.removesuffix("%")


def trimmed(row: list[str]) -> list[str]:
    while row and row[-1] == "":
        row = row[:-1]
    return row


def test_each_table_s_csv_is_its_figures(client: Client, scenario) -> None:  # noqa: F811
    with on(TODAY):
        staff(client, "finance")
        page = client.get(reverse(URL), {"month": "2027-03"}).content.decode()
        parser = Tables()
        parser.feed(page)
        names = re.findall(r'data-testid="csv-([\w-]+)"', page)
        assert {"mrr", "movements-USD", "movements-EUR", "revenue-churn", "cohorts"} <= set(names)
        # each link says which table it downloads: described by the table's caption or heading
        for name, described in re.findall(r'data-testid="csv-([\w-]+)" aria-describedby="([\w-]+)"', page):
            assert f'id="{described}"' in page, name
        assert len(re.findall(r'data-testid="csv-[\w-]+" aria-describedby=', page)) == len(names)
        for name in names:
            response = client.get(reverse(URL), {"month": "2027-03", "format": "csv", "table": name})
            assert response.status_code == 200
            assert response["Content-Type"] == "text/csv; charset=utf-8"
            assert f'filename="revenue-{name}-2027-03.csv"' in response["Content-Disposition"]
            header, *rows = list(csv.reader(io.StringIO(response.content.decode())))
            if name.startswith("movements-"):  # the page's table is one currency's: the CSV names it
                assert {r.pop(1) for r in rows} == {name.removeprefix("movements-")}
            # the cohort grid's blank corner (months still to come) is no figure
            shown = [trimmed([plain(c) for c in row]) for row in parser.tables[name]]
            assert shown == [trimmed(r) for r in rows], name
            assert rows, name
            if name == "mrr":
                assert (header, rows) == (["currency", "mrr"], [["EUR", "20.00"], ["USD", "14.00"]])


def test_an_unknown_table_is_a_404(client: Client, db, moto_table) -> None:
    staff(client, "finance")
    assert client.get(reverse(URL), {"format": "csv", "table": "nope"}).status_code == 404


@pytest.mark.parametrize(("role", "status"), [("finance", 200), ("admin", 200), ("support", 403), ("catalog", 403)])
def test_the_csv_is_for_the_page_s_roles(client: Client, db, moto_table, role, status) -> None:
    staff(client, role)
    assert client.get(reverse(URL), {"format": "csv", "table": "mrr"}).status_code == status
