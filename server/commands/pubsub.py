"""Pub/Sub commands: SUBSCRIBE, UNSUBSCRIBE, PSUBSCRIBE, PUNSUBSCRIBE, PUBLISH, SSUBSCRIBE,
SUNSUBSCRIBE, SPUBLISH and PUBSUB's introspection subcommands (Redis's src/pubsub.c).

The registry and delivery are server/pubsub.py; what a subscribed connection may run, and the
order of pushes against replies, is decided in server/dispatch.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from protocol.reply import ErrorReply
from server.command_table import command, container, key_spec
from server.glob import compile_glob
from server.subcommands import help_reply

if TYPE_CHECKING:
    from server.connection import Client

_FLAGS = "pubsub noscript loading stale sentinel"
_SHARD_KEYS = key_spec(("not_key",), 1, last=-1)


def _channels_arg(name: str, optional: bool) -> tuple[dict, ...]:
    arg: dict[str, Any] = {"name": name, "type": "pattern" if name == "pattern" else "string",
                           "multiple": True}
    if optional:
        arg["optional"] = True
    return (arg,)


@command("subscribe", -2, _FLAGS, group="pubsub", since="2.0.0",
         summary="Listens for messages published to channels.",
         complexity="O(N) where N is the number of channels to subscribe to.",
         arguments=_channels_arg("channel", False))
def subscribe(client: Client, argv: list[bytes]) -> Any:
    pubsub = client.server.pubsub
    if client.in_exec:
        # Its messages from here on wait for the end of the EXEC reply (see server/pubsub.py).
        pubsub.current = client
    return pubsub.subscribe(client, argv[1:])


@command("unsubscribe", -1, _FLAGS, group="pubsub", since="2.0.0",
         summary="Stops listening to messages posted to channels.",
         complexity="O(N) where N is the number of channels to unsubscribe.",
         arguments=_channels_arg("channel", True))
def unsubscribe(client: Client, argv: list[bytes]) -> Any:
    return client.server.pubsub.unsubscribe(client, argv[1:])


@command("psubscribe", -2, _FLAGS, group="pubsub", since="2.0.0",
         summary="Listens for messages published to channels that match one or more patterns.",
         complexity="O(N) where N is the number of patterns to subscribe to.",
         arguments=_channels_arg("pattern", False))
def psubscribe(client: Client, argv: list[bytes]) -> Any:
    pubsub = client.server.pubsub
    if client.in_exec:
        pubsub.current = client
    return pubsub.psubscribe(client, argv[1:])


@command("punsubscribe", -1, _FLAGS, group="pubsub", since="2.0.0",
         summary="Stops listening to messages published to channels that match one or more "
                 "patterns.",
         complexity="O(N) where N is the number of patterns to unsubscribe.",
         arguments=_channels_arg("pattern", True))
def punsubscribe(client: Client, argv: list[bytes]) -> Any:
    return client.server.pubsub.punsubscribe(client, argv[1:])


@command("publish", 3, "pubsub loading stale fast may_replicate sentinel", group="pubsub",
         since="2.0.0", summary="Posts a message to a channel.",
         complexity="O(N+M) where N is the number of clients subscribed to the receiving channel "
                    "and M is the total number of subscribed patterns (by any client).",
         arguments=({"name": "channel", "type": "string"}, {"name": "message", "type": "string"}))
def publish(client: Client, argv: list[bytes]) -> Any:
    # Redis propagates PUBLISH to replicas only, never to the AOF: nothing to log here.
    return client.server.pubsub.publish(argv[1], argv[2])


@command("ssubscribe", -2, "pubsub noscript loading stale", keys=(1, -1, 1), group="pubsub",
         since="7.0.0", summary="Listens for messages published to shard channels.",
         complexity="O(N) where N is the number of shard channels to subscribe to.",
         arguments=_channels_arg("shardchannel", False), key_specs=_SHARD_KEYS)
def ssubscribe(client: Client, argv: list[bytes]) -> Any:
    if client.in_exec:
        # Unlike SUBSCRIBE, no exception is made for transactions (pubsub.c ssubscribeCommand).
        return ErrorReply("ERR SSUBSCRIBE isn't allowed for a DENY BLOCKING client")
    return client.server.pubsub.subscribe(client, argv[1:], shard=True)


@command("sunsubscribe", -1, "pubsub noscript loading stale", keys=(1, -1, 1), group="pubsub",
         since="7.0.0", summary="Stops listening to messages posted to shard channels.",
         complexity="O(N) where N is the number of shard channels to unsubscribe.",
         arguments=_channels_arg("shardchannel", True), key_specs=_SHARD_KEYS)
def sunsubscribe(client: Client, argv: list[bytes]) -> Any:
    return client.server.pubsub.unsubscribe(client, argv[1:], shard=True)


@command("spublish", 3, "pubsub loading stale fast may_replicate", keys=(1, 1, 1),
         group="pubsub", since="7.0.0", summary="Post a message to a shard channel",
         complexity="O(N) where N is the number of clients subscribed to the receiving shard "
                    "channel.",
         arguments=({"name": "shardchannel", "type": "string"},
                    {"name": "message", "type": "string"}),
         key_specs=key_spec(("not_key",), 1))
def spublish(client: Client, argv: list[bytes]) -> Any:
    return client.server.pubsub.spublish(argv[1], argv[2])


# --- PUBSUB ------------------------------------------------------------------------------------

container("pubsub", group="pubsub", since="2.8.0", summary="A container for Pub/Sub commands.")

_INTROSPECTION = "pubsub loading stale"


def _matching(names: dict[bytes, Any], argv: list[bytes]) -> list[bytes]:
    if len(argv) > 3:
        raise _syntax_error(argv)
    if len(argv) == 2:
        return list(names)
    matcher = compile_glob(argv[2])
    return [name for name in names if matcher.match(name) is not None]


def _syntax_error(argv: list[bytes]) -> ErrorReply:
    # Redis's addReplySubcommandSyntaxError names the subcommand as the client spelled it.
    sub = argv[1].decode("utf-8", "replace")[:128]
    return ErrorReply(f"ERR unknown subcommand or wrong number of arguments for '{sub}'. "
                      "Try PUBSUB HELP.")


@command("pubsub|channels", -2, _INTROSPECTION, group="pubsub", since="2.8.0",
         summary="Returns the active channels.",
         complexity="O(N) where N is the number of active channels, and assuming constant time "
                    "pattern matching (relatively short channels and patterns)",
         arguments=({"name": "pattern", "type": "pattern", "optional": True},))
def pubsub_channels(client: Client, argv: list[bytes]) -> Any:
    return _matching(client.server.pubsub.channels, argv)


@command("pubsub|shardchannels", -2, _INTROSPECTION, group="pubsub", since="7.0.0",
         summary="Returns the active shard channels.",
         complexity="O(N) where N is the number of active shard channels, and assuming constant "
                    "time pattern matching (relatively short shard channels).",
         arguments=({"name": "pattern", "type": "pattern", "optional": True},))
def pubsub_shardchannels(client: Client, argv: list[bytes]) -> Any:
    return _matching(client.server.pubsub.shard_channels, argv)


@command("pubsub|numsub", -2, _INTROSPECTION, group="pubsub", since="2.8.0",
         summary="Returns a count of subscribers to channels.",
         complexity="O(N) for the NUMSUB subcommand, where N is the number of requested channels",
         arguments=({"name": "channel", "type": "string", "optional": True, "multiple": True},))
def pubsub_numsub(client: Client, argv: list[bytes]) -> Any:
    pubsub = client.server.pubsub
    out: list[Any] = []
    for channel in argv[2:]:
        out += (channel, pubsub.numsub(channel))
    return out


@command("pubsub|shardnumsub", -2, _INTROSPECTION, group="pubsub", since="7.0.0",
         summary="Returns the count of subscribers of shard channels.",
         complexity="O(N) for the SHARDNUMSUB subcommand, where N is the number of requested "
                    "shard channels",
         arguments=({"name": "shardchannel", "type": "string", "optional": True,
                     "multiple": True},))
def pubsub_shardnumsub(client: Client, argv: list[bytes]) -> Any:
    pubsub = client.server.pubsub
    out: list[Any] = []
    for channel in argv[2:]:
        out += (channel, pubsub.numsub(channel, shard=True))
    return out


@command("pubsub|numpat", 2, _INTROSPECTION, group="pubsub", since="2.8.0",
         summary="Returns a count of unique pattern subscriptions.")
def pubsub_numpat(client: Client, argv: list[bytes]) -> Any:
    return len(client.server.pubsub.patterns)


_HELP = [
    "CHANNELS [<pattern>]",
    "    Return the currently active channels matching a <pattern> (default: '*').",
    "NUMPAT",
    "    Return number of subscriptions to patterns.",
    "NUMSUB [<channel> ...]",
    "    Return the number of subscribers for the specified channels, excluding",
    "    pattern subscriptions(default: no channels).",
    "SHARDCHANNELS [<pattern>]",
    "    Return the currently active shard level channels matching a <pattern> (default: '*').",
    "SHARDNUMSUB [<shardchannel> ...]",
    "    Return the number of subscribers for the specified shard level channel(s)",
]


@command("pubsub|help", 2, "loading stale", group="pubsub", since="6.2.0",
         summary="Returns helpful text about the different subcommands.")
def pubsub_help(client: Client, argv: list[bytes]) -> Any:
    return help_reply("PUBSUB", _HELP)
