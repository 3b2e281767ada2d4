"""Optional packages the core uses when installed and does without otherwise.

pandas is no required dependency (``pip install 'mlaudit[pandas]'`` adds it): where it is
installed, the CSV readers use its C parser and the detectors its rolling median (both
several times faster on million-point runs); without it the same figures come from the
standard library's ``csv`` module and numpy (``tests/test_no_pandas.py`` audits every
local format with pandas blocked; ``tests/test_signal.py`` compares the medians).
"""

from __future__ import annotations

from types import ModuleType


def pandas() -> ModuleType | None:
    """The pandas module when it can be imported, else None (also when blocked with
    ``sys.modules["pandas"] = None``)."""
    try:
        import pandas as pd
    except ImportError:
        return None
    return pd
