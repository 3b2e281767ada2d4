"""Train the five demo regimes into an MLflow store and TensorBoard logs.

The training code lives in the installed package (``mlaudit_demo.regimes``) so that
``mlaudit demo`` works from any install; this script is its command line::

    python examples/regimes.py --tracking-uri sqlite:///runs/mlflow.db --tb-root runs/tb
"""

from mlaudit_demo.regimes import REGIMES, main, train  # noqa: F401

if __name__ == "__main__":
    raise SystemExit(main())
