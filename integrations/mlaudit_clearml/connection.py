"""One ClearML SDK session with bounded retries, and API calls that fail in one line.

Credentials come from the SDK's own configuration (``clearml.conf`` or the
``CLEARML_API_HOST`` / ``CLEARML_API_ACCESS_KEY`` / ``CLEARML_API_SECRET_KEY``
variables); mlaudit never reads, prints or stores them itself.

Retries: the SDK's default is 240 retries per call with up to 120 s back-off, so
an unreachable server hangs for hours. mlaudit configures the SDK session down to
``SDK_RETRIES`` quick retries per call and retries *connecting* with tenacity:
``attempts`` tries with exponential back-off (``backoff`` x 2^n seconds, capped at
8 s), then one clear error.

Timeouts: the SDK waits up to 300 s for each answer (``Session._session_timeout`` =
(10 s connect, 300 s read); 300 s for requests over 15,000 bytes), so a server that accepts
connections and never answers held a call for 15 minutes with the retries. mlaudit's session
waits ``MLAUDIT_TRACKER_TIMEOUT`` (default 10 s, as for MLflow and W&B) to connect and for
each read, and three times that to read the answer of a large request
(:func:`session_timeouts`).
"""

from __future__ import annotations

from typing import Any

from mlaudit_core.errors import InputError, TrackerUnavailable
from mlaudit_core.plugins import require

#: Per-call retries inside the SDK session (urllib3 ``Retry``), and their back-off factor (s).
SDK_RETRIES = 2
SDK_BACKOFF = 0.25
#: Connection attempts (tenacity) and the first back-off in seconds (then x2, capped at 8 s).
ATTEMPTS = 3
BACKOFF = 0.5


def sdk():
    """The ``clearml`` module, or :class:`~mlaudit_core.errors.MissingDependency` with the pip hint."""
    return require("clearml", "clearml", "clearml")


def _is_unreachable(exc: BaseException) -> bool:
    """True when a login failed because the server could not be reached (not because it refused)."""
    import requests

    seen = exc
    while seen is not None:
        if isinstance(
            seen, (requests.ConnectionError, requests.Timeout, ConnectionError, TimeoutError)
        ):
            return True
        seen = seen.__cause__ or seen.__context__
    text = str(exc)
    return any(
        s in text
        for s in (
            "ConnectionError",
            "Max retries exceeded",
            "Connection refused",
            "timed out",
            "Name or service not known",
            "NewConnectionError",
        )
    )


def session_timeouts(timeout: float) -> dict[str, tuple[float, float]]:
    """The SDK ``Session`` timeouts (class attributes, (connect s, read s)) for a tracker
    timeout of ``timeout`` seconds: the first call (login), every other call, and calls whose
    body exceeds the SDK's 15,000 bytes (event batches: three times the read timeout)."""
    return {
        "_session_initial_timeout": (timeout, timeout),
        "_session_timeout": (timeout, timeout),
        "_write_session_timeout": (timeout, 3 * timeout),
    }


def connect(*, attempts: int = ATTEMPTS, backoff: float = BACKOFF):
    """Open a logged-in SDK ``Session`` and make it the SDK's default session.

    Making it the default means ``Task.get_task`` and ``Logger`` (used by the
    write-back) share its bounded retries and credentials.

    Raises:
        MissingDependency: the clearml package is not installed.
        InputError: no credentials configured, credentials rejected, or the
            server unreachable after ``attempts`` tries.
    """
    sdk()
    import tenacity
    from clearml.backend_api.session import Session
    from clearml.backend_api.session.defs import MissingConfigError
    from clearml.backend_api.session.session import LoginError

    from mlaudit_core.sdk_private import clearml_bounded_session, clearml_set_default_session
    from mlaudit_core.settings import tracker_timeout

    # the SDK reads its timeouts from class attributes: a subclass bounds this session only
    BoundedSession = clearml_bounded_session(Session, session_timeouts(tracker_timeout()))
    retries = {
        "total": SDK_RETRIES,
        "connect": SDK_RETRIES,
        "read": SDK_RETRIES,
        "redirect": SDK_RETRIES,
        "status": SDK_RETRIES,
        "backoff_factor": SDK_BACKOFF,
    }

    @tenacity.retry(
        stop=tenacity.stop_after_attempt(max(1, attempts)),
        wait=tenacity.wait_exponential(multiplier=backoff, max=8),
        retry=tenacity.retry_if_exception(_is_unreachable),
        reraise=True,
    )
    def _open():
        return BoundedSession(initialize_logging=False, http_retries_config=dict(retries))

    host = _configured_host()
    try:
        session = _open()
    except MissingConfigError:
        raise InputError(
            "no ClearML credentials configured: run `clearml-init` (clearml.conf) or set "
            "CLEARML_API_ACCESS_KEY and CLEARML_API_SECRET_KEY"
        ) from None
    except Exception as exc:
        if _is_unreachable(exc):
            raise TrackerUnavailable(
                f"ClearML server {host} is unreachable (gave up after "
                f"{attempts} attempts with back-off)"
            ) from None
        if isinstance(exc, LoginError) and ("401" in str(exc) or "nauthorized" in str(exc)):
            raise InputError(
                f"ClearML server {host} rejected the credentials (check clearml.conf or "
                "CLEARML_API_ACCESS_KEY / CLEARML_API_SECRET_KEY)"
            ) from None
        if isinstance(exc, (LoginError, ValueError)):
            first = (
                str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
            )
            raise InputError(f"cannot log in to ClearML server {host}: {first}") from None
        raise
    clearml_set_default_session(session)
    return session


def _configured_host() -> str:
    """The API host the SDK will use, for messages (``unknown`` when not configured)."""
    try:
        from clearml.backend_api.session import Session

        return Session.get_api_server_host() or "(unset)"
    except Exception:
        return "(unknown host)"


def call(session, endpoint: str, *, what: str | None = None, **payload: Any) -> dict:
    """Send ``service.action`` with a JSON payload; return the response's ``data``.

    Raises:
        InputError: ``400/101`` (invalid task id) as "no ClearML task ...", any
            other API error with the server's message, and transport failures.
    """
    service, action = endpoint.split(".", 1)
    try:
        res = session.send_request(service, action, json=payload, method="post")
    except Exception as exc:
        if _is_unreachable(exc):
            raise TrackerUnavailable(
                f"ClearML server {session.host} became unreachable during {endpoint}"
            ) from None
        raise
    try:
        body = res.json()
    except ValueError:
        raise TrackerUnavailable(
            f"ClearML server {session.host} answered {endpoint} with HTTP "
            f"{res.status_code} and no JSON"
        ) from None
    meta = body.get("meta") or {}
    if res.status_code != 200 or meta.get("result_code", 200) != 200:
        code, sub = meta.get("result_code", res.status_code), meta.get("result_subcode", 0)
        msg = meta.get("result_msg") or f"HTTP {res.status_code}"
        if code == 400 and sub == 101:
            raise InputError(f"no ClearML task {what or payload.get('task')!r} on {session.host}")
        err = TrackerUnavailable if str(code).isdigit() and int(code) >= 500 else InputError
        raise err(f"ClearML {endpoint} failed ({code}/{sub}): {msg}")
    return body.get("data") or {}
