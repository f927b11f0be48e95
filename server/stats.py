"""Counters reported by INFO stats / errorstats and reset by CONFIG RESETSTAT."""

from __future__ import annotations

import logging
import time

log = logging.getLogger("rivulet")

# Redis's ERROR_STATS_NUMBER: the distinct error codes INFO errorstats tracks. One more turns
# errorstats off (until CONFIG RESETSTAT), as Redis's incrementErrorCount does.
ERROR_STATS_NUMBER = 128
ERRORSTATS_DISABLED = "ERRORSTATS_DISABLED"


def _safe(code: str) -> str:
    # Redis's getSafeInfoString, for the log line.
    for ch in "#:\n\r":
        code = code.replace(ch, "_")
    return code


class Stats:
    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.commands_processed = 0
        self.connections_received = 0
        self.rejected_connections = 0
        self.evicted_clients = 0  # by maxmemory-clients
        self.error_replies = 0
        self.errors_by_code: dict[str, int] = {}
        self.errors_enabled = True
        self.net_input_bytes = 0
        self.net_output_bytes = 0
        self.reset_time = time.time()

    def count_error(self, message: str) -> None:
        """An error reply: total_error_replies, and its code in errorstats. The code is the
        text before a space found within Redis's first 32 bytes of the reply ("-" included),
        else ERR, as in Redis's afterErrorReply."""
        self.error_replies += 1
        if not self.errors_enabled:
            return
        space = message.find(" ", 0, 31)
        code = message[:space] if space >= 0 else "ERR"
        errors = self.errors_by_code
        count = errors.get(code)
        if count is not None:
            errors[code] = count + 1
        elif len(errors) < ERROR_STATS_NUMBER:
            errors[code] = 1
        else:
            log.warning("Errorstats stopped adding new errors because the number of errors "
                        "reached the limit, may be misuse of lua error_reply, please check INFO "
                        "ERRORSTATS, this can be re-enabled via CONFIG RESETSTAT.")
            log.warning("Current errors code list: %s",
                        ", ".join(_safe(c) for c in sorted(errors)))
            # Only the marker stays, counted once; nothing more is counted by code.
            self.errors_by_code = {ERRORSTATS_DISABLED: 1}
            self.errors_enabled = False
