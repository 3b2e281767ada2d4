"""benchmarks/diagnosis_eval.py at toy size: it runs and prints per-corpus figures (no accuracy
thresholds here; the figures are a measurement, see docs/corpus.md).

Toy corpora: three labelled artifacts of our own collection (tests/data/realworld, same label
schema as shared/realworld) reached through a temporary labels.json, and two of the real cases
copied into tests/data/cases. The hard invariants of issue 14 are asserted: corpora are reported
separately, and nothing without a judgeable training signal is called succeeded/healthy.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OWN = REPO / "tests" / "data" / "realworld"
CASES = REPO / "tests" / "data" / "cases"


def _load_eval():
    spec = importlib.util.spec_from_file_location(
        "diagnosis_eval", REPO / "benchmarks" / "diagnosis_eval.py"
    )
    mod = importlib.util.module_from_spec(spec)
    sys.modules["diagnosis_eval"] = mod  # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


def test_diagnosis_eval_toy_size_prints_per_corpus_figures(tmp_path, capsys):
    ev = _load_eval()
    labels = json.loads((OWN / "labels.json").read_text())
    kinds, toy = set(), []
    for lab in labels:  # one artifact per kind, three kinds
        if lab["kind"] not in kinds and len(toy) < 3:
            kinds.add(lab["kind"])
            toy.append(lab)
    own = tmp_path / "own"
    own.mkdir()
    (own / "runs").symlink_to(OWN / "runs")
    (own / "labels.json").write_text(json.dumps(toy))
    cases = tmp_path / "cases"
    cases.mkdir()
    for name in ("overfit-small-data", "oom-in-evaluation"):
        shutil.copytree(CASES / name, cases / name)
    out = tmp_path / "eval.json"
    code = ev.main(
        [
            "--only",
            "own,cases",
            "--own",
            str(own),
            "--cases",
            str(cases),
            "--json",
            str(out),
            "--quiet",
        ]
    )
    assert code == 0
    text = capsys.readouterr().out
    assert "== corpus own: 3 artifacts" in text and "== corpus cases: 2 artifacts" in text
    for line in (
        "outcome right",
        "cause right",
        "both right",
        "abstentions",
        "false alarms on healthy runs",
        "reliability (judged verdicts)",
        "expected calibration error",
    ):
        assert text.count(line) >= 2, line
    data = json.loads(out.read_text())
    assert set(data) == {"own", "cases"}  # never pooled
    for corpus in data.values():
        f = corpus["figures"]
        assert f["n"] == len(corpus["rows"]) and 0 <= f["both_right"] <= f["n"]
        assert sum(b["n"] for b in f["reliability"]) == f["judged"]
        assert f["succeeded_without_signal"] == 0
    assert all(r["reader"] for r in data["own"]["rows"] if r["outcome"] != "unknown")


def test_diagnosis_eval_bad_corpus_name_is_exit_2(capsys):
    ev = _load_eval()
    assert ev.main(["--only", "nosuch"]) == 2
    assert "unknown corpus" in capsys.readouterr().err


def test_diagnosis_eval_selected_excludes_held_out_prefixes():
    ev = _load_eval()
    assert ev._selected("f5b1-03", (), ())
    assert not ev._selected("f6b1-03", (), ("f6", "b4-"))
    assert ev._selected("f5b1-03", ("f5",), ("f6",))
    assert not ev._selected("rw01", ("f5",), ())
    assert not ev._selected("b4-02-x", ("b",), ("b4-",))
