"""Verdict notifications: Slack incoming webhooks and signed generic JSON webhooks.

A notification carries the verdict (outcome, cause, confidence, summary), the top
findings and a link to the run in its tracker's UI. Two target kinds:

* ``slack``: a Slack incoming webhook. The body is a Slack message payload (``text``
  fallback plus ``blocks``); every run-controlled string is escaped for Slack
  ``mrkdwn`` (``&`` ``<`` ``>`` become entities, so a run named ``<!channel>`` cannot
  mention anyone). Chosen for ``hooks.slack.com`` URLs or a ``slack+https://`` URL.
* ``json``: any other URL (or ``json+https://``). The body is the JSON document of
  :func:`json_payload`; with a shared secret the request is signed in the Standard
  Webhooks scheme (standardwebhooks.com, the scheme MLflow's own webhooks use):
  ``webhook-id`` (the delivery id, the same on every retry), ``webhook-timestamp``
  (integer Unix seconds) and ``webhook-signature: v1,<base64 HMAC-SHA256 of
  "<id>.<timestamp>.<raw body>">``, checked by :func:`verify_webhook` with a timestamp
  tolerance, so a captured delivery cannot be replayed later. A secret written
  ``whsec_<base64>`` is the base64-decoded key (the spec's form); any other secret is used
  as its UTF-8 bytes (as MLflow does). Deprecated, sent for one more release:
  ``X-Mlaudit-Signature: sha256=<hex>`` (HMAC of the body alone; no timestamp, replayable),
  checked by :func:`verify_signature`.

Every string in every message is scrubbed by :func:`mlaudit_core.redact.redact_text`.
Webhook URLs are secrets themselves (a Slack URL is its own credential): logs and errors
name a target only by kind, scheme, host and port (:attr:`NotifyTarget.label`).

Sending never raises and never fails the audit: each target gets up to
``attempts`` tries (a connection error, a timeout, HTTP 429 or 5xx is retried with
exponential back-off and jitter through tenacity; ``Retry-After`` is honoured up to the
deadline), each request has a ``timeout_s`` timeout, and all targets together stop at
``total_s`` seconds. A target that still failed is logged as one warning line.

Settings (``[tool.mlaudit.notify]`` in pyproject.toml or mlaudit.toml)::

    [tool.mlaudit.notify]
    urls = ["env:SLACK_WEBHOOK_URL", "https://ci.example.com/mlaudit"]
    min_severity = "warning"     # "none" sends every verdict; default "warning"
    causes = []                  # e.g. ["model_convergence", "infra_runtime"]; [] = any cause
    secret_env = "MLAUDIT_WEBHOOK_SECRET"   # HMAC secret for json targets (the default)
    timeout_s = 5.0
    attempts = 4
    total_s = 20.0

    [[tool.mlaudit.notify.targets]]   # per-target filters
    url = "env:ONCALL_HOOK"
    min_severity = "error"
    causes = ["infra_runtime"]

A URL written ``env:NAME`` is read from the environment variable ``NAME`` (keep webhook
URLs out of files under version control).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import logging
import os
import random
import threading
import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import Future
from concurrent.futures import wait as wait_futures
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Literal
from urllib.parse import quote, urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from .redact import redact_text
from .report import AuditReport, Cause, Finding, Severity
from .settings import SettingsError

log = logging.getLogger("mlaudit.notify")

#: Deprecated (no timestamp: a captured delivery can be replayed); sent until mlaudit 0.3.
SIGNATURE_HEADER = "X-Mlaudit-Signature"
#: Standard Webhooks headers (lower case, as the spec writes them)
WEBHOOK_ID_HEADER = "webhook-id"
WEBHOOK_TIMESTAMP_HEADER = "webhook-timestamp"
WEBHOOK_SIGNATURE_HEADER = "webhook-signature"
#: Accepted clock difference between sender and receiver, seconds (the spec's recommended
#: five minutes).
DEFAULT_TOLERANCE_S = 300.0
DELIVERY_HEADER = "X-Mlaudit-Delivery"
EVENT_HEADER = "X-Mlaudit-Event"
SECRET_ENV = "MLAUDIT_WEBHOOK_SECRET"
PAYLOAD_VERSION = "1"
SLACK_HOSTS = ("hooks.slack.com", "hooks.slack-gov.com")
#: Findings listed in a message (the most severe first).
TOP_FINDINGS = 5
#: Slack rejects a section text over 3,000 characters (Block Kit reference, "Section block").
SLACK_SECTION_MAX = 3000
USER_AGENT = "mlaudit-notify/1"


# --------------------------------------------------------------------------- settings


class _Filters(BaseModel):
    model_config = ConfigDict(extra="forbid")

    min_severity: str | None = None
    causes: list[str] | None = None
    secret_env: str | None = None
    secret: str | None = None

    @field_validator("min_severity")
    @classmethod
    def _severity(cls, v: str | None) -> str | None:
        if v is not None and v != "none" and v not in {s.value for s in Severity}:
            raise ValueError(f"must be one of none, {', '.join(s.value for s in Severity)}")
        return v

    @field_validator("causes")
    @classmethod
    def _causes(cls, v: list[str] | None) -> list[str] | None:
        known = {c.value for c in Cause}
        for c in v or []:
            if c not in known:
                raise ValueError(f"unknown cause {c!r} (one of {', '.join(sorted(known))})")
        return v


class _TargetSettings(_Filters):
    url: str
    kind: Literal["slack", "json"] | None = None


class NotifySettings(_Filters):
    """The ``[tool.mlaudit.notify]`` table (see the module docstring). Times in seconds."""

    urls: list[str] = Field(default_factory=list)
    targets: list[_TargetSettings] = Field(default_factory=list)
    timeout_s: float = Field(5.0, gt=0)
    attempts: int = Field(4, ge=1, le=10)
    total_s: float = Field(20.0, gt=0)


@dataclass(frozen=True)
class NotifyTarget:
    """One webhook to post verdicts to.

    ``url`` is the resolved URL (a secret: never log it, use :attr:`label`); ``kind`` is
    ``"slack"`` or ``"json"``; ``min_severity`` None sends every verdict, otherwise only
    reports whose worst finding is at least that; ``causes`` empty means any cause;
    ``secret`` signs json bodies (None: unsigned).
    """

    url: str
    kind: str
    min_severity: Severity | None = Severity.WARNING
    causes: frozenset[str] = frozenset()
    secret: str | None = field(default=None, repr=False)

    @property
    def label(self) -> str:
        """``kind scheme://host[:port]``: printable, without path, query or credentials."""
        u = urlsplit(self.url)
        host = u.hostname or "?"
        port = f":{u.port}" if u.port else ""
        return f"{self.kind} {u.scheme}://{host}{port}"

    def skip_reason(self, report: AuditReport) -> str | None:
        """Why this target does not want ``report`` (None: send it)."""
        if self.causes and report.verdict.cause.value not in self.causes:
            return f"cause {report.verdict.cause.value} not in {sorted(self.causes)}"
        if self.min_severity is not None:
            worst = report.max_severity()
            if worst is None or worst.rank < self.min_severity.rank:
                return (
                    f"worst finding {worst.value if worst else 'none'} below "
                    f"{self.min_severity.value}"
                )
        return None


@dataclass(frozen=True)
class NotifyPolicy:
    """Timing of deliveries, in seconds: per request, tries per target, all targets together."""

    timeout_s: float = 5.0
    attempts: int = 4
    total_s: float = 20.0
    backoff_s: float = 0.5


@dataclass
class Delivery:
    """What happened to one target: ``sent``, or ``skipped`` (the filter's reason), or ``error``."""

    target: str
    sent: bool = False
    skipped: str | None = None
    attempts: int = 0
    status: int | None = None
    error: str | None = None
    seconds: float = 0.0


def _where(settings_source: str | None) -> str:
    return f"{settings_source or 'settings'}: [tool.mlaudit.notify]"


def _resolve_url(raw: str, where: str) -> tuple[str, str | None]:
    """``(url, forced kind)`` from ``[slack+|json+]URL`` or ``env:NAME``.

    Raises:
        SettingsError: unset environment variable, or not an http(s) URL with a host.
    """
    value = raw.strip()
    if value.startswith("env:"):
        name = value[4:]
        value = os.environ.get(name, "").strip()
        if not value:
            raise SettingsError(f"{where}: environment variable {name} (a notify URL) is not set")
    kind = None
    for k in ("slack", "json"):
        if value.startswith(f"{k}+"):
            kind, value = k, value[len(k) + 1 :]
    u = urlsplit(value)
    if u.scheme not in ("http", "https") or not u.hostname:
        # the value may be a secret (a Slack URL is its own credential): name only its scheme
        what = (
            f"env:{raw.strip()[4:]}"
            if raw.strip().startswith("env:")
            else f"a URL with {'scheme ' + repr(u.scheme) if u.scheme else 'no scheme'}"
        )
        raise SettingsError(f"{where}: notify URL ({what}) is not an http(s) URL with a host")
    return value, kind


def _secret(f: _Filters, cfg: _Filters) -> str | None:
    """A target's secret (or ``secret_env``), else the table's, else ``$MLAUDIT_WEBHOOK_SECRET``."""
    if f.secret:
        return f.secret
    if f.secret_env:
        return os.environ.get(f.secret_env) or None
    if cfg.secret:
        return cfg.secret
    return os.environ.get(cfg.secret_env or SECRET_ENV) or None


def notify_config(
    notify: Mapping[str, Any] | None, urls: Sequence[str] = (), *, source: str | None = None
) -> tuple[list[NotifyTarget], NotifyPolicy]:
    """Targets and timing from ``[tool.mlaudit.notify]`` plus extra URLs (``--notify``).

    Args:
        notify: the settings table (``Settings.notify``); may be empty.
        urls: more URLs (the CLI's ``--notify``, a hook's ``notify=``), using the table's
            filters and secret. A URL given twice is one target.
        source: the settings file, for error messages.

    Raises:
        SettingsError: an unknown key, a bad severity or cause, an unset ``env:`` variable,
            or a URL that is not http(s). The message names the key, never the URL's path.
    """
    where = _where(source)
    try:
        cfg = NotifySettings(**dict(notify or {}))
    except ValidationError as exc:
        err = exc.errors()[0]
        key = ".".join(str(x) for x in err["loc"])
        raise SettingsError(f"{where} {key}: {err['msg']}") from None
    targets: dict[str, NotifyTarget] = {}

    def add(raw: str, f: _Filters, kind: str | None) -> None:
        url, forced = _resolve_url(raw, where)
        host = (urlsplit(url).hostname or "").lower()
        k = kind or forced or ("slack" if host in SLACK_HOSTS else "json")
        sev = f.min_severity or cfg.min_severity or Severity.WARNING.value
        causes = f.causes if f.causes is not None else (cfg.causes or [])
        targets.setdefault(
            url,
            NotifyTarget(
                url=url,
                kind=k,
                min_severity=None if sev == "none" else Severity(sev),
                causes=frozenset(causes),
                secret=_secret(f, cfg) if k == "json" else None,
            ),
        )

    for t in cfg.targets:
        add(t.url, t, t.kind)
    for raw in [*cfg.urls, *urls]:
        add(raw, _Filters(), None)
    policy = NotifyPolicy(timeout_s=cfg.timeout_s, attempts=cfg.attempts, total_s=cfg.total_s)
    return list(targets.values()), policy


# --------------------------------------------------------------------------- messages


def slack_escape(text: str) -> str:
    """Escape ``&``, ``<`` and ``>`` as Slack asks for text in ``mrkdwn`` ("Escaping text")."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _slack_link_url(url: str) -> str:
    # inside <url|text>, '|' and '>' end the URL and spaces break it: percent-encode them
    return slack_escape(quote(url, safe=":/?#[]@!$&'()*+,;=%~-._"))


def top_findings(report: AuditReport, n: int = TOP_FINDINGS) -> list[Finding]:
    """The ``n`` most severe findings at warning or above (report order within a severity)."""
    worthy = [f for f in report.findings if f.severity.rank >= Severity.WARNING.rank]
    return sorted(worthy, key=lambda f: -f.severity.rank)[:n]


def _clip(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def slack_payload(report: AuditReport) -> dict[str, Any]:
    """A Slack message payload (``text``, ``blocks``) for ``report``; strings redacted, escaped."""
    v, r = report.verdict, report.run

    def esc(s: str | None) -> str:
        return slack_escape(redact_text(s or ""))

    name = esc(r.name or r.id)
    url = redact_text(r.url) if r.url else None
    link = f"<{_slack_link_url(url)}|{name}>" if url else f"*{name}*"
    where = f" in {esc(r.project)}" if r.project else ""
    head = (
        f"*mlaudit verdict: {v.outcome.value}* · cause *{v.cause.value}* · confidence "
        f"{v.confidence:.2f}\n{esc(r.tracker)} run {link}{where}"
    )
    blocks: list[dict[str, Any]] = [
        {"type": "section", "text": {"type": "mrkdwn", "text": _clip(head, SLACK_SECTION_MAX)}}
    ]
    if v.summary:
        blocks.append(
            {
                "type": "section",
                "text": {"type": "mrkdwn", "text": _clip(esc(v.summary), SLACK_SECTION_MAX)},
            }
        )
    top = top_findings(report)
    if top:
        lines = [
            f"• `{f.code}` {f.severity.value}: {esc(f.message).replace('`', chr(39))}" for f in top
        ]
        blocks.append(
            {
                "type": "section",
                "text": {"type": "mrkdwn", "text": _clip("\n".join(lines), SLACK_SECTION_MAX)},
            }
        )
    worst = report.max_severity()
    blocks.append(
        {
            "type": "context",
            "elements": [
                {
                    "type": "mrkdwn",
                    "text": (
                        f"mlaudit {esc(report.tool_version)} · {len(report.findings)} finding(s)"
                        " · worst "
                        f"{worst.value if worst else 'none'}"
                    ),
                }
            ],
        }
    )
    text = (
        f"mlaudit: {esc(r.tracker)} run {name}: {v.outcome.value} ({v.cause.value}, "
        f"confidence {v.confidence:.2f})"
    )
    return {"text": text, "blocks": blocks}


def json_payload(
    report: AuditReport, delivery: str | None = None, sent_at: datetime | None = None
) -> dict[str, Any]:
    """The generic webhook document (``version`` 1); every string redacted.

    Keys: ``event`` ("mlaudit.verdict"), ``version``, ``delivery`` (one id per message,
    the same across retries: deduplicate on it), ``sent_at`` (ISO 8601 UTC), ``run``
    (tracker, id, name, project, url, status), ``verdict`` (outcome, cause, confidence,
    summary, inconclusive), ``max_severity``, ``codes`` (warning and above),
    ``n_findings``, ``findings`` (the top ones: code, name, severity, message),
    ``next_action`` and ``tool_version``.
    """
    v, r = report.verdict, report.run
    worst = report.max_severity()
    doc = {
        "event": "mlaudit.verdict",
        "version": PAYLOAD_VERSION,
        "delivery": delivery or uuid.uuid4().hex,
        "sent_at": (sent_at or datetime.now(timezone.utc)).isoformat(),
        "run": {
            "tracker": r.tracker,
            "id": r.id,
            "name": r.name,
            "project": r.project,
            "url": r.url,
            "status": r.status,
        },
        "verdict": {
            "outcome": v.outcome.value,
            "cause": v.cause.value,
            "confidence": round(v.confidence, 4),
            "summary": v.summary,
            "inconclusive": v.inconclusive,
        },
        "max_severity": worst.value if worst else None,
        "codes": report.codes,
        "n_findings": len(report.findings),
        "findings": [
            {"code": f.code, "name": f.name, "severity": f.severity.value, "message": f.message}
            for f in top_findings(report)
        ],
        "next_action": report.next_actions[0].action if report.next_actions else None,
        "tool_version": report.tool_version,
    }
    return _redact_all(doc)


def _redact_all(obj: Any) -> Any:
    if isinstance(obj, str):
        return redact_text(obj)
    if isinstance(obj, list):
        return [_redact_all(x) for x in obj]
    if isinstance(obj, dict):
        return {k: _redact_all(x) for k, x in obj.items()}
    return obj


class WebhookVerificationError(ValueError):
    """A delivery failed :func:`verify_webhook`; the message says why (missing header, bad
    timestamp, outside the tolerance, no matching signature). Answer it with 401."""


def _key(secret: str | bytes) -> bytes:
    """The HMAC key: ``whsec_<base64>`` decoded (Standard Webhooks), bytes as given, any other
    string as UTF-8 (MLflow's webhooks)."""
    if isinstance(secret, bytes):
        return secret
    if secret.startswith("whsec_"):
        try:
            raw = secret[6:]
            return base64.b64decode(raw + "=" * (-len(raw) % 4), validate=True)
        except (binascii.Error, ValueError):
            raise WebhookVerificationError("secret: whsec_ followed by invalid base64") from None
    return secret.encode("utf-8")


def standard_signature(msg_id: str, timestamp: int, body: bytes, secret: str | bytes) -> str:
    """The ``webhook-signature`` value: ``"v1," + base64(HMAC-SHA256(key,
    f"{msg_id}.{timestamp}." + body))`` (Standard Webhooks, "Signature scheme")."""
    signed = f"{msg_id}.{int(timestamp)}.".encode() + body
    return (
        "v1," + base64.b64encode(hmac.new(_key(secret), signed, hashlib.sha256).digest()).decode()
    )


def standard_headers(
    msg_id: str, body: bytes, secret: str | bytes, timestamp: int | None = None
) -> dict[str, str]:
    """The three Standard Webhooks headers for one delivery of ``body``."""
    ts = int(time.time() if timestamp is None else timestamp)
    return {
        WEBHOOK_ID_HEADER: msg_id,
        WEBHOOK_TIMESTAMP_HEADER: str(ts),
        WEBHOOK_SIGNATURE_HEADER: standard_signature(msg_id, ts, body, secret),
    }


def verify_webhook(
    body: bytes,
    headers: Mapping[str, str],
    secret: str | bytes,
    *,
    tolerance_s: float = DEFAULT_TOLERANCE_S,
    now: float | None = None,
) -> str:
    """Check a delivery signed in the Standard Webhooks scheme; returns its ``webhook-id``.

    Args:
        body: the raw request body, before any JSON parsing.
        headers: the request headers (any case of the names).
        secret: the shared secret (``whsec_<base64>`` or any string).
        tolerance_s: largest accepted difference between ``webhook-timestamp`` and ``now``
            (seconds, either way): older deliveries are replays.
        now: the receiver's clock, Unix seconds (default: ``time.time()``).

    Raises:
        WebhookVerificationError: a header missing, a timestamp that is not an integer or is
            outside the tolerance, or no ``v1`` signature that matches (constant-time compare;
            several space-separated signatures are allowed, for secret rotation).
    """
    h = {k.lower(): v for k, v in headers.items()}
    missing = [
        n
        for n in (WEBHOOK_ID_HEADER, WEBHOOK_TIMESTAMP_HEADER, WEBHOOK_SIGNATURE_HEADER)
        if not h.get(n)
    ]
    if missing:
        raise WebhookVerificationError(f"missing header(s): {', '.join(missing)}")
    try:
        ts = int(h[WEBHOOK_TIMESTAMP_HEADER].strip())
    except ValueError:
        raise WebhookVerificationError("webhook-timestamp is not an integer") from None
    now = time.time() if now is None else now
    if abs(now - ts) > tolerance_s:
        raise WebhookVerificationError(
            f"webhook-timestamp {ts} is {now - ts:+.0f} s from now (tolerance {tolerance_s:g} s)"
        )
    expected = standard_signature(h[WEBHOOK_ID_HEADER], ts, body, secret).partition(",")[2]
    for part in h[WEBHOOK_SIGNATURE_HEADER].split():
        version, _, sig = part.partition(",")
        if version == "v1" and hmac.compare_digest(sig.encode(), expected.encode()):
            return h[WEBHOOK_ID_HEADER]
    raise WebhookVerificationError("no matching v1 signature")


def sign(body: bytes, secret: str) -> str:
    """Deprecated: the ``X-Mlaudit-Signature`` value ``"sha256=" + hex(HMAC-SHA256(secret,
    body))`` (no timestamp: replayable). Use :func:`standard_headers` / :func:`verify_webhook`."""
    return "sha256=" + hmac.new(secret.encode("utf-8"), body, hashlib.sha256).hexdigest()


def verify_signature(body: bytes, header: str | None, secret: str) -> bool:
    """Deprecated (see :func:`sign`): True when ``header`` is the ``sha256=`` signature of the
    raw ``body`` (constant-time compare). Use :func:`verify_webhook`."""
    return bool(header) and hmac.compare_digest(sign(body, secret), (header or "").strip())


def encode(
    target: NotifyTarget, report: AuditReport, delivery: str
) -> tuple[bytes, dict[str, str]]:
    """The raw body and headers ``target`` gets for ``report``."""
    payload = slack_payload(report) if target.kind == "slack" else json_payload(report, delivery)
    body = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    headers = {"Content-Type": "application/json; charset=utf-8", "User-Agent": USER_AGENT}
    if target.kind == "json":
        headers[EVENT_HEADER] = "verdict"
        headers[DELIVERY_HEADER] = delivery
        if target.secret:
            headers.update(standard_headers(delivery, body, target.secret))
            headers[SIGNATURE_HEADER] = sign(body, target.secret)  # deprecated, one release
    return body, headers


# --------------------------------------------------------------------------- sending


class _Retryable(Exception):
    def __init__(self, status: int, retry_after: float | None) -> None:
        super().__init__(f"HTTP {status}")
        self.status, self.retry_after = status, retry_after


class _Rejected(Exception):
    def __init__(self, status: int) -> None:
        super().__init__(f"HTTP {status}")
        self.status = status


class _OutOfTime(Exception):
    pass


def _retry_after(value: str | None) -> float | None:
    try:
        return max(0.0, float(value)) if value else None
    except ValueError:  # an HTTP date: fall back to our own back-off
        return None


def _without_url(text: str, target: NotifyTarget) -> str:
    """``text`` (an HTTP client's error) without the target's URL path and query: for a Slack
    webhook they are the credential, and urllib3 quotes them (``url: /services/...``)."""
    u = urlsplit(target.url)
    text = text.replace(target.url, target.label)
    for part in (f"{u.path}?{u.query}" if u.query else "", u.path):
        if part and part != "/":
            text = text.replace(part, "/…")
    return redact_text(text)


def _deliver(
    session,
    target: NotifyTarget,
    body: bytes,
    headers: dict[str, str],
    policy: NotifyPolicy,
    deadline: float,
) -> Delivery:
    import requests
    import tenacity

    d = Delivery(target=target.label)
    t0 = time.monotonic()

    def attempt() -> int:
        d.attempts += 1
        remaining = deadline - time.monotonic()
        if remaining <= 0.05:
            raise _OutOfTime("out of time")
        t = min(policy.timeout_s, remaining)
        resp = session.post(
            target.url, data=body, headers=headers, timeout=(min(t, 3.05), t), allow_redirects=False
        )
        d.status = resp.status_code
        if resp.status_code == 429 or resp.status_code >= 500:
            raise _Retryable(resp.status_code, _retry_after(resp.headers.get("Retry-After")))
        if not 200 <= resp.status_code < 300:  # 3xx too: a redirect could carry the body elsewhere
            raise _Rejected(resp.status_code)
        return resp.status_code

    def wait(rs: tenacity.RetryCallState) -> float:
        exc = rs.outcome.exception() if rs.outcome else None
        backoff = policy.backoff_s * 2 ** (rs.attempt_number - 1)
        backoff = random.uniform(0.5 * backoff, backoff)  # jitter
        if isinstance(exc, _Retryable) and exc.retry_after is not None:
            backoff = max(backoff, exc.retry_after)
        return max(0.0, min(backoff, deadline - time.monotonic()))

    def stop(rs: tenacity.RetryCallState) -> bool:
        return rs.attempt_number >= policy.attempts or time.monotonic() >= deadline - 0.05

    retrying = tenacity.Retrying(
        retry=tenacity.retry_if_exception_type(
            (requests.ConnectionError, requests.Timeout, _Retryable)
        ),
        wait=wait,
        stop=stop,
        reraise=True,
    )
    try:
        retrying(attempt)
        d.sent = True
    except (_Retryable, _Rejected) as exc:
        d.error = str(exc)
    except _OutOfTime:
        d.error = f"out of time ({policy.total_s:g} s for all notifications)"
    except requests.RequestException as exc:
        d.error = _without_url(
            f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}", target
        )[:300]
    except Exception as exc:  # never let a notification fail the audit
        d.error = f"{type(exc).__name__}: {exc}"[:200]
    d.seconds = time.monotonic() - t0
    return d


class _DaemonPool:
    """``submit`` -> a Future run on a daemon thread, at most ``n`` at a time.

    Not a ThreadPoolExecutor: its threads are joined at interpreter exit, so a target that
    never answers kept a training script (the in-process hooks notify from an ``atexit``
    hook) alive for the whole ``total_s`` after its ``budget_s`` (break-it pass 3: 20 s for a
    5 s budget). Raises RuntimeError when no thread can start (interpreter shutdown)."""

    def __init__(self, n: int) -> None:
        self._slots = threading.BoundedSemaphore(max(1, n))

    def submit(self, fn, *args) -> Future:
        fut: Future = Future()

        def run() -> None:
            with self._slots:
                try:
                    fut.set_result(fn(*args))
                except BaseException as exc:  # noqa: BLE001 - handed to the caller
                    fut.set_exception(exc)

        threading.Thread(target=run, name="mlaudit-notify", daemon=True).start()
        return fut

    def shutdown(self, wait: bool = False) -> None:
        return None


def send_verdict(
    report: AuditReport, targets: Iterable[NotifyTarget], policy: NotifyPolicy | None = None
) -> list[Delivery]:
    """Post ``report`` to every target that wants it; never raises.

    Targets are posted to in parallel (up to 4 at a time); the call returns within about
    ``policy.total_s`` seconds plus one connect timeout. A target that failed after its
    attempts is logged as one warning line on the ``mlaudit.notify`` logger.

    Returns:
        One :class:`Delivery` per target, in the order given.
    """
    policy = policy or NotifyPolicy()
    targets = list(targets)
    out: list[Delivery] = []
    todo: list[tuple[int, NotifyTarget]] = []
    for i, t in enumerate(targets):
        why = t.skip_reason(report)
        out.append(Delivery(target=t.label, skipped=why))
        if why is None:
            todo.append((i, t))
    if not todo:
        return out
    try:
        import requests
    except ImportError:  # pragma: no cover - requests is a core dependency
        log.warning("mlaudit: notifications skipped: the requests package is not installed")
        return out
    deadline = time.monotonic() + policy.total_s
    delivery = uuid.uuid4().hex
    with requests.Session() as session:
        pool = _DaemonPool(min(4, len(todo)))
        try:
            futures = {}
            for i, t in todo:
                try:
                    body, headers = encode(t, report, delivery)
                except Exception as exc:  # a message that cannot be built is that target's failure
                    out[i] = Delivery(
                        target=t.label, error=f"building the message: {type(exc).__name__}: {exc}"
                    )
                    continue
                try:
                    fut = pool.submit(_deliver, session, t, body, headers, policy, deadline)
                except RuntimeError:  # interpreter shutdown (an atexit hook): send it here
                    fut = Future()
                    fut.set_result(_deliver(session, t, body, headers, policy, deadline))
                futures[fut] = i
            wait_futures(futures, timeout=policy.total_s + 4)
            for fut, i in futures.items():
                out[i] = (
                    fut.result()
                    if fut.done()
                    else Delivery(target=targets[i].label, error="still sending at the deadline")
                )
        finally:
            pool.shutdown(wait=False)
    for d in out:
        if d.error:
            log.warning(
                "mlaudit: notification to %s failed after %d attempt(s): %s",
                d.target,
                d.attempts,
                d.error,
            )
    return out


def notify(report: AuditReport, settings=None, urls: Sequence[str] = ()) -> list[Delivery]:
    """Build targets from ``settings.notify`` and ``urls``, then :func:`send_verdict`; never raises.

    A configuration problem is logged as one warning line and nothing is sent.
    """
    try:
        targets, policy = notify_config(
            getattr(settings, "notify", None) or {}, urls, source=getattr(settings, "source", None)
        )
    except SettingsError as exc:
        log.warning("mlaudit: notifications skipped: %s", exc)
        return []
    if not targets:
        return []
    return send_verdict(report, targets, policy)
