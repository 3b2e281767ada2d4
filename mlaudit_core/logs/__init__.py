"""Old import path of the console-log engine, kept working.

The engine now lives in :mod:`mlaudit_core.formats.consolelog`, next to every other
local format reader (:mod:`mlaudit_core.formats`). ``import mlaudit_core.logs`` and
``from mlaudit_core.logs.parser import ...`` give the very same module objects
(aliased in ``sys.modules``), so monkeypatching either name patches both.
"""

from __future__ import annotations

import importlib
import sys

_NEW = "mlaudit_core.formats.consolelog"
for _sub in ("context", "formats", "names", "parser", "reader"):
    sys.modules[f"{__name__}.{_sub}"] = importlib.import_module(f"{_NEW}.{_sub}")
sys.modules[__name__] = importlib.import_module(_NEW)
