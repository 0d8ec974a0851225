"""A price's words for the pages (docs/PRICING.md, "Words"): "$10.00 a seat a month",
"¥120,000 a year", "first 1,000 calls free, then $0.002 a call, a month". In the active
language, its amounts formatted as the customers' pages format money (core.money)."""

from __future__ import annotations

from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from billing.rules.pricing import BillingScheme, Interval, PriceTerms, Tier, TiersMode, UsagePart
from core.money import format_quantity, format_unit_price, format_with_symbol


def interval_words(interval: Interval | str, count: int = 1) -> str:
    """"a month", "every 3 months", "a year", "every 2 weeks"."""
    interval = Interval(interval)
    if count == 1:
        return {Interval.DAY: _("a day"), Interval.WEEK: _("a week"), Interval.MONTH: _("a month"),
                Interval.YEAR: _("a year")}[interval]
    words = {
        Interval.DAY: ngettext("every %(count)s day", "every %(count)s days", count),
        Interval.WEEK: ngettext("every %(count)s week", "every %(count)s weeks", count),
        Interval.MONTH: ngettext("every %(count)s month", "every %(count)s months", count),
        Interval.YEAR: ngettext("every %(count)s year", "every %(count)s years", count),
    }[interval]
    return words % {"count": format_quantity(count)}


def unit_names(unit_label: str | None) -> tuple[str, str]:
    """The unit's name, singular and plural: the price's own label, the merchant's word
    (an English word takes an "s" in the plural: "seat", "seats"; any other is shown as
    given), or "unit"/"units" in the active language."""
    if not unit_label:
        return _("unit"), _("units")
    english = unit_label.isascii() and unit_label.isalpha() and not unit_label.endswith("s")
    return unit_label, unit_label + "s" if english else unit_label


def takes_an(unit: str) -> bool:
    """Whether English says "an" before the unit's name ("an agent", "an hour" aside): a
    vowel other than "u" first ("a user", "a unit")."""
    return unit[:1].lower() in "aeio"


def _each(amount: object, currency: str, unit: str) -> str:
    values = {"amount": format_unit_price(amount, currency), "unit": unit}  # type: ignore[arg-type]
    return (_("%(amount)s an %(unit)s") if takes_an(unit) else _("%(amount)s a %(unit)s")) % values


def _with_flat(words: str, tier: Tier, currency: str) -> str:
    if not tier.flat_amount:
        return words
    return _("%(words)s plus %(flat)s") % {"words": words, "flat": format_with_symbol(tier.flat_amount, currency)}


def _graduated(terms: PriceTerms, one: str, many: str) -> str:
    parts: list[str] = []
    below = 0
    for position, tier in enumerate(terms.tiers):
        free = not tier.unit_amount
        if tier.up_to is None:
            if position == 0:
                words = _("free") if free else _each(tier.unit_amount, terms.currency, one)
            else:
                words = _("then free") if free else _("then %(each)s") % {
                    "each": _each(tier.unit_amount, terms.currency, one)}
        else:
            values = {"count": format_quantity(tier.up_to - below), "units": many,
                      "each": "" if free else _each(tier.unit_amount, terms.currency, one)}
            if position == 0:
                words = (_("first %(count)s %(units)s free") if free
                         else _("first %(count)s %(units)s at %(each)s")) % values
            else:
                words = (_("next %(count)s %(units)s free") if free
                         else _("next %(count)s %(units)s at %(each)s")) % values
            below = tier.up_to
        parts.append(_with_flat(words, tier, terms.currency))
    return ", ".join(parts)


def _volume(terms: PriceTerms, one: str, many: str) -> str:
    parts: list[str] = []
    below = 0
    for tier in terms.tiers:
        each = _each(tier.unit_amount, terms.currency, one)
        if tier.up_to is not None:
            words = _("%(each)s up to %(count)s %(units)s") % {"each": each, "count": format_quantity(tier.up_to),
                                                              "units": many}
            below = tier.up_to
        elif below:
            words = _("%(each)s above %(count)s %(units)s") % {"each": each, "count": format_quantity(below),
                                                              "units": many}
        else:
            words = each
        parts.append(_with_flat(words, tier, terms.currency))
    return _("%(tiers)s (every %(unit)s at the rate of the total)") % {"tiers": ", ".join(parts), "unit": one}


def tier_words(terms: PriceTerms, unit_label: str | None = None) -> str:
    """A tiered price's tiers: "first 1,000 calls free, then $0.002 a call"."""
    one, many = unit_names(unit_label)
    return _graduated(terms, one, many) if terms.tiers_mode == TiersMode.GRADUATED else _volume(terms, one, many)


def price_words(terms: PriceTerms, unit_label: str | None = None) -> str:
    """What the price charges and how often, in the active language."""
    interval = interval_words(terms.interval, terms.interval_count)
    if terms.billing_scheme == BillingScheme.TIERED:
        return _("%(tiers)s, %(interval)s") % {"tiers": tier_words(terms, unit_label), "interval": interval}
    assert terms.unit_amount is not None
    amount = format_unit_price(terms.unit_amount, terms.currency)
    if terms.package_size:
        _one, many = unit_names(unit_label)
        return _("%(amount)s per %(size)s %(units)s %(interval)s") % {
            "amount": amount, "size": format_quantity(terms.package_size), "units": many, "interval": interval}
    if unit_label:
        values = {"amount": amount, "unit": unit_label, "interval": interval}
        if takes_an(unit_label):
            return _("%(amount)s an %(unit)s %(interval)s") % values
        return _("%(amount)s a %(unit)s %(interval)s") % values
    return _("%(amount)s %(interval)s") % {"amount": amount, "interval": interval}


def part_words(part: UsagePart, currency: str, unit_label: str | None = None) -> str:
    """One line of how a usage amount adds up (``pricing.amount_parts``): "1,000 calls free",
    "235 calls × $0.002", "3 packages of 100 calls × $5.00", "… plus $5.00" for a tier's
    flat amount."""
    one, many = unit_names(unit_label)
    units = many if part.units != 1 else one
    if part.package_size:
        words = ngettext("%(count)s package of %(size)s %(units)s × %(price)s",
                         "%(count)s packages of %(size)s %(units)s × %(price)s", part.units) % {
            "count": format_quantity(part.units), "size": format_quantity(part.package_size), "units": many,
            "price": format_unit_price(part.unit_amount, currency)}
    elif not part.unit_amount:
        words = _("%(count)s %(units)s free") % {"count": format_quantity(part.units), "units": units}
    else:
        words = _("%(count)s %(units)s × %(price)s") % {"count": format_quantity(part.units), "units": units,
                                                        "price": format_unit_price(part.unit_amount, currency)}
    if part.flat_amount:
        words = _("%(words)s plus %(flat)s") % {"words": words, "flat": format_with_symbol(part.flat_amount, currency)}
    return words
