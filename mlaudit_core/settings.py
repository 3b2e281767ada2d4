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

import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from .roles import AliasTable, Role

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


class SettingsError(ValueError):
    """A settings file has an unknown key/code or a bad value. The message names file and key."""


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
            raise SettingsError(f"{self.source or 'settings'}: [tool.mlaudit.detectors.{cls.code}] "
                                f"{key + ': ' if key else ''}{msg}") from None

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
                raise SettingsError(f"{src}: [tool.mlaudit.detectors.{c}]: unknown detector code {c!r}")
            self.params_for(reg[c])
        for r in self.aliases:
            if r not in {x.value for x in Role}:
                raise SettingsError(f"{src}: [tool.mlaudit.aliases] {r}: unknown role "
                                    f"(one of {', '.join(x.value for x in Role)})")


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
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise SettingsError(f"{path}: not valid TOML: {exc}") from None
        section = data if path.name != "pyproject.toml" else data.get("tool", {}).get("mlaudit")
        if path.name == "mlaudit.toml" and "tool" in data:
            section = data["tool"].get("mlaudit", {})
            stray = sorted(k for k in data if k != "tool")
            if stray:  # both forms in one file: the top-level keys would be silently ignored
                raise SettingsError(f"{path}: has both [tool.mlaudit] and top-level keys "
                                    f"({', '.join(stray)}); use one form")
        if section is None:
            continue
        try:
            s = Settings(**section, source=str(path))
        except ValidationError as exc:
            err = exc.errors()[0]
            key = ".".join(str(x) for x in err["loc"])
            raise SettingsError(f"{path}: [tool.mlaudit] {key}: {err['msg']}") from None
        s.validate_codes()
        return s
    return Settings()
