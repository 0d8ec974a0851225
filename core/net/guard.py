"""The SSRF guard: which URLs rpay may send a request to when a user chose them.

Only ``https://`` URLs whose host resolves to public addresses: never the loopback,
private ranges (10/8, 172.16/12, 192.168/16, fc00::/7), link-local (169.254/16, where the
cloud's metadata service answers; fe80::/10), shared (100.64/10), multicast, reserved or
unspecified addresses. ``allow_private`` (the setting ``WEBHOOKS_ALLOW_PRIVATE_URLS``, on
in development and tests) lifts both rules: ``http://`` and any address.

A name is resolved once, every address it has is checked (one private address refuses
the URL: DNS may answer either), and the caller connects to the address checked
(``core.net.post``), so a name that changes its answer between the check and the
connection (DNS rebinding) cannot slip through.
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

MAX_URL_LENGTH = 2000


class UnsafeURL(ValueError):
    """A URL refused by the guard; the message says why, for a form's field error."""


@dataclass(frozen=True)
class Target:
    """What a URL names: scheme, host (IDNA-encoded), port and the request's path."""

    scheme: str
    host: str
    port: int
    path: str


def check_url(url: str, *, allow_private: bool) -> Target:
    """The URL's parts, or ``UnsafeURL`` for one rpay may not call (no name is resolved)."""
    if not isinstance(url, str) or not url or len(url) > MAX_URL_LENGTH:
        raise UnsafeURL(f"a URL of at most {MAX_URL_LENGTH} characters is needed")
    if any(c.isspace() or ord(c) < 32 for c in url):
        raise UnsafeURL("the URL has spaces or control characters")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as error:
        raise UnsafeURL(f"not a URL: {error}") from None
    schemes = ("https", "http") if allow_private else ("https",)
    if parts.scheme not in schemes:
        raise UnsafeURL("only https:// URLs are allowed" if not allow_private else "only http(s):// URLs")
    if parts.username is not None or parts.password is not None:
        raise UnsafeURL("the URL may not hold a user name or password")
    host = (parts.hostname or "").rstrip(".")
    if not host:
        raise UnsafeURL("the URL has no host")
    try:
        host = host.encode("idna").decode("ascii") if not _is_ip(host) else host
    except UnicodeError:
        raise UnsafeURL("the host name is not valid") from None
    if not allow_private and _is_ip(host) and not is_public_address(ipaddress.ip_address(host)):
        raise UnsafeURL(f"{host} is not a public address")
    if not allow_private and (host.lower() == "localhost" or host.lower().endswith(".localhost")):
        raise UnsafeURL(f"{host} is not a public address")
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    return Target(parts.scheme, host, port or (443 if parts.scheme == "https" else 80), path)


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def is_public_address(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """Reachable on the public internet: ``is_global`` (which already excludes private,
    loopback, link-local, shared, reserved and unspecified ranges), and not multicast
    (some multicast ranges count as global). An IPv4 address inside IPv6 (``::ffff:a.b.c.d``,
    6to4, Teredo's client) is judged as the IPv4 address it carries."""
    if isinstance(ip, ipaddress.IPv6Address):
        inner = ip.ipv4_mapped or ip.sixtofour or (ip.teredo[1] if ip.teredo else None)
        if inner is not None:
            return is_public_address(inner)
    return ip.is_global and not ip.is_multicast


def resolve_target(target: Target, *, allow_private: bool) -> str:
    """The address to connect to: the name's first address, once every address it resolves
    to has passed the guard (``UnsafeURL`` otherwise, or when it does not resolve)."""
    try:
        infos = socket.getaddrinfo(target.host, target.port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as error:
        raise UnsafeURL(f"{target.host} does not resolve ({error})") from None
    addresses = []
    for info in infos:
        address = ipaddress.ip_address(str(info[4][0]).split("%", 1)[0])
        if not allow_private and not is_public_address(address):
            raise UnsafeURL(f"{target.host} resolves to {address}, which is not a public address")
        addresses.append(str(address))
    if not addresses:
        raise UnsafeURL(f"{target.host} does not resolve")
    return addresses[0]
