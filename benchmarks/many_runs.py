"""Memory and time of ``mlaudit PATH`` on a folder of many small runs (issue 15).

Writes ``N`` one-row CSV runs (``step,loss`` / ``1,0.5``: the shape a breaker used, 10,000 of
them) into a temporary folder, then runs ``mlaudit audit DIR --no-write`` once per output
format in a subprocess and prints, per run count: runs found, runs audited, wall seconds,
milliseconds per run, and the subprocess's peak RSS (``ru_maxrss`` of the waited child: this
script stays small, so the child's figure is its own).

Memory should not grow with the number of runs audited: reports are streamed (written as
each run is audited, not kept), and at most ``--max-runs`` runs (default
:data:`mlaudit.cli.cmd_audit.MAX_RUNS`) are audited per call. The slope line compares the
peak at the smallest and the largest count.

Usage: ``python benchmarks/many_runs.py [--runs 200,1000] [--formats json,terminal] [--max-runs N]``
(``tests/test_formats.py`` runs it with ``--runs 5,12``).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def make(folder: Path, n: int) -> None:
    folder.mkdir(parents=True)
    for i in range(n):
        (folder / f"r{i:05d}.csv").write_text("step,loss\n1,0.5\n")


def run(folder: Path, fmt: str, max_runs: int | None) -> dict:
    exe = shutil.which("mlaudit", path=str(Path(sys.executable).parent)) or "mlaudit"
    cmd = [exe, "audit", str(folder), "--no-write", "--format", fmt]
    if max_runs is not None:
        cmd += ["--max-runs", str(max_runs)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, COLUMNS="120"))
    secs = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if out.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} exited {out.returncode}:\n{out.stderr[-2000:]}")
    found = audited = 0
    for line in out.stderr.splitlines():
        if " runs found" in line and ":" in line:
            found = int(line.rsplit(":", 1)[1].split()[0].replace(",", ""))
        if line.startswith("audited "):
            audited = int(line.split()[1].replace(",", ""))
    return {
        "found": found,
        "audited": audited,
        "seconds": secs,
        "peak_mb": (peak if peak > before else before) / 1024,
        "bytes_out": len(out.stdout),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", default="200,1000", help="comma-separated run counts")
    ap.add_argument("--formats", default="json,terminal", help="output formats to run")
    ap.add_argument(
        "--max-runs", type=int, default=None, help="pass --max-runs to mlaudit (0: no cap)"
    )
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="mlaudit-many-"))
    rows = []
    try:
        print(
            f"{'runs':>7} {'format':9} {'found':>7} {'audited':>8} {'seconds':>8} {'ms/run':>7} {'peak MB':>8}"
        )
        for n in [int(x) for x in a.runs.split(",") if x]:
            folder = tmp / f"n{n}"
            make(folder, n)
            for fmt in a.formats.split(","):
                r = run(folder, fmt, a.max_runs)
                per = 1000 * r["seconds"] / max(r["audited"], 1)
                rows.append((n, fmt, r))
                print(
                    f"{n:>7,d} {fmt:9} {r['found']:>7,d} {r['audited']:>8,d} {r['seconds']:>8.1f} {per:>7.0f} "
                    f"{r['peak_mb']:>8.0f}",
                    flush=True,
                )
            shutil.rmtree(folder)
        for fmt in a.formats.split(","):
            mine = [(n, r) for n, f, r in rows if f == fmt]
            if len(mine) >= 2:
                (_n0, r0), (_n1, r1) = mine[0], mine[-1]
                da = max(r1["audited"] - r0["audited"], 1)
                print(
                    f"{fmt}: peak grows {(r1['peak_mb'] - r0['peak_mb']) * 1024 / da:.1f} KB per audited run "
                    f"({r0['audited']} -> {r1['audited']} runs audited)"
                )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
