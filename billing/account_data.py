"""What another app holds about an account, for the account's data rights (docs/PORTAL.md,
"Your data"): each app registers an ``AccountData`` from its ``AppConfig.ready`` (the shop
through its seam, ``billing.customers.register_account_data``); the close erases with each
(billing/actions/data_rights.py) and the export copies from each
(billing/views/account_export.py). Billing never imports the app.

A module of its own, importing nothing of billing, because the close that reads it is an
action: ``billing.customers`` sits above the actions (it opens accounts, makes processor
customers and changes billing countries), so a registry kept there would tie the two.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class AccountData:
    """What another app (the shop) holds about an account: ``export`` gives its records as
    JSON values (read by the app's own keys, never a Scan), ``erase`` removes or
    pseudonymises its personal data when the account is closed (safe to run twice)."""

    name: str
    export: Callable[[str], Any]
    erase: Callable[[str], None]


_account_data: dict[str, AccountData] = {}


def register_account_data(source: AccountData) -> None:
    """Add (or replace, by its name) an app's part of every account's data."""
    _account_data[source.name] = source


def account_data_sources() -> list[AccountData]:
    """Every registered app's part, in the order they registered."""
    return list(_account_data.values())
