"""What commands made of subcommands (CLIENT, CONFIG, XGROUP, XINFO...) reply for HELP and for a
subcommand they do not know, in Redis's words."""

from __future__ import annotations

from protocol.reply import ErrorReply, SimpleString


def help_reply(name: str, lines: list[str]) -> list[SimpleString]:
    """Redis's HELP layout: a heading, the given lines, then HELP itself; all status replies."""
    out = [f"{name} <subcommand> [<arg> [value] [opt] ...]. Subcommands are:", *lines,
           "HELP", "    Print this help."]
    return [SimpleString(line.encode()) for line in out]


def subcommand_syntax_error(argv: list[bytes]) -> ErrorReply:
    """Redis's reply to an unknown subcommand of a command that parses its own subcommands."""
    sub = argv[1].decode("utf-8", "replace")[:128]
    return ErrorReply(f"ERR unknown subcommand or wrong number of arguments for '{sub}'. "
                      f"Try {argv[0].decode('utf-8', 'replace').upper()} HELP.")
