"""A real HTTP webhook receiver on 127.0.0.1 for the notification tests.

``Receiver`` runs ``http.server.ThreadingHTTPServer`` in a thread and records every POST
(path, headers, raw body, time). ``fail_first[path] = [500, ...]`` makes the first
requests to ``path`` answer those statuses (then 200); ``always[path] = status`` answers
every request with it.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes
    at: float
    status: int

    def json(self):
        return json.loads(self.body)


class Receiver:
    def __init__(self) -> None:
        self.requests: list[Received] = []
        self.fail_first: dict[str, list[int]] = {}
        self.always: dict[str, int] = {}
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with receiver._lock:
                    queue = receiver.fail_first.get(self.path) or []
                    status = receiver.always.get(self.path) or (queue.pop(0) if queue else 200)
                    receiver.requests.append(
                        Received(
                            self.path, dict(self.headers.items()), body, time.monotonic(), status
                        )
                    )
                self.send_response(status)
                self.send_header("Content-Type", "text/plain")
                self.end_headers()
                self.wfile.write(b"ok" if status == 200 else b"error")

            def log_message(self, *args) -> None:  # keep test output quiet
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Receiver:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    def at(self, path: str) -> list[Received]:
        with self._lock:
            return [r for r in self.requests if r.path == path]


def live_alerts(receiver: Receiver, path: str = "/hook") -> list[dict]:
    """The JSON bodies of the live alerts (``X-Mlaudit-Event: live``) received at ``path``."""
    return [r.json() for r in receiver.at(path) if r.headers.get("X-Mlaudit-Event") == "live"]


def wait_for(pred, timeout: float, what: str) -> None:
    """Poll ``pred()`` every 0.2 s until it is true; AssertionError naming ``what`` after ``timeout`` s."""
    import time

    deadline = time.time() + timeout
    while time.time() < deadline:
        if pred():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
