"""Redaction of run content: planted credentials do not survive, metric lines are not blanked.

Credentials planted in run content. Each case failed
before the fix in mlaudit_core/redact.py:

* leaks: ``os.environ['WANDB_API_KEY']='<40 hex>'`` (a notebook cell echoed in a log), a W&B
  key named *before* it (``wandb api key <40 hex>``), W&B Server ``local-<40 hex>`` keys,
  Discord and Microsoft Teams incoming-webhook URLs, an AWS key pair written as URL user-info
  (``s3://AKIA...:SECRET@bucket``: the secret holds '/', the URI shape stopped at it);
* false positives: LLM training metrics whose names hold ``token`` (``tokens_per_sec``,
  ``num_input_tokens_seen``, ``mean_token_accuracy``) had their *values* blanked in
  ``mlaudit evidence`` metric lines, and tokenizer settings (``pad_token``, ``tokenizer_name``)
  in params.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from mlaudit_core.redact import REDACTED, is_secret_key, redact_obj, redact_text

MLAUDIT = str(Path(sys.executable).with_name("mlaudit"))
HEX40 = "0123456789abcdef0123456789abcdef01234567"


@pytest.mark.parametrize(
    "text,secret",
    [
        (f"os.environ['WANDB_API_KEY']='{HEX40}'", HEX40),
        ('os.environ["DB_PASSWORD"] = "hunter2"', "hunter2"),
        (f"wandb api key {HEX40}", HEX40),
        (f"using W&B key: {HEX40}", HEX40),
        (f"WANDB_API_KEY is local-{HEX40}", HEX40),
        (
            "notify https://discord.com/api/webhooks/123456789012345678/abcDEFghiJKL_mno-PQRstu0123",
            "abcDEFghiJKL",
        ),
        (
            "POST https://outlook.office.com/webhook/abc@def/IncomingWebhook/0123456789abcdef/xyz",
            "0123456789abcdef",
        ),
        (
            "ClientError: s3://AKIAIOSFODNN7EXAMPLE:wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY@bucket/x",
            "bPxRfiCYEXAMPLEKEY",
        ),
    ],
)
def test_planted_credentials_do_not_survive(text, secret):
    out = redact_text(text)
    assert secret not in out and REDACTED in out, out


@pytest.mark.parametrize(
    "text",
    [
        "step 100 | loss 2.3 | tokens_per_sec: 12345 | lr 3e-4",
        "{'loss': 0.5, 'num_input_tokens_seen': 40960, 'epoch': 1.0}",
        "train/mean_token_accuracy=0.934 token_acc=0.91 tokens_per_sec_per_gpu=1830.5",
        "pad_token: <pad>  eos_token = </s>  tokenizer_name=gpt2",
        f"wandb: git commit {HEX40} (HEAD)",
        "sk-learn-classifier-prod-2024-01-15-baseline",
    ],
)
def test_metric_lines_and_names_are_not_blanked(text):
    assert redact_text(text) == text


def test_keys_still_secret_and_params_kept():
    for k in (
        "HF_TOKEN",
        "use_auth_token",
        "api_token",
        "access_key",
        "db_password",
        "github_token",
    ):
        assert is_secret_key(k), k
    params = {"tokenizer_name": "meta-llama/Llama-2-7b-hf", "pad_token": "<pad>", "hf_token": "abc"}
    assert redact_obj(params) == {
        "tokenizer_name": "meta-llama/Llama-2-7b-hf",
        "pad_token": "<pad>",
        "hf_token": REDACTED,
    }


def test_evidence_metric_lines_keep_token_throughput_values(tmp_path):
    """Real console script: ``mlaudit evidence --logs`` on an LLM log with a crash at the end."""
    log = tmp_path / "train.log"
    lines = [
        f"step {i} | loss {2.5 * math.exp(-i / 80) + 0.3:.4f} | tokens_per_sec: {12000 + i} | "
        f"mean_token_accuracy: {0.5 + i / 500:.3f} | lr 3e-4"
        for i in range(1, 41)
    ]
    lines += [
        "Traceback (most recent call last):",
        '  File "train.py", line 3',
        f"RuntimeError: login failed, WANDB_API_KEY={HEX40}",
    ]
    log.write_text("\n".join(lines) + "\n")
    p = subprocess.run(
        [MLAUDIT, "evidence", "--logs", str(log)], capture_output=True, text=True, timeout=300
    )
    assert p.returncode == 0, p.stderr
    assert HEX40 not in p.stdout
    doc = json.loads(p.stdout)
    texts = [m["text"] for m in doc["metric_lines"]]
    assert texts and all(REDACTED not in t for t in texts), texts[:2]
    assert any("tokens_per_sec: 12040" in t and "mean_token_accuracy: 0.580" in t for t in texts)
