"""rivulet-check-rdb FILE: what a dump.rdb holds, and where it is damaged (as redis-check-rdb).

Every value is decoded exactly as loading would decode it, so a file this reports as OK loads.
The report follows redis-check-rdb's lines ("[offset N] ...", "--- RDB ERROR DETECTED ---"),
with, in addition, the keys of each database by type. Exit status 0: the file loads; 1: it does
not.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, TextIO

from server.config import Config
from server.rdb.file import EXTRAS_RECORD, TYPE_NAMES, RdbFile, RdbLoadError, iter_rdb


@dataclass
class Report:
    """What a check found: counts, the envelope, and the error if any."""

    keys: int = 0
    expires: int = 0
    already_expired: int = 0
    per_db: dict[int, Counter[str]] = field(default_factory=dict)
    info: RdbFile = field(default_factory=RdbFile)
    error: RdbLoadError | None = None
    doing: str = ""
    last_type: int | None = None
    lines: list[str] = field(default_factory=list)


def check_bytes(data: bytes, name: str) -> Report:
    report = Report()
    lines = report.lines
    lines.append(f"[offset 0] Checking RDB file {name}")
    config = Config()

    def trace(kind: str, offset: int, detail: Any) -> None:
        if kind == "doing":
            report.doing = detail
        elif kind == "type":
            report.last_type = detail
        elif kind == "aux":
            key, value = detail
            lines.append(f"[offset {offset}] AUX FIELD {_text(key)} = '{_text(value)}'")
        elif kind == "selectdb":
            lines.append(f"[offset {offset}] Selecting DB ID {detail}")
        elif kind == "resizedb":
            lines.append(f"[offset {offset}] Resize DB hint: {detail[0]} keys, {detail[1]} expires")
        elif kind == "end":
            info: RdbFile = detail
            if info.checksum_stored == 0:
                lines.append(f"[offset {offset}] RDB file was saved with checksum disabled: no "
                             "check performed.")
            elif info.version >= 5:
                lines.append(f"[offset {offset}] Checksum OK")

    now = int(time.time() * 1000)
    try:
        for db, _key, rdb_type, _value, expire, _idle, _freq, _offset in iter_rdb(
                data, config, report.info, now, 2**31, trace=trace):
            if rdb_type == EXTRAS_RECORD:
                continue
            report.keys += 1
            if expire != -1:
                report.expires += 1
                if expire < now:
                    report.already_expired += 1
            report.per_db.setdefault(db, Counter())[TYPE_NAMES.get(rdb_type, str(rdb_type))] += 1
    except RdbLoadError as exc:
        report.error = exc
    return report


def render(report: Report, out: TextIO) -> None:
    for line in report.lines:
        print(line, file=out)
    if report.error is None:
        end = report.info.end
        print(f"[offset {end}] \\o/ RDB looks OK! \\o/", file=out)
    else:
        print("--- RDB ERROR DETECTED ---", file=out)
        print(f"[offset {report.error.offset}] {report.error.message}", file=out)
        if report.doing:
            print(f"[additional info] While doing: {report.doing}", file=out)
        if report.last_type is not None and report.doing in ("read-key", "read-object-value"):
            name = TYPE_NAMES.get(report.last_type, "unknown")
            print(f"[additional info] Reading type {report.last_type} ({name})", file=out)
    print(f"[info] {report.keys} keys read", file=out)
    print(f"[info] {report.expires} expires", file=out)
    print(f"[info] {report.already_expired} already expired", file=out)
    for db in sorted(report.per_db):
        counts = report.per_db[db]
        detail = ", ".join(f"{name} {n}" for name, n in sorted(counts.items()))
        print(f"[info] db {db}: {sum(counts.values())} keys ({detail})", file=out)
    if report.info.empty_keys_skipped:
        print(f"[info] {report.info.empty_keys_skipped} empty keys skipped", file=out)
    if report.error is not None:
        print("--- RDB ERROR DETECTED ---", file=out)


def _text(value: bytes) -> str:
    return value.decode("utf-8", "backslashreplace")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="rivulet-check-rdb",
        description="Check a dump.rdb (Redis's RDB format): what it holds and where it is damaged.")
    parser.add_argument("file", help="the RDB file to check")
    args = parser.parse_args(argv)
    try:
        with open(args.file, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        print(f"Cannot check RDB file {args.file}: {exc.strerror}", file=sys.stderr)
        return 1
    report = check_bytes(data, args.file)
    render(report, sys.stdout)
    return 0 if report.error is None else 1


if __name__ == "__main__":
    sys.exit(main())
