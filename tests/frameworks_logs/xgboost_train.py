"""XGBoost training with evaluation sets, as printed on the console (and optionally recorded by MLflow autolog).

Usage: python xgboost_train.py {early_stop,overfit,sklearn} [MLFLOW_DIR]
- early_stop: xgb.train on 1,500 rows, train and valid evaluation sets, early_stopping_rounds=10.
- overfit: 40 training rows, deep trees, 60 rounds and no early stopping: the valid logloss is lowest
  after a few rounds and rises while the train logloss keeps falling.
- sklearn: XGBClassifier.fit(eval_set=[...], verbose=5) with early stopping.
With MLFLOW_DIR, mlflow.xgboost.autolog() records the run into the local file store MLFLOW_DIR.
"""

import sys

import numpy as np
import xgboost as xgb

mode = sys.argv[1]
if len(sys.argv) > 2:
    import mlflow

    mlflow.set_tracking_uri(f"file:{sys.argv[2]}")
    mlflow.set_experiment(f"xgboost-{mode}")
    mlflow.xgboost.autolog(log_models=False)
rng = np.random.default_rng(0)


def make(n):
    x = rng.normal(size=(n, 6))
    p = 1 / (1 + np.exp(-(x[:, 0] - x[:, 1] + 0.5 * x[:, 2])))
    return x, (rng.random(n) < p).astype(int)


if mode == "sklearn":
    x, y = make(1500)
    xv, yv = make(500)
    clf = xgb.XGBClassifier(
        n_estimators=200,
        learning_rate=0.1,
        max_depth=3,
        early_stopping_rounds=10,
        eval_metric=["logloss", "error"],
    )
    clf.fit(x, y, eval_set=[(x, y), (xv, yv)], verbose=5)
    print(f"best iteration {clf.best_iteration}, best score {clf.best_score:.5f}")
    sys.exit(0)
x, y = make(40 if mode == "overfit" else 1500)
xv, yv = make(400)
dtrain, dvalid = xgb.DMatrix(x, label=y), xgb.DMatrix(xv, label=yv)
params = {
    "objective": "binary:logistic",
    "eval_metric": ["logloss", "auc"],
    "seed": 0,
    "max_depth": 8 if mode == "overfit" else 3,
    "eta": 0.3 if mode == "overfit" else 0.1,
    "min_child_weight": 0 if mode == "overfit" else 1,
}
kw = {} if mode == "overfit" else {"early_stopping_rounds": 10}
bst = xgb.train(
    params,
    dtrain,
    num_boost_round=60 if mode == "overfit" else 300,
    evals=[(dtrain, "train"), (dvalid, "valid")],
    **kw,
)
if mode != "overfit":
    print(f"best iteration {bst.best_iteration}, best score {bst.best_score:.5f}")
