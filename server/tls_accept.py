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

# One read buffer for every TLS connection (the server is one thread; a read's bytes are copied
# out before the next read).
_READ_SIZE = 64 * 1024
_READ_BUFFER = bytearray(_READ_SIZE)
_READ_VIEW = memoryview(_READ_BUFFER)


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
        self._read_into: Any = sslobj.read
        self.write = sslobj.write
        self.pending = sslobj.pending
        self.unwrap = sslobj.unwrap
        self.getpeercert = sslobj.getpeercert
        self.cipher = sslobj.cipher
        self.version = sslobj.version

    def read(self, size: int = 1024, buffer: Any = None) -> Any:
        """Decrypted bytes, read through one buffer of the process. The TLS layer asks for up
        to 256 KB at a time; read straight into a new bytes object, each call would allocate
        (and with glibc's mmap threshold at 256 KB, see server/cli.py, map and unmap) that much
        for the few bytes of a command: that cost 4x the server CPU of a plain XADD."""
        if buffer is not None:
            return self._read_into(size, buffer)
        n = self._read_into(min(size, _READ_SIZE), _READ_BUFFER)
        return _READ_VIEW[:n].tobytes()

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
