"""Filters of the shop's staff pages: stored states and ledger kinds in the page's
language (shop.labels)."""

from __future__ import annotations

from django import template

from shop.labels import movement_label, status_label

register = template.Library()
register.filter("shop_status", status_label)
register.filter("gift_card_movement", movement_label)
