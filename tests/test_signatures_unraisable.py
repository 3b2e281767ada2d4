"""signatures.scan: a traceback Python printed and swallowed (``Exception ignored in: ...``) is not the run's.

The output is produced here by the interpreter itself: an object whose ``__del__`` raises at shutdown
(CPython prints it through ``PyErr_WriteUnraisable``, Python/errors.c) after a training line.
"""

from __future__ import annotations

import subprocess
import sys

from mlaudit_core.rundata import ConsoleLine
from mlaudit_core.signatures import scan


def _lines(text: str) -> list[ConsoleLine]:
    return [ConsoleLine("a.log", i, t) for i, t in enumerate(text.splitlines(), 1)]


def test_an_exception_python_swallowed_at_shutdown_is_not_the_runs_exception():
    code = (
        "class C:\n    def __del__(self):\n        raise ValueError('boom')\n"
        "c = C()\nprint('epoch 3 loss 0.2', flush=True)\ndel c\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    text = out.stdout + out.stderr
    assert "Exception ignored in" in text and "ValueError: boom" in text
    assert scan(_lines(text))[1] == []
    raised = (
        'Traceback (most recent call last):\n  File "train.py", line 4, in main\nValueError: boom\n'
    )
    tbs = scan(_lines(text + raised))[1]
    assert [t.exception_type for t in tbs] == ["ValueError"] and tbs[0].frames[0][2] == "main"


def test_load_state_dict_detail_lines_pasted_without_their_error_line_are_that_error():
    torch = __import__("pytest").importorskip("torch")
    from mlaudit_core.exception_causes import classify

    m = torch.nn.Linear(3, 2)
    try:
        m.load_state_dict({"weight": torch.zeros(4, 3), "bias": torch.zeros(2)})
    except RuntimeError as e:
        detail = str(e).splitlines()[
            1:
        ]  # the paste leaves out 'Error(s) in loading state_dict for Linear:'
    tbs = scan(_lines("\n".join(detail)))[1]
    assert tbs and tbs[-1].exception_type == "RuntimeError"
    assert classify(tbs[-1].exception_type, tbs[-1].message).id == "checkpoint-model-mismatch"
    assert scan(_lines("epoch 1 loss 0.3\nsaved model to out/model.pt\n"))[1] == []
