"""The agent tools: each a plain function over JSON arguments returning JSON, with its schemas.

``mlaudit mcp`` (:mod:`.server`) lists :data:`TOOLS` and calls :func:`call`. A tool does the
same work as the CLI command it mirrors, through the same functions (tracker plugins from
:mod:`mlaudit_core.plugins`, :func:`mlaudit_core.audit.audit`, the baseline selection,
:func:`mlaudit_core.audit.audit_ci`, :func:`mlaudit_core.formats.plan`), so a verdict is the
CLI's verdict for the same input.

Rules every tool follows:

* **Paths are confined** to the roots given at start (:class:`Roots`): a file, folder,
  log, repository, file-store tracking URI or settings file outside them is refused with
  one line. Relative paths are taken relative to the first root.
* **Nothing is written back** unless the call says ``write_back: true``.
* **Errors** are :class:`ToolFailure` with the CLI's one-line message (``mlaudit: error:
  ...``); the server turns them into MCP tool errors (``isError: true``).
* Long work reports progress through the ``progress(done, total, message)`` callback.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

Progress = Callable[[float, float, str], None]

TRACKERS = ("mlflow", "wandb", "clearml")
#: get_series / compare_runs sources: the trackers, or ``path`` (anything ``mlaudit PATH`` reads).
SOURCES = (*TRACKERS, "path")
MAX_POINTS = 10_000
#: Runs audited by one audit_path call (a folder of many runs: call again on one of them).
MAX_RUNS = 25


from .triage_tool import DESCRIPTION as TRIAGE_DESCRIPTION  # noqa: E402
from .triage_tool import INPUT_SCHEMA as TRIAGE_INPUT  # noqa: E402
from .triage_tool import OUTPUT_SCHEMA as TRIAGE_OUTPUT  # noqa: E402


class ToolFailure(Exception):
    """A tool call that cannot be done; ``str()`` is the one line the client sees."""


def _noop(done: float, total: float, message: str) -> None:
    return None


@dataclass(frozen=True)
class Roots:
    """The folders the server may read (``--root``, repeatable; default: the current directory).

    :meth:`confine` resolves a path (``~`` expanded, relative to the first root, symlinks
    followed) and refuses it unless it lies inside one of the roots.
    """

    paths: tuple[Path, ...]

    @classmethod
    def of(cls, roots: Sequence[str | os.PathLike] | None) -> Roots:
        given = list(roots or []) or [os.getcwd()]
        out = []
        for r in given:
            p = Path(r).expanduser().resolve()
            if not p.is_dir():
                raise ToolFailure(f"mlaudit: error: --root {r}: not a directory")
            out.append(p)
        return cls(tuple(dict.fromkeys(out)))

    def confine(self, value: str | os.PathLike, what: str) -> Path:
        raw = Path(value).expanduser()
        p = (raw if raw.is_absolute() else self.paths[0] / raw).resolve()
        if any(p == r or p.is_relative_to(r) for r in self.paths):
            _regular_or_dir(p, what, value)
            return p
        roots = ", ".join(str(r) for r in self.paths)
        raise ToolFailure(
            f"mlaudit: error: {what} {value}: outside the allowed roots ({roots}); "
            "start the server with --root DIR to allow it"
        )

    def confine_tree(self, value: str | os.PathLike, what: str) -> Path:
        """:meth:`confine`, and for a folder also every symbolic link under it: the readers open
        the files inside a run folder, so a link in it to a file outside the roots would be
        read (``run/trainer_state.json -> /elsewhere/...``). Raises :class:`ToolFailure`
        naming the first such link. W&B's own ``debug*.log`` links (into its cache, in every
        offline run folder) are allowed: no reader opens them."""
        p = self.confine(value, what)
        if p.is_dir():
            for top, dirs, files in os.walk(p, followlinks=False):
                for name in dirs + files:
                    link = Path(top) / name
                    if name in files and not link.is_symlink():
                        _regular_or_dir(link, what, value)
                    if link.is_symlink() and not (
                        name.startswith("debug") and name.endswith(".log")
                    ):
                        target = link.resolve()
                        if not any(target == r or target.is_relative_to(r) for r in self.paths):
                            rel = link.relative_to(p)
                            roots = ", ".join(str(r) for r in self.paths)
                            raise ToolFailure(
                                f"mlaudit: error: {what} {value}: {rel} links outside the allowed "
                                f"roots ({roots}); start the server with --root DIR to allow it"
                            )
        return p


def _regular_or_dir(p: Path, what: str, value: str | os.PathLike) -> None:
    """Refuse a FIFO, socket or device (a reader's ``open`` of a FIFO blocks until a writer
    comes: one call would hold the server; ``/dev/zero`` never ends)."""
    import stat

    try:
        mode = p.stat().st_mode
    except OSError:
        return  # missing: the tool's own error names it
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        raise ToolFailure(
            f"mlaudit: error: {what} {value}: {p.name} is not a regular file or "
            "folder (a FIFO, socket or device)"
        )


#: Limits of one call's arguments: items of an array, characters of a string
MAX_ITEMS = 256
MAX_STRING = 4096


def _bounded(schema: dict) -> dict:
    """``schema`` (an input schema) with ``maxItems`` on every array and ``maxLength`` on every
    string that has none: a call of 20,000 paths is refused by the schema check."""
    if not isinstance(schema, dict):
        return schema
    out = {k: (_bounded(v) if isinstance(v, dict) else v) for k, v in schema.items()}
    if "properties" in out:
        out["properties"] = {k: _bounded(v) for k, v in out["properties"].items()}
    if out.get("type") == "array":
        out.setdefault("maxItems", MAX_ITEMS)
    if out.get("type") == "string" and "enum" not in out:
        out.setdefault("maxLength", MAX_STRING)
    return out


# --- schemas ---------------------------------------------------------------------------------

_STR = {"type": "string"}
_PATHS = {"type": "array", "items": {"type": "string"}, "minItems": 1}


def _obj(props: dict, required: Sequence[str] = ()) -> dict:
    return {
        "type": "object",
        "properties": props,
        "required": list(required),
        "additionalProperties": False,
    }


def report_schema() -> dict:
    """The report's JSON Schema (docs/schema/report.schema.json), as the audit tools' output."""
    from ..report import report_json_schema

    return report_json_schema()


def _wrapping_report(props_fn: Callable[[dict], dict], required: Sequence[str]) -> dict:
    """An object schema holding reports: the report's ``$defs`` hoisted, the report itself as
    ``$defs.AuditReport`` (refs inside the report point at ``#/$defs/...`` and stay valid), the
    compact form as ``$defs.CompactReport``; each report is either."""
    node, defs = _report_or_compact()
    out = _obj(props_fn(node), required)
    out["$defs"] = defs
    return out


#: Tools whose output is a report (or, per audited run, reports): they take ``format``.
REPORT_TOOLS = ("audit_run", "audit_path", "audit_logs", "audit_ci")
_FORMAT_ARGS = {
    "format": {
        "type": "string",
        "enum": ["report", "compact"],
        "default": "report",
        "description": "'report': the full report (the report schema). 'compact': "
        "verdict, cause, confidence, top evidence with file:line and next "
        "actions within budget_tokens (schema mlaudit-compact/1); ask for "
        "the report when 'omitted' says more is there.",
    },
    "budget_tokens": {
        "type": "integer",
        "minimum": 200,
        "maximum": 8000,
        "default": 400,
        "description": "With format 'compact': its size limit in tokens (3 "
        "characters a token of compact JSON).",
    },
}


def _report_or_compact() -> tuple[dict, dict]:
    """(a schema node accepting a full or a compact report, the ``$defs`` it refers to)."""
    from .compact import COMPACT_SCHEMA

    rep = dict(report_schema())
    defs = dict(rep.pop("$defs", {}))
    for k in ("$schema", "$id"):
        rep.pop(k, None)
    defs["AuditReport"] = rep
    defs["CompactReport"] = COMPACT_SCHEMA
    return {"anyOf": [{"$ref": "#/$defs/AuditReport"}, {"$ref": "#/$defs/CompactReport"}]}, defs


_LINE = _obj(
    {
        "file": _STR,
        "line": {"type": "integer"},
        "text": _STR,
        "context": {"type": "array", "items": _STR},
        "kind": _STR,
    }
)


def _schemas() -> dict[str, tuple[dict, dict | str | None]]:
    """name -> (inputSchema, outputSchema); ``"report"`` output means the report schema (or
    its compact form: the report tools take ``format`` and ``budget_tokens``)."""
    out = _base_schemas()
    for name in REPORT_TOOLS:
        inp, outp = out[name]
        out[name] = ({**inp, "properties": {**inp["properties"], **_FORMAT_ARGS}}, outp)
    return {name: (_bounded(inp), outp) for name, (inp, outp) in out.items()}


def _base_schemas() -> dict[str, tuple[dict, dict | str | None]]:
    tracker = {
        "type": "string",
        "enum": list(TRACKERS),
        "description": "The experiment tracker holding the run.",
    }
    source = {
        "type": "string",
        "enum": list(SOURCES),
        "description": "A tracker, or 'path' for a local run file/folder.",
    }
    run_ref = {
        "type": "string",
        "description": "MLflow run id; W&B ENTITY/PROJECT/RUN_ID (or "
        "an offline run folder); ClearML task id (or an "
        "offline session folder); with source 'path': "
        "the run file or folder.",
    }
    uri = {
        "type": "string",
        "description": "MLflow tracking URI (server URL, sqlite:///path, "
        "file store); default MLFLOW_TRACKING_URI.",
    }
    series = _obj(
        {
            "run": _STR,
            "metric": _STR,
            "key": _STR,
            "points_total": {"type": "integer"},
            "points_finite": {"type": "integer"},
            "points_returned": {"type": "integer"},
            "downsampled": {"type": "boolean"},
            "method": _STR,
            "start": {"type": ["integer", "null"]},
            "end": {"type": ["integer", "null"]},
            "steps": {"type": "array", "items": {"type": "integer"}},
            "values": {"type": "array", "items": {"type": "number"}},
            "min": {"type": ["number", "null"]},
            "min_step": {"type": ["integer", "null"]},
            "max": {"type": ["number", "null"]},
            "max_step": {"type": ["integer", "null"]},
            "first": {"type": ["number", "null"]},
            "last": {"type": ["number", "null"]},
            "last_step": {"type": ["integer", "null"]},
            "nonfinite": _obj(
                {
                    "count": {"type": "integer"},
                    "steps": {"type": "array", "items": {"type": "integer"}},
                    "values": {"type": "array", "items": _STR},
                }
            ),
        },
        ["run", "metric", "key", "points_total", "points_returned", "steps", "values"],
    )
    rule_short = _obj(
        {"code": _STR, "name": _STR, "family": _STR, "summary": _STR, "lifecycle": _STR}
    )
    rule_full = _obj(
        {
            "code": _STR,
            "name": _STR,
            "family": _STR,
            "summary": _STR,
            "lifecycle": _STR,
            "doc": _STR,
            "needs": {"type": "array", "items": _STR},
            "params": {
                "type": "array",
                "items": _obj({"name": _STR, "type": _STR, "default": {}, "description": _STR}),
            },
        },
        ["code", "name", "family", "doc"],
    )
    band = _obj(
        {
            "key": _STR,
            "role": {"type": ["string", "null"]},
            "kind": _STR,
            "axis": _STR,
            "verdict": {
                "type": "string",
                "enum": ["worse", "within_noise", "better", "insufficient_seeds"],
            },
            "summary": _STR,
            "baseline_ids": {"type": "array", "items": _STR},
            "n_baselines": {"type": "integer"},
            "method": _STR,
            "k": {"type": "number"},
            "tail_start_step": {"type": "integer"},
            "tail_end_step": {"type": "integer"},
            "run_tail_mean": {"type": "number"},
            "baseline_tail_means": {"type": "array", "items": {"type": "number"}},
            "band_lo": {"type": "number"},
            "band_hi": {"type": "number"},
            "delta": {"type": "number"},
            "rel_delta": {"type": ["number", "null"]},
            "z": {"type": ["number", "null"]},
            "frac_tail_worse": {"type": "number"},
            "frac_tail_better": {"type": "number"},
            "onset_step": {"type": ["integer", "null"]},
            "higher_is_better": {"type": "boolean"},
            "seeds_needed": {"type": ["integer", "null"]},
            "notes": {"type": "array", "items": _STR},
        }
    )
    delta = _obj(
        {
            "source": _STR,
            "key": _STR,
            "run_value": {"type": ["string", "null"]},
            "baseline_values": {"type": "array", "items": {"type": ["string", "null"]}},
            "category": _STR,
            "layer": _STR,
            "consistent": {"type": "boolean"},
            "score": {"type": "number"},
        }
    )
    return {
        "audit_run": (
            _obj(
                {
                    "tracker": tracker,
                    "run_ref": run_ref,
                    "tracking_uri": uri,
                    "baselines": {
                        "type": "array",
                        "items": _STR,
                        "description": "Baseline run ids (MLflow; several seeds give a noise "
                        "band). Default: the tracker's own choice (runs tagged "
                        "mlaudit.baseline, the parent, same-config runs); [] for "
                        "none.",
                    },
                    "write_back": {
                        "type": "boolean",
                        "default": False,
                        "description": "Write the verdict onto the run (tags, mlaudit/ "
                        "artifacts). Off unless asked.",
                    },
                },
                ["tracker", "run_ref"],
            ),
            "report",
        ),
        "audit_path": (
            _obj(
                {
                    "path": {
                        "type": "string",
                        "description": "A run file or folder (trainer_state.json, "
                        "CSV/JSON-lines logs, console log, "
                        "TensorBoard logdir, mlruns store, W&B run "
                        "folder, ClearML offline session), or a "
                        "folder holding several runs.",
                    },
                    "as_format": {
                        "type": "string",
                        "description": "Use this reader instead of sniffing.",
                    },
                    "write_back": {
                        "type": "boolean",
                        "default": False,
                        "description": "TensorBoard only: add the verdict as a text summary "
                        "in mlaudit's own event file. Off unless asked.",
                    },
                },
                ["path"],
            ),
            None,
        ),
        "audit_logs": (
            _obj(
                {
                    "paths": {
                        **_PATHS,
                        "description": "Console log files, read in order as one log.",
                    },
                    "config": {
                        "type": "array",
                        "items": _STR,
                        "description": "Run config files (key = value, JSON, YAML, TOML): their "
                        "values become the run's params.",
                    },
                    "name": {"type": "string", "description": "Display name of the run."},
                },
                ["paths"],
            ),
            "report",
        ),
        "audit_ci": (
            _obj(
                {
                    "repo": {
                        "type": "string",
                        "description": "Repository root (tests, golden files).",
                    },
                    "logs": {
                        **_PATHS,
                        "description": "CI log files; .json/.csv are actual values.",
                    },
                    "golden": {
                        "type": "array",
                        "items": _STR,
                        "description": "Golden-value files; default: the repo's own.",
                    },
                    "claims": {
                        "type": "string",
                        "description": "A PR description / results note whose "
                        "numeric claims are checked.",
                    },
                },
                ["repo", "logs"],
            ),
            "report",
        ),
        "collect_evidence": (
            _obj(
                {
                    "repo": {
                        "type": "string",
                        "description": "Repository root; omit to read logs only.",
                    },
                    "logs": {
                        **_PATHS,
                        "description": "Log files; .json/.csv are actual metric values.",
                    },
                    "golden": {"type": "array", "items": _STR},
                    "window": {"type": "integer", "minimum": 0, "maximum": 50, "default": 3},
                },
                ["logs"],
            ),
            _obj(
                {
                    "schema": _STR,
                    "repo": {"type": ["string", "null"]},
                    "failure_lines": {"type": "array", "items": _LINE},
                    "pass_lines": {"type": "array", "items": _LINE},
                    "metric_lines": {"type": "array", "items": _LINE},
                    "gates": {"type": "array", "items": {"type": "object"}},
                    "recomputed": {"type": "array", "items": {"type": "object"}},
                }
                | {
                    k: {}
                    for k in (
                        "logs",
                        "timeouts",
                        "infra",
                        "exceptions",
                        "tests",
                        "assertions",
                        "measured",
                        "failed_metrics",
                        "failed_metrics_line",
                        "checked_metrics",
                        "checked_metrics_source",
                        "config_candidates",
                        "source_candidates",
                        "golden_files",
                        "goldens",
                        "actuals",
                        "traced",
                        "env_changes",
                        "packages_log",
                        "packages_repo",
                        "notes",
                    )
                },
                ["schema", "failure_lines", "pass_lines", "metric_lines", "gates", "recomputed"],
            ),
        ),
        "compare_runs": (
            _obj(
                {
                    "source": source,
                    "run": {"type": "string", "description": "The run (id or path)."},
                    "baselines": {
                        **_PATHS,
                        "description": "Baseline runs (ids or paths); 3 or more "
                        "seeds give a seed-to-seed noise band.",
                    },
                    "tracking_uri": uri,
                },
                ["source", "run", "baselines"],
            ),
            _obj(
                {
                    "run": _STR,
                    "baselines": {"type": "array", "items": _STR},
                    "comparisons": {"type": "array", "items": band},
                    "deltas": {"type": "array", "items": delta},
                    "notes": {"type": "array", "items": _STR},
                },
                ["run", "baselines", "comparisons", "deltas"],
            ),
        ),
        "explain_rule": (
            _obj(
                {"code": {"type": "string", "description": "Detector code, e.g. OP001."}}, ["code"]
            ),
            rule_full,
        ),
        "list_rules": (
            _obj(
                {
                    "family": {
                        "type": "string",
                        "description": "Only this family (e.g. optimization).",
                    }
                }
            ),
            _obj({"rules": {"type": "array", "items": rule_short}}, ["rules"]),
        ),
        "get_series": (
            _obj(
                {
                    "source": source,
                    "run_ref": run_ref,
                    "tracking_uri": uri,
                    "metric": {
                        "type": "string",
                        "description": "A logged key, or a role (train_loss, "
                        "val_loss, learning_rate, grad_norm, ...).",
                    },
                    "start": {"type": "integer", "description": "First step (inclusive)."},
                    "end": {"type": "integer", "description": "Last step (inclusive)."},
                    "max_points": {
                        "type": "integer",
                        "minimum": 10,
                        "maximum": MAX_POINTS,
                        "default": 500,
                    },
                },
                ["source", "run_ref", "metric"],
            ),
            series,
        ),
        "experiment_triage": (TRIAGE_INPUT, TRIAGE_OUTPUT),
    }


DESCRIPTIONS = {
    "experiment_triage": TRIAGE_DESCRIPTION,
    "audit_run": "Audit a run in MLflow, W&B or ClearML: verdict (outcome, cause, confidence), "
    "findings with evidence, hypotheses, unknowns, next actions. Same as `mlaudit "
    "mlflow|wandb|clearml`. Write-back only with write_back=true.",
    "audit_path": "Audit a local run file or folder, format detected (trainer_state.json, "
    "Lightning/Keras/Ultralytics/timm CSV, JSON-lines, console logs, TensorBoard "
    "logdir, mlruns store, W&B run folder, ClearML offline). Returns one report "
    "per run found. Same as `mlaudit PATH`.",
    "audit_logs": "Audit a run from its console log files (metrics and failure signatures "
    "parsed from text). Same as `mlaudit logs`.",
    "audit_ci": "Audit an ML CI failure from the repository, its CI logs and golden values: "
    "real regression, or gate / drift / setup / runtime problem. Same as `mlaudit ci`.",
    "collect_evidence": "The evidence pass of a failure without a verdict: failure, pass and "
    "metric lines with context, tests, gates in the repo, recomputed gated "
    "metrics, config/source candidates, each with file:line. Same as "
    "`mlaudit evidence`.",
    "compare_runs": "Compare a run with baseline runs: per metric, is the run worse than, "
    "within the noise of, or better than the baselines (noise band over the "
    "tail), and which config/environment keys differ.",
    "explain_rule": "The documentation of one detector code (what it detects, why it matters, "
    "evidence, remedy, thresholds and their source, parameters).",
    "list_rules": "Every detector: code, name, family, one-line summary.",
    "get_series": "One metric's history, downsampled to at most max_points with a "
    "min/max-preserving method (spikes are kept), plus exact min/max/last and "
    "non-finite steps. For looking at a curve yourself.",
}


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    input_schema: dict
    output_schema: dict


def tool_specs() -> list[ToolSpec]:
    """The tools with their input and output JSON Schemas."""
    out = []
    for name, (inp, outp) in _schemas().items():
        if outp == "report":  # the full report or its compact form (format argument)
            node, defs = _report_or_compact()
            outp = {"type": "object", **node, "$defs": defs}
        elif outp is None:  # audit_path
            outp = _wrapping_report(
                lambda rep: {
                    "path": _STR,
                    "runs": {
                        "type": "array",
                        "items": _obj(
                            {
                                "path": _STR,
                                "reader": _STR,
                                "reason": _STR,
                                "report": rep,
                                "written_back": {"type": "array", "items": _STR},
                            },
                            ["path", "reader", "report"],
                        ),
                    },
                    "failed": {"type": "array", "items": _obj({"path": _STR, "error": _STR})},
                    "skipped": {"type": "array", "items": _obj({"path": _STR, "why": _STR})},
                    "not_audited": {"type": "array", "items": _STR},
                },
                ["path", "runs"],
            )
        assert isinstance(outp, dict)  # "report" and None are replaced above
        out.append(ToolSpec(name, DESCRIPTIONS[name], inp, outp))
    return out


TOOL_NAMES = tuple(_schemas())


# --- the tools --------------------------------------------------------------------------------


@dataclass
class Result:
    """What a tool returns: the structured content, and lines for people (write-back, notes)."""

    data: dict
    lines: list[str]


class Toolbox:
    """The tools bound to the server's roots and settings file."""

    def __init__(
        self,
        roots: Roots,
        config: str | None = None,
        tracking_uris: Sequence[str] = (),
        call_timeout_s: float = 600.0,
    ) -> None:
        self.roots = roots
        self.config = Path(config).expanduser() if config else None  # the operator's, not confined
        #: the MLflow tracking URIs fixed at start (``--tracking-uri``; else MLFLOW_TRACKING_URI):
        #: the only remote stores a call may name; the first is the default
        self.tracking_uris = tuple(u for u in tracking_uris if u)
        self._lock = threading.Lock()  # one audit at a time: trackers' SDK clients are shared
        #: the longest a call may run, and wait for the call before it (``--call-timeout``)
        self.call_timeout_s = call_timeout_s

    # -- helpers ----------------------------------------------------------------------------
    def _settings(self):
        from ..settings import SettingsError, load_settings

        try:
            return load_settings(explicit=self.config)
        except SettingsError as exc:
            raise ToolFailure(f"mlaudit: error: {exc}") from None

    def _uri(self, uri: str | None) -> str | None:
        """The tracking URI a call may use: one fixed at start, or a local store inside the roots.

        ``None`` is the first URI given at start (``--tracking-uri``, else the server's
        MLFLOW_TRACKING_URI). A URI equal to one given at start (compared without its
        credentials, which the caller does not know) is that one. Anything else must be a local
        store: a SQLite database (any SQLAlchemy driver, ``sqlite+pysqlite:///...``, parsed
        with SQLAlchemy's own URL parser), a ``file:`` store or a plain path, each confined to
        the roots and rewritten absolute. A server URL, a database server or Databricks that
        was not given at start is refused: MLflow's client would send the server's credentials
        (MLFLOW_TRACKING_TOKEN, ..._USERNAME/_PASSWORD) to whatever host a call named.

        Raises:
            ToolFailure: a URI outside the start-time list and outside the roots.
        """
        from ..redact import strip_uri_credentials

        if not uri:
            return self.tracking_uris[0] if self.tracking_uris else uri
        bare = strip_uri_credentials(uri).rstrip("/")
        for allowed in self.tracking_uris:
            if uri == allowed or bare == strip_uri_credentials(allowed).rstrip("/"):
                return allowed
        scheme = uri.split("://", 1)[0].lower() if "://" in uri else ""
        if scheme.split("+", 1)[0] == "sqlite":
            return self._sqlite_uri(uri)
        if scheme == "file" or (not scheme and uri.lower().startswith("file:")):
            from urllib.parse import unquote, urlsplit

            u = urlsplit(uri)
            if u.netloc not in ("", "localhost"):
                raise ToolFailure(
                    f"mlaudit: error: tracking_uri {bare}: a file URI on another "
                    "host is not a local store"
                )
            return self.roots.confine_tree(unquote(u.path), "tracking_uri").as_uri()
        if not scheme and ":" not in uri.split("/", 1)[0]:  # a plain path: an mlruns file store
            return str(self.roots.confine_tree(uri, "tracking_uri"))
        given = ", ".join(strip_uri_credentials(u) for u in self.tracking_uris) or "none"
        raise ToolFailure(
            f"mlaudit: error: tracking_uri {bare}: not a tracking URI this server "
            f"was started with (--tracking-uri: {given}) nor a local store inside "
            "the roots; restart the server with --tracking-uri URI to allow it"
        )

    def _sqlite_uri(self, uri: str) -> str:
        """A ``sqlite[+driver]:///PATH`` URI with PATH confined to the roots, as
        ``sqlite:///ABSOLUTE``. Parsed by SQLAlchemy (:func:`sqlalchemy.engine.make_url`, what
        MLflow's SQL store itself uses), so a driver suffix, ``////`` or ``..`` cannot move the
        database outside the roots; query options (``?uri=true`` turns the path into a second
        URI) and in-memory databases are refused."""
        try:
            from sqlalchemy.engine import make_url

            url = make_url(uri)
        except ImportError:
            raise ToolFailure(
                "mlaudit: error: tracking_uri: a SQLite store needs MLflow's "
                "SQLAlchemy (pip install 'mlaudit[mlflow]')"
            ) from None
        except Exception as exc:  # noqa: BLE001 - SQLAlchemy's ArgumentError and ValueError
            raise ToolFailure(
                f"mlaudit: error: tracking_uri {uri}: not a database URI ({type(exc).__name__})"
            ) from None
        if (
            url.get_backend_name() != "sqlite"
            or not url.database
            or url.query
            or url.database == ":memory:"
            or url.database.startswith("file:")
        ):
            raise ToolFailure(
                f"mlaudit: error: tracking_uri {uri}: give a SQLite database file "
                "as sqlite:///PATH (no query options, no in-memory database)"
            )
        return f"sqlite:///{self.roots.confine(url.database, 'tracking_uri')}"

    def _local_ref(self, ref: str) -> Path | None:
        """``ref`` as a confined local path when it names one (offline runs), else ``None``.

        A ref is local when it starts with ``/``, ``./``, ``../`` or ``~``, or exists under the
        first root; W&B's ``ENTITY/PROJECT/RUN_ID`` and ClearML task ids are not paths.
        """
        if ref.startswith(("/", "./", "../", "~")) or (self.roots.paths[0] / ref).exists():
            return self.roots.confine_tree(ref, "run_ref")
        return None

    def _load(self, source: str, ref: str, uri: str | None):
        """(plugin or None, RunData) for ``ref`` from a tracker or a local path."""
        from ..plugins import get_plugin

        if source == "path":
            p = self.roots.confine_tree(ref, "run_ref")
            from ..formats import load_path

            loaded = load_path(p)
            if len(loaded.runs) != 1:
                names = ", ".join(str(r) for r, _ in loaded.runs[:8])
                raise ToolFailure(
                    f"mlaudit: error: {ref}: holds {len(loaded.runs)} runs ({names}); "
                    "give one of them"
                )
            return None, loaded.runs[0][1]
        # Any: ClearML's offline plugin loads its session with ref None, outside the protocol
        plugin: Any
        if source == "mlflow":
            plugin = get_plugin("mlflow", tracking_uri=self._uri(uri))
            return plugin, plugin.load(ref)
        if source == "wandb":
            plugin = get_plugin("wandb")
            local = self._local_ref(ref)
            if local is not None:  # the plugin finds the run file (run dir, wandb/ latest-run)
                return None, plugin.load(str(local), offline=True)
            return plugin, plugin.load(ref)
        if source == "clearml":
            local = self._local_ref(ref)
            if local is not None:
                plugin = get_plugin("clearml", offline=str(local))
                return None, plugin.load(None)
            plugin = get_plugin("clearml")
            return plugin, plugin.load(ref)
        raise ToolFailure(f"mlaudit: error: unknown source {source!r} (use {', '.join(SOURCES)})")

    # -- tools ------------------------------------------------------------------------------
    def audit_run(
        self,
        tracker: str,
        run_ref: str,
        tracking_uri: str | None = None,
        baselines: list[str] | None = None,
        write_back: bool = False,
        progress: Progress = _noop,
    ) -> Result:
        from ..audit import audit
        from ..plugins import get_plugin

        settings = self._settings()
        lines: list[str] = []
        progress(0, 3, f"loading {tracker} run {run_ref}")
        # Any: find_baselines / load_with_baselines / load(None) are optional plugin capabilities,
        # outside the TrackerPlugin protocol
        plugin: Any
        if tracker == "mlflow":
            plugin = get_plugin("mlflow", tracking_uri=self._uri(tracking_uri))
            run = plugin.load(run_ref)
            progress(1, 3, f"auditing {len(run.metrics):,} points")
            if baselines == []:
                report = audit(run, settings)
            else:
                from ..audit import audit_with_baselines
                from ..baseline.selection import BaselinePolicy, select_baselines

                policy = BaselinePolicy(explicit=list(baselines or []))
                sel = select_baselines(run, plugin.find_baselines(run, policy), policy)
                run.warnings.extend(sel.warnings)
                report = (
                    audit_with_baselines(
                        run, [plugin.load(r.identity.id) for r in sel.runs], settings
                    )
                    if sel.runs
                    else audit(run, settings)
                )
            wb = (lambda: plugin.write_back(run, report, dry_run=False)) if write_back else None
        elif tracker == "wandb":
            if baselines:
                raise ToolFailure(
                    "mlaudit: error: baselines: explicit baselines are MLflow only "
                    "(use compare_runs for W&B runs)"
                )
            plugin = get_plugin("wandb")
            local = self._local_ref(run_ref)
            if write_back and local is not None:
                raise ToolFailure(
                    "mlaudit: error: write_back: an offline W&B run folder cannot "
                    "be written back (sync it, then audit ENTITY/PROJECT/RUN_ID)"
                )
            if local is not None:  # the plugin finds the run file (run dir, wandb/ latest-run)
                run = plugin.load(str(local), offline=True)
            else:
                run = plugin.load(run_ref)
            progress(1, 3, f"auditing {len(run.metrics):,} points")
            report = audit(run, settings)
            wb = (lambda: plugin.write_back(run, report, dry_run=False)) if write_back else None
        elif tracker == "clearml":
            if baselines:
                raise ToolFailure(
                    "mlaudit: error: baselines: explicit baselines are MLflow only "
                    "(use compare_runs for ClearML tasks)"
                )
            local = self._local_ref(run_ref)
            if local is not None:
                if write_back:
                    raise ToolFailure(
                        "mlaudit: error: write_back: an offline ClearML session "
                        "cannot be written back"
                    )
                plugin = get_plugin("clearml", offline=str(local))
                run = plugin.load(None)
            else:
                plugin = get_plugin("clearml")
                run = (
                    plugin.load(run_ref) if baselines == [] else plugin.load_with_baselines(run_ref)
                )
            progress(1, 3, f"auditing {len(run.metrics):,} points")
            report = audit(run, settings)
            wb = (lambda: plugin.write_back(run, report, dry_run=False)) if write_back else None
        else:
            raise ToolFailure(
                f"mlaudit: error: tracker {tracker!r}: use one of "
                f"{', '.join(TRACKERS)} (local files: audit_path)"
            )
        if wb is not None:
            progress(2, 3, "writing the verdict back")
            res = wb()
            lines += list(getattr(res, "lines", lambda: [])())
        else:
            lines.append("nothing written back (write_back is false)")
        progress(3, 3, "done")
        return Result(_report_dict(report), lines)

    def audit_path(
        self,
        path: str,
        as_format: str | None = None,
        write_back: bool = False,
        progress: Progress = _noop,
    ) -> Result:
        from ..audit import audit
        from ..formats import plan, readers

        p = self.roots.confine_tree(path, "path")
        settings = self._settings()
        cands, skipped = plan(p, as_format)
        table = readers()
        todo, rest = cands[:MAX_RUNS], cands[MAX_RUNS:]
        runs: list = []
        failed: list = []
        lines: list[str] = []
        for i, c in enumerate(todo):
            progress(i, len(todo), f"auditing {c.path} ({c.reader})")
            try:
                run = table[c.reader].load(c.path)
                run.notes.insert(0, f"read by the {c.reader} reader: {c.reason}")
                report = audit(run, settings)
            except ToolFailure:
                raise
            except Exception as exc:  # noqa: BLE001 - one run's failure is its entry
                from ..errors import MlauditError

                if len(todo) == 1:
                    raise
                msg = (
                    str(exc)
                    if isinstance(exc, MlauditError)
                    else (f"internal error {type(exc).__name__}: {exc}")
                )
                failed.append({"path": str(c.path), "error": msg})
                continue
            entry = {
                "path": str(c.path),
                "reader": c.reader,
                "reason": c.reason,
                "report": _report_dict(report),
            }
            if write_back:
                if c.reader != "tensorboard":
                    entry["written_back"] = [
                        f"not written back: the {c.reader} reader's folders are never written into"
                    ]
                else:
                    from ..plugins import get_plugin

                    res = get_plugin("tensorboard").write_back(run, report, dry_run=False)
                    entry["written_back"] = list(getattr(res, "lines", lambda: [])())
                lines += entry["written_back"]
            runs.append(entry)
        progress(len(todo), len(todo), "done")
        if not write_back:
            lines.append("nothing written back (write_back is false)")
        data = {
            "path": str(p),
            "runs": runs,
            "failed": failed,
            "skipped": [{"path": str(w), "why": y} for w, y in skipped],
            "not_audited": [str(c.path) for c in rest],
        }
        if rest:
            lines.append(
                f"{len(rest)} more runs not audited (at most {MAX_RUNS} per call): "
                "call audit_path on one of not_audited"
            )
        return Result(data, lines)

    def audit_logs(
        self,
        paths: list[str],
        config: list[str] | None = None,
        name: str | None = None,
        progress: Progress = _noop,
    ) -> Result:
        from ..audit import audit
        from ..evidence import collect

        files = [self.roots.confine(p, "paths") for p in paths]
        cfgs = [self.roots.confine(p, "config") for p in config or []]
        settings = self._settings()
        progress(0, 2, "reading the logs")
        # as `mlaudit logs`: the evidence pass reads the files once and hands over the run
        run = collect(None, files, config=cfgs, name=name, value_files=False).run
        progress(1, 2, f"auditing {len(run.metrics):,} points")
        report = audit(run, settings)
        progress(2, 2, "done")
        return Result(_report_dict(report), [])

    def audit_ci(
        self,
        repo: str,
        logs: list[str],
        golden: list[str] | None = None,
        claims: str | None = None,
        progress: Progress = _noop,
    ) -> Result:
        from ..audit import audit_ci

        r = self.roots.confine(repo, "repo")
        lg = [self.roots.confine(p, "logs") for p in logs]
        gd = [self.roots.confine(p, "golden") for p in golden or []]
        cl = self.roots.confine(claims, "claims") if claims else None
        settings = self._settings()
        progress(0, 1, "collecting evidence and recomputing the gates")
        report = audit_ci(r, lg, gd, claims=cl, settings=settings)
        progress(1, 1, "done")
        return Result(_report_dict(report), [])

    def collect_evidence(
        self,
        logs: list[str],
        repo: str | None = None,
        golden: list[str] | None = None,
        window: int = 3,
        progress: Progress = _noop,
    ) -> Result:
        from ..evidence import collect
        from ..redact import redact_obj

        r = self.roots.confine(repo, "repo") if repo else None
        lg = [self.roots.confine(p, "logs") for p in logs]
        gd = [self.roots.confine(p, "golden") for p in golden or []]
        ev = collect(r, lg, gd, window_lines=window)
        c = ev.counts()
        return Result(
            redact_obj(ev.to_dict()),
            [", ".join(f"{v} {k.replace('_', ' ')}" for k, v in c.items())],
        )

    def compare_runs(
        self,
        source: str,
        run: str,
        baselines: list[str],
        tracking_uri: str | None = None,
        progress: Progress = _noop,
    ) -> Result:
        from ..baseline import attach_baselines, compare_metrics, find_deltas

        total = 1 + len(baselines)
        progress(0, total + 1, f"loading {run}")
        _, r = self._load(source, run, tracking_uri)
        bls = []
        for i, b in enumerate(baselines):
            progress(i + 1, total + 1, f"loading baseline {b}")
            bls.append(self._load(source, b, tracking_uri)[1])
        attach_baselines(r, bls)
        comps = compare_metrics(r)
        deltas = sorted(find_deltas(r, bls), key=lambda d: -d.score)[:20]
        progress(total + 1, total + 1, "done")
        out = []
        for c in comps:
            band = c.band
            out.append(
                {
                    "key": c.key,
                    "role": c.role,
                    "kind": c.kind,
                    "axis": c.axis,
                    "verdict": band.verdict,
                    "summary": c.summary(),
                    "baseline_ids": list(c.baseline_ids),
                    "n_baselines": band.n_baselines,
                    "method": band.method,
                    "k": band.k,
                    "tail_start_step": int(band.tail_start_step),
                    "tail_end_step": int(band.tail_end_step),
                    "run_tail_mean": band.run_tail_mean,
                    "baseline_tail_means": [float(x) for x in band.baseline_tail_means],
                    "band_lo": band.band_lo,
                    "band_hi": band.band_hi,
                    "delta": band.delta,
                    "rel_delta": band.rel_delta,
                    "z": band.z,
                    "frac_tail_worse": band.frac_tail_worse,
                    "frac_tail_better": band.frac_tail_better,
                    "onset_step": band.onset_step,
                    "higher_is_better": bool(band.higher_is_better),
                    "seeds_needed": band.seeds_needed,
                    "notes": list(band.notes),
                }
            )
        notes = list(r.warnings)
        if not comps:
            notes.append(
                "no metric is logged by both the run and a baseline over two or more aligned points"
            )
        if len(bls) < 3:
            notes.append(
                f"{len(bls)} baseline(s): at least 3 seeds are needed for a seed-to-seed "
                "noise estimate"
            )
        data = {
            "run": r.identity.id,
            "baselines": [b.identity.id for b in bls],
            "comparisons": out,
            "deltas": [
                {
                    "source": d.source,
                    "key": d.key,
                    "run_value": d.run_value,
                    "baseline_values": list(d.baseline_values),
                    "category": d.category,
                    "layer": d.layer,
                    "consistent": bool(d.consistent),
                    "score": float(d.score),
                }
                for d in deltas
            ],
            "notes": notes,
        }
        from ..redact import redact_obj, redact_text

        # run ids, param values and notes come from the runs: credentials scrubbed (the deltas
        # already hold no value of a credential-named key; this catches shaped ones, e.g. a
        # database URI with its password in an ordinary param)
        return Result(redact_obj(_finite(data)), [redact_text(c.summary()) for c in comps])

    def explain_rule(self, code: str, progress: Progress = _noop) -> Result:
        from ..detectors import registry

        cls = registry().get(code.strip().upper())
        if cls is None:
            raise ToolFailure(
                f"mlaudit: error: unknown detector code {code!r}; `mlaudit rules` "
                "(tool list_rules) lists them"
            )
        return Result(
            {
                "code": cls.code,
                "name": cls.name,
                "family": cls.family,
                "summary": cls.summary(),
                "lifecycle": str(cls.lifecycle),
                "doc": cls.doc(),
                "needs": [r.value for r in cls.needs or ()],
                "params": [
                    {"name": n, "type": t, "default": _jsonable(d), "description": desc}
                    for n, t, d, desc in cls.param_table()
                ],
            },
            [],
        )

    def list_rules(self, family: str | None = None, progress: Progress = _noop) -> Result:
        from ..detectors import registry

        rules = [
            {
                "code": c.code,
                "name": c.name,
                "family": c.family,
                "summary": c.summary(),
                "lifecycle": str(c.lifecycle),
            }
            for c in registry().values()
            if family is None or c.family == family
        ]
        if family is not None and not rules:
            fams = sorted({c.family for c in registry().values()})
            raise ToolFailure(
                f"mlaudit: error: family {family!r}: no detectors (families: {', '.join(fams)})"
            )
        return Result({"rules": rules}, [])

    def experiment_triage(
        self,
        experiment: str,
        tracking_uri: str | None = None,
        max_runs: int = 2000,
        max_audits: int = 100,
        write_back: bool = False,
        progress: Progress = _noop,
    ) -> Result:
        from .triage_tool import experiment_triage

        data, lines = experiment_triage(
            self._uri(tracking_uri),
            self._settings(),
            experiment,
            max_runs=max_runs,
            max_audits=max_audits,
            write_back=write_back,
            progress=progress,
        )
        return Result(data, lines)

    def get_series(
        self,
        source: str,
        run_ref: str,
        metric: str,
        tracking_uri: str | None = None,
        start: int | None = None,
        end: int | None = None,
        max_points: int = 500,
        progress: Progress = _noop,
    ) -> Result:
        import numpy as np

        from ..render.plots import downsample
        from ..roles import Role

        progress(0, 2, f"loading {run_ref}")
        _, run = self._load(source, run_ref, tracking_uri)
        # a role name (``train_loss``) answers with the key the audit reads for that role, the same
        # table for every path: on a Hugging Face run that is the per-step ``loss`` curve, not the
        # one-point end-of-training summary logged under the literal key ``train_loss``
        role = next((r for r in Role if r.value == metric), None)
        key = run.key_for(role) if role is not None else None
        if key is None:
            key = metric if metric in run.metrics else None
        if key is None:
            keys = run.metrics.keys
            shown = ", ".join(keys[:40]) + (f" ... ({len(keys)} in all)" if len(keys) > 40 else "")
            raise ToolFailure(
                f"mlaudit: error: metric {metric!r}: not logged by {run_ref} "
                f"(logged: {shown or 'nothing'})"
            )
        s = run.metrics.series(key).by_step()
        steps, vals = s.steps, s.values
        if start is not None:
            m = steps >= start
            steps, vals = steps[m], vals[m]
        if end is not None:
            m = steps <= end
            steps, vals = steps[m], vals[m]
        fin = np.isfinite(vals)
        xs, ys = steps[fin].astype(np.float64), vals[fin]
        n_out = max(10, min(int(max_points), MAX_POINTS))
        dx, dy = downsample(xs, ys, n_out) if xs.size else (xs, ys)
        try:
            import tsdownsample  # noqa: F401

            method = "MinMaxLTTB (tsdownsample), as the report's plots"
        except ImportError:
            method = "min/max per bucket, as the report's plots without tsdownsample"
        bad = ~fin
        data = {
            "run": run.identity.id,
            "metric": metric,
            "key": key,
            "points_total": int(steps.size),
            "points_finite": int(fin.sum()),
            "points_returned": int(dx.size),
            "downsampled": bool(dx.size < xs.size),
            "method": method if dx.size < xs.size else "none (all points)",
            "start": start,
            "end": end,
            "steps": [int(x) for x in dx],
            "values": [float(y) for y in dy],
            "min": float(ys.min()) if ys.size else None,
            "min_step": int(xs[int(np.argmin(ys))]) if ys.size else None,
            "max": float(ys.max()) if ys.size else None,
            "max_step": int(xs[int(np.argmax(ys))]) if ys.size else None,
            "first": float(ys[0]) if ys.size else None,
            "last": float(ys[-1]) if ys.size else None,
            "last_step": int(xs[-1]) if ys.size else None,
            "nonfinite": {
                "count": int(bad.sum()),
                "steps": [int(x) for x in steps[bad][:100]],
                "values": [str(v) for v in vals[bad][:100]],
            },
        }
        progress(2, 2, "done")
        return Result(
            data,
            [
                f"{key}: {data['points_returned']} of {data['points_finite']} finite "
                f"points ({data['method']})"
            ],
        )

    # -- dispatch ---------------------------------------------------------------------------
    def call(self, name: str, arguments: dict[str, Any], progress: Progress = _noop) -> Result:
        """Validate ``arguments`` against the tool's input schema and run it.

        Raises:
            ToolFailure: unknown tool, invalid arguments, or the tool's own one-line error
                (an :class:`~mlaudit_core.errors.MlauditError` becomes ``mlaudit: error: ...``,
                anything else ``mlaudit: internal error: <Type>: ...``).
        """
        import jsonschema

        from ..errors import MlauditError
        from ..redact import redact_text

        schemas = _schemas()
        if name not in schemas:
            raise ToolFailure(
                f"mlaudit: error: unknown tool {name!r} (tools: {', '.join(schemas)})"
            )
        try:
            jsonschema.validate(arguments, schemas[name][0])
        except jsonschema.ValidationError as exc:
            where = "/".join(str(p) for p in exc.absolute_path) or "arguments"
            raise ToolFailure(f"mlaudit: error: {name}: {where}: {exc.message}") from None
        arguments = dict(arguments)
        form = arguments.pop("format", "report") if name in REPORT_TOOLS else "report"
        budget = arguments.pop("budget_tokens", None) if name in REPORT_TOOLS else None
        # one call at a time (the trackers' SDK clients are shared); a call that waits longer
        # than the call time limit for the one before it is refused, never queued forever
        wait_s = 0.9 * self.call_timeout_s  # inside the call's own limit (server.call_tool)
        if not self._lock.acquire(timeout=wait_s):
            raise ToolFailure(
                f"mlaudit: error: {name}: the server is still busy with an earlier "
                f"call after {wait_s:.0f} s; try again later"
            )
        try:
            try:
                res = getattr(self, name)(**arguments, progress=progress)
                return _compacted(res, budget) if form == "compact" else res
            except ToolFailure:
                raise
            except MlauditError as exc:
                raise ToolFailure(
                    redact_text(f"mlaudit: error: {_no_remote_body(str(exc))}")
                ) from None
            except Exception as exc:  # a bug: one line, like the CLI's exit 3
                if os.environ.get("MLAUDIT_DEBUG"):
                    import traceback

                    traceback.print_exc()
                raise ToolFailure(
                    redact_text(
                        f"mlaudit: internal error: {type(exc).__name__}: {_no_remote_body(str(exc))}"
                    )
                ) from None
        finally:
            self._lock.release()


def _compacted(res: Result, budget: int | None) -> Result:
    """A report tool's result with each report in its compact form (:mod:`.compact`)."""
    from ..report import AuditReport
    from .compact import DEFAULT_TOKENS, compact_report

    def one(d: dict) -> dict:
        return compact_report(AuditReport.model_validate(d), budget or DEFAULT_TOKENS)

    data = res.data
    if "runs" in data and "verdict" not in data:  # audit_path: one entry per run
        data = {**data, "runs": [{**r, "report": one(r["report"])} for r in data["runs"]]}
    else:
        data = one(data)
    return Result(data, res.lines)


#: where a tracker client's error message starts quoting the remote server's answer: MLflow's
#: ``... failed with error code 404 != 200. Response body: '...'``, requests' ``for url: ...``
#: bodies, W&B's GraphQL ``response: ...``
_REMOTE_BODY = re.compile(
    r"(?i)[.,:;]?\s*(?:response(?: body| text| content)?)\s*[:=]"
    r"|<(?:!doctype|html|head|body|\?xml)"
)
#: the longest error line a tool returns (a message is one line the client shows)
MAX_ERROR_CHARS = 300


def _no_remote_body(text: str) -> str:
    """The first line of an error message without the remote server's answer quoted in it.

    A tracker client's exception quotes the body of the HTTP answer it got; a tool must not
    hand that on (an MCP caller would read any host's answer through the server, a read-SSRF),
    so the message is cut where the body starts (:data:`_REMOTE_BODY`), and to
    :data:`MAX_ERROR_CHARS` characters.
    """
    line = _one_line(text)
    m = _REMOTE_BODY.search(line)
    if m:
        line = line[: m.start()].rstrip(" .,:;") + " (the server's answer is not shown)"
    if len(line) > MAX_ERROR_CHARS:
        line = line[: MAX_ERROR_CHARS - 3] + "..."
    return line


def _one_line(text: str) -> str:
    lines = text.strip().splitlines()
    return lines[0] if lines else ""


def _report_dict(report) -> dict:
    import json

    from ..render import render_json

    return json.loads(render_json(report))


def _jsonable(x):
    if isinstance(x, (str, int, float, bool)) or x is None:
        return x
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    return str(x)


def _finite(x):
    import math

    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: _finite(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_finite(v) for v in x]
    return x
