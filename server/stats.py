"""Counters reported by INFO stats / errorstats and reset by CONFIG RESETSTAT."""

from __future__ import annotations

import time


class Stats:
    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.commands_processed = 0
        self.connections_received = 0
        self.rejected_connections = 0
        self.error_replies = 0
        self.errors_by_code: dict[str, int] = {}
        self.net_input_bytes = 0
        self.net_output_bytes = 0
        self.reset_time = time.time()

    def count_error(self, message: str) -> None:
        self.error_replies += 1
        code = message.split(" ", 1)[0]
        self.errors_by_code[code] = self.errors_by_code.get(code, 0) + 1
