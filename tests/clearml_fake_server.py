"""A small ClearML API server and file server on 127.0.0.1 for the ClearML tests.

Why not a real server: a real ClearML server is four services (the API server,
MongoDB, Elasticsearch, Redis) distributed as Docker images; none of them can be
installed or run on this machine (no Docker, no registry but PyPI). So the tests
run the **real ClearML SDK** (``clearml`` from PyPI, unmodified) against this
server, which speaks the wire protocol of clearml-server's API (v2.23):

* transport: ``POST /v<version>/<service>.<action>`` with a JSON body, or JSON lines
  for batch calls (``events.add_batch``); responses are ``{"meta": {...,
  "result_code", "result_subcode", "result_msg"}, "data": {...}}`` exactly as
  ``apiserver/service_repo/apicall.py`` builds them; errors carry the codes of
  ``apiserver/apierrors/errors.conf`` (400/101 invalid task id, 400/110 invalid
  task status, 400/131 events not added, 401/22 invalid credentials ...);
* ``auth.login`` with HTTP Basic credentials returns a JWT whose claims carry
  ``api_version``/``server_version`` as the SDK decodes them; other calls need
  ``Authorization: Bearer <token>``;
* tasks: ``create, get_all (id, name as regex, project, status, tags, system_tags,
  parent, last_update/last_change/status_changed ">iso" or a list of such conditions (the
  Monitor's ``status_changed: [">..."]``), _or_, only_fields, order_by, page,
  page_size), get_by_id, edit, update, started, stop (the UI's Abort, with the server's
  development-task / worker rules), stopped, completed, failed,
  publish, reset, enqueue, ping, set_requirements, get_hyper_params,
  edit_hyper_params, delete_hyper_params, edit_configuration, add_or_update_artifacts,
  add_or_update_model``; projects: ``get_all, create, get_by_id, update``; queues:
  ``get_all, get_default``; events: ``add_batch, get_task_log, get_task_events,
  get_scalar_metrics_and_variants, scalar_metrics_iter_raw, debug_images,
  get_task_plots``; plus the file server (multipart ``POST`` of a file to a
  path, ``GET``, ``DELETE``) that ``StorageManager``/``Logger.report_media`` use.
* the server's status rules, from ``apiserver/bll/task/utils.py``,
  ``apiserver/services/tasks.py`` and ``apiserver/bll/event/event_bll.py``:
  ``tasks.edit`` without ``force`` only on ``created`` tasks; artifacts only on
  ``created`` tasks, or ``in_progress`` with ``force`` (so a completed task
  rejects them with 400/110 — which the SDK swallows); hyper-parameter edits only
  on ``created``/``in_progress`` except the ``properties`` section, which any
  status accepts without touching ``last_update``; events for ``publishing`` or
  ``published`` tasks are refused ("Invalid task id") and a batch with no event
  added fails with 400/131; ``tasks.update``/forced ``tasks.edit`` (name,
  comment, tags) stay allowed, as on the real server. Scalar, plot and
  debug-image events are keyed by md5(task-iter-metric-variant), so re-reporting
  the same point replaces it; log events always accumulate. Adding events sets
  ``last_update``; ``tasks.update``/``edit`` set ``last_change``.

Nothing is persisted; every call is recorded in ``calls`` (and every user-property
edit, with its names and values, in ``property_edits``, so a test counts write-backs)
and an endpoint this server does not implement is recorded in ``unknown`` and answered
400/1 ("endpoint is not supported"), so a test can assert that the SDK used nothing
this server fakes wrongly.
"""

from __future__ import annotations

import base64
import bisect
import contextlib
import copy
import hashlib
import json
import os
import re
import threading
import time
import uuid
from datetime import datetime, timezone
from email import policy as email_policy
from email.parser import BytesParser
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import jwt

API_VERSION = "2.23"
SERVER_VERSION = "1.16.2"
_SECRET = "fake-clearml-server-token-signing-key-0123456789"
_LOCKED = ("publishing", "published")
_EVENT_TYPES = {
    "training_stats_scalar",
    "training_stats_vector",
    "training_debug_image",
    "plot",
    "log",
}
_ID_FIELDS = ("task", "iter", "metric", "variant", "key")


class ApiError(Exception):
    def __init__(self, code: int, subcode: int, msg: str) -> None:
        super().__init__(msg)
        self.code, self.subcode, self.msg = code, subcode, msg


def _now() -> datetime:
    return datetime.now(timezone.utc)


def _iso(dt: datetime) -> str:
    return dt.astimezone(timezone.utc).replace(tzinfo=None).isoformat() + "+00:00"


def _parse_dt(s: str) -> datetime:
    dt = datetime.fromisoformat(s.replace("Z", "+00:00"))
    return dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)


def _md5(s: str) -> str:
    return hashlib.md5(s.encode()).hexdigest()


def _invalid_task(task_id) -> ApiError:
    return ApiError(400, 101, f"Invalid task id: id={task_id}")


def _bad_status(status: str, expected: str = "created") -> ApiError:
    return ApiError(400, 110, f"Invalid task status: expected={expected}, status={status}")


def _project(doc: dict, only: list[str] | None) -> dict:
    if not only:
        return copy.deepcopy(doc)
    out: dict = {}
    for path in only:
        parts = path.split(".")
        src, dst = doc, out
        for i, p in enumerate(parts):
            if not isinstance(src, dict) or p not in src:
                break
            if i == len(parts) - 1:
                dst[p] = copy.deepcopy(src[p])
            else:
                src = src[p]
                dst = dst.setdefault(p, {})
    out.setdefault("id", doc["id"])
    return out


class FakeClearMLServer:
    """The API server plus a file server, each a ``ThreadingHTTPServer`` on 127.0.0.1.

    Args:
        access_key, secret_key: the one valid credential pair.

    Attributes:
        api_url, files_url, web_url: base URLs after :meth:`start`.
        tasks, projects, queues: the stored documents (dicts shaped like the API's).
        events: task id -> event type -> {event id: event} (a list for ``log``).
        files: file-server path -> bytes.
        calls: every call in order as ``(service.action, task id or None)``; unknown: the
            unimplemented endpoints.
        property_edits: every ``tasks.edit_hyper_params`` of the ``properties`` section as
            ``(task id, {name: value})``, in order.
    """

    def __init__(
        self, access_key: str = "mlaudit-test-key", secret_key: str = "mlaudit-test-secret"
    ) -> None:
        self.access_key, self.secret_key = access_key, secret_key
        self.tasks: dict[str, dict] = {}
        self.projects: dict[str, dict] = {}
        #: every ``projects.update`` as ``(project id, {field: value})``, in order
        self.project_updates: list[tuple[str, dict]] = []
        self.queues: dict[str, dict] = {}
        self.events: dict[str, dict[str, Any]] = {}
        self.files: dict[str, bytes] = {}
        self.calls: list[str] = []
        self.unknown: list[str] = []
        self.property_edits: list[tuple[str, dict]] = []
        #: (task id, event type) -> [iterations, events, stored count, dirty]: the events of
        #: one type in iteration order, so ``get_task_events`` pages by bisection instead of
        #: sorting a task's whole history per request (a live benchmark of 100 tasks at 10,000
        #: events a second measured this server, not the client, before)
        self._iter_index: dict[tuple[str, str], list] = {}
        self.lock = threading.RLock()
        self._servers: list[ThreadingHTTPServer] = []
        self.api_url = self.files_url = self.web_url = ""
        self.add_queue("services")
        self.add_queue("default", default=True)

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> FakeClearMLServer:
        api = self._serve(_ApiHandler)
        files = self._serve(_FilesHandler)
        self.api_url = f"http://127.0.0.1:{api.server_address[1]}"
        self.files_url = f"http://127.0.0.1:{files.server_address[1]}"
        self.web_url = f"http://127.0.0.1:{api.server_address[1]}/web"
        return self

    def _serve(self, handler) -> ThreadingHTTPServer:
        srv = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        srv.daemon_threads = True
        srv.fake = self  # type: ignore[attr-defined]
        threading.Thread(
            target=srv.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True
        ).start()
        self._servers.append(srv)
        return srv

    def stop(self) -> None:
        for srv in self._servers:
            srv.shutdown()
            srv.server_close()
        self._servers.clear()

    def write_config(
        self, path: Path, *, secret_key: str | None = None, api_url: str | None = None
    ) -> Path:
        """A clearml.conf pointing at this server (``secret_key``/``api_url`` override for error tests)."""
        path.write_text(
            "api {\n"
            f"  api_server: {api_url or self.api_url}\n"
            f"  web_server: {self.web_url}\n"
            f"  files_server: {self.files_url}\n"
            f'  credentials {{ access_key: "{self.access_key}", secret_key: "{secret_key or self.secret_key}" }}\n'
            "}\n"
            "sdk {\n"
            "  development {\n"
            "    report_use_subprocess: false\n"
            "    vcs_repo_detect_async: false\n"
            "    support_stopping: false\n"
            "  }\n"
            "}\n",
            encoding="utf-8",
        )
        return path

    # ------------------------------------------------------------------ fixtures for tests

    def add_queue(self, name: str, default: bool = False) -> str:
        qid = uuid.uuid4().hex
        self.queues[qid] = {
            "id": qid,
            "name": name,
            "entries": [],
            "system_tags": ["default"] if default else [],
            "tags": [],
            "created": _iso(_now()),
        }
        return qid

    def set_status(self, task_id: str, status: str) -> None:
        with self.lock:
            t = self.tasks[task_id]
            t["status"] = status
            t["status_changed"] = _iso(_now())

    # ------------------------------------------------------------------ dispatch

    def handle(self, endpoint: str, data: Any, auth_header: str | None) -> dict:
        with self.lock:
            task = data.get("task") if isinstance(data, dict) else None
            self.calls.append((endpoint, task if isinstance(task, str) else None))
            if endpoint == "auth.login":
                return self._login(auth_header)
            self._check_token(auth_header)
            fn = getattr(self, "ep_" + endpoint.replace(".", "__"), None)
            if fn is None:
                self.unknown.append(endpoint)
                raise ApiError(400, 1, f"endpoint is not supported: {endpoint}")
            return fn(data if data is not None else {})

    def _login(self, auth_header: str | None) -> dict:
        if not auth_header or not auth_header.startswith("Basic "):
            raise ApiError(401, 20, "Unauthorized (missing credentials)")
        try:
            key, _, secret = base64.b64decode(auth_header[6:]).decode().partition(":")
        except Exception:
            raise ApiError(401, 21, "Unauthorized (malformed credentials)") from None
        if key != self.access_key or secret != self.secret_key:
            raise ApiError(401, 22, "Unauthorized (invalid credentials)")
        claims = {
            "identity": {
                "company": "company",
                "user": "user-1",
                "user_name": "mlaudit tester",
                "company_name": "test",
                "role": "user",
            },
            "api_version": API_VERSION,
            "server_version": SERVER_VERSION,
            "feature_set": "basic",
            "env": "test",
            "exp": int(time.time()) + 3600 * 24,
            "iat": int(time.time()),
        }
        return {"token": jwt.encode(claims, _SECRET, algorithm="HS256")}

    def _check_token(self, auth_header: str | None) -> None:
        if not auth_header or not auth_header.startswith("Bearer "):
            raise ApiError(401, 20, "Unauthorized (missing credentials)")
        try:
            jwt.decode(auth_header[7:], _SECRET, algorithms=["HS256"])
        except jwt.PyJWTError:
            raise ApiError(401, 21, "Unauthorized (malformed credentials)") from None

    # ------------------------------------------------------------------ helpers

    def _task(self, task_id) -> dict:
        t = self.tasks.get(task_id) if isinstance(task_id, str) else None
        if t is None:
            raise _invalid_task(task_id)
        return t

    def _touch(self, t: dict, update: bool = True, change: bool = True) -> None:
        now = _iso(_now())
        if update:
            t["last_update"] = now
        if change:
            t["last_change"] = now
            t["last_changed_by"] = "user-1"

    def _set_status(
        self, t: dict, status: str, reason: str | None = None, message: str | None = None
    ) -> dict:
        old = t["status"]
        t["status"] = status
        t["status_changed"] = _iso(_now())
        t["status_reason"] = reason or ""
        t["status_message"] = message or ""
        self._touch(t)
        return {
            "updated": 1,
            "fields": {
                "status": status,
                "status_changed": t["status_changed"],
                "previous_status": old,
            },
        }

    # ------------------------------------------------------------------ projects / queues

    def ep_projects__get_all(self, d: dict) -> dict:
        ps = list(self.projects.values())
        if d.get("id"):
            ids = d["id"] if isinstance(d["id"], list) else [d["id"]]
            ps = [p for p in ps if p["id"] in ids]
        if d.get("name"):
            rx = re.compile(d["name"])
            ps = [p for p in ps if rx.search(p["name"])]
        return {"projects": [_project(p, d.get("only_fields")) for p in ps]}

    def ep_projects__get_all_ex(self, d: dict) -> dict:
        return self.ep_projects__get_all(d)

    def ep_projects__get_by_id(self, d: dict) -> dict:
        p = self.projects.get(d.get("project"))
        if p is None:
            raise ApiError(400, 401, f"Invalid project id: id={d.get('project')}")
        return {"project": copy.deepcopy(p)}

    def ep_projects__update(self, d: dict) -> dict:
        """``projects.update`` (clearml-server ``apiserver/services/projects.py``): the given
        fields among name, description, tags, system_tags, default_output_destination replaced;
        ``{"updated": 1, "fields": {...}}``; ``last_update`` set."""
        p = self.projects.get(d.get("project"))
        if p is None:
            raise ApiError(400, 401, f"Invalid project id: id={d.get('project')}")
        fields = {
            k: d[k]
            for k in ("name", "description", "tags", "system_tags", "default_output_destination")
            if k in d
        }
        p.update(copy.deepcopy(fields), last_update=_iso(_now()))
        self.project_updates.append((p["id"], dict(fields)))
        return {"updated": 1, "fields": fields}

    def ep_projects__create(self, d: dict) -> dict:
        if any(p["name"] == d["name"] for p in self.projects.values()):
            raise ApiError(
                409, 2, f"Value combination already exists (unique field): name={d['name']}"
            )
        pid = uuid.uuid4().hex
        self.projects[pid] = {
            "id": pid,
            "name": d["name"],
            "description": d.get("description", ""),
            "system_tags": d.get("system_tags", []),
            "tags": d.get("tags", []),
            "created": _iso(_now()),
            "basename": d["name"].rsplit("/", 1)[-1],
        }
        return {"id": pid}

    def ep_queues__get_all(self, d: dict) -> dict:
        qs = list(self.queues.values())
        if d.get("name"):
            rx = re.compile(d["name"])
            qs = [q for q in qs if rx.search(q["name"])]
        if d.get("id"):
            qs = [q for q in qs if q["id"] in d["id"]]
        return {"queues": copy.deepcopy(qs)}

    def ep_queues__get_default(self, d: dict) -> dict:
        q = next(q for q in self.queues.values() if "default" in q["system_tags"])
        return {"id": q["id"], "name": q["name"]}

    # ------------------------------------------------------------------ tasks: read

    def ep_tasks__get_by_id(self, d: dict) -> dict:
        return {"task": copy.deepcopy(self._task(d.get("task")))}

    def ep_tasks__get_all(self, d: dict) -> dict:
        ts = [t for t in self.tasks.values() if self._matches(t, d)]
        order = d.get("order_by") or []
        for key in reversed(order if isinstance(order, list) else [order]):
            rev = key.startswith("-")
            field = key.lstrip("-+")
            ts.sort(key=lambda t: (t.get(field) is None, t.get(field) or ""), reverse=rev)
        page, size = d.get("page"), d.get("page_size")
        if size:
            ts = ts[(page or 0) * size : (page or 0) * size + size]
        return {"tasks": [_project(t, d.get("only_fields")) for t in ts]}

    def ep_tasks__get_all_ex(self, d: dict) -> dict:
        return self.ep_tasks__get_all(d)

    @staticmethod
    def _match_tags(have: list[str], want: list[str]) -> bool:
        include = [w for w in want if not w.startswith("-") and not w.startswith("__$")]
        exclude = [w[1:] for w in want if w.startswith("-")]
        if any(x in have for x in exclude):
            return False
        return not include or any(x in have for x in include)

    @staticmethod
    def _cmp_dt(value: str | None, cond: str) -> bool:
        m = re.match(r"^(>=|<=|>|<)(.*)$", cond)
        if not m or value is None:
            return False
        a, b = _parse_dt(value), _parse_dt(m.group(2))
        return {">": a > b, ">=": a >= b, "<": a < b, "<=": a <= b}[m.group(1)]

    def _matches(self, t: dict, d: dict) -> bool:
        if d.get("id") is not None:
            ids = d["id"] if isinstance(d["id"], list) else [d["id"]]
            if t["id"] not in ids:
                return False
        if d.get("name") and not re.search(d["name"], t["name"]):
            return False
        for field in ("project", "status", "type", "parent"):
            v = d.get(field)
            if v is not None:
                vs = v if isinstance(v, list) else [v]
                if t.get(field) not in vs:
                    return False
        if d.get("tags") and not self._match_tags(t.get("tags", []), d["tags"]):
            return False
        if d.get("system_tags") and not self._match_tags(
            t.get("system_tags", []), d["system_tags"]
        ):
            return False
        for field in (
            "last_update",
            "last_change",
            "status_changed",
        ):  # the server's datetime_fields
            conds = d.get(field)  # one ">iso" condition, or a list of them (all must hold), as
            conds = [conds] if isinstance(conds, str) else conds  # clearml Monitor sends it
            if isinstance(conds, list) and not all(self._cmp_dt(t.get(field), c) for c in conds):
                return False
        ors = d.get("_or_")
        if ors:
            conds = ors.get("datetime") or []
            if not any(self._cmp_dt(t.get(f), c) for f in ors.get("fields", []) for c in conds):
                return False
        return True

    # ------------------------------------------------------------------ tasks: write

    def ep_tasks__create(self, d: dict) -> dict:
        tid = uuid.uuid4().hex
        now = _iso(_now())
        t = {
            "id": tid,
            "name": d["name"],
            "type": d.get("type", "training"),
            "status": "created",
            "status_reason": "",
            "status_message": "",
            "status_changed": now,
            "comment": d.get("comment", ""),
            "created": now,
            "started": None,
            "completed": None,
            "published": None,
            "last_update": now,
            "last_change": now,
            "last_changed_by": "user-1",
            "user": "user-1",
            "company": "company",
            "project": d.get("project"),
            "parent": d.get("parent"),
            "tags": list(d.get("tags") or []),
            "system_tags": list(d.get("system_tags") or []),
            "output": d.get("output") or {},
            "execution": {
                "artifacts": [],
                "parameters": {},
                "model_desc": {},
                "model_labels": {},
                **(d.get("execution") or {}),
            },
            "script": d.get("script") or {},
            "hyperparams": d.get("hyperparams") or {},
            "configuration": d.get("configuration") or {},
            "models": {"input": [], "output": []},
            "runtime": d.get("runtime") or {},
            "last_iteration": 0,
            "last_metrics": {},
            "container": d.get("container") or {},
        }
        self.tasks[tid] = t
        return {"id": tid}

    _EDITABLE = (
        "name",
        "comment",
        "tags",
        "system_tags",
        "project",
        "parent",
        "type",
        "script",
        "execution",
        "hyperparams",
        "configuration",
        "output",
        "runtime",
        "models",
        "container",
        "status_message",
        "status_reason",
    )

    def ep_tasks__edit(self, d: dict) -> dict:
        t = self._task(d.get("task"))
        if not d.get("force") and t["status"] != "created":
            raise _bad_status(t["status"])
        fields = {k: d[k] for k in self._EDITABLE if k in d}
        for k, v in fields.items():
            if (
                isinstance(v, dict)
                and isinstance(t.get(k), dict)
                and k in ("execution", "script", "output")
            ):
                t[k].update(copy.deepcopy(v))
            else:
                t[k] = copy.deepcopy(v)
        only_user_fields = set(fields) <= {"name", "comment", "tags", "system_tags", "project"}
        self._touch(t, update=not only_user_fields)
        return {"updated": 1, "fields": fields}

    def ep_tasks__update(self, d: dict) -> dict:
        t = self._task(d.get("task"))
        fields = {
            k: d[k]
            for k in (
                "name",
                "comment",
                "tags",
                "system_tags",
                "project",
                "status_message",
                "status_reason",
            )
            if k in d
        }
        t.update(copy.deepcopy(fields))
        self._touch(t, update=False)
        return {"updated": 1, "fields": fields}

    def ep_tasks__update_tags(self, d: dict) -> dict:
        for tid in d.get("ids") or []:
            t = self._task(tid)
            t["tags"] = sorted(
                set(t["tags"]) | set(d.get("add_tags") or []) - set(d.get("remove_tags") or [])
            )
            self._touch(t, update=False)
        return {"updated": len(d.get("ids") or [])}

    def ep_tasks__started(self, d: dict) -> dict:
        t = self._task(d.get("task"))
        if t["status"] not in ("created", "queued", "in_progress") and not d.get("force"):
            raise _bad_status(t["status"])
        t["started"] = t.get("started") or _iso(_now())
        return self._set_status(t, "in_progress", d.get("status_reason"), d.get("status_message"))

    def ep_tasks__stopped(self, d: dict) -> dict:
        t = self._task(d.get("task"))
        if t["status"] in _LOCKED:
            raise _bad_status(t["status"], "in_progress")
        return self._set_status(t, "stopped", d.get("status_reason"), d.get("status_message"))

    #: clearml-server's ``apiserver.workers.task_update_timeout``: a worker that has not updated
    #: its task for this long is not running it any more.
    TASK_UPDATE_TIMEOUT_S = 600

    def ep_tasks__stop(self, d: dict) -> dict:
        """``tasks.stop`` (the UI's Abort), after clearml-server's
        ``apiserver/bll/task/task_operations.py`` ``stop_task``: a queued task, a development
        task (system tag ``development``: run from a user's machine) or one no worker updated
        within ``TASK_UPDATE_TIMEOUT_S`` is set ``stopped`` at once (status message ``Stopped
        by <user>``); one an agent runs keeps its status with ``status_message: stopping`` for
        the agent to kill. Only ``in_progress``/``queued`` tasks can be stopped without
        ``force`` (400/110 otherwise)."""
        t = self._task(d.get("task"))
        if t["status"] not in ("in_progress", "queued") and not d.get("force"):
            raise _bad_status(t["status"], "in_progress")
        updated = _parse_dt(t["last_update"]) if t.get("last_update") else None
        by_worker = (
            bool(t.get("last_worker"))
            and updated is not None
            and (_now() - updated).total_seconds() < self.TASK_UPDATE_TIMEOUT_S
        )
        if (
            t["status"] == "queued"
            or "development" in (t.get("system_tags") or [])
            or not by_worker
        ):
            return self._set_status(t, "stopped", d.get("status_reason"), "Stopped by tester")
        return self._set_status(t, t["status"], d.get("status_reason"), "stopping")

    def ep_tasks__failed(self, d: dict) -> dict:
        t = self._task(d.get("task"))
        if t["status"] in _LOCKED:
            raise _bad_status(t["status"], "in_progress")
        return self._set_status(t, "failed", d.get("status_reason"), d.get("status_message"))

    def ep_tasks__completed(self, d: dict) -> dict:
        t = self._task(d.get("task"))
        if t["status"] not in ("in_progress",) and not (
            d.get("force") and t["status"] not in _LOCKED
        ):
            raise _bad_status(t["status"], "in_progress")
        t["completed"] = _iso(_now())
        return self._set_status(t, "completed", d.get("status_reason"), d.get("status_message"))

    def ep_tasks__publish(self, d: dict) -> dict:
        t = self._task(d.get("task"))
        if t["status"] not in ("completed", "stopped") and not d.get("force"):
            raise _bad_status(t["status"], "completed")
        t["published"] = _iso(_now())
        return self._set_status(t, "published", d.get("status_reason"), d.get("status_message"))

    def ep_tasks__reset(self, d: dict) -> dict:
        t = self._task(d.get("task"))
        if t["status"] in _LOCKED:
            raise _bad_status(t["status"])
        t["started"] = t["completed"] = None
        t["execution"]["artifacts"] = []
        return self._set_status(t, "created")

    def ep_tasks__enqueue(self, d: dict) -> dict:
        t = self._task(d.get("task"))
        qid = d.get("queue") or next(
            q["id"] for q in self.queues.values() if "default" in q["system_tags"]
        )
        q = self.queues.get(qid)
        if q is None:
            raise ApiError(400, 701, f"Invalid queue id: id={qid}")
        q["entries"].append({"task": t["id"], "added": _iso(_now())})
        t["execution"]["queue"] = qid
        res = self._set_status(t, "queued")
        res["queued"] = 1
        return res

    def ep_tasks__dequeue(self, d: dict) -> dict:
        t = self._task(d.get("task"))
        for q in self.queues.values():
            q["entries"] = [e for e in q["entries"] if e["task"] != t["id"]]
        return self._set_status(t, "created")

    def ep_tasks__ping(self, d: dict) -> dict:
        self._task(d.get("task"))
        return {}

    def ep_tasks__set_requirements(self, d: dict) -> dict:
        t = self._task(d.get("task"))
        t.setdefault("script", {})["requirements"] = d.get("requirements")
        self._touch(t)
        return {"updated": 1, "fields": {"script.requirements": d.get("requirements")}}

    def ep_tasks__edit_hyper_params(self, d: dict) -> dict:
        t = self._task(d.get("task"))
        params = d.get("hyperparams") or []
        for p in params:
            if (p.get("section") or "").lower() == "properties":
                p["section"] = "properties"
        properties_only = all(p.get("section") == "properties" for p in params)
        allowed = ("created", "in_progress") if d.get("force") else ("created",)
        if not properties_only and t["status"] not in allowed:
            raise _bad_status(t["status"])
        hp = t.setdefault("hyperparams", {})
        replace = d.get("replace_hyperparams", "none")
        if replace == "all":
            hp.clear()
        for p in params:
            sec = hp.setdefault(p["section"], {})
            if replace == "section":
                sec.clear()
        for p in params:
            hp[p["section"]][p["name"]] = {
                k: p[k] for k in ("section", "name", "value", "type", "description") if k in p
            }
        props = {p["name"]: p.get("value") for p in params if p["section"] == "properties"}
        if props:
            self.property_edits.append((t["id"], props))
        self._touch(t, update=not properties_only)
        return {"updated": 1}

    def ep_tasks__get_hyper_params(self, d: dict) -> dict:
        out = []
        for tid in d.get("tasks") or []:
            items = [
                p for sec in self._task(tid).get("hyperparams", {}).values() for p in sec.values()
            ]
            out.append(
                {
                    "task": tid,
                    "hyperparams": sorted(
                        copy.deepcopy(items), key=lambda p: (p.get("section"), p.get("name"))
                    ),
                }
            )
        return {"params": out}

    def ep_tasks__delete_hyper_params(self, d: dict) -> dict:
        t = self._task(d.get("task"))
        params = d.get("hyperparams") or []
        properties_only = all((p.get("section") or "").lower() == "properties" for p in params)
        if not properties_only and t["status"] not in (
            ("created", "in_progress") if d.get("force") else ("created",)
        ):
            raise _bad_status(t["status"])
        for p in params:
            sec = t["hyperparams"].get(
                p["section"].lower() if properties_only else p["section"], {}
            )
            if p.get("name"):
                sec.pop(p["name"], None)
            else:
                sec.clear()
        self._touch(t, update=not properties_only)
        return {"deleted": 1}

    def ep_tasks__edit_configuration(self, d: dict) -> dict:
        t = self._task(d.get("task"))
        allowed = ("created", "in_progress") if d.get("force") else ("created",)
        if t["status"] not in allowed:
            raise _bad_status(t["status"])
        conf = t.setdefault("configuration", {})
        if d.get("replace_configuration"):
            conf.clear()
        for item in d.get("configuration") or []:
            conf[item["name"]] = copy.deepcopy(item)
        self._touch(t)
        return {"updated": 1}

    def ep_tasks__add_or_update_artifacts(self, d: dict) -> dict:
        t = self._task(d.get("task"))
        allowed = ("created", "in_progress") if d.get("force") else ("created",)
        if t["status"] not in allowed:
            raise _bad_status(t["status"])
        arts = {
            (a["key"], a.get("mode", "output")): a for a in t["execution"].get("artifacts") or []
        }
        for a in d.get("artifacts") or []:
            arts[(a["key"], a.get("mode", "output"))] = copy.deepcopy(a)
        t["execution"]["artifacts"] = sorted(arts.values(), key=lambda a: a["key"])
        self._touch(t)
        return {"updated": 1}

    def ep_tasks__add_or_update_model(self, d: dict) -> dict:
        t = self._task(d.get("task"))
        t["models"].setdefault(d.get("type", "output"), []).append(
            {"name": d.get("name"), "model": d.get("model")}
        )
        self._touch(t)
        return {"updated": 1}

    # ------------------------------------------------------------------ events

    def _task_events(self, task_id: str) -> dict[str, Any]:
        return self.events.setdefault(
            task_id,
            {
                "training_stats_scalar": {},
                "training_stats_vector": {},
                "training_debug_image": {},
                "plot": {},
                "log": [],
            },
        )

    def ep_events__add_batch(self, events: list) -> dict:
        if not isinstance(events, list) or not events:
            raise ApiError(400, 17, "Batch request contains no items")
        added, errors = 0, {}
        for ev in events:
            ev = dict(ev)
            etype = (ev.get("type") or "").replace(" ", "_")
            tid = ev.get("task")
            t = self.tasks.get(tid)
            allow_locked = ev.pop("allow_locked", False)
            if etype not in _EVENT_TYPES:
                errors[f"Invalid event type {etype}"] = (
                    errors.get(f"Invalid event type {etype}", 0) + 1
                )
                continue
            if t is None or (t["status"] in _LOCKED and not allow_locked):
                errors[f"Invalid task id {tid}"] = errors.get(f"Invalid task id {tid}", 0) + 1
                continue
            ev["type"] = etype
            ev.setdefault("timestamp", int(time.time() * 1000))
            ev["metric"] = ev.get("metric") or ""
            ev["variant"] = ev.get("variant") or ""
            if "values" in ev:
                ev["value"] = ev.pop("values")
            store = self._task_events(tid)
            if etype == "log":
                store["log"].append(ev)
            else:
                eid = _md5("-".join(str(ev[f]) for f in _ID_FIELDS if f in ev))
                idx = self._iter_index.get((tid, etype))
                if idx is not None and "iter" in ev:
                    if eid in store[etype] or (idx[0] and int(ev["iter"]) < idx[0][-1]):
                        idx[3] = True  # a replaced or late event: rebuilt at the next read
                    elif not idx[3]:
                        idx[0].append(int(ev["iter"]))
                        idx[1].append(ev)
                        idx[2] += 1
                store[etype][eid] = ev
            if ev.get("iter") is not None:
                t["last_iteration"] = max(int(t.get("last_iteration") or 0), int(ev["iter"]))
            if etype == "training_stats_scalar" and isinstance(ev.get("value"), (int, float)):
                lm = (
                    t["last_metrics"]
                    .setdefault(_md5(ev["metric"]), {})
                    .setdefault(
                        _md5(ev["variant"]),
                        {
                            "metric": ev["metric"],
                            "variant": ev["variant"],
                            "min_value": ev["value"],
                            "max_value": ev["value"],
                        },
                    )
                )
                lm["value"] = ev["value"]
                lm["min_value"] = min(lm["min_value"], ev["value"])
                lm["max_value"] = max(lm["max_value"], ev["value"])
            self._touch(t, change=False)
            added += 1
        if not added:
            raise ApiError(
                400, 131, "Events not added: " + ", ".join(f"{k}={v}" for k, v in errors.items())
            )
        return {"added": added, "errors": sum(errors.values()), "errors_info": errors}

    def ep_events__get_scalar_metrics_and_variants(self, d: dict) -> dict:
        self._task(d.get("task"))
        out: dict[str, list[str]] = {}
        for ev in self._task_events(d["task"])["training_stats_scalar"].values():
            out.setdefault(ev["metric"], [])
            if ev["variant"] not in out[ev["metric"]]:
                out[ev["metric"]].append(ev["variant"])
        return {"metrics": {m: sorted(v) for m, v in sorted(out.items())}}

    @staticmethod
    def _page(
        events: list[dict], field: str, batch: int, after, earlier: bool = False
    ) -> list[dict]:
        """Sort by ``field``; take ``batch`` after ``after``; add the leftovers of the last key value."""
        evs = sorted(events, key=lambda e: e[field], reverse=earlier)
        if after is not None:
            evs = [e for e in evs if (e[field] < after if earlier else e[field] > after)]
        page = evs[:batch]
        if page:
            last = page[-1][field]
            page += [e for e in evs[batch:] if e[field] == last]
        return page

    @staticmethod
    def _scroll(state: dict) -> str:
        return base64.urlsafe_b64encode(json.dumps(state).encode()).decode()

    @staticmethod
    def _unscroll(scroll_id: str) -> dict:
        try:
            return json.loads(base64.urlsafe_b64decode(scroll_id.encode()))
        except Exception:
            raise ApiError(400, 1104, f"Invalid scroll id: scroll_id={scroll_id}") from None

    def ep_events__scalar_metrics_iter_raw(self, d: dict) -> dict:
        key = d.get("key") or "iter"
        field = "iter" if key == "iter" else "timestamp"
        if d.get("scroll_id"):
            st = self._unscroll(d["scroll_id"])
            if st["from"] is None:
                return {
                    "returned": 0,
                    "total": st["total"],
                    "scroll_id": d["scroll_id"],
                    "variants": {},
                }
            req, after, total = st["request"], st["from"], st["total"]
            req["batch_size"] = d.get("batch_size") or req.get("batch_size")
        else:
            req, after, total = dict(d), None, None
            req["batch_size"] = req.get("batch_size") or 10_000
        self._task(req.get("task"))
        mv = req.get("metric") or {}
        evs = [
            e
            for e in self._task_events(req["task"])["training_stats_scalar"].values()
            if (not mv.get("metric") or e["metric"] == mv["metric"])
            and (not mv.get("variants") or e["variant"] in mv["variants"])
        ]
        if req.get("count_total") and total is None:
            total = len(evs)
        page = self._page(evs, field, min(int(req["batch_size"]), 200_000), after)
        variants: dict[str, dict[str, list]] = {}
        for e in page:
            v = variants.setdefault(e["variant"], {"y": [], key: []})
            v["y"].append(e["value"])
            v[key].append(e[field])
        st = {"from": page[-1][field] if page else None, "total": total, "request": req}
        return {
            "returned": len(page),
            "total": total,
            "scroll_id": self._scroll(st),
            "variants": variants,
        }

    def _indexed(self, task_id: str, etype: str) -> list:
        """The iteration-ordered index of one task's events of one type (see ``__init__``)."""
        evs = self._task_events(task_id)[etype]
        idx = self._iter_index.get((task_id, etype))
        if idx is None or idx[3] or idx[2] != len(evs):
            ordered = sorted((e for e in evs.values() if "iter" in e), key=lambda e: int(e["iter"]))
            idx = [[int(e["iter"]) for e in ordered], ordered, len(evs), False]
            self._iter_index[(task_id, etype)] = idx
        return idx

    @staticmethod
    def _metric_filter(metrics) -> Any:
        """``metrics: [{metric, variants}]`` of clearml-server's ``TaskEventsRequest`` (API
        2.22+) as a predicate on an event; None for no filter."""
        if not metrics:
            return None
        want = {m.get("metric") or "": set(m.get("variants") or ()) for m in metrics}
        return lambda e: (
            e["metric"] in want and (not want[e["metric"]] or e["variant"] in want[e["metric"]])
        )

    def _indexed_page(
        self, task_id: str, etype: str, keep, batch: int, after, earlier: bool
    ) -> list:
        """``_page`` on the iteration index: ``batch`` matching events after ``after`` in
        iteration order (descending when ``earlier``), plus the rest of the last iteration."""
        iters, evs = self._indexed(task_id, etype)[:2]
        page: list = []
        if earlier:
            i = (bisect.bisect_left(iters, after) if after is not None else len(iters)) - 1
            step = -1
        else:
            i = bisect.bisect_right(iters, after) if after is not None else 0
            step = 1
        while 0 <= i < len(iters):
            if len(page) >= batch and iters[i] != page[-1]["iter"]:
                break
            e = evs[i]
            if keep is None or keep(e):
                page.append(e)
            i += step
        return page

    def ep_events__get_task_events(self, d: dict) -> dict:
        if d.get("scroll_id"):
            st = self._unscroll(d["scroll_id"])
            if st["from"] is None:
                return {
                    "returned": 0,
                    "total": st["total"],
                    "scroll_id": d["scroll_id"],
                    "events": [],
                }
            req, after, total = st["request"], st["from"], st["total"]
        else:
            req, after, total = dict(d), None, None
        self._task(req.get("task"))
        etype = req.get("event_type") or "all"
        store = self._task_events(req["task"])
        if etype not in ("all", "log"):  # one event type: paged on its iteration index
            keep = self._metric_filter(req.get("metrics"))
            if req.get("count_total", True) and total is None:
                total = sum(1 for e in store[etype].values() if keep is None or keep(e))
            page = self._indexed_page(
                req["task"],
                etype,
                keep,
                min(int(req.get("batch_size") or 500), 10_000),
                after,
                req.get("order") == "desc",
            )
            st = {"from": page[-1]["iter"] if page else None, "total": total, "request": req}
            return {
                "returned": len(page),
                "total": total,
                "scroll_id": self._scroll(st),
                "events": [dict(e) for e in page],
            }
        pool = (
            store["log"]
            if etype == "log"
            else (
                [
                    e
                    for k in (
                        "training_stats_scalar",
                        "training_stats_vector",
                        "training_debug_image",
                        "plot",
                    )
                    for e in store[k].values()
                ]
                + store["log"]
                if etype == "all"
                else list(store[etype].values())
            )
        )
        if req.get("count_total", True) and total is None:
            total = len(pool)
        earlier = req.get("order") == "desc"
        page = self._page(
            [e for e in pool if "iter" in e],
            "iter",
            min(int(req.get("batch_size") or 500), 10_000),
            after,
            earlier,
        )
        st = {"from": page[-1]["iter"] if page else None, "total": total, "request": req}
        return {
            "returned": len(page),
            "total": total,
            "scroll_id": self._scroll(st),
            "events": copy.deepcopy(page),
        }

    def ep_events__get_task_log(self, d: dict) -> dict:
        self._task(d.get("task"))
        logs = self._task_events(d["task"])["log"]
        earlier = d.get("navigate_earlier", True)
        page = self._page(
            logs, "timestamp", int(d.get("batch_size") or 5000), d.get("from_timestamp"), earlier
        )
        order = d.get("order")
        if order and ((earlier and order == "asc") or (not earlier and order == "desc")):
            page = page[::-1]
        return {"events": copy.deepcopy(page), "returned": len(page), "total": len(logs)}

    def ep_events__debug_images(self, d: dict) -> dict:
        if d.get(
            "scroll_id"
        ):  # one page holds everything here: a scroll means "after the last page"
            st = self._unscroll(d["scroll_id"])
            return {
                "metrics": [
                    {"task": m["task"], "metric": m.get("metric"), "iterations": []}
                    for m in st["metrics"]
                ],
                "scroll_id": d["scroll_id"],
            }
        out = []
        for m in d.get("metrics") or []:
            self._task(m.get("task"))
            evs = [
                e
                for e in self._task_events(m["task"])["training_debug_image"].values()
                if (not m.get("metric") or e["metric"] == m["metric"])
                and (not m.get("variants") or e["variant"] in m["variants"])
            ]
            iters: dict[int, list] = {}
            for e in evs:
                iters.setdefault(int(e.get("iter") or 0), []).append(copy.deepcopy(e))
            last = sorted(iters, reverse=True)[: int(d.get("iters") or 1)]
            out.append(
                {
                    "task": m["task"],
                    "metric": m.get("metric"),
                    "iterations": [{"iter": i, "events": iters[i]} for i in last],
                }
            )
        return {"metrics": out, "scroll_id": self._scroll({"metrics": d.get("metrics") or []})}

    def ep_events__get_task_plots(self, d: dict) -> dict:
        self._task(d.get("task"))
        plots = sorted(
            self._task_events(d["task"])["plot"].values(), key=lambda e: (e["metric"], e["variant"])
        )
        if d.get("metrics"):
            wanted = {m.get("metric") for m in d["metrics"]}
            plots = [p for p in plots if p["metric"] in wanted]
        return {
            "plots": copy.deepcopy(plots),
            "returned": len(plots),
            "total": len(plots),
            "scroll_id": None,
        }


def _respond(handler: BaseHTTPRequestHandler, status: int, body: bytes, ctype: str) -> None:
    handler.send_response(status)
    handler.send_header("Content-Type", ctype)
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


class _ApiHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # else each response waits ~40 ms for the client's ACK

    def log_message(self, *args) -> None:  # keep test output clean
        pass

    def _handle(self) -> None:
        fake: FakeClearMLServer = self.server.fake  # type: ignore[attr-defined]
        path = urlparse(self.path).path.strip("/")
        version = API_VERSION
        m = re.match(r"^v(\d+\.\d+)/(.+)$", path)
        if m:
            version, path = m.group(1), m.group(2)
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        meta = {
            "id": uuid.uuid4().hex,
            "trx": uuid.uuid4().hex,
            "endpoint": {"name": path, "requested_version": version, "actual_version": version},
            "result_code": 200,
            "result_subcode": 0,
            "result_msg": "OK",
            "error_stack": None,
            "error_data": {},
        }
        status, data = 200, {}
        try:
            if raw.strip():
                if "json-lines" in (self.headers.get("Content-Type") or ""):
                    body = [json.loads(line) for line in raw.decode().splitlines() if line.strip()]
                else:
                    body = json.loads(raw)
            else:
                body = None
            data = fake.handle(path, body, self.headers.get("Authorization"))
        except ApiError as exc:
            status = exc.code
            meta.update(result_code=exc.code, result_subcode=exc.subcode, result_msg=exc.msg)
            data = {}
        except Exception as exc:  # a bug in this fake: surface it like the real server's 500
            status = 500
            meta.update(
                result_code=500, result_subcode=0, result_msg=f"{type(exc).__name__}: {exc}"
            )
            fake.unknown.append(f"{path}: 500 {type(exc).__name__}: {exc}")
        _respond(
            self, status, json.dumps({"meta": meta, "data": data}).encode(), "application/json"
        )

    do_GET = do_POST = do_PUT = _handle


class _FilesHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # else each response waits ~40 ms for the client's ACK

    def log_message(self, *args) -> None:
        pass

    def do_POST(self) -> None:
        fake: FakeClearMLServer = self.server.fake  # type: ignore[attr-defined]
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n)
        base = unquote(urlparse(self.path).path).strip("/")
        # the SDK posts multipart/form-data with one field per file, named by the file's path
        msg = BytesParser(policy=email_policy.default).parsebytes(
            f"Content-Type: {self.headers.get('Content-Type')}\r\n\r\n".encode() + raw
        )
        stored = []
        for part in msg.iter_parts():
            name = part.get_param("name", header="content-disposition")
            key = "/".join(x for x in (base, name.strip("/")) if x)
            with fake.lock:
                fake.files[key] = part.get_payload(decode=True)
            stored.append(key)
        _respond(self, 200, json.dumps({"stored": stored}).encode(), "application/json")

    def do_GET(self) -> None:
        fake: FakeClearMLServer = self.server.fake  # type: ignore[attr-defined]
        key = unquote(urlparse(self.path).path).strip("/")
        body = fake.files.get(key)
        if body is None:
            _respond(self, 404, b"not found", "text/plain")
        else:
            _respond(self, 200, body, "application/octet-stream")

    def do_DELETE(self) -> None:
        fake: FakeClearMLServer = self.server.fake  # type: ignore[attr-defined]
        key = unquote(urlparse(self.path).path).strip("/")
        existed = fake.files.pop(key, None) is not None
        _respond(self, 200 if existed else 404, b"{}", "application/json")


@contextlib.contextmanager
def serving(root: Path):
    """A started :class:`FakeClearMLServer`, a ``clearml.conf`` for it under ``root`` and the
    environment the SDK reads (config file, cache dir, log level) pointed at them for the block;
    afterwards the environment is restored and the server stopped."""
    srv = FakeClearMLServer().start()
    conf = srv.write_config(root / "clearml.conf")
    env = {
        "CLEARML_CONFIG_FILE": str(conf),
        "CLEARML_CACHE_DIR": str(root / "cache"),
        "CLEARML_LOG_LEVEL": "WARNING",
    }
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        yield srv
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        srv.stop()
