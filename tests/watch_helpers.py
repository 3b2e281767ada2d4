"""``mlaudit watch mlflow`` as a subprocess, shared by the watcher tests."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

MLAUDIT = shutil.which("mlaudit", path=str(Path(sys.executable).parent)) or "mlaudit"


class Watcher:
    """``mlaudit watch mlflow`` as a subprocess, its stderr in a file."""

    def __init__(
        self,
        tmp: Path,
        label: str,
        url: str,
        exp: str,
        since: str,
        *,
        state: str = "state.sqlite",
        pause: str | None = None,
        extra: tuple[str, ...] = (),
        once: bool = False,
    ) -> None:
        self.log = tmp / f"watch-{label}.log"
        env = dict(os.environ, MLAUDIT_WATCH_TEST_PAUSE=pause or "")
        cmd = [
            MLAUDIT,
            "watch",
            "mlflow",
            "-e",
            exp,
            "-u",
            url,
            "--state",
            str(tmp / state),
            "--poll-interval",
            "0.3",
            "--concurrency",
            "1",
            "--since",
            since,
            *extra,
            *(["--once"] if once else []),
        ]
        self.proc = subprocess.Popen(
            cmd, stdout=subprocess.DEVNULL, stderr=open(self.log, "wb"), env=env, cwd=tmp
        )

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def wait_for(self, pattern: str, timeout: float = 150) -> re.Match:
        deadline = time.time() + timeout
        while time.time() < deadline:
            m = re.search(pattern, self.text())
            if m:
                return m
            if self.proc.poll() is not None:
                break
            time.sleep(0.1)
        self.proc.kill()
        raise AssertionError(f"no {pattern!r} in the watcher log:\n{self.text()}")

    def stop(self, sig: int = signal.SIGTERM) -> int:
        self.proc.send_signal(sig)
        return self.proc.wait(timeout=150)
