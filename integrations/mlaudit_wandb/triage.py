"""Auto-triage for W&B on the shared watcher core: a webhook receiver and a polling watcher.

Both run :class:`mlaudit_core.service.Watcher` (state file, bounded queue, worker
threads, retries with backoff, exactly-once bookkeeping, SIGTERM shutdown); W&B supplies
only :class:`WandbWatchSource`: how to list ended runs, load one, write its verdict, and
when to leave a run alone.

``mlaudit watch wandb --project ENTITY/PROJECT`` lists the project's ended runs every
``--poll-interval`` seconds (the fallback for plans without Automations).

``mlaudit serve wandb-webhook`` runs :func:`make_app` under uvicorn. W&B's webhook
action POSTs the automation's payload with the webhook's access token in
``Authorization: Bearer <token>`` (W&B docs, "Create a webhook automation"); the
receiver compares it in constant time with ``MLAUDIT_WANDB_WEBHOOK_SECRET`` and hands
the run to :meth:`Watcher.submit`. The payload ``--install-automation`` sets
(:data:`mlaudit_wandb.automation.PAYLOAD`) uses W&B's documented payload variables only::

    {"event_type": "${event_type}", "entity": "${entity_name}",
     "project": "${project_name}", "event_author": "${event_author}"}

None of them names the run, so such a delivery (entity and project, no run) queues every
ended run of that project without a verdict for its state (the ``watch wandb`` listing,
run off the event loop). A payload naming a run (``run_path``, ``run_url``, or
``entity``/``project``/``run_id``/``run_name``) queues that run. Accepted runs are rows of the
watcher's state file, so a crash or restart loses nothing; an audit that fails is
retried with backoff and given up after ``max_attempts``. ``GET /healthz`` reports the
runs per state. With ``--project`` the receiver also lists those projects every
``--poll-interval`` seconds, a safety net for a webhook delivery that never arrived.

The loop guard (:meth:`WandbWatchSource.skip_reason`): a run already judged in its
current state (``mlaudit/verdict`` and ``mlaudit/run_state`` in its summary) is settled
without writing, so the report panel's resume, which re-fires run-state automations,
does not start a second audit; a run still running is left for the event of its end.
"""

from __future__ import annotations

import hmac
import json
import logging
import re
import time

from mlaudit_core.rundata import RunData
from mlaudit_core.service import PluginSource, QueueFull
from mlaudit_core.signal import clip

SECRET_ENV = "MLAUDIT_WANDB_WEBHOOK_SECRET"
log = logging.getLogger("mlaudit.watch")
_URL = re.compile(r"^https?://[^/]+/(?P<e>[^/]+)/(?P<p>[^/]+)/runs/(?P<r>[^/?#]+)/?(?:[?#].*)?$")
#: Webhook bodies larger than this are refused (413): W&B's payload templates are a few
#: hundred bytes; 64 KiB leaves room for any template without buffering floods.
MAX_BODY_BYTES = 64 * 1024
#: W&B run states that are not an end (wandb/apis/public/runs.py; "preempting" is the
#: state a preempted run holds until it resumes or is marked crashed).
RUNNING_STATES = ("running", "pending", "preempting")


class WandbWatchSource(PluginSource):
    """W&B projects as seen by the shared watcher.

    Args:
        plugin: a :class:`~mlaudit_wandb.plugin.WandbPlugin` (its ``panel`` setting decides
            whether write-backs log the report panel).
        scope: the line naming what is watched (stored in the state file).
        projects: ``ENTITY/PROJECT`` names listed on each poll; empty for a receiver that
            only takes pushed runs.
    """

    #: ``api.runs`` pages through every ended run without a verdict; nothing is cut.
    page_limit = None

    @property
    def lists(self) -> bool:
        """False for a receiver with no ``--project``: it only takes pushed runs."""
        return bool(self.projects)

    def __init__(self, plugin, scope: str, projects: list[str] | tuple[str, ...] = ()) -> None:
        super().__init__(plugin, scope)
        self.projects = list(projects)

    def check_access(self) -> None:
        """Ask W&B who the key belongs to, before any state file is made.

        Raises:
            InputError: no API key, or the key is refused (one line, exit 2). A server that
                cannot be reached is an outage: logged, and retried by the watcher.
        """
        from mlaudit_core.errors import InputError

        from .online import base_url, sdk_errors

        try:
            api = self.plugin.api
            with sdk_errors("login"):
                entity = api.default_entity  # the Viewer query: null for a key it refuses
            if entity is None:
                raise InputError(
                    f"login: W&B at {base_url()} rejected the API key (check "
                    "WANDB_API_KEY, ~/.netrc or `wandb login`)"
                )
        except InputError as exc:
            if "cannot reach" not in str(exc):
                raise
            log.warning("%s; the watcher retries", exc)

    def list_finished(self, since):
        """``(ref, "<state>@<heartbeatAt>")`` of ended runs without a verdict for their state."""
        out: list = []
        for project in self.projects:
            out += self.plugin.list_finished(since, project=project, endings=True)
        return out

    def skip_reason(self, run: RunData) -> str | None:
        """``"still <state>"`` for a run not ended, ``"verdict already present"`` for a run
        judged in its current state (the loop guard), else None."""
        from .writeback import already_judged

        state = run.environment.get("state", "")
        if state in RUNNING_STATES:
            return f"still {state}; audited when it ends"
        try:
            summary = json.loads(run.environment.get("summary") or "{}")
        except ValueError:
            summary = {}
        return "verdict already present" if already_judged(summary, state) else None

    def is_audited(self, run: RunData) -> bool:
        return self.skip_reason(run) == "verdict already present"

    #: Seconds between setting ``mlaudit/claim`` and reading it back (see ``claim_run``).
    claim_settle_s = 0.5

    def claim(self, run: RunData, owner: str, lease_s: float) -> str | None:
        """Take the run's lease (summary key ``mlaudit/claim``) so that two watchers or
        receivers of one project do not both write and notify it; None when taken, else why
        not. See :func:`mlaudit_wandb.writeback.claim_run`."""
        from .online import parse_ref
        from .writeback import claim_run

        path = parse_ref(f"{run.identity.project}/{run.identity.id}")
        return claim_run(
            self.plugin.api, path, owner, lease_s=lease_s, settle_s=self.claim_settle_s
        )

    def release_claim(self, run: RunData, owner: str) -> None:
        """Delete ``owner``'s ``mlaudit/claim`` once the verdict is written (best effort)."""
        from .online import parse_ref
        from .writeback import release_claim

        release_claim(
            self.plugin.api, parse_ref(f"{run.identity.project}/{run.identity.id}"), owner
        )


def run_path_from_payload(payload: dict) -> str | None:
    """``ENTITY/PROJECT/RUN_ID`` from a webhook payload, or None when it names no run.

    Each part must be a name W&B could hold (:func:`~mlaudit_wandb.online.valid_segment`:
    no empty parts, ``..``, control characters, whitespace, more than 128 characters), so
    nothing odd reaches the state file or the log.
    """
    from .online import valid_segment

    if not isinstance(payload, dict):
        return None
    parts = None
    for key in ("run_path", "run"):
        v = payload.get(key)
        if isinstance(v, str) and v.count("/") == 2:
            parts = v.split("/")
            break
    if parts is None and isinstance(v := payload.get("run_url"), str) and (m := _URL.search(v)):
        parts = [m["e"], m["p"], m["r"]]
    if parts is None:
        parts = [
            payload.get("entity") or payload.get("entity_name"),
            payload.get("project") or payload.get("project_name"),
            payload.get("run_id") or payload.get("run_name"),
        ]
    if all(isinstance(x, str) and valid_segment(x) for x in parts):
        return "/".join(parts)
    return None


def project_from_payload(payload: dict) -> str | None:
    """``ENTITY/PROJECT`` from a payload that names a project and no run at all (W&B's
    documented ``${entity_name}``/``${project_name}``), else None; parts checked like run
    names."""
    from .online import valid_segment

    if not isinstance(payload, dict) or any(
        k in payload for k in ("run_id", "run_name", "run_path", "run_url", "run")
    ):
        return None  # a payload that names a run but not validly is refused, not widened
    parts = [
        payload.get("entity") or payload.get("entity_name"),
        payload.get("project") or payload.get("project_name"),
    ]
    if all(isinstance(x, str) and valid_segment(x) for x in parts):
        return "/".join(parts)
    return None


def make_app(
    watcher,
    secret: str,
    *,
    states: tuple[str, ...] = ("finished", "failed", "crashed", "killed"),
    body_timeout_s: float = 10.0,
):
    """The Starlette app: ``POST /webhook`` (Bearer secret), ``GET /healthz``.

    Args:
        watcher: the running :class:`~mlaudit_core.service.Watcher` runs are submitted to.
        secret: the webhook's access token; an empty secret refuses every request.
        states: run states whose events are audited (others are acknowledged, ignored).
        body_timeout_s: seconds for the whole body once the headers are in (408 after).

    Responses: 202 queued, 200 ignored (already waiting, or an event for another state),
    400 payload names no run or is not JSON, 401 wrong or missing secret (``Bearer`` in any
    case; refusals logged at most once a minute with the client's address, never the
    token), 408 body not complete within ``body_timeout_s``, 413 body over ``MAX_BODY_BYTES``,
    503 queue full. A client that disconnects mid-body is one counted line, no traceback
    (connection-level limits: :func:`mlaudit.cli.cmd_serve.make_server`). ``GET /healthz``: ``ok`` (workers
    running), ``queued`` (waiting, incl. ``retrying``: waiting after a failed attempt),
    ``done``, ``failed`` (given up).
    Each accepted delivery is one ending (its receipt time), so a run that ended again
    after an earlier audit is looked at again; one judged in its state is not rewritten.
    """
    import asyncio

    from starlette.applications import Starlette
    from starlette.requests import ClientDisconnect
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route

    from mlaudit.cli.cmd_serve import refusals

    expected = secret.encode()
    refused = {"n": 0, "logged_at": 0.0}

    def _log_refusal(request, why: str) -> None:
        """At most one line per minute, with the count since the last one (a flood of bad
        deliveries must not flood the log)."""
        refused["n"] += 1
        now = time.monotonic()
        if now - refused["logged_at"] >= 60.0:
            client = request.client.host if request.client else "?"
            log.warning(
                "webhook: refused %d delivery(ies) in the last minute; latest from %s: %s",
                refused["n"],
                client,
                why,
            )
            refused["n"], refused["logged_at"] = 0, now

    async def webhook(request):
        scheme, _, token = request.headers.get("authorization", "").strip().partition(" ")
        if (
            not secret
            or scheme.lower() != "bearer"
            or not hmac.compare_digest(token.strip().encode(), expected)
        ):
            _log_refusal(request, "wrong bearer token" if token else "no bearer token")
            return JSONResponse({"error": "missing or wrong bearer token"}, status_code=401)
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

        client = f"{request.client.host}" if request.client else "?"
        try:
            body = await asyncio.wait_for(read(), body_timeout_s)
        except asyncio.TimeoutError:
            refusals.note(f"body not complete within {body_timeout_s:g} s (408)", client)
            return JSONResponse(
                {"error": f"body not complete within {body_timeout_s:g} s"},
                status_code=408,
                headers={"connection": "close"},
            )
        except ClientDisconnect:
            refusals.note("client disconnected before the end of its body", client)
            return Response(status_code=400)  # nobody reads it
        if body is None:
            return JSONResponse({"error": f"body over {MAX_BODY_BYTES} bytes"}, status_code=413)
        try:
            payload = json.loads(body or b"{}")
        except (ValueError, RecursionError):
            return JSONResponse({"error": "body is not JSON"}, status_code=400)
        state = (
            payload.get("state") or payload.get("run_state") if isinstance(payload, dict) else ""
        )
        state = state.lower() if isinstance(state, str) else ""
        if state and state not in states:
            return JSONResponse({"ignored": f"run state {clip(state, 40)}"}, status_code=200)
        run = run_path_from_payload(payload)
        if run is None and (project := project_from_payload(payload)):
            # W&B's documented variables name the project only: sweep its ended runs
            source = watcher.source
            try:
                refs = await asyncio.to_thread(
                    source.plugin.list_finished, None, project=project, endings=True
                )
            except Exception as exc:  # W&B unreachable: W&B retries a failed delivery
                log.warning("webhook: listing %s failed: %s", project, clip(str(exc), 200))
                return JSONResponse(
                    {"error": f"listing {project} failed; try again"}, status_code=503
                )
            try:  # each run's ending is its state@heartbeat, as the poll records it
                added = watcher.submit(list(refs)) if refs else 0
            except QueueFull as exc:
                return JSONResponse({"error": str(exc)}, status_code=503)
            return JSONResponse(
                {"project": project, "queued": added, "ended_without_verdict": len(refs)},
                status_code=202 if added else 200,
            )
        if run is None:
            return JSONResponse(
                {
                    "error": "payload names no run (send entity, project, run_id "
                    "or run_path: names W&B could hold)"
                },
                status_code=400,
            )
        try:
            added = watcher.submit([(run, f"webhook@{time.time():.6f}")])
        except QueueFull as exc:
            return JSONResponse({"error": str(exc)}, status_code=503)
        return JSONResponse(
            {"queued" if added else "already_queued": run}, status_code=202 if added else 200
        )

    async def healthz(request):
        counts = watcher.status()
        waiting = sum(counts.get(s, 0) for s in ("pending", "claimed", "writing"))
        ok = watcher.started.is_set() and not watcher.stopped.is_set()
        return JSONResponse(
            {
                "ok": ok,
                "queued": waiting,
                "retrying": watcher.store.retrying(),
                "done": counts.get("done", 0),
                "failed": counts.get("failed", 0),
            }
        )

    return Starlette(
        routes=[
            Route("/webhook", webhook, methods=["POST"]),
            Route("/healthz", healthz, methods=["GET"]),
        ]
    )
