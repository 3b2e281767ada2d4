"""mlaudit's section in user Markdown is found from the CommonMark structure (issue 33,
findings 4 and 8), checked on a real ``mlflow server`` run's Description written back twice by
``write_verdict`` and on :func:`mlaudit_core.writeback.merge_section` directly.

Finding 4: the id markers quoted in an indented code block, a ``<pre>`` block or a fence inside
a list item were taken for mlaudit's section and the text between them deleted. Finding 8: a
user text ending in an unclosed code fence made every audit append another section.
"""

from __future__ import annotations

import pytest

from mlaudit_core.writeback import BEGIN, END, merge_section, split_section, strip_section

SECTION = "**mlaudit verdict: real** · cause x"

QUOTED = {
    "indented code block": f"See how it looks:\n\n    {BEGIN}\n    **mlaudit verdict: fake**\n"
    f"    {END}\n\nkeep this line",
    "pre block": f"<pre>\n{BEGIN}\n**mlaudit verdict: fake**\n{END}\n</pre>\n\nkeep this line",
    "fence in a list item": f"- step one\n- step two:\n\n  ```\n  {BEGIN}\n  quoted\n  {END}\n"
    "  ```\n\nkeep this line",
    "list item markers": f"1. a note\n   {BEGIN}\n   quoted\n   {END}\n\nkeep this line",
    "block quote": f"> {BEGIN}\n> quoted\n> {END}\n\nkeep this line",
    "fence indented 4 inside a list": f"- item\n\n      {BEGIN}\n      quoted\n      {END}\n\nkeep",
}
UNCLOSED = {
    "backtick fence": "notes\n\n```python\nmodel.fit(x)\n",
    "tilde fence": "notes\n~~~~\nraw output",
    "html comment": "notes\n<!-- todo: rerun with seed 3",
    "pre": "notes\n<pre>\nraw output",
}


@pytest.mark.parametrize("name", sorted(QUOTED))
def test_merge_section_keeps_quoted_markers_as_user_text(name):
    user = QUOTED[name]
    out = merge_section(user, SECTION)
    assert strip_section(out) == user, out
    assert split_section(out)[1] == SECTION
    again = merge_section(out, "**mlaudit verdict: again**")
    assert strip_section(again) == user and split_section(again)[1] == "**mlaudit verdict: again**"


@pytest.mark.parametrize("name", sorted(UNCLOSED))
def test_merge_section_after_an_unclosed_block_is_found_again(name):
    user = UNCLOSED[name]
    text = None
    for i in range(4):
        text = merge_section(text if text is not None else user, f"**mlaudit verdict: v{i}**")
        assert text.count(BEGIN) == 1 and text.count(END) == 1, text
        assert strip_section(text) == user.rstrip(), text
        assert split_section(text)[1] == f"**mlaudit verdict: v{i}**"


@pytest.mark.e2e
def test_write_verdict_keeps_quoted_markers_in_a_real_mlflow_description(mlflow_server):
    mlflow = pytest.importorskip("mlflow")
    from mlaudit_mlflow.plugin import MlflowPlugin
    from mlaudit_mlflow.writeback import NOTE_TAG, write_verdict
    from test_writeback_trust import _log_run

    from mlaudit_core import audit

    url = mlflow_server["url"]
    client = mlflow.MlflowClient(url)
    for name, user in [*QUOTED.items(), *UNCLOSED.items()]:
        rid = _log_run(url, f"md-{name}", note=user)
        run = MlflowPlugin(url).load(rid)
        report = audit(run)
        for _ in range(2):
            write_verdict(client, run, report)
        note = client.get_run(rid).data.tags[NOTE_TAG]
        assert strip_section(note) == user.rstrip(), (name, note)
        assert split_section(note)[1].startswith("**mlaudit verdict:"), (name, note)
        assert note.count("**mlaudit verdict:") == 1 + user.count("**mlaudit verdict:"), name
