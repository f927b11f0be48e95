"""The ACL security log (ACL LOG): denied commands, keys, channels and failed authentications.

As Redis's: newest first, at most acllog-max-len entries; an event like one of the ten newest
entries (same reason, context, object and user, within 60 seconds) updates that entry and counts
it instead of adding one.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from server.acl.check import DENIED_AUTH, DENIED_CHANNEL, DENIED_CMD, DENIED_KEY

_GROUPING_MS = 60000
_REASONS = {DENIED_CMD: b"command", DENIED_KEY: b"key", DENIED_CHANNEL: b"channel",
            DENIED_AUTH: b"auth"}
TOPLEVEL = b"toplevel"
MULTI = b"multi"


@dataclass
class Entry:
    count: int
    reason: int
    context: bytes
    object: bytes
    username: bytes
    ctime: int  # ms of the last update
    client_info: bytes
    entry_id: int
    created: int

    def reply(self, now_ms: int) -> dict:
        return {
            b"count": self.count,
            b"reason": _REASONS.get(self.reason, b"unknown"),
            b"context": self.context,
            b"object": self.object,
            b"username": self.username,
            b"age-seconds": (now_ms - self.ctime) / 1000,
            b"client-info": self.client_info,
            b"entry-id": self.entry_id,
            b"timestamp-created": self.created,
            b"timestamp-last-updated": self.ctime,
        }


class AclLog:
    def __init__(self) -> None:
        self.entries: list[Entry] = []  # newest first
        self.created = 0  # entries ever created (the next entry-id)
        # INFO stats acl_access_denied_*.
        self.denied = {DENIED_AUTH: 0, DENIED_CMD: 0, DENIED_KEY: 0, DENIED_CHANNEL: 0}

    def add(self, reason: int, context: bytes, obj: bytes, username: bytes, client_info: bytes,
            max_len: int) -> None:
        self.denied[reason] += 1
        if max_len == 0:
            del self.entries[:]
            return
        now = int(time.time() * 1000)
        for i, entry in enumerate(self.entries[:10]):
            if (entry.reason == reason and entry.context == context
                    and abs(entry.ctime - now) <= _GROUPING_MS and entry.object == obj
                    and entry.username == username):
                entry.client_info = client_info
                entry.ctime = now
                entry.count += 1
                del self.entries[i]
                self.entries.insert(0, entry)
                return
        self.entries.insert(0, Entry(1, reason, context, obj, username, now, client_info,
                                     self.created, now))
        self.created += 1
        del self.entries[max_len:]

    def trim(self, max_len: int) -> None:
        del self.entries[max_len:]

    def reset(self) -> None:
        self.entries = []
