"""Start-up cost of the command line and the hooks (issue 30): wall time and ``-X importtime``.

For ``mlaudit --version``, ``mlaudit --help`` and ``import mlaudit.hooks`` (what a training
script pays), prints one row each: the median wall time of ``--repeat`` fresh interpreters
(the console script's own ``main()``), the ``python -X importtime`` total (the sum of the
cumulative microseconds of the top-level imports), and whether pandas, scipy, numpy or a
tracker SDK were imported. Print the machine's load average with it: the figures move with it.

    python benchmarks/cli_import_time.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

CASES = {
    "mlaudit --version": "import sys; sys.argv = ['mlaudit', '--version']; "
    "import mlaudit.cli; mlaudit.cli.main()",
    "mlaudit --help": "import sys; sys.argv = ['mlaudit', '--help']; "
    "import mlaudit.cli; mlaudit.cli.main()",
    "import mlaudit.hooks": "import mlaudit.hooks",
}
HEAVY = ("pandas", "scipy", "numpy", "matplotlib", "mlflow", "wandb", "clearml", "tensorboard")
PROBE = (
    "import atexit, json, sys\n"
    "atexit.register(lambda: sys.stderr.write('MODULES ' + json.dumps(sorted({m.split('.')[0] "
    "for m in sys.modules})) + '\\n'))\n"
)


def importtime_total(stderr: str) -> tuple[float, list[str]]:
    """(sum of top-level cumulative import times in ms, the heavy modules imported)."""
    total = 0
    mods: list[str] = []
    for line in stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            _, cum, name = line.split("|", 2)
            if cum.strip().isdigit() and not name.startswith("  "):  # top level: 1 space
                total += int(cum)
        elif line.startswith("MODULES "):
            mods = [m for m in json.loads(line[8:]) if m in HEAVY]
    return total / 1000, mods


def measure(code: str, repeat: int) -> tuple[float, float, list[str]]:
    walls = []
    for _ in range(repeat):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], capture_output=True, check=False)
        walls.append(time.perf_counter() - t)
    p = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", PROBE + code],
        capture_output=True,
        text=True,
        check=False,
    )
    total, mods = importtime_total(p.stderr)
    return statistics.median(walls), total, mods


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    print(
        f"load average {os.getloadavg()[0]:.1f}, {os.cpu_count()} CPUs, python {sys.version.split()[0]}"
    )
    print(f"{'start':24} {'wall s':>8} {'importtime ms':>14}  heavy modules imported")
    for label, code in CASES.items():
        wall, total, mods = measure(code, args.repeat)
        print(f"{label:24} {wall:8.3f} {total:14.1f}  {', '.join(mods) or 'none'}")


if __name__ == "__main__":
    main()
