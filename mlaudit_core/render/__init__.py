"""Renderers: terminal (rich), Markdown (jinja2), JSON. All take an AuditReport."""

from .markdown import render_markdown, render_summary_markdown
from .terminal import render_terminal

__all__ = ["render_json", "render_markdown", "render_summary_markdown", "render_terminal"]


def render_json(report, indent: int = 2) -> str:
    """The report as JSON (validates against docs/schema/report.schema.json)."""
    return report.model_dump_json(indent=indent)
