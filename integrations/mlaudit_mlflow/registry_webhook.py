"""``mlaudit serve mlflow-webhook``: audit a model version's source run when it is registered.

MLflow (>= 3.3) sends signed webhooks for model-registry events. On ``model_version.created``
the payload's ``data`` carries the registered model ``name``, the ``version`` and the
source ``run_id``; this receiver audits that run (and writes the verdict onto the run as
``mlaudit mlflow`` does), then tags the **model version**:

* ``mlaudit.verdict``, ``mlaudit.cause``, ``mlaudit.confidence``, ``mlaudit.codes``,
* ``mlaudit.report``: where the report is (the run's ``mlaudit/report.html`` artifact, as a
  UI link when the tracking URI is an HTTP server),
* with ``--gate``: ``mlaudit.gate`` = ``passed`` when the outcome is one of the allowed
  outcomes (default ``succeeded``), else ``blocked``; a promotion step checks it before it
  moves an alias (docs/mlflow.md, "Registry gate"). As soon as a delivery is queued the tag
  is ``pending`` (a ``passed`` set at registration never stands for a verdict not made), and
  ``unaudited`` when every attempt failed.

A model deleted and created again from the same run has the same name, version and run as
the one audited before; it is audited again when its version carries no ``mlaudit.verdict``.

Signature (MLflow ``mlflow/webhooks/delivery.py``, Standard Webhooks conventions): headers
``X-MLflow-Delivery-Id``, ``X-MLflow-Timestamp`` (Unix seconds) and ``X-MLflow-Signature`` =
``v1,`` + base64(HMAC-SHA256(secret, ``"<delivery id>.<timestamp>.<raw body>"``)). A delivery
is accepted only when the signature matches (constant-time compare) and the timestamp is
within ``max_age_s`` of now in either direction (default 300 s: the Standard Webhooks
recommendation, which MLflow's docs follow). A delivery id seen in the last ``max_age_s``
is acknowledged without a second audit (replay, or MLflow's own retry).

Responses: 202 queued, 200 acknowledged and ignored (another event, no run id, a repeated
delivery id, a model version queued or audited already), 400 not JSON or no model version,
401 missing/wrong signature or stale timestamp, 413 body over :data:`MAX_BODY_BYTES`, 503
queue full. Audits run on a worker thread so MLflow's delivery (30 s timeout) is answered at
once. Accepted deliveries are written to the receiver's state file before the 202
(:mod:`.registry_state`: a bounded on-disk queue, redacted): a restart loses none of them,
re-audits none that finished, and the replay check (a delivery id seen before) holds across
restarts.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import threading
import time
from dataclasses import dataclass, field

log = logging.getLogger("mlaudit.serve.mlflow")

SECRET_ENV = "MLAUDIT_MLFLOW_WEBHOOK_SECRET"
#: MLflow's header names (mlflow/webhooks/constants.py).
SIGNATURE_HEADER = "x-mlflow-signature"
TIMESTAMP_HEADER = "x-mlflow-timestamp"
DELIVERY_HEADER = "x-mlflow-delivery-id"
#: Seconds a delivery's timestamp may differ from now (Standard Webhooks: 5 minutes).
MAX_AGE_S = 300
#: MLflow payloads are a few hundred bytes (tags included); bigger bodies are refused.
MAX_BODY_BYTES = 256 * 1024
#: Deliveries waiting for an audit before the receiver answers 503.
MAX_QUEUE = 1000
#: Audits of one delivery before it is given up.
MAX_ATTEMPTS = 3
#: Model-version tag names.
TAG_VERDICT, TAG_CAUSE, TAG_CONFIDENCE, TAG_CODES = (
    "mlaudit.verdict",
    "mlaudit.cause",
    "mlaudit.confidence",
    "mlaudit.codes",
)
TAG_REPORT, TAG_GATE = "mlaudit.report", "mlaudit.gate"
#: ``mlaudit.gate`` values besides passed/blocked: queued and not audited yet; given up (the
#: audit failed every attempt). Neither is ``passed``: a promotion rule reading the gate holds.
GATE_PENDING, GATE_UNAUDITED = "pending", "unaudited"


def sign(secret: str, delivery_id: str, timestamp: str, body: bytes) -> str:
    """MLflow's signature of a delivery: ``v1,<base64 HMAC-SHA256>`` over
    ``"<delivery_id>.<timestamp>.<body>"``."""
    content = f"{delivery_id}.{timestamp}.".encode() + body
    digest = hmac.new(secret.encode(), content, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def verify(
    secret: str, headers, body: bytes, *, now: float | None = None, max_age_s: float = MAX_AGE_S
) -> str | None:
    """None when the delivery is MLflow's, else why not (one short phrase).

    ``headers``: a case-insensitive mapping (Starlette's ``request.headers``).
    """
    sig = headers.get(SIGNATURE_HEADER, "")
    ts = headers.get(TIMESTAMP_HEADER, "")
    delivery = headers.get(DELIVERY_HEADER, "")
    if not (sig and ts and delivery):
        return "missing signature, timestamp or delivery id header"
    try:
        stamp = int(ts)
    except ValueError:
        return "timestamp is not Unix seconds"
    now = time.time() if now is None else now
    if abs(now - stamp) > max_age_s:
        return f"timestamp {abs(now - stamp):.0f} s from now (limit {max_age_s:g} s)"
    want = sign(secret, delivery, ts, body)
    # MLflow sends one "v1,<sig>"; Standard Webhooks allows several, space-separated
    if not any(hmac.compare_digest(s.encode(), want.encode()) for s in sig.split()):
        return "signature does not match"
    return None


@dataclass
class GateConfig:
    """``--gate``: tag ``mlaudit.gate`` ``passed`` for these outcomes, ``blocked`` otherwise."""

    enabled: bool = False
    allow: tuple[str, ...] = ("succeeded",)


@dataclass
class Registered:
    """One ``model_version.created`` delivery to audit."""

    name: str
    version: str
    run_id: str
    delivery: str


def report_link(tracking_uri: str, experiment_id: str, run_id: str) -> str:
    """The report's place: the MLflow UI artifact view for an HTTP tracking URI, else the
    ``runs:/`` artifact URI. Never with the tracking URI's user-info
    (:func:`mlaudit_core.redact.public_url`): every registry user reads this tag."""
    from mlaudit_core.redact import public_url

    if tracking_uri.startswith(("http://", "https://")):
        return public_url(
            f"{tracking_uri.rstrip('/')}/#/experiments/{experiment_id}/runs/"
            f"{run_id}/artifacts/mlaudit/report.html"
        )
    return f"runs:/{run_id}/mlaudit/report.html"


@dataclass
class RegistryAuditor:
    """Audits the source run of each registered model version and tags the version.

    ``plugin``: the :class:`~mlaudit_mlflow.plugin.MlflowPlugin`; ``settings``: mlaudit
    settings; ``write_run``: also write the verdict onto the run.
    """

    plugin: object
    settings: object
    tracking_uri: str
    gate: GateConfig = field(default_factory=GateConfig)
    write_run: bool = True
    done: list = field(default_factory=list)  # (Registered, outcome or error) for /healthz

    def handle(self, item) -> str:
        """Audit ``item.run_id``, tag the model version; returns the outcome.

        ``item``: a :class:`Registered` or a :class:`~.registry_state.Delivery`. A delivery a
        killed receiver left half done (``recovered``) whose model version already carries
        ``mlaudit.verdict`` (written last: the first attempt completed) is not audited again;
        its outcome is that tag.
        """
        from mlaudit_core.audit import audit

        from .loader import client_for

        client = client_for(self.plugin.tracking_uri)
        if getattr(item, "recovered", False):
            done = client.get_model_version(item.name, item.version).tags.get(TAG_VERDICT)
            if done:
                return done
        run = self.plugin.load(item.run_id)
        report = audit(run, settings=self.settings)
        if self.write_run:
            self.plugin.write_back(run, report)
        v = report.verdict
        exp_id = client.get_run(item.run_id).info.experiment_id
        codes = sorted({f.code for f in report.findings if f.severity.rank >= 1})
        tags = {
            TAG_VERDICT: v.outcome.value,
            TAG_CAUSE: v.cause.value,
            TAG_CONFIDENCE: f"{v.confidence:.2f}",
            TAG_CODES: ",".join(codes),
            TAG_REPORT: report_link(self.tracking_uri, exp_id, item.run_id),
        }
        if self.gate.enabled:
            tags[TAG_GATE] = "passed" if v.outcome.value in self.gate.allow else "blocked"
        for key, value in tags.items():  # mlaudit.verdict last: present means complete
            if key != TAG_VERDICT:
                client.set_model_version_tag(item.name, item.version, key, value)
        client.set_model_version_tag(item.name, item.version, TAG_VERDICT, tags[TAG_VERDICT])
        return v.outcome.value


class Receiver:
    """The on-disk delivery queue (:class:`~.registry_state.DeliveryQueue`) and its worker.

    ``counts``: audits done and failed attempts by this process (``/healthz``); the queue's
    own counts cover every process that used the state file.
    """

    def __init__(
        self, auditor: RegistryAuditor, secret: str, deliveries, *, max_age_s: float = MAX_AGE_S
    ) -> None:
        self.auditor, self.secret, self.max_age_s = auditor, secret, max_age_s
        self.deliveries = deliveries
        self.counts = {"audited": 0, "failed": 0}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._work, name="mlaudit-mlflow-hook", daemon=True)

    def unaudited(self, item) -> bool:
        """Whether the model version exists and carries no ``mlaudit.verdict`` (False when the
        tracker cannot say: the delivery then stays a duplicate)."""
        from .loader import client_for

        try:
            tags = (
                client_for(self.auditor.plugin.tracking_uri)
                .get_model_version(item.name, item.version)
                .tags
            )
        except Exception:  # noqa: BLE001 - the tracker is down or the version is gone
            return False
        return TAG_VERDICT not in tags

    def mark_pending(self, item) -> None:
        """With the gate on, ``mlaudit.gate = pending`` as soon as a delivery is queued: a
        ``passed`` someone set at registration must not stand for a verdict not yet made."""
        self.mark(item, GATE_PENDING)

    def mark(self, item, value: str) -> None:
        """Set ``mlaudit.gate`` (gate on only); a failure is one warning line."""
        if not self.auditor.gate.enabled:
            return
        from mlaudit_core.redact import redact_text

        from .loader import client_for

        try:
            client_for(self.auditor.plugin.tracking_uri).set_model_version_tag(
                item.name, item.version, TAG_GATE, value
            )
        except Exception as exc:  # noqa: BLE001 - the audit goes on; the gate tag follows it
            log.warning(
                "model %s version %s: could not set %s=%s: %s",
                item.name,
                item.version,
                TAG_GATE,
                value,
                redact_text(str(exc).splitlines()[0] if str(exc) else ""),
            )

    def start(self) -> None:
        n = self.deliveries.recover()
        if n:
            log.warning(
                "%d deliver%s left running by an earlier receiver queued again (each is "
                "checked for a finished verdict first)",
                n,
                "y" if n == 1 else "ies",
            )
        self._thread.start()

    def stop(self, timeout: float = 30.0) -> None:
        """Let the audit in progress finish (up to ``timeout`` s); queued deliveries stay in the
        state file for the next start."""
        self._stop.set()
        self.deliveries.wake.set()
        self._thread.join(timeout)

    def _work(self) -> None:
        from mlaudit_core.redact import neutralise_controls, redact_text

        def shown(item) -> tuple[str, str]:  # a model name is the registering user's text
            return neutralise_controls(item.name), neutralise_controls(item.version)

        q = self.deliveries
        while not self._stop.is_set():
            item = q.claim()
            if item is None:
                due = q.next_due()
                wait = 1.0 if due is None else min(1.0, max(0.05, due - time.time()))
                q.wake.wait(wait)
                q.wake.clear()
                continue
            try:
                outcome = self.auditor.handle(item)
            except Exception as exc:  # noqa: BLE001 - one delivery's failure stops nothing
                self.counts["failed"] += 1
                why = redact_text(f"{type(exc).__name__}: {exc}".splitlines()[0])
                state = q.fail(item, why)
                log.error(
                    "model %s version %s (run %s): not audited (attempt %d, %s): %s",
                    *shown(item),
                    item.run_id,
                    item.attempts,
                    "given up" if state == "failed" else "will retry",
                    why,
                )
                if state == "failed":
                    self.mark(item, GATE_UNAUDITED)
                continue
            q.finish(item, outcome)
            self.counts["audited"] += 1
            log.info("model %s version %s (run %s): %s", *shown(item), item.run_id, outcome)


def parse(payload) -> Registered | str:
    """The model version of a ``model_version.created`` payload, else why it is ignored."""
    if not isinstance(payload, dict):
        return "not a JSON object"
    event = f"{payload.get('entity')}.{payload.get('action')}"
    if event != "model_version.created":
        return f"event {event[:60]} ignored"
    data = payload.get("data")
    if (
        not isinstance(data, dict)
        or not isinstance(data.get("name"), str)
        or not isinstance(data.get("version"), (str, int))
    ):
        return "no model version in the payload"
    run_id = data.get("run_id")
    if not isinstance(run_id, str) or not run_id.isalnum() or len(run_id) > 64:
        return "model version has no source run"
    return Registered(data["name"], str(data["version"]), run_id, "")


#: Seconds for a delivery's whole body once its headers are in (408 after): a client that
#: sends headers then trickles (or never sends) its body holds a connection, and the server
#: takes a bounded number (the W&B receiver's rule, mlaudit_wandb.triage)
BODY_TIMEOUT_S = 10.0


def make_app(receiver: Receiver, body_timeout_s: float = BODY_TIMEOUT_S):
    """Starlette app: ``POST /webhook`` (MLflow-signed), ``GET /healthz``.

    A body over ``MAX_BYTES`` is 413; one not complete within ``body_timeout_s`` is 408 and
    the connection is closed; a client gone before the end of its body is 400."""
    import asyncio

    from starlette.applications import Starlette
    from starlette.requests import ClientDisconnect
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route

    async def webhook(request):
        size = request.headers.get("content-length", "")
        if size.isdigit() and int(size) > MAX_BODY_BYTES:
            return JSONResponse({"error": f"body over {MAX_BODY_BYTES} bytes"}, status_code=413)

        async def read() -> bytes | None:
            body = b""
            async for chunk in request.stream():
                body += chunk
                if len(body) > MAX_BODY_BYTES:
                    return None
            return body

        try:
            body = await asyncio.wait_for(read(), body_timeout_s)
        except asyncio.TimeoutError:
            log.warning("refused a delivery: body not complete within %g s (408)", body_timeout_s)
            return JSONResponse(
                {"error": f"body not complete within {body_timeout_s:g} s"},
                status_code=408,
                headers={"connection": "close"},
            )
        except ClientDisconnect:
            return Response(status_code=400)  # nobody reads it
        if body is None:
            return JSONResponse({"error": f"body over {MAX_BODY_BYTES} bytes"}, status_code=413)
        why = verify(receiver.secret, request.headers, body, max_age_s=receiver.max_age_s)
        if why:
            log.warning("refused a delivery: %s", why)
            return JSONResponse({"error": why}, status_code=401)
        try:
            payload = json.loads(body)
        except (ValueError, RecursionError):
            return JSONResponse({"error": "body is not JSON"}, status_code=400)
        item = parse(payload)
        if isinstance(item, str):
            status = 400 if item.startswith(("not a JSON", "no model")) else 200
            return JSONResponse({"ignored" if status == 200 else "error": item}, status_code=status)
        item.delivery = request.headers.get(DELIVERY_HEADER, "")
        from starlette.concurrency import run_in_threadpool

        added = await run_in_threadpool(
            receiver.deliveries.add, item.delivery, item.name, item.version, item.run_id
        )
        if added == "duplicate" and await run_in_threadpool(receiver.unaudited, item):
            # audited before under this name, version and run, yet the version carries no
            # verdict: the model was deleted and created again from the same run
            added = await run_in_threadpool(
                receiver.deliveries.add,
                item.delivery,
                item.name,
                item.version,
                item.run_id,
                again=True,
            )
        if added == "queued":
            await run_in_threadpool(receiver.mark_pending, item)
        if added == "seen":
            return JSONResponse({"ignored": "delivery seen already"}, status_code=200)
        if added == "duplicate":
            return JSONResponse(
                {"ignored": "model version queued or audited already"}, status_code=200
            )
        if added == "full":
            return JSONResponse({"error": "queue full"}, status_code=503)
        return JSONResponse(
            {"queued": f"{item.name}/{item.version}", "run_id": item.run_id}, status_code=202
        )

    async def healthz(request):
        state = receiver.deliveries.counts()
        return JSONResponse(
            {
                "ok": receiver._thread.is_alive(),
                "queued": state["queued"],
                **receiver.counts,
                "state": state,
            }
        )

    return Starlette(
        routes=[
            Route("/webhook", webhook, methods=["POST"]),
            Route("/healthz", healthz, methods=["GET"]),
        ]
    )
