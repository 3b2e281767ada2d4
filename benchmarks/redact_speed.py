"""Speed of secret redaction (:func:`mlaudit_core.redact.redact_text`) on console lines.

Generates the mixed-format training log of ``benchmarks/logs_throughput.py`` (HF, Megatron,
fairseq, DeepSpeed, Keras... lines, chatter, a traceback) with one line in 200 carrying a
credential (connection strings, tokens, ``--password``, ``Authorization`` headers, PEM
lines), then times, in this process:

- redact: ``redact_text`` on every line (what a channel that redacted every console line
  would pay; an audit itself redacts only the report's strings: the evidence lines);
- parse: ``mlaudit_core.formats.consolelog.load_logs`` on the same file (the first step of ``mlaudit logs``).

Prints lines per second of each (CPU time, the figure that does not depend on the other
processes of a shared machine), the ratio, how many lines were changed, and whether every
planted credential was removed.

Then one long line (``--long-line`` characters, default 1 MB) of each hostile shape that
holds a credential keyword (so every shape of the catalogue runs on it): a long word, an
unclosed quote after ``--password``, ``password_`` repeated as one key, a URL without end.
Each is timed at a tenth of the length and at the full length; the time must grow about
tenfold (linear), not a hundredfold (a regular expression that backtracks quadratically).
Exits 1 when a ratio exceeds :data:`MAX_GROWTH`. Usage::

    python benchmarks/redact_speed.py [--lines 200000] [--long-line 1000000]
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from logs_throughput import generate  # noqa: E402

from mlaudit_core.redact import redact_text  # noqa: E402

#: credential-carrying lines planted in the log; the secret part of each is the last field
PLANTED = [
    "sqlalchemy.exc.OperationalError: could not connect: postgresql://ml:{s}@db:5432/mlflow",
    "redis.exceptions.ConnectionError: redis://:{s}@cache:6379/0 refused",
    "launch: python train.py --password {s} --lr 3e-4",
    "requests.exceptions.HTTPError: 401 for url with Authorization: Bearer {s}",
    "env: HF_TOKEN=hf_{s}",
    'config: db_password: "{s}"',
]


#: hostile long lines: name -> length -> text (each holds a keyword, so no line is skipped)
LONG_LINES = {
    "long word": lambda n: "password " + "a" * n,
    "long hyphenated word": lambda n: "password " + "a-" * (n // 2),
    "unclosed quote after a flag": lambda n: '--password "' + "a b" * (n // 3),
    "one key of repeated keywords": lambda n: "-" + "password_" * (n // 9),
    "URL without end": lambda n: "token https://" + "a" * n,
    "quoted flags without end": lambda n: '--password "x ' * (n // 14),
}
#: time(n) / time(n / 10) above this is superlinear: linear is ~10, quadratic ~100
MAX_GROWTH = 30.0


def long_line_growth(length: int) -> dict[str, tuple[float, float]]:
    """CPU seconds of ``redact_text`` on each :data:`LONG_LINES` shape at ``length // 10``
    and ``length`` characters."""
    out = {}
    for name, make in LONG_LINES.items():
        times = []
        for n in (length // 10, length):
            text = make(n)
            t0 = time.process_time()
            redact_text(text)
            times.append(time.process_time() - t0)
        out[name] = (times[0], times[1])
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=200_000)
    ap.add_argument("--long-line", type=int, default=1_000_000, help="characters; 0 skips")
    args = ap.parse_args(argv)
    rnd = random.Random(1)
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "train.log"
        generate(path, args.lines)
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        secrets: list[str] = []
        for i in range(0, len(lines), 200):
            s = "".join(rnd.choice("ABCDEFGHabcdefgh0123456789") for _ in range(34))
            secrets.append(s)
            lines[i] = rnd.choice(PLANTED).format(s=s)
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")

        t0 = time.process_time()
        out = [redact_text(x) for x in lines]
        t_redact = time.process_time() - t0

        from mlaudit_core.formats.consolelog import load_logs

        t0 = time.process_time()
        load_logs([path])
        t_parse = time.process_time() - t0

    changed = sum(a != b for a, b in zip(lines, out))
    joined = "\n".join(out)
    leaked = sum(s in joined for s in secrets)
    n = len(lines)
    print(
        f"lines: {n}, planted credentials: {len(secrets)}, lines changed: {changed}, "
        f"leaked: {leaked}"
    )
    print(f"redact: {n / max(t_redact, 1e-9):,.0f} lines/s ({t_redact:.2f} s CPU)")
    print(f"parse (load_logs): {n / max(t_parse, 1e-9):,.0f} lines/s ({t_parse:.2f} s CPU)")
    print(f"redact / parse time: {t_redact / max(t_parse, 1e-9):.2f}")
    superlinear = []
    if args.long_line:
        for name, (small, full) in long_line_growth(args.long_line).items():
            # below ~5 ms the clock's resolution decides the ratio: floor the small time
            growth = full / max(small, 0.005)
            print(
                f"long line, {name}: {args.long_line // 10:,} chars {small:.3f} s, "
                f"{args.long_line:,} chars {full:.3f} s CPU (x{growth:.1f})"
            )
            if growth > MAX_GROWTH:
                superlinear.append(name)
        print(f"superlinear long lines: {len(superlinear)}")
    return 0 if leaked == 0 and not superlinear else 1


if __name__ == "__main__":
    raise SystemExit(main())
