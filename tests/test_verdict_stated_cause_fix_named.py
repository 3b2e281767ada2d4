"""verdict.statements.stated_cause on real report threads (tests/data/reports) whose maintainer names the fix
that landed in the project's code without the words the earlier readings knew:

* ``_FIX_LANDED``: a commit named as the fix (``This is now corrected in commit 97e9c5d...``, ``I have
  changed it in f216512``, ``Fixed this in https://github.com/tensorflow/agents/commit/c957dea...``);
* ``_ACKNOWLEDGED``: a named script or the main branch updated (``We updated the gpt-grader script.``,
  ``I updated the master branch with the abovementioned fix.``);
* ``_CAUSE_STATED``: an incompatibility stated between two parts of the code (``there is normalization
  incompatibility between the training script and the deepfault code``).

Each is the project's code (``code``: correctness_bug) in two batches (b35, b36); without the sentence the
thread states no cause."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mlaudit.cli import app
from mlaudit_core.formats.consolelog.context import read_context_file
from mlaudit_core.verdict.statements import stated_cause

REPORTS = Path(__file__).resolve().parent / "data" / "reports"


def _case(prefix: str) -> Path:
    (case,) = REPORTS.glob(f"{prefix}-*")
    return case


def _edited(case: Path, tmp_path: Path, old: str, new: str) -> Path:
    text = (case / "context.txt").read_text()
    assert old in text, old
    out = tmp_path / "context.txt"
    out.write_text(text.replace(old, new))
    return out


@pytest.mark.parametrize(
    ("prefix", "sentence"),
    [
        ("b35-01", "This is now corrected in commit 97e9c5d"),
        ("b36-01", "I have changed it in f216512"),
        ("b36-05", "Fixed this in https://github.com/tensorflow/agents/commit/c957dea"),
        ("b36-04", "We updated the gpt-grader script"),
        ("b36-09", "I updated the master branch with the abovementioned fix"),
        ("b35-05", "there is normalization incompatibility between"),
    ],
)
def test_stated_cause_reads_a_fix_named_by_the_maintainer_as_the_code(
    prefix: str, sentence: str, tmp_path: Path
) -> None:
    case = _case(prefix)
    got = stated_cause(read_context_file(case / "context.txt"))
    assert got is not None and got[0] == "code", got
    # without the sentence nothing in the thread states a cause
    ctx = _edited(case, tmp_path, sentence, "Thanks for the report")
    assert stated_cause(read_context_file(ctx)) is None


def test_stated_cause_does_not_take_a_reporters_commit_for_the_projects_fix(tmp_path: Path) -> None:
    """The same commit sentence said by the reporter is not the maintainer's fix landed."""
    case = _case("b36-01")
    ctx = _edited(case, tmp_path, "maintainer vvangfaye", "reporter vvangfaye")
    assert stated_cause(read_context_file(ctx)) is None


def _verdict(case: Path) -> dict:
    logs = sorted(str(p) for p in case.glob("*.log"))
    args = ["logs", *logs, "--config", str(case / "context.txt"), "--format", "json"]
    return json.loads(CliRunner().invoke(app, args).stdout)["verdict"]


@pytest.mark.parametrize("prefix", ["b35-01", "b36-04"])
def test_a_fix_named_in_the_thread_makes_the_cause_a_correctness_bug(prefix: str) -> None:
    """Before: unknown/inconclusive (no metric read, no cause stated)."""
    v = _verdict(_case(prefix))
    assert v["cause"] == "correctness_bug"
