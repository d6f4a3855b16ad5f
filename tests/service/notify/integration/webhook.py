"""A webhook receiver on loopback, in a thread of the test process, that can be down (port closed),
failing (503) or up; it keeps every JSON document it accepted."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class WebhookReceiver:
    """Start with :meth:`up` (port bound); :meth:`down` closes the port; ``failing`` answers 503."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.url = f"http://127.0.0.1:{port}/hook"
        self.failing = False
        self.accepted: list[dict[str, Any]] = []
        self.refused = 0
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def up(self) -> None:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                with receiver._lock:
                    if receiver.failing:
                        receiver.refused += 1
                        status = 503
                    else:
                        receiver.accepted.append(json.loads(body))
                        status = 200
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        ThreadingHTTPServer.allow_reuse_address = True
        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, name="webhook", daemon=True)
        self._thread.start()

    def down(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(10)
            self._thread = None

    def events(self) -> list[tuple[str, str]]:
        """(alert id, event) of every accepted document, in arrival order."""
        with self._lock:
            return [(d["alert"]["id"], d["event"]) for d in self.accepted]
