"""Strict parsing of environment variables for the settings module.

Modelled on healthchecks' ``hc/settings.py`` helpers: a variable that is unset or empty
takes its default; any other value must parse, or Django refuses to start with an
``ImproperlyConfigured`` that names the variable and the value it got. A typo such as
``DJANGO_DEBUG=flase`` or ``EMAIL_PORT=25x`` is never silently read as a default.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, TypeVar

from django.core.exceptions import ImproperlyConfigured

TRUE_WORDS = frozenset({"1", "true", "yes", "on"})
FALSE_WORDS = frozenset({"0", "false", "no", "off"})
T = TypeVar("T")


def _raw(name: str) -> str | None:
    """The variable's value, or None when it is unset or blank (take the default)."""
    value = os.environ.get(name)
    if value is None or not value.strip():
        return None
    return value.strip()


def _bad(name: str, value: str, expected: str) -> ImproperlyConfigured:
    return ImproperlyConfigured(f"Environment variable {name}={value!r} is not valid: expected {expected}.")


def env_bool(name: str, default: bool) -> bool:
    value = _raw(name)
    if value is None:
        return default
    word = value.lower()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    raise _bad(name, value, "one of 1/0, true/false, yes/no, on/off")


def env_int(name: str, default: int, *, minimum: int | None = None) -> int:
    value = _raw(name)
    if value is None:
        return default
    try:
        number = int(value)
    except ValueError:
        raise _bad(name, value, "a whole number") from None
    if minimum is not None and number < minimum:
        raise _bad(name, value, f"a whole number of at least {minimum}")
    return number


def env_int_list(name: str, default: list[int], *, minimum: int | None = None) -> list[int]:
    value = _raw(name)
    if value is None:
        return default
    parts = [part.strip() for part in value.split(",")]
    if not all(part.lstrip("-").isdigit() for part in parts):
        raise _bad(name, value, "comma-separated whole numbers, e.g. 1,3,5")
    numbers = [int(part) for part in parts]
    if minimum is not None and any(n < minimum for n in numbers):
        raise _bad(name, value, f"comma-separated whole numbers of at least {minimum}")
    return numbers


def env_list(name: str, default: list[str]) -> list[str]:
    """Comma-separated words; blanks between commas are ignored."""
    value = _raw(name)
    if value is None:
        return default
    return [part.strip() for part in value.split(",") if part.strip()]


def env_choice(name: str, default: str, choices: list[str]) -> str:
    """One of a fixed set of words (compared case-insensitively, returned as listed)."""
    value = _raw(name)
    if value is None:
        return default
    for choice in choices:
        if choice.lower() == value.lower():
            return choice
    raise _bad(name, value, "one of " + ", ".join(c for c in choices if c))


def env_url(name: str, default: str, parse: Callable[..., T], **options: Any) -> T:
    """A URL handed to ``parse`` (e.g. dj_database_url.parse); its complaint names the variable."""
    value = _raw(name) or default
    try:
        return parse(value, **options)
    except ValueError as error:
        raise ImproperlyConfigured(f"Environment variable {name} is not a valid URL: {error}") from None
