"""A server process's CPU time and resident memory (Linux).

CPU time (of the whole process, all threads) is the steadier figure on a small, noisy machine:
it does not count the time the server spent waiting for the benchmark client to get a core,
which ops/s does.
"""

from __future__ import annotations

import os
import time

CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _process_cpu_clock(pid: int) -> int:
    # The kernel's CPU-time clock of another process (what clock_getcpuclockid(3) returns):
    # nanoseconds, where /proc/<pid>/stat counts 10 ms ticks, too coarse for a case that keeps
    # a server busy for a fraction of a second.
    clock = ((~pid) << 3) | 2  # MAKE_PROCESS_CPUCLOCK(pid, CPUCLOCK_SCHED)
    return (clock + (1 << 31)) % (1 << 32) - (1 << 31)  # as the 32-bit clockid_t


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds the process has used so far."""
    try:
        return time.clock_gettime(_process_cpu_clock(pid))
    except OSError:  # not Linux, or the process is gone: the kernel's tick counts
        return _tick_cpu_seconds(pid)


def _tick_cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as fh:
        stat = fh.read()
    # The command name (field 2) may contain spaces and parentheses: split after the last ')'.
    fields = stat[stat.rindex(")") + 2:].split()
    utime, stime = int(fields[11]), int(fields[12])  # fields 14 and 15 of proc(5)
    return (utime + stime) / CLOCK_TICKS


def rss_bytes(pid: int) -> int:
    """Resident set size (VmRSS) in bytes."""
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmRSS for pid {pid}")


class CpuMeter:
    """CPU seconds a process uses between `start()` and `stop()`."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.begin = 0.0
        self.used = 0.0

    def start(self) -> CpuMeter:
        self.begin = cpu_seconds(self.pid)
        return self

    def stop(self) -> float:
        self.used = cpu_seconds(self.pid) - self.begin
        return self.used
