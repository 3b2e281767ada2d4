"""Every benchmark script at toy size, so none can rot (issue 21).

Each test runs one script in a subprocess with tiny inputs and asserts that it finished and
printed its figures, each parsed and checked as well-formed and plausible (the row labels and the
figures' lines); no test asserts a time bound or a speed-up, those are measurements (benchmarks/README.md).

Benchmarks with toy-size tests elsewhere (not repeated here): ``ingest.py`` without the
server part and ``logs_throughput.py`` (tests/test_formats.py), ``diagnosis_eval.py``
(tests/test_diagnosis_eval_smoke.py), ``baseline_and_ci.py`` (tests/test_baseline_band.py),
``live_poll.py`` (tests/test_live.py), ``redact_speed.py`` (tests/test_redact.py),
``watcher_kills.py`` (tests/test_watch_trust.py). :func:`test_every_benchmark_has_a_toy_test`
keeps that list honest.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BENCH = REPO / "benchmarks"


def run(script: str, *args: str, timeout: float = 600, env: dict | None = None) -> str:
    p = subprocess.run(
        [sys.executable, str(BENCH / script), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=REPO,
        env=dict(os.environ, **(env or {})),
    )
    assert p.returncode == 0, (
        f"{script} exited {p.returncode}:\n{p.stdout[-2000:]}\n{p.stderr[-3000:]}"
    )
    return p.stdout


def test_every_benchmark_has_a_toy_test():
    """A new script in benchmarks/ without a toy-size test anywhere in tests/ fails here."""
    tests = "\n".join(p.read_text(errors="replace") for p in (REPO / "tests").glob("test_*.py"))
    missing = [p.name for p in BENCH.glob("*.py") if p.name not in tests]
    assert not missing, f"benchmarks without a toy-size test: {missing}"


def test_ingest_mlflow_server_part(mlflow_server):
    """benchmarks/ingest.py's server rows through the suite's real ``mlflow server`` (sqlite
    backend): mlaudit next to MlflowClient, identical point counts (the sqlite:/// rows run in
    tests/test_formats.py; starting servers with 2 and 4 workers is the full run's job)."""
    out = run(
        "ingest.py",
        "--only",
        "mlflow",
        "--skip-sqlite",
        "--mlflow-points",
        "400",
        "--server-url",
        mlflow_server["url"],
        "--db-uri",
        mlflow_server["db_uri"],
        "--repeat",
        "1",
    )
    assert f"mlaudit vs MlflowClient (mlflow server at {mlflow_server['url']})" in out, out
    for label in ("mlaudit (server, REST)", "MlflowClient (server)"):
        line = next(x for x in out.splitlines() if x.startswith(label))
        assert re.search(r"\s400\s", line), line  # the point count column
    assert "peak MB" in out
    assert "same point count: True" in out and "identical point counts: True" in out, out


def test_batch_throughput_prints_rates_and_the_time_split():
    pytest.importorskip("mlflow")
    out = run(
        "batch_throughput.py",
        "--runs",
        "4",
        "--configs",
        "jobs1",
        "--server-workers",
        "1",
        "--request-detail",
    )
    rows = [x for x in out.splitlines() if x.startswith("--jobs 1")]
    assert len(rows) == 4, out  # off and on, then their time splits
    off, on = rows[0].split(), rows[1].split()
    assert off[2:5] == ["off", "4", "0"] and on[2:5] == ["on", "4", "0"], out  # 4 runs, 0 failed
    for stage in ("load", "detect", "verdict", "render", "write"):
        assert f" {stage} " in rows[3], rows[3]
    assert "runs/s per worker without write-back (--jobs 1)" in out
    # requests per run (last column): the write-back adds its reads, batch and uploads
    assert 0 < float(off[-1]) < float(on[-1]) < 30, out
    # by endpoint (--request-detail): each fresh run's write-back uploads one file and sends
    # one log_batch (issue 30: report.html alone, tags and Description in one batch)
    written = out.split(rows[1], 1)[1].split("\ntime split", 1)[0]
    assert re.search(
        r"^\s+1\.00 per run  PUT /api/2\.0/mlflow-artifacts/artifacts/<file>$", written, re.M
    ), out
    assert re.search(r"^\s+1\.00 per run  POST /api/2\.0/mlflow/runs/log-batch$", written, re.M), (
        out
    )


def test_batch_trackers_throughput():
    pytest.importorskip("wandb")
    pytest.importorskip("clearml")
    out = run("batch_trackers_throughput.py", "--runs", "2", "--configs", "jobs1", timeout=900)
    assert "wandb" in out and "clearml" in out, out
    rows = re.findall(r"^--jobs 1\s+2\s+0\s.*\s([\d.]+)$", out, re.M)  # 2 runs, none failed
    assert len(rows) == 2 and all(0 < float(r) < 100 for r in rows), out  # requests per run


def test_clearml_ingest():
    pytest.importorskip("clearml")
    out = run("clearml_ingest.py", "--points", "2000", "--series", "2", "--log-lines", "200")
    sc = re.search(
        r"^scalars: 2,000 points in 2 series: ([\d.]+) s \(([\d,]+) points/s; (\d+) raw", out, re.M
    )
    con = re.search(r"^console: 200 log events: ([\d.]+) s \(([\d,]+) lines/s\)", out, re.M)
    load = re.search(r"^load_task .*: ([\d.]+) s, table ([\d.]+) MB", out, re.M)
    assert sc and con and load, out
    # seconds are printed to a few decimals: a toy-size stage can print 0.0 on an idle machine
    assert (
        float(sc.group(1)) >= 0 and int(sc.group(2).replace(",", "")) > 0 and int(sc.group(3)) >= 1
    )
    assert float(con.group(1)) >= 0 and int(con.group(2).replace(",", "")) > 0
    assert float(load.group(1)) >= 0 and float(load.group(2)) >= 0


def test_clearml_offline_bomb():
    pytest.importorskip("clearml")
    out = run("clearml_offline_bomb.py", "--gib", "0.01", "--shape", "line")
    assert "peak RSS" in out and "load time" in out, out


def test_hook_delay():
    out = run("hook_delay.py", "--sizes", "200")
    assert re.search(r"^\s+200\s+\d", out, re.M), out


def test_html_size():
    out = run("html_size.py", "--metrics", "3", "--steps", "200")
    assert re.search(r"^points\s+600 \(3 metrics x 200 steps\)$", out, re.M), out
    for stage in ("build RunData", "audit", "render_html"):
        m = re.search(rf"^{stage}\s+([\d.]+) s", out, re.M)
        assert m and float(m.group(1)) >= 0, (stage, out)
    size = re.search(r"^HTML size\s+([\d.]+) MB\s+\(target < 5 MB: (ok|MISS)\)", out, re.M)
    assert size and 0 < float(size.group(1)) < 5 and size.group(2) == "ok", out
    shown = re.search(
        r"^train/loss shown\s+(\d+) of (\d+) finite points; max and min kept: True", out, re.M
    )
    assert shown and 0 < int(shown.group(1)) <= int(shown.group(2)) <= 200, out


@pytest.mark.e2e
def test_cli_import_time():
    """benchmarks/cli_import_time.py: a row per start with a wall time and an importtime total;
    none of the three imports a heavy module (``--help`` prints the command list from
    mlaudit/cli/_help_manifest.py)."""
    out = run("cli_import_time.py", "--repeat", "1")
    rows = {
        m.group(1): (float(m.group(2)), float(m.group(3)), m.group(4))
        for m in re.finditer(
            r"^(mlaudit --version|mlaudit --help|import mlaudit.hooks)\s+"
            r"([\d.]+)\s+([\d.]+)\s+(.*)$",
            out,
            re.M,
        )
    }
    assert set(rows) == {"mlaudit --version", "mlaudit --help", "import mlaudit.hooks"}, out
    for wall, total, _ in rows.values():
        assert 0 < wall < 120 and 0 < total < 120_000, out
    assert {heavy for _, _, heavy in rows.values()} == {"none"}, out


@pytest.mark.e2e
def test_render_speed():
    """benchmarks/render_speed.py at toy size: the SVG and page CPU figures and the SVG size."""
    out = run("render_speed.py", "--points", "2000", "--repeat", "1")
    assert "6 panels" in out, out
    svg = re.search(r"^plots as SVG \(numpy\)\s+([\d.]+)$", out, re.M)
    page = re.search(r"^render_html \(page \+ SVG\)\s+([\d.]+)$", out, re.M)
    size = re.search(r"^SVG bytes on the page\s+([\d,]+)$", out, re.M)
    assert svg and page and size, out
    assert 0 < float(svg.group(1)) < 60_000 and int(size.group(1).replace(",", "")) > 10_000


def test_large_run():
    out = run("large_run.py", "--steps", "1000", "--metrics", "10")
    pts = re.search(r"^large run: ([\d,]+) points \((\d+) metrics; 10 x 1,000 steps", out, re.M)
    assert pts and int(pts.group(1).replace(",", "")) >= 10_000 and int(pts.group(2)) >= 10, out
    assert re.search(r"^verdict: [a-z_]+/[a-z_]+; \d+ findings?", out, re.M), out
    wall = re.search(r"^audit wall time .*:\s+([\d.]+)s$", out, re.M)
    ratio = re.search(r"^ratio audit / numpy pass: ([\d.]+|inf)x", out, re.M)
    mem = re.search(r"^peak memory for data \+ audit: ([\d.]+) MB = ([\d.]+)x raw", out, re.M)
    assert wall and ratio and mem, out
    assert float(wall.group(1)) > 0 and float(mem.group(1)) >= 0 and float(mem.group(2)) >= 0, out


def test_wandb_ingest(tmp_path):
    pytest.importorskip("wandb")
    out = run(
        "wandb_ingest.py",
        "--rows",
        "300",
        "--workdir",
        str(tmp_path / "w"),
        "--repeat",
        "1",
        env={"WANDB_SILENT": "true"},
    )
    assert re.search(r"^logged 300 rows with wandb in [\d.]+ s", out, re.M), out
    fid = re.search(
        r"^\.wandb file: ([\d.]+) MB, 300 rows, ([\d,]+) points \(every key has 300: full fidelity\)",
        out,
        re.M,
    )
    assert fid and int(fid.group(2).replace(",", "")) >= 300, out
    load = re.search(
        r"^load_offline: ([\d.]+) s \(best of 1\) -> ([\d,]+) points/s, ([\d,]+) rows/s", out, re.M
    )
    assert load and float(load.group(1)) > 0 and int(load.group(2).replace(",", "")) > 0, out


def test_triage_eval(mlflow_server):
    """benchmarks/triage_eval.py at toy size: generated sweeps, the grouping time, and the
    end-to-end path through the suite's real mlflow server (an lr sweep and a noise sweep)."""
    out = run(
        "triage_eval.py",
        "--sweeps",
        "3",
        "--runs",
        "40",
        "--scale",
        "500",
        "--repeat",
        "1",
        "--server-url",
        mlflow_server["url"],
        "--server-runs",
        "12",
        "--server-sweeps",
        "1",
        "--server-causes",
        "lr,noise",
    )
    for label in (
        "found first: lr",
        "found first: host",
        "false discovery (noise-only)",
        "first bad commit: regression",
        "commit change point on noise",
        "grouping 500 runs (lr):",
        "through mlflow server",
    ):
        assert label in out, out
    assert re.search(r"found first: lr\s+\d/3", out) and re.search(
        r"found first: lr\s+\d/1\n", out
    ), out


def test_confidence_calibration_fits_and_checks_a_toy_csv(tmp_path):
    """benchmarks/confidence_calibration.py at toy size: every third row of its first-run CSV (all
    rounds kept); it fits the per-class map and prints the leave-one-round-out and temporal checks."""
    rows = (BENCH / "confidence_first_runs.csv").read_text().splitlines()
    toy = tmp_path / "toy.csv"
    toy.write_text("\n".join([rows[0], *rows[1::3]]) + "\n")
    out = run("confidence_calibration.py", "--csv", str(toy))
    assert "fit on every round:" in out and "leave-one-round-out" in out, out
    assert "ECE" in out and "Brier" in out, out
