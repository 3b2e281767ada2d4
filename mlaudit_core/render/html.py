"""Self-contained HTML report: verdict banner, plots with findings drawn on them, every section.

The page is one file with inline CSS and inline SVG plots (drawn by
:mod:`mlaudit_core.render.svg`; text in them XML-escaped there) and no script at all, so it opens offline and inside trackers' artifact viewers (MLflow
shows ``.html`` artifacts in a sandboxed iframe loaded from a blob URL, where
relative image paths do not resolve). A Content-Security-Policy meta tag forbids
scripts and any network fetch as a second line of defence; the first is jinja2
autoescaping of every string, so a run named ``<script>…</script>`` shows as text.

Run-controlled strings in the report are already redacted by :func:`mlaudit_core.audit.audit`;
params and tags read here from the ``RunData`` are redacted with
:func:`mlaudit_core.redact.redact_mapping`.
"""

from __future__ import annotations

import base64
import math
import re
from pathlib import Path
from urllib.parse import urlparse

import jinja2

from ..redact import redact_mapping, redact_text
from ..report import AuditReport, Cause, Outcome, Severity
from ..rundata import RunData
from .plots import Plot, render_plots

#: Outcome -> banner colour class (green good, amber degraded, red failed).
_TONE = {
    Outcome.SUCCEEDED: "good",
    Outcome.RUNNING: "info",
    Outcome.SLOW: "warn",
    Outcome.PLATEAUED: "warn",
    Outcome.UNSTABLE: "warn",
    Outcome.UNDERFIT: "warn",
    Outcome.UNKNOWN: "info",
}
_FAMILY_ORDER = [
    "runtime",
    "integrity",
    "optimization",
    "generalization",
    "baseline",
    "systems",
    "ci",
    "claims",
    "instrumentation",
]
#: Params/tags shown at most (the rest is counted), and characters per value.
MAX_CONFIG_ROWS = 200
MAX_VALUE_CHARS = 300


def _num(x) -> str:
    if x is None:
        return "n/a"
    if isinstance(x, bool):
        return str(x)
    if isinstance(x, float):
        return f"{x:.4g}" if math.isfinite(x) else str(x)
    return str(x)


def _safe_url(url: str | None) -> str | None:
    """``url`` if it is http(s), else ``None``: never a ``javascript:`` link from run data."""
    if not url:
        return None
    try:
        scheme = urlparse(url).scheme.lower()
    except ValueError:
        return None
    return url if scheme in ("http", "https") else None


def _short(value, n: int = MAX_VALUE_CHARS) -> str:
    """``value`` as text of at most ``n`` characters; redacted before a cut (a cut credential
    no longer matches its shape)."""
    s = str(value)
    if len(s) <= n:
        return s
    from ..redact import redact_text

    s = redact_text(s)
    return s if len(s) <= n else s[: n - 1] + "…"


_env = jinja2.Environment(
    loader=jinja2.PackageLoader("mlaudit_core", "templates"),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)
_env.filters.update(num=_num, short=_short)


def _config_rows(mapping: dict[str, str], skip_prefixes: tuple[str, ...] = ()) -> tuple[list, int]:
    items = [(k, v) for k, v in sorted(mapping.items()) if not str(k).startswith(skip_prefixes)]
    red = redact_mapping(dict(items[:MAX_CONFIG_ROWS]))
    return [(redact_text(str(k)), str(v)) for k, v in red.items()], len(items)


def _context(
    report: AuditReport, run: RunData | None, plots: list[Plot], plot_notes: list[str], image_src
) -> dict:
    v = report.verdict
    tone = "good" if v.cause is Cause.HEALTHY else _TONE.get(v.outcome, "bad")
    findings = sorted(
        report.findings,
        key=lambda f: (
            -f.severity.rank,
            _FAMILY_ORDER.index(f.family) if f.family in _FAMILY_ORDER else 99,
            f.code,
        ),
    )
    counts = {s.value: sum(f.severity is s for f in report.findings) for s in Severity}
    params, n_params = _config_rows(run.params) if run else ([], 0)
    tags, n_tags = _config_rows(run.tags, ("mlflow.", "mlaudit.")) if run else ([], 0)
    return {
        "r": report,
        "v": v,
        "tone": tone,
        "run_url": _safe_url(report.run.url),
        "findings": findings,
        "counts": counts,
        "training": [(p, image_src(p)) for p in plots if p.group == "training"],
        "telemetry": [(p, image_src(p)) for p in plots if p.group == "telemetry"],
        "plot_notes": plot_notes,
        "has_run": run is not None,
        "params": params,
        "n_params": n_params,
        "tags": tags,
        "n_tags": n_tags,
        "detectors_ran": sum(d.status == "ran" for d in report.detectors),
        "skipped": [d for d in report.detectors if d.status == "skipped"],
        "errored": [d for d in report.detectors if d.status == "errored"],
        "supported": [h for h in report.hypotheses if h.status == "supported"],
        "open_": [h for h in report.hypotheses if h.status == "open"],
        "rejected": [h for h in report.hypotheses if h.status == "rejected"],
        "confidence_pct": round(100 * v.confidence),
    }


def _data_uri(plot: Plot) -> str:
    """A PNG plot as a data URI; ``""`` for an SVG plot (the template inlines ``plot.svg``)."""
    if plot.svg:
        return ""
    return "data:image/png;base64," + base64.b64encode(plot.png).decode("ascii")


#: The ``id`` of the hidden ``<pre>`` that carries the JSON report inside a write-back's page.
JSON_ELEMENT_ID = "mlaudit-report-json"


def render_html(report: AuditReport, run: RunData | None, *, embed_json: bool = False) -> str:
    """The report as one self-contained HTML page (UTF-8 text).

    Args:
        report: the audit.
        run: the audited run, for the plots and the config/tags tables; ``None``
            renders every section but the plots (and says so).
        embed_json: also carry the JSON report (:func:`mlaudit_core.render.render_json`) in
            a hidden ``<pre id="mlaudit-report-json">``, HTML-escaped (no script: the page's
            policy forbids them); :func:`report_json_from_html` reads it back. The tracker
            write-backs embed it, so one file holds the page and the machine-readable report.

    Returns:
        The HTML. Its size does not grow with the run's point count: curves are
        downsampled for display (:func:`mlaudit_core.render.plots.downsample`); a
        10-million-point run gives a page of about 0.3 MB (``benchmarks/html_size.py``).
        The plots are inline SVG and need no extra.
    """
    plots, notes = render_plots(report, run)
    return _render(report, run, plots, notes, _data_uri, embed_json=embed_json)


def _render(report, run, plots, notes, image_src, *, embed_json: bool = False) -> str:
    if embed_json:
        from . import render_json

        report_json = render_json(report)
    else:
        report_json = None
    return _env.get_template("report.html.j2").render(
        **_context(report, run, plots, notes, image_src),
        report_json=report_json,
        json_id=JSON_ELEMENT_ID,
    )


_JSON_PRE = re.compile(r'<pre id="' + JSON_ELEMENT_ID + r'" hidden>(.*?)</pre>', re.DOTALL)


def report_json_from_html(page: str) -> str | None:
    """The JSON report embedded in a page written with ``embed_json`` (the ``mlaudit/report.html``
    a write-back uploads), unescaped; None when the page carries none. The text validates
    against docs/schema/report.schema.json like ``report.json``."""
    import html as _html

    m = _JSON_PRE.search(page)
    return _html.unescape(m.group(1)) if m else None


def render_report_files(
    report: AuditReport,
    run: RunData | None,
    *,
    plot_files: bool = True,
    embed_json: bool = False,
) -> dict[str, str | bytes]:
    """``report.html`` and (``plot_files``) each plot as ``plots/<name>.svg``: name -> content
    (the page as text, each plot as bytes), the plots drawn once for both. See
    :func:`render_html_files`."""
    plots, notes = render_plots(report, run)
    files: dict[str, str | bytes] = {
        "report.html": _render(report, run, plots, notes, _data_uri, embed_json=embed_json)
    }
    if plot_files:
        for p in plots:
            files[f"plots/{p.name}{p.suffix}"] = p.data
    return files


def render_html_files(
    report: AuditReport,
    run: RunData | None,
    out_dir: Path,
    *,
    plot_files: bool = True,
    embed_json: bool = False,
) -> list[str]:
    """Write ``report.html`` and (``plot_files``) each plot as ``plots/<name>.svg`` into ``out_dir``.

    ``report.html`` embeds the same images inline (so it renders inside artifact
    viewers that cannot resolve relative paths); the SVG files let a tracker show
    each plot on its own (MLflow's artifact viewer shows ``.svg`` as an image).

    Args:
        report: the audit.
        run: the audited run, or ``None`` (then no plots are written).
        out_dir: an existing or new directory.
        plot_files: also write the separate ``plots/*.svg`` files.
        embed_json: carry the JSON report in the page (see :func:`render_html`).

    Returns:
        The names written, relative to ``out_dir`` (``"report.html"``, ``"plots/loss.svg"``, …).

    Raises:
        OSError: when ``out_dir`` cannot be written.
    """
    files = render_report_files(report, run, plot_files=plot_files, embed_json=embed_json)
    return write_files(files, out_dir)


def write_files(files: dict[str, str | bytes], out_dir: Path) -> list[str]:
    """Write ``files`` (relative ``/``-separated name -> UTF-8 text or bytes) under
    ``out_dir``, folders made as needed; returns the names. Raises OSError."""
    out_dir = Path(out_dir)
    for name, data in files.items():
        path = out_dir / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(data, str):
            path.write_text(data, encoding="utf-8")
        else:
            path.write_bytes(data)
    return list(files)
