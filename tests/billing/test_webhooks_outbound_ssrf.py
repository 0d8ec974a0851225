"""The SSRF guard on webhook endpoints (core/net): with ``WEBHOOKS_ALLOW_PRIVATE_URLS`` off
(production), only https:// URLs whose names resolve to public addresses are registered,
and the sender checks again at each attempt and connects to the address it checked."""

from __future__ import annotations

import ipaddress
import socket

import pytest

from billing import access, batches
from billing.actions import webhook_endpoints as actions
from billing.models import DeliveryStatus
from core.net import UnsafeURL, check_url, is_public_address, post, resolve_target
from tests.billing.webhook_receiver import Receiver


def fake_dns(monkeypatch, answers: dict[str, list[str]]) -> list[str]:
    """Resolve the names in ``answers`` to those addresses; record every look-up."""
    real = socket.getaddrinfo
    asked: list[str] = []

    def getaddrinfo(host, port, *args, **kwargs):
        asked.append(host)
        if host in answers:
            return [(socket.AF_INET6 if ":" in a else socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, port))
                    for a in answers[host]]
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return asked


@pytest.mark.parametrize("address", [
    "127.0.0.1", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0",
    "224.0.0.1", "240.0.0.1", "::1", "fe80::1", "fc00::1", "::ffff:127.0.0.1", "::ffff:169.254.169.254", "ff02::1",
])
def test_non_public_addresses_are_refused(address: str) -> None:
    assert not is_public_address(ipaddress.ip_address(address))


@pytest.mark.parametrize("address", ["93.184.216.34", "8.8.8.8", "2606:2800:220:1:248:1893:25c8:1946"])
def test_public_addresses_pass(address: str) -> None:
    assert is_public_address(ipaddress.ip_address(address))


@pytest.mark.parametrize("url", [
    "http://hooks.example.com/x", "ftp://hooks.example.com/", "https://user:pw@hooks.example.com/",
    "https://127.0.0.1/x", "https://[::1]/x", "https://169.254.169.254/latest/meta-data/", "https://localhost/x",
    "https://a.localhost/x", "https:///nohost", "not a url", "", "https://hooks.example.com/\nx",
])
def test_refused_urls_when_private_addresses_are_not_allowed(url: str) -> None:
    with pytest.raises(UnsafeURL):
        check_url(url, allow_private=False)


def test_a_name_resolving_to_a_private_address_is_refused_even_among_public_ones(monkeypatch) -> None:
    fake_dns(monkeypatch, {"hooks.example.com": ["93.184.216.34"], "sneaky.example.com": ["93.184.216.34", "10.0.0.5"],
                           "metadata.example.com": ["169.254.169.254"]})
    target = check_url("https://hooks.example.com/in", allow_private=False)
    assert resolve_target(target, allow_private=False) == "93.184.216.34"
    for host in ("sneaky", "metadata"):
        with pytest.raises(UnsafeURL, match="not a public address"):
            resolve_target(check_url(f"https://{host}.example.com/", allow_private=False), allow_private=False)


def test_registration_refuses_a_private_address_when_the_setting_is_off(moto_table, settings, monkeypatch) -> None:
    settings.WEBHOOKS_ALLOW_PRIVATE_URLS = False
    fake_dns(monkeypatch, {"internal.example.com": ["10.0.0.7"], "hooks.example.com": ["93.184.216.34"]})
    for url in ("https://internal.example.com/hook", "http://hooks.example.com/hook", "https://127.0.0.1:8000/"):
        with pytest.raises(UnsafeURL):
            actions.create_endpoint(url, None, actor="staff")
    endpoint, _ = actions.create_endpoint("https://hooks.example.com/hook", None, actor="staff")
    assert [e.EndpointId for e in access.list_endpoints()] == [endpoint.EndpointId]


def test_the_sender_refuses_a_private_address_at_send_time(moto_table, settings) -> None:
    settings.WEBHOOKS_SETTLE_SECONDS = 0
    receiver = Receiver().start()
    try:
        settings.WEBHOOKS_ALLOW_PRIVATE_URLS = True  # registered while allowed (or a name that changed its answer)
        endpoint, receiver.secrets["s"] = actions.create_endpoint(receiver.url, None, actor="staff")
        access.new_merchant_event("payment.succeeded", account_id="a", object_type="payment", object_id="p",
                                  data={"id": "p"}).save()
        settings.WEBHOOKS_ALLOW_PRIVATE_URLS = False
        summary = batches.Sender().run_pass()
        assert summary.counts["failed"] == 1 and receiver.received == [] and not receiver.arrived.is_set()
        [delivery] = access.delivery_log(endpoint.EndpointId)
        assert delivery.Status == DeliveryStatus.FAILED and delivery.LastResponse.startswith("refused by the SSRF guard")
    finally:
        receiver.stop()


def test_the_post_connects_to_the_address_it_checked(monkeypatch) -> None:
    # DNS rebinding: the name answers a public address at the check and the loopback after;
    # the one look-up is the check's, and the connection goes to the address checked.
    answers = iter([["93.184.216.34"], ["127.0.0.1"]])
    looked_up: list[str] = []
    real = socket.getaddrinfo

    def getaddrinfo(host, port, *args, **kwargs):
        if host == "rebind.example.com":
            looked_up.append(host)
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, port)) for a in next(answers)]
        return real(host, port, *args, **kwargs)

    connected: list[tuple] = []

    def create_connection(address, timeout=None, *args, **kwargs):
        connected.append(address)
        raise ConnectionRefusedError("test: not really connecting")

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    monkeypatch.setattr(socket, "create_connection", create_connection)
    answer = post("https://rebind.example.com/hook", b"{}", {}, timeout=1, allow_private=False)
    assert looked_up == ["rebind.example.com"] and connected == [("93.184.216.34", 443)]
    assert answer.status is None and "ConnectionRefused" in answer.error
