"""Redis Sentinel (Debian's redis-sentinel) watching a Rivulet master and its Rivulet replica:
it finds the replica through the master's INFO, reads the replica's INFO replication, and when
the master dies promotes the replica (REPLICAOF NO ONE and CONFIG REWRITE inside MULTI), which
then takes writes; the old master, back, is made a replica of the new one."""

from __future__ import annotations

import shutil
import subprocess
import tempfile

import pytest
import redis

from tests.replica_helpers import info, wait_synced, wait_until
from tests.serverproc import ServerProcess, free_port, wait_for_port

pytestmark = pytest.mark.skipif(
    shutil.which("redis-sentinel") is None,
    reason="redis-sentinel is not installed: failover by Sentinel was NOT tested")


def _with_config(path: str, *lines: str) -> ServerProcess:
    with open(path, "w") as fh:
        fh.write("\n".join(lines) + "\n")
    proc = ServerProcess(port=int(lines[0].split()[1]))
    proc.args.insert(0, path)
    return proc


def test_sentinel_promotes_a_rivulet_replica(tmp_path):
    started: list = []
    sentinel = None
    workdir = tempfile.mkdtemp(prefix="sentinel-")
    try:
        mport, rport, sport = free_port(), free_port(), free_port()
        master = _with_config(str(tmp_path / "master.conf"), f"port {mport}").start()
        started.append(master)
        replica = _with_config(str(tmp_path / "replica.conf"), f"port {rport}",
                               f"replicaof 127.0.0.1 {mport}").start()
        started.append(replica)
        m, r = redis.Redis(port=mport), redis.Redis(port=rport)
        m.xadd("s", {"a": "1"}, id="1-0")
        m.xgroup_create("s", "g", id="0")
        wait_synced(m, r)
        conf = tmp_path / "sentinel.conf"
        conf.write_text(f"port {sport}\nbind 127.0.0.1\ndir {workdir}\n"
                        f"sentinel monitor mymaster 127.0.0.1 {mport} 1\n"
                        "sentinel down-after-milliseconds mymaster 1000\n"
                        "sentinel failover-timeout mymaster 10000\n")
        sentinel = subprocess.Popen(["redis-sentinel", str(conf)], stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL)
        wait_for_port(sport, sentinel)
        s = redis.Redis(port=sport)
        # Sentinel found the replica through the master's INFO and reads its INFO.
        wait_until(lambda: any(rep[b"port"] == str(rport).encode() if isinstance(rep, dict)
                               else str(rport).encode() in rep
                               for rep in s.execute_command("SENTINEL", "REPLICAS", "mymaster")),
                   timeout=20, what="Sentinel to discover the replica")
        master.stop()
        wait_until(lambda: s.execute_command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", "mymaster")
                   == [b"127.0.0.1", str(rport).encode()], timeout=40, what="the failover")
        wait_until(lambda: info(r)["role"] == "master", what="the promotion")
        assert r.xadd("s", {"b": "2"}, id="2-0") == b"2-0"
        assert r.xreadgroup("g", "c", {"s": ">"}) == [[b"s", [(b"1-0", {b"a": b"1"}),
                                                             (b"2-0", {b"b": b"2"})]]]
        # The promotion was persisted: no replicaof line any more.
        assert "replicaof" not in (tmp_path / "replica.conf").read_text()
        # The old master comes back: Sentinel makes it a replica of the new one.
        back = ServerProcess(port=mport, data_dir=master.dir)
        back.args.insert(0, str(tmp_path / "master.conf"))
        back.start()
        started.append(back)
        m2 = redis.Redis(port=mport)
        wait_until(lambda: info(m2).get("master_port") == str(rport), timeout=40,
                   what="Sentinel to reconfigure the old master")
        wait_synced(r, m2)
        assert m2.xlen("s") == 2
        assert f"replicaof 127.0.0.1 {rport}" in (tmp_path / "master.conf").read_text()
    finally:
        if sentinel is not None:
            sentinel.terminate()
            sentinel.wait(10)
        for proc in started:
            proc.cleanup()
        shutil.rmtree(workdir, ignore_errors=True)
