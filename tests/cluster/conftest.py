"""A real Redis Cluster on loopback: six ``redis-server --cluster-enabled yes`` processes, three masters
each with one replica, created with ``redis-cli --cluster create``. Short node timeouts let a replica take
over within seconds when a test kills its master.
"""

from __future__ import annotations

import random
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest
import redis

from tests.servers import RedisServer, require_binary

NODE_TIMEOUT_MS = 1500


@dataclass
class LocalCluster:
    ports: list[int]
    nodes: dict[int, RedisServer] = field(default_factory=dict)

    @property
    def url(self) -> str:
        return f"redis+cluster://127.0.0.1:{self.ports[0]}"

    def master_of(self, key: str) -> int:
        """The port of the master that serves ``key`` now."""
        client = redis.Redis(host="127.0.0.1", port=self.ports_alive()[0], socket_timeout=2)
        try:
            slot = int(client.execute_command("CLUSTER", "KEYSLOT", key))  # type: ignore[no-untyped-call]
            slots = client.execute_command("CLUSTER", "SLOTS")  # type: ignore[no-untyped-call]
            for start, end, master, *_replicas in slots:
                if start <= slot <= end:
                    return int(master[1])
        finally:
            client.close()
        raise LookupError(f"no master serves slot of {key!r}")

    def ports_alive(self) -> list[int]:
        return [port for port, node in self.nodes.items() if node.running]

    def kill(self, port: int) -> None:
        self.nodes[port].stop()

    def wait_until_replicas_synced(self, timeout_s: float = 30.0) -> None:
        deadline = time.monotonic() + timeout_s
        for port in self.ports:
            client = redis.Redis(host="127.0.0.1", port=port, socket_timeout=2)
            try:
                while True:
                    info = client.info("replication")
                    if info.get("role") != "slave" or info.get("master_link_status") == "up":
                        break
                    if time.monotonic() > deadline:
                        raise TimeoutError(f"replica on port {port} never synced with its master")
                    time.sleep(0.1)
            finally:
                client.close()

    def wait_for_failover(self, key: str, dead_master: int, timeout_s: float = 30.0) -> None:
        """Until a replica has taken over ``key``'s slot from ``dead_master`` and the cluster is ok again."""
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                if self.master_of(key) != dead_master:
                    break
            except redis.exceptions.RedisError:
                pass
            if time.monotonic() > deadline:
                raise TimeoutError(f"no replica took over from the master on port {dead_master}")
            time.sleep(0.2)
        self.wait_until_healthy(timeout_s)

    def wait_until_healthy(self, timeout_s: float = 30.0) -> None:
        deadline = time.monotonic() + timeout_s
        while True:
            client = redis.Redis(host="127.0.0.1", port=self.ports_alive()[0], socket_timeout=2)
            try:
                info = client.execute_command("CLUSTER", "INFO")  # type: ignore[no-untyped-call]
                text = info.decode() if isinstance(info, bytes) else str(info)
                if "cluster_state:ok" in text:
                    return
            except redis.exceptions.RedisError:
                pass
            finally:
                client.close()
            if time.monotonic() > deadline:
                raise TimeoutError("the Redis Cluster did not reach cluster_state:ok")
            time.sleep(0.2)


BUS_PORT_OFFSET = 10_000
NODE_START_ATTEMPTS = 5


def _ephemeral_low() -> int:
    """The first port the kernel hands out to outgoing connections and port-0 binds (Linux's default
    when the range cannot be read)."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range", encoding="ascii") as limits:
            return int(limits.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32_768


def _cluster_port(taken: set[int]) -> int:
    """A free port whose cluster bus port (+10000) is free too, neither in ``taken`` nor equal to a
    taken node's bus port, and both below the ephemeral range, where no client socket or ``free_port``
    of another test can take them between the choice and the node's start."""
    highest = min(_ephemeral_low(), 55_536) - BUS_PORT_OFFSET - 1
    for _ in range(200):
        port = random.randint(10_000, max(10_001, highest))
        pair = {port, port + BUS_PORT_OFFSET}
        if pair & taken:
            continue
        try:
            for candidate in pair:
                with socket.socket() as sock:
                    sock.bind(("127.0.0.1", candidate))
        except OSError:
            continue
        taken |= pair
        return port
    raise RuntimeError("no free port pair for a cluster node")


def _started_node(taken: set[int]) -> RedisServer:
    """A cluster node started on a fresh port pair; a pair that turns out to be held is given up for
    another."""
    failures: list[str] = []
    for _ in range(NODE_START_ATTEMPTS):
        node = _cluster_node(_cluster_port(taken))
        try:
            node.start()
        except (redis.exceptions.RedisError, RuntimeError) as error:
            node.close()
            failures.append(f"port {node.port}: {error}")
            continue
        return node
    raise RuntimeError("no cluster node would start: " + "; ".join(failures))


def _cluster_node(port: int) -> RedisServer:
    return RedisServer(
        "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
        "--cluster-node-timeout", str(NODE_TIMEOUT_MS),
        # Replicas sync at once and may always take over: a test kills a master seconds after creation.
        "--repl-diskless-sync-delay", "0", "--cluster-replica-validity-factor", "0",
        port=port,
    )  # fmt: skip


@pytest.fixture(scope="module")
def redis_cluster() -> Iterator[LocalCluster]:
    cli = require_binary("redis-cli")
    cluster = LocalCluster(ports=[])
    taken: set[int] = set()
    try:
        for _ in range(6):
            node = _started_node(taken)
            cluster.ports.append(node.port)
            cluster.nodes[node.port] = node
        created = subprocess.run(
            [cli, "--cluster", "create", *(f"127.0.0.1:{port}" for port in cluster.ports),
             "--cluster-replicas", "1", "--cluster-yes"],
            check=False, capture_output=True, timeout=60,
        )  # fmt: skip
        if created.returncode != 0:
            raise RuntimeError(f"redis-cli --cluster create failed: {created.stdout!r} {created.stderr!r}")
        cluster.wait_until_healthy()
        cluster.wait_until_replicas_synced()
        yield cluster
    finally:
        for node in cluster.nodes.values():
            node.close()
