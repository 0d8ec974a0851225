"""Signing up as a visitor does it: the sign-up page, the link its e-mail carries, the
password chosen on the link's page (billing/views/auth_pages.py)."""

from __future__ import annotations

import re

from django.core import mail

from tests.builders import PASSWORD

LINK = re.compile(r"https?://\S+?(/signup/confirm/[^/\s]+/)")


def confirm_link(email: str, messages: list | None = None) -> str:
    """The path of the last confirmation link mailed to ``email``."""
    sent = [m for m in (mail.outbox if messages is None else messages) if m.to == [email.lower()]]
    links = [found.group(1) for m in sent for found in LINK.finditer(m.body)]
    assert links, f"no confirmation link was mailed to {email}"
    return links[-1]


def sign_up(client, email: str, password: str = PASSWORD, *, next_page: str = ""):
    """Sign up with ``email``, follow the mailed link and choose ``password``: the answer
    of the link's page (a redirect into the portal, logged in)."""
    query = f"?next={next_page}" if next_page else ""
    answer = client.post(f"/signup/{query}", {"email": email})
    assert answer.status_code == 200, answer.content[:2000]
    link = confirm_link(email)
    return client.post(link, {"password1": password, "password2": password})
