"""The credential catalogue of mlaudit_core.redact: every shape has a positive example (the
secret part must disappear, the readable part stay) and a negative one (left exactly as it is),
and redaction reaches the channels that print or store run-controlled text: the batch summary
table, the state file, the report artifacts. The shapes follow GitHub secret scanning, gitleaks
and TruffleHog's documented lists; the strings below are made up (no real credentials)."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from mlaudit_core.redact import (
    REDACTED,
    SHAPES,
    is_secret_key,
    redact_obj,
    redact_text,
    strip_uri_credentials,
)

ROOT = Path(__file__).resolve().parent.parent
PEM_BODY = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj"
GCP_JSON = (
    '{"type": "service_account", "project_id": "p", "private_key_id": "4f2a", '
    '"private_key": "-----BEGIN PRIVATE KEY-----\\n' + PEM_BODY + "\\nMzEfYyjiWA4R"
    '\\n-----END PRIVATE KEY-----\\n", "client_email": "sa@p.iam.gserviceaccount.com"}'
)

# shape -> (positive text, the secret that must vanish, what must remain), negative text
CASES: dict[str, tuple[tuple[str, str, str], str]] = {
    "pem_private_key_block": (
        (
            "key: -----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA0Z\n-----END RSA PRIVATE KEY-----",
            "MIIEpAIBAAKCAQEA0Z",
            "key: ",
        ),
        "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIE\n-----END CERTIFICATE-----",
    ),
    "pem_body_line": (
        (f"  {PEM_BODY}  ", PEM_BODY, ""),
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    ),
    "slack_webhook_url": (
        (
            "posting to https://hooks.slack.com/services/T0ABCDEFG/B0ABCDEFG/abcdEFGHijklMNOPqrstUVWX",
            "abcdEFGHijklMNOPqrstUVWX",
            "https://hooks.slack.com/",
        ),
        "see https://api.slack.com/messaging/webhooks for setup",
    ),
    "uri_password": (
        (
            "redis.exceptions.ConnectionError: redis://:s3cr3tPW@cache:6379/0",
            "s3cr3tPW",
            "redis://:[REDACTED]@cache:6379/0",
        ),
        "connect to redis://cache:6379/0 at http://host:5000/path",
    ),
    "slack_token": (
        ("SLACK_BOT=xoxb-123456789012-abcdefghijkl", "xoxb-123456789012", ""),
        "the xox format is documented",
    ),
    "github_token": (
        ("push with ghp_" + "a1B2" * 9, "ghp_" + "a1B2" * 9, "push with "),
        "ghp_short",
    ),
    "gitlab_token": (("glpat-abcdefghij0123456789", "glpat-abcdefghij0123456789", ""), "glpat-x"),
    "openai_key": (
        (
            "openai.AuthenticationError: sk-proj-abcdefghij0123456789ABCD",
            "abcdefghij0123456789",
            "openai.AuthenticationError: ",
        ),
        # a key body is random base62/base64url: it has an upper-case letter and a digit;
        # a scikit-learn model name has words and dates (break-it: registry names)
        "task-specific sk-learn estimator sk-learn-classifier-prod-2024-01-15-baseline",
    ),
    "huggingface_token": (
        ("hf_abcdefghijklmnopqrstuvwxyzABCDEF12", "hf_abcdefghijklmnop", ""),
        "hf_hub_download(repo_id=x)",
    ),
    "aws_access_key_id": (
        ("AWS id AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE", "AWS id "),
        "AKIA is the prefix of AWS key ids",
    ),
    "aws_secret_access_key": (
        (
            "aws configure set aws_secret_access_key wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "wJalrXUtnFEMI",
            "aws_secret_access_key ",
        ),
        "set aws_secret_access_key from the vault",
    ),
    "google_api_key": (
        ("key AIzaSyA1234567890abcdefghijklmnopqrstuv", "AIzaSyA1234567890", ""),
        "AIza prefix",
    ),
    "databricks_token": (
        (
            "DATABRICKS_HOST=x dapi0123456789abcdef0123456789abcdef-2",
            "dapi0123456789abcdef0123456789abcdef",
            "DATABRICKS_HOST=x ",
        ),
        "dapi is the Databricks token prefix",
    ),
    "azure_storage_key": (
        (
            "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=Zm9vYmFyYmF6cXV4Zm9vYmFy==;"
            "EndpointSuffix=core.windows.net",
            "Zm9vYmFyYmF6cXV4Zm9vYmFy",
            "AccountName=acct;AccountKey=",
        ),
        "DefaultEndpointsProtocol=https;AccountName=acct;EndpointSuffix=core.windows.net",
    ),
    "stripe_key": (
        ("stripe.api_key sk_live_4eC39HqLyjWDarjtT1zdp7dc", "4eC39HqLyjWDarjtT1zdp7dc", ""),
        "mode sk_live_ means production",
    ),
    "webhook_signing_secret": (
        ("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "MfKQ9r8GKYqrTwjUPD8I", ""),
        "whsec_ prefix",
    ),
    "npm_token": (
        (
            "//registry/:_authToken=npm_abcdefghijklmnopqrstuvwxyz0123456789",
            "npm_abcdefghijklmnopqrstuvwxyz0123456789",
            "",
        ),
        "npm_config_cache=/tmp/npm",
    ),
    "jwt": (
        (
            "session eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
            "dozjgNryP4J3jVmNHl0w5N",
            "session ",
        ),
        'eyJ is base64 for {"',
    ),
    "authorization_header": (
        (
            "requests: headers {Authorization: Basic dXNlcjpodW50ZXIy}",
            "dXNlcjpodW50ZXIy",
            "Authorization: Basic ",
        ),
        "authorization failed for user bob",
    ),
    "bearer_token": (
        (
            "retry with bearer abcdefghijklmnopqrstuvwx",
            "abcdefghijklmnopqrstuvwx",
            "retry with bearer ",
        ),
        "the bearer scheme is used",
    ),
    "wandb_login": (
        (
            "$ wandb login --relogin 0123456789abcdef0123456789abcdef01234567",
            "0123456789abcdef0123456789abcdef01234567",
            "wandb login --relogin ",
        ),
        "wandb login --relogin",
    ),
    "wandb_key_near_word": (
        (
            "wandb: 0123456789abcdef0123456789abcdef01234567 is your key",
            "0123456789abcdef0123456789abcdef01234567",
            "wandb: ",
        ),
        "commit 0123456789abcdef0123456789abcdef01234567 (HEAD)",
    ),
    "wandb_key_after_word": (
        (
            "wandb api key 0123456789abcdef0123456789abcdef01234567",
            "0123456789abcdef0123456789abcdef",
            "wandb api key ",
        ),
        "wandb: git commit 0123456789abcdef0123456789abcdef01234567 (HEAD)",
    ),
    "discord_webhook_url": (
        (
            "on_end: https://discord.com/api/webhooks/123456789012345678/"
            "abcDEF_ghi-JKL0123456789xyz",
            "abcDEF_ghi",
            "discord.com/api/webhooks/",
        ),
        "see https://discord.com/channels/1234/5678 for the team",
    ),
    "teams_webhook_url": (
        (
            "POST https://acme.webhook.office.com/webhookb2/aaa-bbb@ccc/IncomingWebhook/"
            "0123456789abcdef/ddd failed",
            "IncomingWebhook/0123",
            "acme.webhook.office.com/webhookb2/",
        ),
        "docs at https://learn.microsoft.com/office/webhooks",
    ),
    "aws_key_pair_userinfo": (
        (
            "open s3://AKIAIOSFODNN7EXAMPLE:wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
            "@bucket/x failed",
            "bPxRfiCYEXAMPLEKEY",
            "@bucket/x failed",
        ),
        "s3://bucket/AKIA-style/prefix/model.pt",
    ),
    "cli_secret_flag": (
        (
            "python train.py --password hunter2 --lr 3e-4",
            "hunter2",
            "--password [REDACTED] --lr 3e-4",
        ),
        "python train.py --max-tokens 512 --tokenizer bert --lr 3e-4",
    ),
    "quoted_secret_assignment": (
        ('db:\n  password: "hunter2 with spaces"\n', "hunter2", 'password: "[REDACTED]"'),
        'tokenizer: "bert-base-uncased" author: "alice"',
    ),
    "uri_token_user": (
        (
            "git clone https://ghs_Ab12Cd34Ef56Gh78Ij90Kl@github.com/o/r.git",
            "Ab12Cd34Ef56",
            "https://[REDACTED]@github.com/o/r.git",
        ),
        "pip install git+https://github.com/org/repo@v1.2.3",
    ),
    "telegram_bot_url": (
        (
            "requests.exceptions.ConnectionError: HTTPSConnectionPool(host="
            "'api.telegram.org'): /bot123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw/"
            "sendMessage",
            "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw",
            "api.telegram.org'): /bot",
        ),
        "notify via https://api.telegram.org/bot<TOKEN>/sendMessage",
    ),
    "telegram_bot_token": (
        (
            "bot token 1234567890:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw1",
            "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw1",
            "bot token ",
        ),
        "epoch 12:00:00 step 1234567890:done",
    ),
    "llm_provider_key": (
        ("GroqError: invalid gsk_" + "aB3d" * 13, "aB3daB3d", "GroqError: invalid "),
        "use gsk_ keys from console.groq.com",
    ),
    "artifactory_token": (
        ("jfrog: AKCp8abcdefghijklmnopqrstuvw01234", "AKCp8abcdefghij", "jfrog: "),
        "APPLE pie AKC short",
    ),
    "discord_bot_token": (
        (
            "DiscordException: MTA4NjQ5NzU2NzgyMjU0NzA3Mg.GxYz12.abcdefghijklmnopqrstuvwxyz0",
            "GxYz12.abcdefghijklmnopqrstuvwxyz0",
            "DiscordException: ",
        ),
        "Module.layer1.block2.conv weights",
    ),
    "mailchimp_key": (
        (
            "mailchimp api 0123456789abcdef0123456789abcdef-us21",
            "0123456789abcdef01234567",
            "mailchimp api ",
        ),
        "region us21 deployed",
    ),
    "pypi_token": (
        ("twine upload -p pypi-AgEIcHlwaS5vcmc" + "A1b2C3d4" * 8, "A1b2C3d4A1b2", "twine upload"),
        "pypi-AgEIcHlwaS5vcmc is the token prefix",
    ),
    "sendgrid_key": (
        (
            "SG.abcdefghijklmnopqrstuv.abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG",
            "abcdefghijklmnopqrstuvwxyz0123456789",
            "",
        ),
        "SG.net version 1.2",
    ),
    "square_oauth_secret": (
        ("sq0csp-" + "abcDEF0123" * 4 + "xyz", "abcDEF0123abcDEF", ""),
        "sq0csp- prefix",
    ),
    "twilio_key": (
        ("twilio sid AC0123456789abcdef0123456789abcdef", "AC0123456789abcdef", "twilio sid "),
        "ACC 0.91 SK learn",
    ),
    "softlayer_api_url": (
        (
            "GET https://api.softlayer.com/soap/v3/" + "a1b2c3d4" * 8,
            "a1b2c3d4a1b2c3d4",
            "https://api.softlayer.com/soap/v3/",
        ),
        "https://api.softlayer.com/soap/v3/SoftLayer_Account",
    ),
    "putty_private_key": (
        (
            "PuTTY-User-Key-File-2: ssh-rsa\nEncryption: none\nPrivate-Lines: 14\nAAAAB3Nz",
            "AAAAB3Nz",
            "",
        ),
        "PuTTY is an SSH client",
    ),
    "cli_short_password": (
        ("+ mysql -u root -ph0nestPW -h db mlflow", "h0nestPW", "mysql -u root -p[REDACTED]"),
        "python -m torch.distributed.run -p 29500 train.py",
    ),
    "secret_assignment": (
        ("ValueError: bad db_password=hunter2; retry", "hunter2", "db_password=[REDACTED]; retry"),
        "max_tokens=512 passenger_count=3 auth_type=basic loss=0.3",
    ),
}


def test_every_shape_has_a_positive_and_a_negative_case():
    assert {s.name for s in SHAPES} == set(CASES)
    for s in SHAPES:
        assert s.source, s.name


@pytest.mark.parametrize("name", sorted(CASES))
def test_shape_positive(name):
    (text, secret, keep), _ = CASES[name]
    out = redact_text(text)
    assert secret not in out, out
    assert REDACTED in out
    assert keep in out, out


@pytest.mark.parametrize("name", sorted(CASES))
def test_shape_negative(name):
    _, text = CASES[name]
    assert redact_text(text) == text


@pytest.mark.parametrize(
    "text,secret,keep",
    [
        (
            "sqlalchemy: postgresql://mlflow:hunter2@db:5432/mlflow",
            "hunter2",
            "postgresql://mlflow:",
        ),
        ('password="hunter2"', "hunter2", 'password="[REDACTED]"'),
        ("password: 'hunter2'", "hunter2", "password: '[REDACTED]'"),
        ("--password=hunter2", "hunter2", "--password=[REDACTED]"),
        ("--password 'hunter2' --seed 1", "hunter2", "--password '[REDACTED]' --seed 1"),
        ('train.py --password "hunter 2" --lr 3', "hunter 2", '--password "[REDACTED]" --lr 3'),
        ("--token='t0k en'", "t0k en", "--token='[REDACTED]'"),
        (GCP_JSON, PEM_BODY, '"client_email": "sa@p.iam.gserviceaccount.com"'),
        ("curl -H 'Authorization: Bearer abcdef0123456789abcdef'", "abcdef0123456789", "Bearer "),
        (
            "WANDB_API_KEY=0123456789abcdef0123456789abcdef01234567",
            "0123456789abcdef",
            "WANDB_API_KEY=[REDACTED]",
        ),
        (
            "RuntimeError: login failed for https://user:pa%40ss@mlflow.example.com",
            "pa%40ss",
            "https://user:[REDACTED]@mlflow.example.com",
        ),
    ],
)
def test_forms_named_in_the_issue(text, secret, keep):
    out = redact_text(text)
    assert secret not in out and keep in out, out


def test_keys_and_structures():
    assert is_secret_key("db_password") and is_secret_key("WANDB_API_KEY")
    assert is_secret_key("AccountKey") and is_secret_key("private_key")
    for k in ("max_tokens", "tokenizer", "num_tokens", "author", "passenger_count", "lr"):
        assert not is_secret_key(k), k
    doc = {"run": {"name": "x --password hunter2", "token": "abc", "n": 3}, "l": ["hf_" + "a" * 34]}
    out = redact_obj(doc)
    assert out == {
        "run": {"name": f"x --password {REDACTED}", "token": REDACTED, "n": 3},
        "l": [REDACTED],
    }


def test_uri_credentials_are_stripped_before_storing():
    assert (
        strip_uri_credentials("postgresql://u:pw@db:5432/mlflow?sslmode=require&password=x")
        == "postgresql://db:5432/mlflow?sslmode=require"
    )
    assert strip_uri_credentials("redis://:pw@cache:6379/0") == "redis://cache:6379/0"
    assert strip_uri_credentials("https://tok3n@mlflow.example.com") == "https://mlflow.example.com"
    assert strip_uri_credentials("http://127.0.0.1:5000") == "http://127.0.0.1:5000"
    assert strip_uri_credentials("./mlruns") == "./mlruns"


def test_terminal_escape_codes_in_run_names_are_shown_escaped_in_the_batch_summary():
    """Finding 11: a run name with ESC sequences (clear screen, retitle) must reach the
    terminal as visible text, and a secret in a run name must not reach it at all."""
    from mlaudit_core.service.summary import BatchSummary, render_summary
    from mlaudit_core.service.task import RunResult

    evil = "ok\x1b[2J\x1b]0;pwned\x07 --password hunter2"
    res = [
        RunResult(
            ref="r1\x1b[31m",
            ok=True,
            name=evil,
            outcome="diverged",
            cause="model_convergence",
            confidence=0.9,
            severity="error",
            codes=["OP002"],
        ),
        RunResult(ref="r2", ok=False, name=evil, error="load: boom \x1b[2J"),
    ]
    buf = io.StringIO()
    render_summary(BatchSummary("batch", res), Console(file=buf, width=200, force_terminal=False))
    text = buf.getvalue()
    assert "\x1b" not in text and "\x07" not in text
    assert "\\x1b" in text and "hunter2" not in text


def test_the_state_file_stores_no_secret_from_a_run_name_or_error(tmp_path):
    from mlaudit_core.service.state import StateStore
    from mlaudit_core.service.task import RunResult

    with StateStore(tmp_path / "s.sqlite", "mlflow postgresql://u:pw@db/x experiments=e") as st:
        st.add(["r1", "r2"])
        st.finish(
            "r1",
            RunResult(
                ref="r1",
                name="sweep --password hunter2",
                url="https://u:hunter2@mlflow.example.com/#/runs/r1",
            ),
        )
        st.fail(
            "r2",
            RunResult(ref="r2", ok=False, error="load: redis://:hunter2@cache refused"),
            retry_at=None,
        )
        assert "pw@" not in st.scope
    raw = (tmp_path / "s.sqlite").read_bytes()
    assert b"hunter2" not in raw and b":pw@" not in raw


def test_benchmark_runs_at_toy_size():
    p = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "redact_speed.py"),
            "--lines",
            "3000",
            "--long-line",
            "50000",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert p.returncode == 0, p.stderr
    assert "lines/s" in p.stdout and "leaked: 0" in p.stdout
    assert "superlinear long lines: 0" in p.stdout


def test_redact_text_long_keys_and_webhook_hosts_keep_their_matches():
    """The key and Teams-host expressions take a word whole (no quadratic backtracking on a
    long word, ``benchmarks/redact_speed.py``): what they matched before still matches."""
    long_key = "--" + "x_" * 300 + "password"
    assert redact_text(f"{long_key} hunter2 --lr 3") == f"{long_key} [REDACTED] --lr 3"
    assert redact_text(f"{long_key}='hunter 2'") == f"{long_key}='[REDACTED]'"
    assert redact_text('cfg.db.password: "s3cr3t"') == 'cfg.db.password: "[REDACTED]"'
    assert redact_text("export MY_APP_TOKEN=abc123def") == "export MY_APP_TOKEN=[REDACTED]"
    hook = "https://contoso.webhook.office.com/webhookb2/0123456789abcdef0123456789abcdef"
    assert "0123456789abcdef0123456789abcdef" not in redact_text(f"post to {hook} failed")
    # a host inside a longer word is not a webhook host
    assert redact_text("a" * 5000 + " password") == "a" * 5000 + " password"


def test_render_summary_redacts_the_batch_title():
    """The batch's title names what was read (``runs under DIR``, a tracker URI, a project):
    a token in it reached the terminal table while JSON, CSV and Markdown redacted it
    (``mlaudit batch path ghp_...``)."""
    from mlaudit_core.service.summary import BatchSummary, render_summary
    from mlaudit_core.service.task import RunResult

    title = "runs under /data/ghp_abcdefghijklmnopqrstuvwxyz0123456789"
    buf = io.StringIO()
    render_summary(
        BatchSummary(title, [RunResult(ref="r1", ok=True, outcome="succeeded", cause="healthy")]),
        Console(file=buf, width=200, force_terminal=False),
    )
    text = buf.getvalue()
    assert "ghp_abcdef" not in text and "runs under /data/" in text
