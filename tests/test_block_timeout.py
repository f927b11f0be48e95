"""Timeouts of blocking commands: Redis's parsing rules (the commands' tests cover the replies)."""

from __future__ import annotations

import pytest

from protocol.reply import ErrorReply
from server.commands.block_timeout import parse_timeout_ms, parse_timeout_seconds


@pytest.mark.parametrize(("arg", "ms"), [
    (b"0", 0), (b"1", 1000), (b"0.1", 100), (b"0.0001", 1), (b"1.5", 1500), (b"1e-3", 1),
    (b"0x1p-1", 500), (b"-0.0001", 0), (b"+2", 2000),
])
def test_seconds_round_up_to_milliseconds(arg: bytes, ms: int) -> None:
    assert parse_timeout_seconds(arg) == ms


@pytest.mark.parametrize(("arg", "text"), [
    (b"abc", "ERR timeout is not a float or out of range"),
    (b" 1", "ERR timeout is not a float or out of range"),
    (b"nan", "ERR timeout is not a float or out of range"),
    (b"-1", "ERR timeout is negative"),
    (b"-inf", "ERR timeout is negative"),
    (b"inf", "ERR timeout is out of range"),
    (b"1e30", "ERR timeout is out of range"),
])
def test_seconds_errors(arg: bytes, text: str) -> None:
    with pytest.raises(ErrorReply) as info:
        parse_timeout_seconds(arg)
    assert str(info.value) == text


def test_milliseconds() -> None:
    assert parse_timeout_ms(b"250") == 250
    for arg, text in [(b"1.5", "ERR timeout is not an integer or out of range"),
                      (b"-1", "ERR timeout is negative"),
                      (b"9223372036854775807", "ERR timeout is out of range")]:
        with pytest.raises(ErrorReply) as info:
            parse_timeout_ms(arg)
        assert str(info.value) == text
