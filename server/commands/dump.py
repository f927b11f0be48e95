"""DUMP, RESTORE and RESTORE-ASKING: values in Redis's serialization format (server/rdb/)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from protocol.numbers import parse_int
from protocol.reply import OK, ErrorReply
from server.command_table import command
from server.commands import hashes as hash_commands
from server.keyspace import EXPIRY_DELETE, now_ms
from server.rdb.payload import create_payload, load_payload, verify_payload
from server.rdb.primitives import RdbError

if TYPE_CHECKING:
    from server.connection import Client

SYNTAX_ERROR = ErrorReply("ERR syntax error")
BUSYKEY = ErrorReply("BUSYKEY Target key name already exists.")
BAD_PAYLOAD = ErrorReply("ERR DUMP payload version or checksum are wrong")
BAD_DATA = ErrorReply("ERR Bad data format")

# What Redis 7.4's command table (src/commands/*.json) says about these commands.
# fmt: off
META: dict[str, dict[str, Any]] = {'dump': {'arity': 2,
          'flags': 'readonly',
          'group': 'generic',
          'since': '2.6.0',
          'summary': 'Returns a serialized representation of the value stored at a key.',
          'complexity': 'O(1) to access the key and additional O(N*M) to serialize it, where N is the '
                        'number of Redis objects composing the value and M their average size. For '
                        'small string values the time complexity is thus O(1)+O(1*M) where M is small, '
                        'so simply O(1).',
          'history': (),
          'key_specs': ({'flags': ('RO', 'ACCESS'),
                         'begin_search': {'index': {'pos': 1}},
                         'find_keys': {'range': {'lastkey': 0, 'step': 1, 'limit': 0}}},),
          'arguments': ({'name': 'key', 'type': 'key', 'key_spec_index': 0},),
          'tips': ('nondeterministic_output',),
          'doc_flags': (),
          'acl': ('@keyspace',)},
 'restore': {'arity': -4,
             'flags': 'write denyoom',
             'group': 'generic',
             'since': '2.6.0',
             'summary': 'Creates a key from the serialized representation of a value.',
             'complexity': 'O(1) to create the new key and additional O(N*M) to reconstruct the '
                           'serialized value, where N is the number of Redis objects composing the '
                           'value and M their average size. For small string values the time complexity '
                           'is thus O(1)+O(1*M) where M is small, so simply O(1). However for sorted '
                           'set values the complexity is O(N*M*log(N)) because inserting values into '
                           'sorted sets is O(log(N)).',
             'history': (('3.0.0', 'Added the `REPLACE` modifier.'),
                         ('5.0.0', 'Added the `ABSTTL` modifier.'),
                         ('5.0.0', 'Added the `IDLETIME` and `FREQ` options.')),
             'key_specs': ({'flags': ('OW', 'UPDATE'),
                            'begin_search': {'index': {'pos': 1}},
                            'find_keys': {'range': {'lastkey': 0, 'step': 1, 'limit': 0}}},),
             'arguments': ({'name': 'key', 'type': 'key', 'key_spec_index': 0},
                           {'name': 'ttl', 'type': 'integer'},
                           {'name': 'serialized-value', 'type': 'string'},
                           {'name': 'replace',
                            'token': 'REPLACE',
                            'type': 'pure-token',
                            'optional': True,
                            'since': '3.0.0'},
                           {'name': 'absttl',
                            'token': 'ABSTTL',
                            'type': 'pure-token',
                            'optional': True,
                            'since': '5.0.0'},
                           {'token': 'IDLETIME',
                            'name': 'seconds',
                            'type': 'integer',
                            'optional': True,
                            'since': '5.0.0'},
                           {'token': 'FREQ',
                            'name': 'frequency',
                            'type': 'integer',
                            'optional': True,
                            'since': '5.0.0'}),
             'tips': (),
             'doc_flags': (),
             'acl': ('@keyspace', '@dangerous')},
 'restore-asking': {'arity': -4,
                    'flags': 'write denyoom asking',
                    'group': 'server',
                    'since': '3.0.0',
                    'summary': 'An internal command for migrating keys in a cluster.',
                    'tips': (),
                    'doc_flags': ('syscmd',),
                    'acl': ('@keyspace', '@dangerous')},
 'migrate': {'arity': -6,
             'flags': 'write',
             'group': 'generic',
             'since': '2.6.0',
             'summary': 'Atomically transfers a key from one Redis instance to another.',
             'complexity': 'This command actually executes a DUMP+DEL in the source instance, and a '
                           'RESTORE in the target instance. See the pages of these commands for time '
                           'complexity. Also an O(N) data transfer between the two instances is '
                           'performed.',
             'history': (('3.0.0', 'Added the `COPY` and `REPLACE` options.'),
                         ('3.0.6', 'Added the `KEYS` option.'),
                         ('4.0.7', 'Added the `AUTH` option.'),
                         ('6.0.0', 'Added the `AUTH2` option.')),
             'key_specs': ({'flags': ('RW', 'ACCESS', 'DELETE'),
                            'begin_search': {'index': {'pos': 3}},
                            'find_keys': {'range': {'lastkey': 0, 'step': 1, 'limit': 0}}},
                           {'flags': ('RW', 'ACCESS', 'DELETE', 'INCOMPLETE'),
                            'begin_search': {'keyword': {'keyword': 'KEYS', 'startfrom': -2}},
                            'find_keys': {'range': {'lastkey': -1, 'step': 1, 'limit': 0}}}),
             'arguments': ({'name': 'host', 'type': 'string'},
                           {'name': 'port', 'type': 'integer'},
                           {'name': 'key-selector',
                            'type': 'oneof',
                            'arguments': ({'name': 'key', 'type': 'key', 'key_spec_index': 0},
                                          {'name': 'empty-string',
                                           'type': 'pure-token',
                                           'token': '""'})},
                           {'name': 'destination-db', 'type': 'integer'},
                           {'name': 'timeout', 'type': 'integer'},
                           {'name': 'copy',
                            'token': 'COPY',
                            'type': 'pure-token',
                            'optional': True,
                            'since': '3.0.0'},
                           {'name': 'replace',
                            'token': 'REPLACE',
                            'type': 'pure-token',
                            'optional': True,
                            'since': '3.0.0'},
                           {'name': 'authentication',
                            'type': 'oneof',
                            'optional': True,
                            'arguments': ({'token': 'AUTH',
                                           'name': 'auth',
                                           'display': 'password',
                                           'type': 'string',
                                           'since': '4.0.7'},
                                          {'token': 'AUTH2',
                                           'name': 'auth2',
                                           'type': 'block',
                                           'since': '6.0.0',
                                           'arguments': ({'name': 'username', 'type': 'string'},
                                                         {'name': 'password', 'type': 'string'})})},
                           {'token': 'KEYS',
                            'name': 'keys',
                            'display': 'key',
                            'type': 'key',
                            'key_spec_index': 1,
                            'optional': True,
                            'multiple': True,
                            'since': '3.0.6'}),
             'tips': ('nondeterministic_output',),
             'doc_flags': (),
             'acl': ('@keyspace', '@dangerous')}}
# fmt: on
# RESTORE-ASKING takes RESTORE's arguments, as its command file repeats them.
for _field in ("complexity", "history", "key_specs", "arguments"):
    META["restore-asking"][_field] = META["restore"][_field]


def _register(name: str, **extra: Any) -> Any:
    meta = META[name]
    return command(name, meta["arity"], meta["flags"], keys=(1, 1, 1), group=meta["group"],
                   since=meta["since"], summary=meta["summary"], complexity=meta["complexity"],
                   arguments=meta["arguments"], key_specs=meta["key_specs"], history=meta["history"],
                   tips=meta["tips"], doc_flags=meta["doc_flags"], acl=meta["acl"], **extra)


def rdb_compression(client: Client) -> bool:
    try:
        return bool(client.server.config["rdbcompression"])
    except KeyError:
        return True


@_register("dump")
def dump(client: Client, argv: list[bytes]) -> Any:
    value = client.db.read(argv[1])
    if value is None:
        return None
    return create_payload(value, client.server.config, rdb_compression(client))


def restore_command(client: Client, argv: list[bytes]) -> Any:
    """RESTORE key ttl serialized-value [REPLACE] [ABSTTL] [IDLETIME seconds] [FREQ frequency]."""
    replace = absttl = False
    idle = freq = -1
    j = 4
    argc = len(argv)
    while j < argc:
        option = argv[j].lower()
        more = argc - j - 1
        if option == b"replace":
            replace = True
        elif option == b"absttl":
            absttl = True
        elif option == b"idletime" and more >= 1 and freq == -1:
            idle = parse_int(argv[j + 1])
            if idle < 0:
                raise ErrorReply("ERR Invalid IDLETIME value, must be >= 0")
            j += 1
        elif option == b"freq" and more >= 1 and idle == -1:
            freq = parse_int(argv[j + 1])
            if freq < 0 or freq > 255:
                raise ErrorReply("ERR Invalid FREQ value, must be >= 0 and <= 255")
            j += 1
        else:
            raise SYNTAX_ERROR
        j += 1
    db = client.db
    key = argv[1]
    if not replace and db.peek(key) is not None:
        raise BUSYKEY
    ttl = parse_int(argv[2])
    if ttl < 0:
        raise ErrorReply("ERR Invalid TTL value, must be >= 0")
    payload = argv[3]
    if not verify_payload(payload):
        raise BAD_PAYLOAD
    config = client.server.config
    now = now_ms()
    try:
        value = load_payload(payload, config, now, config["sanitize-dump-payload"] != "no")
    except (RdbError, ValueError, IndexError, OverflowError):
        raise BAD_DATA from None
    deleted = db.delete(key) if replace else False
    if ttl and not absttl:
        ttl += now
    if ttl and ttl <= now and db.keyspace.expiry == EXPIRY_DELETE:
        # Already expired: the key is not created; one replaced is gone, logged as its DEL.
        if deleted:
            client.propagate([b"DEL", key])
        return OK
    db.add(key, value)
    if type(value) is hash_commands.Hash and value.ttl:
        for hook in hash_commands.schedule_hook:
            hook(db, key, value)
    if ttl:
        db.set_expire(key, ttl)
    ks = db.keyspace
    if ks.lfu:
        if freq >= 0:
            db.set_access(key, (ks.lfu_minutes() << 8) | freq)
    elif idle >= 0:
        db.set_access(key, ks.lru_clock - idle)
    if ttl and not absttl:
        # Propagated with the absolute time, so that a replay does not depend on when it runs.
        client.propagate([argv[0], key, b"%d" % ttl, *argv[3:], b"ABSTTL"])
    else:
        client.propagate(argv)
    return OK


_register("restore")(restore_command)
_register("restore-asking")(restore_command)
