"""The model family a run shows, for advice that must follow it: a gradient-boosted or other tree
ensemble (LightGBM, XGBoost, CatBoost, scikit-learn's ensembles) has no gradient norm to clip, no
warmup, no dropout or weight decay; its knobs are the shrinkage (learning rate), the number of
rounds and the trees' size and regularisation.

Read from what the run itself holds, never from a file name: the console's evaluation lines in the
libraries' own formats, a library's name in its log lines, or the libraries' parameter names.
"""

from __future__ import annotations

import re

from .roles import normalise_key
from .rundata import RunData

#: Console lines only a tree-ensemble library prints: XGBoost's per-round evaluation line
#: (``[12]\ttrain-logloss:0.5\teval-logloss:0.6``, xgboost ``callback.EvaluationMonitor``),
#: LightGBM's (``[5]\ttrain's binary_logloss: 1.38``, ``lightgbm.log_evaluation``), LightGBM's and
#: CatBoost's own log prefixes, scikit-learn's ``GradientBoosting*``/``HistGradientBoosting*``
#: ``verbose=1`` header and summary (``Iter  Train Loss  Remaining Time``, ``Fit 87 trees in``).
_TREE_LINE = re.compile(
    r"^\[\d+\]\t[\w.]+-[\w@.-]+:-?[\d.]|"
    r"^\[\d+\]\t[\w.]+'s [\w@.-]+: -?[\d.]|"
    r"^\[LightGBM\] |^\s*Iter\s+Train Loss\s+(?:OOB Improve\s+)?Remaining Time|"
    r"^Fit \d+ trees in [\d.]+ s|\bxgboost\.core\.|\bLightGBMError\b|\bcatboost\b",
    re.I,
)
#: Parameter names (last dotted component) that only tree-ensemble libraries take: LightGBM's
#: ``num_leaves``, ``boosting_type``/``boosting``, ``min_child_samples``, ``min_data_in_leaf``;
#: XGBoost's ``booster``, ``min_child_weight``, ``num_boost_round``, ``tree_method``; CatBoost's
#: ``l2_leaf_reg``; scikit-learn's ``max_leaf_nodes``, ``min_samples_leaf``; the column and row
#: subsampling of XGBoost (``colsample_bytree``/``bylevel``/``bynode``) and LightGBM
#: (``feature_fraction``, ``bagging_fraction``).
_TREE_PARAMS = frozenset(
    {
        "num_leaves",
        "boosting_type",
        "boosting",
        "min_child_samples",
        "min_data_in_leaf",
        "booster",
        "min_child_weight",
        "num_boost_round",
        "tree_method",
        "l2_leaf_reg",
        "max_leaf_nodes",
        "min_samples_leaf",
        "colsample_bytree",
        "colsample_bylevel",
        "colsample_bynode",
        "feature_fraction",
        "bagging_fraction",
    }
)
#: Console lines read before giving up (tree libraries print their evaluation lines from the start).
_SCAN_LINES = 400


def tree_ensemble(run: RunData) -> str | None:
    """The evidence that the run trains a tree ensemble (a console line or a parameter name of a
    tree-ensemble library, as text), or ``None`` when the run shows none."""
    for k in run.params:
        leaf = normalise_key(k).split("/")[-1]
        if leaf in _TREE_PARAMS:
            return f"parameter {k}"
    for line in run.console[:_SCAN_LINES]:
        if _TREE_LINE.search(line.text):
            return f"console line {line.text.strip()[:80]!r}"
    return None


#: Advice that only applies to a network trained by gradient descent on its weights: the gradient
#: norm and its clipping, warmup, dropout and weight decay, reduced precision and loss scaling.
DL_ONLY_ADVICE = re.compile(
    r"grad(?:ient)? norm|clipping|warm-?up|dropout|weight decay|loss scaling|mixed precision|"
    r"\bfp16\b|\bbf16\b|\bAMP\b",
    re.I,
)
