"""The model ``config.json`` beside a Hugging Face ``trainer_state.json``
(mlaudit_core/formats/_common.hf_model_config_params, called by formats/trainer_state.load).

``hf_shuffled_labels/checkpoint-240`` is what transformers 5.25's ``Trainer`` saved for a tiny
``BertForSequenceClassification`` (2 labels, the default) trained 12 epochs on permuted labels
(tests/data/default_runs/README.md). The other configs are written by transformers here.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mlaudit_core import audit
from mlaudit_core.formats import load_path, trainer_state

CKPT = Path(__file__).parent / "data" / "default_runs" / "hf_shuffled_labels" / "checkpoint-240"


def test_trainer_state_load_reads_the_task_keys_of_config_json():
    run = trainer_state.load(CKPT)
    assert run.params["problem_type"] == "single_label_classification"
    assert "BertForSequenceClassification" in run.params["architectures"]
    # transformers saves no id2label for the two-label default: the count is that default
    assert run.params["num_labels"] == "2"
    assert any("num_labels 2" in n for n in run.notes)
    assert "vocab_size" not in run.params and "hidden_size" not in run.params


def test_shuffled_labels_on_a_default_two_label_classifier_are_a_data_failure():
    ((_, run),) = load_path(CKPT.parent).runs
    v = audit(run).verdict
    assert v.cause.value == "data_config", v.summary
    assert v.rule == "V11"


def _checkpoint(tmp_path: Path, config) -> Path:
    ck = tmp_path / "checkpoint-240"
    ck.mkdir()
    (ck / "trainer_state.json").write_text((CKPT / "trainer_state.json").read_text())
    config.save_pretrained(ck)
    return ck


def test_a_saved_label_map_gives_the_count_and_no_default(tmp_path):
    transformers = pytest.importorskip("transformers")
    cfg = transformers.BertConfig(num_labels=3, architectures=["BertForSequenceClassification"])
    run = trainer_state.load(_checkpoint(tmp_path, cfg))
    assert sorted(k for k in run.params if k.startswith("id2label.")) == [
        "id2label.0",
        "id2label.1",
        "id2label.2",
    ]
    assert "num_labels" not in run.params


def test_a_language_model_config_adds_no_label_count(tmp_path):
    transformers = pytest.importorskip("transformers")
    cfg = transformers.GPT2Config(n_layer=1, architectures=["GPT2LMHeadModel"])
    run = trainer_state.load(_checkpoint(tmp_path, cfg))
    assert "num_labels" not in run.params
    assert "GPT2LMHeadModel" in run.params["architectures"]


def test_an_unreadable_config_json_adds_nothing(tmp_path):
    ck = tmp_path / "checkpoint-240"
    ck.mkdir()
    (ck / "trainer_state.json").write_text((CKPT / "trainer_state.json").read_text())
    (ck / "config.json").write_text("{not json")
    run = trainer_state.load(ck)
    assert "num_labels" not in run.params and "architectures" not in run.params
    assert json.loads((CKPT / "trainer_state.json").read_text())["global_step"] == 240
