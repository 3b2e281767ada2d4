"""Errors that the CLI turns into one clear line and exit code 2."""

from __future__ import annotations

#: Exit status of a batch or a ``watch --once`` that finished without auditing every run: runs
#: failed (they are retried by running the same command again) or the tracker did not answer
#: within the retry budget. Distinct from 2 (bad input: fix the command) so cron and CI can
#: tell "try again later" from "fix it".
EXIT_INCOMPLETE = 4


class MlauditError(Exception):
    """Base: a problem the user can fix; the message is the one line shown."""


class InputError(MlauditError):
    """The input (run id, path, file, URI) does not exist or cannot be read."""


class TrackerUnavailable(InputError):
    """The tracker could not be reached, timed out, or failed the call on its side (5xx).

    A one-shot command prints it as one line (exit 2) like any input error; a watcher
    treats it as an outage and retries with backoff, where any other :class:`MlauditError`
    is a problem that retrying cannot fix.
    """


class MissingDependency(MlauditError):
    """A tracker SDK is not installed. The message carries the ``pip install`` line."""

    def __init__(self, package: str, extra: str) -> None:
        clone = _source_checkout()
        super().__init__(
            f"the {package} package is not installed: pip install 'mlaudit[{extra}]'"
            + (
                f" (in this source checkout, as the README installs it: pip install -e '{clone}[{extra}]')"
                if clone
                else ""
            )
        )
        self.package, self.extra = package, extra


def _source_checkout() -> str | None:
    """The folder of the source checkout mlaudit runs from (an editable install: the package's parent
    holds mlaudit's ``pyproject.toml``), else ``None`` (an installed wheel, where ``pip install
    'mlaudit[extra]'`` is the command)."""
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    toml = root / "pyproject.toml"
    try:
        return (
            str(root) if toml.is_file() and 'name = "mlaudit"' in toml.read_text()[:4000] else None
        )
    except OSError:
        return None


class WriteBackRefused(MlauditError):
    """The tracker will not accept the write-back (e.g. a published ClearML task)."""
