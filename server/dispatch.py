"""Command dispatch: table lookup, arity and auth checks, MULTI queueing, statistics.

Error texts are Redis's (server.c processCommand and friends), byte for byte.
"""

from __future__ import annotations

import logging
from time import perf_counter_ns
from typing import TYPE_CHECKING, Any, Final

from protocol.reply import QUEUED, ErrorReply
from server.blocking import BLOCKED, Block, internal_error
from server.command_table import COMMANDS, Command
from server.evict import before_command, run_may_start
from server.keyspace import TOUCH_LFU, TOUCH_LRU, TOUCH_NONE
from streams.errors import StreamError

if TYPE_CHECKING:
    from server.connection import Client

log = logging.getLogger("rivulet")

# Compiled, a Final module name is read from a C static, where any other global (a class of the
# uncompiled protocol.reply, a function of the time module) is a dict lookup at every use: the
# names every command passes are bound here once.
ERROR_REPLY: Final = ErrorReply
_clock: Final = perf_counter_ns

NOAUTH = ErrorReply("NOAUTH Authentication required.")
_QUEUED_REPLY: Final = b"+QUEUED\r\n"
# Redis's shared.roslaveerr and shared.masterdownerr.
READONLY = ErrorReply("READONLY You can't write against a read only replica.")
LOADING = ErrorReply("LOADING Redis is loading the dataset in memory")
MASTERDOWN = ErrorReply(
    "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.")
# Commands that run at once even inside MULTI (Redis: EXEC, DISCARD, MULTI, WATCH, QUIT, RESET).
_MULTI_IMMEDIATE = frozenset({"exec", "discard", "multi", "watch", "quit", "reset"})
# What a RESP2 client in Pub/Sub mode may run (server.c processCommand).
_PUBSUB_ALLOWED = frozenset({"ping", "subscribe", "ssubscribe", "unsubscribe", "sunsubscribe",
                             "psubscribe", "punsubscribe", "quit", "reset"})
# The commands whose reply is a push: messages to their client are not held back behind them.
PUSH_AS_REPLY = frozenset({"subscribe", "ssubscribe", "unsubscribe", "sunsubscribe",
                           "psubscribe", "punsubscribe"})


# Command names as clients spell them ("XADD", "xadd", "Xadd") -> Command: saves a lower() per call.
_BY_SPELLING: Final[dict[bytes, Command]] = {}


def _quote_args(argv: list[bytes]) -> str:
    # Redis shows at most ~128 characters of arguments, each quoted and followed by a space.
    args = ""
    for arg in argv:
        if len(args) >= 128:
            break
        args += "'" + arg.decode("utf-8", "replace")[: 128 - len(args)] + "' "
    return args


def _clean(text: bytes) -> str:
    return text.decode("utf-8", "replace").replace("\r", " ").replace("\n", " ")


def unknown_command(argv: list[bytes]) -> ErrorReply:
    return ErrorReply(
        f"ERR unknown command '{_clean(argv[0])[:128]}', with args beginning with: "
        f"{_quote_args(argv[1:])}"
    )


def spelled(name: bytes) -> Command | None:
    """The command (or container) a client's spelling of a command name names, or None."""
    cmd = _BY_SPELLING.get(name)
    if cmd is None:
        cmd = COMMANDS.get(name.lower())
        if cmd is not None and len(_BY_SPELLING) < 4096:
            _BY_SPELLING[name] = cmd
    return cmd


def lookup(argv: list[bytes], found: Command | None = None) -> Command | ErrorReply:
    """The command argv names, or the error Redis replies when it names none / has a bad arity.

    `found` is `spelled(argv[0])` when the caller has it already."""
    cmd = found if found is not None else spelled(argv[0])
    if cmd is None:
        return unknown_command(argv)
    # A container called alone is checked against its own arity: an error for CLIENT (-2),
    # the full listing for COMMAND (-1), as in Redis.
    if cmd.subcommands and len(argv) >= 2:
        sub = cmd.subcommands.get(argv[1].lower())
        if sub is None:
            return ErrorReply(
                f"ERR unknown subcommand '{_clean(argv[1])[:128]}'. Try {cmd.name.upper()} HELP."
            )
        cmd = sub
    arity = cmd.arity
    n = len(argv)
    if (arity > 0 and n != arity) or n < -arity:
        return ErrorReply(f"ERR wrong number of arguments for '{cmd.name}' command")
    return cmd


def execute(client: Client, argv: list[bytes], found: Command | None = None) -> Any:
    """Run one command for client and return its reply (or BLOCKED); `found` as for lookup."""
    cmd = lookup(argv, found)
    if not isinstance(cmd, Command):
        if client.multi is not None:
            client.multi_error = True
        found = COMMANDS.get(argv[0].lower())
        if found is not None:
            found.rejected_calls += 1
        return cmd
    if not client.authenticated and not cmd.no_auth:
        if client.multi is not None:
            client.multi_error = True
        cmd.rejected_calls += 1
        return NOAUTH
    # False for a user allowed everything (the default user unless changed): one field test.
    if client.acl_limited:
        refused = acl_refusal(client, cmd, argv)
        if refused is not None:
            if client.multi is not None:
                client.multi_error = True
            cmd.rejected_calls += 1
            return refused
    if client.keyspace.maxmemory:
        refused = before_command(client, cmd)
        if refused is not None:
            return refused
    if client.replica_checks:
        refused = _gate(client, cmd, argv)
        if refused is BLOCKED:
            return BLOCKED
        if refused is not None:
            if client.multi is not None:
                client.multi_error = True
            cmd.rejected_calls += 1
            return refused
    if client.subs is not None:
        refused = _pubsub_context(client, cmd)
        if refused is not None:
            return refused
    if client.multi is not None and cmd.name not in _MULTI_IMMEDIATE:
        if "no_multi" in cmd.flags:
            client.multi_error = True
            cmd.rejected_calls += 1
            return ErrorReply("ERR Command not allowed inside a transaction")
        client.multi.append(cmd, argv)
        # CLIENT LIST's cmd= names the command just queued, as Redis's lastcmd does.
        client.last_command = cmd
        return QUEUED
    # Effects are suspended exactly while a file loads (persistence sets both): a field of a
    # compiled class, read before the attribute of the (uncompiled) Server.
    if client.effects.suspended and client.server.loading and "loading" not in cmd.flags:
        cmd.rejected_calls += 1
        return ErrorReply("LOADING Redis is loading the dataset in memory")
    if cmd.is_write:
        write_error = client.server.write_error
        # (A replica applies its master's writes whatever its disk says, as Redis does with
        # repl-ignore-disk-write-errors.)
        if write_error is not None and not client.is_master:
            cmd.rejected_calls += 1
            return ErrorReply(write_error)
    return call(client, cmd, argv)


def acl_refusal(client: Client, cmd: Command, argv: list[bytes],
                exec_argv: list[bytes] | None = None) -> ErrorReply | None:
    """The NOPERM error when the client's user may not run argv (logged in ACL LOG), or None.

    `exec_argv`: EXEC's argv, for the check EXEC repeats for each queued command, with its own
    text (the log's client-info then shows EXEC running, the client still in MULTI)."""
    from server.acl.check import DENIED_CHANNEL, DENIED_CMD, DENIED_KEY, OK, check_command, error_message

    user = client.acl_user
    result, index = check_command(user, cmd, argv)
    if result == OK:
        return None
    # The refused command is the client's current one in ACL LOG's client-info (cmd=,
    # argv-mem=); inside EXEC that stays EXEC.
    in_exec = exec_argv is not None
    if not in_exec:
        client.last_command = cmd
    client.server.acl.log_denial(client, result,
                                 cmd.name.encode() if result == DENIED_CMD else argv[index],
                                 current_argv=exec_argv if in_exec else argv)
    if in_exec:
        reason = ("no permission to execute the command or subcommand" if result == DENIED_CMD
                  else "no permission to touch the specified keys" if result == DENIED_KEY
                  else "no permission to access one of the channels used as arguments"
                  if result == DENIED_CHANNEL else "no permission")
        return ErrorReply("NOPERM ACLs rules changed between the moment the transaction was "
                          "accumulated and the EXEC call. This command is no longer allowed for "
                          f"the following reason: {reason}")
    return ErrorReply("NOPERM " + error_message(result, user, cmd, argv[index], False))


def _gate(client: Client, cmd: Command, argv: list[bytes]) -> Any:
    """For clients (not a replica's master) of a replica, or while commands are paused: on a
    replica, writes refused under replica-read-only, and everything but `stale` commands while
    the link to the master is down under replica-serve-stale-data no; then the commands a pause
    holds back postponed (BLOCKED). Redis's processCommand, in its order."""
    server = client.server
    if server.replica_of is not None:
        link = server.master_link
        if cmd.is_write and link.read_only:
            return READONLY
        if link.refuse_stale and "stale" not in cmd.flags:
            return MASTERDOWN
        if server.async_loading and "no_async_loading" in cmd.flags:
            return LOADING
    pause = server.write_pause
    if pause.level and pause.stops(client, cmd):
        # The connections of our replicas are never paused (Redis's CLIENT_SLAVE test).
        replica = client.replica
        if replica is None or not replica.is_replica:
            return pause.postpone(client, cmd, argv)
    return None


def _pubsub_context(client: Client, cmd: Command) -> ErrorReply | None:
    """For a client with subscriptions: send the pushes held behind its previous command, hold
    those its new command produces, and refuse what RESP2 does not allow in Pub/Sub mode."""
    pubsub = client.server.pubsub
    subs = client.subs
    assert subs is not None
    if subs.held:
        pubsub.release_held(client)
    pubsub.current = None if cmd.name in PUSH_AS_REPLY else client
    if client.resp3 or cmd.name in _PUBSUB_ALLOWED or not subs.active():
        return None
    if client.multi is not None:
        client.multi_error = True
    cmd.rejected_calls += 1
    return ErrorReply(f"ERR Can't execute '{cmd.name}': only (P|S)SUBSCRIBE / "
                      "(P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context")


def execute_run(client: Client, cmd: Command, commands: list[list[bytes]], start: int) -> int:
    """Let cmd's run handler run consecutive calls from commands[start:]; how many it ran.

    0 whenever one call would not go straight to its handler (authentication, loading,
    refused writes, CLIENT NO-TOUCH, which `call` applies around each call): then each call
    takes `execute` and gets its own checks. Inside MULTI the calls are queued instead
    (`queue_run`); EXEC runs queued calls through the run handler too (`run_calls`).
    """
    if client.multi is not None:
        return queue_run(client, cmd, commands, start)
    server = client.server
    if (not client.authenticated or client.acl_limited
            or client.no_touch or server.loading or client.is_loader or client.subs is not None
            or client.replica_checks
            or (cmd.is_write and server.write_error is not None)):
        return 0
    # Under maxmemory, Redis checks before each call: a call that adds data may be the one
    # that crosses the limit, and the next must then evict or be refused. A run is made only
    # where those checks could not tell its calls apart (server/evict.py).
    if client.keyspace.maxmemory and not run_may_start(client, cmd, commands[start]):
        return 0
    return run_calls(client, cmd, commands, start)


def queue_run(client: Client, cmd: Command, commands: list[list[bytes]], start: int) -> int:
    """Inside MULTI: queue consecutive calls of cmd from commands[start:] (a transaction's
    pipelined XADDs), each answered +QUEUED; how many. 0 whenever queueing one call takes more
    than its arity check (authentication, ACL rules, maxmemory, a replica's refusals, Pub/Sub,
    commands that run at once or not at all in a transaction): then each call takes
    `execute`."""
    if (not client.authenticated or client.acl_limited or client.keyspace.maxmemory
            or client.replica_checks or client.subs is not None or cmd.subcommands
            or cmd.name in _MULTI_IMMEDIATE or "no_multi" in cmd.flags):
        return 0
    multi = client.multi
    assert multi is not None
    name = commands[start][0]
    arity = cmd.arity
    n = len(commands)
    end = start
    while end < n:
        argv = commands[end]
        argc = len(argv)
        if argv[0] != name or (arity > 0 and argc != arity) or argc < -arity:
            break
        multi.append(cmd, argv)
        end += 1
    done = end - start
    if done:
        client.out.append(_QUEUED_REPLY * done)
    return done


def run_calls(client: Client, cmd: Command, commands: list[list[bytes]], start: int) -> int:
    """cmd's run handler on commands[start:], once the caller made the checks (execute_run for
    a pipeline, EXEC for queued calls): its replies go to client.out, its calls are counted as
    if each ran alone; how many it ran."""
    t0 = _clock()
    done = cmd.run_handler(client, commands, start)  # type: ignore[misc]
    if client.effects.pending:
        propagate_effects(client)
    if done:
        client.last_command = cmd
        cmd.calls += done
        cmd.usec += (_clock() - t0) // 1000
        client.stats.commands_processed += done
    return done


def propagate_effects(client: Client) -> None:
    """Hand what the command that just ran changed to every consumer of effects (the AOF).

    The one place commands' effects leave: after each command, after each run of a run
    handler; inside EXEC they wait for the end of the EXEC, to leave as one transaction.
    """
    if not client.in_exec:
        effects = client.effects
        effects.propagate_pending()
        client.woff = effects.repl_offset


def call(client: Client, cmd: Command, argv: list[bytes]) -> Any:
    """Run a command that passed every check (also used by EXEC for queued commands)."""
    if not client.in_exec:
        # Inside EXEC, EXEC stays the current command (Redis's lastcmd).
        client.last_command = cmd
    # CLIENT NO-TOUCH: the command's lookups leave the keys' access data alone, except TOUCH's.
    # Saved and restored because EXEC calls its queued commands through here.
    no_touch = client.no_touch
    saved_touch = TOUCH_NONE
    if no_touch:
        ks = client.keyspace
        saved_touch = ks.touch_mode
        if cmd.name == "touch":
            ks.touch_mode = TOUCH_LFU if ks.lfu else TOUCH_LRU
        else:
            ks.touch_mode = TOUCH_NONE
    t0 = _clock()
    raised: BaseException | None = None
    try:
        reply = cmd.handler(client, argv)  # type: ignore[misc]
    except ErrorReply as err:
        reply = raised = err
    except StreamError as err:
        raised = err
        reply = ErrorReply(err.message)
    except Exception as exc:  # a bug must cost one reply, never the server or the connection
        log.exception("internal error running %r", cmd.name)
        reply = internal_error(cmd.name, exc)
    if raised is not None:
        # Handlers raise shared error instances (SYNTAX_ERROR...): each raise adds to the
        # instance's traceback, which keeps every frame it passed through (clients, arguments)
        # alive for good. Dropped once the handler is left (inside it, compiled code still
        # holds the traceback it caught), the error path holds nothing.
        raised.__traceback__ = None
        raised.__context__ = None
    if no_touch:
        client.keyspace.touch_mode = saved_touch
    cmd.usec += (_clock() - t0) // 1000
    if client.effects.pending:
        propagate_effects(client)
    if type(reply) is ERROR_REPLY:
        cmd.failed_calls += 1
    elif type(reply) is Block:
        if client.reprocessing:
            # Still nothing to return: it stays parked where it was.
            client.server.blocking.blocked_again(client, reply)
            return BLOCKED
        if not client.in_exec and client.multi is None:
            # As Redis 7.4, a command that blocks is counted once it completes: when a re-run
            # answers, or when the blocking mechanism releases it (BlockingManager.unblock).
            client.server.blocking.block(client, reply, cmd, argv)
            return BLOCKED
        # Inside a transaction a blocking command cannot wait: it answers as on timeout.
        reply = reply.timeout_reply
    cmd.calls += 1
    client.stats.commands_processed += 1
    return reply


def reexecute(client: Client, cmd: Command, argv: list[bytes]) -> Any:
    """Run a parked client's command again because one of its keys is ready (Redis 7's
    reprocessing of a blocked command): its reply, or BLOCKED when it would block again.

    This run adds its time, and its call once it answers. The checks that depend on the
    server's state are made again, as Redis's processCommand does for a reprocessed command:
    the user's rules, maxmemory (keys are evicted as the policy says, and a `denyoom` command
    such as BLMOVE is refused with -OOM while nothing can be evicted), a refused write. A
    refused re-run is, as in Redis, a rejected call and no call at all.
    """
    refused: ErrorReply | None = None
    if client.acl_limited:
        # The user's rules may have changed while it waited.
        refused = acl_refusal(client, cmd, argv)
        if refused is not None:
            cmd.rejected_calls += 1
    if refused is None and client.keyspace.maxmemory:
        refused = before_command(client, cmd)  # counts the rejected call itself
    if refused is None:
        write_error = client.server.write_error
        if cmd.is_write and write_error is not None:
            cmd.rejected_calls += 1
            refused = ErrorReply(write_error)
    if refused is not None:
        return refused
    client.reprocessing = True
    try:
        return call(client, cmd, argv)
    finally:
        client.reprocessing = False
