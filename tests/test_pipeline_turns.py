"""A long pipeline takes turns with the other clients, and its replies leave as it runs.

The event loop would read a socket that keeps filling its buffer up to 32 times in a row before
serving anything else: megabytes of one client's pipeline, run before another client's request
is even read and before the first of its own replies is sent. The server reads a large pipeline
once per loop iteration instead, as Redis reads each client once per iteration.
"""

from __future__ import annotations

import threading

import redis

from tests.helpers import encode_command
from tests.serverproc import RawConnection


def test_another_client_is_served_while_a_long_pipeline_runs(server) -> None:
    r = redis.Redis(port=server.port)
    r.delete("turns")
    n = 260_000  # about 6 MB: under what the loop would read in one go
    pipeline = encode_command("INCR", "turns") * n
    expected = sum(len(b":%d\r\n" % i) for i in range(1, n + 1))
    conn = RawConnection(server.port, timeout=60)
    sender = threading.Thread(target=conn.send, args=(pipeline,))
    try:
        sender.start()
        first = conn.read_exactly(1)  # the first replies arrive while the pipeline runs
        seen = int(r.get("turns") or 0)
        rest = conn.read_exactly(expected - 1)
    finally:
        sender.join()
        conn.close()
    assert first == b":" and rest.endswith(b":%d\r\n" % n)
    # The GET was read between two reads of the pipeline, not after all of it.
    assert 0 < seen < n, seen
    assert int(r.get("turns")) == n
    r.close()
