"""Which addresses a link may never reach (SSRF): loopback, private, link-local (cloud
metadata at 169.254.169.254 among them), carrier-grade NAT, multicast, reserved and the
like, in IPv4 and IPv6, also when an IPv6 address carries an IPv4 one inside it."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_CGNAT = ipaddress.IPv4Network("100.64.0.0/10")
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")  # the well-known prefix; the low 32 bits
_NAT64_LOCAL = ipaddress.IPv6Network("64:ff9b:1::/48")  # local-use NAT64 (RFC 8215)


def embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one stands for: IPv4-mapped (::ffff:a.b.c.d), 6to4,
    Teredo's client, NAT64 (64:ff9b::a.b.c.d) or IPv4-compatible (::a.b.c.d)."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    packed = int(address)
    if packed >> 32 == 0 and packed > 1:  # ::a.b.c.d (deprecated, still routed by some)
        return ipaddress.IPv4Address(packed)
    return None


def forbidden(address: IPAddress) -> str | None:
    """Why a link may not reach `address` ("a loopback address"), or None when it is a
    public address."""
    if isinstance(address, ipaddress.IPv6Address):
        if address.scope_id:
            return "a scoped link-local address"
        inner = embedded_ipv4(address)
        if inner is not None:
            reason = forbidden(inner)
            return f"{reason} inside an IPv6 address" if reason else None
        if address in _NAT64_LOCAL:
            return "a local NAT64 address"
        if address.is_site_local:
            return "a site-local address"
    if address.is_unspecified:
        return "the unspecified address"
    if address.is_loopback:
        return "a loopback address"
    if address.is_link_local:
        return "a link-local address"
    if isinstance(address, ipaddress.IPv4Address) and address in _CGNAT:
        return "a carrier-grade NAT address"
    if address.is_multicast:
        return "a multicast address"
    if address.is_reserved:
        return "a reserved address"
    if address.is_private:
        return "a private address"
    if not address.is_global:
        return "not a public address"
    return None


def parse_address(text: str) -> IPAddress | None:
    """An IP literal ("127.0.0.2", "::1", "[::1]"), or None for a host name."""
    try:
        return ipaddress.ip_address(text.strip("[]"))
    except ValueError:
        return None


@dataclass(frozen=True, slots=True)
class AllowList:
    """Hosts an operator allows on purpose (`search.fetch.allow_hosts`): "wiki.internal"
    (any port) or "wiki.internal:8080" (that port only); IP literals too."""

    entries: frozenset[tuple[str, int | None]] = frozenset()

    @classmethod
    def parse(cls, hosts: list[str]) -> AllowList:
        entries = set()
        for entry in hosts:
            entries.add(split_host_port(entry))
        return cls(frozenset(entries))

    def allows(self, host: str, port: int) -> bool:
        name = normal_host(host)
        return (name, port) in self.entries or (name, None) in self.entries


def normal_host(host: str) -> str:
    """One spelling per host: an IP's canonical form, or the lower-case IDNA name."""
    address = parse_address(host)
    if address is not None:
        return str(address)
    name = host.strip("[]").rstrip(".").casefold()
    try:
        return name.encode("idna").decode("ascii")
    except UnicodeError:
        return name


def split_host_port(entry: str) -> tuple[str, int | None]:
    """("wiki.internal", 8080) for "wiki.internal:8080"; ("::1", None) for "::1";
    ("::1", 80) for "[::1]:80". ValueError for a port that is not a number."""
    entry = entry.strip()
    if entry.startswith("["):
        host, _, rest = entry[1:].partition("]")
        port = rest.removeprefix(":") or None
    elif entry.count(":") == 1:
        host, port = entry.split(":")
    else:
        host, port = entry, None
    if port is not None and not (port.isdigit() and 0 < int(port) < 65536):
        raise ValueError(f"{entry!r}: the port must be a number from 1 to 65535")
    if not host:
        raise ValueError(f"{entry!r}: no host")
    return normal_host(host), int(port) if port is not None else None
