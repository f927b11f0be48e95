"""The one exception type of the stream engine, and Redis's exact error texts.

Every message carries its prefix ("ERR ", "NOGROUP ", "BUSYGROUP ") because the command layer
sends `str(exc)` verbatim as the error reply.
"""

from __future__ import annotations


class StreamError(Exception):
    """A Redis error reply; `message` (also `str(exc)`) is the full text including its prefix."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


# Texts as written in t_stream.c (Redis 7.4); addReplyError adds the "ERR " prefix when the text
# does not start with "-", so those keep "ERR " here.
INVALID_ID = "ERR Invalid stream ID specified as stream command argument"
INVALID_START = "ERR invalid start ID for the interval"
INVALID_END = "ERR invalid end ID for the interval"
XADD_ZERO = "ERR The ID specified in XADD must be greater than 0-0"
XADD_TOO_SMALL = "ERR The ID specified in XADD is equal or smaller than the target stream top item"
XADD_EXHAUSTED = "ERR The stream has exhausted the last possible ID, unable to add more items"
TOO_LARGE = "ERR Elements are too large to be stored"
XSETID_SMALLER_THAN_TOP = "ERR The ID specified in XSETID is smaller than the target stream top item"
XSETID_ENTRIES_ADDED = (
    "ERR The entries_added specified in XSETID is smaller than the target stream length"
)
XSETID_PROVIDED_MAXDEL = (
    "ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id"
)
XSETID_CURRENT_MAXDEL = (
    "ERR The ID specified in XSETID is smaller than current max_deleted_entry_id"
)
XSETID_ENTRIES_ADDED_NEGATIVE = "ERR entries_added must be positive"
ENTRIESREAD_NEGATIVE = "ERR value for ENTRIESREAD must be positive or -1"
BUSYGROUP = "BUSYGROUP Consumer Group name already exists"
XREADGROUP_DOLLAR = (
    "ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the history of "
    "this consumer by specifying a proper ID, or use the > ID to get new messages. The $ ID "
    "would just return an empty result set."
)
XREADGROUP_PLUS = (
    "ERR The + ID is meaningless in the context of XREADGROUP: you want to read the history of "
    "this consumer by specifying a proper ID, or use the > ID to get new messages. The + ID "
    "would just return an empty result set."
)
XREAD_GT = (
    "ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> "
    "<consumer> option."
)
XREAD_PLUS_EMPTY = "ERR the stream last element ID is 0-0"


def _text(name: bytes) -> str:
    # Redis formats names with %s: bytes are shown as they are; undecodable bytes are kept
    # reversibly so the command layer can re-encode the message losslessly.
    return name.decode("utf-8", "surrogateescape")


def nogroup(key: bytes, group: bytes) -> StreamError:
    """XPENDING / XCLAIM / XAUTOCLAIM on a missing key or group."""
    return StreamError(f"NOGROUP No such key '{_text(key)}' or consumer group '{_text(group)}'")


def nogroup_xreadgroup(key: bytes, group: bytes) -> StreamError:
    """XREADGROUP on a missing key or group."""
    return StreamError(
        f"NOGROUP No such key '{_text(key)}' or consumer group '{_text(group)}' "
        "in XREADGROUP with GROUP option"
    )


def nogroup_for_key(key: bytes, group: bytes) -> StreamError:
    """XGROUP SETID/CREATECONSUMER/DELCONSUMER and XINFO CONSUMERS on a missing group."""
    return StreamError(
        f"NOGROUP No such consumer group '{_text(group)}' for key name '{_text(key)}'"
    )
