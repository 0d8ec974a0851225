"""Outbound HTTP to addresses a user gave us (webhook endpoints): the SSRF guard
(``guard``) and a POST that connects to exactly the address the guard checked (``post``)."""

from core.net.guard import UnsafeURL, check_url, is_public_address, resolve_target
from core.net.post import Answer, post

__all__ = ["Answer", "UnsafeURL", "check_url", "is_public_address", "post", "resolve_target"]
