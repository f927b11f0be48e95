"""TLS contexts from the tls-* settings, built with Python's ssl module the way Redis's tls.c
builds its OpenSSL contexts, and replaced as a whole when the settings change.

A configuration is applied all or nothing: every context is built (every file read) before any
replaces the running ones, so a bad certificate or key given to CONFIG SET answers an error and
the server keeps the contexts it had. New connections take the current context; connections
already open keep the one they were accepted with.

`tls-auth-clients` is read when a connection is accepted, as in Redis, so the server holds one
context per mode (no / yes / optional), all from the same files.

For outgoing connections (the replica link), `client_context(config)` returns the client-side
context Redis uses: `tls-client-cert-file` / `tls-client-key-file` when both are set, otherwise
the server's own certificate; the peer's certificate is verified against `tls-ca-cert-file` /
`tls-ca-cert-dir`, without a host name check (Redis does none).
"""

from __future__ import annotations

import logging
import ssl
import warnings
from typing import Any, Protocol

from server import openssl_extras

log = logging.getLogger("rivulet")

# Every setting a context is built from; a change to any of them rebuilds the contexts.
CONTEXT_SETTINGS = (
    "tls-cert-file", "tls-key-file", "tls-key-file-pass", "tls-client-cert-file",
    "tls-client-key-file", "tls-client-key-file-pass", "tls-dh-params-file", "tls-ca-cert-file",
    "tls-ca-cert-dir", "tls-protocols", "tls-ciphers", "tls-ciphersuites",
    "tls-prefer-server-ciphers", "tls-session-caching", "tls-session-cache-size",
    "tls-session-cache-timeout", "tls-replication", "tls-cluster",
)

APPLY_ERROR = "Unable to update TLS configuration. Check server logs."

_VERIFY = {"no": ssl.CERT_NONE, "yes": ssl.CERT_REQUIRED, "optional": ssl.CERT_OPTIONAL}

# tls-protocols words (case-insensitive), in order.
_PROTOCOLS = {
    "tlsv1": ssl.TLSVersion.TLSv1, "tlsv1.1": ssl.TLSVersion.TLSv1_1,
    "tlsv1.2": ssl.TLSVersion.TLSv1_2, "tlsv1.3": ssl.TLSVersion.TLSv1_3,
}
_NO_FLAG = {
    ssl.TLSVersion.TLSv1: ssl.OP_NO_TLSv1, ssl.TLSVersion.TLSv1_1: ssl.OP_NO_TLSv1_1,
    ssl.TLSVersion.TLSv1_2: ssl.OP_NO_TLSv1_2, ssl.TLSVersion.TLSv1_3: ssl.OP_NO_TLSv1_3,
}
_DEFAULT_PROTOCOLS = (ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3)


class Settings(Protocol):
    """The configuration (server.config.Config) or any mapping of setting names to values."""

    def __getitem__(self, name: str, /) -> Any: ...


class TLSConfigError(Exception):
    """A TLS setting that cannot be applied; str() is the line Redis logs about it."""


def tls_wanted(config: Settings) -> bool:
    """Whether Redis would configure TLS at all (and so check its settings)."""
    return bool(config["tls-port"] or config["tls-replication"] or config["tls-cluster"])


def parse_protocols(text: str) -> tuple[ssl.TLSVersion, ...]:
    if not text:
        return _DEFAULT_PROTOCOLS
    chosen = set()
    for word in text.split(" "):
        version = _PROTOCOLS.get(word.lower())
        if version is None:
            raise TLSConfigError("Invalid tls-protocols specified. "
                                 "Use a combination of 'TLSv1', 'TLSv1.1', 'TLSv1.2' and 'TLSv1.3'.")
        chosen.add(version)
    return tuple(sorted(chosen))


def _why(exc: Exception) -> str:
    if isinstance(exc, ssl.SSLError):
        return exc.reason or str(exc)
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc)


def _password(text: str) -> Any:
    # Without a passphrase an encrypted key must fail, not make OpenSSL prompt on the terminal.
    return lambda: text.encode()


def _set_protocols(ctx: ssl.SSLContext, protocols: tuple[ssl.TLSVersion, ...]) -> None:
    with warnings.catch_warnings():  # TLSv1 / TLSv1.1 and the OP_NO_* flags are deprecated
        warnings.simplefilter("ignore", DeprecationWarning)
        ctx.minimum_version = protocols[0]
        ctx.maximum_version = protocols[-1]
        for version, flag in _NO_FLAG.items():  # a gap in the list ("TLSv1 TLSv1.3")
            if protocols[0] < version < protocols[-1] and version not in protocols:
                ctx.options |= flag


def _base_context(config: Settings, protocols: tuple[ssl.TLSVersion, ...],
                  client: bool, server_cert: bool = False) -> ssl.SSLContext:
    """What both sides share (Redis's createSSLContext): protocols, certificate and key, CA,
    ciphers; peers are verified unless a server context says otherwise. A client context
    presents tls-client-cert-file, or with `server_cert` the server's own certificate."""
    prefix = "tls-client-" if client and not server_cert else "tls-"
    cert_file, key_file = config[prefix + "cert-file"], config[prefix + "key-file"]
    key_pass = config[prefix + "key-file-pass"]
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT if client else ssl.PROTOCOL_TLS_SERVER)
    if client:
        ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_REQUIRED
    _set_protocols(ctx, protocols)
    ctx.options |= ssl.OP_NO_COMPRESSION
    # The certificate file alone first, so that a bad one is reported as such (Python loads
    # certificate and key in one call).
    try:
        ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER).load_verify_locations(cafile=cert_file)
    except (OSError, ValueError) as exc:
        raise TLSConfigError(f"Failed to load certificate: {cert_file}: {_why(exc)}") from None
    try:
        ctx.load_cert_chain(cert_file, key_file, password=_password(key_pass))
    except (OSError, ValueError) as exc:
        raise TLSConfigError(f"Failed to load private key: {key_file}: {_why(exc)}") from None
    ca_file, ca_dir = config["tls-ca-cert-file"], config["tls-ca-cert-dir"]
    if ca_file or ca_dir:
        try:
            ctx.load_verify_locations(cafile=ca_file or None, capath=ca_dir or None)
        except (OSError, ValueError) as exc:
            raise TLSConfigError(
                f"Failed to configure CA certificate(s) file/directory: {_why(exc)}") from None
    # OpenSSL's default list when none is given, as Redis gets (Python's own is narrower).
    ciphers = config["tls-ciphers"]
    try:
        ctx.set_ciphers(ciphers or "DEFAULT")
    except ssl.SSLError:
        raise TLSConfigError(f"Failed to configure ciphers: {ciphers}") from None
    suites = config["tls-ciphersuites"]
    if suites and not openssl_extras.set_ciphersuites(ctx, suites):
        raise TLSConfigError(f"Failed to configure ciphersuites: {suites}")
    return ctx


def _server_context(config: Settings, protocols: tuple[ssl.TLSVersion, ...],
                    verify: ssl.VerifyMode) -> ssl.SSLContext:
    ctx = _base_context(config, protocols, client=False)
    ctx.verify_mode = verify
    openssl_extras.set_session_cache(ctx, config["tls-session-caching"],
                                     config["tls-session-cache-size"],
                                     config["tls-session-cache-timeout"])
    ctx.options |= ssl.OP_NO_RENEGOTIATION
    if config["tls-prefer-server-ciphers"]:
        ctx.options |= ssl.OP_CIPHER_SERVER_PREFERENCE
    else:
        ctx.options &= ~ssl.OP_CIPHER_SERVER_PREFERENCE
    ctx.options |= ssl.OP_SINGLE_DH_USE
    dh_file = config["tls-dh-params-file"]
    if dh_file:
        try:
            ctx.load_dh_params(dh_file)
        except ssl.SSLError:
            raise TLSConfigError(f"{dh_file}: failed to read DH params.") from None
        except OSError as exc:
            raise TLSConfigError(f"Failed to load {dh_file}: {_why(exc)}") from None
    return ctx


def build_contexts(config: Settings) -> tuple[dict[str, ssl.SSLContext], ssl.SSLContext]:
    """The server contexts by tls-auth-clients mode, and the client context for outgoing
    connections: Redis's tlsConfigure. Raises TLSConfigError."""
    if not config["tls-cert-file"]:
        raise TLSConfigError("No tls-cert-file configured!")
    if not config["tls-key-file"]:
        raise TLSConfigError("No tls-key-file configured!")
    if ((config["tls-auth-clients"] != "no" or config["tls-cluster"] or config["tls-replication"])
            and not config["tls-ca-cert-file"] and not config["tls-ca-cert-dir"]):
        raise TLSConfigError("Either tls-ca-cert-file or tls-ca-cert-dir must be specified when "
                             "tls-cluster, tls-replication or tls-auth-clients are enabled!")
    protocols = parse_protocols(config["tls-protocols"])
    servers = {mode: _server_context(config, protocols, verify) for mode, verify in _VERIFY.items()}
    # As Redis: without a client certificate of its own, the server's is presented.
    server_cert = not (config["tls-client-cert-file"] and config["tls-client-key-file"])
    client = _base_context(config, protocols, client=True, server_cert=server_cert)
    return servers, client


def client_context(config: Settings) -> ssl.SSLContext:
    """The context for an outgoing TLS connection (the replica link under tls-replication yes),
    built from `config` with the server's own checks:
    `loop.create_connection(..., ssl=client_context(config), server_hostname=host)`.
    A running server's current one is `server.tls.client`. Raises TLSConfigError, whose text
    says what is wrong."""
    return build_contexts(config)[1]


class TLSContexts:
    """The server's current TLS contexts, replaced whole by `configure`."""

    def __init__(self) -> None:
        self.servers: dict[str, ssl.SSLContext] = {}
        # For outgoing connections (see client_context); None until TLS is configured.
        self.client: ssl.SSLContext | None = None
        self._built_from: tuple[Any, ...] | None = None

    @property
    def configured(self) -> bool:
        return bool(self.servers)

    def configure(self, config: Settings, reconfigure: bool = True) -> None:
        """Build every context from `config` and swap them in, or raise TLSConfigError (logged
        here, as Redis logs it) and keep the current ones. Without `reconfigure`, contexts that
        exist already are kept (Redis's first configuration, when tls-port is set)."""
        if not reconfigure and self.configured:
            return
        snapshot = tuple(config[name] for name in CONTEXT_SETTINGS) + (config["tls-auth-clients"],)
        if snapshot == self._built_from:
            return  # putting back the settings the current contexts came from
        try:
            servers, client = build_contexts(config)
        except TLSConfigError as exc:
            log.warning("%s", exc)
            raise
        self.servers, self.client, self._built_from = servers, client, snapshot

    def server_context(self, auth_clients: str) -> ssl.SSLContext:
        # Anything but no/optional verifies, as Redis falls back to "yes" (fail secure).
        return self.servers.get(auth_clients) or self.servers["yes"]
