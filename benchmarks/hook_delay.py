"""How long an in-process hook delays the end of a training job, by run size.

For each size, logs one MLflow run of ``N`` train-loss points (plus a validation loss every
100 steps) to a fresh ``sqlite:///`` store with ``MlflowClient.log_batch``, then times
``with mlaudit.audit_on_exit(): ...`` around the end of that run: the seconds between the
block's end and the hook's return (flush, load, audit, write-back of tags, Description and
report artifacts). Building the run is not counted; the first size also pays the imports of
mlaudit's core, which a real job pays once too.

Usage: ``python benchmarks/hook_delay.py [--sizes 1000,100000,1000000]``
"""

from __future__ import annotations

import argparse
import math
import tempfile
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1000,100000,1000000")
    args = ap.parse_args()
    import mlflow
    from mlflow.entities import Metric

    import mlaudit

    print(f"{'points':>10} {'hook delay s':>13} {'status':>8} verdict")
    with tempfile.TemporaryDirectory() as d:
        mlflow.set_tracking_uri(f"sqlite:///{Path(d) / 'mlflow.db'}")
        client = mlflow.MlflowClient()
        exp = client.create_experiment("hook-delay")
        for n in (int(x) for x in args.sizes.split(",")):
            hook = mlaudit.audit_on_exit(budget_s=600)
            with mlflow.start_run(experiment_id=exp) as run:
                ms = []
                for i in range(1, n + 1):
                    loss = 2.0 * math.exp(-i / (n / 5)) + 0.3
                    ms.append(Metric("train/loss", loss, 1_700_000_000_000 + i, i))
                    if i % 100 == 0:
                        ms.append(Metric("val/loss", loss + 0.05, 1_700_000_000_000 + i, i))
                for k in range(0, len(ms), 1000):
                    client.log_batch(run.info.run_id, metrics=ms[k : k + 1000])
                with hook:
                    pass  # training ends here; the hook audits the run, still open in MLflow
            (res,) = hook.results  # res.seconds: from the block's end to the hook's return
            print(f"{n:>10,} {res.seconds:>13.2f} {res.status:>8} {res.outcome}/{res.cause}")


if __name__ == "__main__":
    main()
