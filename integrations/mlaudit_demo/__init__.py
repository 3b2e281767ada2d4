"""Real small training runs for ``mlaudit demo`` and the examples (numpy MLP on scikit-learn's digits)."""
