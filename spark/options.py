"""Parsing and validation of every option of the `redis_streams` source and sink.

Everything is checked once, on the driver, when the query is planned, so a typo fails fast with a
message naming the option instead of surfacing later inside an executor task.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urlparse

from spark.endpoint import SENTINEL_SCHEMES, Endpoint, EndpointError, parse_sentinel_url
from spark.offsets import StreamId, id_before_timestamp


class OptionError(ValueError):
    """A `redis_streams` option is missing, unknown or malformed."""


READ_OPTIONS = {
    "url", "streams", "pattern", "startingoffsets", "endingoffsets", "startingtimestamp",
    "endingtimestamp", "maxentriespertrigger", "partitionsperstream", "batchsize", "failondataloss",
    "mode", "group", "consumer", "injectfailurekey", "path", "readfrom",
} | {"sentinelusername", "sentinelpassword", "failovertimeout"}
WRITE_OPTIONS = {
    "url", "stream", "idcolumn", "maxlen", "approximate", "idempotent", "idempotentmode", "writeid",
    "markerprefix", "markerttl", "pipelinesize", "injectfailurekey", "path",
} | {"sentinelusername", "sentinelpassword", "failovertimeout"}

# Where reads go (option readFrom): the master, or a replica chosen as redis-py's Sentinel
# slave_for does, falling back to the master when no replica is available.
READ_FROM = ("master", "replica")

# How idempotent writes are made exactly once: XADD IDMP where the server has it (Redis 8.6+,
# Rivulet), else a marker key written in the same MULTI/EXEC as the partition's entries.
IDEMPOTENT_MODES = ("auto", "idmp", "marker")

# A bound for one stream: "earliest", "latest", or a concrete ID.
Bound = str | StreamId


def _lower(options: Mapping[str, str]) -> dict[str, str]:
    # Spark hands data sources a case-insensitive map; normalise so lookups are plain dict gets.
    return {str(k).lower(): str(v) for k, v in options.items()}


# Options Spark itself puts in the map it hands to the data source.
SPARK_OPTIONS = {"path", "checkpointlocation", "queryname", "mergeschema"}


def _check_unknown(opts: dict[str, str], allowed: set[str], what: str) -> None:
    unknown = sorted(set(opts) - allowed - SPARK_OPTIONS)
    if unknown:
        raise OptionError(
            f"redis_streams: unknown {what} option(s) {', '.join(unknown)}; "
            f"known: {', '.join(sorted(allowed - SPARK_OPTIONS))}"
        )


def _int(opts: dict[str, str], name: str, default: int | None, minimum: int = 1) -> int | None:
    raw = opts.get(name.lower())
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise OptionError(f"redis_streams: option {name} must be an integer, got {raw!r}") from None
    if value < minimum:
        raise OptionError(f"redis_streams: option {name} must be >= {minimum}, got {value}")
    return value


def _bool(opts: dict[str, str], name: str, default: bool) -> bool:
    raw = opts.get(name.lower())
    if raw is None:
        return default
    low = raw.strip().lower()
    if low in ("true", "1", "yes"):
        return True
    if low in ("false", "0", "no"):
        return False
    raise OptionError(f"redis_streams: option {name} must be true or false, got {raw!r}")


def _url(opts: dict[str, str]) -> str:
    url = opts.get("url", "redis://localhost:6379/0")
    parsed = urlparse(url)
    if parsed.scheme in SENTINEL_SCHEMES:
        try:
            parse_sentinel_url(url)
        except EndpointError as exc:
            raise OptionError(f"redis_streams: option url: {exc}") from None
        return url
    if parsed.scheme not in ("redis", "rediss", "unix"):
        raise OptionError(
            f"redis_streams: option url must look like redis://[user:pass@]host:port/db or "
            f"sentinel://host:port,host:port/service[/db], got {url!r}"
        )
    if parsed.scheme != "unix":
        try:
            parsed.port  # noqa: B018 -- raises on a non-numeric port
        except ValueError:
            raise OptionError(f"redis_streams: bad port in url {url!r}") from None
        db = parsed.path.lstrip("/")
        if db and not db.isdigit():
            raise OptionError(f"redis_streams: the database in url {url!r} must be a number")
    return url


def _endpoint(opts: dict[str, str]) -> Endpoint:
    url = _url(opts)
    sentinel_auth = {k: opts[k] for k in ("sentinelusername", "sentinelpassword") if opts.get(k)}
    if sentinel_auth and urlparse(url).scheme not in SENTINEL_SCHEMES:
        raise OptionError("redis_streams: options sentinelUsername/sentinelPassword need a "
                          "sentinel:// url")
    timeout = _int(opts, "failoverTimeout", 60, minimum=0)
    return Endpoint(url, opts.get("sentinelusername") or None, opts.get("sentinelpassword") or None,
                    float(timeout or 0))


def _bounds(opts: dict[str, str], name: str, default: str) -> tuple[str, dict[str, Bound]]:
    """Parse `earliest` / `latest` / JSON {"key": "id" | "earliest" | "latest"}.

    Returns the default for streams not named and the per-stream overrides.
    """
    raw = opts.get(name.lower())
    if raw is None:
        return default, {}
    text = raw.strip()
    if text.lower() in ("earliest", "latest"):
        return text.lower(), {}
    try:
        parsed = json.loads(text)
    except json.JSONDecodeError:
        parsed = None
    if not isinstance(parsed, dict):
        raise OptionError(
            f"redis_streams: option {name} must be earliest, latest or a JSON object "
            f'{{"stream": "id"}}, got {raw!r}'
        )
    per_stream: dict[str, Bound] = {}
    for key, value in parsed.items():
        value = str(value).strip()
        if value.lower() in ("earliest", "latest"):
            per_stream[key] = value.lower()
            continue
        try:
            per_stream[key] = StreamId.parse(value)
        except ValueError as exc:
            raise OptionError(f"redis_streams: option {name} for stream {key!r}: {exc}") from None
    return default, per_stream


@dataclass
class ReadOptions:
    url: str
    streams: list[str]
    pattern: str | None
    starting_default: str
    starting: dict[str, Bound]
    ending_default: str
    ending: dict[str, Bound]
    max_entries_per_trigger: int | None
    partitions_per_stream: int
    batch_size: int
    fail_on_data_loss: bool
    failfast: bool
    group: str | None
    consumer: str | None
    inject_failure_key: str | None
    raw: dict[str, str] = field(default_factory=dict)
    read_from: str = "master"
    endpoint: Endpoint = field(default_factory=lambda: Endpoint("redis://localhost:6379/0"))

    def start_for(self, key: str) -> Bound:
        return self.starting.get(key, self.starting_default)

    def end_for(self, key: str) -> Bound:
        return self.ending.get(key, self.ending_default)


def parse_read_options(options: Mapping[str, str], streaming: bool) -> ReadOptions:
    """Validate the reader's options; `streaming` picks the defaults (earliest..latest for batch
    reads, latest for a new streaming query, like Spark's Kafka source)."""
    opts = _lower(options)
    _check_unknown(opts, READ_OPTIONS, "read")
    endpoint = _endpoint(opts)
    url = endpoint.url
    streams = [s.strip() for s in opts.get("streams", "").split(",") if s.strip()]
    pattern = opts.get("pattern") or None
    if bool(streams) == bool(pattern):
        raise OptionError("redis_streams: set exactly one of the options streams (comma list) or pattern")

    if "startingtimestamp" in opts and "startingoffsets" in opts:
        raise OptionError("redis_streams: set startingOffsets or startingTimestamp, not both")
    if "endingtimestamp" in opts and "endingoffsets" in opts:
        raise OptionError("redis_streams: set endingOffsets or endingTimestamp, not both")

    start_default, starting = _bounds(opts, "startingOffsets", "latest" if streaming else "earliest")
    end_default, ending = _bounds(opts, "endingOffsets", "latest")
    # Timestamps map to IDs locally: an entry's ID starts with its millisecond time, so
    # "ts >= T" is "ID > (T-1)-max" and "ts < T" is "ID <= (T-1)-max".
    ts = _int(opts, "startingTimestamp", None, minimum=0)
    if ts is not None:
        start_default, starting = str(id_before_timestamp(ts)), {}
    te = _int(opts, "endingTimestamp", None, minimum=0)
    if te is not None:
        end_default, ending = str(id_before_timestamp(te)), {}
    if streaming and (end_default != "latest" or ending):
        raise OptionError("redis_streams: endingOffsets/endingTimestamp apply to batch reads only")
    if not streaming and start_default == "latest" and not starting:
        raise OptionError("redis_streams: startingOffsets=latest makes a batch read empty; use earliest")

    group = opts.get("group") or None
    consumer = opts.get("consumer") or None
    if consumer and not group:
        raise OptionError("redis_streams: option consumer needs option group")
    if group and not streaming:
        raise OptionError("redis_streams: consumer-group mode (group) is for spark.readStream only")
    if group and not consumer:
        consumer = "spark"

    mode = opts.get("mode", "PERMISSIVE").upper()
    if mode not in ("PERMISSIVE", "FAILFAST"):
        raise OptionError(f"redis_streams: option mode must be PERMISSIVE or FAILFAST, got {mode!r}")

    read_from = opts.get("readfrom", "master").strip().lower()
    if read_from not in READ_FROM:
        raise OptionError(f"redis_streams: option readFrom must be master or replica, got "
                          f"{opts['readfrom']!r}")
    if read_from == "replica" and not endpoint.is_sentinel:
        raise OptionError("redis_streams: readFrom=replica needs a sentinel:// url (Sentinel names "
                          "the replicas); to read one replica, give its redis:// url")
    if read_from == "replica" and group:
        raise OptionError("redis_streams: readFrom=replica cannot be combined with group: "
                          "XREADGROUP and XACK change the group on the server, so consumer-group "
                          "reads go to the master")

    return ReadOptions(
        url=url,
        streams=streams,
        pattern=pattern,
        starting_default=start_default,
        starting=starting,
        ending_default=end_default,
        ending=ending,
        max_entries_per_trigger=_int(opts, "maxEntriesPerTrigger", None),
        partitions_per_stream=_int(opts, "partitionsPerStream", 1) or 1,
        batch_size=_int(opts, "batchSize", 1000) or 1000,
        fail_on_data_loss=_bool(opts, "failOnDataLoss", True),
        failfast=mode == "FAILFAST",
        group=group,
        consumer=consumer,
        inject_failure_key=opts.get("injectfailurekey") or None,
        raw=opts,
        read_from=read_from,
        endpoint=endpoint,
    )


def resolve_bound(bound: Bound | str) -> Bound:
    """A stored default may be an ID string (from a timestamp); make it a StreamId."""
    if isinstance(bound, StreamId) or bound in ("earliest", "latest"):
        return bound
    return StreamId.parse(bound)


@dataclass
class WriteOptions:
    url: str
    stream: str | None
    id_column: str | None
    maxlen: int | None
    approximate: bool
    idempotent: bool
    write_id: str | None
    marker_prefix: str
    marker_ttl: int
    pipeline_size: int
    inject_failure_key: str | None = None
    idempotent_mode: str = "auto"
    endpoint: Endpoint = field(default_factory=lambda: Endpoint("redis://localhost:6379/0"))


def parse_write_options(options: Mapping[str, str]) -> WriteOptions:
    opts = _lower(options)
    _check_unknown(opts, WRITE_OPTIONS, "write")
    mode = opts.get("idempotentmode", "auto").strip().lower()
    if mode not in IDEMPOTENT_MODES:
        raise OptionError(f"redis_streams: option idempotentMode must be one of "
                          f"{', '.join(IDEMPOTENT_MODES)}, got {opts['idempotentmode']!r}")
    idempotent = _bool(opts, "idempotent", False)
    if "idempotentmode" in opts and not idempotent:
        raise OptionError("redis_streams: option idempotentMode needs idempotent=true")
    id_column = opts.get("idcolumn") or None
    if mode == "idmp" and id_column is not None:
        # The server takes IDMP only with an ID it generates.
        raise OptionError("redis_streams: idempotentMode=idmp cannot be combined with idColumn "
                          "(XADD IDMP needs server-generated IDs); use idempotentMode=marker")
    endpoint = _endpoint(opts)
    return WriteOptions(
        url=endpoint.url,
        stream=opts.get("stream") or None,
        id_column=id_column,
        maxlen=_int(opts, "maxlen", None, minimum=0),
        approximate=_bool(opts, "approximate", True),
        idempotent=idempotent,
        write_id=opts.get("writeid") or None,
        marker_prefix=opts.get("markerprefix", "rivulet:spark:sink"),
        marker_ttl=_int(opts, "markerTtl", 7 * 24 * 3600) or 7 * 24 * 3600,
        pipeline_size=_int(opts, "pipelineSize", 1000) or 1000,
        inject_failure_key=opts.get("injectfailurekey") or None,
        idempotent_mode=mode,
        endpoint=endpoint,
    )
