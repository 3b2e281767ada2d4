"""The verdict as people see it: a real ``mlflow server``, the real CLI, headless Chromium.

A run whose name is a script tag is logged to the server, audited with
``mlaudit mlflow RUN --tracking-uri URL`` (which writes the verdict back), and then:

* the MLflow run page shows the ``mlaudit.*`` tags and the Description section;
* ``mlaudit/report.html`` (the only report file by default) downloaded from the run's
  artifacts renders its plots (every inline SVG plot drawn, its curves wider than 0 px; the
  separate ``plots/loss.svg``, written when ``MLAUDIT_REPORT_FILES=svg`` asks for it, renders
  on its own) and runs no script from run data
  (``window.__pwned`` stays undefined and the run name is visible as text);
* MLflow's own Artifacts viewer shows the same report inside its sandboxed iframe;
* a real ``tensorboard`` shows the verdict and the report in its Text tab.

Chromium is Debian's ``chromium`` + ``chromium-driver`` (installed by ``.ci/run``),
driven by selenium. When they are missing the tests fail under ``CI=true`` and are
skipped (with the install line) elsewhere. Screenshots go to the test's tmp dir;
``MLAUDIT_UPDATE_SCREENSHOTS=1`` also copies them into ``docs/screenshots/``.
"""

from __future__ import annotations

import math
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from mlaudit.cli import app

mlflow = pytest.importorskip("mlflow")

CHROMIUM = "/usr/bin/chromium"
#: The drawn width (CSS px) of each SVG plot's longest curve: 0 when a plot did not render.
PLOT_WIDTHS_JS = (
    "return Array.from(document.querySelectorAll('svg.plot')).map(s => {"
    " const c = Array.from(s.querySelectorAll('polyline'));"
    " return c.length ? Math.max(...c.map(p => p.getBoundingClientRect().width)) : 0; })"
)
CHROMEDRIVER = "/usr/bin/chromedriver"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
EVIL_NAME = "<script>window.__pwned=1</script>"
REPO = Path(__file__).resolve().parents[1]
SCREENSHOTS = REPO / "docs" / "screenshots"


def _missing_browser() -> str | None:
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e '.[dev]')"
    for path, pkg in ((CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver")):
        if not os.access(path, os.X_OK):
            return (
                f"{path} not found: install Debian's {pkg} "
                "(apt-get install -y chromium chromium-driver)"
            )
    return None


def require_browser() -> None:
    """Fail (under ``CI=true``) or skip (elsewhere) with the reason when Chromium cannot run."""
    why = _missing_browser()
    if why:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(f"browser tests need headless Chromium: {why}")
        pytest.skip(why)


def test_missing_chromium_fails_in_ci_and_skips_elsewhere(monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "CHROMIUM", "/nonexistent/chromium")
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="/nonexistent/chromium not found: install"):
        require_browser()
    monkeypatch.delenv("CI")
    with pytest.raises(pytest.skip.Exception, match="apt-get install -y chromium chromium-driver"):
        require_browser()


@pytest.fixture(scope="module")
def browser():
    """Headless Chromium driven by selenium, with a fresh profile; quit at the end of the module."""
    require_browser()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="mlaudit-chromium-")
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for flag in FLAGS + [f"--user-data-dir={profile}", "--window-size=1400,1000"]:
        opts.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def keep_screenshot(driver, tmp_path: Path, name: str, full_page: bool = False) -> Path:
    """Save a PNG screenshot in ``tmp_path`` (and docs/screenshots/ on request); return its path."""
    if full_page:
        height = driver.execute_script("return document.documentElement.scrollHeight")
        driver.set_window_size(1280, min(int(height) + 140, 12000))
    path = tmp_path / name
    driver.save_screenshot(str(path))
    if full_page:
        driver.set_window_size(1400, 1000)
    if os.environ.get("MLAUDIT_UPDATE_SCREENSHOTS") == "1":
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        shutil.copy(path, SCREENSHOTS / name)
    assert path.stat().st_size > 10_000  # a blank page would be a few KB
    return path


def wait_for(driver, predicate, timeout: float = 60, what: str = "condition"):
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout, poll_frequency=0.5).until(
        lambda d: predicate(d), message=f"timed out waiting for {what}"
    )


def open_mlflow_page(driver, url: str, route: str) -> None:
    """Open ``url/#route`` in MLflow's "Model training" layout with the assistant panel closed.

    Both are UI preferences kept in the page's localStorage; they only change what
    the screenshots show, nothing the tests assert.
    """
    driver.get(f"{url}/")
    driver.execute_script(
        "localStorage.setItem('mlflow.workflowType_v1', JSON.stringify('machine_learning'));"
        "localStorage.setItem('mlflow.assistant.panelOpen_v1', 'false');"
        "localStorage.setItem('mlflow.assistant.fab.autoOpenedOnFirstLoad_v1', 'true');"
    )
    driver.get(f"{url}/#{route}")


def log_fp16_run(url: str) -> tuple[str, str]:
    """Log an fp16 fine-tune that spikes, diverges and turns NaN; returns (experiment id, run id).

    3,000 steps of train loss, learning rate (warmup + cosine), grad norm, loss scale,
    step time and data time, validation loss/accuracy every 150 steps, GPU utilisation.
    """
    from mlflow.entities import Metric, Param

    client = mlflow.MlflowClient(url)
    exp = client.get_experiment_by_name("browser")
    # a training experiment (not GenAI), so the UI opens in its "Model training" layout
    exp_id = (
        exp.experiment_id
        if exp
        else client.create_experiment(
            "browser", tags={"mlflow.experimentKind": "custom_model_development"}
        )
    )
    run = client.create_run(
        exp_id,
        run_name=EVIL_NAME,
        tags={
            "team": "<img src=x onerror=window.__pwned=2>",
            "mlflow.note.content": "Fine-tune of the 1.3B model, fp16, lr 6e-4.",
        },
    )
    rid = run.info.run_id
    rng = np.random.default_rng(7)
    n = 3000
    st = np.arange(1, n + 1)
    loss = 3.2 * np.exp(-st / 600) + 1.1 + rng.normal(0, 0.03, n)
    loss[[700, 1450]] *= [3.4, 2.8]
    grow = st > 2300
    loss[grow] += (st[grow] - 2300) * 0.006
    lr = np.minimum(st / 300, 1) * 6e-4 * 0.5 * (1 + np.cos(np.pi * st / n))
    gnorm = 0.8 + rng.gamma(2, 0.15, n)
    gnorm[grow] *= np.linspace(1, 40, grow.sum())
    scale = 2.0 ** np.clip(16 - (st // 500), 10, 16)
    step_time = 0.42 + rng.gamma(2, 0.01, n)
    step_time[[400, 1900]] = 3.1
    data_time = 0.03 + rng.gamma(2, 0.004, n)
    gpu = np.clip(94 + rng.normal(0, 2, n), 0, 100)
    t0 = int(time.time() * 1000) - n * 450
    ms = []
    for i, s in enumerate(st):
        ts = t0 + int(s) * 450
        v = float(loss[i]) if s <= 2850 else math.nan
        ms += [
            Metric("train/loss", v, ts, int(s)),
            Metric("train/lr", float(lr[i]), ts, int(s)),
            Metric("train/grad_norm", float(gnorm[i]) if s <= 2850 else math.inf, ts, int(s)),
            Metric("train/loss_scale", float(scale[i]), ts, int(s)),
            Metric("perf/step_time", float(step_time[i]), ts, int(s)),
            Metric("perf/data_time", float(data_time[i]), ts, int(s)),
            Metric("system/gpu_0_utilization_percentage", float(gpu[i]), ts, int(s)),
        ]
        if s % 150 == 0:
            vl = 3.2 * math.exp(-s / 600) + 1.25 + (max(s - 2300, 0) * 0.004)
            ms += [
                Metric("val/loss", vl if s <= 2850 else math.nan, ts, int(s)),
                Metric("val/accuracy", max(0.0, 0.78 - 0.12 * vl), ts, int(s)),
            ]
    for k in range(0, len(ms), 1000):
        client.log_batch(rid, metrics=ms[k : k + 1000])
    client.log_batch(
        rid,
        params=[
            Param("learning_rate", "6e-4"),
            Param("precision", "fp16"),
            Param("dataset", "<b>c4</b>"),
        ],
    )
    client.set_terminated(rid, "FAILED")
    return exp_id, rid


@pytest.fixture(scope="module")
def audited(mlflow_server):
    """The run, audited through the CLI with write-back; yields (url, experiment id, run id)."""
    url = mlflow_server["url"]
    exp_id, rid = log_fp16_run(url)
    res = CliRunner().invoke(app, ["mlflow", rid, "--tracking-uri", url, "--format", "json"])
    assert res.exit_code == 0, res.output
    assert '"outcome": "diverged"' in res.output
    return url, exp_id, rid


def test_mlflow_run_page_shows_verdict_tags_and_description(browser, audited, tmp_path):
    from selenium.webdriver.common.by import By

    url, exp_id, rid = audited
    tags = mlflow.MlflowClient(url).get_run(rid).data.tags
    assert tags["mlaudit.verdict"] == "diverged"
    open_mlflow_page(browser, url, f"/experiments/{exp_id}/runs/{rid}")
    wait_for(
        browser,
        lambda d: "mlaudit.verdict" in d.find_element(By.TAG_NAME, "body").text,
        what="the mlaudit.verdict tag on the run page",
    )
    for more in browser.find_elements(By.XPATH, "//*[normalize-space(text())='Show more']")[:1]:
        more.click()  # the whole Description section, not its first lines
    body = browser.find_element(By.TAG_NAME, "body").text
    for key in ("mlaudit.verdict", "mlaudit.cause", "mlaudit.confidence", "mlaudit.codes"):
        assert key in body, f"tag {key} not shown on the run page"
    assert tags["mlaudit.cause"] in body and "diverged" in body
    # the Description: the user's text, then the mlaudit section rendered from Markdown
    wait_for(
        browser,
        lambda d: "mlaudit verdict" in d.find_element(By.TAG_NAME, "body").text,
        what="the mlaudit section of the Description",
    )
    body = browser.find_element(By.TAG_NAME, "body").text
    assert "Fine-tune of the 1.3B model" in body
    assert "mlaudit verdict: diverged" in body
    assert browser.execute_script("return window.__pwned") is None
    keep_screenshot(browser, tmp_path, "mlflow-run-page.png")


def test_report_html_artifact_renders_plots_and_runs_no_run_script(browser, audited, tmp_path):
    from selenium.webdriver.common.by import By

    url, _, rid = audited
    client = mlflow.MlflowClient(url)
    names = sorted(a.path for a in client.list_artifacts(rid, "mlaudit"))
    assert names == ["mlaudit/report.html"]  # one self-contained file unless more are asked for
    local = Path(client.download_artifacts(rid, "mlaudit/report.html", dst_path=str(tmp_path)))
    html = local.read_text(encoding="utf-8")
    assert "<script" not in html.lower()
    browser.get(local.as_uri())
    wait_for(
        browser, lambda d: d.execute_script("return document.readyState") == "complete", what="load"
    )
    widths = browser.execute_script(PLOT_WIDTHS_JS)
    assert len(widths) >= 5, widths  # loss, accuracy, lr, grad norm, loss scale, time, utilisation
    assert all(w > 0 for w in widths), f"some plots were not drawn: {widths}"
    assert browser.execute_script("return typeof window.__pwned") == "undefined"
    heading = browser.find_element(By.TAG_NAME, "h1").text
    assert heading == EVIL_NAME
    banner = browser.find_element(By.ID, "verdict").text
    assert "DIVERGED" in banner.upper() and "model_convergence" in banner
    body = browser.find_element(By.TAG_NAME, "body").text
    assert "<img src=x onerror=window.__pwned=2>" not in body  # tags shown only once expanded...
    browser.execute_script("document.querySelectorAll('details').forEach(d => d.open = true)")
    body = browser.find_element(By.TAG_NAME, "body").text
    assert "<img src=x onerror=window.__pwned=2>" in body  # ...and then as text
    assert browser.execute_script("return typeof window.__pwned") == "undefined"
    browser.execute_script("document.querySelectorAll('details').forEach(d => d.open = false)")
    browser.set_window_size(1280, 1500)
    keep_screenshot(
        browser, tmp_path, "report-html.png"
    )  # the top: banner, conclusions, loss curve
    keep_screenshot(browser, tmp_path, "report-html-full.png", full_page=True)
    # the separate .svg files, when asked for (MLAUDIT_REPORT_FILES=svg), render on their own
    # too (what MLflow's artifact viewer shows)
    res = CliRunner().invoke(
        app, ["mlflow", rid, "--tracking-uri", url], env={"MLAUDIT_REPORT_FILES": "svg"}
    )
    assert res.exit_code == 0, res.output
    plots = sorted(a.path for a in client.list_artifacts(rid, "mlaudit/plots"))
    assert "mlaudit/plots/loss.svg" in plots
    svg = Path(client.download_artifacts(rid, "mlaudit/plots/loss.svg", dst_path=str(tmp_path)))
    browser.get(svg.as_uri())
    wait_for(browser, lambda d: d.execute_script(PLOT_WIDTHS_JS), what="the loss SVG file")
    assert browser.execute_script("return document.documentElement.tagName") == "svg"


def test_report_renders_inside_mlflow_artifact_viewer(browser, audited, tmp_path):
    """MLflow shows .html artifacts in an iframe (blob URL, sandbox="allow-scripts"), so the
    plots must be inline (SVG elements)."""
    from selenium.webdriver.common.by import By

    url, exp_id, rid = audited
    open_mlflow_page(
        browser, url, f"/experiments/{exp_id}/runs/{rid}/artifacts/mlaudit/report.html"
    )
    frame = wait_for(
        browser,
        lambda d: (d.find_elements(By.CSS_SELECTOR, "iframe.mlflow-html-iframe") or [None])[0],
        what="MLflow's HTML artifact iframe",
    )
    browser.switch_to.frame(frame)
    try:
        wait_for(
            browser,
            lambda d: (
                len(d.execute_script(PLOT_WIDTHS_JS)) >= 5
                and all(w > 0 for w in d.execute_script(PLOT_WIDTHS_JS))
            ),
            what="the report's plots inside the iframe",
        )
        assert browser.find_element(By.TAG_NAME, "h1").text == EVIL_NAME
        assert browser.execute_script("return typeof window.__pwned") == "undefined"
    finally:
        browser.switch_to.default_content()
    keep_screenshot(browser, tmp_path, "mlflow-artifact-report.png")


@pytest.fixture(scope="module")
def tensorboard_ui(tmp_path_factory):
    """A diverging TensorBoard log directory audited by the CLI (write-back on), served by a real
    ``tensorboard`` on 127.0.0.1; yields (url, logdir). The server is stopped afterwards."""
    tbx = pytest.importorskip("tensorboardX")
    pytest.importorskip("tensorboard")
    import signal
    import subprocess

    import requests
    from conftest import free_port

    logdir = tmp_path_factory.mktemp("tb-ui")
    w = tbx.SummaryWriter(str(logdir))
    for i in range(1, 3001):
        loss = 2.0 * math.exp(-i / 300) + 0.3 + max(i - 2200, 0) * 0.004
        w.add_scalar("train/loss", loss, i)
        if i % 100 == 0:
            w.add_scalar("val/loss", loss + 0.1, i)
    w.close()
    res = CliRunner().invoke(app, ["tensorboard", str(logdir), "--format", "json"])
    assert res.exit_code == 0, res.output
    port = free_port()
    tb = shutil.which("tensorboard", path=str(Path(sys.executable).parent)) or "tensorboard"
    cmd = [tb, "--logdir", str(logdir), "--host", "127.0.0.1", "--port", str(port)]
    cmd += ["--reload_interval", "1"]
    with open(logdir.parent / "tensorboard.log", "wb") as log:  # the child keeps its own handle
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 60
        while time.time() < deadline:
            assert proc.poll() is None, (logdir.parent / "tensorboard.log").read_text()[-2000:]
            try:
                if requests.get(f"{url}/data/runs", timeout=1).status_code == 200:
                    break
            except requests.RequestException:
                time.sleep(0.5)
        else:
            pytest.fail("tensorboard did not start in 60 s")
        yield url, logdir
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)


def test_tensorboard_text_tab_shows_verdict(browser, tensorboard_ui, tmp_path):
    from selenium.webdriver.common.by import By

    url, _ = tensorboard_ui
    browser.get(f"{url}/#text")
    wait_for(
        browser,
        lambda d: "mlaudit verdict: diverged" in d.find_element(By.TAG_NAME, "body").text,
        what="the mlaudit/verdict text summary in TensorBoard's Text tab",
    )
    body = browser.find_element(By.TAG_NAME, "body").text
    assert "mlaudit/verdict" in body and "mlaudit/report" in body
    assert "cause model_convergence" in body
    keep_screenshot(browser, tmp_path, "tensorboard-text-tab.png")


def test_report_html_lone_plot_in_grid_keeps_its_size(browser, tmp_path):
    """A plot alone in a plot grid (the timm-style log's only telemetry panel, step and data time)
    stays in a half-width column: it is drawn no wider than its own SVG width, not stretched to the
    card with its text scaled up, and no narrower than the two-column plots beside the loss plot."""
    log = REPO / "tests" / "data" / "logs" / "frameworks" / "timm-style-overfit.log"
    out = tmp_path / "report.html"
    result = CliRunner().invoke(app, ["logs", str(log), "--out", str(out)])
    assert result.exit_code == 0, result.output
    browser.set_window_size(1400, 1000)
    browser.get(out.as_uri())
    wait_for(
        browser, lambda d: d.execute_script("return document.readyState") == "complete", what="load"
    )
    sizes = browser.execute_script(
        "return Array.from(document.querySelectorAll('.plotgrid svg.plot')).map(s =>"
        " [s.closest('section').id, s.getBoundingClientRect().width, s.width.baseVal.value])"
    )
    lone = [s for s in sizes if s[0] == "telemetry"]
    assert len(lone) == 1, sizes
    _, drawn, own = lone[0]
    assert 0 < drawn <= own + 1, sizes
    pair = [s[1] for s in sizes if s[0] == "curves"]
    assert pair and abs(drawn - min(pair)) <= 1, sizes
