"""Generate the labelled corpus: real training runs with injected faults, in one MLflow store.

Usage (from the repository root)::

    python -m examples.corpus.generate --out corpus/            # 12 classes x 3 seeds, ~2-4 min
    python examples/corpus/generate.py --out corpus/ --seeds 1 --classes healthy,oom_crash --scale 0.3

``DIR`` receives ``mlflow.db`` (the tracking store, ``sqlite:///DIR/mlflow.db``), the
artifacts (``DIR/artifacts``) and ``manifest.json`` (one entry per run: run id, class,
seed, variant, expected outcome set and cause, status, the RunSpec). The labels are also
tags on every run: ``corpus.class``, ``corpus.expected_outcome`` (comma-separated set,
``*`` = any), ``corpus.expected_cause``, ``corpus.seed``, ``corpus.variant``,
``corpus.fault``.

Exit status: 0 on success, 2 on bad input (a non-empty ``--out`` that already holds a
store, an unknown class, a non-positive count).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make ``examples.corpus`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from examples.corpus.classes import CLASSES, build_spec
from examples.corpus.train import spec_dict, train_run

EXPERIMENT = "mlaudit-corpus"

__all__ = ["EXPERIMENT", "generate", "main", "tracking_uri"]


def tracking_uri(out: Path) -> str:
    """The MLflow tracking URI of the corpus in ``out``."""
    return f"sqlite:///{Path(out).resolve() / 'mlflow.db'}"


def generate(
    out: Path,
    seeds: int = 3,
    classes: list[str] | None = None,
    scale: float = 1.0,
    verbose: bool = False,
    echo=print,
) -> list[dict]:
    """Train every (class, seed) run into ``out`` and return the manifest entries.

    Args:
        out: directory for ``mlflow.db``, ``artifacts/`` and ``manifest.json`` (created).
        seeds: seeds 0..seeds-1 per class (healthy has two runs per seed).
        classes: class names (default: all, in catalogue order).
        scale: factor on the number of steps of every run (>0; 1.0 for the real corpus).
        verbose: echo every console line of every run.
        echo: where the one-line-per-run summary goes (``None``: nowhere).

    Raises:
        ValueError: unknown class, ``seeds`` < 1, ``scale`` <= 0, or ``out`` already holds a
            store.
    """
    names = list(classes) if classes else list(CLASSES)
    unknown = [n for n in names if n not in CLASSES]
    if unknown:
        raise ValueError(
            f"unknown corpus class(es) {', '.join(unknown)}; choose from {', '.join(CLASSES)}"
        )
    if seeds < 1:
        raise ValueError(f"--seeds must be >= 1, got {seeds}")
    if not scale > 0:
        raise ValueError(f"--scale must be > 0, got {scale}")
    out = Path(out)
    if (out / "mlflow.db").exists():
        raise ValueError(f"{out} already holds a corpus (mlflow.db); pass an empty directory")
    out.mkdir(parents=True, exist_ok=True)

    import mlflow

    for name in ("mlflow", "alembic"):  # store-migration chatter
        logging.getLogger(name).setLevel(logging.WARNING)
    client = mlflow.MlflowClient(tracking_uri(out))
    exp_id = client.create_experiment(
        EXPERIMENT, artifact_location=(out / "artifacts").resolve().as_uri()
    )
    # Warm the imports and dataset caches so the first run's startup is like every other's.
    from examples.corpus.train import load_dataset

    for ds in {build_spec(n, 0, 0, scale).dataset for n in names}:
        load_dataset(ds, 0)
    manifest: list[dict] = []
    t0 = time.time()
    for name in names:
        cls = CLASSES[name]
        for seed in range(seeds):
            for index in range(cls.runs_per_seed):
                spec = build_spec(name, seed, index, scale)
                variant = f"{spec.family}/{spec.dataset}"
                tags = {
                    "corpus.class": name,
                    "corpus.expected_outcome": cls.expected_outcome_tag(),
                    "corpus.expected_cause": cls.cause,
                    "corpus.seed": str(seed),
                    "corpus.variant": variant,
                    "corpus.fault": cls.fault,
                    "corpus.generator": "examples/corpus",
                }
                res = train_run(spec, client, exp_id, tags=tags, verbose=verbose)
                entry = {
                    "run_id": res.run_id,
                    "class": name,
                    "seed": seed,
                    "variant": variant,
                    "expected_outcome": sorted(cls.outcomes) if cls.outcomes else None,
                    "expected_cause": cls.cause,
                    "status": res.status,
                    "steps_logged": res.steps_logged,
                    "wall_time_s": round(res.wall_time, 3),
                    "spec": spec_dict(spec),
                }
                manifest.append(entry)
                if echo is not None:
                    echo(
                        f"{name:<24} seed={seed} {variant:<26} {res.status:<8} "
                        f"steps={res.steps_logged:<5} wall={res.wall_time:5.1f}s "
                        f"train_loss={res.last('train/loss'):.4g} val_acc={res.last('val/accuracy'):.3f} "
                        f"run_id={res.run_id}"
                    )
    (out / "manifest.json").write_text(
        json.dumps(
            {
                "tracking_uri": tracking_uri(out),
                "experiment": EXPERIMENT,
                "seeds": seeds,
                "scale": scale,
                "runs": manifest,
            },
            indent=1,
        )
    )
    if echo is not None:
        echo(f"{len(manifest)} runs in {time.time() - t0:.1f}s -> {tracking_uri(out)}")
    return manifest


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, type=Path, help="empty directory for the corpus")
    ap.add_argument("--seeds", type=int, default=3, help="seeds per class (default 3)")
    ap.add_argument(
        "--classes",
        default=None,
        help=f"comma-separated subset of: {', '.join(CLASSES)} (default: all)",
    )
    ap.add_argument(
        "--scale",
        type=float,
        default=1.0,
        help="factor on the number of steps (e.g. 0.3 for a smoke test)",
    )
    ap.add_argument("--verbose", action="store_true", help="echo every run's console lines")
    args = ap.parse_args(argv)
    classes = [c.strip() for c in args.classes.split(",") if c.strip()] if args.classes else None
    try:
        generate(args.out, args.seeds, classes, args.scale, verbose=args.verbose)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
