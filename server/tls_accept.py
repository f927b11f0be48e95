"""The TLS listener's SSL context: every new connection takes the server's current context.

The listener is an ordinary `create_server(..., ssl=...)` (asyncio's or uvloop's TLS layer, the
same Client protocol as the plain listener). Its context stays for the listener's life, but it
only hands each connection over: `wrap_bio`, which the TLS layer calls once per accepted
connection, wraps it with the context current at that moment, chosen by tls-auth-clients. So a
certificate reloaded by CONFIG SET, or a new tls-auth-clients, applies to the next connection
without re-creating the listener, and connections already open keep theirs.
"""

from __future__ import annotations

import logging
import ssl
from collections.abc import Callable
from typing import Any

log = logging.getLogger("rivulet")


class ListenerContext(ssl.SSLContext):
    """An SSLContext that wraps each connection with `pick()`'s context."""

    pick: Callable[[], ssl.SSLContext]

    def __new__(cls, pick: Callable[[], ssl.SSLContext]) -> ListenerContext:
        self = super().__new__(cls, ssl.PROTOCOL_TLS_SERVER)
        self.pick = pick
        return self

    def __init__(self, pick: Callable[[], ssl.SSLContext]) -> None:
        pass  # all done in __new__ (SSLContext takes its protocol there)

    def wrap_bio(self, incoming: ssl.MemoryBIO, outgoing: ssl.MemoryBIO, server_side: bool = False,
                 server_hostname: Any = None, session: Any = None) -> Any:
        sslobj = self.pick().wrap_bio(incoming, outgoing, server_side=server_side,
                                      server_hostname=server_hostname, session=session)
        return _Accepting(sslobj)


class _Accepting:
    """The connection's SSLObject, logging a failed handshake as Redis does (the TLS layer
    only closes the connection). Everything else goes to the SSLObject itself: the methods
    the TLS layer calls are copied once, so reads and writes cost no extra lookup."""

    def __init__(self, sslobj: ssl.SSLObject) -> None:
        self._sslobj = sslobj
        self.read = sslobj.read
        self.write = sslobj.write
        self.pending = sslobj.pending
        self.unwrap = sslobj.unwrap
        self.getpeercert = sslobj.getpeercert
        self.cipher = sslobj.cipher
        self.version = sslobj.version

    def do_handshake(self) -> None:
        try:
            self._sslobj.do_handshake()
        except (ssl.SSLWantReadError, ssl.SSLWantWriteError):
            raise
        except (ssl.SSLError, OSError) as exc:
            reason = exc.reason if isinstance(exc, ssl.SSLError) and exc.reason else str(exc)
            log.warning("Error accepting a client connection: %s", reason)
            raise

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sslobj, name)
