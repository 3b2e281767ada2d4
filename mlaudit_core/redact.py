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

Catalogue source and version: the provider detectors of detect-secrets 1.5.0 (Yelp,
Apache-2.0; ``detect_secrets/plugins/*.py``: AWS, Azure storage, basic auth, Cloudant via the
URL rule, Discord bot token, GitHub, GitLab, IBM Cloud IAM / COS HMAC and SoftLayer via the
key-name rule, JWT, Mailchimp, npm, OpenAI, private keys, PyPI, SendGrid, Slack, SoftLayer
API URL, Square OAuth, Stripe, Telegram bot token, Twilio, Artifactory) ported as regular
expressions with the plugin named in each :class:`Shape`'s ``source``; detect-secrets'
keyword list in the key-name rule; GitHub secret scanning's and gitleaks' provider patterns
for the LLM keys detect-secrets 1.5.0 predates (Anthropic, Groq, xAI, Perplexity, Replicate,
NVIDIA, Fireworks, Together, Cerebras, DeepSeek/OpenRouter ``sk-`` hex keys). detect-secrets
is not called as a library: its ``scan_line`` runs every plugin (and two entropy scans) on
every line; the ported expressions behind the literal pre-check below keep redaction within
the share of parsing time it had (``benchmarks/redact_speed.py``). Its high-entropy string
detectors are not ported: hashes, run ids and checkpoint names in logs are high-entropy too.

Speed: a line is first checked for the shapes' keyword literals (``pass``, ``token``,
``://``, ``login``...) and, on a line holding a run of 20+ token characters, for the token
prefixes (``xox``, ``AKIA``, ``hf_``...) and the literal-less token shapes; a line without
any (most training log lines) only has its control characters neutralised.
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
    r"credential|creds?(?![a-z])|auth|session[_-]?key|client[_-]?secret|webhook|account[_-]?key|"
    r"sas[_-]?key|signing[_-]?key|encryption[_-]?key|conn(ection)?[_-]?str(ing)?|dsn|"
    r"contrase(n|\u00f1)a|"
    # ``*_pw``: DB_PW, smtp.pw
    r"[a-z0-9][_.\-]pw$)",
    re.IGNORECASE,
)
#: ``*key*`` as a name part (``KAGGLE_KEY``, ``AZURE_OPENAI_KEY``, ``ssh.key``, camelCase
#: ``openaiKey``): a credential only when its value is token-like (:func:`_tokenish`), as
#: training code names metric keys the same way (``grad_key = "train/grad_norm"``)
_WEAK_KEY = re.compile(
    r"[a-z0-9][_.\-]keys?$|^keys?[_.\-](secret|value|data|material)$", re.IGNORECASE
)
_CAMEL_KEY = re.compile(r"[a-z0-9]Keys?$")
_TOKENISH = re.compile(r"(?=[^\s/]*\d)[A-Za-z0-9_\-+=.:~]{12,}")


def _tokenish(value: Any) -> bool:
    """A value that can be a key: 12+ characters without spaces or ``/``, holding a digit
    (``6f1c0e2d...``, ``sk_...``), not a metric name (``train/grad_norm``, ``val_loss``)."""
    return isinstance(value, str) and bool(_TOKENISH.fullmatch(value.strip().strip("\"'")))


#: Key names that contain a credential word without being one (token counts, tokenizers,
#: author names, pass counts).
_NOT_SECRET_KEY = re.compile(
    r"(tokens|tokenizer|tokenization|token_?ids?|token_?count|token_?len(gth)?|num_?tokens?|"
    r"authors?|authored|passes|num_?pass|pass_?rate|pass_?at|bypass|passthrough|compass|"
    r"auth_?(type|method|mode|scheme)|oauth_?(url|scope)|"
    # a key *naming* something (a metric, a column, a sort or cache key), not a key *to* it
    r"(metric|monitor|sort|primary|foreign|loss|label|input|output|text|image|target|column|dict|"
    r"cache|lookup|group|partition|shard|hash|join|index|sequence|prompt|data|dataset|model|"
    r"config|feature|field|state|batch|hot|map|mapping|row|record|ref|log|sample|split|"
    r"task|table|sample|id|name|dict|ckpt|checkpoint)[_.\-]?keys?)$",
    re.IGNORECASE,
)
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
    r"count|len|length|size|dim|rate)$)",
    re.IGNORECASE,
)


def is_secret_key(key: str, value: Any = None) -> bool:
    """True when a param/tag/config key names a credential (e.g. ``db_password``,
    ``WANDB_API_KEY``, ``AccountKey``, ``KAGGLE_KEY``, ``gcp_creds``, ``DB_PW``), False for
    ``max_tokens``, ``tokenizer``, ``author``, ``tokens_per_sec``, ``mean_token_accuracy``,
    ``pad_token``, ``metric_key``, ``keypoint_ap``.

    The rules: the name holds ``password``/``passwd``/``pwd``/``secret``/``token``/``creds``/
    ``credential``/``auth``/... (detect-secrets 1.5.0 KeywordDetector's list plus the issue-33
    key-name rules ``*key*`` as a name part, ``*_pw``), and is not a count, rate, tokenizer
    setting or a key that names a metric or column (:data:`_NOT_SECRET_KEY`, :data:`_METRIC_KEY`).
    A ``*_key`` name (:data:`_WEAK_KEY`) counts only with a token-like ``value``
    (:func:`_tokenish`; ``grad_key = "train/grad_norm"`` is not a credential); without a
    value it does not.
    """
    k = key.strip().strip("\"'-[]")
    if _NOT_SECRET_KEY.search(k) or _METRIC_KEY.search(k):
        return False
    if _SECRET_KEY.search(k):
        return True
    return bool(_WEAK_KEY.search(k) or _CAMEL_KEY.search(k)) and _tokenish(value)


@dataclass(frozen=True)
class Shape:
    """One credential shape: ``pattern`` (compiled), and how a match is rewritten (``repl``:
    a function of the match, default the whole match becomes :data:`REDACTED`). ``trigger``
    documents what every match contains (the pre-check itself is :func:`_candidate`);
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


#: commands whose ``-p`` (``-a`` for redis-cli) is a password, or a ``-u USER`` beside it
_LOGIN_P = re.compile(
    r"\b(?:mysql|mysqldump|mysqladmin|mariadb|mariadb-dump|sshpass|htpasswd|(?:docker|podman|"
    r"nerdctl|buildah|skopeo|oras|helm\s+registry|crane|regctl)\s+login)\b|"
    r"(?<![\w-])(?:-u|--user(?:name)?)(?:[\s=]|(?=\w))"
)
_LOGIN_A = re.compile(r"\b(?:redis-cli|valkey-cli|keydb-cli)\b")


def _login_flag(m: re.Match) -> bool:
    """A ``-p`` / ``-a`` match is a password flag on this line (see ``cli_short_password``)."""
    line = m.string
    return bool((_LOGIN_A if m["k"].endswith("a") else _LOGIN_P).search(line))


#: Artifactory's ``AP...`` password form is taken only on a line that names it
_JFROG = re.compile(r"(?i)artifactory|jfrog")


def _keyed(m: re.Match) -> str:
    """``key<sep>value`` with the value redacted when the key names a credential."""
    if not is_secret_key(m["k"], m["v"]):
        return m[0]
    return f"{m['k']}{m['sep']}{m['q'] or ''}{REDACTED}{m['q'] or ''}"


_KEYWORDS = (
    r"pass(?:word|wd|phrase)?|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|"
    r"private[_-]?key|credentials?|creds?|auth[\w-]*|account[_-]?key|client[_-]?secret|"
    r"session[_-]?key|signing[_-]?key|sas[_-]?key|contrase(?:n|\u00f1)a|"
    r"[_.\-]key|Key|[_.\-]pw\b"
)
#: a key: a word that contains a credential keyword (``db_password``, ``HF_TOKEN``, ``x.api-key``).
#: The lookahead finds the keyword, then the word is taken whole and never given back
#: (possessive): a lazy-then-greedy pair over the same characters backtracks quadratically
#: on a long word (a 12 kB ``password_password_...`` took 5 s; ``benchmarks/redact_speed.py``).
#: Every separator after a key lies outside the word's characters, so a match is unchanged.
_KEY_BODY = rf"(?=[\w.\-]*?(?:{_KEYWORDS}))[\w.\-]++"
_KEY = rf"(?<![\w.\-]){_KEY_BODY}"  # starting at a word start only (the speed of a long line)

SHAPES: tuple[Shape, ...] = (
    # --- private keys (GitHub non-provider "private key"; gitleaks private-key) ---------------
    Shape(
        "pem_private_key_block",
        re.compile(
            r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----.*?"
            r"(?:-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----|$)",
            re.DOTALL,
        ),
        "PRIVATE KEY",
        "gitleaks private-key; GitHub non-provider patterns",
    ),
    # a key's body lines, when a log prints the block one line at a time
    # (the last word of a line: a log or a context listing may put a prefix before it,
    # ``121:   MIIEvQ...``, ``2026-01-01 INFO MIIEvQ...``)
    Shape(
        "pem_body_line",
        re.compile(
            r"(?<![A-Za-z0-9+/=])(?=[A-Za-z0-9+/]*[A-Z])(?=[A-Za-z0-9+/]*[a-z])(?=[A-Za-z0-9+/]*[0-9])"
            r"[A-Za-z0-9+/]{64}(?=\s*$)"
        ),
        "",
        "PEM (RFC 7468) 64-column body",
    ),
    # --- URLs ------------------------------------------------------------------------------------
    Shape(
        "slack_webhook_url",
        re.compile(
            r"(?P<h>hooks\.slack(?:-gov)?\.com/)(?P<v>(?:services|workflows|triggers)/[A-Za-z0-9+/_\-]{8,})"
        ),
        r"hooks\.slack",
        "gitleaks slack-webhook-url; GitHub: Slack incoming webhook URL",
        _keep("h", "v"),
    ),
    Shape(
        "discord_webhook_url",
        re.compile(r"(?P<h>discord(?:app)?\.com/api/webhooks/)(?P<v>\d{5,30}/[A-Za-z0-9_\-]{20,})"),
        r"discord",
        "TruffleHog DiscordWebhook",
        _keep("h", "v"),
    ),
    Shape(
        "teams_webhook_url",
        re.compile(
            # the host starts at a word start: from every position of a long word ``[\w-]+``
            # would scan to its end (quadratic on a 1 MB line)
            r"(?P<h>(?<![\w-])(?:[\w-]++\.webhook|outlook)\.office(?:365)?\.com/webhook(?:b2)?/)(?P<v>[^\s\"'<>]{16,})"
        ),
        r"office",
        "TruffleHog MicrosoftTeamsWebhook",
        _keep("h", "v"),
    ),
    # an AWS key pair written as URL user-info (s3://AKIA...:SECRET@bucket): the secret holds '/'
    Shape(
        "aws_key_pair_userinfo",
        re.compile(r"(?P<k>\b(?:AKIA|ASIA)[A-Z0-9]{16}:)(?P<v>[A-Za-z0-9/+=]{40})(?=@)"),
        r"akia|asia",
        "GitHub: AWS secret access key (paired with the key ID)",
        _keep("k", "v"),
    ),
    # the password may hold '/' and '@' (written unescaped): it runs to the '@' after which a
    # host follows (then '/', '?', '#', a quote, a space or the end); a ``host:PORT/...@`` path
    # is not a password
    Shape(
        "uri_password",
        re.compile(
            r"(?P<s>\b[a-zA-Z][a-zA-Z0-9+.\-]{1,30}://)(?P<u>[^\s/:@\"'<>]*):"
            r"(?!\d{1,5}(?:[/?#]|$))(?P<v>[^\s\"'<>]+?)@(?=[^\s/@\"'<>?#]*(?:[\s/\"'<>?#]|$))"
        ),
        r"://",
        "gitleaks authenticated-url; TruffleHog URI; detect-secrets 1.5.0 "
        "BasicAuthDetector; GitHub: connection strings",
        lambda m: f"{m['s']}{m['u']}:{REDACTED}@",
    ),
    # a user-only token (https://TOKEN@host, git's x-access-token form is the keyed one above)
    Shape(
        "uri_token_user",
        re.compile(r"(?P<s>\b(?:https?|git|ssh|wss?)://)(?P<v>[A-Za-z0-9_\-.~]{20,})@"),
        r"://",
        "gitleaks authenticated-url (token as the URL user)",
        lambda m: f"{m['s']}{REDACTED}@",
    ),
    Shape(
        "telegram_bot_url",
        re.compile(
            r"(?P<h>(?:api\.telegram\.org)?/(?:file/)?bot)(?P<v>\d{5,12}:[A-Za-z0-9_\-]{30,})"
        ),
        r"telegram|/bot",
        "Telegram Bot API URL (core.telegram.org/bots/api); detect-secrets 1.5.0 "
        "TelegramBotTokenDetector",
        _keep("h", "v"),
    ),
    # --- provider tokens (GitHub secret scanning's supported patterns) -------------------------
    Shape(
        "slack_token",
        re.compile(r"\bxox[abposrec]-[A-Za-z0-9\-]{10,}|\bxapp-\d-[A-Za-z0-9\-]{10,}"),
        r"xox|xapp-",
        "gitleaks slack-*-token; GitHub: Slack API token",
    ),
    Shape(
        "github_token",
        re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}|\bgithub_pat_[A-Za-z0-9_]{40,}"),
        r"gh[pousr]_|github_pat_",
        "GitHub: personal access / OAuth / app tokens",
    ),
    Shape(
        "gitlab_token",
        re.compile(
            r"\b(?:(?:glpat|gldt|glft|glsoat|glrt|glcbt|glimt|glptt|glagent|gloas)-"
            r"[A-Za-z0-9_\-]{20,}|GR1348941[A-Za-z0-9_\-]{20,})(?![\w-])"
        ),
        r"glpat-|gldt-|glft-|glsoat-|glrt-|glcbt-|glimt-|glptt-|glagent-|gloas-|gr1348941",
        "gitleaks gitlab-pat; detect-secrets 1.5.0 GitLabTokenDetector",
    ),
    # random base62/base64url bodies (an upper-case letter and a digit), or a 32+ character
    # lower-case hex/base36 body (DeepSeek, OpenRouter, Moonshot, many OpenAI-compatible
    # gateways); a scikit-learn name ("sk-learn-...-2024") has neither
    Shape(
        "openai_key",
        re.compile(
            r"\bsk-(?:proj-|ant-(?:api|admin)\d\d-|ant-|svcacct-|admin-|or-v1-)?"
            r"(?:(?=[A-Za-z0-9_\-]*[A-Z])(?=[A-Za-z0-9_\-]*[0-9])[A-Za-z0-9_\-]{20,}"
            r"|(?=[a-z0-9]*[0-9])(?=[a-z0-9]*[a-z])[a-z0-9]{32,}(?![A-Za-z0-9_\-]))"
        ),
        r"sk-",
        "GitHub: OpenAI API key, Anthropic API key; gitleaks openai-api-key, "
        "anthropic-api-key; detect-secrets 1.5.0 OpenAIDetector (T3BlbkFJ); DeepSeek/OpenRouter "
        "sk- keys",
    ),
    Shape(
        "llm_provider_key",
        re.compile(
            r"\b(?:gsk_[A-Za-z0-9]{40,}|xai-[A-Za-z0-9]{40,}|pplx-[A-Za-z0-9]{40,}|r8_[A-Za-z0-9]{30,}"
            r"|nvapi-[A-Za-z0-9_\-]{40,}|fw_[A-Za-z0-9]{20,}|tgp_v1_[A-Za-z0-9_\-]{30,}"
            r"|csk-[a-z0-9]{40,})\b"
        ),
        r"gsk_|xai-|pplx-|r8_|nvapi-|fw_|tgp_v1_|csk-",
        "GitHub secret scanning: Groq, xAI, Perplexity (gitleaks perplexity-api-key), "
        "Replicate, NVIDIA, Fireworks, Together AI, Cerebras API keys",
    ),
    Shape(
        "huggingface_token",
        re.compile(r"\bhf_[A-Za-z0-9]{30,}"),
        r"hf_",
        "GitHub: Hugging Face user access token",
    ),
    Shape(
        "aws_access_key_id",
        re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA)[A-Z0-9]{16}\b"),
        r"AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA",
        "gitleaks aws-access-token; GitHub: AWS access key ID",
    ),
    Shape(
        "aws_secret_access_key",
        re.compile(
            r"(?P<k>(?i:aws_?secret_?access_?key|secret_?access_?key)[\"']?)(?P<sep>\s*[:=]\s*|\s+)"
            r"(?P<q>[\"']?)(?P<v>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])"
        ),
        r"secret_?access_?key",
        "GitHub: AWS secret access key (paired with the key ID)",
        _keep("k", "sep", "q", "v"),
    ),
    Shape(
        "google_api_key", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}"), r"AIza", "GitHub: Google API key"
    ),
    Shape(
        "databricks_token",
        re.compile(r"\bdapi[0-9a-f]{32}(?:-\d)?\b"),
        r"dapi",
        "gitleaks databricks-api-token; GitHub: Databricks access token",
    ),
    Shape(
        "azure_storage_key",
        re.compile(
            r"(?P<k>(?i:AccountKey|SharedAccessKey|SharedAccessSignature|sig)=)(?P<v>[^;\s\"'&]{16,})"
        ),
        r"AccountKey=|SharedAccess|sig=",
        "GitHub: Azure storage account key / SAS; TruffleHog AzureStorage",
        _keep("k", "v"),
    ),
    Shape(
        "stripe_key",
        re.compile(r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}"),
        r"k_live_|k_test_",
        "gitleaks stripe-access-token; GitHub: Stripe API key",
    ),
    Shape(
        "webhook_signing_secret",
        re.compile(r"\bwhsec_[A-Za-z0-9+/=]{16,}"),
        r"whsec_",
        "Stripe / Standard Webhooks signing secret",
    ),
    Shape(
        "npm_token",
        re.compile(r"\bnpm_[A-Za-z0-9]{36}\b"),
        r"npm_",
        "gitleaks npm-access-token; GitHub: npm access token",
    ),
    Shape(
        "jwt",
        re.compile(r"\beyJ[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}"),
        r"eyJ",
        "gitleaks jwt; detect-secrets 1.5.0 JwtTokenDetector",
    ),
    # --- ported from detect-secrets 1.5.0 (Yelp, Apache-2.0), detect_secrets/plugins/*.py:
    # each plugin's ``denylist`` regular expression, bounded for log lines --------------------
    # (its ``AP[0-9A-F]...`` password form matches ordinary words, "APPLE12345678": taken only
    # on a line that names Artifactory or JFrog)
    Shape(
        "artifactory_token",
        re.compile(
            r"(?:(?<=[\s=:\"])|^)(?:AKC[a-zA-Z0-9]{10,}|AP[\dABCDEF][a-zA-Z0-9]{8,})(?=[\s\"]|$)"
        ),
        "akc|artifactory|jfrog",
        "detect-secrets 1.5.0 ArtifactoryDetector",
        lambda m: REDACTED if m[0].startswith("AKC") or _JFROG.search(m.string) else m[0],
    ),
    Shape(
        "discord_bot_token",
        re.compile(r"\b[MNO][a-zA-Z\d_\-]{23,25}\.[a-zA-Z\d_\-]{6}\.[a-zA-Z\d_\-]{27}\b"),
        "",
        "detect-secrets 1.5.0 DiscordBotTokenDetector",
    ),
    Shape(
        "mailchimp_key",
        re.compile(r"\b[0-9a-z]{32}-us[0-9]{1,2}\b"),
        r"-us",
        "detect-secrets 1.5.0 MailchimpDetector",
    ),
    Shape(
        "pypi_token",
        re.compile(r"\bpypi-(?:AgEIcHlwaS5vcmc|AgENdGVzdC5weXBpLm9yZw)[A-Za-z0-9_\-]{50,}"),
        r"pypi-ag",
        "detect-secrets 1.5.0 PypiTokenDetector",
    ),
    Shape(
        "sendgrid_key",
        re.compile(r"\bSG\.[a-zA-Z0-9_\-]{22}\.[a-zA-Z0-9_\-]{43}"),
        r"sg.",
        "detect-secrets 1.5.0 SendGridDetector",
    ),
    Shape(
        "square_oauth_secret",
        re.compile(r"\bsq0csp-[0-9A-Za-z\\\-_]{43}"),
        r"sq0csp-",
        "detect-secrets 1.5.0 SquareOAuthDetector",
    ),
    Shape(
        "twilio_key",
        re.compile(r"\b(?:AC|SK)[a-z0-9]{32}\b"),
        "",
        "detect-secrets 1.5.0 TwilioKeyDetector",
    ),
    Shape(
        "telegram_bot_token",
        re.compile(r"\b\d{8,10}:[0-9A-Za-z_\-]{35}\b"),
        "",
        "detect-secrets 1.5.0 TelegramBotTokenDetector",
    ),
    Shape(
        "softlayer_api_url",
        re.compile(r"(?P<h>(?i:https?://api\.softlayer\.com/soap/v3(?:\.1)?/))(?P<v>[a-z0-9]{64})"),
        r"softlayer",
        "detect-secrets 1.5.0 SoftlayerDetector",
        _keep("h", "v"),
    ),
    Shape(
        "putty_private_key",
        re.compile(r"PuTTY-User-Key-File-\d:.*", re.DOTALL),
        r"putty-user-key-file",
        "detect-secrets 1.5.0 PrivateKeyDetector",
    ),
    # --- HTTP auth, CLI and assignment forms ---------------------------------------------------
    Shape(
        "authorization_header",
        re.compile(
            r"(?P<k>(?i:\b(?:proxy-)?authorization)[\"']?\s*[:=]\s*[\"']?(?i:(?:basic|bearer|token|digest|"
            r"apikey)\s+)?)(?P<v>[^\s\"',;]+)"
        ),
        r"authorization",
        "GitHub non-provider: HTTP basic/bearer authentication header",
        _keep("k", "v"),
    ),
    Shape(
        "bearer_token",
        re.compile(r"(?P<k>(?i:\bbearer)\s+)(?P<v>[A-Za-z0-9_\-.=~+/]{16,})"),
        r"bearer",
        "gitleaks generic bearer token",
        _keep("k", "v"),
    ),
    Shape(
        "wandb_login",
        re.compile(
            r"(?P<k>(?i:\bwandb\s+login\b)(?:\s+--?(?:relogin|verify|anonymously|cloud)\b"
            r"|\s+--?host[= ]\S+)*\s+)(?P<v>[A-Za-z0-9_\-]{32,})"
        ),
        r"wandb\s+login",
        "W&B CLI `wandb login KEY` (a 40-hex or v1 API key)",
        _keep("k", "v"),
    ),
    Shape(
        "wandb_key_near_word",
        re.compile(r"\b[0-9a-f]{40}\b(?=.*(?i:key|token|wandb))"),
        "",
        "W&B API key (40 hex) named as a key on the same line",
    ),
    # ... or named before it ("wandb api key 0123...", "W&B key: 0123..."), and W&B Server's
    # "local-<40+>" keys (wandb/sdk/lib/wbauth/validation.py: a prefix, '-', 40+ characters)
    Shape(
        "wandb_key_after_word",
        re.compile(
            r"(?P<k>(?i:wandb|w&b|api[ _-]?key)(?:(?!(?i:commit|sha|revision|hash|checkpoint))[^\n]){0,80}?)"
            r"(?P<v>\b[0-9a-f]{40}\b)"
            r"|(?P<v2>\blocal-[0-9a-f]{40,}\b)"
        ),
        "",
        "W&B API key named before it on the line; W&B Server local- keys",
        lambda m: f"{m['k']}{REDACTED}" if m["v"] else REDACTED,
    ),
    # ``mysql -u root -pSECRET``, ``docker login -u me -p SECRET``, ``sshpass -p SECRET``,
    # ``redis-cli -a SECRET``: a short flag is a password only beside a login (``-p 8080`` is a
    # port elsewhere; a number is never taken)
    Shape(
        "cli_short_password",
        re.compile(
            r"(?P<k>(?<![\w-])-[pa])(?P<sep> ?)(?P<v>(?!\d+(?:\s|$))(?!-|\[REDACTED\])[^\s\"']{3,})"
        ),
        "",
        "GitHub non-provider: passwords on command lines (mysql, docker login, sshpass, redis-cli)",
        lambda m: f"{m['k']}{m['sep']}{REDACTED}" if _login_flag(m) else m[0],
    ),
    Shape(
        "cli_secret_flag",
        re.compile(
            rf"(?P<k>(?<![\w-])--?{_KEY_BODY})(?P<sep>=|\s+)"
            r"(?:(?P<q>[\"'])(?P<qv>(?!\[REDACTED\])[^\"'\n]+)(?P=q)"
            r"|(?P<v>(?!-|\[REDACTED\])[^\s\"']+))"
        ),
        "",
        "GitHub non-provider: passwords on command lines (bare or quoted, the quoted value whole)",
        lambda m: (
            f"{m['k']}{m['sep']}{m['q'] or ''}{REDACTED}{m['q'] or ''}"
            if is_secret_key(m["k"], m["qv"] or m["v"])
            else m[0]
        ),
    ),
    Shape(
        "quoted_secret_assignment",
        re.compile(
            rf"(?P<k>[\"']?{_KEY}[\"']?\]?)(?P<sep>\s*(?:[:=]|=>|:=)\s*)(?P<q>[\"'])"
            r"(?P<v>(?:\\.|(?!(?P=q))[^\\\n])*)(?P=q)",
            re.IGNORECASE,
        ),
        "",
        "gitleaks generic-api-key; GitHub non-provider: password assignments",
        _keyed,
    ),
    Shape(
        "secret_assignment",
        re.compile(
            rf"(?P<k>\b{_KEY})(?P<sep>\s*[=:]\s*)(?P<q>)"
            r"(?!\[REDACTED\]|(?:basic|bearer|token|digest)\s|(?:true|false|null|none)\b)"
            r"(?P<v>[^\s,;\"'&)\]}}]+)",
            re.IGNORECASE,
        ),
        "",
        "gitleaks generic-api-key (key=value)",
        _keyed,
    ),
)

#: Lower-case literals at least one of which every shape's match contains: a line with none
#: of them (most training log lines) skips the shapes. Plain ``in`` tests on the lower-cased
#: line: one alternation regex of the same literals ran at 18,000 lines/s, these at over
#: 300,000 (benchmarks/redact_speed.py). Keyed forms (``HF_TOKEN=``, ``--db-pass``,
#: ``AccountKey=``, ``private_key``) are covered by the keyword literals.
_TRIGGER_LITERALS = (
    "pass",
    "pwd",
    "secret",
    "token",
    "key",
    "cred",
    "auth",
    "sig=",
    "wandb",
    "w&b",
    "bearer",
    "://",
    "_pw",
    ".pw",
    "contrase",
    # cli_short_password's login contexts (its -p / -a flags are too common to trigger on;
    # sshpass and htpasswd hold "pass", redis-cli and the like "-cli")
    "mysql",
    "mariadb",
    "login",
    " -u",
    "--user",
    "-cli",
)
#: Token prefixes and provider names: every secret they mark is a run of 20+ token characters
#: (``xoxb-...``, ``AKIA`` + 16, ``hf_`` + 30, a Discord or Teams webhook path, a Telegram bot
#: token...), so they are looked for only on a line with such a run (:data:`_LONG_RUN`, one
#: regex search), which most training log lines do not have.
_TOKEN_LITERALS = (
    "xox",
    "xapp-",
    "gh",
    "glpat-",
    "gldt-",
    "glft-",
    "glsoat-",
    "glrt-",
    "glcbt-",
    "glimt-",
    "glptt-",
    "glagent-",
    "gloas-",
    "gr1348941",
    "sk-",
    "hf_",
    "akia",
    "asia",
    "abia",
    "acca",
    "agpa",
    "aida",
    "aroa",
    "a3t",
    "aiza",
    "dapi",
    "k_live_",
    "k_test_",
    "whsec_",
    "npm_",
    "local-",
    "/bot",
    "gsk_",
    "xai-",
    "pplx-",
    "r8_",
    "nvapi-",
    "fw_",
    "tgp_v1_",
    "csk-",
    "-us",
    "pypi-ag",
    "sg.",
    "sq0csp-",
    "akc",
    "eyj",
    "hooks.slack",
    "discord",
    "office",
    "telegram",
    "softlayer",
    "putty",
    "artifactory",
    "jfrog",
    "sharedaccess",
)
_LONG_RUN = re.compile(r"[A-Za-z0-9_\-+/]{20}")
#: the catalogue's shapes without a literal every match holds (detect-secrets' Twilio,
#: Telegram and Discord bot tokens), searched only on a line with a long run
_NO_LITERAL = re.compile(
    r"\d{8,10}:[0-9A-Za-z_\-]{35}|[MNO][a-zA-Z\d_\-]{23,25}\.[a-zA-Z\d_\-]{6}\.|"
    r"\b(?:AC|SK)[a-z0-9]{32}\b"
)
_PEM_LINE = re.compile(r"(?<![A-Za-z0-9+/=])[A-Za-z0-9+/]{64}\s*$", re.MULTILINE)
#: C0/C1 controls, and the Unicode bidirectional controls (LRM/RLM, ALM, LRE..RLO, LRI..PDI)
#: that reorder what a terminal or browser shows (a run named ``x\u202egnp.exe`` reads as
#: ``xexe.png``; CVE-2021-42574 "Trojan Source").
_CONTROL = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f\x80-\x9f\u200e\u200f\u061c\u202a-\u202e\u2066-\u2069]"
)


def neutralise_controls(text: str) -> str:
    """Show terminal control characters (ESC, BEL, C1 codes...) as visible ``\\xNN`` escapes.

    Run names, tags and log lines are run-controlled: a raw ESC sequence could retitle or
    clear the reader's terminal, or hide text in Markdown/HTML views; a bidi control (shown as
    ``\\uNNNN``) would reorder a name on screen. Newlines and tabs stay.
    """
    return _CONTROL.sub(
        lambda m: (
            f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}"
        ),
        text,
    )


def _candidate(text: str) -> bool:
    """Whether ``text`` may hold a credential: a keyword literal, or a run of 20+ token
    characters with a token prefix, a literal-less token shape or a PEM body line."""
    low = text.lower()
    if any(t in low for t in _TRIGGER_LITERALS):
        return True
    if len(text) < 20 or not _LONG_RUN.search(text):
        return False
    return (
        any(t in low for t in _TOKEN_LITERALS)
        or bool(_NO_LITERAL.search(text))
        or (len(text) >= 64 and bool(_PEM_LINE.search(text)))
    )


def _scrub(text: str) -> str:
    if not _candidate(text):
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
        return rest[:k], rest[k + 1 :]
    user, colon, after = authority.partition(":")
    if colon and not after.isdigit() and "[" not in user and "@" in rest[end:]:
        k = rest.index("@", end)
        more, host = _split_userinfo(rest[k + 1 :])  # a password holding both '/' and '@'
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
    query = "&".join(
        p
        for p in u.query.split("&")
        if p and not is_secret_key(p.partition("=")[0], p.partition("=")[2])
    )
    out = f"{scheme}://{u.netloc}{u.path}" + (f"?{query}" if query else "")
    return redact_text(out + (f"#{u.fragment}" if u.fragment else ""))


#: the earlier name of :func:`public_url`
strip_uri_credentials = public_url


def redact_mapping(values: dict[str, Any]) -> dict[str, Any]:
    """Replace whole values under credential-like keys; scrub the rest as text."""
    out: dict[str, Any] = {}
    for k, v in values.items():
        if is_secret_key(str(k), v) and not isinstance(v, (int, float, bool)):
            out[k] = REDACTED
        elif isinstance(v, str):
            out[k] = redact_text(v)
        else:
            out[k] = v
    return out


def redact_obj(obj: Any, *, keys: bool = False) -> Any:
    """A copy of a JSON-like structure with credential keys' string values replaced and every
    other string scrubbed (lists, dicts, tuples walked; other values kept). ``keys``: the dict
    keys are scrubbed too (:func:`redact_tree`)."""
    if isinstance(obj, str):
        return redact_text(obj)
    if isinstance(obj, (list, tuple)):
        return [redact_obj(x, keys=keys) for x in obj]
    if isinstance(obj, dict):
        return {
            (redact_text(str(k)) if keys else k): (
                REDACTED
                if isinstance(v, str) and is_secret_key(str(k), v)
                else redact_obj(v, keys=keys)
            )
            for k, v in obj.items()
        }
    return obj


def redact_tree(obj: Any) -> Any:
    """:func:`redact_obj` with the dict keys scrubbed too: for documents whose keys are
    run-controlled text (the triage's param names and values in ``--format json``, the
    written-back triage artifacts, the ``experiment_triage`` tool's answer)."""
    return redact_obj(obj, keys=True)


_walk = redact_obj  # the old private name


def redact_report(report):
    """A copy of ``report`` with every string field scrubbed (the report model is re-validated)."""
    data = redact_obj(report.model_dump(mode="json"))
    return type(report).model_validate(data)
