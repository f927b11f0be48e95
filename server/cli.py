"""Command line: `rivulet-server [config-file] [--option value ...]`, like redis-server.

Every redis.conf directive we know is also a `--flag`; flags win over the file.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import shlex
import signal
import sys
from collections.abc import Callable, Coroutine
from typing import Any

from server.acl.registry import declaration_error
from server.command_table import load_handlers
from server.config import DEPRECATED_NAMES, Config, ConfigValueError
from server.listeners import ListenError
from server.log import NOTICE, set_level, setup_logging
from server.native import REBUILD_HINT, build_name, stale_modules
from server.persistence.loader import AofLoadError
from server.replication.save_info import restore_loaded
from server.server import Server
from server.version import REDIS_VERSION, RIVULET_VERSION


class UsageError(Exception):
    pass


def usage(config: Config) -> str:
    lines = [
        "Usage: rivulet-server [/path/to/rivulet.conf] [--option value ...]",
        "       rivulet-server --help | --version",
        "",
        "A Redis-compatible server for Redis Streams. Options are redis.conf directives;",
        "given as flags they override the config file. Options:",
        "",
    ]
    for p in config.params.values():
        default = p.default if p.default != "" else '""'
        lines.append(f"  --{p.name:<28} {p.help} (default: {default})")
    lines += ["", "Example: rivulet-server --port 6380 --requirepass s3cret --dir /data"]
    return "\n".join(lines)


def parse_config_lines(text: str) -> list[tuple[str, list[str], str]]:
    """Directives of a redis.conf-syntax text as (name, args, where) triples, where in Redis's words."""
    directives = []
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        try:
            parts = shlex.split(line, posix=True)
        except ValueError:
            raise UsageError(f"Reading the configuration file, at line {number}\n>>> '{line}'\n"
                             "Unbalanced quotes in configuration line") from None
        directives.append((parts[0].lower(), parts[1:],
                           f"Reading the configuration file, at line {number}\n>>> '{line}'"))
    return directives


def parse_flags(argv: list[str]) -> list[tuple[str, list[str], str]]:
    directives: list[tuple[str, list[str], str]] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if not arg.startswith("--"):
            raise UsageError(f"unexpected argument '{arg}' (options are given as --name value)")
        name = arg[2:].lower()
        i += 1
        values: list[str] = []
        while i < len(argv) and not argv[i].startswith("--"):
            values.append(argv[i])
            i += 1
        where = f"Reading the command line, at option --{name}\n>>> '{name} {' '.join(values)}'"
        directives.append((name, values, where))
    return directives


def build_config(argv: list[str]) -> Config:
    config = Config()
    config_file = None
    if argv and not argv[0].startswith("--"):
        config_file = argv[0]
        argv = argv[1:]
    directives: list[tuple[str, list[str], str]] = []
    if config_file is not None:
        try:
            # Bytes that are not UTF-8 (in a user's name, a password) are kept as they are.
            with open(config_file, encoding="utf-8", errors="surrogateescape") as fh:
                directives += parse_config_lines(fh.read())
        except OSError as exc:
            raise UsageError(f"Fatal error, can't open config file '{config_file}': {exc.strerror}") from None
        config.config_file = os.path.abspath(config_file)
    directives += parse_flags(argv)
    # Each `save` line adds save points to those of the lines before it (the first one replaces
    # the defaults), as in redis.conf; `save ""` clears them.
    save_points: list[str] | None = None
    declared: set[bytes] = set()
    for name, values, where in directives:
        if name == "save" and values not in ([], [""]):
            save_points = (save_points or []) + values
            values = save_points
        elif name == "save":
            save_points = []
        elif name == "user":
            # Each line declares one user, checked now as Redis checks it (its rules against
            # the command table); loaded when the server starts.
            if not values:
                raise UsageError(f"{where}\nBad directive or wrong number of arguments")
            line = [v.encode("utf-8", "surrogateescape") for v in values]
            load_handlers()
            error = declaration_error(line, declared, config["acl-pubsub-default"] == "allchannels")
            if error is not None:
                raise UsageError(f"{where}\n{error}")
            config.user_lines.append(line)
            continue
        param = config.lookup(name)
        if param is None and len(values) == 1 and name.lower() in DEPRECATED_NAMES:
            continue
        if param is None:
            raise UsageError(f"{where}\nBad directive or wrong number of arguments")
        if not values and param.kind != "string" and param.kind != "special":
            raise UsageError(f"{where}\nwrong number of arguments")
        try:
            config.set(name, " ".join(values), startup=True)
        except ConfigValueError as exc:
            raise UsageError(f"{where}\n{exc}") from None
    return config


def _return_large_blocks_to_the_system() -> None:
    """Keep glibc serving blocks of 256 KB and more with mmap, so that freeing one gives the
    memory back at once. By default glibc raises that threshold each time such a block is freed
    (up to 32 MB): after a dict or list of a million entries has been resized a few times, its
    old tables stay in the heap, counted in the process's RSS though nothing uses them (about
    20 bytes per pending entry of a million-entry PEL).

    The heap's free top is given back above 1 MB instead of 128 KB: each read of a long
    pipeline is a block of 256,000 bytes, just under the mmap threshold, and with the default
    every one of them was placed in pages the kernel had to fault in again (62 faults a read)."""
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(-3, 256 * 1024)  # M_MMAP_THRESHOLD, which also stops the adjustment
        libc.mallopt(-1, 1024 * 1024)  # M_TRIM_THRESHOLD
    except (OSError, AttributeError):
        pass  # not glibc: nothing to tune


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    # Anywhere on the line, so that `docker run image --help` works behind the image's config file.
    if "--help" in argv or (argv and argv[0] == "-h"):
        print(usage(Config()))
        return 0
    if "--version" in argv or (argv and argv[0] == "-v"):
        print(f"Rivulet server v={RIVULET_VERSION} (Redis {REDIS_VERSION} compatible) build={build_name()}")
        return 0
    try:
        config = build_config(argv)
    except UsageError as exc:
        print(f"\n*** FATAL CONFIG FILE ERROR (Rivulet {RIVULET_VERSION}) ***\n{exc}", file=sys.stderr)
        return 1
    # A file-size limit must make writes fail (EFBIG, handled as a write error), not kill us.
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    log = setup_logging(config["loglevel"], config["logfile"])
    config.on_change("loglevel", set_level)
    run: Callable[[Coroutine[Any, Any, int]], int] = asyncio.run
    try:
        import uvloop
        run = uvloop.run
    except ImportError:  # platforms without uvloop run on asyncio's own loop
        pass
    try:
        return run(_run(config, log))
    except KeyboardInterrupt:
        return 0


async def _run(config: Config, log: logging.Logger) -> int:
    data_dir = config["dir"]
    try:
        os.makedirs(data_dir, exist_ok=True)
    except OSError as exc:
        log.warning("Can't create the data directory %s: %s", data_dir, exc.strerror)
        return 1
    server = Server(config)
    try:
        await server.start()
    except ListenError:
        return 1  # logged as Redis logs it
    except OSError as exc:
        log.warning("%s", exc)
        return 1
    # What exists now (modules, the command table, the config, the loop, the listeners) lives as
    # long as the process. Frozen, it is no longer walked by full collections, which it made cost
    # about 9.5 ms of stopped server (under 1 ms after): a latency spike every few seconds of
    # steady traffic. Data loaded from the AOF comes after, so it stays collectable (a deleted
    # consumer and its pending entries form a cycle only the collector frees).
    gc.freeze()
    # Every command allocates a few container objects (its argv list, reply lists) that die
    # within the command; at Python's default threshold (700 allocations) a pipeline of 1,000
    # XADDs paid for a young-generation collection about every 200 commands, 8% of its CPU.
    # Collected every 5,000 allocations instead, a young collection still walks at most a few
    # thousand survivors (well under a millisecond).
    gc.set_threshold(5000, 10, 10)
    _return_large_blocks_to_the_system()
    loop_name = type(asyncio.get_running_loop()).__module__.split(".")[0]
    log.log(NOTICE, "Rivulet %s (Redis %s compatible) starting: pid=%d port=%d tls-port=%d bind=%s config=%s "
            "dir=%s appendonly=%s appendfsync=%s loop=%s build=%s", RIVULET_VERSION, REDIS_VERSION,
            os.getpid(), server.tcp.port, server.tls_listener.port, ",".join(config["bind"]), config.config_file or "none",
            os.path.abspath(data_dir), "yes" if config["appendonly"] else "no",
            config["appendfsync"], loop_name, build_name())
    stale = stale_modules()
    if stale:
        log.warning("Compiled modules are older than their sources (%s): the old code runs; %s",
                    ", ".join(stale), REBUILD_HINT)
    if config["pidfile"]:
        with open(config["pidfile"], "w") as fh:
            fh.write(f"{os.getpid()}\n")
    try:
        # Listeners are open: clients connecting while the file loads get -LOADING.
        await server.persistence.start()
    except AofLoadError as exc:
        log.warning("%s", exc)
        await server.stop()
        return 1
    for listener in server.listeners:
        log.log(NOTICE, "Ready to accept connections %s", listener.name)
    restore_loaded(server)
    server.master_link.connect_configured()
    await server.serve_until_stopped()
    if config["pidfile"]:
        try:
            os.unlink(config["pidfile"])
        except OSError:
            pass
    return 0
