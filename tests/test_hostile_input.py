"""Hostile-but-realistic input to ``mlaudit audit PATH`` (breaker findings).

Each test runs the real CLI in a subprocess on files written here; no mocks.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

MLAUDIT = [str(Path(sys.executable).with_name("mlaudit"))]


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([*MLAUDIT, *args], cwd=cwd, capture_output=True, timeout=300)


def _csv(path: Path, n: int = 40) -> None:
    path.write_text("step,loss\n" + "".join(f"{i},{1 / (i + 1)}\n" for i in range(n)))


def test_escape_codes_in_a_file_name_never_reach_the_terminal(tmp_path):
    """A run file named with ESC/BEL (an OSC retitle, a colour) is shown as \\xNN on every line."""
    _csv(tmp_path / "run\x1b]0;owned\x07\x1b[31m.csv")
    for args in (["audit", "."], ["audit", ".", "--list"]):
        p = _run(*args, cwd=tmp_path)
        both = p.stdout + p.stderr
        assert b"\x1b" not in both and b"\x07" not in both, (args, both[:400])
        assert b"\\x1b" in both, (args, both[:400])


def _trainer_state(path: Path) -> None:
    import json

    path.write_text(
        json.dumps(
            {
                "global_step": 50,
                "log_history": [{"step": i, "loss": 1 / (i + 1)} for i in range(1, 51)],
            }
        )
    )


def test_mcp_never_reads_a_file_linked_from_inside_a_root_to_outside(tmp_path):
    """A run folder inside --root whose trainer_state.json is a symlink to a file outside the
    root: audit_path and get_series refuse it (one line naming the link); the same run as a
    real file inside the root is audited."""
    import pytest

    from mlaudit_core.agent.tools import Roots, Toolbox, ToolFailure

    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "run").mkdir(parents=True)
    outside.mkdir()
    _trainer_state(outside / "trainer_state.json")
    (root / "run" / "trainer_state.json").symlink_to(outside / "trainer_state.json")
    tools = Toolbox(Roots.of([root]))
    for name, args in (
        ("audit_path", {"path": "run"}),
        ("get_series", {"source": "path", "run_ref": "run", "metric": "loss"}),
    ):
        with pytest.raises(ToolFailure) as exc:
            tools.call(name, args)
        assert "trainer_state.json links outside the allowed roots" in str(exc.value), name
    (root / "run" / "trainer_state.json").unlink()
    _trainer_state(root / "run" / "trainer_state.json")
    assert tools.call("audit_path", {"path": "run"}).data["runs"][0]["reader"] == "trainer_state"


def test_bidi_controls_in_a_run_name_are_shown_not_obeyed():
    """A right-to-left override (U+202E) or isolate (U+2066) in a name would reorder it on
    screen; the text channels show it as \\uNNNN (C0 controls still as \\xNN)."""
    from mlaudit_core.redact import redact_text

    shown = redact_text("run\u202egnp.exe \u2066x\u2069 \x1b[2J")
    assert "\u202e" not in shown and "\u2066" not in shown and "\u2069" not in shown
    assert "\\u202e" in shown and "\\u2066" in shown and "\\x1b" in shown
    assert redact_text("café 中文") == "café 中文"  # ordinary non-ASCII untouched
