"""Pub/Sub: the server's registry of channels, patterns and shard channels, and delivery.

One `PubSub` lives at `server.pubsub`. Each subscribed client holds its own side of the
subscriptions in `client.subs` (a `Subscriptions`, None for a client that never subscribed or
has nothing left), so that dispatch tells a subscribed client from any other with one field read.

A message is encoded once per protocol version and the same bytes object is appended to every
receiver's output, as any reply is: delivery never waits for a subscriber. A subscriber that
does not read is disconnected by the `pubsub` class of `client-output-buffer-limit`, checked
as each message is added to its output (server/connection.py output_added) and when it is
written.

Order of a push against the reply of the command that produced it (Redis 7.2+): a message to
the client that is running a command (a RESP3 client publishing to its own channel, a
keyspace event of its own write) leaves after that command's reply, and after the whole EXEC
reply inside a transaction; those messages wait in `Subscriptions.held`. The (un)subscribe
commands are the exception: their pushes are their reply.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from protocol.reply import PushReplies
from server.glob import compile_glob

if TYPE_CHECKING:
    from server.connection import Client


def _bulk(value: bytes) -> bytes:
    return b"$%d\r\n%b\r\n" % (len(value), value)


def _tail(channel: bytes, message: bytes) -> bytes:
    return b"$%d\r\n%b\r\n$%d\r\n%b\r\n" % (len(channel), channel, len(message), message)


class Subscriptions:
    """One client's subscriptions (insertion-ordered sets) and its held-back pushes."""

    __slots__ = ("channels", "patterns", "shard", "held")

    def __init__(self) -> None:
        self.channels: dict[bytes, None] = {}
        self.patterns: dict[bytes, None] = {}
        self.shard: dict[bytes, None] = {}
        # Pushes to be sent after the reply of the command this client is running.
        self.held: list[bytes] = []

    def count(self) -> int:
        """Channels + patterns: the number SUBSCRIBE / PSUBSCRIBE confirmations carry."""
        return len(self.channels) + len(self.patterns)

    def active(self) -> bool:
        """Whether the client is in Pub/Sub mode (Redis's CLIENT_PUBSUB, flag P)."""
        return bool(self.channels or self.patterns or self.shard)


class _PatternSubscribers:
    __slots__ = ("matcher", "clients")

    def __init__(self, pattern: bytes) -> None:
        self.matcher: re.Pattern[bytes] = compile_glob(pattern)
        self.clients: dict[Client, None] = {}


class PubSub:
    """The server's side: channel -> subscribers, pattern -> subscribers, shard channel ->
    subscribers. Entries with no subscriber left are removed, as in Redis."""

    def __init__(self) -> None:
        self.channels: dict[bytes, dict[Client, None]] = {}
        self.patterns: dict[bytes, _PatternSubscribers] = {}
        self.shard_channels: dict[bytes, dict[Client, None]] = {}
        # The subscribed client whose command is running (see the module docstring); set by
        # dispatch for subscribed clients only, so it may name a client whose command ended:
        # its held pushes then leave at its next write pass, in order.
        self.current: Client | None = None
        self.clients = 0  # clients in Pub/Sub mode (INFO pubsub_clients)

    # --- publishing -------------------------------------------------------------------------

    def publish(self, channel: bytes, message: bytes) -> int:
        """Send message to the subscribers of channel and of the patterns matching it; the number
        of messages sent (what PUBLISH replies)."""
        receivers = 0
        clients = self.channels.get(channel)
        tail = b""
        if clients is not None:
            tail = _tail(channel, message)
            self._send(clients, tail, b"*3\r\n$7\r\nmessage\r\n", b">3\r\n$7\r\nmessage\r\n")
            receivers = len(clients)
        if self.patterns:
            for pattern, subs in list(self.patterns.items()):
                if subs.matcher.match(channel) is None:
                    continue
                if not tail:
                    tail = _tail(channel, message)
                kind = b"$8\r\npmessage\r\n" + _bulk(pattern)
                self._send(subs.clients, tail, b"*4\r\n" + kind, b">4\r\n" + kind)
                receivers += len(subs.clients)
        return receivers

    def spublish(self, channel: bytes, message: bytes) -> int:
        """Send message to the subscribers of shard channel (patterns do not apply)."""
        clients = self.shard_channels.get(channel)
        if clients is None:
            return 0
        self._send(clients, _tail(channel, message), b"*3\r\n$8\r\nsmessage\r\n",
                   b">3\r\n$8\r\nsmessage\r\n")
        return len(clients)

    def _send(self, clients: dict[Client, None], tail: bytes, head2: bytes, head3: bytes) -> None:
        """Append the message (its RESP2 or RESP3 head, then tail) to each client's output; each
        encoding is built once, when a first client needs it."""
        current = self.current
        resp2 = resp3 = b""
        for client in clients:
            if client.closed:
                continue
            if client.resp3:
                if not resp3:
                    resp3 = head3 + tail
                data = resp3
            else:
                if not resp2:
                    resp2 = head2 + tail
                data = resp2
            subs = client.subs
            if client is current or (subs is not None and subs.held):
                assert subs is not None
                subs.held.append(data)
            else:
                client.out.append(data)
            client.pending_writes.add(client)
            # Held to its class's limit as the message is added, not only when written.
            client.output_added(len(data))

    # --- subscribing ------------------------------------------------------------------------

    def _subs(self, client: Client) -> Subscriptions:
        subs = client.subs
        if subs is None:
            subs = client.subs = Subscriptions()
        return subs

    def _mark(self, client: Client, was_active: bool) -> None:
        """Keep the Pub/Sub client count, and drop an empty Subscriptions, after a change."""
        subs = client.subs
        active = subs is not None and subs.active()
        if active and not was_active:
            self.clients += 1
        elif was_active and not active:
            self.clients -= 1
        if subs is not None and not active and not subs.held:
            client.subs = None

    def subscribe(self, client: Client, channels: list[bytes], shard: bool = False) -> PushReplies:
        """SUBSCRIBE / SSUBSCRIBE: one confirmation per channel, with the count after it."""
        subs = self._subs(client)
        was_active = subs.active()
        mine = subs.shard if shard else subs.channels
        registry = self.shard_channels if shard else self.channels
        kind = b"$10\r\nssubscribe\r\n" if shard else b"$9\r\nsubscribe\r\n"
        head = b">3\r\n" if client.resp3 else b"*3\r\n"
        out: list[bytes] = []
        for channel in channels:
            if channel not in mine:
                mine[channel] = None
                registry.setdefault(channel, {})[client] = None
            count = len(subs.shard) if shard else subs.count()
            out.append(head + kind + _bulk(channel) + b":%d\r\n" % count)
        self._mark(client, was_active)
        return PushReplies(b"".join(out))

    def psubscribe(self, client: Client, patterns: list[bytes]) -> PushReplies:
        subs = self._subs(client)
        was_active = subs.active()
        head = b">3\r\n" if client.resp3 else b"*3\r\n"
        out: list[bytes] = []
        for pattern in patterns:
            if pattern not in subs.patterns:
                subs.patterns[pattern] = None
                entry = self.patterns.get(pattern)
                if entry is None:
                    entry = self.patterns[pattern] = _PatternSubscribers(pattern)
                entry.clients[client] = None
            out.append(head + b"$10\r\npsubscribe\r\n" + _bulk(pattern) + b":%d\r\n" % subs.count())
        self._mark(client, was_active)
        return PushReplies(b"".join(out))

    def unsubscribe(self, client: Client, channels: list[bytes], shard: bool = False) -> PushReplies:
        """UNSUBSCRIBE / SUNSUBSCRIBE: the given channels, or all (then one confirmation with a
        null channel when there were none)."""
        subs = self._subs(client)
        was_active = subs.active()
        mine = subs.shard if shard else subs.channels
        kind = b"$12\r\nsunsubscribe\r\n" if shard else b"$11\r\nunsubscribe\r\n"
        head = b">3\r\n" if client.resp3 else b"*3\r\n"
        null = b"_\r\n" if client.resp3 else b"$-1\r\n"
        out: list[bytes] = []
        targets = channels if channels else list(mine)
        for channel in targets:
            self._drop_channel(client, channel, shard)
            count = len(subs.shard) if shard else subs.count()
            out.append(head + kind + _bulk(channel) + b":%d\r\n" % count)
        if not targets:
            count = len(subs.shard) if shard else subs.count()
            out.append(head + kind + null + b":%d\r\n" % count)
        self._mark(client, was_active)
        return PushReplies(b"".join(out))

    def punsubscribe(self, client: Client, patterns: list[bytes]) -> PushReplies:
        subs = self._subs(client)
        was_active = subs.active()
        head = b">3\r\n" if client.resp3 else b"*3\r\n"
        kind = b"$12\r\npunsubscribe\r\n"
        out: list[bytes] = []
        targets = patterns if patterns else list(subs.patterns)
        for pattern in targets:
            self._drop_pattern(client, pattern)
            out.append(head + kind + _bulk(pattern) + b":%d\r\n" % subs.count())
        if not targets:
            null = b"_\r\n" if client.resp3 else b"$-1\r\n"
            out.append(head + kind + null + b":%d\r\n" % subs.count())
        self._mark(client, was_active)
        return PushReplies(b"".join(out))

    def _drop_channel(self, client: Client, channel: bytes, shard: bool) -> None:
        subs = client.subs
        assert subs is not None
        mine = subs.shard if shard else subs.channels
        if channel not in mine:
            return
        del mine[channel]
        registry = self.shard_channels if shard else self.channels
        clients = registry[channel]
        del clients[client]
        if not clients:
            del registry[channel]

    def _drop_pattern(self, client: Client, pattern: bytes) -> None:
        subs = client.subs
        assert subs is not None
        if pattern not in subs.patterns:
            return
        del subs.patterns[pattern]
        entry = self.patterns[pattern]
        del entry.clients[client]
        if not entry.clients:
            del self.patterns[pattern]

    def drop_client(self, client: Client) -> None:
        """Forget every subscription of client, without confirmations (RESET, disconnect)."""
        subs = client.subs
        if subs is None:
            return
        was_active = subs.active()
        for channel in list(subs.channels):
            self._drop_channel(client, channel, False)
        for channel in list(subs.shard):
            self._drop_channel(client, channel, True)
        for pattern in list(subs.patterns):
            self._drop_pattern(client, pattern)
        self._mark(client, was_active)
        if client.closed:
            client.subs = None
        if self.current is client:
            self.current = None

    def release_held(self, client: Client) -> None:
        """Move the pushes held back during client's command into its output."""
        subs = client.subs
        if subs is None:
            return
        if subs.held:
            client.out.extend(subs.held)
            subs.held.clear()
        if not subs.active():
            client.subs = None

    # --- introspection ----------------------------------------------------------------------

    def numsub(self, channel: bytes, shard: bool = False) -> int:
        clients = (self.shard_channels if shard else self.channels).get(channel)
        return len(clients) if clients is not None else 0
