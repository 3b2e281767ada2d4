"""A solver that its library says stopped at its iteration cap before converging, while its loss was
still falling: the run is under-trained (underfit), not a healthy finish.

scikit-learn's iterative estimators stop when the loss has not improved by more than ``tol`` (1e-4 by
default) for ``n_iter_no_change`` (10) iterations; when ``max_iter`` comes first they warn
``ConvergenceWarning: Stochastic Optimizer: Maximum iterations (N) reached and the optimization hasn't
converged yet`` (MLP), ``Maximum number of iteration reached before convergence`` (SGD models),
``lbfgs failed to converge`` (logistic regression) and the like (the signature
``sklearn-convergence-warning`` of :mod:`mlaudit_core.signatures`). The library itself then states
that its own stopping rule was not met: the model the run returns is the one the budget left, not the
one the objective would reach. With the printed loss still falling at the end (its last quarter
below its third, its last point within the last quarter's fall of its minimum) an analyst reads
"stopped while still learning: raise max_iter", whatever the score.
"""

from __future__ import annotations

import numpy as np

from ..roles import Role
from ..rundata import RunData
from ..signatures import scan_run

#: The catalogue signature of a solver stopped by its iteration cap (mlaudit_core/signatures.py).
CAP_SIGNATURE = "sklearn-convergence-warning"
#: Fewest finite training-loss points for a trend: quarters of two points each.
MIN_POINTS = 8


def stated_cap_stop(run: RunData) -> str | None:
    """The console line in which the library states that its solver reached the iteration cap before
    converging (signature :data:`CAP_SIGNATURE`), stripped; ``None`` when no such line was printed."""
    hits, _ = scan_run(run)
    for h in hits:
        if h.signature.id == CAP_SIGNATURE:
            return h.line.text.strip()
    return None


def still_falling_at_end(run: RunData) -> tuple[float, float, float] | None:
    """``(first, third-quarter median, last)`` of the training loss (>= :data:`MIN_POINTS` finite
    points, by step) when its last quarter's median is below its third quarter's and its last point
    lies within that fall of the series' minimum (the loss ends at its lowest, still going down);
    else ``None``. Quarter medians, so one noisy point does not decide."""
    key = run.key_for(Role.TRAIN_LOSS)
    if key is None:
        return None
    v = np.asarray(run.series(key).by_step().finite().values, dtype=np.float64)
    n = v.size
    if n < MIN_POINTS:
        return None
    q3 = float(np.median(v[n // 2 : 3 * n // 4]))
    q4 = float(np.median(v[3 * n // 4 :]))
    fall = q3 - q4
    if fall <= 0 or float(v[-1]) - float(v.min()) > fall:
        return None
    return float(v[0]), q3, float(v[-1])
