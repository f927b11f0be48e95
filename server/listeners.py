"""Listening sockets: the plain TCP listener (`port`) and the TLS one (`tls-port`), on every
`bind` address, at start-up and when CONFIG SET changes them.

Sockets are bound synchronously, so that a port in use is an error at once (a failed start, or
a failed CONFIG SET) rather than a log line from a task. Port 0 means no listener of that kind,
as in Redis.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import ssl
from collections.abc import Callable
from typing import Any

log = logging.getLogger("rivulet")


class ListenError(OSError):
    """A listener that could not be created; the reason is already logged."""


def bind_sockets(addrs: list[str], port: int, backlog: int) -> list[socket.socket]:
    """Bound, listening, non-blocking sockets for `port` on each address ("-addr": optional,
    skipped when it cannot be bound, as in redis.conf). All or nothing."""
    sockets: list[socket.socket] = []
    for addr in addrs:
        host = addr.lstrip("-")
        host = {"*": "0.0.0.0", "::*": "::"}.get(host, host)  # redis.conf's wildcards
        error: OSError | None = None
        sock: socket.socket | None = None
        try:
            family, kind, proto, _canon, sockaddr = socket.getaddrinfo(
                host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0]
            sock = socket.socket(family, kind, proto)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            sock.bind(sockaddr)
            sock.listen(backlog)
            sock.setblocking(False)
        except OSError as exc:
            error = exc
            if sock is not None:
                sock.close()
        if error is not None or sock is None:
            if addr.startswith("-"):
                continue
            for other in sockets:
                other.close()
            log.warning("Warning: Could not create server TCP listening socket %s:%d: %s", host, port,
                        getattr(error, "strerror", None) or error)
            raise ListenError(f"Could not create server TCP listening socket {host}:{port}")
        sockets.append(sock)
    return sockets


class Listener:
    """One kind of listener ("tcp" or "tls"): its sockets, wrapped in asyncio servers."""

    def __init__(self, name: str, factory: Callable[[], asyncio.BaseProtocol],
                 ssl: ssl.SSLContext | None = None) -> None:
        self.name = name
        self.factory = factory
        self.ssl = ssl
        self.port = 0
        self.binds: list[str] = []  # the addresses actually bound (INFO's listener lines)
        self.servers: list[Any] = []  # asyncio's or uvloop's Server objects

    @property
    def active(self) -> bool:
        return self.port != 0

    async def start(self, loop: asyncio.AbstractEventLoop, addrs: list[str], port: int,
                    backlog: int) -> None:
        self.close()
        if port == 0:
            return
        sockets = bind_sockets(addrs, port, backlog)
        self._adopt(addrs, port, sockets)
        for sock in sockets:
            self.servers.append(await loop.create_server(self.factory, sock=sock, backlog=backlog, ssl=self.ssl))

    def restart(self, loop: asyncio.AbstractEventLoop, addrs: list[str], port: int,
                backlog: int) -> None:
        """From a command (no await possible): the old sockets are closed first because the new
        ones may want the same port; binding errors raise here, serving starts in a task."""
        self.close()
        if port == 0:
            return
        sockets = bind_sockets(addrs, port, backlog)
        self._adopt(addrs, port, sockets)

        async def serve(sock: socket.socket) -> None:
            self.servers.append(await loop.create_server(self.factory, sock=sock, backlog=backlog, ssl=self.ssl))

        for sock in sockets:
            loop.create_task(serve(sock))

    def _adopt(self, addrs: list[str], port: int, sockets: list[socket.socket]) -> None:
        self.port = port
        bound = {sock.getsockname()[0] for sock in sockets}
        self.binds = [a.lstrip("-") for a in addrs if not a.startswith("-") or a.lstrip("-") in bound]

    def close(self) -> list[Any]:
        """Stop listening; returns the closed servers, for wait_closed."""
        closed = self.servers
        for srv in closed:
            srv.close()
        self.servers = []
        self.port = 0
        self.binds = []
        return closed


async def wait_closed(servers: list[Any]) -> None:
    for srv in servers:
        try:
            await asyncio.wait_for(srv.wait_closed(), timeout=2)
        except Exception:
            pass
