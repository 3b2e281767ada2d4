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


def _write_counted(url: str, note: str | None, *, edit: str | None = None):
    """Load and audit a fresh run, then write it back through the counting proxy; ``edit``:
    a user's Description saved between the audit's load and the write-back."""
    from mlaudit_mlflow.plugin import MlflowPlugin

    proxy = CountingProxy(url)
    try:
        rid = _log_run(url, note)
        run = MlflowPlugin(proxy.url).load(rid)
        report = audit(run)
        if edit is not None:
            mlflow.MlflowClient(url).set_tag(rid, NOTE_TAG, edit)
        client = mlflow.MlflowClient(proxy.url)
        proxy.requests.clear()
        res = write_verdict(client, run, report)
        reqs = list(proxy.requests)
    finally:
        proxy.close()
    uploads = [r for r in reqs if r[0] == "PUT" and "/mlflow-artifacts/artifacts/" in r[1]]
    # MLflow 3.18's client asks the server for ``server-info`` once on its own first call to a
    # tracking URI (a capability probe of the SDK, not a request of the write-back)
    others = [r for r in reqs if r not in uploads and not r[1].endswith("/server-info")]
    return rid, report, res, uploads, [p.rsplit("/", 1)[-1] for _, p in others]


@pytest.mark.parametrize("note", [None, "the user's own notes"])
def test_write_verdict_makes_three_requests_per_fresh_run(mlflow_server, note, monkeypatch):
    """One upload (report.html with the plots inline and the JSON report embedded), one
    get_run for the Description merge, one log_batch with every tag and the Description."""
    from mlaudit_core.render.html import report_json_from_html

    monkeypatch.delenv("MLAUDIT_REPORT_FILES", raising=False)
    url = mlflow_server["url"]
    rid, report, res, uploads, others = _write_counted(url, note)
    assert res.artifacts == ["mlaudit/report.html"]
    assert [p.rsplit("/", 1)[-1] for _, p in uploads] == ["report.html"]
    assert others == ["get", "log-batch"], others
    client = mlflow.MlflowClient(url)
    tags = client.get_run(rid).data.tags
    assert tags["mlaudit.verdict"] == report.verdict.outcome.value
    assert "mlaudit verdict" in tags[NOTE_TAG]
    assert note is None or tags[NOTE_TAG].startswith(note)
    import json
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        page = open(client.download_artifacts(rid, "mlaudit/report.html", tmp)).read()
    assert "<svg" in page  # the plots, inline
    doc = json.loads(report_json_from_html(page) or "null")
    assert doc["verdict"]["outcome"] == report.verdict.outcome.value


def test_write_verdict_rechecks_a_description_edited_since_the_load(mlflow_server, monkeypatch):
    """A Description saved after the audit loaded the run: the merge keeps it, and the
    write-back reads the Description once more after writing (a save from a page loaded
    before the write would drop mlaudit's section): 4 requests."""
    monkeypatch.delenv("MLAUDIT_REPORT_FILES", raising=False)
    url = mlflow_server["url"]
    rid, _, res, uploads, others = _write_counted(url, "first notes", edit="edited notes")
    assert len(uploads) == 1 and others == ["get", "log-batch", "get"], others
    note = mlflow.MlflowClient(url).get_run(rid).data.tags[NOTE_TAG]
    assert note.startswith("edited notes") and "mlaudit verdict" in note
    assert res.section_state == "written"


def test_write_verdict_uploads_the_files_mlaudit_report_files_asks_for(mlflow_server, monkeypatch):
    """``MLAUDIT_REPORT_FILES=json,md,svg``: report.json, report.md and each plot's SVG beside
    report.html, one upload each; the Description and tags still take get_run + log_batch."""
    monkeypatch.setenv("MLAUDIT_REPORT_FILES", "json, md,svg")
    rid, _, res, uploads, others = _write_counted(mlflow_server["url"], None)
    names = sorted(p.split("/mlaudit/", 1)[1] for _, p in uploads)
    assert names == sorted(a.split("/", 1)[1] for a in res.artifacts)
    assert {"report.html", "report.json", "report.md", "plots/loss.svg"} <= set(names)
    assert others == ["get", "log-batch"], others


def test_a_malformed_mlaudit_report_files_is_one_clear_error(mlflow_server, monkeypatch):
    from mlaudit_core.errors import InputError

    monkeypatch.setenv("MLAUDIT_REPORT_FILES", "json,pdf")
    with pytest.raises(InputError, match="MLAUDIT_REPORT_FILES=.*unknown report file kind pdf"):
        _write_counted(mlflow_server["url"], None)


def test_write_verdict_writes_no_tag_when_the_artifact_store_refuses_the_upload(
    mlflow_server, monkeypatch
):
    """The artifact store answers 507 to the report upload (a full disk, a quota): the
    write-back raises, and the run carries no mlaudit tag and its Description is untouched
    (no ``mlaudit.verdict`` that would say a complete write-back exists)."""
    from mlaudit_mlflow.plugin import MlflowPlugin

    monkeypatch.setenv("MLAUDIT_REPORT_FILES", "json,md,svg")  # several uploads, one refused
    url = mlflow_server["url"]
    proxy = CountingProxy(url)
    base = proxy.server.RequestHandlerClass
    seen: list[str] = []

    class Refusing(base):  # type: ignore[misc,valid-type]
        def do_PUT(self) -> None:
            if "/mlflow-artifacts/artifacts/" in self.path and self.path.endswith(".md"):
                seen.append(self.path)
                n = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(n)
                self.send_response(507, "Insufficient Storage")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            super().do_PUT()

    proxy.server.RequestHandlerClass = Refusing
    try:
        rid = _log_run(url, "the user's own notes")
        run = MlflowPlugin(proxy.url).load(rid)
        report = audit(run)
        with pytest.raises(Exception):  # noqa: B017 - what the MLflow client raises
            write_verdict(mlflow.MlflowClient(proxy.url), run, report)
    finally:
        proxy.close()
    assert seen
    tags = mlflow.MlflowClient(url).get_run(rid).data.tags
    assert not [k for k in tags if k.startswith("mlaudit.")], tags
    assert tags[NOTE_TAG] == "the user's own notes"
