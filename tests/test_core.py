"""Core behaviour: settings errors, redaction, detector isolation, schema and generated docs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from mlaudit.cli import app
from mlaudit_core import (
    MetricTable,
    RunData,
    RunIdentity,
    RunStatus,
    Settings,
    audit,
    report_json_schema,
)
from mlaudit_core.detectors import Detector, registry
from mlaudit_core.detectors.base import _REGISTRY
from mlaudit_core.redact import REDACTED, redact_text
from mlaudit_core.render import render_json, render_markdown
from mlaudit_core.settings import SettingsError, load_settings
from mlaudit_core.writeback import BEGIN, END, merge_section, strip_section

REPO = Path(__file__).resolve().parents[1]


def simple_run(**kw) -> RunData:
    steps = np.arange(1, 201)
    loss = 2.3 * np.exp(-steps / 50) + 0.1
    return RunData(
        RunIdentity("test", "r1", kw.pop("name", "r1")),
        status=RunStatus.FINISHED,
        metrics=MetricTable(["train/loss"] * 200, steps, loss),
        **kw,
    )


@pytest.mark.parametrize(
    "text,needle",
    [
        ('[tool.mlaudit]\nselect = ["ZZ9"]\n', "select: unknown detector code or prefix 'ZZ9'"),
        (
            '[tool.mlaudit.detectors.OP001]\nfactor = "big"\n',
            "[tool.mlaudit.detectors.OP001] factor",
        ),
        ("[tool.mlaudit.detectors.OP001]\nfactr = 3\n", "factr"),
        ('[tool.mlaudit.aliases]\ntrain_los = ["x"]\n', "unknown role"),
        ("[tool.mlaudit]\nselct = []\n", "selct"),
        ("not toml = = =", "not valid TOML"),
    ],
)
def test_bad_settings_name_file_and_key(tmp_path, text, needle):
    f = tmp_path / "mlaudit.toml"
    f.write_text(text)
    with pytest.raises(SettingsError) as e:
        load_settings(explicit=f)
    assert str(f) in str(e.value) and needle in str(e.value)
    res = CliRunner().invoke(app, ["tensorboard", str(tmp_path), "--config", str(f)])
    assert res.exit_code == 2
    assert "Traceback" not in res.output


def test_settings_found_in_pyproject_and_applied(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n[tool.mlaudit]\nignore = ["MI"]\n[tool.mlaudit.aliases]\n'
        'train_loss = ["objective"]\n'
    )
    s = load_settings(start=tmp_path)
    assert s.ignore == ["MI"] and not s.is_selected("MI001") and s.is_selected("OP001")
    run = RunData(
        RunIdentity("t", "x"),
        # 2.3 -> 2.2 with per-batch noise, levelling off (a straight line would be V13c's unbent
        # descent, and a lone loss still falling at its pace at the end is still learning)
        metrics=MetricTable(
            ["objective"] * 50,
            np.arange(50),
            2.2 + 0.1 * np.exp(-np.arange(50) / 8.0) + 0.01 * (-1) ** np.arange(50),
        ),
    )
    rep = audit(run, s)
    # the alias found the series: GE002 read it (a 4% drop with no reference level: plateaued)
    assert "GE002" in {f.code for f in rep.findings}
    assert rep.verdict.outcome.value in ("underfit", "plateaued")
    assert not [f for f in rep.findings if f.code.startswith("MI")]
    ge002_rule = rep.verdict.rule
    s.detectors = {"GE002": {"max_ratio": 0.99}}  # 4% improvement is enough under this threshold
    rep = audit(run, s)
    assert "GE002" not in {f.code for f in rep.findings}
    # the verdict no longer rests on GE002 (the flat tail may still be OP003's plateau)
    assert rep.verdict.rule != ge002_rule, (ge002_rule, rep.verdict.rule)


def test_secrets_redacted_everywhere():
    token = "ghp_" + "A1b2" * 9
    run = simple_run(params={"api_key": "abc123secret", "lr": "0.1"})
    from mlaudit_core import ConsoleLine

    run.console = [
        ConsoleLine("console.log", 1, "Traceback (most recent call last):"),
        ConsoleLine("console.log", 2, '  File "t.py", line 1, in train'),
        ConsoleLine("console.log", 3, f"ValueError: bad header Authorization: Bearer {token}"),
    ]
    rep = audit(run)
    text = render_json(rep) + render_markdown(rep)
    assert token not in text and REDACTED in text
    assert redact_text(f"url https://user:hunter2@host/x token={token}").count(REDACTED) == 2
    assert (
        redact_text("WANDB_API_KEY=0123456789abcdef0123456789abcdef01234567")
        == f"WANDB_API_KEY={REDACTED}"
    )
    assert redact_text("max_tokens=512 loss=0.3") == "max_tokens=512 loss=0.3"


def test_erroring_detector_is_recorded_and_audit_goes_on():
    class Boom(Detector, code="ZZ999", name="boom", family="integrity"):
        """Always raises (test only)."""

        def check(self, run, p):
            raise RuntimeError("kaboom")
            yield

    try:
        rep = audit(simple_run(), Settings())
        d = {x.code: x for x in rep.detectors}["ZZ999"]
        assert d.status == "errored" and "kaboom" in d.reason
        assert any("ZZ999" in u and "errored" in u for u in rep.unknowns)
        assert rep.verdict.outcome.value == "succeeded"
    finally:
        _REGISTRY.pop("ZZ999", None)


def test_report_validates_against_published_schema():
    jsonschema = pytest.importorskip("jsonschema")
    published = json.loads((REPO / "docs/schema/report.schema.json").read_text())
    assert published == json.loads(json.dumps(report_json_schema())), (
        "docs/schema/report.schema.json is stale: run `mlaudit schema --out docs/schema/report.schema.json`"
    )
    jsonschema.validate(json.loads(render_json(audit(simple_run()))), published)


def test_detector_reference_is_generated_from_the_detectors():
    from mlaudit.cli.cmd_rules import rules_markdown

    assert (REPO / "docs/detectors.md").read_text() == rules_markdown(), (
        "docs/detectors.md is stale: run `mlaudit rules --format markdown > docs/detectors.md`"
    )
    for code, cls in registry().items():
        doc = cls.doc()
        assert (
            "Threshold" in doc
            or cls.family in ("instrumentation",)
            or "Params" not in dir(cls)
            or not cls.param_table()
            or "threshold" in doc.lower()
        ), f"{code} docstring names no threshold source"


def test_description_section_merge_keeps_user_text():
    once = merge_section("user notes\nline 2", "verdict A")
    twice = merge_section(once, "verdict B")
    assert twice.count(BEGIN) == 1 and twice.count(END) == 1
    assert "verdict B" in twice and "verdict A" not in twice
    assert strip_section(twice) == "user notes\nline 2"
    assert merge_section(None, "v").startswith(BEGIN)


def test_cli_rule_and_schema():
    r = CliRunner().invoke(app, ["rule", "GE001"])
    assert r.exit_code == 0 and "Prechelt" in r.output
    r = CliRunner().invoke(app, ["schema"])
    assert r.exit_code == 0 and json.loads(r.output)["title"] == "AuditReport"


def test_control_characters_from_run_data_are_neutralised():
    run = simple_run(name="\x1b]0;PWNED\x07\x1b[2Jrun")
    rep = audit(run)
    for text in (render_json(rep), render_markdown(rep)):
        assert "\x1b" not in text and "\x07" not in text
    assert "\\x1b" in rep.run.name


def test_unwritable_out_and_bad_fail_on_are_one_line_errors(tmp_path):
    steps = np.arange(1, 51)
    import tensorboardX

    w = tensorboardX.SummaryWriter(str(tmp_path / "tb"))
    for i in steps:
        w.add_scalar("train/loss", 1.0 / i, int(i))
    w.close()
    (tmp_path / "r.json").mkdir()  # a directory where the report should go
    res = CliRunner().invoke(
        app, ["tensorboard", str(tmp_path / "tb"), "--no-write", "--out", str(tmp_path / "r.json")]
    )
    assert res.exit_code == 2 and "cannot write the report" in res.output
    (tmp_path / "mlaudit.toml").write_text('fail_on = "sometimes"\n')
    with pytest.raises(SettingsError, match="fail_on"):
        load_settings(explicit=tmp_path / "mlaudit.toml")


def test_mlflow_refuses_sqlite_files_that_are_not_mlflow_stores(tmp_path):
    pytest.importorskip("mlflow")
    import sqlite3

    empty, other = tmp_path / "empty.db", tmp_path / "other.db"
    empty.write_bytes(b"")
    con = sqlite3.connect(other)
    con.execute("create table t(x)")
    con.commit()
    con.close()
    before = {p: p.read_bytes() for p in (empty, other)}
    for p in (empty, other):
        res = CliRunner().invoke(app, ["mlflow", "abc", "-u", f"sqlite:///{p}"])
        assert res.exit_code == 2 and "not an MLflow database" in res.output
    assert {p: p.read_bytes() for p in (empty, other)} == before
