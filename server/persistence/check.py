"""rivulet-check-aof FILE [--fix]: report (and truncate to) the last valid command of an AOF."""

from __future__ import annotations

import argparse
import os
import sys

from server.persistence.reader import AofCorrupted, AofTruncated, iter_commands


def check(path: str) -> tuple[int, int, str | None]:
    """(valid prefix length, commands in it, problem or None)."""
    with open(path, "rb") as fh:
        data = fh.read()
    valid = 0
    count = 0
    multi_start: int | None = None
    try:
        for argv, end in iter_commands(data):
            name = argv[0].lower()
            if name == b"multi":
                multi_start = valid
            elif name in (b"exec", b"discard"):
                multi_start = None
            valid = end
            count += 1
    except AofTruncated as exc:
        return (exc.offset if multi_start is None else multi_start), count, (
            f"truncated command at offset {exc.offset}")
    except AofCorrupted as exc:
        return (valid if multi_start is None else multi_start), count, exc.why + f" at offset {exc.offset}"
    if multi_start is not None:
        return multi_start, count, f"unterminated MULTI at offset {multi_start}"
    return valid, count, None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="rivulet-check-aof",
        description="Check a Rivulet append-only file; with --fix, truncate it to its last valid command.",
    )
    parser.add_argument("file")
    parser.add_argument("--fix", action="store_true", help="truncate the file to the last valid command")
    args = parser.parse_args(argv)
    try:
        size = os.path.getsize(args.file)
        valid, count, problem = check(args.file)
    except OSError as exc:
        print(f"Cannot read {args.file}: {exc.strerror}", file=sys.stderr)
        return 1
    if problem is None:
        print(f"AOF {args.file} is valid: {count} commands, {size} bytes")
        return 0
    print(f"AOF {args.file}: {problem}")
    print(f"AOF analyzed: size={size}, ok_up_to={valid}, diff={size - valid}")
    if not args.fix:
        print(f"AOF {args.file} is not valid. Use the --fix option to try fixing it.")
        return 1
    os.truncate(args.file, valid)
    print(f"Successfully truncated AOF {args.file} to {valid} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
