"""A training script with a hand-written loop, run by tests/test_hooks.py as a subprocess.

Environment:
    MLFLOW_TRACKING_URI   where runs are logged (the test's mlflow server).
    LOOP                  ``regime``: mlaudit_demo's numpy MLP, regime ``high_lr`` (it starts and
                          ends its own MLflow run); ``own``: a small numpy softmax regression in
                          this file (synthetic data), inside ``with mlflow.start_run()``.
    HOOK                  ``none`` | ``with`` (context manager) | ``atexit`` (plain call).
    HOOK_BUDGET           the hook's budget in seconds (default: the hook's default).
    HOOK_CONFIG           a settings file for the hook.
    HOOK_NOTIFY           a webhook URL for the hook.
    CRASH                 ``1``: raise after training (an uncaught exception, exit status 1).
    RUN_ID_FILE           the run id is written there (stdout must not depend on it).

Stdout is deterministic for a given seed: the tests compare it with and without the hook.
"""

from __future__ import annotations

import os
from pathlib import Path

import mlflow
import numpy as np


def own_loop(record: Path, steps: int = 120) -> None:
    """Softmax regression with plain SGD on a fixed synthetic 10-class problem (64 features,
    class = argmax of a random linear map plus noise); logs train/val loss to MLflow."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1800, 64))
    y = (X @ rng.normal(size=(64, 10)) + rng.normal(scale=2.0, size=(1800, 10))).argmax(1)
    X_tr, y_tr, X_val, y_val = X[:1400], y[:1400], X[1400:], y[1400:]
    W = np.zeros((64, 10))
    with mlflow.start_run(run_name="own-loop") as run:
        record.write_text(run.info.run_id)
        mlflow.log_params({"lr": 0.5, "batch_size": 32, "steps": steps})
        for step in range(1, steps + 1):
            idx = rng.integers(0, len(X_tr), 32)
            z = X_tr[idx] @ W
            p = np.exp(z - z.max(1, keepdims=True))
            p /= p.sum(1, keepdims=True)
            loss = float(-np.log(p[np.arange(32), y_tr[idx]] + 1e-12).mean())
            p[np.arange(32), y_tr[idx]] -= 1
            W -= 0.5 * X_tr[idx].T @ p / 32
            metrics = {"train/loss": loss, "train/lr": 0.5}
            if step % 10 == 0:
                zv = X_val @ W
                pv = np.exp(zv - zv.max(1, keepdims=True))
                pv /= pv.sum(1, keepdims=True)
                metrics["val/loss"] = float(
                    -np.log(pv[np.arange(len(y_val)), y_val] + 1e-12).mean()
                )
                metrics["val/accuracy"] = float((pv.argmax(1) == y_val).mean())
                print(f"step {step} loss {loss:.4f} val_loss {metrics['val/loss']:.4f}", flush=True)
            mlflow.log_metrics(metrics, step=step)
        if os.environ.get("CRASH") == "1":
            raise RuntimeError("evaluation failed after training")


def regime_loop(record: Path) -> None:
    from mlaudit_demo.regimes import train

    out = train("high_lr", steps=200, verbose=False)
    print(f"high_lr: diverged at step {out['diverged_at']}, {out['steps']} steps", flush=True)
    record.write_text(out["run_id"])


def main() -> None:
    mlflow.set_experiment("hooks-plain")
    hook = os.environ.get("HOOK", "none")
    opts = {}
    if os.environ.get("HOOK_BUDGET"):
        opts["budget_s"] = float(os.environ["HOOK_BUDGET"])
    if os.environ.get("HOOK_CONFIG"):
        opts["config"] = os.environ["HOOK_CONFIG"]
    if os.environ.get("HOOK_NOTIFY"):
        opts["notify"] = os.environ["HOOK_NOTIFY"]
    loop = regime_loop if os.environ.get("LOOP") == "regime" else own_loop
    record = Path(os.environ.get("RUN_ID_FILE", os.devnull))
    print("training starts", flush=True)
    if hook == "with":
        import mlaudit

        with mlaudit.audit_on_exit(**opts):
            loop(record)
    else:
        if hook == "atexit":
            import mlaudit

            mlaudit.audit_on_exit(**opts)
        loop(record)
    print("training done", flush=True)


if __name__ == "__main__":
    main()
