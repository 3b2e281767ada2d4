"""mlaudit_core.redact.redact_tree: the one walker that scrubs a triage document (keys too)
for ``batch --format json``, the written-back triage artifacts and the experiment_triage tool."""

from __future__ import annotations

from mlaudit_core.redact import REDACTED, redact_obj, redact_tree

TOKEN = "ghp_" + "a1B2" * 9


def test_redact_tree_scrubs_keys_values_and_nested_lists():
    doc = {
        "factors": [
            {
                "name": f"param:{TOKEN}",
                "effect": f"all 5 runs have x={TOKEN}",
                "counts": {"group": {"runs": 5, "failing": 5}},
                "p_value": 0.001,
                "significant": True,
            }
        ],
        "change_point": {"differs": {f"param:{TOKEN}": ["a", "b"], "param:password": "hunter2"}},
        "outcomes": {"diverged": 5},
        "runs": 12,
        "tuple": ("x", TOKEN),
    }
    out = redact_tree(doc)
    text = repr(out)
    assert TOKEN not in text
    assert out["factors"][0]["counts"] == {"group": {"runs": 5, "failing": 5}}
    assert out["factors"][0]["p_value"] == 0.001 and out["factors"][0]["significant"] is True
    assert out["runs"] == 12 and out["outcomes"] == {"diverged": 5}
    assert out["change_point"]["differs"]["param:password"] == REDACTED  # a credential's key
    assert out["tuple"][0] == "x" and out["tuple"][1] != TOKEN
    assert doc["factors"][0]["name"].endswith(TOKEN)  # the input is not changed


def test_redact_obj_keeps_keys_redact_tree_scrubs_them():
    doc = {TOKEN: 1, "a\x1b[2Jb": 2}
    assert TOKEN in redact_obj(doc)
    scrubbed = redact_tree(doc)
    assert TOKEN not in scrubbed and "a\x1b[2Jb" not in scrubbed
    assert sorted(scrubbed.values()) == [1, 2]


def test_batch_formats_and_triage_tool_use_the_core_walker():
    import mlaudit.cli.batch_formats as bf
    import mlaudit_core.agent.triage_tool as tool

    assert bf.redact_tree is redact_tree
    assert not hasattr(tool, "_redacted")
