"""``gpuquote serve``: the HTTP service under granian (the default) or uvicorn.

This process reads the settings and starts the workers; it never answers a request, so it imports the
servers and the settings alone, and each worker imports the app (``service.asgi``).
"""

from __future__ import annotations

import argparse

import uvicorn
from granian import Granian
from granian.constants import Interfaces, Loops
from granian.http import HTTP1Settings
from granian.log import LogLevels

from service.logs import log_config
from service.settings import Settings, SettingsError

__all__ = ["DEFAULT_SERVER", "EXIT_2_ERRORS", "SERVED_APP", "SERVERS", "run_server", "serve"]

SERVERS = ("granian", "uvicorn")
DEFAULT_SERVER = "granian"  # bench/http.py: the faster of the two on /health and a bare route
SERVED_APP = "service.asgi:proxied_app"
# What this command exits 2 for (``service.cli.main``): the settings.
EXIT_2_ERRORS: tuple[type[Exception], ...] = (SettingsError,)


def run_server(target: str, *, server: str, host: str, port: int, workers: int, settings: Settings) -> None:
    """Serve the ASGI app factory ``target`` (``module:function``) with granian or uvicorn.

    Either way: JSON log lines through one queue per worker (the app writes the access line itself, so
    the server's own access log is off) and uvloop. The server never reads ``X-Forwarded-*`` itself:
    ``proxied_app`` does, from ``settings.trusted_proxies`` only.
    """
    logging_config = log_config(settings.log_level)
    if server == "granian":
        Granian(
            target,
            factory=True,
            address=host,
            port=port,
            interface=Interfaces.ASGI,
            workers=workers,
            loop=Loops.uvloop,
            log_dictconfig=logging_config,
            log_level=LogLevels(settings.log_level.lower()),
            log_access=False,
            # Headers that trickle in are cut off like a slow body (the app times out bodies itself).
            http1_settings=HTTP1Settings(header_read_timeout=int(settings.body_read_timeout_s * 1000)),
            workers_kill_timeout=settings.shutdown_timeout_s,
        ).serve()
        return
    uvicorn.run(
        target,
        factory=True,
        host=host,
        port=port,
        workers=workers,
        loop="uvloop",
        http="httptools",
        log_config=logging_config,
        access_log=False,
        proxy_headers=False,  # the app factory applies the trusted proxies' headers itself
        timeout_graceful_shutdown=settings.shutdown_timeout_s,
    )


def serve(args: argparse.Namespace) -> int:
    settings = Settings.from_env()  # fail here, with the variable named, rather than inside a worker
    run_server(
        SERVED_APP,
        server=args.server,
        host=args.host,
        port=args.port,
        workers=args.workers,
        settings=settings,
    )
    return 0
