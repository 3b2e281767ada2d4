"""Secret redaction for everything mlaudit prints, writes back, sends or stores.

Run content is untrusted and often carries credentials: a crash message with a connection
string, a config dump with ``password: "..."``, a launcher line with ``--password X`` or
``wandb login <key>``, an environment print, a GCP service-account JSON. Everything mlaudit
emits goes through :func:`redact_text` (free text) or :func:`redact_mapping` /
:func:`redact_report` (structures): the written-back Description / notes / comment, report
artifacts (JSON, Markdown, HTML), notifications, the terminal, the batch summary and the
watch/batch state files. Tracking URIs lose their credentials (:func:`strip_uri_credentials`)
before they are stored anywhere.

Two rules:

* a value whose *key* names a credential (``token``, ``secret``, ``password``, ``api_key``,
  ``private_key``...) is replaced whole (:func:`is_secret_key`; ``max_tokens``,
  ``tokenizer`` and the like are not credentials);
* any text is scrubbed of values *shaped* like a credential: the catalogue :data:`SHAPES`.

The catalogue's list of shapes follows the public documentation of well-known secret
scanners (GitHub secret scanning's "Supported secret scanning patterns" and its non-provider
patterns: private keys, HTTP auth headers, connection strings; gitleaks' rule list:
``slack-webhook-url``, ``databricks-api-token``, ``stripe-access-token``,
``npm-access-token``, ``aws-access-token``, ``private-key``, ``authenticated-url``...;
TruffleHog's detectors: URI, AzureStorage, Databricks, Slack webhook). The regular expressions
are our own, written for log lines rather than source files; each has a positive and a
negative example in ``tests/test_redact.py``.

Speed: a line is first checked for the shapes' literals (``xox``, ``hooks.slack``, ``://``,
``dapi``, ``pass``, ``token``...); a line without any (most training log lines) only has its
control characters neutralised.
``benchmarks/redact_speed.py`` prints lines/s.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

REDACTED = "[REDACTED]"

_SECRET_KEY = re.compile(
    r"(pass(word|wd|phrase)?(?![a-z])|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|"
    r"credential|auth|session[_-]?key|client[_-]?secret|webhook|account[_-]?key|sas[_-]?key|"
    r"signing[_-]?key|encryption[_-]?key|conn(ection)?[_-]?str(ing)?|dsn)", re.IGNORECASE)
#: Key names that contain a credential word without being one (token counts, tokenizers,
#: author names, pass counts).
_NOT_SECRET_KEY = re.compile(
    r"(tokens|tokenizer|tokenization|token_?ids?|token_?count|token_?len(gth)?|num_?tokens?|"
    r"authors?|authored|passes|num_?pass|pass_?rate|pass_?at|bypass|passthrough|compass|"
    r"auth_?(type|method|mode|scheme)|oauth_?(url|scope))$", re.IGNORECASE)
#: Metric and tokenizer names that hold a credential word: LLM training logs print
#: ``tokens_per_sec``, ``num_input_tokens_seen`` (HF Trainer), ``mean_token_accuracy`` (TRL),
#: ``pad_token``/``eos_token`` and ``tokenizer_name`` (HF configs); their values are counts,
#: rates and vocabulary entries, never credentials (break-it: ``mlaudit evidence`` showed
#: ``tokens_per_sec: [REDACTED]`` in every metric line). A plural ``tokens`` anywhere, a
#: tokenizer, a special token, a per-token score, or a measure suffix (``_len``, ``_rate``...).
_METRIC_KEY = re.compile(
    r"(tokens(?![a-z])|tokeniz|(?<![a-z])(pad|eos|bos|unk|sep|cls|mask|special|start|end|image|"
    r"audio|video|vision)_?token(_?ids?)?$|token_?(acc|accuracy|loss|entropy|f1|type|embed|level|"
    r"budget)|[_/.](acc|accuracy|loss|per_?sec(ond)?|per_?step|per_?gpu|throughput|seen|trained|"
    r"count|len|length|size|dim|rate)$)", re.IGNORECASE)


def is_secret_key(key: str) -> bool:
    """True when a param/tag/config key names a credential (e.g. ``db_password``,
    ``WANDB_API_KEY``, ``AccountKey``), False for ``max_tokens``, ``tokenizer``, ``author``,
    ``tokens_per_sec``, ``mean_token_accuracy``, ``pad_token``."""
    k = key.strip().strip("\"'-[]")
    return (bool(_SECRET_KEY.search(k)) and not _NOT_SECRET_KEY.search(k)
            and not _METRIC_KEY.search(k))


@dataclass(frozen=True)
class Shape:
    """One credential shape: ``pattern`` (compiled), and how a match is rewritten (``repl``:
    a function of the match, default the whole match becomes :data:`REDACTED`). ``trigger``
    documents what every match contains (the pre-check itself is :data:`_TRIGGER_LITERALS`);
    ``source`' names the scanner rule or vendor document the shape follows."""

    name: str
    pattern: re.Pattern
    trigger: str
    source: str
    repl: Callable[[re.Match], str] | None = None


def _keep(*groups: str) -> Callable[[re.Match], str]:
    """A replacement that keeps the named groups around the redacted ``v`` group."""

    def repl(m: re.Match) -> str:
        out = []
        for g in groups:
            out.append(REDACTED if g == "v" else (m.group(g) or ""))
        return "".join(out)

    return repl


def _keyed(m: re.Match) -> str:
    """``key<sep>value`` with the value redacted when the key names a credential."""
    if not is_secret_key(m["k"]):
        return m[0]
    return f"{m['k']}{m['sep']}{m['q'] or ''}{REDACTED}{m['q'] or ''}"


_KEYWORDS = (r"pass(?:word|wd|phrase)?|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|"
             r"private[_-]?key|credentials?|auth[\w-]*|account[_-]?key|client[_-]?secret|"
             r"session[_-]?key|signing[_-]?key|sas[_-]?key")
#: a key: a word that contains a credential keyword (``db_password``, ``HF_TOKEN``, ``x.api-key``)
_KEY_BODY = rf"[\w.\-]*?(?:{_KEYWORDS})[\w.\-]*"
_KEY = rf"(?<![\w.\-]){_KEY_BODY}"  # starting at a word start only (the speed of a long line)

SHAPES: tuple[Shape, ...] = (
    # --- private keys (GitHub non-provider "private key"; gitleaks private-key) ---------------
    Shape("pem_private_key_block", re.compile(
        r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----.*?"
        r"(?:-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----|$)", re.DOTALL),
        "PRIVATE KEY", "gitleaks private-key; GitHub non-provider patterns"),
    # a key's body lines, when a log prints the block one line at a time
    Shape("pem_body_line", re.compile(
        r"^\s*(?=[A-Za-z0-9+/]*[A-Z])(?=[A-Za-z0-9+/]*[a-z])(?=[A-Za-z0-9+/]*[0-9])"
        r"[A-Za-z0-9+/]{64}\s*$"), "", "PEM (RFC 7468) 64-column body"),
    # --- URLs ------------------------------------------------------------------------------------
    Shape("slack_webhook_url", re.compile(
        r"(?P<h>hooks\.slack(?:-gov)?\.com/)(?P<v>(?:services|workflows|triggers)/[A-Za-z0-9+/_\-]{8,})"),
        r"hooks\.slack", "gitleaks slack-webhook-url; GitHub: Slack incoming webhook URL",
        _keep("h", "v")),
    Shape("discord_webhook_url", re.compile(
        r"(?P<h>discord(?:app)?\.com/api/webhooks/)(?P<v>\d{5,30}/[A-Za-z0-9_\-]{20,})"),
        r"discord", "TruffleHog DiscordWebhook", _keep("h", "v")),
    Shape("teams_webhook_url", re.compile(
        r"(?P<h>(?:[\w-]+\.webhook|outlook)\.office(?:365)?\.com/webhook(?:b2)?/)(?P<v>[^\s\"'<>]{16,})"),
        r"office", "TruffleHog MicrosoftTeamsWebhook", _keep("h", "v")),
    # an AWS key pair written as URL user-info (s3://AKIA...:SECRET@bucket): the secret holds '/'
    Shape("aws_key_pair_userinfo", re.compile(
        r"(?P<k>\b(?:AKIA|ASIA)[A-Z0-9]{16}:)(?P<v>[A-Za-z0-9/+=]{40})(?=@)"),
        r"akia|asia", "GitHub: AWS secret access key (paired with the key ID)", _keep("k", "v")),
    Shape("uri_password", re.compile(
        r"(?P<s>\b[a-zA-Z][a-zA-Z0-9+.\-]{1,30}://)(?P<u>[^\s/:@\"'<>]*):(?P<v>[^\s/@\"'<>]+)@"),
        r"://", "gitleaks authenticated-url; TruffleHog URI; GitHub: connection strings",
        lambda m: f"{m['s']}{m['u']}:{REDACTED}@"),
    # --- provider tokens (GitHub secret scanning's supported patterns) -------------------------
    Shape("slack_token", re.compile(r"\bxox[abposrec]-[A-Za-z0-9\-]{10,}|\bxapp-\d-[A-Za-z0-9\-]{10,}"),
          r"xox|xapp-", "gitleaks slack-*-token; GitHub: Slack API token"),
    Shape("github_token", re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}|\bgithub_pat_[A-Za-z0-9_]{40,}"),
          r"gh[pousr]_|github_pat_", "GitHub: personal access / OAuth / app tokens"),
    Shape("gitlab_token", re.compile(r"\bglpat-[A-Za-z0-9_\-]{20,}"), r"glpat-",
          "gitleaks gitlab-pat"),
    Shape("openai_key", re.compile(r"\bsk-(?:proj-|ant-|svcacct-|admin-)?(?=[A-Za-z0-9_\-]*[A-Z])"
                                        r"(?=[A-Za-z0-9_\-]*[0-9])[A-Za-z0-9_\-]{20,}"),
          r"sk-", "GitHub: OpenAI API key, Anthropic API key"),
    Shape("huggingface_token", re.compile(r"\bhf_[A-Za-z0-9]{30,}"), r"hf_",
          "GitHub: Hugging Face user access token"),
    Shape("aws_access_key_id", re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA)[A-Z0-9]{16}\b"),
          r"AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA", "gitleaks aws-access-token; GitHub: AWS access key ID"),
    Shape("aws_secret_access_key", re.compile(
        r"(?P<k>(?i:aws_?secret_?access_?key|secret_?access_?key)[\"']?)(?P<sep>\s*[:=]\s*|\s+)"
        r"(?P<q>[\"']?)(?P<v>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])"),
        r"secret_?access_?key", "GitHub: AWS secret access key (paired with the key ID)",
        _keep("k", "sep", "q", "v")),
    Shape("google_api_key", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}"), r"AIza",
          "GitHub: Google API key"),
    Shape("databricks_token", re.compile(r"\bdapi[0-9a-f]{32}(?:-\d)?\b"), r"dapi",
          "gitleaks databricks-api-token; GitHub: Databricks access token"),
    Shape("azure_storage_key", re.compile(
        r"(?P<k>(?i:AccountKey|SharedAccessKey|SharedAccessSignature|sig)=)(?P<v>[^;\s\"'&]{16,})"),
        r"AccountKey=|SharedAccess|sig=", "GitHub: Azure storage account key / SAS; TruffleHog AzureStorage",
        _keep("k", "v")),
    Shape("stripe_key", re.compile(r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}"), r"k_live_|k_test_",
          "gitleaks stripe-access-token; GitHub: Stripe API key"),
    Shape("webhook_signing_secret", re.compile(r"\bwhsec_[A-Za-z0-9+/=]{16,}"), r"whsec_",
          "Stripe / Standard Webhooks signing secret"),
    Shape("npm_token", re.compile(r"\bnpm_[A-Za-z0-9]{36}\b"), r"npm_",
          "gitleaks npm-access-token; GitHub: npm access token"),
    Shape("jwt", re.compile(r"\beyJ[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}"),
          r"eyJ", "gitleaks jwt"),
    # --- HTTP auth, CLI and assignment forms ---------------------------------------------------
    Shape("authorization_header", re.compile(
        r"(?P<k>(?i:\b(?:proxy-)?authorization)[\"']?\s*[:=]\s*[\"']?(?i:(?:basic|bearer|token|digest|"
        r"apikey)\s+)?)(?P<v>[^\s\"',;]+)"),
        r"authorization", "GitHub non-provider: HTTP basic/bearer authentication header",
        _keep("k", "v")),
    Shape("bearer_token", re.compile(r"(?P<k>(?i:\bbearer)\s+)(?P<v>[A-Za-z0-9_\-.=~+/]{16,})"),
          r"bearer", "gitleaks generic bearer token", _keep("k", "v")),
    Shape("wandb_login", re.compile(
        r"(?P<k>(?i:\bwandb\s+login\b)(?:\s+--?(?:relogin|verify|anonymously|cloud)\b"
        r"|\s+--?host[= ]\S+)*\s+)(?P<v>[A-Za-z0-9_\-]{32,})"),
        r"wandb\s+login", "W&B CLI `wandb login KEY` (a 40-hex or v1 API key)", _keep("k", "v")),
    Shape("wandb_key_near_word", re.compile(r"\b[0-9a-f]{40}\b(?=.*(?i:key|token|wandb))"),
          "", "W&B API key (40 hex) named as a key on the same line"),
    # ... or named before it ("wandb api key 0123...", "W&B key: 0123..."), and W&B Server's
    # "local-<40+>" keys (wandb/sdk/lib/wbauth/validation.py: a prefix, '-', 40+ characters)
    Shape("wandb_key_after_word", re.compile(
        r"(?P<k>(?i:wandb|w&b|api[ _-]?key)(?:(?!(?i:commit|sha|revision|hash|checkpoint))[^\n]){0,80}?)"
        r"(?P<v>\b[0-9a-f]{40}\b)"
        r"|(?P<v2>\blocal-[0-9a-f]{40,}\b)"),
        "", "W&B API key named before it on the line; W&B Server local- keys",
        lambda m: f"{m['k']}{REDACTED}" if m["v"] else REDACTED),
    Shape("cli_secret_flag", re.compile(
        rf"(?P<k>(?<![\w-])--?{_KEY_BODY})(?P<sep>=|\s+)(?P<q>[\"']?)(?P<v>(?!-|\[REDACTED\])[^\s\"']+)"),
        "", "GitHub non-provider: passwords on command lines",
        lambda m: (f"{m['k']}{m['sep']}{m['q']}{REDACTED}{m['q']}" if is_secret_key(m["k"])
                   else m[0])),
    Shape("quoted_secret_assignment", re.compile(
        rf"(?P<k>[\"']?{_KEY}[\"']?\]?)(?P<sep>\s*(?:[:=]|=>|:=)\s*)(?P<q>[\"'])"
        r"(?P<v>(?:\\.|(?!(?P=q))[^\\\n])*)(?P=q)", re.IGNORECASE),
        "", "gitleaks generic-api-key; GitHub non-provider: password assignments",
        _keyed),
    Shape("secret_assignment", re.compile(
        rf"(?P<k>\b{_KEY})(?P<sep>\s*[=:]\s*)(?P<q>)"
        r"(?!\[REDACTED\]|(?:basic|bearer|token|digest)\s|(?:true|false|null|none)\b)"
        r"(?P<v>[^\s,;\"'&)\]}}]+)", re.IGNORECASE),
        "", "gitleaks generic-api-key (key=value)", _keyed),
)

#: Lower-case literals at least one of which every shape's match contains: a line with none
#: of them (most training log lines) skips the shapes. Plain ``in`` tests on the lower-cased
#: line: one alternation regex of the same literals ran at 18,000 lines/s, these at over
#: 300,000 (benchmarks/redact_speed.py). Keyed forms (``HF_TOKEN=``, ``--db-pass``,
#: ``AccountKey=``, ``private_key``) are covered by the keyword literals.
_TRIGGER_LITERALS = (
    "pass", "pwd", "secret", "token", "key", "credential", "auth", "sig=", "wandb", "bearer",
    "://", "hooks.slack", "xox", "xapp-", "gh", "glpat-", "sk-", "hf_", "akia", "asia", "abia",
    "acca", "agpa", "aida", "aroa", "aiza", "dapi", "sharedaccess", "k_live_", "k_test_",
    "whsec_", "npm_", "eyj", "discord", "office", "local-", "w&b",
)
_PEM_LINE = re.compile(r"^\s*[A-Za-z0-9+/]{64}\s*$", re.MULTILINE)
#: C0/C1 controls, and the Unicode bidirectional controls (LRM/RLM, ALM, LRE..RLO, LRI..PDI)
#: that reorder what a terminal or browser shows (a run named ``x\u202egnp.exe`` reads as
#: ``xexe.png``; CVE-2021-42574 "Trojan Source").
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f\x80-\x9f\u200e\u200f\u061c\u202a-\u202e\u2066-\u2069]")


def neutralise_controls(text: str) -> str:
    """Show terminal control characters (ESC, BEL, C1 codes...) as visible ``\\xNN`` escapes.

    Run names, tags and log lines are run-controlled: a raw ESC sequence could retitle or
    clear the reader's terminal, or hide text in Markdown/HTML views; a bidi control (shown as
    ``\\uNNNN``) would reorder a name on screen. Newlines and tabs stay.
    """
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100
                        else f"\\u{ord(m.group()):04x}", text)


def _scrub(text: str) -> str:
    low = text.lower()
    if not any(t in low for t in _TRIGGER_LITERALS) and not (
            len(text) >= 64 and _PEM_LINE.search(text)):
        return text
    for shape in SHAPES:
        if shape.name == "pem_body_line":
            if "\n" in text:
                text = "\n".join(shape.pattern.sub(REDACTED, line) for line in text.split("\n"))
            else:
                text = shape.pattern.sub(REDACTED, text)
            continue
        text = shape.pattern.sub(shape.repl or REDACTED, text)
    return text


def redact_text(text: str) -> str:
    """``text`` with every credential-shaped value (:data:`SHAPES`) replaced by
    ``[REDACTED]`` and terminal control characters shown as ``\\xNN``.

    Keys, URL schemes, users and hosts stay readable (``postgresql://u:[REDACTED]@h/db``,
    ``--password [REDACTED]``, ``Authorization: Basic [REDACTED]``).
    """
    if not text:
        return text
    return _scrub(neutralise_controls(text))


def _split_userinfo(rest: str) -> tuple[str, str]:
    """``(userinfo, the rest from the host on)`` of a URL's text after ``scheme://``.

    RFC 3986 forbids ``/`` and ``@`` in user-info unescaped, but people write passwords with
    them (``postgresql://u:pa/ss@db/x``, ``u:p@ss@db``): the authority is taken up to the
    last ``@`` before the first ``/?#``, and when the authority reads ``user:...`` (not
    ``host:PORT``) with no ``@`` before the first ``/``, up to the next ``@`` after it."""
    end = len(rest)
    for c in "/?#":
        k = rest.find(c)
        if k != -1:
            end = min(end, k)
    authority = rest[:end]
    if "@" in authority:
        k = authority.rfind("@")
        return rest[:k], rest[k + 1:]
    user, colon, after = authority.partition(":")
    if colon and not after.isdigit() and "[" not in user and "@" in rest[end:]:
        k = rest.index("@", end)
        more, host = _split_userinfo(rest[k + 1:])  # a password holding both '/' and '@'
        return (rest[:k] + ("@" + more if more else "")), host
    return "", rest


def public_url(uri: str) -> str:
    """``uri`` as mlaudit may write it anywhere (tags, reports, links, notifications, state
    files, log lines): without user-info and without credential query parameters, scrubbed
    by :func:`redact_text`. ``postgresql://u:pw@db:5432/mlflow?sslkey=..&password=x`` ->
    ``postgresql://db:5432/mlflow?sslkey=..``; ``https://u:p/w@d@h/x`` -> ``https://h/x``.
    Every URL mlaudit writes passes through this one function (report run links, the
    registry gate's ``mlaudit.report`` tag, live ``RunInfo``, watch state).

    Anything that is not a ``scheme://`` URL (a path, a name) is returned scrubbed by
    :func:`redact_text`.
    """
    if not uri or "://" not in uri:
        return redact_text(uri)
    scheme, _, rest = uri.partition("://")
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9+.\-]*", scheme):
        return redact_text(uri)
    _, rest = _split_userinfo(rest)
    try:
        u = urlsplit(f"{scheme}://{rest}")
    except ValueError:
        return redact_text(f"{scheme}://{rest}")
    query = "&".join(p for p in u.query.split("&")
                     if p and not is_secret_key(p.partition("=")[0]))
    out = f"{scheme}://{u.netloc}{u.path}" + (f"?{query}" if query else "")
    return redact_text(out + (f"#{u.fragment}" if u.fragment else ""))


#: the earlier name of :func:`public_url`
strip_uri_credentials = public_url


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


def redact_obj(obj: Any) -> Any:
    """A copy of a JSON-like structure with credential keys' string values replaced and every
    other string scrubbed (lists, dicts, tuples walked; other values kept)."""
    if isinstance(obj, str):
        return redact_text(obj)
    if isinstance(obj, (list, tuple)):
        return [redact_obj(x) for x in obj]
    if isinstance(obj, dict):
        return {k: (REDACTED if isinstance(v, str) and is_secret_key(str(k)) else redact_obj(v))
                for k, v in obj.items()}
    return obj


_walk = redact_obj  # the old private name


def redact_report(report):
    """A copy of ``report`` with every string field scrubbed (the report model is re-validated)."""
    data = redact_obj(report.model_dump(mode="json"))
    return type(report).model_validate(data)
