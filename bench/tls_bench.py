"""TLS: XADD (50 clients, pipeline 1 and 16) with redis-benchmark --tls, and XREADGROUP COUNT 10 +
XACK by the group driver's consumer processes over TLS, each beside the same figure over plain
TCP on the same server in the same run.

Both servers listen on a plain port and a TLS port, with certificates made for the run (a CA, a
server and a client certificate; the client certificate is required, Redis's default). The
`ours/redis` ratio compares Rivulet over TLS with Redis over TLS; `rivulet/plain.*` compares
Rivulet over TLS with Rivulet over plain TCP.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path

from bench.case import Case, Options
from bench.groupdriver import GROUP, KEY, drive, pending_count
from bench.redis_benchmark import run_redis_benchmark
from bench.resp import RespClient, TLSFiles, load_stream
from bench.stats import Metric, Sample
from bench.targets import Target, redis_benchmark_available, start
from bench.throughput import check_command, requests_for
from tests.serverproc import free_port
from tests.tls_certs import CertSet, make_certs, openssl_available

XADD_SHAPES = [(50, 1), (50, 16)]

_certs: CertSet | None = None


def certs() -> CertSet:
    global _certs
    if _certs is None:
        directory = tempfile.mkdtemp(prefix="rivulet-bench-tls-")
        atexit.register(shutil.rmtree, directory, True)
        _certs = make_certs(Path(directory))
    return _certs


def client_files() -> TLSFiles:
    c = certs()
    return TLSFiles(c.ca, c.path("client.crt"), c.path("client.key"))


def _xadd(transport: str, clients: int, pipeline: int) -> str:
    return f"{transport}.xadd.c{clients}.P{pipeline}"


def _metrics() -> list[Metric]:
    metrics = []
    for transport in ("plain", "tls"):
        over = "TLS" if transport == "tls" else "plain TCP"
        for c, p in XADD_SHAPES:
            metrics.append(Metric(_xadd(transport, c, p), "ops/s", True,
                                  f"XADD s * f v over {over}, {c} clients, pipeline {p}",
                                  baseline=_xadd("plain", c, p) if transport == "tls" else None))
        metrics.append(Metric(f"{transport}.xreadgroup", "entries/s", True,
                              f"XREADGROUP COUNT 10 + XACK over {over}, N consumer processes",
                              baseline="plain.xreadgroup" if transport == "tls" else None))
    return metrics


class TLSCase(Case):
    name = "tls"
    metrics = _metrics()

    def missing_tool(self) -> str | None:
        if not redis_benchmark_available():
            return "redis-benchmark is not installed (make tools, or apt-get install redis-tools)"
        if not openssl_available():
            return "the openssl command is missing (certificates are made with it)"
        return None

    def start(self, server: str) -> Target:
        c = certs()
        tls_port = free_port()
        return start(server, "--tls-port", str(tls_port), "--tls-cert-file", c.path("server.crt"),
                     "--tls-key-file", c.path("server.key"), "--tls-ca-cert-file", c.ca,
                     tls_port=tls_port)

    def run(self, target: Target, opts: Options) -> dict[str, Sample]:
        files = client_files()
        check_command(target, "XADD", "s", "*", "f", "v")
        samples: dict[str, Sample] = {}
        for transport, tls in (("plain", None), ("tls", files)):
            for clients, pipeline in XADD_SHAPES:
                with RespClient(target.port) as client:
                    client.call("FLUSHALL")
                samples[_xadd(transport, clients, pipeline)] = run_redis_benchmark(
                    target, requests_for(opts, clients, pipeline), clients, pipeline,
                    command=["xadd", "s", "*", "f", "v"], tls=tls)
            samples[f"{transport}.xreadgroup"] = self._drain(target, opts, tls)
        return samples

    def _drain(self, target: Target, opts: Options, tls: TLSFiles | None) -> Sample:
        entries = opts.requests
        with RespClient(target.port) as client:
            client.call("FLUSHALL")
            load_stream(client, KEY, entries, ("sensor-id", "1234", "temperature", "19.8"))
            client.call("XGROUP", "CREATE", KEY, GROUP, "0")
        processed, _, elapsed, used = drive(target, opts.consumers, tls=tls)
        pending = pending_count(target)
        if processed != entries or pending != 0:
            raise RuntimeError(f"processed {processed} of {entries} entries, {pending} left pending")
        return Sample(entries / elapsed, entries, used, {"consumers": opts.consumers, "entries": entries})
