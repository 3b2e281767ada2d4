"""Helpers shared by tracker write-backs: the mlaudit namespace and the marked description section.

Write-back touches only mlaudit's own namespace: tags/properties prefixed
``mlaudit.``, artifacts under ``mlaudit/``, and one section of the run's
description between the markers below. Auditing twice replaces, never duplicates.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .render import render_summary_markdown
from .report import AuditReport

BEGIN = "<!-- mlaudit:begin -->"
END = "<!-- mlaudit:end -->"
_SECTION = re.compile(re.escape(BEGIN) + r".*?" + re.escape(END), re.DOTALL)
TAG_PREFIX = "mlaudit."


def merge_section(existing: str | None, section: str) -> str:
    """Put ``section`` between the mlaudit markers in ``existing``, keeping the user's text.

    Replaces every previous mlaudit section (so a second audit never duplicates),
    and appends one when there was none.
    """
    block = f"{BEGIN}\n{section.strip()}\n{END}"
    text = existing or ""
    if BEGIN in text:
        text = _SECTION.sub("", text)
        text = text.replace(BEGIN, "").replace(END, "")
    text = text.rstrip()
    return f"{text}\n\n{block}\n" if text else f"{block}\n"


def strip_section(text: str | None) -> str:
    """The user's part of a description: ``text`` without the mlaudit section."""
    return _SECTION.sub("", text or "").strip()


def verdict_tags(report: AuditReport) -> dict[str, str]:
    """The ``mlaudit.*`` tags for a report (values are short strings every tracker accepts)."""
    from . import __version__

    v = report.verdict
    return {
        "mlaudit.verdict": v.outcome.value,
        "mlaudit.cause": v.cause.value,
        "mlaudit.confidence": f"{v.confidence:.2f}",
        "mlaudit.codes": ",".join(report.codes) or "none",
        "mlaudit.version": __version__,
    }


@dataclass
class WriteBackResult:
    """What a write-back did (or, with dry_run, would do)."""

    tracker: str
    run_id: str
    dry_run: bool
    tags: dict[str, str] = field(default_factory=dict)
    artifacts: list[str] = field(default_factory=list)
    description: str | None = None
    notes: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        verb = "would write" if self.dry_run else "wrote"
        out = [f"{verb} {len(self.tags)} tags: " + ", ".join(f"{k}={v}" for k, v in self.tags.items())
               ] if self.tags else []
        if self.artifacts:
            out.append(f"{verb} artifacts: " + ", ".join(self.artifacts))
        if self.description is not None:
            out.append(f"{verb} the mlaudit section of the run description")
        out += self.notes
        return out


def summary_section(report: AuditReport) -> str:
    return render_summary_markdown(report)
