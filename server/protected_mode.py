"""Protected mode (`protected-mode yes`, the default): while the default user has no password,
only clients connecting from the loopback interface are served; any other gets Redis's
explanation and is disconnected."""

from __future__ import annotations

PROTECTED_MODE_ERROR = (
    b"-DENIED Redis is running in protected mode because protected "
    b"mode is enabled and no password is set for the default user. "
    b"In this mode connections are only accepted from the loopback interface. "
    b"If you want to connect from external computers to Redis you "
    b"may adopt one of the following solutions: "
    b"1) Just disable protected mode sending the command "
    b"'CONFIG SET protected-mode no' from the loopback interface "
    b"by connecting to Redis from the same host the server is "
    b"running, however MAKE SURE Redis is not publicly accessible "
    b"from internet if you do so. Use CONFIG REWRITE to make this "
    b"change permanent. "
    b"2) Alternatively you can just disable the protected mode by "
    b"editing the Redis configuration file, and setting the protected "
    b"mode option to 'no', and then restarting the server. "
    b"3) If you started the server manually just for testing, restart "
    b"it with the '--protected-mode no' option. "
    b"4) Set up an authentication password for the default user. "
    b"NOTE: You only need to do one of the above things in order for "
    b"the server to start accepting connections from the outside.\r\n"
)


def is_loopback(peer: object) -> bool:
    """Redis's test of a peer address: 127.* or ::1 (an IPv4-mapped IPv6 address is not)."""
    if not isinstance(peer, tuple) or not peer:
        return False
    host = peer[0]
    return isinstance(host, str) and (host.startswith("127.") or host == "::1")
