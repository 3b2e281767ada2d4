"""Terminal control sequences in run content are escaped in the watcher's and the registry
receiver's log lines.

* ``mlaudit watch tensorboard LOGDIR --live``: a run folder named
  ``run\\x1b]0;PWNED\\x07\\x1b[2Jx`` (any user can name a folder so) put ESC sequences into the
  live-alert WARNING line (``run\\x1b]0;.../train/loss is nan at step 40``): the operator's
  terminal title changed and the screen was cleared. Reports and summaries escaped them
  already; the log formatter of ``watch`` did not.
* ``mlaudit serve mlflow-webhook``: a registered model's name (the registering user's text)
  went raw into the "model NAME version V ... not audited" error line.

Fixed: the watch log formatter and the registry receiver's lines show control characters as
``\\xNN`` (mlaudit_core.redact.neutralise_controls). Real tensorboardX writer, real console
script; the receiver test audits against an MLflow address nothing listens on (a real
failure of the real auditor).
"""

from __future__ import annotations

import logging
import math
import subprocess
import sys
import time
from pathlib import Path

import pytest

MLAUDIT = str(Path(sys.executable).with_name("mlaudit"))
EVIL = "run\x1b]0;PWNED\x07\x1b[2Jx"


def test_live_alert_line_of_a_run_folder_with_escape_codes_is_escaped(tmp_path):
    tbx = pytest.importorskip("tensorboardX")
    w = tbx.SummaryWriter(str(tmp_path / "logs" / EVIL))
    for i in range(80):
        w.add_scalar("train/loss", 2 * math.exp(-i / 10) + 0.1 if i < 40 else float("nan"), i)
    w.close()
    p = subprocess.run(
        [
            MLAUDIT,
            "watch",
            "tensorboard",
            str(tmp_path / "logs"),
            "--live",
            "--once",
            "--state",
            str(tmp_path / "s.sqlite"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert p.returncode in (0, 1), p.stderr
    assert "LV001" in p.stderr, p.stderr  # the alert line is there...
    assert "\x1b" not in p.stderr and "\x07" not in p.stderr  # ...without raw controls
    assert "run\\x1b]0;PWNED\\x07\\x1b[2Jx" in p.stderr


def test_registry_receiver_error_line_escapes_the_model_name(tmp_path, caplog, monkeypatch):
    pytest.importorskip("mlflow")
    from mlaudit_mlflow.plugin import MlflowPlugin
    from mlaudit_mlflow.registry_state import DeliveryQueue
    from mlaudit_mlflow.registry_webhook import Receiver, RegistryAuditor

    from mlaudit_core.service import StateStore
    from mlaudit_core.settings import Settings

    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")
    uri = "http://127.0.0.1:9"  # discard port: nothing answers, the audit fails for real
    store = StateStore(tmp_path / "hook.sqlite", f"mlflow registry webhook {uri}")
    queue = DeliveryQueue(store, max_attempts=1)
    receiver = Receiver(
        RegistryAuditor(MlflowPlugin(tracking_uri=uri), Settings(), uri), "s", queue
    )
    queue.add("d1", "model\x1b[2J\u202egnp.exe", "1", "abc123")
    with caplog.at_level(logging.ERROR, logger="mlaudit.serve.mlflow"):
        receiver.start()
        deadline = time.time() + 120
        while not receiver.counts["failed"] and time.time() < deadline:
            time.sleep(0.1)
        receiver.stop()
    store.close()
    [line] = [r.getMessage() for r in caplog.records if "not audited" in r.getMessage()]
    assert "\x1b" not in line and "\u202e" not in line, line
    assert "model\\x1b[2J\\u202egnp.exe" in line
