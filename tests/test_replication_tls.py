"""Replication over TLS (tls-replication yes): the replica's link is a TLS client presenting
tls-client-cert-file (or tls-cert-file) and checking the master against tls-ca-cert-file; the
master serves replicas on its tls-port like any TLS client. Rivulet with Rivulet, a Rivulet
replica of Debian's Redis 7.0 (built with TLS) over TLS, and a Redis 7.4 replica (when built)
of a Rivulet master over TLS; Redis 7.0 cannot follow a Rivulet master (RDB 12), TLS or not."""

from __future__ import annotations

import os

import pytest
import redis

from tests.replica_helpers import REDIS70, REDIS74, RedisServer, info, wait_until
from tests.serverproc import ServerProcess, free_port
from tests.test_tls import client_ctx, tls_client
from tests.tls_certs import CertSet, make_certs, openssl_available

pytestmark = pytest.mark.skipif(not openssl_available(),
                                reason="the openssl command is missing: replication over TLS "
                                       "NOT TESTED")


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> CertSet:
    return make_certs(tmp_path_factory.mktemp("tls-repl-certs"))


def tls_settings(certs: CertSet, cert: str = "server", client: str | None = None) -> list[str]:
    args = ["--tls-cert-file", certs.path(f"{cert}.crt"), "--tls-key-file", certs.path(f"{cert}.key"),
            "--tls-ca-cert-file", certs.ca]
    if client is not None:
        args += ["--tls-client-cert-file", certs.path(f"{client}.crt"),
                 "--tls-client-key-file", certs.path(f"{client}.key")]
    return args


def tls_master(procs: list, certs: CertSet) -> ServerProcess:
    tls_port = free_port()
    proc = ServerProcess("--tls-port", str(tls_port), *tls_settings(certs), tls_port=tls_port,
                         tls_wait=client_ctx(certs)).start()
    procs.append(proc)
    return proc


def tls_replica(procs: list, certs: CertSet, master_tls_port: int, *extra: str,
                client: str = "client") -> ServerProcess:
    tls_port = free_port()
    proc = ServerProcess("--tls-port", str(tls_port), *tls_settings(certs, "server2", client),
                         "--tls-replication", "yes", "--replicaof", "127.0.0.1",
                         str(master_tls_port), *extra, tls_port=tls_port,
                         tls_wait=client_ctx(certs)).start()
    procs.append(proc)
    return proc


def tls_info(c: redis.Redis, section: str = "replication") -> dict:
    return c.info(section)


def synced(m: redis.Redis, r: redis.Redis) -> bool:
    mine = tls_info(r)
    return (mine.get("master_link_status") == "up"
            and mine.get("slave_repl_offset") == tls_info(m)["master_repl_offset"])


def test_rivulet_replica_follows_rivulet_master_over_tls(certs, procs):
    master = tls_master(procs, certs)
    assert master.tls_port is not None
    m = tls_client(certs, master.tls_port)
    m.set("before", 1)
    m.xadd("s", {"a": 1})
    replica = tls_replica(procs, certs, master.tls_port)
    assert replica.tls_port is not None
    r = tls_client(certs, replica.tls_port)
    wait_until(lambda: synced(m, r), 20, "the TLS replica to sync")
    for i in range(100):
        m.set(f"k{i}", i)
    wait_until(lambda: synced(m, r), 20, "the TLS replica to follow")
    assert r.get("before") == b"1" and r.get("k99") == b"99" and r.xlen("s") == 1
    # The master sees it as a TLS client that announced its TLS port.
    slave0 = tls_info(m)["slave0"]
    assert slave0["port"] == replica.tls_port and slave0["state"] == "online"
    clients = m.client_list(_type="replica")
    assert len(clients) == 1 and clients[0]["laddr"].endswith(f":{master.tls_port}")
    # Its link survives a restart of the link (PSYNC over TLS continues).
    m.client_kill_filter(_type="replica")
    m.set("after", 2)
    wait_until(lambda: synced(m, r), 20, "the TLS replica to reconnect")
    assert r.get("after") == b"2"
    assert tls_info(m, "stats")["sync_partial_ok"] == 1


def test_replica_presents_its_client_certificate(certs, procs):
    master = tls_master(procs, certs)
    assert master.tls_port is not None
    # A client certificate from a CA the master does not trust: the master refuses the link.
    replica = tls_replica(procs, certs, master.tls_port, client="intruder")
    assert replica.tls_port is not None
    r = tls_client(certs, replica.tls_port)
    wait_until(lambda: "Error accepting a client connection" in master.log()
               and "MASTER <-> REPLICA sync started" in replica.log(), 15,
               "the master to refuse the replica's certificate")
    assert tls_info(r)["master_link_status"] == "down"
    m = tls_client(certs, master.tls_port)
    assert tls_info(m)["connected_slaves"] == 0
    # The trusted client certificate, set at run time, lets it in.
    r.execute_command("CONFIG", "SET", "tls-client-cert-file", certs.path("client.crt"),
                      "tls-client-key-file", certs.path("client.key"))
    wait_until(lambda: synced(m, r), 20, "the replica to sync with its trusted certificate")


def test_plain_replica_of_tls_port_fails_cleanly(certs, procs):
    master = tls_master(procs, certs)
    assert master.tls_port is not None
    replica = ServerProcess("--replicaof", "127.0.0.1", str(master.tls_port)).start()
    procs.append(replica)
    r = redis.Redis(port=replica.port)
    wait_until(lambda: "MASTER" in replica.log() and "Connecting to MASTER" in replica.log(), 10)
    assert info(r)["master_link_status"] == "down"
    assert tls_client(certs, master.tls_port).ping()


def redis_tls_args(certs: CertSet, tls_port: int) -> list[str]:
    return ["--tls-port", str(tls_port), "--tls-cert-file", certs.path("server.crt"),
            "--tls-key-file", certs.path("server.key"), "--tls-ca-cert-file", certs.ca]


@pytest.mark.skipif(REDIS70 is None, reason="redis-server is not installed: a Rivulet replica "
                                            "of Redis over TLS was NOT tested")
def test_rivulet_replica_of_redis70_over_tls(certs, procs):
    tls_port = free_port()
    master = RedisServer(REDIS70, *redis_tls_args(certs, tls_port)).start()
    procs.append(master)
    m = master.client()
    for i in range(50):
        m.set(f"k{i}", i)
    replica = tls_replica(procs, certs, tls_port)
    assert replica.tls_port is not None
    r = tls_client(certs, replica.tls_port)
    wait_until(lambda: synced(m, r), 20, "the Rivulet replica to sync with Redis over TLS")
    m.xadd("s", {"a": 1})
    wait_until(lambda: synced(m, r), 20, "the Rivulet replica to follow Redis over TLS")
    assert r.get("k49") == b"49" and r.xlen("s") == 1
    clients = m.client_list(_type="replica")
    assert len(clients) == 1 and clients[0]["laddr"].endswith(f":{tls_port}")


@pytest.mark.skipif(not os.access(REDIS74, os.X_OK),
                    reason=f"no Redis 7.4 at {REDIS74}: a Redis replica of a Rivulet master over "
                           "TLS was NOT tested")
def test_redis74_replica_of_rivulet_over_tls(certs, procs):
    master = tls_master(procs, certs)
    assert master.tls_port is not None
    m = tls_client(certs, master.tls_port)
    m.set("a", 1)
    replica_tls = free_port()
    # The test certificates are for one purpose each: a replica presents the client one.
    replica = RedisServer(REDIS74, *redis_tls_args(certs, replica_tls), "--tls-replication", "yes",
                          "--tls-client-cert-file", certs.path("client.crt"),
                          "--tls-client-key-file", certs.path("client.key"),
                          "--replicaof", "127.0.0.1", str(master.tls_port)).start()
    procs.append(replica)
    r = replica.client()
    wait_until(lambda: synced(m, r), 30, "Redis 7.4 to sync over TLS")
    m.xadd("s", {"b": 2})
    wait_until(lambda: synced(m, r), 20, "Redis 7.4 to follow over TLS")
    assert r.get("a") == b"1" and r.xlen("s") == 1
    slave0 = tls_info(m)["slave0"]
    assert slave0["port"] == replica_tls and slave0["state"] == "online"
