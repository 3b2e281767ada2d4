"""A checkout's own settings file cannot choose where verdicts are posted (issue 33, low
finding): ``mlaudit PATH`` run inside a folder whose ``pyproject.toml`` has
``[tool.mlaudit.notify] urls = ["http://..."]`` posted the verdict (run name, metrics,
findings) to that URL. Literal URLs of a settings file found from the current directory are
now dropped with one warning; ``env:NAME`` URLs, a file given with ``--config`` and one listed
in ``MLAUDIT_TRUSTED_SETTINGS`` still post. A real receiver on 127.0.0.1 counts deliveries."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from webhook_receiver import Receiver

pytestmark = pytest.mark.e2e  # real processes and servers throughout

MLAUDIT = str(Path(sys.executable).parent / "mlaudit")


def _checkout(tmp_path: Path, url: str) -> Path:
    (tmp_path / "pyproject.toml").write_text(
        f'[project]\nname = "theirs"\n\n[tool.mlaudit.notify]\nurls = ["{url}/theirs", '
        f'"env:MY_HOOK"]\nmin_severity = "none"\n'
    )
    (tmp_path / "train.log").write_text(
        "".join(f"step {i} | loss {2.0 / i:.4f} | lr 0.0003\n" for i in range(1, 150))
    )
    return tmp_path


def _audit(cwd: Path, *extra: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [MLAUDIT, "train.log", *extra],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
    )


def test_load_settings_drops_literal_notify_urls_of_a_found_file(tmp_path):
    with Receiver() as rx:
        d = _checkout(tmp_path, rx.url)
        found = _audit(d, env={"MY_HOOK": f"{rx.url}/mine"})
        assert found.returncode in (0, 1), found.stderr
        assert [r.path for r in rx.requests] == ["/mine"], [r.path for r in rx.requests]
        assert "not used" in found.stderr and "MLAUDIT_TRUSTED_SETTINGS" in found.stderr

        given = _audit(d, "--config", str(d / "pyproject.toml"), env={"MY_HOOK": f"{rx.url}/mine"})
        trusted = _audit(
            d,
            env={
                "MY_HOOK": f"{rx.url}/mine",
                "MLAUDIT_TRUSTED_SETTINGS": str(d / "pyproject.toml"),
            },
        )
        assert given.returncode in (0, 1) and trusted.returncode in (0, 1)
        assert sorted(r.path for r in rx.requests) == sorted(
            ["/mine", "/mine", "/theirs", "/mine", "/theirs"]
        )
