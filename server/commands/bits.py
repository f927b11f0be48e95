"""Bitmap commands: SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP, BITFIELD, BITFIELD_RO.

Bit 0 is the most significant bit of a string's first byte, as in Redis. SETBIT and BITFIELD
edit the string in place, as a buffer the keyspace holds until another command needs the value
as `bytes` (server/keyspace.py), so a write costs the bytes it changes, not a copy of the
bitmap. Reads and BITOP turn the bytes they look at into one Python int and let its C-level
operations (bit_count, bit_length, &, |, ^) do the per-byte work. Argument checks run in bitops.c's order (Redis 7.4), because the
first failing check decides which error a client sees.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from protocol.numbers import parse_int, string2ll
from protocol.reply import ErrorReply
from server import popcounts
from server.command_table import command, key_spec, run_of
from server.commands.runs import announce_calls, run_end
from server.keyspace import STRING_KEY_COST, Database
from server.notify import NOTIFY_GENERIC, NOTIFY_STRING, notify_keyspace_event

if TYPE_CHECKING:
    from server.connection import Client

SYNTAX_ERROR = ErrorReply("ERR syntax error")
_OFFSET_ERROR = ErrorReply("ERR bit offset is not an integer or out of range")
_BIT_VALUE_ERROR = ErrorReply("ERR bit is not an integer or out of range")
_BITPOS_BIT_ERROR = ErrorReply("ERR The bit argument must be 1 or 0.")
_NOT_ONE_SOURCE = ErrorReply("ERR BITOP NOT must be called with a single source key.")
_BITFIELD_TYPE_ERROR = ErrorReply("ERR Invalid bitfield type. Use something like i16 u8. Note that "
                                  "u64 is not supported but i64 is.")
_OVERFLOW_TYPE_ERROR = ErrorReply("ERR Invalid OVERFLOW type specified")
_RO_ONLY_GET = ErrorReply("ERR BITFIELD_RO only supports the GET subcommand")

_U64 = (1 << 64) - 1
_KEY_ARG = {"name": "key", "type": "key", "key_spec_index": 0}
_UNIT_ARG = {"name": "unit", "type": "oneof", "optional": True, "since": "7.0.0", "arguments": (
    {"name": "byte", "type": "pure-token", "token": "BYTE"},
    {"name": "bit", "type": "pure-token", "token": "BIT"})}
_UNIT_HISTORY = (("7.0.0", "Added the `BYTE|BIT` option."),)


def _read_string(db: Database, key: bytes) -> bytes | bytearray | None:
    """A read lookup (Redis's lookupKeyRead): a miss publishes `keymiss`. A string being edited
    in place comes as its buffer: the readers here compute from it and keep nothing."""
    return db.read_str(key)


def bit_offset(client: Client, arg: bytes, bits: int = 0) -> int:
    """A bit offset argument (Redis's getBitOffsetFromArgument). With `bits` (BITFIELD), `#n`
    means n * bits; the product wraps at 64 bits as the C multiplication does. The offset's byte
    must fit in proto-max-bulk-len, except for what the AOF replays."""
    if 0 < len(arg) < 19 and arg.isdigit() and (arg[0] != 0x30 or len(arg) == 1):
        value = int(arg)  # the common case: plain digits, no leading zero, within 64 bits
    else:
        hashed = bits > 0 and arg[:1] == b"#"
        parsed = string2ll(arg[1:] if hashed else arg)
        if parsed is None:
            raise _OFFSET_ERROR
        value = _int64(parsed * bits) if hashed else parsed
    if value < 0 or (not client.is_loader
                     and value >> 3 >= client.server.config["proto-max-bulk-len"]):
        raise _OFFSET_ERROR
    return value


def _bit_window(value: bytes | bytearray, first: int, last: int) -> int:
    """Bits first..last (inclusive, in range) of value as an int, bit `last` the lowest."""
    chunk = int.from_bytes(value[first >> 3:(last >> 3) + 1], "big")
    chunk >>= 7 - (last & 7)
    return chunk & ((1 << (last - first + 1)) - 1)


# --- SETBIT / GETBIT ------------------------------------------------------------------------------


@command("setbit", 4, "write denyoom", keys=(1, 1, 1), group="bitmap", since="2.2.0",
         summary="Sets or clears the bit at offset of the string value. Creates the key if it "
         "doesn't exist.",
         key_specs=key_spec(("RW", "ACCESS", "UPDATE")),
         arguments=(_KEY_ARG, {"name": "offset", "type": "integer"},
                    {"name": "value", "type": "integer"}))
def setbit(client: Client, argv: list[bytes]) -> Any:
    offset = bit_offset(client, argv[2])
    flag = argv[3]
    if flag == b"1" or flag == b"0":
        on = flag[0] - 0x30
    else:
        on = parse_int(flag, _BIT_VALUE_ERROR)
        if on != 0 and on != 1:
            raise _BIT_VALUE_ERROR
    db = client.db
    key = argv[1]
    current = db.get_str(key)
    byte = offset >> 3
    mask = 0x80 >> (offset & 7)
    if current is None:
        bits = bytearray(byte + 1)
        bits[byte] = mask if on else 0
        db.add(key, bits)
        db.encodings[key] = b"raw"
        notify_keyspace_event(client, NOTIFY_STRING, b"setbit", key, db.index)
        client.propagate(argv)
        return 0
    size = len(current)
    if byte >= size:
        # Growing the string is a change even when the bit stays clear, as in Redis.
        bits = db.string_buffer(key, current)
        popcounts.forget(bits)
        bits += bytes(byte + 1 - size)
        bits[byte] = mask if on else 0
        db.string_edited(key, byte + 1 - size)
        notify_keyspace_event(client, NOTIFY_STRING, b"setbit", key, db.index)
        client.propagate(argv)
        return 0
    old = current[byte]
    was = 1 if old & mask else 0
    if was == on:
        # Redis unshares the string (raw from then on) even when the bit is already right.
        if type(current) is bytes:
            db.encodings[key] = b"raw"
        return was
    bits = db.string_buffer(key, current)
    if bits is not current:
        popcounts.move(current, bits, 0)
    bits[byte] = old ^ mask
    popcounts.adjust(bits, 1 if on else -1)
    db.string_edited(key, 0)
    notify_keyspace_event(client, NOTIFY_STRING, b"setbit", key, db.index)
    client.propagate(argv)
    return was


@run_of("setbit")
def setbit_run(client: Client, commands: list[list[bytes]], start: int) -> int:
    """Consecutive `SETBIT key offset 0|1` to one string within its length, as a client pipelines
    them: the dispatch checks and the lookup once for the run. Each call answers, counts and is
    logged as it would alone; another command, key or spelling, a growing offset or any unusual
    argument ends the run."""
    last = run_end(commands, start, 4, 4)
    if last - start < 2:
        return 0
    key = commands[start][1]
    db = client.db
    found = db.data.get(key)
    if type(found) is not bytes and type(found) is not bytearray:
        return 0
    current = db.get_str(key)
    if current is None:
        return 0  # expired on this lookup
    size = len(current)
    offsets: list[int] = []  # each call's offset, parsed once
    end = start
    while end < last:
        argv = commands[end]
        arg = argv[2]
        flag = argv[3]
        if (not 0 < len(arg) < 19 or not arg.isdigit() or (arg[0] == 0x30 and len(arg) > 1)
                or (flag != b"0" and flag != b"1")):
            break
        offset = int(arg)
        if offset >> 3 >= size:
            break
        offsets.append(offset)
        end += 1
    done = end - start
    if done < 2:
        return 0
    bits = db.string_buffer(key, current)
    if bits is not current:
        popcounts.move(current, bits, 0)
    replies: list[bytes] = []
    changing: list[list[bytes]] = []  # the calls that flipped their bit
    delta = 0
    for i in range(start, end):
        argv = commands[i]
        offset = offsets[i - start]
        byte = offset >> 3
        mask = 0x80 >> (offset & 7)
        on = argv[3][0] - 0x30
        old = bits[byte]
        was = 1 if old & mask else 0
        replies.append(b":1\r\n" if was else b":0\r\n")
        if was != on:
            bits[byte] = old ^ mask
            changing.append(argv)
            delta += 1 if on else -1
    if changing:
        popcounts.adjust(bits, delta)
        db.string_edited(key, 0)
        client.keyspace.dirty += len(changing) - 1  # one change per changing call, as one by one
        announce_calls(client, db, key, changing, 0, len(changing), NOTIFY_STRING, b"setbit")
    client.out.append(b"".join(replies))
    return done


@command("getbit", 3, "readonly fast", keys=(1, 1, 1), group="bitmap", since="2.2.0",
         summary="Returns a bit value by offset.",
         key_specs=key_spec(("RO", "ACCESS")),
         arguments=(_KEY_ARG, {"name": "offset", "type": "integer"}))
def getbit(client: Client, argv: list[bytes]) -> Any:
    offset = bit_offset(client, argv[2])
    value = _read_string(client.db, argv[1])
    byte = offset >> 3
    if value is None or byte >= len(value):
        return 0
    return 1 if value[byte] & (0x80 >> (offset & 7)) else 0


# --- BITCOUNT / BITPOS ----------------------------------------------------------------------------


def _unit_is_bit(arg: bytes) -> bool:
    unit = arg.lower()
    if unit == b"bit":
        return True
    if unit == b"byte":
        return False
    raise SYNTAX_ERROR


def _clamp(start: int, end: int, total: int) -> tuple[int, int]:
    """Negative indexes counted from the end, then both clamped into [0, total - 1]."""
    if start < 0:
        start = total + start
    if end < 0:
        end = total + end
    if start < 0:
        start = 0
    if end < 0:
        end = 0
    if end >= total:
        end = total - 1
    return start, end


@command("bitcount", -2, "readonly", keys=(1, 1, 1), group="bitmap", since="2.6.0",
         summary="Counts the number of set bits (population counting) in a string.",
         complexity="O(N)", key_specs=key_spec(("RO", "ACCESS")), history=_UNIT_HISTORY,
         arguments=(_KEY_ARG, {"name": "range", "type": "block", "optional": True, "arguments": (
             {"name": "start", "type": "integer"}, {"name": "end", "type": "integer"},
             _UNIT_ARG)}))
def bitcount(client: Client, argv: list[bytes]) -> Any:
    argc = len(argv)
    if argc == 2:
        whole = _read_string(client.db, argv[1])
        return 0 if whole is None else popcounts.whole(whole)
    if argc != 4 and argc != 5:
        raise SYNTAX_ERROR
    # 7.4 parses the range before looking the key up (7.0 looked it up first, answering 0 for a
    # missing key and WRONGTYPE before any argument error).
    start = parse_int(argv[2])
    end = parse_int(argv[3])
    is_bit = argc == 5 and _unit_is_bit(argv[4])
    value = _read_string(client.db, argv[1])
    if value is None or (start < 0 and end < 0 and start > end):
        return 0
    total = len(value) * 8 if is_bit else len(value)
    start, end = _clamp(start, end, total)
    if start > end:
        return 0
    if start == 0 and end == total - 1:
        return popcounts.whole(value)
    if is_bit:
        return _bit_window(value, start, end).bit_count()
    return popcounts.popcount(value[start:end + 1])


@command("bitpos", -3, "readonly", keys=(1, 1, 1), group="bitmap", since="2.8.7",
         summary="Finds the first set (1) or clear (0) bit in a string.",
         complexity="O(N)", key_specs=key_spec(("RO", "ACCESS")), history=_UNIT_HISTORY,
         arguments=(_KEY_ARG, {"name": "bit", "type": "integer"},
                    {"name": "range", "type": "block", "optional": True, "arguments": (
                        {"name": "start", "type": "integer"},
                        {"name": "end-unit-block", "type": "block", "optional": True,
                         "arguments": ({"name": "end", "type": "integer"}, _UNIT_ARG)})}))
def bitpos(client: Client, argv: list[bytes]) -> Any:
    bit = parse_int(argv[2])
    if bit != 0 and bit != 1:
        raise _BITPOS_BIT_ERROR
    argc = len(argv)
    end_given = argc >= 5
    if argc == 3:
        value = _read_string(client.db, argv[1])
        if value is None:
            return -1 if bit else 0
        first, last = 0, len(value) * 8 - 1
    elif argc <= 6:
        # As BITCOUNT, 7.4 parses everything before the lookup; the unit before the end.
        start = parse_int(argv[3])
        is_bit = argc == 6 and _unit_is_bit(argv[5])
        end = parse_int(argv[4]) if end_given else 0
        value = _read_string(client.db, argv[1])
        if value is None:
            return -1 if bit else 0
        size = len(value)
        if not end_given:
            end = size * 8 + 7 if is_bit else size - 1
        start, end = _clamp(start, end, size * 8 if is_bit else size)
        if start > end:
            return -1
        first, last = (start, end) if is_bit else (start * 8, end * 8 + 7)
    else:
        raise SYNTAX_ERROR
    if first > last:
        return -1  # an empty string: the range is empty
    found = _find_bit(value, first, last, bit)
    if found >= 0:
        return found
    # No clear bit: without an explicit end the string counts as zero-padded on the right.
    if bit == 1 or end_given:
        return -1
    return last + 1


def _find_bit(value: bytes | bytearray, first: int, last: int, bit: int) -> int:
    """The first bit equal to `bit` in bits first..last of value, or -1.

    Scanned in windows that double in size, so the work is proportional to how far the bit is,
    not to the length of the range."""
    span = 512
    while first <= last:
        end = min(last, first + span - 1)
        window = _bit_window(value, first, end)
        width = end - first + 1
        if bit == 0:
            window ^= (1 << width) - 1
        if window:
            return first + width - window.bit_length()
        first = end + 1
        span = min(span << 1, 1 << 22)
    return -1


# --- BITOP ----------------------------------------------------------------------------------------

_AND, _OR, _XOR, _NOT = 0, 1, 2, 3
_OPS = {b"and": _AND, b"or": _OR, b"xor": _XOR, b"not": _NOT}
_INVERTED = bytes([255 - i for i in range(256)])


@command("bitop", -4, "write denyoom", keys=(2, -1, 1), group="bitmap", since="2.6.0",
         summary="Performs bitwise operations on multiple strings, and stores the result.",
         complexity="O(N)",
         key_specs=key_spec(("OW", "UPDATE"), 2) + key_spec(("RO", "ACCESS"), 3, last=-1),
         arguments=(
             {"name": "operation", "type": "oneof", "arguments": (
                 {"name": "and", "type": "pure-token", "token": "AND"},
                 {"name": "or", "type": "pure-token", "token": "OR"},
                 {"name": "xor", "type": "pure-token", "token": "XOR"},
                 {"name": "not", "type": "pure-token", "token": "NOT"})},
             {"name": "destkey", "type": "key", "key_spec_index": 0},
             {"name": "key", "type": "key", "key_spec_index": 1, "multiple": True}))
def bitop(client: Client, argv: list[bytes]) -> Any:
    op = _OPS.get(argv[1].lower(), -1)
    if op < 0:
        raise SYNTAX_ERROR
    if op == _NOT and len(argv) != 4:
        raise _NOT_ONE_SOURCE
    db = client.db
    sources: list[bytes] = []
    for key in argv[3:]:
        value = db.read_typed(key, bytes)
        sources.append(b"" if value is None else value)
    size = max(len(s) for s in sources)
    target = argv[2]
    if size == 0:
        # Every source empty or missing: the destination is deleted, not set to "".
        if db.delete(target):
            notify_keyspace_event(client, NOTIFY_GENERIC, b"del", target, db.index)
            client.propagate(argv)
        return 0
    if op == _NOT:
        db.set(target, sources[0].translate(_INVERTED))  # one pass, no int round trip
        notify_keyspace_event(client, NOTIFY_STRING, b"set", target, db.index)
        client.propagate(argv)
        return size
    # Little-endian ints: a shorter source's missing bytes are high zero bits, which is the
    # zero padding on the right that Redis applies.
    result = int.from_bytes(sources[0], "little")
    for src in sources[1:]:
        operand = int.from_bytes(src, "little")
        if op == _AND:
            result &= operand
        elif op == _OR:
            result |= operand
        else:
            result ^= operand
    db.set(target, result.to_bytes(size, "little"))
    notify_keyspace_event(client, NOTIFY_STRING, b"set", target, db.index)
    client.propagate(argv)
    return size


# --- BITFIELD / BITFIELD_RO -----------------------------------------------------------------------

_GET, _SET, _INCRBY = 0, 1, 2
_WRAP, _SAT, _FAIL = 0, 1, 2
_OVERFLOWS = {b"wrap": _WRAP, b"sat": _SAT, b"fail": _FAIL}


def _bitfield_type(arg: bytes) -> tuple[bool, int]:
    """(signed, bits) of a type argument: i1..i64 or u1..u63 (RESP integers are signed)."""
    sign = arg[:1]
    if sign != b"i" and sign != b"u":
        raise _BITFIELD_TYPE_ERROR
    digits = arg[1:]
    nul = digits.find(b"\0")  # Redis reads the width as a C string
    bits = string2ll(digits if nul < 0 else digits[:nul])
    signed = sign == b"i"
    if bits is None or bits < 1 or bits > (64 if signed else 63):
        raise _BITFIELD_TYPE_ERROR
    return signed, bits


def _int64(value: int) -> int:
    """value wrapped to a signed 64-bit integer, as C arithmetic on int64_t/uint64_t leaves it."""
    return ((value + (1 << 63)) & _U64) - (1 << 63)


def _signed_overflow(value: int, incr: int, bits: int, overflow: int) -> tuple[int, int]:
    """(1 overflow / -1 underflow / 0, the value to store) for value + incr in a signed field.

    Redis's checkSignedBitfieldOverflow, with its int64 wrap-arounds: its maxincr is computed
    in 64 bits, so a SET of a value near INT64_MIN into a narrow field counts as an overflow
    (and saturates to the maximum).
    """
    high = (1 << (bits - 1)) - 1
    low = -high - 1
    max_incr = _int64(high - value)
    min_incr = _int64(low - value)
    if (value > high or (bits != 64 and incr > max_incr)
            or (value >= 0 and incr > 0 and incr > max_incr)):
        direction = 1
    elif (value < low or (bits != 64 and incr < min_incr)
            or (value < 0 and incr < 0 and incr < min_incr)):
        direction = -1
    else:
        return 0, value + incr
    if overflow == _SAT:
        return direction, high if direction > 0 else low
    # WRAP (and FAIL, whose value is not used): the low bits, sign-extended.
    wrapped = (value + incr) & ((1 << bits) - 1)
    return direction, wrapped - (1 << bits) if wrapped >> (bits - 1) else wrapped


def _unsigned_overflow(value: int, incr: int, bits: int, overflow: int) -> tuple[int, int]:
    """As _signed_overflow for an unsigned field (Redis's checkUnsignedBitfieldOverflow)."""
    high = (1 << bits) - 1
    if value > high or (incr > 0 and incr > _int64(high - value)):
        direction = 1
    elif incr < 0 and incr < _int64(-value):
        direction = -1
    else:
        return 0, value + incr
    if overflow == _SAT:
        return direction, high if direction > 0 else 0
    return direction, (value + incr) & high


class _Op:
    __slots__ = ("code", "signed", "bits", "offset", "arg", "overflow")

    def __init__(self, code: int, signed: bool, bits: int, offset: int, arg: int,
                 overflow: int) -> None:
        self.code = code
        self.signed = signed
        self.bits = bits
        self.offset = offset
        self.arg = arg
        self.overflow = overflow


def _read_field(data: bytes | bytearray, op: _Op, base: int = 0) -> int:
    """The field op names, from data (byte `base` of the string onwards) zero-padded on the
    right."""
    first = (op.offset >> 3) - base
    nbytes = ((op.offset + op.bits - 1) >> 3) - (op.offset >> 3) + 1
    raw = data[first:first + nbytes]
    chunk = int.from_bytes(raw, "big") << ((nbytes - len(raw)) << 3)
    value = (chunk >> ((nbytes << 3) - (op.offset & 7) - op.bits)) & ((1 << op.bits) - 1)
    if op.signed and value >> (op.bits - 1):
        value -= 1 << op.bits
    return value


def _write_field(data: bytearray, op: _Op, value: int, base: int) -> None:
    first = (op.offset >> 3) - base
    nbytes = ((op.offset + op.bits - 1) >> 3) - (op.offset >> 3) + 1
    shift = (nbytes << 3) - (op.offset & 7) - op.bits
    mask = ((1 << op.bits) - 1) << shift
    chunk = int.from_bytes(data[first:first + nbytes], "big")
    chunk = (chunk & ~mask) | ((value << shift) & mask)
    data[first:first + nbytes] = chunk.to_bytes(nbytes, "big")


def _bitfield(client: Client, argv: list[bytes], read_only_command: bool) -> Any:
    argc = len(argv)
    ops: list[_Op] = []
    overflow = _WRAP
    writes = False
    highest = 0  # the last bit a write reaches
    j = 2
    while j < argc:
        more = argc - j - 1
        sub = argv[j].lower()
        if sub == b"get" and more >= 2:
            code = _GET
        elif sub == b"set" and more >= 3:
            code = _SET
        elif sub == b"incrby" and more >= 3:
            code = _INCRBY
        elif sub == b"overflow" and more >= 1:
            kind = _OVERFLOWS.get(argv[j + 1].lower(), -1)
            if kind < 0:
                raise _OVERFLOW_TYPE_ERROR
            overflow = kind
            j += 2
            continue
        else:
            raise SYNTAX_ERROR
        signed, bits = _bitfield_type(argv[j + 1])
        offset = bit_offset(client, argv[j + 2], bits)
        arg = 0
        if code != _GET:
            writes = True
            highest = max(highest, offset + bits - 1)
            arg = parse_int(argv[j + 3])
        ops.append(_Op(code, signed, bits, offset, arg, overflow))
        j += 3 if code == _GET else 4

    db = client.db
    key = argv[1]
    if not writes:
        found = _read_string(db, key)
        data: bytes | bytearray = b"" if found is None else found
        return [_read_field(data, op) for op in ops]
    if read_only_command:
        raise _RO_ONLY_GET  # before the key's type is checked
    current = db.get_str(key)
    size = 0 if current is None else len(current)
    need = (highest >> 3) + 1
    # Creating or growing the string counts as a change for every write, as lookupStringForBitCommand's
    # dirty flag does in Redis.
    grown = current is None or need > size
    if current is None:
        buf = bytearray(need)
    else:
        buf = db.string_buffer(key, current)
        popcounts.forget(current)
        popcounts.forget(buf)
        if need > size:
            buf += bytes(need - size)
    replies: list[int | None] = []
    changes = 0
    for op in ops:
        old = _read_field(buf, op)
        if op.code == _GET:
            replies.append(old)
            continue
        if op.signed:
            # SET checks its value as an increment of 0 from it.
            base, incr = (old, op.arg) if op.code == _INCRBY else (op.arg, 0)
            direction, new = _signed_overflow(base, incr, op.bits, op.overflow)
        else:
            # An unsigned SET takes the value as C's uint64 cast does: -1 is 2**64 - 1.
            base, incr = (old, op.arg) if op.code == _INCRBY else (op.arg & _U64, 0)
            direction, new = _unsigned_overflow(base, incr, op.bits, op.overflow)
        if direction and op.overflow == _FAIL:
            replies.append(None)
            continue
        replies.append(new if op.code == _INCRBY else old)
        _write_field(buf, op, new, 0)
        if grown or old != new:
            changes += 1
    if current is None:
        if changes:
            db.add(key, buf)
        else:
            # Created, yet unchanged (every write failed its overflow check): as below.
            db.data[key] = buf
            db.keyspace.dataset_bytes += len(key) + len(buf) + STRING_KEY_COST
        db.encodings[key] = b"raw"
    elif changes:
        db.string_edited(key, len(buf) - size)
    elif grown:
        # Redis keeps the zero padding it made room with, yet counts no change: nothing is
        # logged and no WATCH fires. (The memory figure counts the padding too.)
        db.keyspace.dataset_bytes += len(buf) - size
    if changes:
        # Redis counts every field changed (dirty += changes), not one per command.
        db.keyspace.dirty += changes - 1
        notify_keyspace_event(client, NOTIFY_STRING, b"setbit", key, db.index)
        client.propagate(argv)
    return replies


_ENCODING_OFFSET = ({"name": "encoding", "type": "string"}, {"name": "offset", "type": "integer"})
_GET_BLOCK = {"token": "GET", "name": "get-block", "type": "block", "arguments": _ENCODING_OFFSET}
_OVERFLOW_BLOCK = {"token": "OVERFLOW", "name": "overflow-block", "type": "oneof", "optional": True,
                   "arguments": ({"name": "wrap", "type": "pure-token", "token": "WRAP"},
                                 {"name": "sat", "type": "pure-token", "token": "SAT"},
                                 {"name": "fail", "type": "pure-token", "token": "FAIL"})}
_WRITE_OPERATION = {"name": "write-operation", "type": "oneof", "arguments": (
    {"token": "SET", "name": "set-block", "type": "block",
     "arguments": (*_ENCODING_OFFSET, {"name": "value", "type": "integer"})},
    {"token": "INCRBY", "name": "incrby-block", "type": "block",
     "arguments": (*_ENCODING_OFFSET, {"name": "increment", "type": "integer"})})}
_BITFIELD_OPERATION = {"name": "operation", "type": "oneof", "multiple": True, "optional": True,
                       "arguments": (_GET_BLOCK, {"name": "write", "type": "block",
                                                  "arguments": (_OVERFLOW_BLOCK, _WRITE_OPERATION)})}


@command("bitfield", -2, "write denyoom", keys=(1, 1, 1), group="bitmap", since="3.2.0",
         summary="Performs arbitrary bitfield integer operations on strings.",
         complexity="O(1) for each subcommand specified",
         key_specs=key_spec(("RW", "UPDATE", "ACCESS", "VARIABLE_FLAGS"),
                            notes="This command allows both access and modification of the key"),
         arguments=(_KEY_ARG, _BITFIELD_OPERATION))
def bitfield(client: Client, argv: list[bytes]) -> Any:
    return _bitfield(client, argv, False)


@command("bitfield_ro", -2, "readonly fast", keys=(1, 1, 1), group="bitmap", since="6.0.0",
         summary="Performs arbitrary read-only bitfield integer operations on strings.",
         complexity="O(1) for each subcommand specified",
         key_specs=key_spec(("RO", "ACCESS")),
         arguments=(_KEY_ARG, {"token": "GET", "name": "get-block", "type": "block",
                               "optional": True, "multiple": True, "multiple_token": True,
                               "arguments": _ENCODING_OFFSET}))
def bitfield_ro(client: Client, argv: list[bytes]) -> Any:
    return _bitfield(client, argv, True)
