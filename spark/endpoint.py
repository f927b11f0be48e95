"""Where the source and sink connect: one server, or a master and its replicas behind Sentinel.

* `redis://[user:pass@]host:port/db`, `rediss://` (TLS), `unix://path`: one server.
* `sentinel://[user:pass@]host:port,host:port/service[/db]`, `sentinels://` (TLS): the current
  master of `service` (and its replicas) as Redis Sentinel reports them, resolved with redis-py's
  `redis.sentinel.Sentinel` (`master_for` / `slave_for`). The credentials and the TLS settings
  (query parameters such as `?ssl_cert_reqs=none`, as for `rediss://`) are the data servers';
  sentinels that require a password of their own get it from the options `sentinelUsername` /
  `sentinelPassword`. A sentinel without a port is at 26379.

Only redis-py is needed: the endpoint is plain data, shipped to executors with the plan.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlparse

import redis
from redis.backoff import ExponentialBackoff, NoBackoff
from redis.retry import Retry
from redis.sentinel import Sentinel

SENTINEL_SCHEMES = ("sentinel", "sentinels")
DEFAULT_SENTINEL_PORT = 26379

# What a failover looks like to a client: the old master is gone (refused, reset, timed out),
# demoted (-READONLY; redis-py's Sentinel connections report it as a ConnectionError), still
# loading (-LOADING is a ConnectionError too), or not yet replaced (MasterNotFoundError).
FAILOVER_ERRORS: tuple[type[Exception], ...] = (redis.ConnectionError, redis.TimeoutError,
                                                redis.ReadOnlyError)

# Every connection: RESP2 keeps replies identical on every server version; str replies because
# every field lands in Spark as STRING anyway (invalid UTF-8 replaced rather than failing a whole
# task); a socket timeout and health checks make a dead server fail the call instead of hanging.
CONNECTION_KWARGS: dict[str, Any] = {
    "decode_responses": True, "encoding_errors": "replace", "socket_timeout": 60,
    "socket_connect_timeout": 10, "health_check_interval": 30,
}
SENTINEL_KWARGS: dict[str, Any] = {"socket_timeout": 5, "socket_connect_timeout": 5}


class EndpointError(ValueError):
    """A malformed url."""


@dataclass(frozen=True)
class Endpoint:
    """A url plus what Sentinel addressing needs besides it."""

    url: str
    sentinel_username: str | None = None
    sentinel_password: str | None = None
    failover_timeout: float = 60.0  # seconds a failover may take before a call gives up

    @property
    def is_sentinel(self) -> bool:
        return urlparse(self.url).scheme in SENTINEL_SCHEMES


@dataclass(frozen=True)
class SentinelAddress:
    sentinels: tuple[tuple[str, int], ...]
    service: str
    tls: bool
    connection_kwargs: tuple[tuple[str, Any], ...]  # the data servers' (db, auth, TLS settings)


def parse_sentinel_url(url: str) -> SentinelAddress:
    parsed = urlparse(url)
    if parsed.scheme not in SENTINEL_SCHEMES:
        raise EndpointError(f"not a sentinel url: {url!r}")
    netloc = parsed.netloc
    userinfo, _, hostlist = netloc.rpartition("@")
    sentinels: list[tuple[str, int]] = []
    for item in hostlist.split(","):
        item = item.strip()
        if not item:
            continue
        if item.startswith("["):  # [IPv6]:port
            host, _, rest = item[1:].partition("]")
            port_text = rest.lstrip(":")
        else:
            host, _, port_text = item.partition(":")
        if not host:
            raise EndpointError(f"a sentinel address without a host in {url!r}")
        try:
            port = int(port_text) if port_text else DEFAULT_SENTINEL_PORT
        except ValueError:
            raise EndpointError(f"bad sentinel port {port_text!r} in {url!r}") from None
        if not 0 < port < 65536:
            raise EndpointError(f"bad sentinel port {port} in {url!r}")
        sentinels.append((host, port))
    if not sentinels:
        raise EndpointError(f"no sentinel address in {url!r}")
    parts = [p for p in parsed.path.split("/") if p]
    if not parts or len(parts) > 2:
        raise EndpointError(f"a sentinel url names the master: sentinel://host:port,.../service[/db], "
                            f"got {url!r}")
    service = unquote(parts[0])
    db = 0
    if len(parts) == 2:
        if not parts[1].isdigit():
            raise EndpointError(f"the database in url {url!r} must be a number")
        db = int(parts[1])
    tls = parsed.scheme == "sentinels"
    # redis-py's own url parsing turns the query (ssl_cert_reqs=..., socket_timeout=...) and the
    # credentials into connection arguments exactly as it does for redis:// and rediss://.
    stand_in = f"{'rediss' if tls else 'redis'}://{userinfo + '@' if userinfo else ''}localhost/{db}"
    if parsed.query:
        stand_in += "?" + parsed.query
    try:
        kwargs = redis.connection.parse_url(stand_in)
    except ValueError as exc:
        raise EndpointError(f"bad url {url!r}: {exc}") from None
    for key in ("host", "port", "connection_class"):
        kwargs.pop(key, None)
    if tls:
        kwargs["ssl"] = True
    return SentinelAddress(tuple(sentinels), service, tls, tuple(sorted(kwargs.items())))


# One Sentinel (its connections to the sentinels) per endpoint and process: tasks of a Python
# worker, and every trigger of a driver, share it.
_sentinels: dict[Endpoint, tuple[Sentinel, SentinelAddress]] = {}
_lock = threading.Lock()


def _sentinel(endpoint: Endpoint) -> tuple[Sentinel, SentinelAddress]:
    with _lock:
        found = _sentinels.get(endpoint)
        if found is None:
            address = parse_sentinel_url(endpoint.url)
            sentinel_kwargs = dict(SENTINEL_KWARGS)
            if endpoint.sentinel_username:
                sentinel_kwargs["username"] = endpoint.sentinel_username
            if endpoint.sentinel_password:
                sentinel_kwargs["password"] = endpoint.sentinel_password
            if address.tls:
                # Sentinels behind TLS take the same TLS settings as the data servers.
                sentinel_kwargs.update((k, v) for k, v in address.connection_kwargs
                                       if k.startswith("ssl"))
            found = (Sentinel(list(address.sentinels), sentinel_kwargs=sentinel_kwargs,
                              **dict(address.connection_kwargs)), address)
            _sentinels[endpoint] = found
        return found


def failover_retry(endpoint: Endpoint) -> Retry:
    """Retries that outlast a failover: with Sentinel addressing each retry asks the sentinels for
    the master again (or for another replica), so a call waits for the new master."""
    cap = 0.5
    if endpoint.failover_timeout <= 0:
        return Retry(NoBackoff(), 0)
    return Retry(ExponentialBackoff(cap=cap, base=0.05), retries=int(endpoint.failover_timeout / cap) + 5)


def connect(endpoint: Endpoint | str, replica: bool = False, follow_failover: bool = True) -> redis.Redis:
    """A client for the endpoint's master, or with `replica` one of its replicas chosen as
    redis-py's `slave_for` does (a random live replica, the master when there is none).

    `follow_failover=False` gives a client that never retries by itself: for callers that
    must see every connection loss, because what they did before it has to be checked again.
    """
    if isinstance(endpoint, str):
        endpoint = Endpoint(endpoint)
    if not endpoint.is_sentinel:
        if replica:
            raise EndpointError("reading from a replica needs a sentinel:// url")
        if not follow_failover:
            return redis.Redis.from_url(endpoint.url, retry=Retry(NoBackoff(), 0), **CONNECTION_KWARGS)
        return redis.Redis.from_url(endpoint.url, **CONNECTION_KWARGS)
    sentinel, address = _sentinel(endpoint)
    retry = failover_retry(endpoint) if follow_failover else Retry(NoBackoff(), 0)
    # check_connection: a PING right after connecting, so that a server that accepts the
    # connection but cannot serve (still loading) is skipped for the next replica.
    kwargs = dict(CONNECTION_KWARGS, retry=retry, check_connection=True)
    if replica:
        return sentinel.slave_for(address.service, **kwargs)
    return sentinel.master_for(address.service, **kwargs)
