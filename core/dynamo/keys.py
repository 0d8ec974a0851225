"""Keys of a single table: every id is checked before it reaches a key (docs/TABLE.md, "Ids
are checked before they reach a key"), and each key format is declared once as a
``KeyTemplate`` (the ElectroDB habit), next to its entity in the app's models."""

from __future__ import annotations

import re
import string
from dataclasses import dataclass
from functools import cached_property
from typing import Any, overload

# The longest id (account, subscription, SKU...) a key may hold. Ours are 16 hex digits
# and SKUs at most 40 characters; DynamoDB's limits (2,048 bytes for a partition key,
# 1,024 for a sort key) are far above, so a key built from valid ids always fits.
MAX_ID_LENGTH = 100
# DynamoDB's own limit on a sort key, for keys that arrive whole (a receipt's key in a URL).
MAX_SORT_KEY_BYTES = 1024


class InvalidKey(ValueError):
    """An id that cannot be part of a key: too long, or holding '#' or a control character.

    This is the one place ids are checked before they reach a key (docs/TABLE.md, "Ids are
    checked before they reach a key"); the access layer answers "not found" for them, so a
    page answers 404, never 500.
    """


# One regex search instead of a Python test per character: every key a batch reads or
# writes is checked (a profile: 1% of a payment's CPU went to the old loop).
_NOT_IN_ID = re.compile(r"[#\x00-\x1f\x7f]")


def check_id(name: str, value: Any) -> str:
    text = str(value)
    if len(text) > MAX_ID_LENGTH:
        raise InvalidKey(f"{name} is longer than {MAX_ID_LENGTH} characters")
    # A '#' inside a value would make the key ambiguous when parsed back.
    if _NOT_IN_ID.search(text):
        raise InvalidKey(f"{name} may not contain '#' or control characters: {text[:40]!r}")
    return text


@dataclass(frozen=True)
class KeyTemplate:
    """A key format such as ``SUB#{sub_id}#SKU#{sku}``: builds keys and parses them back.
    Every value is checked by ``check_id`` first (``InvalidKey``)."""

    template: str

    def format(self, **values: Any) -> str:
        return self.template.format(**{name: check_id(name, value) for name, value in values.items()})

    @property
    def fields(self) -> list[str]:
        return [f for _, f, _, _ in string.Formatter().parse(self.template) if f]

    @cached_property
    def _pattern(self) -> re.Pattern[str]:
        # Built once per template: ``parse`` runs for every key a batch touches
        # (``sub_id``, ``account_id``), and building it took 3% of a payment's CPU.
        pattern = re.escape(self.template)
        for field in self.fields:
            pattern = pattern.replace(re.escape("{" + field + "}"), f"(?P<{field}>[^#]*)")
        return re.compile(pattern)

    @property
    def prefix(self) -> str:
        """The constant text before the first field: what ``begins_with`` queries use."""
        return self.template.split("{", 1)[0]

    def parse(self, key: str) -> dict[str, str]:
        """The ids a key was built from; ``InvalidKey`` when ``key`` is not one of ours."""
        if len(key.encode()) > MAX_SORT_KEY_BYTES:
            raise InvalidKey(f"a key is at most {MAX_SORT_KEY_BYTES} bytes")
        match = self._pattern.fullmatch(key)
        if not match:
            raise InvalidKey(f"{key[:60]!r} does not match {self.template!r}")
        return {name: check_id(name, value) for name, value in match.groupdict().items()}


class KeyPart:
    """An id read back from one of an item's keys, as a read-only attribute of its model:
    ``account_id = KeyPart(ACCOUNT_PK)`` gives ``ACCOUNT_PK.parse(item.PK)["account_id"]``.
    The id is the attribute's own name unless ``field`` names another; ``key`` is the key
    attribute it is read from (``PK`` or ``SK``). Nothing is stored: the key is the truth."""

    def __init__(self, template: KeyTemplate, key: str = "PK", *, field: str | None = None) -> None:
        self.template = template
        self.key = key
        self.field = field or ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.field = self.field or name

    @overload
    def __get__(self, item: None, owner: type | None = None) -> KeyPart: ...

    @overload
    def __get__(self, item: object, owner: type | None = None) -> str: ...

    def __get__(self, item: object | None, owner: type | None = None) -> KeyPart | str:
        if item is None:
            return self
        return self.template.parse(getattr(item, self.key))[self.field]

    def __set__(self, item: object, value: object) -> None:
        # Read-only, as a property is: an id changes only with the key it is read from.
        raise AttributeError(f"{self.field} is read from the item's {self.key}")
