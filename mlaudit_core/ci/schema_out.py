"""Shape a CI audit report to a user-supplied JSON Schema (``mlaudit ci --schema FILE``).

The report's content is put into an *answer bag* of canonical fields
(classification, outcome, is_model_regression, summary, recommendation,
confidence, failing / passing checks, evidence, calculations, gates,
hypotheses, unknowns, claims, environment changes). The schema is walked and
each property is filled from the bag by its name (a synonym table maps e.g.
``root_cause_category``, ``failure_class`` and ``classification`` to the
classification), coerced to the declared type; enum values are chosen by
word overlap with the answer (``gate_policy`` for ``metric_policy``).
Required properties with no answer get the schema's ``default``, else an
empty value of their type ("unknown" for strings). The result is validated
with ``jsonschema``; if it still does not validate, :class:`InputError` names
the first violation, and nothing is written.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..detectors import detector_for
from ..errors import InputError
from ..report import AuditReport

_SYN: dict[str, tuple[str, ...]] = {
    "classification": (
        "classification",
        "cause",
        "category",
        "failure_class",
        "failure_category",
        "class",
        "root_cause",
        "root_cause_class",
        "root_cause_category",
        "failure_type",
        "type",
        "diagnosis_class",
        "label",
        "failure_mode",
        "issue_type",
        "kind",
    ),
    "outcome": ("outcome", "run_outcome", "status", "result", "run_status", "state"),
    "is_model_regression": (
        "is_model_regression",
        "model_regression",
        "is_regression",
        "true_regression",
        "regression",
        "is_true_regression",
        "real_regression",
        "is_ml_regression",
    ),
    "summary": (
        "summary",
        "diagnosis",
        "explanation",
        "rationale",
        "conclusion",
        "reasoning",
        "description",
        "decision_rationale",
        "analysis",
        "root_cause_summary",
        "verdict_summary",
        "finding",
    ),
    "decision": ("decision", "verdict", "go_no_go", "final_decision"),
    "recommendation": (
        "recommendation",
        "recommended_action",
        "action",
        "remediation",
        "fix",
        "next_step",
        "minimal_action",
        "recommendations",
        "next_actions",
        "actions",
        "suggested_fix",
    ),
    "confidence": ("confidence", "confidence_score", "certainty", "confidence_level"),
    "failing": (
        "failing_metrics",
        "failed_metrics",
        "failing_checks",
        "failed_checks",
        "failures",
        "failed_tests",
        "failing_tests",
        "failed_gates",
        "failing_gates",
    ),
    "passing": (
        "passed_checks",
        "passing_checks",
        "checks_passed",
        "passed_tests",
        "passing_metrics",
        "passed_metrics",
        "passing_gates",
    ),
    "evidence": (
        "evidence",
        "evidences",
        "citations",
        "supporting_evidence",
        "log_evidence",
        "references",
        "sources",
        "key_evidence",
    ),
    "calculations": (
        "calculations",
        "computations",
        "recomputed",
        "recomputation",
        "metric_comparisons",
        "metrics",
        "recomputed_metrics",
        "numbers",
        "figures",
        "derived_values",
        "comparisons",
    ),
    "gates": (
        "gates",
        "gate_definitions",
        "how_gated",
        "checks",
        "thresholds",
        "tolerances",
        "code_paths",
        "comparison_logic",
    ),
    "hypotheses": ("hypotheses", "hypothesis_ledger", "alternatives", "rejected_hypotheses"),
    "unknowns": ("unknowns", "limitations", "open_questions", "caveats", "missing"),
    "claims": ("claims", "claim_checks", "claim_verification"),
    "environment": ("environment_changes", "environment", "env_changes", "version_changes"),
    "validation": ("validation_checks", "validation", "checks_performed"),
    "run_id": ("run_id", "id", "job", "job_id", "name", "title"),
}
_CAUSE_WORDS = {
    "model_convergence": {
        "model",
        "convergence",
        "regression",
        "training",
        "ml",
        "true",
        "real",
        "converge",
    },
    "correctness_bug": {"correctness", "bug", "code", "system", "defect"},
    "data_config": {"data", "config", "configuration", "dataset", "input"},
    "infra_runtime": {
        "infra",
        "infrastructure",
        "runtime",
        "performance",
        "perf",
        "hardware",
        "resource",
        "system",
    },
    "metric_policy": {
        "metric",
        "policy",
        "gate",
        "gating",
        "evaluation",
        "eval",
        "threshold",
        "tolerance",
        "golden",
        "flaky",
        "test",
        "setup",
        "drift",
    },
    "unsupported_claim": {"claim", "unsupported", "unverified", "report"},
    "healthy": {"healthy", "pass", "passed", "none", "ok", "no", "success"},
    "inconclusive": {"inconclusive", "unknown", "undetermined", "other"},
}
_FIELD = {
    "source": ("source", "file", "path", "filename", "location", "where"),
    "line": ("line", "line_number", "lineno", "line_no"),
    "text": ("text", "snippet", "quote", "content", "expression", "excerpt", "message", "detail"),
    "metric": ("metric", "name", "metric_name", "check"),
}


def _norm(s: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", s.lower()).strip("_")


def _tokens(s: str) -> set[str]:
    return {t for t in re.split(r"[^a-z0-9]+", s.lower()) if t}


def answer_bag(report: AuditReport) -> dict[str, Any]:
    """The canonical answers of a CI report (see the module docstring)."""
    v = report.verdict
    ev = []
    for f in report.findings:
        for e in f.evidence:
            if e.kind == "log":
                ev.append({"source": e.source, "line": e.line, "text": e.text, "finding": f.code})
            elif e.kind == "code":
                ev.append({"source": e.path, "line": e.line, "text": e.text, "finding": f.code})
    answers: dict[str, list[dict]] = {}
    for f in report.findings:
        for section, rows in detector_for(f.code).ci_answers(f).items():
            answers.setdefault(section, []).extend(rows)
    return {
        "classification": v.cause.value,
        "outcome": v.outcome.value,
        "is_model_regression": v.cause.value == "model_convergence",
        "summary": v.summary,
        "decision": f"{v.outcome.value}/{v.cause.value}",
        "recommendation": [a.action for a in report.next_actions],
        "confidence": v.confidence,
        "failing": answers.get("failing", []),
        "passing": answers.get("passing", []),
        "evidence": ev,
        "calculations": answers.get("calculations", []),
        "gates": answers.get("gates", []),
        "hypotheses": [
            {
                "statement": h.statement,
                "status": h.status,
                "text": h.statement,
                "discriminating_test": h.discriminating_test,
            }
            for h in report.hypotheses
        ],
        "unknowns": list(report.unknowns),
        "claims": answers.get("claims", []),
        "environment": answers.get("environment", []),
        "validation": [f"{d.code} {d.name}: {d.status}" for d in report.detectors],
        "run_id": report.run.id,
    }


def _canon(prop: str) -> str | None:
    n = _norm(prop)
    for k, syns in _SYN.items():
        if n in syns:
            return k
    for k, syns in _SYN.items():
        if any(s in n for s in syns if len(s) > 5):
            return k
    return None


def _enum_pick(options: list, value: Any, canon: str | None) -> Any:
    if value in options:
        return value
    if isinstance(value, bool):
        return next((o for o in options if isinstance(o, bool) and o == value), options[0])
    words = _tokens(str(value))
    if canon == "classification":
        words |= _CAUSE_WORDS.get(str(value), set())
    best, score = options[0], -1
    for o in options:
        sc = len(_tokens(str(o)) & words)
        if sc > score:
            best, score = o, sc
    if canon == "classification" and score == 0:
        # never put a class the audit did not find (the first option) into the answer
        raise InputError(
            f"--schema: the verdict is {value!r} and the schema's classification enum has no "
            f"value for it ({', '.join(map(str, options))}); nothing written"
        )
    return best


#: The value of a required property with no answer, by type (strings say "unknown").
_EMPTY: dict[str, Any] = {
    "string": "unknown",
    "number": 0.0,
    "integer": 0,
    "boolean": False,
    "null": None,
}


class _Filler:
    def __init__(self, root: dict, bag: dict) -> None:
        self.root, self.bag = root, bag

    def resolve(self, s: dict) -> dict:
        seen = 0
        while isinstance(s, dict) and "$ref" in s and seen < 20:
            ref = s["$ref"]
            if not ref.startswith("#/"):
                raise InputError(f"--schema: only local $ref are supported, got {ref!r}")
            node: Any = self.root
            for part in ref[2:].split("/"):
                node = node[part.replace("~1", "/").replace("~0", "~")]
            s = node
            seen += 1
        if isinstance(s, dict) and ("allOf" in s):
            merged: dict = {k: v for k, v in s.items() if k != "allOf"}
            for sub in s["allOf"]:
                sub = self.resolve(sub)
                merged.setdefault("properties", {}).update(sub.get("properties", {}))
                merged["required"] = list({*merged.get("required", []), *sub.get("required", [])})
                for k, v in sub.items():
                    merged.setdefault(k, v)
            s = merged
        if isinstance(s, dict) and ("anyOf" in s or "oneOf" in s):
            opts = [self.resolve(o) for o in s.get("anyOf", s.get("oneOf", []))]
            non_null = [o for o in opts if o.get("type") != "null"]
            base = {k: v for k, v in s.items() if k not in ("anyOf", "oneOf")}
            return {**(non_null[0] if non_null else opts[0]), **base}
        return s

    def type_of(self, s: dict) -> str:
        t = s.get("type")
        if isinstance(t, list):
            t = next((x for x in t if x != "null"), "null")
        if t:
            return t
        if "properties" in s:
            return "object"
        if "items" in s:
            return "array"
        if "enum" in s:
            return "enum"
        return "string"

    def fill(self, s: dict, value: Any, canon: str | None, required: bool = True) -> Any:
        """The value of schema ``s`` for the answer ``value`` (canonical field ``canon``): the
        schema's constant, an enum member (:func:`_enum_pick`), an object or array filled
        recursively, else ``value`` coerced to the scalar type (:meth:`scalar`)."""
        s = self.resolve(s)
        if "const" in s:
            return s["const"]
        t = self.type_of(s)
        if "enum" in s:
            if value is None:
                value = s.get("default", s["enum"][0])
            return _enum_pick(s["enum"], value, canon)
        if t == "object":
            return self.obj(s, value if isinstance(value, dict) else None)
        if t == "array":
            return self.array(s, value, canon)
        if value is None:
            if "default" in s:
                return s["default"]
            nullable = isinstance(s.get("type"), list) and "null" in s["type"]
            if nullable:
                return None
            value = _EMPTY.get(t)
        return self.scalar(s, t, value, canon)

    def array(self, s: dict, value: Any, canon: str | None) -> list:
        """An array of ``s["items"]`` from a list (a single value is a list of one), cut to
        ``maxItems`` and padded with empty items to ``minItems``."""
        items = s.get("items", {})
        seq = value if isinstance(value, list) else ([] if value is None else [value])
        out = [self.fill(items, x, canon) for x in seq]
        if "maxItems" in s:
            out = out[: s["maxItems"]]
        while len(out) < s.get("minItems", 0):
            out.append(self.fill(items, None, canon))
        return out

    def scalar(self, s: dict, t: str, value: Any, canon: str | None) -> Any:
        """``value`` as a ``t``: a string (lists joined with "; ", cut to ``maxLength``), a number
        (a confidence word as its figure, a list or dict as its length, a 0-1 confidence scaled
        to a 0-100 schema), a boolean, null; any other type unchanged."""
        if t == "string":
            if isinstance(value, list):
                value = "; ".join(self.text(x) for x in value)
            elif isinstance(value, dict):
                value = self.text(value)
            text = str(value)
            if "maxLength" in s:
                text = text[: s["maxLength"]]
            return text
        if t in ("number", "integer"):
            if isinstance(value, str) and canon == "confidence":
                value = {"high": 0.85, "medium": 0.6, "low": 0.3}.get(value.lower(), 0.0)
            try:
                x = float(value) if not isinstance(value, (dict, list)) else float(len(value))
            except (TypeError, ValueError):
                x = 0.0
            if "maximum" in s and s["maximum"] >= 100 and canon == "confidence" and x <= 1:
                x *= 100
            return round(x) if t == "integer" else x
        if t == "boolean":
            return bool(value)
        if t == "null":
            return None
        return value

    def text(self, x: Any) -> str:
        if isinstance(x, dict):
            src = x.get("source")
            head = f"{src}:{x.get('line')}: " if src else ""
            return head + str(
                x.get("text") or x.get("detail") or x.get("statement") or json.dumps(x, default=str)
            )
        return str(x)

    def obj(self, s: dict, data: dict | None) -> dict:
        props = s.get("properties", {})
        req = set(s.get("required", []))
        out: dict = {}
        for name, sub in props.items():
            canon = _canon(name)
            if data is not None:
                val = self.field(data, name)
            else:
                val = self.bag.get(canon) if canon else None
            if val is None and name not in req:
                continue
            out[name] = self.fill(sub, val, canon, name in req)
        return out

    def field(self, data: dict, name: str) -> Any:
        n = _norm(name)
        if n in data:
            return data[n]
        for k, syns in _FIELD.items():
            if n in syns and k in data:
                return data[k]
        canon = _canon(name)
        if canon and canon in data:
            return data[canon]
        return next((v for k, v in data.items() if _norm(k) == n or n in _norm(k)), None)


def fill_schema(report: AuditReport, schema: dict) -> dict:
    """A document with the report's answers that validates against ``schema``.

    Raises:
        InputError: the schema is not a valid JSON Schema, or the answers cannot be
            made to satisfy it (the message names the first violation); ``jsonschema`` is not
            installed (it comes with the ``ci`` extra: ``pip install 'mlaudit[ci]'``).
    """
    try:
        import jsonschema
    except ImportError:
        raise InputError(
            "--schema needs the jsonschema package: pip install 'mlaudit[ci]'"
        ) from None

    try:
        cls = jsonschema.validators.validator_for(schema)
        cls.check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise InputError(f"--schema: not a valid JSON Schema: {exc.message}") from None
    doc = _Filler(schema, answer_bag(report)).fill(schema, None, None)
    errors = sorted(cls(schema).iter_errors(doc), key=lambda e: list(e.absolute_path))
    if errors:
        e = errors[0]
        where = "/".join(str(p) for p in e.absolute_path) or "(root)"
        raise InputError(
            f"--schema: the report cannot be shaped to this schema: {where}: {e.message}"
        )
    return doc
