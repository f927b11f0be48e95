"""The blocking list commands: BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP.

With an element to take they behave as their non-blocking forms and propagate as them (BLPOP as
LPOP key, BLMPOP as LPOP/RPOP key n, BLMOVE as LMOVE, BRPOPLPUSH as RPOPLPUSH). Otherwise they
park the client on their keys (server/blocking.py); a push that creates one of the keys makes the
blocking manager re-run the command, first waiter first, so one pushed element goes to the
client that waited longest. A key that holds another type when it is served does not wake a
list waiter. Inside MULTI nothing waits: the command answers at once as on timeout, except that
BLMOVE and BRPOPLPUSH answer a null bulk there, as Redis does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lists import List
from protocol.reply import NULL_ARRAY
from server.blocking import Block
from server.command_table import command, key_spec
from server.commands.block_timeout import parse_timeout_seconds
from server.commands.lists import (
    MOVE_KEY_SPECS,
    MPOP_COMPLEXITY,
    SRC_DST,
    WHERE,
    WHEREFROM,
    WHERETO,
    get_list,
    list_position,
    move,
    mpop,
    mpop_keys,
    parse_mpop,
    removed_from,
)

if TYPE_CHECKING:
    from server.connection import Client

_TIMEOUT = {"name": "timeout", "type": "double"}
_TIMEOUT_HISTORY = (("6.0.0", "`timeout` is interpreted as a double instead of an integer."),)


def _in_transaction(client: Client) -> bool:
    return client.in_exec or client.multi is not None


def _bpop(client: Client, argv: list[bytes], head: bool) -> Any:
    timeout = parse_timeout_seconds(argv[-1])
    keys = argv[1:-1]
    db = client.db
    for key in keys:
        lst = get_list(db, key)
        if lst is None or not lst.length:
            continue
        x = lst.pop_head() if head else lst.pop_tail()
        removed_from(client, key, lst, b"lpop" if head else b"rpop")
        client.propagate([b"LPOP" if head else b"RPOP", key])
        return [key, x]
    return Block(keys, timeout, NULL_ARRAY, None, List)


_BPOP_SPEC = key_spec(("RW", "ACCESS", "DELETE"), last=-2)
_BPOP_ARGS = ({"name": "key", "type": "key", "key_spec_index": 0, "multiple": True}, _TIMEOUT)


@command("blpop", -3, "write blocking", keys=(1, -2, 1), group="list", since="2.0.0",
         summary="Removes and returns the first element in a list. Blocks until an element is "
         "available otherwise. Deletes the list if the last element was popped.",
         complexity="O(N) where N is the number of provided keys.", key_specs=_BPOP_SPEC,
         arguments=_BPOP_ARGS, history=_TIMEOUT_HISTORY)
def blpop(client: Client, argv: list[bytes]) -> Any:
    return _bpop(client, argv, True)


@command("brpop", -3, "write blocking", keys=(1, -2, 1), group="list", since="2.0.0",
         summary="Removes and returns the last element in a list. Blocks until an element is "
         "available otherwise. Deletes the list if the last element was popped.",
         complexity="O(N) where N is the number of provided keys.", key_specs=_BPOP_SPEC,
         arguments=_BPOP_ARGS, history=_TIMEOUT_HISTORY)
def brpop(client: Client, argv: list[bytes]) -> Any:
    return _bpop(client, argv, False)


def _bmove(client: Client, argv: list[bytes], from_head: bool, to_head: bool, timeout: int,
           propagate: list[bytes]) -> Any:
    src = argv[1]
    if get_list(client.db, src) is None:
        if _in_transaction(client):
            return None
        return Block([src], timeout, NULL_ARRAY, None, List)
    return move(client, src, argv[2], from_head, to_head, propagate)


@command("blmove", 6, "write denyoom blocking", keys=(1, 2, 1), group="list", since="6.2.0",
         summary="Pops an element from a list, pushes it to another list and returns it. Blocks "
         "until an element is available otherwise. Deletes the list if the last element was "
         "moved.", key_specs=MOVE_KEY_SPECS, arguments=(*SRC_DST, WHEREFROM, WHERETO, _TIMEOUT))
def blmove(client: Client, argv: list[bytes]) -> Any:
    from_head = list_position(argv[3])
    to_head = list_position(argv[4])
    timeout = parse_timeout_seconds(argv[5])
    return _bmove(client, argv, from_head, to_head, timeout,
                  [b"LMOVE", argv[1], argv[2], argv[3], argv[4]])


@command("brpoplpush", 4, "write denyoom blocking", keys=(1, 2, 1), group="list",
         since="2.2.0",
         summary="Pops an element from a list, pushes it to another list and returns it. Block "
         "until an element is available otherwise. Deletes the list if the last element was "
         "popped.", key_specs=MOVE_KEY_SPECS, arguments=(*SRC_DST, _TIMEOUT),
         history=_TIMEOUT_HISTORY, doc_flags=("deprecated",))
def brpoplpush(client: Client, argv: list[bytes]) -> Any:
    timeout = parse_timeout_seconds(argv[3])
    return _bmove(client, argv, False, True, timeout, [b"RPOPLPUSH", argv[1], argv[2]])


@command("blmpop", -5, "write blocking", group="list", since="7.0.0",
         summary="Pops the first element from one of multiple lists. Blocks until an element is "
         "available otherwise. Deletes the list if the last element was popped.",
         complexity=MPOP_COMPLEXITY, key_finder=lambda argv: mpop_keys(argv, 2),
         key_specs=({"flags": ("RW", "ACCESS", "DELETE"), "begin_search": {"index": {"pos": 2}},
                     "find_keys": {"keynum": {"keynumidx": 0, "firstkey": 1, "step": 1}}},),
         arguments=(_TIMEOUT, {"name": "numkeys", "type": "integer"},
                    {"name": "key", "type": "key", "key_spec_index": 0, "multiple": True}, WHERE,
                    {"token": "COUNT", "name": "count", "type": "integer", "optional": True}))
def blmpop(client: Client, argv: list[bytes]) -> Any:
    keys, head, count = parse_mpop(argv, 2)
    timeout = parse_timeout_seconds(argv[1])
    reply = mpop(client, keys, head, count)
    if reply is not None:
        return reply
    return Block(keys, timeout, NULL_ARRAY, None, List)
