"""Vectorised numeric helpers shared by detectors (numpy/pandas, no loops over points)."""

from __future__ import annotations

import numpy as np

# pandas (its rolling median) loads on the first call: importing the detectors skips it

#: Modified z-score constant and outlier cut-off from Iglewicz & Hoaglin (1993),
#: "How to Detect and Handle Outliers": |M| > 3.5 flags an outlier.
MAD_Z_SCALE = 0.6745
MAD_Z_CUTOFF = 3.5


def rolling_median(values: np.ndarray, window: int) -> np.ndarray:
    """Trailing rolling median, shape (n,); the first points use what is available."""
    if values.size == 0:
        return values.astype(float)
    import pandas as pd

    return pd.Series(values).rolling(window, min_periods=1).median().to_numpy()


def centered_median(values: np.ndarray, window: int) -> np.ndarray:
    """Centred rolling median, shape (n,): a spike-robust smoother that does not lag."""
    if values.size == 0:
        return values.astype(float)
    import pandas as pd

    return pd.Series(values).rolling(window, min_periods=1, center=True).median().to_numpy()


def robust_z(values: np.ndarray, reference: np.ndarray, window: int) -> np.ndarray:
    """Modified z-score of each point against a trailing window of ``reference`` residuals.

    Returns shape (n,). Uses the median absolute deviation of the residuals
    (values - reference) over the trailing ``window`` (Iglewicz & Hoaglin 1993).
    A zero MAD (perfectly flat window) gives z = 0 for unchanged points.
    """
    import pandas as pd

    resid = values - reference
    s = pd.Series(resid)
    mad = s.abs().rolling(window, min_periods=3).median().shift(1).to_numpy()
    with np.errstate(divide="ignore", invalid="ignore"):
        z = MAD_Z_SCALE * resid / mad
    z[~np.isfinite(z)] = 0.0
    return z


def smooth_window(n: int, frac: float = 0.05, lo: int = 3, hi: int = 101) -> int:
    """An odd smoothing window of about ``frac`` of ``n`` points, clipped to [lo, hi]."""
    w = int(max(lo, min(hi, round(n * frac))))
    return w if w % 2 else w + 1


def first_true(mask: np.ndarray) -> int | None:
    """Index of the first True in a boolean array, or None."""
    idx = np.flatnonzero(mask)
    return int(idx[0]) if idx.size else None


def fmt(x: float | int | None, digits: int = 4) -> str:
    """Compact human formatting of a figure (``None``/NaN as 'n/a')."""
    if x is None:
        return "n/a"
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    if not np.isfinite(x):
        return str(x)
    return f"{x:.{digits}g}"


def clip(text: str, n: int = 200) -> str:
    """``text`` cut to at most ``n`` characters at a word boundary, with an ellipsis when cut.

    The text is redacted (:func:`mlaudit_core.redact.redact_text`) before it is cut: a cut
    through a credential leaves a fragment no credential shape matches any more (break-it:
    ``s3://AKIA...:SECRET@bucket`` cut before its ``@``)."""
    if len(text) > n:
        from .redact import redact_text

        text = redact_text(text)
    if len(text) <= n:
        return text
    cut = text[: n - 1].rsplit(" ", 1)[0]
    return cut.rstrip(",;: ") + "…"
