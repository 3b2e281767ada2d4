"""The HTML report: sections, escaping, plots with findings drawn on them, display downsampling,
the files written for trackers, the page without matplotlib, and the CLI's progress bar."""

from __future__ import annotations

import io
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from datetime import datetime, timezone
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

from mlaudit_core import ConsoleLine, MetricTable, Role, RunData, RunIdentity, RunStatus, audit
from mlaudit_core.render.html import render_html, render_html_files
from mlaudit_core.render.plots import (
    _minmax_buckets,
    downsample,
    markers_from_findings,
    render_plots,
)
from mlaudit_core.report import Finding, SeriesEvidence, Severity

EVIL = "<script>window.__pwned=1</script>"
SECTIONS = (
    "verdict",
    "curves",
    "telemetry",
    "findings",
    "timeline",
    "metrics",
    "hypotheses",
    "unknowns",
    "missing",
    "actions",
    "run",
)


def make_run(kind: str = "diverge", n: int = 3000, name: str = EVIL) -> RunData:
    """A run with train/val loss, accuracy, LR, grad norm, loss scale and telemetry.

    ``kind``: ``diverge`` (two recovered spikes, growth from step 2300, NaN from 2851),
    ``overfit`` (validation loss rises from step 1500) or ``reset`` (steps go back from
    2000 to 1500 half-way).
    """
    rng = np.random.default_rng(3)
    st = np.arange(1, n + 1)
    loss = 3.0 * np.exp(-st / 500) + 1.0 + rng.normal(0, 0.02, n)
    if kind == "diverge":
        loss[[600, 1300]] *= [3.5, 3.0]
        g = st > 2300
        loss[g] += (st[g] - 2300) * 0.006
        loss[st > 2850] = np.nan
    if kind == "reset":
        st = np.concatenate([np.arange(1, 2001), np.arange(1500, 1500 + n - 2000)])
    vs = st[st % 100 == 0]
    vl = (
        3.0 * np.exp(-vs / 500)
        + 1.1
        + (np.maximum(vs - 1500, 0) / 1500 if kind == "overfit" else 0)
    )
    cols = {
        "train/loss": (st, loss),
        "val/loss": (vs, vl),
        "val/accuracy": (vs, 0.9 - vl / 5),
        "train/lr": (st, np.minimum(st / 200, 1) * 3e-4),
        "train/grad_norm": (st, 1 + rng.gamma(2, 0.2, n)),
        "train/loss_scale": (st, 2.0 ** np.clip(16 - st // 600, 10, 16)),
        "perf/step_time": (st, 0.3 + rng.gamma(2, 0.01, n)),
        "perf/data_time": (st, 0.02 + rng.gamma(2, 0.002, n)),
        "system/gpu_0_utilization_percentage": (st, np.clip(90 + rng.normal(0, 3, n), 0, 100)),
    }
    keys = np.concatenate([[k] * len(s) for k, (s, _) in cols.items()])
    m = MetricTable(
        keys,
        np.concatenate([s for s, _ in cols.values()]),
        np.concatenate([v for _, v in cols.values()]),
        np.concatenate([1.7e9 + s.astype(float) for s, _ in cols.values()]),
    )
    return RunData(
        identity=RunIdentity(
            "mlflow", "run-1", name=name, url="javascript:alert(1)", project="<i>proj</i>"
        ),
        status=RunStatus.FAILED,
        start_time=datetime.fromtimestamp(1.7e9, timezone.utc),
        end_time=datetime.fromtimestamp(1.7e9 + n, timezone.utc),
        params={
            "lr": "3e-4",
            "hf_token": "hf_" + "a" * 34,
            "dataset": "<img src=x onerror=alert(2)>",
        },
        tags={"team": "<b onmouseover=alert(3)>nlp</b>", "mlflow.user": "someone"},
        metrics=m,
        console=[ConsoleLine("console.log", 7, "step 2851 loss nan <script>alert(4)</script>")],
    )


class _Tags(HTMLParser):
    """Every start tag and attribute in a page, as the browser's tokenizer sees them."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def parse(html: str) -> list[tuple[str, dict]]:
    p = _Tags()
    p.feed(html)
    return p.tags


@pytest.fixture(scope="module")
def diverged():
    run = make_run("diverge")
    return run, audit(run)


@pytest.fixture(scope="module")
def diverged_plots(diverged):
    run, report = diverged
    return render_plots(report, run)


@pytest.fixture(scope="module")
def diverged_html(diverged):
    run, report = diverged
    return render_html(report, run)


def test_sections_banner_and_plots(diverged, diverged_html, diverged_plots):
    _, report = diverged
    html = diverged_html
    assert report.verdict.outcome.value == "diverged"
    tags = parse(html)
    ids = {a.get("id") for _, a in tags}
    for section in SECTIONS:
        assert section in ids, f"section #{section} missing"
    banner = html[html.index('id="verdict"') : html.index("</section>", html.index('id="verdict"'))]
    assert "diverged" in banner and report.verdict.cause.value in banner
    assert f"{report.verdict.confidence:.2f}" in banner
    svgs = [a for t, a in tags if t == "svg"]
    plots, notes = diverged_plots
    assert notes == []
    assert [p.name for p in plots] == [
        "loss",
        "accuracy",
        "learning_rate",
        "grad_norm",
        "loss_scale",
        "step_time",
        "utilisation",
    ]
    assert len(svgs) == len(plots)
    assert all(a["class"] == "plot" and a["role"] == "img" for a in svgs)
    assert not [t for t, _ in tags if t == "img"]  # plots are inline SVG, not data-URI images
    for f in report.findings:  # every finding is in the table, with its code
        assert f">{f.code}<" in html
    for h in report.hypotheses:
        assert h.status in html
    if any(h.status == "rejected" for h in report.hypotheses):
        assert 'class="hyp rejected"' in html


def test_run_strings_are_escaped_and_secrets_redacted(diverged_html):
    html = diverged_html
    tags = parse(html)
    assert not [t for t, _ in tags if t in ("script", "iframe", "object", "embed")]
    assert [t for t, _ in tags if t == "img"] == []
    assert len([a for t, a in tags if t == "svg"]) == 7
    assert not [
        a for _, a in tags if any(k.startswith("on") for k in a)
    ]  # no event handler attribute
    assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in html
    assert "&lt;img src=x onerror=alert(2)&gt;" in html
    assert "&lt;b onmouseover=alert(3)&gt;nlp&lt;/b&gt;" in html
    assert "javascript:" not in html  # a non-http(s) run url is shown as text, never a link
    assert "hf_aaaa" not in html
    assert "script-src" not in html or "default-src 'none'" in html
    csp = next(
        a["content"]
        for t, a in tags
        if t == "meta" and a.get("http-equiv") == "Content-Security-Policy"
    )
    assert csp.startswith("default-src 'none'")


def test_http_run_url_is_a_link():
    run = make_run("overfit", n=1200, name="ok")
    run.identity.url = "http://127.0.0.1:5000/#/experiments/1/runs/run-1"
    html = render_html(audit(run), run)
    links = [a for t, a in parse(html) if t == "a" and a.get("href", "").startswith("http")]
    assert links and links[0]["href"] == run.identity.url


def test_findings_are_drawn_where_they_happened(diverged, diverged_plots):
    _, report = diverged
    marks = markers_from_findings(report)
    by_code = {}
    for m in marks:
        by_code.setdefault(m.label.split()[0], []).append(m)
    op001 = next(f for f in report.findings if f.code == "OP001")
    assert by_code["OP001"][0].kind == "vline" and by_code["OP001"][0].steps == (
        op001.facts["onset_step"],
    )
    li001 = next(f for f in report.findings if f.code == "LI001" and f.facts["key"] == "train/loss")
    nan_marks = [m for m in by_code["LI001"] if m.key == "train/loss"]
    assert nan_marks[0].steps == (li001.facts["first_step"],) == (2851,)
    op002 = next(f for f in report.findings if f.code == "OP002")
    assert by_code["OP002"][0].kind == "points"
    assert list(by_code["OP002"][0].steps) == op002.facts["spike_steps"] == [601, 1301]
    plots, _ = diverged_plots
    loss = next(p for p in plots if p.name == "loss")
    assert loss.svg.startswith('<svg xmlns="http://www.w3.org/2000/svg"') and loss.png == b""
    assert any("OP001: divergence from step" in n for n in loss.notes)
    assert any("OP002: 2 spike(s) at step(s) 601, 1301" in n for n in loss.notes)
    assert any("150 non-finite point(s), first at step 2851" in n for n in loss.notes)


def test_overfit_onset_reset_and_baseline_band_markers():
    run = make_run("overfit")
    report = audit(run)
    ge = next(f for f in report.findings if f.code == "GE001")
    m = [x for x in markers_from_findings(report) if x.label.startswith("GE001")]
    assert m and m[0].steps == (ge.facts["onset_step"],)
    run = make_run("reset")
    report = audit(run)
    li = next(f for f in report.findings if f.code == "LI002")
    m = [x for x in markers_from_findings(report) if x.label.startswith("LI002")]
    assert m[0].kind == "vline" and m[0].steps == (li.facts["step_after"],) == (1500,)
    assert m[1].kind == "span" and m[1].steps == (1500, 2000)
    # a baseline finding (as the baseline comparison reports it) is drawn as its band on its metric
    report.findings.append(
        Finding(
            code="BL001",
            name="baseline-regression",
            severity=Severity.ERROR,
            family="baseline",
            message="val/loss worse than 3 baselines",
            evidence=[SeriesEvidence(metric="val/loss", step_start=2000, step_end=2800)],
            facts={
                "metric": "val/loss",
                "band_lo": 1.1,
                "band_hi": 1.2,
                "verdict": "worse",
                "n_baselines": 3,
                "tail_start_step": 2000,
                "tail_end_step": 2800,
            },
        )
    )
    band = [x for x in markers_from_findings(report) if x.kind == "band"]
    assert (
        band
        and band[0].key == "val/loss"
        and band[0].y == (1.1, 1.2)
        and band[0].steps == (2000, 2800)
    )
    plots, notes = render_plots(report, run)
    assert notes == []
    assert any(
        "BL001: val/loss tail mean band 1.1..1.2 of 3 baseline(s)" in n
        for n in next(p for p in plots if p.name == "loss").notes
    )


def test_downsample_keeps_spikes_and_extremes():
    rng = np.random.default_rng(0)
    x = np.arange(2_000_000, dtype=np.int64)
    y = rng.normal(0, 1, x.size)
    y[1_234_567], y[42] = 1e3, -1e3
    dx, dy = downsample(x, y, 4000)
    assert len(dx) <= 4000
    assert dy.max() == 1e3 and dy.min() == -1e3 and 1_234_567 in dx
    assert dx[0] == 0 and np.all(np.diff(dx) > 0)
    idx = _minmax_buckets(y, 4000)  # the fallback without tsdownsample keeps them too
    assert (
        len(idx) <= 4000
        and 1_234_567 in idx
        and 42 in idx
        and idx[0] == 0
        and idx[-1] == x.size - 1
    )
    small = np.arange(10)
    assert downsample(small, small.astype(float))[0] is small


def test_html_size_does_not_grow_with_points():
    """A million points in one loss curve give a page about the size of a 3,000-point one."""
    big = make_run("overfit", n=3000, name="big")
    report = audit(big)
    n = 1_000_000
    st = np.arange(1, n + 1)
    loss = 3.0 * np.exp(-st / 2e5) + 1.0 + np.random.default_rng(1).normal(0, 0.02, n)
    loss[777_777] = 40.0  # a spike the downsampled curve must keep (see the downsample test)
    big.metrics = MetricTable(["train/loss"] * n, st, loss)
    html = render_html(report, big)
    small = render_html(report, make_run("overfit", n=3000, name="big"))
    assert len(html) < 1.5 * len(small) + 200_000
    assert len(html.encode()) < 2_000_000


def test_render_html_files_writes_page_and_svgs(diverged, tmp_path):
    run, report = diverged
    names = render_html_files(report, run, tmp_path / "mlaudit")
    assert names[0] == "report.html"
    assert sorted(
        str(p.relative_to(tmp_path / "mlaudit"))
        for p in (tmp_path / "mlaudit").rglob("*")
        if p.is_file()
    ) == sorted(names)
    assert {n for n in names if n.startswith("plots/")} == {
        f"plots/{p}.svg"
        for p in (
            "loss",
            "accuracy",
            "learning_rate",
            "grad_norm",
            "loss_scale",
            "step_time",
            "utilisation",
        )
    }
    for n in names[1:]:
        ET.fromstring((tmp_path / "mlaudit" / n).read_bytes())  # a well-formed XML document
    page = (tmp_path / "mlaudit" / "report.html").read_text(encoding="utf-8")
    assert page.count('<svg xmlns="http://www.w3.org/2000/svg"') == len(names) - 1  # inline too
    assert 'src="plots/' not in page


def test_without_run_the_page_says_why_and_without_matplotlib_plots_are_drawn(diverged, tmp_path):
    _, report = diverged
    html = render_html(report, None)
    assert (
        "<img" not in html
        and "<svg" not in html
        and "rendered without them" in html
        and "diverged" in html
    )
    assert render_html_files(report, None, tmp_path) == ["report.html"]
    code = (
        "import sys, json; sys.modules['matplotlib'] = None\n"
        "sys.path.insert(0, sys.argv[1])\n"
        "from test_html_report import make_run\n"
        "from mlaudit_core import audit\n"
        "from mlaudit_core.render.html import render_html\n"
        "run = make_run('diverge'); html = render_html(audit(run), run)\n"
        "print(json.dumps({'svg': html.count('<svg'),"
        " 'mpl': 'matplotlib' in sys.modules and sys.modules['matplotlib'] is not None,"
        " 'findings': 'id=\"findings\"' in html}))\n"
    )
    p = subprocess.run(
        [sys.executable, "-c", code, str(Path(__file__).parent)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip().splitlines()[-1] == '{"svg": 7, "mpl": false, "findings": true}'


def test_dollar_signs_in_metric_names_do_not_break_plots():
    key = "train/$\\alpha_{x}$loss"  # unbalanced mathtext would raise inside matplotlib
    st = np.arange(1, 501)
    run = RunData(
        identity=RunIdentity("mlflow", "r", name="$x$"),
        metrics=MetricTable([key] * st.size, st, np.exp(-st / 100.0)),
    )
    assert run.key_for(Role.TRAIN_LOSS) == key
    plots, notes = render_plots(audit(run), run)
    assert notes == [] and [p.name for p in plots] == ["loss"] and plots[0].keys == [key]


def test_cli_out_html(tmp_path):
    tbx = pytest.importorskip("tensorboardX")
    pytest.importorskip("tensorboard")
    from typer.testing import CliRunner

    from mlaudit.cli import app

    w = tbx.SummaryWriter(str(tmp_path / "tb"))
    for i in range(1, 401):
        w.add_scalar("train/loss", 2.0 * np.exp(-i / 80) + 0.1, i)
    w.close()
    out = tmp_path / "r.html"
    res = CliRunner().invoke(
        app,
        ["tensorboard", str(tmp_path / "tb"), "--no-write", "--out", str(out), "--format", "json"],
    )
    assert res.exit_code == 0, res.output
    page = out.read_text(encoding="utf-8")
    assert page.startswith("<!doctype html>") and page.count("<svg") >= 1
    assert "<script" not in page.lower()


def test_progress_bar_only_on_a_terminal(monkeypatch):
    from rich.console import Console

    from mlaudit.cli import _common

    buf = io.StringIO()
    monkeypatch.setattr(_common, "err_console", Console(file=buf, force_terminal=True, width=100))
    with _common._stages(2) as stage:
        stage("loading mlflow run [bold]x[/]")
        stage("auditing 10,000,000 points of 200 metrics")
    out = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", buf.getvalue())
    assert "loading mlflow run [bold]x[/]…" in out and "auditing 10,000,000 points" in out
    buf = io.StringIO()
    monkeypatch.setattr(_common, "err_console", Console(file=buf, force_terminal=False))
    with _common._stages(2) as stage:
        stage("loading")
    assert buf.getvalue() == ""


def test_embedded_json_report_reads_back_and_stays_text(diverged):
    """``embed_json`` (the write-backs' report.html): the JSON report is in a hidden ``<pre>``,
    HTML-escaped, so run text like ``</pre><script>`` stays text; ``report_json_from_html``
    gives back exactly ``render_json``'s text. Without it the page carries none."""
    import json

    from mlaudit_core.render import render_json
    from mlaudit_core.render.html import report_json_from_html

    run, report = diverged
    page = render_html(report, run, embed_json=True)
    tags = parse(page)
    assert not [t for t, _ in tags if t in ("script", "iframe", "object", "embed")]
    pres = [a for t, a in tags if t == "pre" and a.get("id") == "mlaudit-report-json"]
    assert len(pres) == 1 and "hidden" in pres[0]
    assert EVIL in render_json(report)  # the run name, as the JSON report holds it
    assert report_json_from_html(page) == render_json(report)
    assert json.loads(report_json_from_html(page))["run"]["name"] == EVIL
    assert report_json_from_html(render_html(report, run)) is None
