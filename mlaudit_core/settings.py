"""Per-project settings: ``[tool.mlaudit]`` in pyproject.toml, or ``mlaudit.toml``.

Example::

    [tool.mlaudit]
    select = ["OP", "GE", "SY002"]     # codes or code prefixes; default: all
    ignore = ["MI"]
    fail_on = "error"

    [tool.mlaudit.aliases]
    train_loss = ["my_loss"]

    [tool.mlaudit.detectors.OP001]
    factor = 3.0
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from .errors import InputError
from .roles import AliasTable, Role
from .safeparse import TooComplex, loads_toml

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


class SettingsError(ValueError):
    """A settings file has an unknown key/code or a bad value. The message names file and key."""


#: Environment variable: seconds a tracker call may wait for a connection, and then for each
#: read of its answer, before it counts as failed (``MLAUDIT_TRACKER_TIMEOUT=30``).
TRACKER_TIMEOUT_ENV = "MLAUDIT_TRACKER_TIMEOUT"
#: Default of :data:`TRACKER_TIMEOUT_ENV`: 10 s. MLflow's own default is 120 s with 7 retries
#: (minutes for a server that accepts and never answers); a healthy server answers a
#: ``runs/get`` or a 1,000-run ``runs/search`` page in well under a second, and a read timeout
#: bounds the wait for each chunk, not a whole artifact download.
DEFAULT_TRACKER_TIMEOUT_S = 10.0


def tracker_timeout() -> float:
    """Seconds per tracker connect/read (:data:`TRACKER_TIMEOUT_ENV`, default 10).

    Raises:
        InputError: the variable is set to something that is not a number in 1..3600 (exit 2).
    """
    raw = os.environ.get(TRACKER_TIMEOUT_ENV, "").strip()
    if not raw:
        return DEFAULT_TRACKER_TIMEOUT_S
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not 1.0 <= value <= 3600.0:  # also false for nan
        raise InputError(f"{TRACKER_TIMEOUT_ENV}={raw!r}: expected seconds from 1 to 3600")
    return value


class Settings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    select: list[str] = Field(default_factory=list)
    ignore: list[str] = Field(default_factory=list)
    fail_on: str | None = None
    aliases: dict[str, list[str]] = Field(default_factory=dict)
    detectors: dict[str, dict[str, Any]] = Field(default_factory=dict)
    notify: dict[str, Any] = Field(default_factory=dict)
    source: str | None = None

    @field_validator("fail_on")
    @classmethod
    def _fail_on_level(cls, v: str | None) -> str | None:
        levels = ("info", "warning", "error", "critical", "never")
        if v is not None and v not in levels:
            raise ValueError(f"must be one of {', '.join(levels)}")
        return v

    def is_selected(self, code: str) -> bool:
        if self.select and not any(code.startswith(s) for s in self.select):
            return False
        return not any(code.startswith(s) for s in self.ignore)

    def params_for(self, cls):
        try:
            return cls.Params(**self.detectors.get(cls.code, {}))
        except ValidationError as exc:
            err = exc.errors()[0]
            key = ".".join(str(x) for x in err["loc"])
            msg = err["msg"].removeprefix("Value error, ")
            raise SettingsError(
                f"{self.source or 'settings'}: [tool.mlaudit.detectors.{cls.code}] "
                f"{key + ': ' if key else ''}{msg}"
            ) from None

    def alias_table(self) -> AliasTable:
        return AliasTable(self.aliases)

    def validate_codes(self) -> None:
        """Raise :class:`SettingsError` for unknown codes, roles or detector parameters."""
        from .detectors import registry

        reg = registry()
        src = self.source or "settings"
        for field in ("select", "ignore"):
            for c in getattr(self, field):
                if not any(code.startswith(c) for code in reg):
                    raise SettingsError(f"{src}: {field}: unknown detector code or prefix {c!r}")
        for c in self.detectors:
            if c not in reg:
                raise SettingsError(
                    f"{src}: [tool.mlaudit.detectors.{c}]: unknown detector code {c!r}"
                )
            self.params_for(reg[c])
        for r in self.aliases:
            if r not in {x.value for x in Role}:
                raise SettingsError(
                    f"{src}: [tool.mlaudit.aliases] {r}: unknown role "
                    f"(one of {', '.join(x.value for x in Role)})"
                )


def load_settings(start: Path | None = None, explicit: Path | None = None) -> Settings:
    """Find and parse settings: ``explicit`` file, else ``mlaudit.toml`` or a pyproject
    with ``[tool.mlaudit]`` in ``start`` (default: cwd) or its parents.

    Raises:
        SettingsError: unreadable TOML, unknown keys or codes, bad values.
    """
    candidates: list[Path] = []
    if explicit:
        candidates = [explicit]
    else:
        d = (start or Path.cwd()).resolve()
        for parent in [d, *d.parents]:
            candidates += [parent / "mlaudit.toml", parent / "pyproject.toml"]
    for path in candidates:
        if not path.is_file():
            if explicit:
                raise SettingsError(f"{path}: settings file not found")
            continue
        try:
            data = loads_toml(path.read_text(encoding="utf-8"))
        except TooComplex as exc:
            raise SettingsError(f"{path}: skipped: {exc}") from None
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise SettingsError(f"{path}: not valid TOML: {exc}") from None
        section = data if path.name != "pyproject.toml" else data.get("tool", {}).get("mlaudit")
        if path.name == "mlaudit.toml" and "tool" in data:
            section = data["tool"].get("mlaudit", {})
            stray = sorted(k for k in data if k != "tool")
            if stray:  # both forms in one file: the top-level keys would be silently ignored
                raise SettingsError(
                    f"{path}: has both [tool.mlaudit] and top-level keys "
                    f"({', '.join(stray)}); use one form"
                )
        if section is None:
            continue
        try:
            s = Settings(**section, source=str(path))
        except ValidationError as exc:
            err = exc.errors()[0]
            key = ".".join(str(x) for x in err["loc"])
            raise SettingsError(f"{path}: [tool.mlaudit] {key}: {err['msg']}") from None
        s.validate_codes()
        if not explicit and not _trusted(path):
            s.notify = _env_urls_only(s.notify, path)
        return s
    return Settings()


#: Settings files whose literal notify URLs are used although they were found, not given
#: (``os.pathsep``-separated paths)
TRUSTED_SETTINGS_ENV = "MLAUDIT_TRUSTED_SETTINGS"


def _trusted(path: Path) -> bool:
    listed = [p for p in os.environ.get(TRUSTED_SETTINGS_ENV, "").split(os.pathsep) if p]
    here = path.resolve()
    return any(Path(p).expanduser().resolve() == here for p in listed)


def _env_urls_only(notify: dict[str, Any], path: Path) -> dict[str, Any]:
    """``[tool.mlaudit.notify]`` of a settings file that was found (in the current directory
    or a parent), not given: its literal URLs are dropped, its ``env:NAME`` URLs kept.

    A checkout's own ``pyproject.toml`` must not choose where verdicts (run names, metrics,
    findings) are posted: ``mlaudit PATH`` run inside someone else's repository would send them
    to that repository's URL. ``env:NAME`` URLs name endpoints of the user's own environment.
    A file given with ``--config`` / ``--settings`` / ``config=``, or listed in
    ``MLAUDIT_TRUSTED_SETTINGS``,
    keeps its URLs. One warning line names the file and the way out.
    """
    import logging

    def literal(u: Any) -> bool:
        return isinstance(u, str) and not u.strip().startswith("env:")

    out = dict(notify)
    urls = out.get("urls")
    targets = out.get("targets")
    dropped = 0
    if isinstance(urls, list):
        dropped += sum(literal(u) for u in urls)
        out["urls"] = [u for u in urls if not literal(u)]
    if isinstance(targets, list):
        keep = [t for t in targets if not (isinstance(t, dict) and literal(t.get("url")))]
        dropped += len(targets) - len(keep)
        out["targets"] = keep
    if dropped:
        logging.getLogger("mlaudit.settings").warning(
            "mlaudit: %s: %d notify URL(s) written in a settings file found from the current "
            "directory are not used (a checkout's own file does not choose where verdicts are "
            "posted); write them as env:NAME, give the file with --config (--settings for mlaudit logs), or list it in %s",
            path,
            dropped,
            TRUSTED_SETTINGS_ENV,
        )
    return out
