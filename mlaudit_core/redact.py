"""Secret redaction for everything mlaudit prints or writes back.

Two rules: a value whose *key* names a credential (token, secret, password,
api_key, ...) is replaced whole; and any text is scrubbed of values *shaped*
like well-known token formats (the prefixes below are the ones published by
GitHub, GitLab, Slack, OpenAI, Hugging Face, AWS, Google, W&B and generic
``Bearer``/URL-embedded credentials).
"""

from __future__ import annotations

import re
from typing import Any

REDACTED = "[REDACTED]"

_SECRET_KEY = re.compile(
    r"(pass(word|wd)?|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|credential|"
    r"auth|session[_-]?key|client[_-]?secret|webhook)", re.IGNORECASE)

_TOKEN_SHAPES = [
    r"gh[pousr]_[A-Za-z0-9]{30,}",                 # GitHub
    r"github_pat_[A-Za-z0-9_]{40,}",
    r"glpat-[A-Za-z0-9_\-]{20,}",                  # GitLab
    r"xox[abprs]-[A-Za-z0-9\-]{10,}",              # Slack
    r"sk-(?:proj-|ant-)?[A-Za-z0-9_\-]{20,}",      # OpenAI / Anthropic style
    r"hf_[A-Za-z0-9]{30,}",                        # Hugging Face
    r"(?:AKIA|ASIA)[A-Z0-9]{16}",                  # AWS access key id
    r"AIza[0-9A-Za-z_\-]{35}",                     # Google API key
    r"eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}",  # JWT
    r"(?<=[Bb]earer )[A-Za-z0-9_\-\.=]{16,}",
    r"(?<=://)[^/\s:@]+:[^/\s@]+(?=@)",           # user:password@host in URLs
    r"(?<=[Ww][Aa][Nn][Dd][Bb]_[Aa][Pp][Ii]_[Kk][Ee][Yy]=)\S+",
    r"\b[0-9a-f]{40}\b(?=.*(?:key|token))",        # 40-hex W&B keys next to the word key/token
]
_TOKEN_RE = re.compile("|".join(f"(?:{p})" for p in _TOKEN_SHAPES))
_KV_RE = re.compile(
    r"(?P<k>\b[\w.\-]*(?:pass(?:word|wd)?|secret|token|api[_-]?key|access[_-]?key|private[_-]?key)[\w.\-]*)"
    r"(?P<sep>\s*[=:]\s*|\"\s*:\s*\")(?P<v>[^\s,;\"']+)", re.IGNORECASE)


def is_secret_key(key: str) -> bool:
    """True when a param/tag/config key names a credential (e.g. ``db_password``, ``WANDB_API_KEY``)."""
    return bool(_SECRET_KEY.search(key)) and not key.lower().endswith(("_tokens", "tokens", "num_tokens",
                                                                       "max_tokens", "tokenizer"))


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\x80-\x9f]")


def neutralise_controls(text: str) -> str:
    """Show terminal control characters (ESC, BEL, C1 codes...) as visible ``\\xNN`` escapes.

    Run names, tags and log lines are run-controlled: a raw ESC sequence could retitle or
    clear the reader's terminal, or hide text in Markdown/HTML views.
    """
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def redact_text(text: str) -> str:
    """Scrub token-shaped values and ``key=value`` credentials from free text, and neutralise
    terminal control characters."""
    if not text:
        return text
    text = neutralise_controls(text)
    text = _TOKEN_RE.sub(REDACTED, text)
    return _KV_RE.sub(lambda m: f"{m['k']}{m['sep']}{REDACTED}" if is_secret_key(m["k"]) else m[0], text)


def redact_mapping(values: dict[str, Any]) -> dict[str, Any]:
    """Replace whole values under credential-like keys; scrub the rest as text."""
    out: dict[str, Any] = {}
    for k, v in values.items():
        if is_secret_key(str(k)) and not isinstance(v, (int, float, bool)):
            out[k] = REDACTED
        elif isinstance(v, str):
            out[k] = redact_text(v)
        else:
            out[k] = v
    return out


def _walk(obj: Any) -> Any:
    if isinstance(obj, str):
        return redact_text(obj)
    if isinstance(obj, list):
        return [_walk(x) for x in obj]
    if isinstance(obj, dict):
        return {k: (REDACTED if isinstance(v, str) and is_secret_key(str(k)) else _walk(v))
                for k, v in obj.items()}
    return obj


def redact_report(report):
    """A copy of ``report`` with every string field scrubbed (the report model is re-validated)."""
    data = _walk(report.model_dump(mode="json"))
    return type(report).model_validate(data)
