"""The few OpenSSL context settings Redis uses that Python's ssl module has no API for: the
TLS 1.3 ciphersuites (`tls-ciphersuites`) and the server session cache (`tls-session-caching`,
`-size`, `-timeout`).

They are set on the SSL_CTX behind an ssl.SSLContext through the OpenSSL library the ssl module
is linked with, found from its extension module. The SSL_CTX pointer is the first field of
CPython's SSLContext object; before it is used, the options OpenSSL reports for it must equal
the context's own, else (another layout, a statically linked OpenSSL) nothing is touched:
tls-ciphersuites is then refused with Redis's error, the session cache keeps OpenSSL's defaults.
"""

from __future__ import annotations

import ctypes
import logging
import ssl
from typing import Any

log = logging.getLogger("rivulet")

_SSL_CTRL_SET_SESS_CACHE_SIZE = 42
_SSL_CTRL_SET_SESS_CACHE_MODE = 44
_SSL_SESS_CACHE_OFF = 0
_SSL_SESS_CACHE_SERVER = 2

_lib: Any = None
_loaded = False


def _library() -> Any:
    global _lib, _loaded
    if _loaded:
        return _lib
    _loaded = True
    try:
        import _ssl

        lib = ctypes.CDLL(_ssl.__file__)  # its symbols and those of the libssl it links
        lib.SSL_CTX_get_options.argtypes = [ctypes.c_void_p]
        lib.SSL_CTX_get_options.restype = ctypes.c_uint64
        lib.SSL_CTX_set_ciphersuites.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
        lib.SSL_CTX_set_ciphersuites.restype = ctypes.c_int
        lib.SSL_CTX_ctrl.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_long, ctypes.c_void_p]
        lib.SSL_CTX_ctrl.restype = ctypes.c_long
        lib.SSL_CTX_set_timeout.argtypes = [ctypes.c_void_p, ctypes.c_long]
        lib.SSL_CTX_set_timeout.restype = ctypes.c_long
        lib.SSL_CTX_set_session_id_context.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_uint]
        lib.SSL_CTX_set_session_id_context.restype = ctypes.c_int
        _lib = lib
    except (ImportError, OSError, AttributeError):
        log.warning("OpenSSL's library is not reachable from Python's ssl module: "
                    "tls-ciphersuites cannot be set and the TLS session cache keeps its defaults")
    return _lib


def _ssl_ctx(ctx: ssl.SSLContext) -> int | None:
    lib = _library()
    if lib is None:
        return None
    pointer = ctypes.c_void_p.from_address(id(ctx) + object.__basicsize__).value
    if not pointer or lib.SSL_CTX_get_options(pointer) != ctx.options & (2**64 - 1):
        log.warning("Python's SSLContext layout is not the expected one: "
                    "tls-ciphersuites cannot be set and the TLS session cache keeps its defaults")
        return None
    return pointer


def available() -> bool:
    return _ssl_ctx(ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)) is not None


def set_ciphersuites(ctx: ssl.SSLContext, suites: str) -> bool:
    """OpenSSL's SSL_CTX_set_ciphersuites: False when it refuses the list (or cannot be called)."""
    pointer = _ssl_ctx(ctx)
    if pointer is None:
        return False
    return bool(_lib.SSL_CTX_set_ciphersuites(pointer, suites.encode()))


def set_session_cache(ctx: ssl.SSLContext, enabled: bool, size: int, timeout: int) -> None:
    """Redis's server session cache set-up: on with its size, timeout and "redis" as the session
    ID context, or off."""
    pointer = _ssl_ctx(ctx)
    if pointer is None:
        return
    if enabled:
        _lib.SSL_CTX_ctrl(pointer, _SSL_CTRL_SET_SESS_CACHE_MODE, _SSL_SESS_CACHE_SERVER, None)
        _lib.SSL_CTX_ctrl(pointer, _SSL_CTRL_SET_SESS_CACHE_SIZE, size, None)
        _lib.SSL_CTX_set_timeout(pointer, timeout)
        _lib.SSL_CTX_set_session_id_context(pointer, b"redis", 5)
    else:
        _lib.SSL_CTX_ctrl(pointer, _SSL_CTRL_SET_SESS_CACHE_MODE, _SSL_SESS_CACHE_OFF, None)
