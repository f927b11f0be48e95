"""Whole dump.rdb files: writing a snapshot of the keyspace, reading one back.

The layout is Redis 7.4's (src/rdb.c rdbSaveRio): the "REDIS0012" header, AUX fields (redis-ver,
redis-bits, ctime, used-mem, aof-base), then for each non-empty database SELECTDB and RESIZEDB,
then each key as [EXPIRETIME_MS] [IDLE | FREQ] type key value, then EOF and the CRC64 of
everything before it (zero under `rdbchecksum no`, which loaders take as "not checked"). Values
are encoded by `server.rdb.values`; this module only knows the envelope.

Reading accepts every opcode Redis 7.4 reads. Functions and module data cannot be represented
here: they stop the load with a message saying so rather than being dropped silently.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, BinaryIO, Final

from hashes.hash import Hash
from server.rdb.primitives import RdbError, RdbReader, RdbWriter, crc64
from server.rdb.stream_codec import (
    EXTRAS_AUX_NAME,
    apply_stream_extras,
    extras_aux_value,
    parse_extras_aux,
)
from server.rdb.values import EmptyKeyError, read_value, write_value
from streams.stream import Stream

if TYPE_CHECKING:
    from server.config import Config
    from server.keyspace import Keyspace

RDB_VERSION: Final = 12

# A stream's state type 21 has no room for (XADD IDMP's producers, XNACKed entries) follows
# the stream's record in an AUX field (stream_codec.EXTRAS_AUX_NAME: database, key, blob),
# which Redis ignores. iter_rdb yields it as a record of this type: (db, key, EXTRAS_RECORD,
# blob, ...).
EXTRAS_RECORD: Final = -1

OP_SLOT_INFO: Final = 244
OP_FUNCTION2: Final = 245
OP_FUNCTION_PRE_GA: Final = 246
OP_MODULE_AUX: Final = 247
OP_IDLE: Final = 248
OP_FREQ: Final = 249
OP_AUX: Final = 250
OP_RESIZEDB: Final = 251
OP_EXPIRETIME_MS: Final = 252
OP_EXPIRETIME: Final = 253
OP_SELECTDB: Final = 254
OP_EOF: Final = 255

# Redis's REDIS_AUTOSYNC_BYTES: with rdb-save-incremental-fsync, the file is fsynced every time
# this much more has been written, so that the final fsync never has gigabytes to flush at once.
AUTOSYNC_BYTES = 4 * 1024 * 1024
_CHUNK = 1024 * 1024

# Redis's redis-check-rdb names of the value types, for the checker's report.
TYPE_NAMES = {
    0: "string", 1: "list-linked", 2: "set-hashtable", 3: "zset-v1", 4: "hash-hashtable",
    5: "zset-v2", 6: "module-pre-release", 7: "module-value", 9: "hash-zipmap",
    10: "list-ziplist", 11: "set-intset", 12: "zset-ziplist", 13: "hash-ziplist",
    14: "quicklist", 15: "stream", 16: "hash-listpack", 17: "zset-listpack",
    18: "quicklist-v2", 19: "stream-v2", 20: "set-listpack", 21: "stream-v3",
    22: "hash-hashtable-md-pre-ga", 23: "hash-listpack-md-pre-ga", 24: "hash-hashtable-md",
    25: "hash-listpack-md",
}


class RdbLoadError(Exception):
    """The file cannot be loaded: `offset` is where reading stopped, str() says why."""

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(message)
        self.message = message
        self.offset = offset


# --- writing ------------------------------------------------------------------------------------


class _Sink:
    """The file being written: bytes go out in chunks, the CRC64 follows them."""

    def __init__(self, fh: BinaryIO, checksum: bool, autosync: bool) -> None:
        self.fh = fh
        self.checksum = checksum
        self.crc = 0
        self.autosync = autosync
        self.written = 0
        self.unsynced = 0

    def write(self, data: bytes) -> None:
        if self.checksum:
            self.crc = crc64(data, self.crc)
        self.fh.write(data)
        self.written += len(data)
        if self.autosync:
            self.unsynced += len(data)
            if self.unsynced >= AUTOSYNC_BYTES:
                self.fh.flush()
                os.fsync(self.fh.fileno())
                self.unsynced = 0


def _aux(w: RdbWriter, name: bytes, value: bytes) -> None:
    w.type(OP_AUX)
    w.string(name)
    w.string(value)


def used_memory() -> int:
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def write_rdb(fh: BinaryIO, keyspace: Keyspace, config: Config, *, aof_base: bool = False,
              redis_version: str | None = None, aux: Sequence[tuple[bytes, bytes]] = ()) -> int:
    """Write the whole keyspace as an RDB file to fh (not closed, not fsynced). Returns the keys
    written. `aux`: more AUX fields, after used-mem (the replication history, as Redis's
    rdbSaveInfoAuxFields places them)."""
    from server.version import REDIS_VERSION

    compress = bool(config["rdbcompression"])
    sink = _Sink(fh, bool(config["rdbchecksum"]), bool(config["rdb-save-incremental-fsync"]))
    w = RdbWriter(compression=compress)
    w.raw(b"REDIS%04d" % RDB_VERSION)
    _aux(w, b"redis-ver", (redis_version or REDIS_VERSION).encode())
    _aux(w, b"redis-bits", b"64")
    _aux(w, b"ctime", b"%d" % int(time.time()))
    _aux(w, b"used-mem", b"%d" % used_memory())
    # (Names of their own: mypyc gives a variable one type for the whole function, and
    # `value` below holds the keys' values.)
    for aux_name, aux_value in aux:
        _aux(w, aux_name, aux_value)
    _aux(w, b"aof-base", b"1" if aof_base else b"0")
    policy: str = config["maxmemory-policy"]
    save_lru = policy.endswith("-lru")
    save_lfu = policy.endswith("-lfu")
    lru_clock = keyspace.lru_clock
    keys = 0
    tmp = RdbWriter(compression=compress)
    scratch = tmp.buf
    for db in keyspace.dbs:
        data = db.data
        if not data:
            continue
        expires = db.expires
        w.type(OP_SELECTDB)
        w.length(db.index)
        w.type(OP_RESIZEDB)
        w.length(len(data))
        w.length(len(expires))
        for key, value in data.items():
            if expires:
                when = expires.get(key)
                if when is not None:
                    w.type(OP_EXPIRETIME_MS)
                    w.millis(when)
            if save_lru:
                access = db.access_of(key)
                w.type(OP_IDLE)
                w.length(max(lru_clock - access, 0) if access is not None else 0)
            elif save_lfu:
                access = db.access_of(key)
                w.type(OP_FREQ)
                w.raw(bytes((keyspace.lfu_counter(access) if access is not None else 0,)))
            # The value's encoding starts with its type byte, which goes before the key.
            scratch.clear()
            write_value(tmp, value, config, key)
            w.buf.append(scratch[0])
            w.string(key)
            w.buf += memoryview(scratch)[1:]
            if type(value) is Stream:
                extras = extras_aux_value(db.index, key, value)
                if extras is not None:
                    # An AUX field, which Redis skips: the file stays one Redis 7.4 loads.
                    _aux(w, EXTRAS_AUX_NAME, extras)
            keys += 1
            if len(w.buf) >= _CHUNK:
                sink.write(w.getvalue())
                w = RdbWriter(compression=compress)
    w.type(OP_EOF)
    sink.write(w.getvalue())
    crc = sink.crc if sink.checksum else 0
    fh.write(crc.to_bytes(8, "little"))
    return keys


def save_rdb(path: str, keyspace: Keyspace, config: Config, *, tmp_name: str | None = None,
             aux: Sequence[tuple[bytes, bytes]] = ()) -> int:
    """Write path atomically as Redis's rdbSave: a temp file in the same directory, fsynced,
    renamed over path, directory fsynced. Raises OSError (the temp file removed). Returns the
    number of keys saved."""
    directory = os.path.dirname(os.path.abspath(path))
    tmp = os.path.join(directory, tmp_name or f"temp-{os.getpid()}.rdb")
    try:
        with open(tmp, "wb") as fh:
            keys = write_rdb(fh, keyspace, config, aux=aux)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    return keys


# --- reading ------------------------------------------------------------------------------------


# One key as the file holds it: (db, key, rdb type, value, expire ms or -1, idle seconds or -1,
# LFU counter or -1, offset of the key's record). A tuple, not an object: a file holds millions.
KeyRecord = tuple[int, bytes, int, Any, int, int, int, int]


@dataclass
class RdbFile:
    """What the envelope of a file says, filled in as it is read."""

    version: int = 0
    aux: list[tuple[bytes, bytes]] = field(default_factory=list)
    resize: dict[int, tuple[int, int]] = field(default_factory=dict)
    checksum_stored: int | None = None
    checksum_computed: int | None = None
    empty_keys_skipped: int = 0
    end: int = 0


def read_header(data: bytes) -> int:
    """The RDB version of the file, or RdbLoadError."""
    if len(data) < 9:
        raise RdbLoadError("Unexpected EOF reading RDB file", len(data))
    if data[:5] != b"REDIS":
        raise RdbLoadError("Wrong signature trying to load DB from file", 0)
    digits = data[5:9]
    version = int(digits) if digits.isdigit() else 0
    if not 1 <= version <= RDB_VERSION:
        raise RdbLoadError(f"Can't handle RDB format version {int(digits) if digits.isdigit() else digits!r}", 5)
    return version


Trace = Callable[[str, int, Any], None]


def _plain_string(data: bytes, pos: int, end: int) -> tuple[bytes, int]:
    """A string stored as a 6- or 14-bit length and its bytes: (it, the position after it), or
    (b"", -1) for anything else (integer-encoded, compressed, long, cut short), which the reader's
    general path then reads (or reports)."""
    if pos >= end:
        return b"", -1
    first = data[pos]
    kind = first >> 6
    if kind == 0:
        n = first
        pos += 1
    elif kind == 1:
        if pos + 1 >= end:
            return b"", -1
        n = ((first & 0x3F) << 8) | data[pos + 1]
        pos += 2
    else:
        return b"", -1
    stop = pos + n
    if stop > end:
        return b"", -1
    return data[pos:stop], stop


class RecordSink:
    """Where `read_records` hands each key it reads. `add` returns True when the reader should
    pause (yield) after this key: the loader pauses every so many keys to serve the event loop,
    `iter_rdb`'s collector after each one."""

    def add(self, db: int, key: bytes, rdb_type: int, value: Any, expire: int, idle: int,
            freq: int, offset: int) -> bool:
        raise NotImplementedError


class _Collector(RecordSink):
    """The sink of iter_rdb: keeps the one record just read."""

    def __init__(self) -> None:
        self.record: KeyRecord | None = None

    def add(self, db: int, key: bytes, rdb_type: int, value: Any, expire: int, idle: int,
            freq: int, offset: int) -> bool:
        self.record = (db, key, rdb_type, value, expire, idle, freq, offset)
        return True


def iter_rdb(data: bytes, config: Config, info: RdbFile, now_ms: int, databases: int,
             *, verify_checksum: bool = True, trace: Trace | None = None) -> Iterator[KeyRecord]:
    """Every key of an RDB file's bytes, in order; the envelope goes into info as it is met.
    Raises RdbLoadError at the first damage (with the offset reading stopped at). `trace`, if
    given, hears of each envelope item and of what is being read (the checker's report)."""
    sink = _Collector()
    for _ in read_records(data, config, info, now_ms, databases, sink,
                          verify_checksum=verify_checksum, trace=trace):
        record = sink.record
        assert record is not None
        yield record


def read_records(data: bytes, config: Config, info: RdbFile, now_ms: int, databases: int,
                 sink: RecordSink, *, verify_checksum: bool = True,
                 trace: Trace | None = None) -> Iterator[None]:
    """Read an RDB file's bytes, handing every key to `sink` in order and yielding when it asks
    to pause; the envelope goes into info as it is met. Raises RdbLoadError at the first damage
    (with the offset reading stopped at). A key is one native call, not a tuple per key: a
    file holds millions."""
    if trace is not None:
        trace("doing", 0, "check-header")
    # The value codecs read a few settings per value: the server's Config answers through a
    # Python method, its dict of values directly.
    settings: Any = getattr(config, "values", config)
    info.version = read_header(data)
    r = RdbReader(data, 9)
    string = r.string
    end_of_data = len(data)
    value: Any = None
    db = 0
    expire = idle = freq = -1
    start = 9
    try:
        while True:
            if trace is not None:
                trace("doing", r.pos, "read-type")
            pos = r.pos
            if pos >= end_of_data:
                raise RdbError("unexpected end of data", pos)
            op = data[pos]
            r.pos = pos + 1
            if op == 0 and trace is None:
                # The common record, a string key holding a string, read without the dispatch;
                # plain strings of up to 16383 bytes without a call per string.
                # A string under 64 bytes inline (no tuple, no boxed position), then up to
                # 16383 bytes through _plain_string, then anything else through the reader.
                pos += 1
                n = data[pos] if pos < end_of_data else 0xFF
                if n < 0x40 and pos + 1 + n <= end_of_data:
                    key = data[pos + 1:pos + 1 + n]
                    pos += 1 + n
                else:
                    key, pos = _plain_string(data, pos, end_of_data)
                    if pos < 0:
                        key = string()
                        pos = r.pos
                n = data[pos] if pos < end_of_data else 0xFF
                if n < 0x40 and pos + 1 + n <= end_of_data:
                    value = data[pos + 1:pos + 1 + n]
                    r.pos = pos + 1 + n
                else:
                    value, pos2 = _plain_string(data, pos, end_of_data)
                    if pos2 < 0:
                        r.pos = pos
                        value = string()
                    else:
                        r.pos = pos2
                if sink.add(db, key, 0, value, expire, idle, freq, start):
                    yield None
                expire = idle = freq = -1
                start = r.pos
                continue
            if op == OP_EXPIRETIME_MS:
                expire = r.millis()
                continue
            if op == OP_EXPIRETIME:
                expire = r.seconds() * 1000
                continue
            if op == OP_FREQ:
                freq = r.raw(1)[0]
                continue
            if op == OP_IDLE:
                idle = r.length()
                continue
            if op == OP_EOF:
                break
            if op == OP_SELECTDB:
                db = r.length()
                if db >= databases:
                    raise RdbLoadError(
                        f"FATAL: Data file was created with a Redis server configured to handle "
                        f"more than {databases} databases. Exiting", r.pos)
                start = r.pos
                if trace is not None:
                    trace("selectdb", r.pos, db)
                continue
            if op == OP_RESIZEDB:
                info.resize[db] = (r.length(), r.length())
                start = r.pos
                if trace is not None:
                    trace("resizedb", r.pos, info.resize[db])
                continue
            if op == OP_SLOT_INFO:
                r.length()
                r.length()
                r.length()
                start = r.pos
                continue
            if op == OP_AUX:
                if trace is not None:
                    trace("doing", r.pos, "read-aux")
                aux_name = r.string()
                aux_value = r.string()
                if aux_name == EXTRAS_AUX_NAME:
                    extras_db, extras_key, blob = parse_extras_aux(aux_value)
                    if extras_db >= databases:
                        raise RdbError("Stream extras for a database out of range", start)
                    if sink.add(extras_db, extras_key, EXTRAS_RECORD, blob, -1, -1, -1, start):
                        yield None
                else:
                    info.aux.append((aux_name, aux_value))
                start = r.pos
                if trace is not None:
                    trace("aux", r.pos, (aux_name, aux_value))
                continue
            if op == OP_MODULE_AUX:
                raise RdbLoadError(
                    "The RDB file contains AUX module data I can't load: modules are not supported",
                    r.pos - 1)
            if op == OP_FUNCTION_PRE_GA:
                raise RdbLoadError("Pre-release function format not supported.", r.pos - 1)
            if op == OP_FUNCTION2:
                raise RdbLoadError(
                    "The RDB file contains a function library (FUNCTION LOAD), and functions are "
                    "not supported: delete them in Redis (FUNCTION FLUSH) before saving", r.pos - 1)
            if trace is not None:
                trace("doing", r.pos, "read-key")
                trace("type", r.pos, op)
            key = r.string()
            if trace is not None:
                trace("doing", r.pos, "read-object-value")
                trace("key", r.pos, key)
            try:
                value = read_value(r, op, settings, now_ms)
            except EmptyKeyError:
                # Old Redis versions could save empty keys: Redis skips them, and so do we.
                info.empty_keys_skipped += 1
            else:
                if sink.add(db, key, op, value, expire, idle, freq, start):
                    yield None
            expire = idle = freq = -1
            start = r.pos
        end = r.pos
        if trace is not None:
            trace("doing", r.pos, "check-sum")
        if info.version >= 5:
            stored = int.from_bytes(r.raw(8), "little")
            info.checksum_stored = stored
            if verify_checksum and stored != 0 and config["rdbchecksum"]:
                computed = crc64(data[:end])
                info.checksum_computed = computed
                if computed != stored:
                    raise RdbLoadError(
                        f"Wrong RDB checksum expected: ({computed:x}) but got ({stored:x}). "
                        "Aborting now.", end)
        info.end = r.pos
        if trace is not None:
            trace("end", r.pos, info)
    except RdbError as exc:
        raise RdbLoadError(exc.message, exc.offset if exc.offset >= 0 else r.pos) from None
    except (IndexError, ValueError) as exc:
        raise RdbLoadError(f"Unexpected EOF reading RDB file ({exc})", r.pos) from None


@dataclass
class LoadStats:
    keys_loaded: int = 0
    keys_expired: int = 0
    # Where in the file the loading stood at its last pause (INFO's loading_loaded_bytes).
    loaded_bytes: int = 0
    info: RdbFile = field(default_factory=RdbFile)


class _KeyspaceSink(RecordSink):
    """Puts each key read into the keyspace (with its TTL and access data), skipping keys
    already expired as a master does (a replica, keep_expired, keeps them); asks for a pause
    every `chunk` keys."""

    def __init__(self, keyspace: Keyspace, stats: LoadStats, now: int, chunk: int,
                 keep_expired: bool = False) -> None:
        self.keep_expired = keep_expired
        self.dbs = keyspace.dbs
        self.stats = stats
        self.now = now
        self.chunk = chunk
        self.count = 0
        self.lru_clock: int = keyspace.lru_clock
        self.lfu: bool = keyspace.lfu
        self.minutes = keyspace.lfu_minutes()
        from server.commands.hash_expire import schedule  # (imports this module's users)

        self.schedule: Callable[[int, bytes, Hash], None] = schedule

    def add(self, db_index: int, key: bytes, rdb_type: int, value: Any, expire: int, idle: int,
            freq: int, offset: int) -> bool:
        if rdb_type == EXTRAS_RECORD:
            stream = self.dbs[db_index].data.get(key)
            if type(stream) is Stream:  # (not when the key was skipped as expired)
                try:
                    apply_stream_extras(stream, value)
                except RdbError as exc:
                    raise RdbLoadError(exc.message, offset) from None
            return False
        if expire != -1 and expire < self.now and not self.keep_expired:
            self.stats.keys_expired += 1
            return False
        db = self.dbs[db_index]
        # One lookup, not a test then a store: with millions of keys, each is a cache miss.
        if db.data.setdefault(key, value) is not value:
            raise RdbLoadError(f"RDB has duplicated key '{key.decode('utf-8', 'replace')}' in "
                               f"DB {db_index}", offset)
        if expire != -1:
            db.expires[key] = expire
        if type(value) is bytes:
            if self.lfu:
                db.access[key] = (self.minutes << 8) | (freq if freq != -1 else 5)
            elif idle != -1:
                db.access[key] = self.lru_clock - idle
        else:
            if self.lfu:
                value.lru = (self.minutes << 8) | (freq if freq != -1 else 5)
            else:
                value.lru = self.lru_clock - idle if idle != -1 else self.lru_clock
            if type(value) is Hash and value.min_expire() is not None:
                # Fields with a time to live join the active expiry cycle's schedule.
                self.schedule(db_index, key, value)
        self.count += 1
        if self.count >= self.chunk:
            self.stats.keys_loaded += self.count
            self.stats.loaded_bytes = offset
            self.count = 0
            return True
        return False


def load_rdb(data: bytes, keyspace: Keyspace, config: Config, stats: LoadStats,
             *, chunk: int = 1000, keep_expired: bool = False) -> Iterator[None]:
    """Load a file's bytes into an empty keyspace, yielding every `chunk` keys so that the
    caller can serve the event loop (clients get -LOADING). Keys already expired are skipped, as
    a master does, unless keep_expired (a replica keeps them until its master's DEL). Raises
    RdbLoadError; what was loaded before the damage stays for the caller to discard."""
    sink = _KeyspaceSink(keyspace, stats, int(time.time() * 1000), chunk, keep_expired)
    yield from read_records(data, config, stats.info, sink.now, len(keyspace.dbs), sink)
    stats.keys_loaded += sink.count


def is_short_read(exc: RdbLoadError, size: int) -> bool:
    text = exc.message.lower()
    return exc.offset >= size or "eof" in text or "end of data" in text


def rdb_error_text(path: str, exc: RdbLoadError, size: int) -> str:
    """What start-up logs before it stops: Redis's words, with the file and the offset."""
    if exc.message.startswith("Wrong RDB checksum"):
        what = f"Wrong RDB checksum in the RDB file {path} at offset {exc.offset}: {exc.message}"
    elif is_short_read(exc, size):
        what = (f"Short read or OOM loading DB. Unrecoverable error, aborting now. The RDB file "
                f"{path} ends too soon (file size {size}): {exc.message} at offset {exc.offset}")
    else:
        what = (f"Bad file format loading the RDB file {path} at offset {exc.offset}: "
                f"{exc.message}. Unrecoverable error, aborting now")
    return f"{what}. Nothing was overwritten; rivulet-check-rdb {path} reports what the file holds."
