"""LightGBM training with evaluation sets, as printed on the console (and optionally recorded by MLflow autolog).

Usage: python lightgbm_train.py {early_stop,overfit} [MLFLOW_DIR]
- early_stop: lgb.train with train and valid sets, log_evaluation(1), early_stopping(10).
- overfit: 60 training rows, min_data_in_leaf=1, 80 rounds and no early stopping: the valid
  binary_logloss is lowest after a few rounds and rises while the train loss keeps falling.
With MLFLOW_DIR, mlflow.lightgbm.autolog() records the run into the local file store MLFLOW_DIR.
"""

import sys

import lightgbm as lgb
import numpy as np

mode = sys.argv[1]
if len(sys.argv) > 2:
    import mlflow

    mlflow.set_tracking_uri(f"file:{sys.argv[2]}")
    mlflow.set_experiment(f"lightgbm-{mode}")
    mlflow.lightgbm.autolog(log_models=False)
rng = np.random.default_rng(1)


def make(n):
    x = rng.normal(size=(n, 6))
    p = 1 / (1 + np.exp(-(x[:, 0] - x[:, 1] + 0.5 * x[:, 2])))
    return x, (rng.random(n) < p).astype(int)


x, y = make(60 if mode == "overfit" else 2000)
xv, yv = make(400)
params = {
    "objective": "binary",
    "metric": ["binary_logloss", "auc"],
    "seed": 0,
    "verbose": 1,
    "learning_rate": 0.3 if mode == "overfit" else 0.05,
    "min_data_in_leaf": 1 if mode == "overfit" else 20,
    "num_leaves": 31 if mode == "overfit" else 15,
}
dtrain = lgb.Dataset(x, label=y)
dvalid = lgb.Dataset(xv, label=yv, reference=dtrain)
cbs = [lgb.log_evaluation(1)]
if mode != "overfit":
    cbs.append(lgb.early_stopping(10))
bst = lgb.train(
    params,
    dtrain,
    num_boost_round=80 if mode == "overfit" else 400,
    valid_sets=[dtrain, dvalid],
    valid_names=["train", "valid"],
    callbacks=cbs,
)
print(f"best iteration {bst.best_iteration}")
