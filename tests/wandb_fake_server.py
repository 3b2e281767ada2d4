"""A local stand-in for the W&B backend on 127.0.0.1, for testing mlaudit against the real wandb SDK.

What it implements: the part of the W&B API that the real wandb 0.31 SDK sends, both
the public ``wandb.Api`` (through its wandb-core service) when mlaudit reads and writes a
run, and ``wandb.init``/``log``/``finish`` (wandb-core) when a training process logs a
run ONLINE or mlaudit resumes one for its report panel.

GraphQL (``POST /graphql``, HTTP basic ``api:<key>``):

* ``Viewer`` (credential check; a wrong key gets ``viewer: null`` as the real server
  answers, which the SDK reports as invalid credentials); ``ServerFeaturesQuery``
  (``serverInfo { features }``: none enabled, so wandb-core sends plain JSON, no gzip);
  ``entity(name)`` with ``organization: null`` (a personal entity: wandb-core's system
  monitor then asks no CoreWeave metadata server, ``OrganizationCoreWeaveOrganizationID``);
* ``project { run(name) { ...RunFragment } }`` and ``project { runs(filters) }``
  with the field names and JSON-string encodings of ``wandb/apis/public/runs.py``
  (``config`` as ``{"key": {"value": v, "desc": null}}`` including the SDK's ``_wandb``
  entry, ``summaryMetrics`` and ``systemMetrics`` as JSON strings, ``tags``, ``notes``,
  ``group``, ``jobType``, ``sweepName``, ``historyLineCount``, ``historyKeys``);
* full-fidelity history: ``history(minStep, maxStep, samples)`` (wandb-core's
  ``HistoryPage``) and ``events(samples)`` returning JSON-string rows, and
  ``runParquetHistory`` (exported rows as a parquet file, the newest rows inline);
* the run's files (``files`` connection with download URLs served by ``GET
  /files/...``; ``createRunFiles`` hands out upload URLs, ``PUT`` to them stores the
  file; ``markRunFilesUploaded``);
* ``upsertBucket``: by ``id`` as ``Run.update()`` and mlaudit's tag/notes write send
  it, or by ``entityName``/``modelName``/``name`` as wandb-core sends it at run start,
  which creates the run (state ``running``, ``inserted: true``) when it does not exist;
  the ``_wandb`` config entry (the SDK's telemetry ``t``) is kept;
* ``RunResumeStatus``: ``model(name, entityName) { bucket(name, missingOk) }`` with
  ``summaryMetrics``, ``config``, ``tags``, ``notes``, ``historyLineCount``,
  ``eventsLineCount``, ``logLineCount`` (wandb-core's file-stream offsets),
  ``historyTail``/``eventsTail`` (a JSON list of JSON-string rows; the SDK continues at
  the last ``_step`` + 1) and ``wandbConfig(keys: ["t"])`` (wandb-core resumes only a run
  whose ``t`` is set, as every SDK-made run's is);
* Automations (``wandb.automations``, ``Api.create_automation``): ``GetProject``
  (``project { ...ProjectFragment }``: ``id``, ``createdAt``, ``isBenchmark``, ``user``),
  ``IntegrationsByEntity`` (``entity { integrations }``: the webhook integrations in
  ``srv.integrations``, ``GenericWebhookIntegration`` with ``id``, ``name``,
  ``urlEndpoint``), ``ServerFeaturesQuery`` features from ``srv.features`` (none by
  default; wandb 0.31 treats project scope, run-state events and webhook actions as
  supported by every server, ``automations/_compat.py``), and the
  ``CreateAutomation`` mutation ``createFilterTrigger(input: CreateFilterTriggerInput)``
  answered with ``trigger { ...TriggerFields }`` (scope ``Project``, event
  ``FilterEventTriggeringCondition`` with ``eventType``/``filter``, action
  ``GenericWebhookTriggeredAction`` with ``integration`` and ``requestPayload``); the
  inputs are kept in ``srv.automations``; a second automation of the same name is the
  409 conflict the SDK reports. Shapes from wandb 0.31's
  ``wandb/automations/_generated/operations.py`` and ``input_types.py``; fragments with a
  type condition are applied only to objects of that type for these union-typed fields.
* ``stopRun`` (``Run.stop()``, the UI's stop button) sets the run's ``stopped`` flag, which
  ``project { run { stopped } }`` answers (wandb-core's ``RunStoppedStatus``, polled by a
  running SDK every 15 s: it then interrupts the training process as W&B's UI stop does);
* ``project { description }`` and ``upsertModel(input: {name, entityName, description})``
  (a project's description, as wandb's ``upsert_project`` writes it);
* ``project { allViews(viewType, viewName, first, after) }`` (``Api.reports``, the
  ``ProjectViews`` query of ``wandb/apis/public/reports.py``): the saved views of the project;
* ``deleteRun``; anything else is answered with a GraphQL error naming the
  operation or field, so a new query in the SDK shows up as a clear failure.

File stream (``POST /files/<entity>/<project>/<run>/file_stream``, wandb-core's
``FileStreamRequestJSON``): ``files`` -> ``{"wandb-history.jsonl" | "wandb-events.jsonl"
| "output.log" | "wandb-summary.json": {"offset": n, "content": [lines]}}`` written at
those line offsets into the run's history rows, system-metric rows, console lines and
summary (the last summary line replaces it); ``uploaded``; ``complete`` with
``exitcode``. Any request is a heartbeat that marks a run not running as ``running``
(how a resumed run shows as running); ``complete`` ends it ``finished`` for exit code 0,
``failed`` otherwise. Answer: ``{"exitcode": null, "limits": {}}``. Each run keeps the
states it went through (``FakeRun.state_log``); ``srv.calls`` and ``srv.requests``
record every GraphQL operation (with variables) and file-stream/upload request.
Not implemented: crash detection (W&B marks a run ``crashed`` when heartbeats stop;
tests set that state directly), artifacts, sweeps, rate limits.

Queries are parsed with graphql-core and answered by projecting an in-memory
run onto the requested selection set (fields, aliases, fragments), so the
payload shapes follow the query exactly like a real GraphQL server's.

Why no real server: tests must run without network and without W&B
credentials; the W&B Local server image is a multi-GB container needing a
license. Payload shapes were taken from the queries in wandb 0.31's
``wandb/apis/public/*.py``, from the GraphQL documents and file-stream types compiled
into its wandb-core binary (``core/internal/gql``, ``core/internal/filestream``,
``core/internal/runbranch`` in the wandb repository), and checked against the SDK's own
parsing of them: the SDK logs, resumes and reads runs here without errors.
"""

from __future__ import annotations

import base64
import gzip
import json
import os
import re
import socket
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from graphql import parse
from graphql.language import FieldNode, FragmentSpreadNode, InlineFragmentNode
from graphql.utilities import value_from_ast_untyped

__all__ = ["FakeRun", "FakeWandbServer"]

#: the ``_wandb.t`` telemetry entry wandb 0.31 writes (python version, cli version, platform).
_TELEMETRY = {"4": "3.11.7", "5": "0.31.0", "12": "0.31.0", "13": "linux-x86_64"}
#: rows of history/events returned as ``historyTail``/``eventsTail`` on resume.
_TAIL_ROWS = 10
#: a streamed console line: wandb-core prefixes each with its UTC time, stderr lines with "ERROR "
_CONSOLE_LINE = re.compile(r"^(ERROR )?(\d{4}-\d\d-\d\dT[0-9:.]+Z?) ?(.*)$", re.S)


def _log_lines(console: list[str], last=None, first=None, after=None) -> dict[str, Any]:
    """``logLines`` of a run: ``{edges: [{node: {number, timestamp, level, label, line}}]}``,
    the stored file-stream lines split into their time, level (``error`` for stderr) and text;
    ``last: N`` is the newest N lines, else ``first`` lines after line number ``after``."""
    numbered = list(enumerate(console))
    if last is not None:
        numbered = numbered[-int(last) :] if int(last) > 0 else []
    else:
        start = int(after) + 1 if after not in (None, "") else 0
        numbered = numbered[start : start + int(first or 1000)]
    edges = []
    for n, raw in numbered:
        m = _CONSOLE_LINE.match(raw)
        level, ts, text = (
            (("error" if m.group(1) else ""), m.group(2), m.group(3)) if m else ("", "", raw)
        )
        edges.append(
            {
                "node": {"number": n, "timestamp": ts, "level": level, "label": "", "line": text},
                "cursor": str(n),
            }
        )
    return {
        "edges": edges,
        "pageInfo": {
            "hasNextPage": bool(edges) and edges[-1]["node"]["number"] < len(console) - 1,
            "endCursor": edges[-1]["cursor"] if edges else None,
        },
    }


@dataclass
class FakeRun:
    """One run as the server stores it. ``history``/``events`` rows are dicts, as logged."""

    entity: str
    project: str
    name: str  # the run id
    state: str = "finished"
    display_name: str = ""
    config: dict[str, Any] = field(default_factory=dict)
    summary: dict[str, Any] = field(default_factory=dict)
    tags: list[str] = field(default_factory=list)
    notes: str | None = None
    group: str | None = None
    job_type: str | None = None
    sweep: str | None = None
    history: list[dict[str, Any]] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    files: dict[str, bytes] = field(default_factory=dict)
    created_at: str = "2026-01-01T00:00:00"
    heartbeat_at: str = "2026-01-01T00:10:00"
    deleted: bool = False
    exports: dict[str, bytes] = field(default_factory=dict)  # parquet history files served
    #: the next this many downloads of a parquet export are answered with no bytes, as a
    #: second reader truncating wandb-core's one cache file per run leaves it (a fault to test)
    empty_exports: int = 0
    #: the ``_wandb`` config entry the SDK writes (``t`` = its telemetry); wandb-core resumes
    #: only runs whose ``wandbConfig(keys: ["t"])`` has ``t``, as every SDK-made run has.
    wandb_config: dict[str, Any] = field(default_factory=lambda: {"t": dict(_TELEMETRY)})
    #: console lines received through the file stream (``output.log`` chunk), as sent:
    #: ``<ISO time> <text>`` for stdout, ``ERROR <ISO time> <text>`` for stderr.
    console: list[str] = field(default_factory=list)
    exitcode: int | None = None
    #: every state the run went through, in order (initial state first).
    state_log: list[str] = field(default_factory=list)
    #: the run's stop flag (``stopRun``, the UI's "Stop run" button / ``Run.stop()``); the SDK's
    #: wandb-core reads it with ``RunStoppedStatus`` and stops the training process.
    stopped: bool = False

    def __post_init__(self) -> None:
        if not self.state_log:
            self.state_log.append(self.state)

    def set_state(self, state: str) -> None:
        if state != self.state:
            self.state = state
            self.state_log.append(state)

    @property
    def storage_id(self) -> str:
        return base64.b64encode(
            f"Run:v1:{self.name}:{self.project}:{self.entity}".encode()
        ).decode()


class FakeWandbServer:
    """An HTTP server on 127.0.0.1 (uvicorn + starlette in a thread) speaking the W&B API subset.

    Usage::

        with FakeWandbServer(api_key="k" * 40) as srv:
            srv.add_run(FakeRun("ent", "proj", "abc123", history=[...]))
            os.environ["WANDB_BASE_URL"] = srv.base_url
    """

    def __init__(self, api_key: str, entity: str = "ent") -> None:
        self.api_key = api_key
        self.entity = entity
        self.runs: dict[tuple[str, str, str], FakeRun] = {}
        self.operations: list[str] = []  # operation names received, for assertions
        self.calls: list[tuple[str, dict[str, Any]]] = []  # (operation name, variables)
        self.requests: list[tuple[str, str]] = []  # (method, path) of file stream and file requests
        self.http_log: list[tuple[str, str]] = []  # (method, path) of every HTTP request
        self.unknown: list[str] = []
        self.lock = threading.Lock()
        self.live_rows = 10  # newest history rows answered inline as liveData, not in parquet
        self.features: list[str] = []  # ServerFeature names reported enabled
        self.integrations: list[dict[str, Any]] = []  # webhook integrations of the entity
        self.automations: list[dict[str, Any]] = []  # createFilterTrigger inputs received
        #: saved reports (W&B "views"), id -> the upsertView input as stored (``spec`` a JSON string)
        self.views: dict[str, dict[str, Any]] = {}
        #: project descriptions, (entity, project) -> text, and every upsertModel description
        #: write in order as ((entity, project), text)
        self.project_descriptions: dict[tuple[str, str], str] = {}
        self.project_updates: list[tuple[tuple[str, str], str]] = []
        #: when set, upsertView is refused with this message (a viewer-only API key, say)
        self.refuse_views: str | None = None
        self._server = None
        self._thread: threading.Thread | None = None
        self.port = 0

    # ------------------------------------------------------------------ lifecycle
    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> FakeWandbServer:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self) -> None:
        import uvicorn

        # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on sockets whose protocol says TCP;
        # without it every response waits ~40 ms (Nagle against the client's delayed ACK)
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(self.app(), log_level="warning", lifespan="off")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [sock]}, daemon=True
        )
        self._thread.start()
        deadline = time.time() + 10
        while not self._server.started and time.time() < deadline:
            time.sleep(0.02)

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
            self._thread.join(timeout=5)

    def add_run(self, run: FakeRun) -> FakeRun:
        with self.lock:
            self.runs[(run.entity, run.project, run.name)] = run
        return run

    def run(self, entity: str, project: str, name: str) -> FakeRun | None:
        r = self.runs.get((entity, project, name))
        return None if r is None or r.deleted else r

    # ------------------------------------------------------------------ HTTP
    def app(self):
        from starlette.applications import Starlette
        from starlette.responses import JSONResponse, Response
        from starlette.routing import Route

        async def graphql(request):
            if not self._authorized(request.headers.get("authorization", "")):
                body = await request.json()
                if body.get("operationName") == "Viewer" or "viewer" in body.get("query", ""):
                    return JSONResponse({"data": {"viewer": None}})
                return JSONResponse({"errors": [{"message": "permission denied"}]}, status_code=401)
            body = await request.json()
            try:
                data = self.execute(body.get("query", ""), body.get("variables") or {})
            except GraphQLFailure as exc:
                if os.environ.get("FAKE_WANDB_DEBUG"):
                    print(body.get("query"), body.get("variables"), file=sys.stderr)
                return JSONResponse(
                    {"data": None, "errors": [{"message": str(exc)}]}, status_code=exc.status
                )
            return JSONResponse({"data": data})

        async def get_file(request):
            key = (
                request.path_params["entity"],
                request.path_params["project"],
                request.path_params["run"],
            )
            run = self.run(*key)
            name = request.path_params["name"]
            if run is None or name not in run.files:
                return Response(b"not found", status_code=404)
            return Response(run.files[name])

        async def get_export(request):
            run = self.run(
                request.path_params["entity"],
                request.path_params["project"],
                request.path_params["run"],
            )
            data = run.exports.get(request.path_params["name"]) if run else None
            if data is not None and run is not None and run.empty_exports > 0:
                run.empty_exports -= 1
                data = b""
            return Response(data) if data is not None else Response(b"not found", status_code=404)

        async def put_file(request):
            key = (
                request.path_params["entity"],
                request.path_params["project"],
                request.path_params["run"],
            )
            data = await request.body()
            with self.lock:
                self.requests.append(("PUT", request.url.path))
                run = self.run(*key)
                if run is None:
                    return Response(b"not found", status_code=404)
                run.files[request.path_params["name"]] = data
            return Response(b"")

        async def file_stream(request):
            if not self._authorized(request.headers.get("authorization", "")):
                return JSONResponse({"error": "unauthorized"}, status_code=401)
            raw = await request.body()
            if request.headers.get("content-encoding", "").lower() == "gzip":
                raw = gzip.decompress(raw)
            try:
                body = json.loads(raw)  # wandb-core writes NaN/Infinity as bare words, like Python
            except ValueError:
                return JSONResponse({"error": "invalid JSON"}, status_code=400)
            p = request.path_params
            with self.lock:
                self.requests.append(("POST", request.url.path))
                run = self.run(p["entity"], p["project"], p["run"])
                if run is None:
                    return JSONResponse({"error": "run not found"}, status_code=404)
                try:
                    self._apply_file_stream(run, body)
                except ValueError as exc:  # a bad line or offset: visible in srv.unknown too
                    self.unknown.append(f"file_stream: {exc}")
                    return JSONResponse({"error": str(exc)}, status_code=400)
            return JSONResponse({"exitcode": None, "limits": {}})

        async def other(request):  # wandb-core's telemetry export and the like
            return Response(b"")

        routes = Starlette(
            routes=[
                Route("/graphql", graphql, methods=["POST"]),
                Route("/files/{entity}/{project}/{run}/file_stream", file_stream, methods=["POST"]),
                Route("/files/{entity}/{project}/{run}/{name:path}", get_file, methods=["GET"]),
                Route("/files/{entity}/{project}/{run}/{name:path}", put_file, methods=["PUT"]),
                Route("/parquet/{entity}/{project}/{run}/{name:path}", get_export, methods=["GET"]),
                Route("/{path:path}", other, methods=["GET", "POST", "PUT"]),
            ]
        )

        async def logged(scope, receive, send):  # every HTTP request, for request counts
            if scope["type"] == "http":
                with self.lock:
                    self.http_log.append((scope["method"], scope["path"]))
            await routes(scope, receive, send)

        return logged

    def _authorized(self, header: str) -> bool:
        if not header.lower().startswith("basic "):
            return False
        try:
            user, _, key = base64.b64decode(header[6:]).decode().partition(":")
        except Exception:
            return False
        return key == self.api_key

    # ------------------------------------------------------------------ GraphQL
    def execute(self, query: str, variables: dict[str, Any]) -> dict[str, Any]:
        doc = parse(query)
        fragments = {d.name.value: d for d in doc.definitions if d.kind == "fragment_definition"}
        ops = [d for d in doc.definitions if d.kind == "operation_definition"]
        op = ops[0]
        name = op.name.value if op.name else "anonymous"
        with self.lock:
            self.operations.append(name)
            self.calls.append((name, dict(variables)))
            if os.environ.get("FAKE_WANDB_TRACE"):
                print("GQL", name, json.dumps(variables)[:300], file=sys.stderr)
                if os.environ.get("FAKE_WANDB_TRACE") == name:
                    print(query, file=sys.stderr)
            root = self.mutation_root() if op.operation.value == "mutation" else self.query_root()
            return self._project(root, op.selection_set, fragments, variables, name)

    def _project(self, obj: Any, selection_set, fragments, variables, opname: str) -> Any:
        if isinstance(obj, list):
            return [self._project(x, selection_set, fragments, variables, opname) for x in obj]
        if obj is None:
            return None
        out: dict[str, Any] = {}
        for sel in selection_set.selections:
            if isinstance(sel, FragmentSpreadNode):
                frag = fragments[sel.name.value]
                if obj.get("__union") and frag.type_condition.name.value != obj.get("__typename"):
                    continue  # a fragment on another member of a union type
                out.update(self._project(obj, frag.selection_set, fragments, variables, opname))
            elif isinstance(sel, InlineFragmentNode):
                if (
                    obj.get("__union")
                    and sel.type_condition is not None
                    and sel.type_condition.name.value != obj.get("__typename")
                ):
                    continue
                out.update(self._project(obj, sel.selection_set, fragments, variables, opname))
            elif isinstance(sel, FieldNode):
                fname = sel.name.value
                alias = sel.alias.value if sel.alias else fname
                if fname not in obj:
                    if fname == "__typename":
                        out[alias] = obj.get("__typename")
                        continue
                    self.unknown.append(f"{opname}.{fname}")
                    raise GraphQLFailure(
                        f"fake W&B server: field {fname!r} of {opname} is not implemented"
                    )
                value = obj[fname]
                if callable(value):
                    args = {
                        a.name.value: value_from_ast_untyped(a.value, variables)
                        for a in sel.arguments
                    }
                    value = value(**args)
                if sel.selection_set is not None and value is not None:
                    value = self._project(value, sel.selection_set, fragments, variables, opname)
                out[alias] = value
        return out

    def query_root(self) -> dict[str, Any]:
        return {
            "viewer": {
                "id": "VXNlcjox",
                "entity": self.entity,
                "username": "tester",
                "email": "tester@example.com",
                "flags": "{}",
                "admin": False,
                "teams": {"edges": [{"node": {"name": self.entity}}]},
                "__typename": "User",
            },
            "serverInfo": {
                "cliVersionInfo": {},
                "latestLocalVersionInfo": None,
                "features": [{"name": f, "isEnabled": True} for f in self.features],
                "__typename": "ServerInfo",
            },
            "project": self._project_view,
            "model": self._model_view,
            # Api.projects(entity) (GetProjects): the projects that hold runs
            "models": lambda entityName=None, after=None, first=50, **_: _connection(
                [
                    self._project_view(p, e)
                    for e, p in sorted({(e, p) for (e, p, _n) in self.runs})
                    if entityName in (None, e)
                ],
                after,
                first,
            ),
            # Report.from_url (SpecificReport): a saved report by id
            "view": lambda id=None, **_: self._view(self.views.get(id)),
            # a personal entity: no organization, so wandb-core's system monitor
            # (OrganizationCoreWeaveOrganizationID) probes no CoreWeave metadata server
            "entity": lambda name=None, **_: {
                "name": name,
                "id": "RW50aXR5OjE=",
                "isTeam": False,
                "organization": None,
                "__typename": "Entity",
                "integrations": lambda after=None, first=50, **_: _connection(
                    [dict(i, __union=True) for i in self.integrations], after, first
                ),
            },
        }

    def mutation_root(self) -> dict[str, Any]:
        return {
            "upsertBucket": self._upsert_bucket,
            "createRunFiles": self._create_run_files,
            "markRunFilesUploaded": lambda input=None, **_: {"success": True},
            "deleteRun": self._delete_run,
            "stopRun": self._stop_run,
            "createFilterTrigger": self._create_filter_trigger,
            "upsertView": self._upsert_view,
            "upsertModel": self._upsert_model,
        }

    def _upsert_model(self, input=None, **_):
        """``upsertModel`` (a project is a "model" in W&B's API; wandb's ``Api.create_project``
        and ``upsert_project`` send it): the project named ``name`` in ``entityName``, its
        ``description`` replaced when given; ``{project, model, inserted}``."""
        inp = dict(input or {})
        entity, name = inp.get("entityName") or self.entity, inp.get("name")
        if not name:
            raise GraphQLFailure("upsertModel: name required")
        if inp.get("description") is not None:
            self.project_descriptions[(entity, name)] = inp["description"]
            self.project_updates.append(((entity, name), inp["description"]))
        view = self._project_view(name, entity)
        return {
            "project": view,
            "model": view,
            "inserted": False,
            "__typename": "UpsertModelPayload",
        }

    def _view(self, v: dict[str, Any] | None) -> dict[str, Any] | None:
        if v is None:
            return None
        e, p = v["entityName"], v["projectName"]
        return {
            "__typename": "View",
            "id": v["id"],
            "type": v["type"],
            "name": v["name"],
            "displayName": v["displayName"],
            "description": v["description"],
            "spec": v["spec"],
            "createdAt": v["createdAt"],
            "updatedAt": v["updatedAt"],
            "project": {
                "__typename": "Project",
                "id": base64.b64encode(f"Project:{e}:{p}".encode()).decode(),
                "name": p,
                "entityName": e,
            },
        }

    def _upsert_view(self, input=None, **_):
        """``upsertView`` (wandb-workspaces' ``Report.save``, ``reports/v2/gql.py``): without
        ``id`` a new view (report) in ``entityName``/``projectName``; with the ``id`` of a saved
        one, that view replaced (``inserted: false``); an unknown id is an error. ``spec`` must be
        a JSON string, as the real server requires."""
        inp = dict(input or {})
        if self.refuse_views:
            raise GraphQLFailure(self.refuse_views)
        try:
            json.loads(inp.get("spec") or "")
        except ValueError:
            raise GraphQLFailure("upsertView: spec is not valid JSON") from None
        now = _now()
        if inp.get("id"):
            old = self.views.get(inp["id"])
            if old is None:
                raise GraphQLFailure(f"upsertView: no view {inp['id']}")
            keep = {k: v for k, v in inp.items() if v is not None and k != "id"}
            old.update(keep, updatedAt=now, saves=old["saves"] + 1)
            return {"view": self._view(old), "inserted": False, "__typename": "UpsertViewPayload"}
        if not inp.get("entityName") or not inp.get("projectName"):
            raise GraphQLFailure("upsertView: entityName and projectName required")
        vid = base64.b64encode(f"View:{len(self.views) + 1}".encode()).decode()
        self.views[vid] = dict(inp, id=vid, createdAt=now, updatedAt=now, saves=1)
        return {
            "view": self._view(self.views[vid]),
            "inserted": True,
            "__typename": "UpsertViewPayload",
        }

    def _create_filter_trigger(self, input=None, **_):
        """``createFilterTrigger``: keep the input, answer the created trigger (TriggerFields)."""
        inp = dict(input or {})
        if any(a["name"] == inp.get("name") for a in self.automations):
            raise GraphQLFailure(f"conflict: a trigger named {inp.get('name')!r} exists", 409)
        self.automations.append(inp)
        hook = next(
            (
                i
                for i in self.integrations
                if i["id"]
                == (inp.get("triggeredActionConfig") or {})
                .get("genericWebhookActionInput", {})
                .get("integrationID")
            ),
            None,
        )
        action_in = (inp.get("triggeredActionConfig") or {}).get("genericWebhookActionInput") or {}
        scope_id = inp.get("scopeID")
        project = next(
            (
                (e, p)
                for (e, p, _n) in self.runs
                if base64.b64encode(f"Project:{e}:{p}".encode()).decode() == scope_id
            ),
            (self.entity, "?"),
        )
        now = _now()
        trigger = {
            "__typename": "Trigger",
            "id": base64.b64encode(f"Trigger:{len(self.automations)}".encode()).decode(),
            "createdAt": now,
            "updatedAt": now,
            "name": inp.get("name"),
            "description": inp.get("description"),
            "enabled": inp.get("enabled", True),
            "scope": {"__typename": "Project", "__union": True, "id": scope_id, "name": project[1]},
            "triggeringCondition": {
                "__typename": "FilterEventTriggeringCondition",
                "__union": True,
                "eventType": inp.get("triggeringEventType"),
                "filter": inp.get("eventFilter"),
            },
            "triggeredAction": {
                "__typename": "GenericWebhookTriggeredAction",
                "__union": True,
                "integration": dict(
                    hook or {}, __union=True, __typename="GenericWebhookIntegration"
                ),
                "requestPayload": action_in.get("requestPayload"),
            },
        }
        return {"trigger": trigger}

    # ------------------------------------------------------------------ file stream
    def _apply_file_stream(self, run: FakeRun, body: dict[str, Any]) -> None:
        """One ``file_stream`` request, as the W&B backend applies it (call with the lock held).

        ``files`` chunks write their ``content`` lines at line ``offset`` of the run's history
        (``wandb-history.jsonl``, one JSON row a line), system metrics (``wandb-events.jsonl``)
        and console (``output.log``); a resent chunk overwrites the same lines. The last line of
        ``wandb-summary.json`` replaces the summary (wandb-core always sends the whole summary).
        Any request is a heartbeat: a run that is not running is marked running (this is how a
        resumed run shows as running). ``complete`` ends the run: ``finished`` for exit code 0,
        ``failed`` otherwise.
        """
        files = body.get("files") or {}
        for name, chunk in files.items():
            offset = int(chunk.get("offset") or 0)
            content = list(chunk.get("content") or [])
            if name == "wandb-history.jsonl":
                _put_lines(run.history, offset, [json.loads(x) for x in content])
            elif name == "wandb-events.jsonl":
                _put_lines(run.events, offset, [json.loads(x) for x in content])
            elif name == "output.log":
                _put_lines(run.console, offset, content)
            elif name == "wandb-summary.json" and content:
                run.summary = json.loads(content[-1])
        run.heartbeat_at = _now()
        if body.get("complete"):
            run.exitcode = int(body.get("exitcode") or 0)
            run.set_state("finished" if run.exitcode == 0 else "failed")
        elif run.state != "running":
            run.set_state("running")

    # ------------------------------------------------------------------ views
    def _model_view(self, name=None, entityName=None, **_):
        """``model`` is the project under its legacy name; wandb-core's ``RunResumeStatus`` asks
        for ``model(name, entityName) { bucket(name, missingOk) }`` (bucket = run)."""
        entity, project = entityName or self.entity, name
        if not any(e == entity and p == project for (e, p, _n) in self.runs):
            return None
        return {
            "id": base64.b64encode(f"Project:{entity}:{project}".encode()).decode(),
            "name": project,
            "__typename": "Project",
            "entity": {"id": "RW50aXR5OjE=", "name": entity, "__typename": "Entity"},
            "bucket": lambda name=None, missingOk=False, **_: self._run_view(
                self.run(entity, project, name)
            ),
        }

    def _project_view(self, name=None, entityName=None, **_):
        if name is None:
            return None
        entity, pname = entityName or self.entity, name
        runs = [
            r for (e, p, _n), r in self.runs.items() if e == entity and p == name and not r.deleted
        ]
        return {
            "id": base64.b64encode(f"Project:{entity}:{name}".encode()).decode(),
            "name": name,
            "entityName": entity,
            "internalId": "1",
            "readOnly": False,
            "description": self.project_descriptions.get((entity, name)),
            "access": "PRIVATE",
            "views": "{}",
            "__typename": "Project",
            "createdAt": "2026-01-01T00:00:00",
            "isBenchmark": False,
            "user": None,
            "run": lambda name=None, **_: self._run_view(self.run(entity, pname, name)),
            "runCount": lambda filters=None, **_: len(_filter(runs, filters)),
            "runs": lambda filters=None, after=None, first=50, order=None, **_: _connection(
                [self._run_view(r) for r in _filter(runs, filters)], after, first
            ),
            # Api.reports(path) (ProjectViews, wandb/apis/public/reports.py): the project's
            # saved views of one type ("runs": reports; the query's variable default when the
            # SDK sends none), by view name when given
            "allViews": lambda viewType="runs", viewName=None, first=50, after=None, **_: (
                _connection(
                    [
                        self._view_node(v)
                        for v in self.views.values()
                        if v["entityName"] == entity
                        and v["projectName"] == name
                        and v.get("type", "runs") == (viewType or "runs")
                        and viewName in (None, v.get("name"))
                    ],
                    after,
                    first,
                )
            ),
        }

    def _view_node(self, v: dict[str, Any]) -> dict[str, Any]:
        """A saved view as ``allViews`` answers it (the ProjectViews node fields)."""
        return dict(
            self._view(v),
            user={
                "username": "tester",
                "photoUrl": None,
                "email": "tester@example.com",
                "__typename": "User",
            },
        )

    def _run_view(self, r: FakeRun | None):
        if r is None:
            return None
        rows = sorted(r.history, key=lambda x: x.get("_step", 0))

        def history(samples=500, minStep=None, maxStep=None, **_):
            sel = [
                x
                for x in rows
                if (minStep is None or x.get("_step", 0) >= minStep)
                and (maxStep is None or x.get("_step", 0) < maxStep)
            ]
            return (
                [json.dumps(x) for x in sel[:samples] if samples is not None]
                if samples
                else [json.dumps(x) for x in sel]
            )

        def events(samples=500, **_):
            return [json.dumps(x) for x in r.events[:samples]]

        def files(names=None, after=None, first=50, pattern=None, **_):
            names = names or []
            items = [(n, b) for n, b in sorted(r.files.items()) if not names or n in names]
            if pattern:
                import fnmatch

                items = [
                    (n, b) for n, b in items if fnmatch.fnmatchcase(n, pattern.replace("%", "*"))
                ]
            nodes = [
                {
                    "id": base64.b64encode(f"File:{r.name}:{n}".encode()).decode(),
                    "name": n,
                    "url": lambda upload=False, n=n: self._file_url(r, n),
                    "directUrl": self._file_url(r, n),
                    "sizeBytes": len(b),
                    "mimetype": "text/plain",
                    "updatedAt": r.heartbeat_at,
                    "md5": base64.b64encode(__import__("hashlib").md5(b).digest()).decode(),
                    "__typename": "File",
                }
                for n, b in items
            ]
            return _connection(nodes, after, first)

        last_step = max((x.get("_step", 0) for x in rows), default=-1)
        keys = sorted({k for x in rows for k in x if not k.startswith("_")})
        config = {k: {"value": v, "desc": None} for k, v in r.config.items()}
        if r.wandb_config:
            config["_wandb"] = {"value": r.wandb_config, "desc": None}
        return {
            "id": r.storage_id,
            "name": r.name,
            "displayName": r.display_name or r.name,
            "projectId": "1",
            "state": r.state,
            "config": json.dumps(config),
            "summaryMetrics": json.dumps(r.summary),
            "systemMetrics": json.dumps(r.events[-1] if r.events else {}),
            "tags": list(r.tags),
            "notes": r.notes,
            "description": r.notes,
            "group": r.group,
            "jobType": r.job_type,
            "sweepName": r.sweep,
            "commit": None,
            "readOnly": False,
            "stopped": r.stopped,
            "createdAt": r.created_at,
            "heartbeatAt": r.heartbeat_at,
            "historyLineCount": len(rows),
            "historyKeys": {"lastStep": last_step, "keys": {k: {} for k in keys}},
            "user": {"name": "tester", "username": "tester", "__typename": "User"},
            "history": history,
            "events": events,
            "files": files,
            "sampledHistory": lambda specs=None, **_: [[json.loads(h) for h in history(500)]],
            "parquetHistory": lambda liveKeys=None, **_: self._parquet_history(r, rows, liveKeys),
            "bucketUploadedFilesCount": len(r.files),
            "fileCount": len(r.files),
            "project": {
                "id": base64.b64encode(f"Project:{r.entity}:{r.project}".encode()).decode(),
                "name": r.project,
                "entityName": r.entity,
                "__typename": "Project",
                "entity": {"id": "RW50aXR5OjE=", "name": r.entity, "__typename": "Entity"},
            },
            # what wandb-core's RunResumeStatus reads to continue a run: line counts (its file
            # stream offsets), the last rows as a JSON list of JSON strings, the _wandb config
            "logLineCount": len(r.console),
            "eventsLineCount": len(r.events),
            # the run's console as the backend serves it to the UI's Logs tab and to
            # Run.console_logs() (wandb >= 0.31: RunConsoleLogTail / logLines(last: N))
            "logLines": lambda last=None, first=None, after=None, **_: _log_lines(
                r.console, last, first, after
            ),
            "historyTail": json.dumps([json.dumps(x) for x in rows[-_TAIL_ROWS:]]),
            "eventsTail": json.dumps([json.dumps(x) for x in r.events[-_TAIL_ROWS:]]),
            "wandbConfig": lambda keys=None, **_: json.dumps(
                {k: v for k, v in r.wandb_config.items() if keys is None or k in keys}
            ),
            "__typename": "Run",
        }

    def _parquet_history(self, r: FakeRun, rows: list[dict], live_keys) -> dict[str, Any]:
        """History as the real server exports it: parquet files for the exported rows, the newest
        rows (not exported yet) inline as ``liveData``."""
        import io

        import pyarrow as pa
        import pyarrow.parquet as pq

        n_live = min(self.live_rows, len(rows))
        exported, live = rows[: len(rows) - n_live], rows[len(rows) - n_live :]
        urls = []
        if exported:
            keys = sorted({k for x in exported for k, v in x.items() if not isinstance(v, dict)})
            table = pa.table({k: [x.get(k) for x in exported] for k in keys})
            buf = io.BytesIO()
            pq.write_table(table, buf)
            name = "history/0.parquet"
            r.exports[name] = buf.getvalue()
            urls.append(f"{self.base_url}/parquet/{r.entity}/{r.project}/{r.name}/{name}")
        live_keys = live_keys or ["_step"]
        return {"parquetUrls": urls, "liveData": [{k: x.get(k) for k in live_keys} for x in live]}

    def _file_url(self, r: FakeRun, name: str) -> str:
        return f"{self.base_url}/files/{r.entity}/{r.project}/{r.name}/{name}"

    # ------------------------------------------------------------------ mutations
    def _find_by_storage_id(self, storage_id: str) -> FakeRun | None:
        for r in self.runs.values():
            if r.storage_id == storage_id and not r.deleted:
                return r
        return None

    def _upsert_bucket(self, input=None, **_):
        """``upsertBucket``: by ``id`` (the storage id: the public API's ``Run.update``) or by
        ``entityName``/``modelName``/``name`` (wandb-core's run start, which creates the run,
        state ``running``, when it does not exist). Only the fields given are changed."""
        inp = input or {}
        r = self._find_by_storage_id(inp.get("id") or "")
        inserted = False
        if r is None and inp.get("id"):
            raise GraphQLFailure("run not found")
        if r is None and inp.get("name"):
            entity, project = inp.get("entityName") or self.entity, inp.get("modelName") or ""
            if not project:
                raise GraphQLFailure("project name required")
            r = self.run(entity, project, inp["name"])
            if r is None:
                if (entity, project, inp["name"]) in self.runs:  # deleted: the name is taken
                    raise GraphQLFailure(f"run {inp['name']} was previously created and deleted")
                r = FakeRun(
                    entity,
                    project,
                    inp["name"],
                    state="running",
                    created_at=_now(),
                    heartbeat_at=_now(),
                    wandb_config={},
                )
                self.runs[(entity, project, r.name)] = r
                inserted = True
        if r is None:
            raise GraphQLFailure("run not found")
        if inp.get("tags") is not None:
            r.tags = list(inp["tags"])
        if inp.get("notes") is not None:
            r.notes = inp["notes"]
        if inp.get("displayName"):
            r.display_name = inp["displayName"]
        if inp.get("config"):
            cfg = json.loads(inp["config"]) if isinstance(inp["config"], str) else inp["config"]
            r.config = {
                k: (v["value"] if isinstance(v, dict) and "value" in v else v)
                for k, v in cfg.items()
                if k != "_wandb"
            }
            wb = cfg.get("_wandb")
            if isinstance(wb, dict):
                r.wandb_config = wb.get("value", wb)
        if inp.get("summaryMetrics"):
            r.summary = json.loads(inp["summaryMetrics"])
        if inp.get("groupName") is not None:
            r.group = inp["groupName"]
        if inp.get("jobType") is not None:
            r.job_type = inp["jobType"]
        if inp.get("state"):
            r.set_state(inp["state"])
        if inp.get("sweep"):
            r.sweep = inp["sweep"]
        return {
            "bucket": self._run_view(r),
            "inserted": inserted,
            "__typename": "UpsertBucketPayload",
        }

    def _create_run_files(self, input=None, **_):
        inp = input or {}
        r = self.run(
            inp.get("entityName") or self.entity, inp.get("projectName"), inp.get("runName")
        )
        if r is None:
            return {"runID": None, "uploadHeaders": [], "files": []}
        return {
            "runID": r.storage_id,
            "uploadHeaders": [],
            "files": [{"name": n, "uploadUrl": self._file_url(r, n)} for n in inp.get("files", [])],
        }

    def _stop_run(self, input=None, **_):
        """``stopRun(input: {id})`` (wandb-core's ``StopRun``, sent by ``Run.stop()``): sets the
        run's stop flag, answered ``{success}``; the run's state is left to the process."""
        r = self._find_by_storage_id((input or {}).get("id", ""))
        if r is None:
            raise GraphQLFailure("run not found")
        r.stopped = True
        return {"success": True, "clientMutationId": None, "__typename": "StopRunPayload"}

    def _delete_run(self, input=None, **_):
        r = self._find_by_storage_id((input or {}).get("id", ""))
        if r is not None:
            r.deleted = True
        return {"clientMutationId": None}


class GraphQLFailure(Exception):
    """A GraphQL error answered with HTTP ``status`` (200 unless given, as W&B answers most
    errors; 409 for a name conflict, which the SDK's create_automation recognises)."""

    def __init__(self, message: str = "", status: int = 200) -> None:
        super().__init__(message)
        self.status = status


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime())


def _put_lines(lines: list, offset: int, content: list) -> None:
    """Write ``content`` at line ``offset`` of ``lines`` (overwriting, extending at the end).

    Raises:
        ValueError: ``offset`` is past the end (wandb-core never leaves a gap: a client bug).
    """
    if offset > len(lines):
        raise ValueError(f"offset {offset} leaves a gap after line {len(lines)}")
    lines[offset : offset + len(content)] = content


def _connection(nodes: list, after: str | None, first: int | None) -> dict[str, Any]:
    start = int(after) if after else 0
    first = first or 50
    page = nodes[start : start + first]
    return {
        "edges": [{"node": n, "cursor": str(start + i + 1)} for i, n in enumerate(page)],
        "pageInfo": {
            "__typename": "PageInfo",
            "endCursor": str(start + len(page)) if page else after,
            "hasNextPage": start + first < len(nodes),
        },
        "totalCount": len(nodes),
    }


def _filter(runs: list[FakeRun], filters) -> list[FakeRun]:
    """The MongoDB-style run filters mlaudit sends: field equality, ``$in``, ``$ne``, ``$and``/``$or``."""
    if isinstance(filters, str):
        filters = json.loads(filters) if filters else {}
    if not filters:
        return list(runs)
    return [r for r in runs if _match(r, filters)]


def _field(r: FakeRun, path: str) -> Any:
    if path == "group":
        return r.group
    if path in ("state", "sweep", "tags", "jobType", "displayName", "name"):
        return {
            "state": r.state,
            "sweep": r.sweep,
            "tags": r.tags,
            "jobType": r.job_type,
            "displayName": r.display_name,
            "name": r.name,
        }[path]
    if path.startswith("config."):
        key = path[len("config.") :]
        key = key.removesuffix(".value")
        return r.config.get(key)
    if path.startswith("summary_metrics."):
        return r.summary.get(path[len("summary_metrics.") :])
    return None


def _match(r: FakeRun, cond: dict[str, Any]) -> bool:
    for key, want in cond.items():
        if key == "$and":
            if not all(_match(r, c) for c in want):
                return False
            continue
        if key == "$or":
            if not any(_match(r, c) for c in want):
                return False
            continue
        have = _field(r, key)
        if isinstance(want, dict):
            for op, arg in want.items():
                if op == "$in":
                    ok = any(h in arg for h in have) if isinstance(have, list) else have in arg
                elif op == "$ne":
                    ok = have != arg
                elif op == "$exists":
                    ok = (have is not None) == bool(arg)
                else:
                    raise GraphQLFailure(f"fake W&B server: filter operator {op} not implemented")
                if not ok:
                    return False
        elif isinstance(have, list):
            if want not in have:
                return False
        elif have != want:
            return False
    return True
