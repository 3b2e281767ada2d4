"""pytest plugin (loaded by tests/conftest.py): SIGTERM ends a test session as Ctrl-C does.

pytest handles SIGINT (``KeyboardInterrupt``: the session stops and every fixture's finalizer
runs) but not SIGTERM, whose default action ends the process at once. The servers the fixtures
start in sessions of their own (``start_new_session=True``: ``mlflow server``, the fake W&B and
ClearML servers) are stopped only by those finalizers, so a SIGTERM from CI's cleanup
(``.ci/run`` stops its background tracker tests' process group) or a job timeout left them
running, orphaned. Here SIGTERM raises ``KeyboardInterrupt`` in the process that installed the
handler; a forked child that inherited it (a DataLoader worker, a ``multiprocessing`` fork)
gets the default action, as without this plugin.
"""

from __future__ import annotations

import os
import signal
import threading


def pytest_configure(config) -> None:
    if threading.current_thread() is not threading.main_thread():
        return
    owner = os.getpid()

    def on_term(signum, frame) -> None:
        if os.getpid() != owner:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGTERM)
            return
        raise KeyboardInterrupt("SIGTERM")

    signal.signal(signal.SIGTERM, on_term)
