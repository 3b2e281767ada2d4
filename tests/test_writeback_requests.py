"""Requests per run of the MLflow write-back (issue 30), counted on the wire.

A counting reverse proxy (``http.server`` + ``http.client``, in this file) sits between a
real ``MlflowClient`` and the real ``mlflow server`` of the ``mlflow_server`` fixture (sqlite
backend, artifacts served by the server's proxy); every request the write-back makes goes
through it and is recorded as ``(method, path)``.
"""

from __future__ import annotations

import http.client
import math
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlparse

import pytest

mlflow = pytest.importorskip("mlflow")
from mlaudit_mlflow.writeback import NOTE_TAG, write_verdict  # noqa: E402

from mlaudit_core import audit  # noqa: E402


class CountingProxy:
    """Forwards every HTTP request to ``upstream`` and records ``(method, path)``."""

    def __init__(self, upstream: str) -> None:
        up = urlparse(upstream)
        self.requests: list[tuple[str, str]] = []
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _forward(self) -> None:
                proxy.requests.append((self.command, self.path.split("?")[0]))
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n) if n else None
                conn = http.client.HTTPConnection(up.hostname, up.port, timeout=60)
                headers = {k: v for k, v in self.headers.items() if k.lower() != "host"}
                conn.request(self.command, self.path, body=body, headers=headers)
                resp = conn.getresponse()
                data = resp.read()
                self.send_response(resp.status)
                for k, v in resp.getheaders():
                    if k.lower() not in ("transfer-encoding", "connection", "content-length"):
                        self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                conn.close()

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _forward

            def log_message(self, *a) -> None:  # quiet
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _log_run(url: str, note: str | None) -> str:
    from mlflow.entities import Metric

    client = mlflow.MlflowClient(url)
    exp = client.get_experiment_by_name("wb-requests")
    exp_id = exp.experiment_id if exp else client.create_experiment("wb-requests")
    tags = {NOTE_TAG: note} if note is not None else {}
    rid = client.create_run(exp_id, run_name="count", tags=tags).info.run_id
    ms = [
        Metric("train/loss", 2.3 * math.exp(-i / 100) + 0.2, 1_700_000_000_000 + i * 1000, i)
        for i in range(1, 801)
    ]
    client.log_batch(rid, metrics=ms)
    client.set_terminated(rid, "FINISHED")
    return rid


@pytest.mark.parametrize("note", [None, "the user's own notes"])
def test_write_verdict_makes_three_requests_besides_the_report_uploads(mlflow_server, note):
    from mlaudit_mlflow.plugin import MlflowPlugin

    proxy = CountingProxy(mlflow_server["url"])
    try:
        rid = _log_run(mlflow_server["url"], note)
        run = MlflowPlugin(proxy.url).load(rid)
        report = audit(run)
        client = mlflow.MlflowClient(proxy.url)
        proxy.requests.clear()
        res = write_verdict(client, run, report)
        reqs = list(proxy.requests)
    finally:
        proxy.close()
    uploads = [r for r in reqs if r[0] == "PUT" and "/mlflow-artifacts/artifacts/" in r[1]]
    others = [r for r in reqs if r not in uploads]
    assert len(uploads) == len(res.artifacts)  # one per report file (the proxy takes one a PUT)
    assert [p.rsplit("/", 1)[-1] for _, p in others] == ["get", "log-batch", "get"], others
    tags = mlflow.MlflowClient(mlflow_server["url"]).get_run(rid).data.tags
    assert tags["mlaudit.verdict"] == report.verdict.outcome.value
    assert "mlaudit verdict" in tags[NOTE_TAG]
    assert note is None or tags[NOTE_TAG].startswith(note)
