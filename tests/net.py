"""Loopback helpers the fixtures share: free ports, whether a Docker engine answers, waiting for Redis."""

from __future__ import annotations

import os
import socket
import time

import redis

__all__ = ["IN_CI", "docker_answers", "free_port", "wait_for_redis"]

IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def docker_answers() -> bool:
    """Whether a Docker engine answers ``/_ping`` (probed with a plain socket that is always closed)."""
    host = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
    try:
        if host.startswith("unix://"):
            path = host.removeprefix("unix://")
            if not os.path.exists(path):
                return False
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                sock.settimeout(1.0)
                sock.connect(path)
                sock.sendall(b"GET /_ping HTTP/1.0\r\nHost: docker\r\n\r\n")
                return b" 200 " in sock.recv(256)
        if host.startswith("tcp://"):
            address, _, port = host.removeprefix("tcp://").rpartition(":")
            with socket.create_connection((address, int(port)), timeout=1.0) as sock:
                sock.sendall(b"GET /_ping HTTP/1.0\r\nHost: docker\r\n\r\n")
                return b" 200 " in sock.recv(256)
    except (OSError, ValueError):
        return False
    return False


def wait_for_redis(url: str, timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    client = redis.Redis.from_url(url, socket_connect_timeout=0.5)
    try:
        while True:
            try:
                client.ping()
                return
            except redis.exceptions.ConnectionError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
    finally:
        client.close()
