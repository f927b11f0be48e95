"""Container health check: send a real PING over RESP and expect +PONG.

Reads RIVULET_PORT (default 6379) and, when the server has a password, RIVULET_PASSWORD, and sends
AUTH first. Without a password to send, a -NOAUTH reply still proves the server answers commands.
Exit 0 healthy, 1 unhealthy (Docker's HEALTHCHECK contract). Standard library only.
"""

import os
import socket
import sys


def bulk(*args: str) -> bytes:
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        data = a.encode()
        out.append(b"$%d\r\n%s\r\n" % (len(data), data))
    return b"".join(out)


def main() -> int:
    port = int(os.environ.get("RIVULET_PORT", "6379"))
    password = os.environ.get("RIVULET_PASSWORD", "")
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=3) as sock:
            request = (bulk("AUTH", password) if password else b"") + bulk("PING")
            sock.sendall(request)
            data = b""
            want = 2 if password else 1
            while data.count(b"\r\n") < want:
                chunk = sock.recv(4096)
                if not chunk:
                    break
                data += chunk
    except OSError as exc:
        print(f"unhealthy: {exc}")
        return 1
    replies = data.split(b"\r\n")
    last = replies[want - 1] if len(replies) >= want else b""
    if last == b"+PONG" or (not password and last.startswith(b"-NOAUTH")):
        print(last.decode(errors="replace"))
        return 0
    print(f"unhealthy: {data[:200]!r}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
