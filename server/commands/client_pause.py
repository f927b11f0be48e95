"""CLIENT PAUSE timeout [WRITE|ALL] and CLIENT UNPAUSE: pause clients' commands for a while
(server/write_pause.py), with Redis 7.4's checks, their order and texts."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from protocol.reply import OK, ErrorReply
from server.command_table import command
from server.commands.block_timeout import parse_timeout_ms
from server.subcommands import subcommand_syntax_error
from server.write_pause import CLIENT_PAUSE

if TYPE_CHECKING:
    from server.connection import Client

_MODE_ERROR = ErrorReply("ERR CLIENT PAUSE mode must be WRITE or ALL")


@command("client|pause", -3, "admin noscript loading stale sentinel", group="connection",
         since="3.0.0", summary="Suspends commands processing.", complexity="O(1)",
         acl=("@connection",),
         history=(("6.2.0", "`CLIENT PAUSE WRITE` mode added along with the `mode` option."),),
         arguments=({"name": "timeout", "type": "integer"},
                    {"name": "mode", "type": "oneof", "optional": True, "since": "6.2.0",
                     "arguments": ({"name": "write", "type": "pure-token", "token": "WRITE"},
                                   {"name": "all", "type": "pure-token", "token": "ALL"})}))
def client_pause(client: Client, argv: list[bytes]) -> Any:
    if len(argv) > 4:
        return subcommand_syntax_error(argv)
    pause_all = True
    if len(argv) == 4:
        mode = argv[3].lower()
        if mode == b"write":
            pause_all = False
        elif mode != b"all":
            return _MODE_ERROR
    timeout = parse_timeout_ms(argv[2])
    # 0 ends at once: as in Redis, it only changes what a pause still running holds back.
    end = time.monotonic() + timeout / 1000 if timeout else 0.0
    client.server.write_pause.pause_by_client(end, pause_all)
    return OK


@command("client|unpause", 2, "admin noscript loading stale sentinel", group="connection",
         since="6.2.0", summary="Resumes processing commands from paused clients.",
         complexity="O(N) Where N is the number of paused clients", acl=("@connection",))
def client_unpause(client: Client, argv: list[bytes]) -> Any:
    client.server.write_pause.unpause(CLIENT_PAUSE)
    return OK
