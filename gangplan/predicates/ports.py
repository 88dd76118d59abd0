"""Host ports (``pkg/scheduler/framework/plugins/nodeports/node_ports.go`` and
``framework/types.go`` HostPortInfo, v1.35): two ports conflict when protocol and port match and
either host IP is 0.0.0.0 or both are equal. An empty host IP or protocol is sanitised to 0.0.0.0 /
TCP; ``::`` is an ordinary specific address upstream (only ``DefaultBindAllHostIP`` is a wildcard)."""

from __future__ import annotations

from collections.abc import Iterable

from gangplan.models.objects import HostPort

_ANY = ("0.0.0.0", "")


def ports_conflict(a: HostPort, b: HostPort) -> bool:
    if a.port != b.port or (a.protocol or "TCP") != (b.protocol or "TCP"):
        return False
    return a.host_ip in _ANY or b.host_ip in _ANY or a.host_ip == b.host_ip


def conflicting_port(wanted: Iterable[HostPort], used: Iterable[HostPort]) -> HostPort | None:
    used = list(used)
    for w in wanted:
        for u in used:
            if ports_conflict(w, u):
                return w
    return None
