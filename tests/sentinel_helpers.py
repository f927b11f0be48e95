"""A master, its replicas and real `redis-sentinel` processes, for failover tests.

The data servers are made by a factory that takes extra command-line arguments (the same
`--replicaof host port` spelling for redis-server and Rivulet), so the same scenario runs against
Debian's `redis-server` (`redis_node`) or Rivulet's `python -m server` (`rivulet_node`, through
tests/serverproc.py's ServerProcess). Sentinels are always Debian's `redis-sentinel`: each gets its
own config file in a temporary directory, which it rewrites as it learns the topology.

    group = SentinelGroup(redis_node).start()
    try:
        group.master_client().xadd("s", {"f": "v"})
        group.kill_master()
        new = group.wait_failover()
    finally:
        group.cleanup()
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

import redis

from tests.serverproc import ServerProcess, free_port, stop_process, wait_for_port

Address = tuple[str, int]
HOST = "127.0.0.1"


class DataNode(Protocol):
    """What the group needs of a data server process (ServerProcess has exactly this)."""

    port: int

    def start(self) -> DataNode: ...

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 10.0) -> int | None: ...

    def cleanup(self) -> None: ...

    def log(self) -> str: ...


NodeFactory = Callable[[Sequence[str]], DataNode]


class RedisNode:
    """A redis-server (Debian's, or `binary`) on a free port of 127.0.0.1, no persistence,
    logging to a file."""

    def __init__(self, *args: str, binary: str = "redis-server") -> None:
        self.binary = binary
        self.port = free_port()
        self.dir = tempfile.mkdtemp(prefix="redis-node-")
        self.log_path = os.path.join(self.dir, "redis.log")
        self.args = ["--port", str(self.port), "--bind", HOST, "--save", "", "--appendonly", "no",
                     "--dir", self.dir, "--logfile", self.log_path,
                     # A replica's full sync starts at once rather than after Redis 7's 5 s wait
                     # for more replicas to share a diskless transfer.
                     "--repl-diskless-sync-delay", "0", *args]
        self.proc: subprocess.Popen | None = None

    def start(self) -> RedisNode:
        self.proc = subprocess.Popen([self.binary, *self.args],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for_port(self.port, self.proc)
        return self

    def log(self) -> str:
        try:
            return Path(self.log_path).read_text(errors="replace")
        except OSError:
            return ""

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 10.0) -> int | None:
        return None if self.proc is None else stop_process(self.proc, sig, timeout)

    def cleanup(self) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


def redis_node(args: Sequence[str]) -> DataNode:
    return RedisNode(*args)


def rivulet_node(args: Sequence[str]) -> DataNode:
    # As redis_node: no persistence, and a replica's full sync starts at once.
    return ServerProcess("--appendonly", "no", "--repl-diskless-sync-delay", "0", *args)


def redis_available() -> bool:
    return shutil.which("redis-server") is not None and shutil.which("redis-sentinel") is not None


class SentinelProcess:
    """One `redis-sentinel` monitoring `master_name` at `master`, with a writable config file."""

    def __init__(self, directory: str, master_name: str, master: Address, quorum: int,
                 down_after_ms: int, failover_timeout_ms: int, auth_pass: str | None = None,
                 requirepass: str | None = None) -> None:
        self.port = free_port()
        self.myid = uuid.uuid4().hex + uuid.uuid4().hex[:8]
        self.directory, self.master_name = directory, master_name
        self.config = os.path.join(directory, f"sentinel-{self.port}.conf")
        self.log_path = os.path.join(directory, f"sentinel-{self.port}.log")
        Path(self.config).write_text(
            f"port {self.port}\nbind {HOST}\ndaemonize no\ndir {directory}\n"
            f"logfile {self.log_path}\n"
            f"sentinel monitor {master_name} {master[0]} {master[1]} {quorum}\n"
            f"sentinel down-after-milliseconds {master_name} {down_after_ms}\n"
            f"sentinel failover-timeout {master_name} {failover_timeout_ms}\n"
            f"sentinel parallel-syncs {master_name} 1\n"
            f"sentinel myid {self.myid}\n"
            + (f"sentinel auth-pass {master_name} {auth_pass}\n" if auth_pass else "")
            + (f"requirepass {requirepass}\n" if requirepass else "")
        )
        self.password = requirepass
        self.proc: subprocess.Popen | None = None

    def know(self, replicas: Sequence[Address], others: Sequence[SentinelProcess]) -> None:
        """Name the replicas and the other sentinels in the config, as a running sentinel records
        them: it then needs no discovery round (hello messages every 2 s) before it can vote."""
        with open(self.config, "a") as f:
            for host, port in replicas:
                f.write(f"sentinel known-replica {self.master_name} {host} {port}\n")
            for other in others:
                f.write(f"sentinel known-sentinel {self.master_name} {HOST} {other.port} {other.myid}\n")

    def start(self) -> SentinelProcess:
        self.proc = subprocess.Popen(["redis-sentinel", self.config],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for_port(self.port, self.proc)
        return self

    def client(self) -> redis.Redis:
        return redis.Redis(HOST, self.port, password=self.password, decode_responses=True,
                           socket_timeout=5)

    def log(self) -> str:
        try:
            return Path(self.log_path).read_text(errors="replace")
        except OSError:
            return ""

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class SentinelGroup:
    """A master, `replicas` replicas of it and `sentinels` sentinels watching it.

    Failover is quick on purpose (down-after 1 s by default): a SIGKILLed master is replaced
    within a few seconds. `password` protects the data servers (requirepass, and masterauth for
    the replicas), `sentinel_password` the sentinels.
    """

    def __init__(self, node_factory: NodeFactory = redis_node, replicas: int = 1, sentinels: int = 3,
                 master_name: str = "mymaster", quorum: int = 2, down_after_ms: int = 1000,
                 failover_timeout_ms: int = 4000, password: str | None = None,
                 sentinel_password: str | None = None) -> None:
        self.password = password
        self.sentinel_password = sentinel_password
        self.node_factory = node_factory
        self.replica_count = replicas
        self.sentinel_count = sentinels
        self.master_name = master_name
        self.quorum = quorum
        self.down_after_ms = down_after_ms
        self.failover_timeout_ms = failover_timeout_ms
        self.dir = tempfile.mkdtemp(prefix="sentinel-group-")
        self.nodes: list[DataNode] = []  # [0] is the first master
        self.sentinels: list[SentinelProcess] = []

    # -- start-up --------------------------------------------------------------------------

    def start(self, timeout: float = 30.0) -> SentinelGroup:
        auth = ["--requirepass", self.password, "--masterauth", self.password] if self.password else []
        try:
            master = self.node_factory(auth).start()
            self.nodes.append(master)
            for _ in range(self.replica_count):
                self.nodes.append(self.node_factory([*auth, "--replicaof", HOST, str(master.port)]).start())
            self._wait_replicas_linked(master.port, timeout)
            sentinels = [SentinelProcess(self.dir, self.master_name, (HOST, master.port), self.quorum,
                                         self.down_after_ms, self.failover_timeout_ms,
                                         self.password, self.sentinel_password)
                         for _ in range(self.sentinel_count)]
            replicas = [(HOST, n.port) for n in self.nodes[1:]]
            for sentinel in sentinels:
                sentinel.know(replicas, [other for other in sentinels if other is not sentinel])
                self.sentinels.append(sentinel.start())
            self.wait_ready(timeout)
        except BaseException:
            self.cleanup()
            raise
        return self

    def _wait_replicas_linked(self, master_port: int, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        with redis.Redis(HOST, master_port, password=self.password, decode_responses=True) as r:
            while time.monotonic() < deadline:
                info = r.info("replication")
                online = [v for k, v in info.items() if k.startswith("slave") and isinstance(v, dict)
                          and v.get("state") == "online"]
                if len(online) >= self.replica_count:
                    return
                time.sleep(0.05)
        raise TimeoutError(f"the replicas did not finish their sync with the master within {timeout}s")

    def wait_ready(self, timeout: float = 30.0) -> None:
        """Until every sentinel knows the master, every replica and every other sentinel (a
        failover needs the quorum to be able to talk)."""
        deadline = time.monotonic() + timeout
        pending = list(self.sentinels)
        while pending and time.monotonic() < deadline:
            sentinel = pending[0]
            with sentinel.client() as s:
                try:
                    state = s.sentinel_master(self.master_name)
                except redis.RedisError:
                    state = {}
            if (state.get("num-slaves") == self.replica_count
                    and state.get("num-other-sentinels") == self.sentinel_count - 1
                    and "s_down" not in str(state.get("flags", ""))):
                pending.pop(0)
            else:
                time.sleep(0.1)
        if pending:
            raise TimeoutError(f"sentinels not ready within {timeout}s:\n" + self.logs())

    # -- addressing ------------------------------------------------------------------------

    def sentinel_addresses(self) -> list[Address]:
        return [(HOST, s.port) for s in self.sentinels]

    def url(self, db: int = 0, scheme: str = "sentinel") -> str:
        """The sentinel url of the group, with the data servers' password when they have one."""
        hosts = ",".join(f"{h}:{p}" for h, p in self.sentinel_addresses())
        auth = f":{self.password}@" if self.password else ""
        return f"{scheme}://{auth}{hosts}/{self.master_name}/{db}"

    def client(self, port: int) -> redis.Redis:
        return redis.Redis(HOST, port, password=self.password, decode_responses=True)

    def master_addr(self) -> Address:
        """What the first answering sentinel says the master is (SENTINEL get-master-addr-by-name)."""
        for sentinel in self.sentinels:
            if sentinel.proc is None or sentinel.proc.poll() is not None:
                continue
            with sentinel.client() as s:
                try:
                    host, port = s.execute_command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", self.master_name)
                except redis.RedisError:
                    continue
            return host, int(port)
        raise RuntimeError("no sentinel answers")

    def node_at(self, port: int) -> DataNode:
        return next(n for n in self.nodes if n.port == port)

    def master_client(self) -> redis.Redis:
        return self.client(self.master_addr()[1])

    def replica_ports(self) -> list[int]:
        master = self.master_addr()[1]
        return [n.port for n in self.nodes if n.port != master and _alive(n)]

    def wait_replicated(self, timeout_ms: int = 5000) -> None:
        """WAIT for every live replica to hold everything the master has (its offset)."""
        with self.master_client() as r:
            # WAIT counts the replicas that reached this connection's last write: write first.
            r.set("sentinel-helpers:wait", time.time())
            want = len(self.replica_ports())
            got = r.execute_command("WAIT", want, timeout_ms)
            if got < want:
                raise TimeoutError(f"only {got} of {want} replicas acknowledged within {timeout_ms} ms")

    # -- failover --------------------------------------------------------------------------

    def kill_master(self) -> Address:
        """SIGKILL the current master; returns its address."""
        addr = self.master_addr()
        self.node_at(addr[1]).stop(signal.SIGKILL)
        return addr

    def wait_failover(self, old: Address | None = None, timeout: float = 30.0) -> Address:
        """Until every live sentinel names a master other than `old` and that server says it is
        one (ROLE); returns its address."""
        old = old or self.master_addr()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            seen = set()
            for sentinel in self.sentinels:
                with sentinel.client() as s:
                    try:
                        host, port = s.execute_command("SENTINEL", "GET-MASTER-ADDR-BY-NAME",
                                                       self.master_name)
                    except redis.RedisError:
                        continue
                seen.add((host, int(port)))
            if len(seen) == 1 and old not in seen:
                new = seen.pop()
                try:
                    with redis.Redis(*new, password=self.password, decode_responses=True,
                                     socket_timeout=2) as r:
                        if r.execute_command("ROLE")[0] == "master":
                            return new
                except redis.RedisError:
                    pass
            time.sleep(0.1)
        raise TimeoutError(f"no failover within {timeout}s:\n" + self.logs())

    # -- teardown --------------------------------------------------------------------------

    def logs(self) -> str:
        parts = [f"--- sentinel {s.port} ---\n{s.log()[-3000:]}" for s in self.sentinels]
        parts += [f"--- node {n.port} ---\n{n.log()[-3000:]}" for n in self.nodes]
        return "\n".join(parts)

    def cleanup(self) -> None:
        for sentinel in self.sentinels:
            sentinel.stop()
        for node in self.nodes:
            node.cleanup()
        shutil.rmtree(self.dir, ignore_errors=True)


def _alive(node: DataNode) -> bool:
    proc = getattr(node, "proc", None)
    return proc is not None and proc.poll() is None
