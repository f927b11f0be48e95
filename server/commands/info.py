"""INFO: the server's state in Redis's text format (sections are built in server/info.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from protocol.reply import Verbatim
from server.command_table import command
from server.info import generate_info

if TYPE_CHECKING:
    from server.connection import Client


@command("info", -1, "loading stale sentinel", group="server", since="1.0.0",
         summary="Returns information and statistics about the server.", acl=("@dangerous",),
         history=(("7.0.0", "Added support for taking multiple section arguments."),),
         tips=("nondeterministic_output", "request_policy:all_shards", "response_policy:special"),
         arguments=({"name": "section", "type": "string", "optional": True, "multiple": True},))
def info(client: Client, argv: list[bytes]) -> Any:
    sections = [arg.decode("utf-8", "replace") for arg in argv[1:]]
    # A verbatim string in RESP3 (redis-py and redis-cli expect "txt"), a bulk string in RESP2.
    return Verbatim(generate_info(client.server, sections).encode())
