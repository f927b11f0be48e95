"""Logging in Redis's line format: `pid:M 22 Nov 2026 07:00:00.123 * message`.

The level names are redis.conf's: debug, verbose, notice, warning, nothing.
"""

from __future__ import annotations

import logging
import os
import sys
import time

VERBOSE = 15
NOTICE = 25
logging.addLevelName(VERBOSE, "VERBOSE")
logging.addLevelName(NOTICE, "NOTICE")

LEVELS = {"debug": logging.DEBUG, "verbose": VERBOSE, "notice": NOTICE,
          "warning": logging.WARNING, "nothing": logging.CRITICAL + 10}
_SYMBOL = {logging.DEBUG: ".", VERBOSE: "-", logging.INFO: "*", NOTICE: "*",
           logging.WARNING: "#", logging.ERROR: "#", logging.CRITICAL: "#"}


class RedisFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        t = record.created
        stamp = time.strftime("%d %b %Y %H:%M:%S", time.localtime(t)) + ".%03d" % (t % 1 * 1000)
        text = f"{os.getpid()}:M {stamp} {_SYMBOL.get(record.levelno, '*')} {record.getMessage()}"
        if record.exc_info:
            text += "\n" + self.formatException(record.exc_info)
        return text


def setup_logging(level: str, logfile: str = "") -> logging.Logger:
    logger = logging.getLogger("rivulet")
    logger.handlers.clear()
    handler: logging.Handler
    # Names from clients (users, keys) are bytes shown as text with surrogateescape: the log
    # gets their bytes as they came, as Redis writes them.
    if logfile:
        handler = logging.FileHandler(logfile, errors="surrogateescape")
    else:
        if hasattr(sys.stdout, "reconfigure"):
            sys.stdout.reconfigure(errors="surrogateescape")
        handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(RedisFormatter())
    logger.addHandler(handler)
    logger.setLevel(LEVELS[level])
    logger.propagate = False
    return logger


def set_level(level: str) -> None:
    logging.getLogger("rivulet").setLevel(LEVELS[level])
