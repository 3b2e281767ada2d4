"""Memory and time of ``mlaudit_clearml.offline.load_offline`` on a zip bomb.

Writes an offline session zip whose ``metrics.jsonl`` inflates to ``--gib`` GiB (a ~1.5 MB zip
for 1.5 GiB: deflate's ~1000:1 on repeated bytes) in one of two shapes, then loads it in a child
process and prints the zip size, the uncompressed size, the wall time, the child's peak RSS
and the warnings:

* ``line``: one enormous line (a ``[`` then spaces): skipped at ``MAX_LINE_BYTES``, read on to
  ``MAX_SESSION_BYTES``;
* ``lines``: the same scalar event line repeated (re-reports of one point): every line is parsed
  until ``MAX_SESSION_BYTES`` (about 40 s per GiB on one core).

    python benchmarks/clearml_offline_bomb.py --gib 1.5 --shape line
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

_CHILD = """
import resource, sys, time
from mlaudit_clearml.offline import load_offline
t = time.perf_counter()
run = load_offline(sys.argv[1])
dt = time.perf_counter() - t
print(f"load time      : {dt:.1f} s")
print(f"peak RSS       : {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
print(f"points read    : {len(run.metrics.to_frame())}")
for w in run.warnings:
    print(f"warning        : {w}")
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gib", type=float, default=1.5)
    ap.add_argument("--shape", choices=("line", "lines"), default="line")
    a = ap.parse_args()
    total = int(a.gib * (1 << 30))
    with tempfile.TemporaryDirectory() as tmp:
        z = Path(tmp) / "bomb.zip"
        task = {"id": "offline-b0b", "name": "bomb", "project_name": "bench"}
        ev = {
            "type": "training_stats_scalar",
            "task": "offline-b0b",
            "metric": "train",
            "variant": "loss",
            "iter": 1,
            "value": 1.0,
            "timestamp": 1_700_000_000_000,
        }
        unit = (json.dumps([ev]) + "\n").encode() if a.shape == "lines" else b" " * 4096
        chunk = unit * max(1, (8 << 20) // len(unit))
        with zipfile.ZipFile(z, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
            zf.writestr("offline-b0b/task.json", json.dumps(task))
            with zf.open("offline-b0b/metrics.jsonl", "w", force_zip64=True) as fh:
                written = 0
                if a.shape == "line":
                    fh.write(b"[")
                while written < total:
                    fh.write(chunk)
                    written += len(chunk)
        print(
            f"zip            : {z.stat().st_size / 1e6:.1f} MB -> metrics.jsonl {written / (1 << 30):.2f} GiB "
            f"({a.shape})"
        )
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", _CHILD, str(z)], check=True)
        print(f"child wall     : {time.perf_counter() - t:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
