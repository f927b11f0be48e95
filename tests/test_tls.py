"""TLS: real server processes with certificates made at test time (openssl), redis-py over TLS in
RESP2 and RESP3, redis-cli --tls, client certificates under each tls-auth-clients mode, a
TLS-only server, certificate reload by CONFIG SET, tls-protocols, start-up checks, and the
same configuration replies as Debian's redis-server (built with TLS)."""

from __future__ import annotations

import asyncio
import shutil
import socket
import ssl
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from server.config import Config
from server.tls import client_context
from tests.serverproc import ROOT, ServerProcess, free_port, wait_for_tls_port
from tests.tls_certs import CertSet, make_certs, openssl_available

pytestmark = pytest.mark.skipif(not openssl_available(),
                                reason="the openssl command is missing: TLS NOT TESTED")


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> CertSet:
    return make_certs(tmp_path_factory.mktemp("tls-certs"))


def client_ctx(certs: CertSet, cert: str | None = "client", *, max_version: ssl.TLSVersion | None = None,
               ca: str | None = None) -> ssl.SSLContext:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.load_verify_locations(ca or certs.ca)
    if cert is not None:
        ctx.load_cert_chain(certs.path(f"{cert}.crt"), certs.path(f"{cert}.key"))
    if max_version is not None:
        ctx.maximum_version = max_version
    return ctx


def tls_args(certs: CertSet, tls_port: int, *extra: str) -> list[str]:
    return ["--tls-port", str(tls_port), "--tls-cert-file", certs.path("server.crt"),
            "--tls-key-file", certs.path("server.key"), "--tls-ca-cert-file", certs.ca, *extra]


def start_tls_server(certs: CertSet, *extra: str, plain: bool = True) -> ServerProcess:
    tls_port = free_port()
    args = tls_args(certs, tls_port, *extra)
    if not plain:
        args = ["--port", "0", *args]
    return ServerProcess(*args, tls_port=tls_port, tls_wait=client_ctx(certs)).start()


def tls_client(certs: CertSet, port: int, cert: str | None = "client", protocol: int = 2,
               **kwargs) -> redis.Redis:
    extra = {}
    if cert is not None:
        extra = {"ssl_certfile": certs.path(f"{cert}.crt"), "ssl_keyfile": certs.path(f"{cert}.key")}
    return redis.Redis(host="127.0.0.1", port=port, ssl=True, ssl_ca_certs=certs.ca,
                       protocol=protocol, socket_timeout=5, **extra, **kwargs)


def handshake(port: int, ctx: ssl.SSLContext) -> bytes:
    """A TLS connection made with ctx, then PING: the reply, or raises when refused (under
    TLS 1.3 a refused client certificate shows as the first read failing)."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as raw:
        with ctx.wrap_socket(raw, server_hostname="127.0.0.1") as s:
            s.sendall(b"PING\r\n")
            data = s.recv(64)
            if not data:
                raise ConnectionError("closed by the server")
            return data


def peer_serial(port: int, certs: CertSet) -> int:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as raw:
        with client_ctx(certs).wrap_socket(raw, server_hostname="127.0.0.1") as s:
            der = s.getpeercert(binary_form=True)
    assert der is not None
    text = subprocess.run(["openssl", "x509", "-inform", "DER", "-noout", "-serial"], input=der,
                          capture_output=True, check=True).stdout.decode()
    return int(text.strip().split("=")[1], 16)


@pytest.fixture(scope="module")
def tls_server(certs: CertSet) -> Iterator[ServerProcess]:
    srv = start_tls_server(certs)
    yield srv
    srv.cleanup()


# --- the protocol over TLS ---------------------------------------------------------------------


@pytest.mark.parametrize("protocol", [2, 3])
def test_commands_over_tls_as_over_tcp(certs, tls_server, protocol):
    """The same commands, pipelines, transactions, blocking reads and Pub/Sub over TLS give the
    same replies as over the plain port."""
    def session(c: redis.Redis) -> list:
        c.flushdb()
        out: list = [c.ping(), c.set("str", "v"), c.get("str")]
        pipe = c.pipeline(transaction=False)
        for i in range(200):
            pipe.xadd("s", {"i": i}, id=f"{i + 1}-0")
        out.append(pipe.execute()[-3:])
        tx = c.pipeline(transaction=True)
        tx.incr("n").incr("n").xlen("s")
        out.append(tx.execute())
        c.xgroup_create("s", "g", id="0")
        out.append(c.xreadgroup("g", "alice", {"s": ">"}, count=2))
        out.append(c.xpending("s", "g"))
        hello = c.execute_command("HELLO", protocol)
        if isinstance(hello, list):
            hello = dict(zip(hello[::2], hello[1::2], strict=True))
        hello.pop(b"id")  # each connection's own
        out.append(hello)
        return out

    # The same server, one database each (the replies name the same keys).
    with tls_client(certs, tls_server.tls_port, protocol=protocol, db=1) as t, \
            redis.Redis(port=tls_server.port, protocol=protocol, db=2) as p:
        assert session(t) == session(p)


@pytest.mark.parametrize("protocol", [2, 3])
def test_blocking_read_and_pubsub_over_tls(certs, tls_server, protocol):
    with tls_client(certs, tls_server.tls_port, protocol=protocol) as reader, \
            tls_client(certs, tls_server.tls_port, protocol=protocol) as writer:
        reader.delete("blk")
        got: list = []
        t = threading.Thread(target=lambda: got.append(reader.xread({"blk": "$"}, block=5000)))
        t.start()
        deadline = time.monotonic() + 5
        while writer.info("clients")["blocked_clients"] < 1 and time.monotonic() < deadline:
            time.sleep(0.02)
        writer.xadd("blk", {"f": "v"}, id="5-0")
        t.join(10)
        assert got and got[0] is not None
        entries = got[0][b"blk"][0] if isinstance(got[0], dict) else got[0][0][1]
        assert entries == [(b"5-0", {b"f": b"v"})]

        ps = reader.pubsub()
        ps.subscribe("news")
        assert ps.get_message(timeout=5)["type"] == "subscribe"
        assert writer.publish("news", "hello") == 1
        msg = ps.get_message(timeout=5)
        assert msg is not None and msg["data"] == b"hello"
        ps.close()


def test_redis_cli_over_tls(certs, tls_server):
    if shutil.which("redis-cli") is None:
        pytest.skip("redis-cli is missing: redis-cli --tls NOT TESTED")
    cli = ["redis-cli", "--tls", "--cacert", certs.ca, "--cert", certs.path("client.crt"),
           "--key", certs.path("client.key"), "-p", str(tls_server.tls_port)]
    out = subprocess.run([*cli, "XADD", "cli-s", "7-1", "a", "b"], capture_output=True, text=True, timeout=20)
    assert out.stdout.strip() == "7-1"
    out = subprocess.run([*cli, "XRANGE", "cli-s", "-", "+"], capture_output=True, text=True, timeout=20)
    assert out.stdout.split() == ["7-1", "a", "b"]
    # Without a client certificate the server refuses the handshake (tls-auth-clients yes).
    out = subprocess.run(cli[:4] + cli[8:] + ["PING"], capture_output=True, text=True, timeout=20)
    assert "PONG" not in out.stdout


def test_rediss_url(certs, tls_server):
    url = (f"rediss://127.0.0.1:{tls_server.tls_port}/0?ssl_ca_certs={certs.ca}"
           f"&ssl_certfile={certs.path('client.crt')}&ssl_keyfile={certs.path('client.key')}")
    with redis.Redis.from_url(url) as c:
        c.set("url-key", "over tls")
        assert c.get("url-key") == b"over tls"


def test_rediss_url_through_the_spark_source_connection(certs, tls_server):
    """The Spark source and sink connect with spark.client.connect(url): a rediss:// URL with
    the CA and client certificate as query options reaches Rivulet over TLS and pages a
    stream the way the source reads it. (The `spark` package imports pyspark.)"""
    pytest.importorskip("pyspark", reason="pyspark is missing: the Spark source's rediss:// "
                        "connection NOT TESTED (redis-py's is, in test_rediss_url)")
    from spark.client import connect, discover_streams, stream_state, xrange_pages
    from spark.offsets import ZERO

    url = (f"rediss://127.0.0.1:{tls_server.tls_port}/3?ssl_ca_certs={certs.ca}"
           f"&ssl_certfile={certs.path('client.crt')}&ssl_keyfile={certs.path('client.key')}")
    with redis.Redis.from_url(url) as writer:
        writer.flushdb()
        for i in range(25):
            writer.xadd("spark:tls", {"n": str(i)}, id=f"{i + 1}-0")
    r = connect(url)
    try:
        assert discover_streams(r, "spark:*") == ["spark:tls"]
        state = stream_state(r, "spark:tls")
        assert state is not None and state.length == 25
        pages = list(xrange_pages(r, "spark:tls", ZERO, state.last_entry, 10))
        assert [len(p) for p in pages] == [10, 10, 5]
        assert pages[-1][-1] == ("25-0", {"n": "24"})
        assert r.connection_pool.connection_kwargs.get("ssl_ca_certs") == certs.ca
    finally:
        r.close()


def test_client_list_and_info_for_tls_connections(certs, tls_server):
    with tls_client(certs, tls_server.tls_port) as c:
        c.client_setname("tls-one")
        me = [cl for cl in c.client_list() if cl["name"] == "tls-one"]
        assert len(me) == 1 and me[0]["laddr"] == f"127.0.0.1:{tls_server.tls_port}"
        server_info = c.info("server")
        assert server_info["tcp_port"] == tls_server.port
        assert server_info["listener0"] == {"name": "tcp", "bind": "127.0.0.1", "port": tls_server.port}
        assert server_info["listener2"] == {"name": "tls", "bind": "127.0.0.1", "port": tls_server.tls_port}


# --- client certificates -------------------------------------------------------------------------


def test_tls_auth_clients_modes(certs, tls_server):
    port = tls_server.tls_port
    no_cert, intruder, good = client_ctx(certs, None), client_ctx(certs, "intruder"), client_ctx(certs)
    with redis.Redis(port=tls_server.port) as admin:
        try:
            assert admin.config_get("tls-auth-clients") == {"tls-auth-clients": "yes"}
            assert handshake(port, good) == b"+PONG\r\n"
            for ctx in (no_cert, intruder):
                with pytest.raises((ssl.SSLError, ConnectionError, OSError)):
                    handshake(port, ctx)
            admin.config_set("tls-auth-clients", "optional")
            assert handshake(port, no_cert) == b"+PONG\r\n"
            assert handshake(port, good) == b"+PONG\r\n"
            with pytest.raises((ssl.SSLError, ConnectionError, OSError)):
                handshake(port, intruder)  # given, so verified
            admin.config_set("tls-auth-clients", "no")
            for ctx in (no_cert, intruder, good):
                assert handshake(port, ctx) == b"+PONG\r\n"
        finally:
            admin.config_set("tls-auth-clients", "yes")
    assert "Error accepting a client connection" in tls_server.log()


def test_tls_protocols_restrict_versions(certs, tls_server):
    port = tls_server.tls_port
    with redis.Redis(port=tls_server.port) as admin:
        try:
            admin.config_set("tls-protocols", "TLSv1.3")
            with pytest.raises((ssl.SSLError, ConnectionError, OSError)):
                handshake(port, client_ctx(certs, max_version=ssl.TLSVersion.TLSv1_2))
            assert handshake(port, client_ctx(certs)) == b"+PONG\r\n"
            admin.config_set("tls-protocols", "TLSv1.2")
            ctx = client_ctx(certs)
            with socket.create_connection(("127.0.0.1", port), timeout=5) as raw:
                with ctx.wrap_socket(raw, server_hostname="127.0.0.1") as s:
                    assert s.version() == "TLSv1.2"
        finally:
            admin.config_set("tls-protocols", "")


def test_tls_ciphers_and_ciphersuites_choose_the_cipher(certs, tls_server):
    """tls-ciphersuites (TLSv1.3) and tls-ciphers (TLSv1.2) reach OpenSSL: the handshake
    negotiates the only suite allowed."""
    port = tls_server.tls_port

    def negotiated(max_version: ssl.TLSVersion | None = None) -> str:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as raw:
            ctx = client_ctx(certs, max_version=max_version)
            with ctx.wrap_socket(raw, server_hostname="127.0.0.1") as s:
                cipher = s.cipher()
                assert cipher is not None
                return cipher[0]

    with redis.Redis(port=tls_server.port) as admin:
        try:
            for suite in ("TLS_CHACHA20_POLY1305_SHA256", "TLS_AES_128_GCM_SHA256"):
                admin.config_set("tls-ciphersuites", suite)
                assert negotiated() == suite
            admin.config_set("tls-ciphers", "ECDHE-RSA-AES128-GCM-SHA256")
            assert negotiated(ssl.TLSVersion.TLSv1_2) == "ECDHE-RSA-AES128-GCM-SHA256"
        finally:
            admin.config_set("tls-ciphersuites", "")
            admin.config_set("tls-ciphers", "")


# --- TLS only, reload, start-up ---------------------------------------------------------------


def test_tls_only_server(certs):
    srv = start_tls_server(certs, plain=False)
    try:
        with tls_client(certs, srv.tls_port) as c:
            assert c.config_get("port") == {"port": "0"}
            info = c.info("server")
            assert info["tcp_port"] == srv.tls_port
            assert "listener0" not in info
            assert info["listener2"]["port"] == srv.tls_port
        with pytest.raises(OSError):  # the port ServerProcess picked is not opened with --port 0
            socket.create_connection(("127.0.0.1", srv.port), timeout=2).close()
        assert "Ready to accept connections tls" in srv.log()
        assert "Ready to accept connections tcp" not in srv.log()
    finally:
        srv.cleanup()


def test_certificate_reload_by_config_set(certs):
    srv = start_tls_server(certs)
    try:
        with tls_client(certs, srv.tls_port) as old:
            old.set("k", "1")
            assert peer_serial(srv.tls_port, certs) == 1001
            with redis.Redis(port=srv.port) as admin:
                admin.execute_command("CONFIG", "SET", "tls-cert-file", certs.path("server2.crt"),
                                      "tls-key-file", certs.path("server2.key"))
                assert peer_serial(srv.tls_port, certs) == 1002
                assert old.get("k") == b"1"  # the connection made before keeps working
                # A bad file answers Redis's error and leaves the current certificate in use.
                missing = str(Path(certs.dir) / "missing.crt")
                with pytest.raises(redis.ResponseError) as exc:
                    admin.config_set("tls-cert-file", missing)
                assert str(exc.value) == ("CONFIG SET failed (possibly related to argument "
                                          "'tls-cert-file') - Unable to update TLS configuration. "
                                          "Check server logs.")
                assert admin.config_get("tls-cert-file") == {"tls-cert-file": certs.path("server2.crt")}
                assert peer_serial(srv.tls_port, certs) == 1002
                # A key that is not the certificate's is refused the same way.
                with pytest.raises(redis.ResponseError):
                    admin.config_set("tls-key-file", certs.path("server.key"))
                assert peer_serial(srv.tls_port, certs) == 1002
        log = srv.log()
        assert f"Failed to load certificate: {missing}" in log
        assert "Failed to load private key" in log
    finally:
        srv.cleanup()


def test_pair_swapped_in_one_config_set(certs):
    srv = start_tls_server(certs)
    try:
        with redis.Redis(port=srv.port) as admin:
            admin.execute_command("CONFIG", "SET", "tls-cert-file", certs.path("server2.crt"),
                                  "tls-key-file", certs.path("server2.key"))
        assert peer_serial(srv.tls_port, certs) == 1002
    finally:
        srv.cleanup()


def test_tls_port_opened_and_closed_by_config_set(certs, server_factory):
    srv = server_factory()
    tls_port = free_port()
    with redis.Redis(port=srv.port) as admin:
        with pytest.raises(redis.ResponseError) as exc:  # no certificate yet
            admin.config_set("tls-port", tls_port)
        assert "Unable to update TLS configuration" in str(exc.value)
        assert admin.config_get("tls-port") == {"tls-port": "0"}
        admin.execute_command("CONFIG", "SET", "tls-cert-file", certs.path("server.crt"),
                              "tls-key-file", certs.path("server.key"), "tls-ca-cert-file", certs.ca,
                              "tls-port", str(tls_port))
        assert handshake(tls_port, client_ctx(certs)) == b"+PONG\r\n"
        admin.config_set("tls-port", 0)
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", tls_port), timeout=2).close()


def test_encrypted_key_with_passphrase(certs, tmp_path):
    tls_port = free_port()
    args = ["--tls-port", str(tls_port), "--tls-cert-file", certs.path("server-enc.crt"),
            "--tls-key-file", certs.path("server-enc.key"), "--tls-ca-cert-file", certs.ca]
    srv = ServerProcess(*args, "--tls-key-file-pass", "secret", tls_port=tls_port,
                        tls_wait=client_ctx(certs)).start()
    try:
        assert peer_serial(tls_port, certs) == 1003
    finally:
        srv.cleanup()
    done = run_server(*args, "--tls-key-file-pass", "wrong")
    assert done.returncode == 1
    assert "Failed to load private key" in done.stdout


def run_server(*args: str) -> subprocess.CompletedProcess:
    import sys

    return subprocess.run([sys.executable, "-m", "server", "--port", str(free_port()), "--save", "",
                           "--appendonly", "no", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=60)


@pytest.mark.parametrize("args, line", [
    (["--tls-port", "0", "--port", "0"], "Configured to not listen anywhere, exiting."),
    (["--tls-port", "{tls}"], "No tls-cert-file configured!"),
    (["--tls-port", "{tls}", "--tls-cert-file", "{dir}/server.crt"], "No tls-key-file configured!"),
    (["--tls-port", "{tls}", "--tls-cert-file", "{dir}/server.crt", "--tls-key-file", "{dir}/server.key"],
     "Either tls-ca-cert-file or tls-ca-cert-dir must be specified when tls-cluster, "
     "tls-replication or tls-auth-clients are enabled!"),
    (["--tls-port", "{tls}", "--tls-cert-file", "{dir}/server.crt", "--tls-key-file", "{dir}/server.key",
      "--tls-auth-clients", "no", "--tls-protocols", "SSLv3"],
     "Invalid tls-protocols specified. Use a combination of 'TLSv1', 'TLSv1.1', 'TLSv1.2' and 'TLSv1.3'."),
    (["--tls-port", "{tls}", "--tls-cert-file", "{dir}/nope.crt", "--tls-key-file", "{dir}/server.key",
      "--tls-auth-clients", "no"], "Failed to load certificate: {dir}/nope.crt"),
])
def test_startup_refused(certs, args, line, tmp_path):
    """As Redis: the reason is logged, then "Failed to configure TLS", and the server exits;
    Debian's redis-server, given the same options, logs the same lines."""
    fill = {"tls": str(free_port()), "dir": str(certs.dir)}
    argv = [a.format(**fill) for a in args]
    expected = [line.format(**fill)]
    if "{tls}" in args:
        expected.append("Failed to configure TLS. Check logs for more info.")
    done = run_server(*argv)
    assert done.returncode == 1
    for text in expected:
        assert text in done.stdout
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is missing: start-up refusals NOT compared with Redis")
    real = subprocess.run(["redis-server", "--port", str(free_port()), "--save", "", "--appendonly", "no",
                           "--dir", str(tmp_path), *argv], capture_output=True, text=True, timeout=60)
    assert real.returncode == 1
    for text in expected:
        assert text in real.stdout


def test_config_rewrite_keeps_tls_settings(certs, tmp_path):
    tls_port = free_port()
    conf = tmp_path / "rivulet.conf"
    conf.write_text("\n".join(f"{a[2:]} {b}" for a, b in zip(tls_args(certs, tls_port)[::2],
                                                               tls_args(certs, tls_port)[1::2], strict=True)) + "\n")
    srv = ServerProcess(tls_port=tls_port, tls_wait=client_ctx(certs))
    srv.args = [str(conf), *srv.args]
    srv.start()
    try:
        with redis.Redis(port=srv.port) as admin:
            admin.config_set("tls-protocols", "TLSv1.2 TLSv1.3")
            admin.config_set("tls-auth-clients", "optional")
            admin.config_rewrite()
        text = conf.read_text()
        assert 'tls-protocols "TLSv1.2 TLSv1.3"' in text or "tls-protocols 'TLSv1.2 TLSv1.3'" in text
        assert "tls-auth-clients optional" in text
        assert f"tls-port {tls_port}" in text
    finally:
        srv.cleanup()


def test_client_context_for_outgoing_connections(certs, tls_server):
    """client_context(config): what the replica link uses to reach a TLS primary."""
    config = Config()
    for name, value in (("tls-cert-file", certs.path("client.crt")), ("tls-key-file", certs.path("client.key")),
                        ("tls-ca-cert-file", certs.ca), ("tls-replication", "yes")):
        config.set(name, value, startup=True)

    async def ping() -> bytes:
        reader, writer = await asyncio.open_connection("127.0.0.1", tls_server.tls_port,
                                                       ssl=client_context(config),
                                                       server_hostname="127.0.0.1")
        writer.write(b"PING\r\n")
        reply = await reader.readline()
        writer.close()
        return reply

    assert asyncio.run(ping()) == b"+PONG\r\n"
    # tls-client-cert-file / -key-file win over the server's own pair.
    config.set("tls-cert-file", certs.path("intruder.crt"), startup=True)
    config.set("tls-key-file", certs.path("intruder.key"), startup=True)
    config.set("tls-client-cert-file", certs.path("client.crt"), startup=True)
    config.set("tls-client-key-file", certs.path("client.key"), startup=True)
    assert asyncio.run(ping()) == b"+PONG\r\n"


# --- the same replies as Redis -------------------------------------------------------------------


@pytest.fixture(scope="module")
def redis_tls(certs, tmp_path_factory) -> Iterator[tuple[int, int]]:
    """Debian's redis-server with TLS on a TLS port (and a plain one), as (plain, tls)."""
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is missing: the TLS replies were NOT compared with Redis")
    plain, tls = free_port(), free_port()
    d = tmp_path_factory.mktemp("redis-tls")
    proc = subprocess.Popen(["redis-server", "--port", str(plain), "--bind", "127.0.0.1", "--save", "",
                             "--appendonly", "no", "--dir", str(d), *tls_args(certs, tls)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        wait_for_tls_port(tls, proc, client_ctx(certs))
    except RuntimeError:
        proc.kill()
        out = proc.communicate()[0].decode(errors="replace")
        pytest.skip(f"redis-server did not start with TLS (built without it?): TLS replies NOT "
                    f"compared with Redis\n{out[-500:]}")
    yield plain, tls
    proc.terminate()
    proc.wait(10)


CONFIG_CASES = [
    ("tls-auth-clients", "maybe"), ("tls-port", "70000"), ("tls-port", "-1"),
    ("tls-session-cache-size", "-1"), ("tls-session-cache-timeout", "x"),
    ("tls-prefer-server-ciphers", "maybe"), ("tls-session-caching", "2"),
    ("tls-protocols", "TLSv1.4"), ("tls-protocols", "tlsv1.2 bogus"), ("tls-ciphers", "BOGUS"),
    ("tls-ciphersuites", "BOGUS"), ("tls-cert-file", "/nonexistent/server.crt"),
    ("tls-key-file", "/nonexistent/server.key"), ("tls-ca-cert-file", "/nonexistent/ca.crt"),
    ("tls-dh-params-file", "/nonexistent/dh.pem"),
    ("tls-protocols", "TLSv1.2"), ("tls-protocols", ""), ("tls-ciphers", "HIGH"), ("tls-ciphers", ""),
    ("tls-ciphersuites", "TLS_AES_256_GCM_SHA384"), ("tls-ciphersuites", ""),
    ("tls-auth-clients", "OPTIONAL"), ("tls-auth-clients", "yes"),
    ("tls-session-cache-size", "100"), ("tls-session-caching", "no"), ("tls-session-caching", "yes"),
]


def _config_replies(plain_port: int) -> list:
    out = []
    with redis.Redis(port=plain_port) as c:
        for name, value in CONFIG_CASES:
            try:
                out.append(("ok", c.config_set(name, value)))
            except redis.ResponseError as exc:
                out.append(("err", str(exc)))
            if name != "tls-port":  # each server's own port
                out.append(c.config_get(name))
    return out


def test_config_replies_same_as_redis(certs, tls_server, redis_tls):
    redis_plain, _ = redis_tls
    ours = _config_replies(tls_server.port)
    theirs = _config_replies(redis_plain)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs, strict=True):
        assert a == b


def test_config_get_tls_same_as_redis(certs, tls_server, redis_tls):
    redis_plain, redis_tls_port = redis_tls
    with redis.Redis(port=tls_server.port) as ours, redis.Redis(port=redis_plain) as theirs:
        mine, real = ours.config_get("tls-*"), theirs.config_get("tls-*")
    # Redis 7.0 lacks nothing Rivulet has under tls-*; the ports are each server's own.
    assert mine.pop("tls-port") == str(tls_server.tls_port)
    assert real.pop("tls-port") == str(redis_tls_port)
    assert mine == real


def test_certificate_refusal_same_as_redis(certs, tls_server, redis_tls):
    """A client without a certificate under tls-auth-clients yes: refused by both."""
    results = []
    for port in (tls_server.tls_port, redis_tls[1]):
        for cert in (None, "client"):
            ctx = client_ctx(certs, cert)
            try:
                results.append(handshake(port, ctx))
            except (ssl.SSLError, ConnectionError, OSError):
                results.append("refused")
    assert results[:2] == results[2:] == ["refused", b"+PONG\r\n"]
