"""``offsetguard serve``: run the monitoring service (one uvicorn worker: the scheduler must run once)."""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from collectors.errors import ConfigError
from service import logs
from service.memory import fix_mmap_threshold, limit_arenas, tune_gc
from service.settings import Settings, load_settings
from store.opening import ensure_openable

if TYPE_CHECKING:
    import uvicorn

    from service.runtime import Runtime

log = logging.getLogger(__name__)


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser("serve", help="run the offsetguard service")
    parser.add_argument("--config", type=Path, help="YAML settings file (env OFFSETGUARD_... overrides it)")
    parser.add_argument(
        "--sandbox",
        metavar="DIR",
        help="start a 1-node sandbox Kafka in DIR, watch it, and stop it on exit",
    )
    parser.add_argument("--host", help="listen address (default from settings: 127.0.0.1)")
    parser.add_argument("--port", type=int, help="listen port (default from settings: 8080)")
    parser.set_defaults(func=run)


def exit_on_sigterm() -> None:
    """SIGTERM raises :class:`SystemExit` (143), so ``finally`` blocks run. uvicorn handles SIGTERM while
    it serves, then restores the handler it found and raises the signal again: with Python's default
    handler the process would die right there, before ``serve --sandbox`` stopped its Kafka (SIGKILLed
    instead by its death signal, no controlled shutdown)."""

    def _exit(signum: int, _frame: object) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, _exit)


def _with_cli_overrides(settings: Settings, args: argparse.Namespace) -> Settings:
    update: dict[str, Any] = {}
    if args.host:
        update["http_host"] = args.host
    if args.port is not None:
        if not 0 <= args.port < 65536:
            raise ConfigError(f"--port {args.port} is out of range", field="http_port")
        update["http_port"] = args.port
    return settings.model_copy(update=update) if update else settings


def run(args: argparse.Namespace) -> int:
    settings = _with_cli_overrides(load_settings(args.config), args)
    # The settings' log_level (not the CLI's --log-level), first: every line after this one is in
    # log_format, uvicorn's included (it is told to leave logging alone below).
    logs.configure(settings.log_level, settings.log_format, access_log=settings.access_log)
    limit_arenas()  # before any thread starts (see service.memory)
    fix_mmap_threshold()  # large blocks returned when freed, not kept in the heap (see service.memory)
    sandbox = None
    if args.sandbox:
        from sandbox.cluster import start_sandbox

        exit_on_sigterm()  # the sandbox is stopped below (down) on SIGTERM as on Ctrl-C
        sandbox = start_sandbox(Path(args.sandbox), brokers=1)
        log.info("sandbox Kafka at %s", sandbox.bootstrap_servers)
        url = f"http://{settings.http_host}:{settings.http_port}"
        log.info(
            "rehearse an incident once ready: offsetguard drill rewind --sandbox %s --url %s"
            " (kinds: offsetguard drill --help)",
            args.sandbox,
            url,
        )
        settings = settings.model_copy(update={"clusters": [sandbox.cluster_settings("sandbox")]})
    if not settings.clusters:
        raise ConfigError("no clusters configured: give --config FILE or --sandbox DIR", field="clusters")
    # a damaged file (its recovery) or an unreachable PostgreSQL server, before anything starts on it
    ensure_openable(settings.store)
    log.info("on-call console at http://%s:%s/ui/", settings.http_host, settings.http_port)
    try:
        asyncio.run(serve(settings, built_runtime))
    finally:
        if sandbox is not None:
            sandbox.down()
    return 0


async def serve(
    settings: Settings,
    runtime_factory: Callable[[Settings], Runtime],
    server_factory: Callable[[Settings, Runtime], uvicorn.Server] | None = None,
) -> None:
    """Collect first, then serve: the runtime's collectors and tails start before the HTTP app is imported
    (FastAPI, the API's models, uvicorn: a third of a second of CPU), which happens on a worker thread
    (``server_factory``, :func:`http_server` by default) while the first collections wait for Kafka. The
    app's lifespan then launches detection and, at the end, stops the runtime; stopped here too if the
    server never started (its port taken, say)."""
    runtime = runtime_factory(settings)
    try:
        await runtime.start_collecting()
        server = await asyncio.to_thread(server_factory or http_server, settings, runtime)
        await server.serve()
    finally:
        await runtime.stop()


def built_runtime(settings: Settings) -> Runtime:
    """:func:`service.runtime.build_runtime`, then the garbage collector tuned: what exists by now (the
    runtime's modules and objects) lives as long as the process and is left out of every collection."""
    from service.runtime import build_runtime

    runtime = build_runtime(settings)
    tune_gc()
    return runtime


def http_server(settings: Settings, runtime: Runtime) -> uvicorn.Server:
    """The uvicorn server of the app over ``runtime`` (already collecting), its modules imported and its
    render worker starting (called on a worker thread: nothing here needs the event loop)."""
    import uvicorn

    from service.app import create_app

    app = create_app(settings, runtime_factory=lambda _settings: runtime)
    app.state.metrics.warm_up()  # standing renders (and the render worker, if on) from the start
    config = uvicorn.Config(
        app,
        host=settings.http_host,
        port=settings.http_port,
        workers=1,
        log_config=None,  # logs.configure's handler and levels, not uvicorn's own
        log_level=None,
        access_log=settings.access_log,
        timeout_graceful_shutdown=30,
    )
    config.load()  # uvicorn's protocol modules imported here too, not on the event loop
    return uvicorn.Server(config)
