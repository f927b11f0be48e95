"""Coverage-guided fuzzing of the request parser with atheris (libFuzzer for Python).

    RIVULET_PURE_PYTHON=1 python -m fuzz.atheris_parser -max_total_time=300 [corpus_dir]

atheris instruments Python bytecode, so the parser must run as Python (RIVULET_PURE_PYTHON=1;
the compiled module would be opaque to it). Each input's first byte chooses how it is cut into
reads; the rest is fed to a parser with each fast path and to the strict parser alone, which must
agree; any exception but the query-buffer limit is a crash. libFuzzer's own options apply
(-max_total_time, -runs, -dict, -jobs...). The starting corpus is generated valid requests.
"""

from __future__ import annotations

import os
import random
import sys
import tempfile

import atheris

with atheris.instrument_imports(include=["protocol"]):
    from protocol.parser import QueryBufferLimitExceeded, RequestParser


def _parse(fast_path: str | None, reads: list[bytes]) -> tuple[list[list[bytes]], bytes | None]:
    parser = RequestParser(fast_path=fast_path)
    commands: list[list[bytes]] = []
    try:
        for data in reads:
            got, error = parser.feed(data)
            commands += got
            if error is not None:
                return commands, error.reply
    except QueryBufferLimitExceeded as exc:
        return commands + exc.commands, b"limit"
    return commands, None


def test_one_input(data: bytes) -> None:
    if not data:
        return
    step = data[0] or len(data)
    body = data[1:]
    reads = [body[i:i + step] for i in range(0, len(body), step)] or [b""]
    reference = _parse(None, reads)
    for fast_path in ("hiredis", "scan"):
        got = _parse(fast_path, reads)
        if got != reference:
            raise AssertionError(f"{fast_path} fast path {got!r} != strict {reference!r} "
                                 f"for {body!r} in reads of {step}")


def _seed_corpus() -> str:
    from fuzz.inprocess import corpus

    path = tempfile.mkdtemp(prefix="rivulet-atheris-")
    rnd = random.Random(1)
    for i, request in enumerate(corpus(rnd, 300)):
        with open(os.path.join(path, f"seed{i}"), "wb") as f:
            f.write(bytes([rnd.choice((0, 0, 1, 7, 64))]) + request)
    return path


def main() -> None:
    args = list(sys.argv)
    if not any(not a.startswith("-") for a in args[1:]):
        args.append(_seed_corpus())
    atheris.Setup(args, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
