"""formats/consolelog/context.parse_context_lines: a ``key: sentence`` line that lists settings keeps the
sentence as well as the settings."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from mlaudit.cli import app
from mlaudit_core.formats.consolelog.context import parse_context_lines

REPORTS = Path(__file__).resolve().parent / "data" / "reports"


def test_a_sentence_that_lists_settings_is_kept_with_them():
    line = (
        "task: GraphSAGE on Cora, 10 repeats, each resetting every seed to 111 and setting "
        "cudnn.deterministic=True, benchmark=False, enabled=False before building the model"
    )
    got = parse_context_lines([line])
    assert got["benchmark"] == "False"
    assert got["task"].startswith("GraphSAGE on Cora, 10 repeats")
    # a plain settings line stays settings only
    assert parse_context_lines(["lr=0.1, batch_size=32, epochs=5"]) == {
        "lr": "0.1",
        "batch_size": "32",
        "epochs": "5",
    }


def test_ten_seeded_reruns_within_two_percent_are_healthy():
    """Real report b8-08 (PyG GraphSAGE on Cora, '10 repeats' named in the task sentence that also lists
    cudnn settings; accuracies 0.800-0.817): before, the sentence was dropped for its settings, so the
    ten figures were not read as reruns and the verdict abstained."""
    (case,) = REPORTS.glob("b8-08-*")
    args = ["logs", *map(str, sorted(case.glob("*.log"))), "--config", str(case / "context.txt")]
    v = json.loads(CliRunner().invoke(app, [*args, "--format", "json"]).stdout)["verdict"]
    assert (v["outcome"], v["cause"]) == ("succeeded", "healthy"), v["summary"]


def test_a_speaker_key_with_any_punctuation_keeps_its_sentence():
    """Real reports b14-07 (PDFormer) and b9-07 (ChainerCV): the maintainer's answer is attributed by a key
    longer than a setting's, holding a quoted question or a PR title with '?', '.' and '...'; before, the
    line was dropped and the thread's explanation of the gap to the paper was never read."""
    want = {
        "b14-07-*": ("maintainer aptx1231, on the same output in issue #38", "row 12 is the mean"),
        "b9-07-*": ("maintainers' follow-up (chainer/chainercv PR #299", "use_07_metric=True"),
    }
    for pattern, (key_start, said) in want.items():
        (case,) = REPORTS.glob(pattern)
        got = parse_context_lines((case / "context.txt").read_text().splitlines())
        (key,) = [k for k in got if k.startswith(key_start)]
        assert said in got[key]
    # a setting and a plain speaker line are read as before; a role word with no colon names no speaker
    said = "reporter asks whether the final network has accuracy 0.96 or 0.9733"
    assert parse_context_lines(["lr: 0.1", "reporter: it diverges", said]) == {
        "lr": "0.1",
        "reporter": "it diverges",
    }
