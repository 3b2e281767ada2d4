"""Write-back trust (issue 16, findings 1-3) against a real ``mlflow server`` on 127.0.0.1:
no lost Description edit, never over MLflow's tag value limit, unambiguous section markers.

The races are made deterministic: the write-back runs with a real ``MlflowClient`` whose
``log_artifacts`` (the slow upload) hands control to an editing thread, which saves a user
edit through a second real client while the upload is in flight, and again right after
mlaudit's first Description write (a page loaded before it, saved after it). The old
write-back read the Description before rendering and uploading and lost the first edit.
"""

from __future__ import annotations

import math
import threading
from pathlib import Path

import pytest

mlflow = pytest.importorskip("mlflow")
from mlaudit_mlflow.writeback import NOTE_TAG, tag_value_limit, write_verdict  # noqa: E402

from mlaudit_core import audit  # noqa: E402
from mlaudit_core.writeback import (  # noqa: E402
    BEGIN,
    END,
    LEGACY_BEGIN,
    LEGACY_END,
    merge,
    merge_section,
    split_section,
    strip_section,
)


def _log_run(url: str, name: str, note: str | None = None) -> str:
    """A diverging run (loss falls, then climbs and goes NaN), ended FAILED."""
    from mlflow.entities import Metric

    client = mlflow.MlflowClient(url)
    exp = client.get_experiment_by_name("wb-trust")
    exp_id = exp.experiment_id if exp else client.create_experiment("wb-trust")
    tags = {NOTE_TAG: note} if note is not None else {}
    rid = client.create_run(exp_id, run_name=name, tags=tags).info.run_id
    ms = []
    for i in range(1, 801):
        loss = 2.3 * math.exp(-i / 100) + 0.2 if i < 500 else 0.3 + (i - 500) * 0.02
        if i > 780:
            loss = float("nan")
        ms.append(Metric("train/loss", loss, 1_700_000_000_000 + i * 1000, i))
    for k in range(0, len(ms), 900):
        client.log_batch(rid, metrics=ms[k : k + 900])
    client.set_terminated(rid, "FAILED")
    return rid


def _audited(url: str, rid: str):
    from mlaudit_mlflow.plugin import MlflowPlugin

    run = MlflowPlugin(url).load(rid)
    return run, audit(run)


def _note(url: str, rid: str) -> str:
    return mlflow.MlflowClient(url).get_run(rid).data.tags.get(NOTE_TAG) or ""


class _EditingClient(mlflow.MlflowClient):
    """A real client that lets ``on_upload`` / ``on_note`` run at the two moments of the race."""

    on_upload = None
    on_note = None

    def log_artifacts(self, *a, **kw):
        out = super().log_artifacts(*a, **kw)
        if self.on_upload is not None:
            self.on_upload()
        return out

    def set_tag(self, run_id, key, value, *a, **kw):
        out = super().set_tag(run_id, key, value, *a, **kw)
        if key == NOTE_TAG and self.on_note is not None:
            hook, self.on_note = self.on_note, None
            hook()
        return out

    def log_batch(self, run_id, *a, **kw):  # the write-back sets the Description in its batch
        out = super().log_batch(run_id, *a, **kw)
        tags = kw.get("tags") or (a[2] if len(a) > 2 else [])
        if any(t.key == NOTE_TAG for t in tags) and self.on_note is not None:
            hook, self.on_note = self.on_note, None
            hook()
        return out


def _editor(url: str, rid: str):
    """An editing thread: each ``edit(text, base)`` saves ``base + text`` (``base`` None: the
    Description as it is now, read first) as a user would from the run page, in its own thread
    with its own client, and waits for it."""
    user = mlflow.MlflowClient(url)

    def edit(line: str, base: str | None = None) -> None:
        def work():
            current = base if base is not None else _note(url, rid)
            user.set_tag(rid, NOTE_TAG, current.rstrip() + "\n" + line)

        t = threading.Thread(target=work)
        t.start()
        t.join(30)

    return edit


def test_user_edits_during_the_write_back_are_kept(mlflow_server, monkeypatch):
    """An edit saved while the report uploads, and one saved right after mlaudit's write from a
    page loaded before it (no mlaudit section in it), both survive with exactly one section.
    (A loaded run uploads straight to its artifact repository, ``writeback.upload_report``, not
    through ``client.log_artifacts``: the upload hook wraps that function.)"""
    import mlaudit_mlflow.writeback as wb

    url = mlflow_server["url"]
    rid = _log_run(url, "race", note="user line 0")
    run, report = _audited(url, rid)
    assert run.cache.get(wb.ARTIFACT_URI_KEY)  # the direct upload is the path under test
    client = _EditingClient(url)
    real_upload = wb.upload_report

    def upload(c, r, out):
        real_upload(c, r, out)
        if c.on_upload is not None:
            c.on_upload()

    monkeypatch.setattr(wb, "upload_report", upload)
    edit = _editor(url, rid)
    page = {}

    def during_upload():
        edit("edit during upload")
        page["text"] = _note(url, rid)  # the user opens the editor again, before mlaudit writes

    client.on_upload = during_upload
    client.on_note = lambda: edit("edit saved from a stale page", base=page["text"])
    res = write_verdict(client, run, report)
    note = _note(url, rid)
    assert "user line 0" in note and "edit during upload" in note, note
    assert "edit saved from a stale page" in note, note
    assert note.count(BEGIN) == 1 and note.count(END) == 1
    assert res.section_state == "written"
    assert mlflow.MlflowClient(url).get_run(rid).data.tags["mlaudit.verdict"] == "diverged"
    # a second audit replaces the section in place and keeps every edit
    client.on_upload = client.on_note = None
    write_verdict(client, run, report)
    again = _note(url, rid)
    assert again.count(BEGIN) == 1 and strip_section(again) == strip_section(note)


def test_a_long_description_never_loses_the_end_marker(mlflow_server):
    """A Description near MLflow's limit: the section is shortened to fit (linking the full
    report) or left out, never cut by the server; the printed line says which."""
    url = mlflow_server["url"]
    limit = tag_value_limit()
    from mlflow.utils.validation import MAX_TAG_VAL_LENGTH

    assert limit == MAX_TAG_VAL_LENGTH
    client = mlflow.MlflowClient(url)
    findings = None
    for user_len, state in ((limit - 400, "shortened"), (limit - 40, "left_out")):
        user = ("x" * 79 + "\n") * (user_len // 80)
        rid = _log_run(url, f"long-{state}", note=user)
        run, report = _audited(url, rid)
        findings = findings or [f.code for f in report.findings]
        res = write_verdict(client, run, report)
        note = _note(url, rid)
        assert len(note) <= limit and note.startswith(user.rstrip())
        assert res.section_state == state
        lines = "\n".join(res.lines())
        if state == "shortened":
            assert note.count(BEGIN) == 1 and note.rstrip().endswith(END)
            assert "mlaudit/report.html" in split_section(note)[1]
            assert "shortened to fit the 8,000-character limit" in lines
        else:
            assert BEGIN not in note and note == user.rstrip()
            assert (
                "wrote the mlaudit section" not in lines and "left the mlaudit section out" in lines
            )
        tags = client.get_run(rid).data.tags
        assert tags["mlaudit.verdict"] == "diverged"
    assert findings  # the full section has findings to shorten


def test_a_section_cut_by_an_older_mlaudit_is_repaired(mlflow_server):
    """MLflow cut an old-format Description at 8,000 characters (the end marker lost): the
    next audit removes the cut section instead of keeping it as user text."""
    url = mlflow_server["url"]
    limit = tag_value_limit()
    user = "my notes\n" + "y" * 7000
    old = (
        f"{user}\n\n{LEGACY_BEGIN}\n**mlaudit verdict: succeeded** · cause healthy\n\n"
        + "- f\n" * 600
    )
    rid = _log_run(url, "cut", note=old[:limit])
    run, report = _audited(url, rid)
    write_verdict(mlflow.MlflowClient(url), run, report)
    note = _note(url, rid)
    assert LEGACY_BEGIN not in note and "verdict: succeeded" not in note
    assert note.startswith(user) and note.count(BEGIN) == 1 and len(note) <= limit


USER_WITH_MARKERS = f"""Notes on this run.

Our tooling wraps its summary in {LEGACY_BEGIN} ... {LEGACY_END}, see the wiki.

```markdown
{LEGACY_BEGIN}
**mlaudit verdict: example** from the docs
{LEGACY_END}
```

Keep this last line."""


def test_user_text_quoting_the_markers_is_never_removed(mlflow_server):
    url = mlflow_server["url"]
    rid = _log_run(url, "quotes-markers", note=USER_WITH_MARKERS)
    run, report = _audited(url, rid)
    client = mlflow.MlflowClient(url)
    for _ in range(2):
        write_verdict(client, run, report)
        note = _note(url, rid)
        assert note.startswith(USER_WITH_MARKERS) and note.count(BEGIN) == 1
        assert strip_section(note) == USER_WITH_MARKERS


def test_markers_merge_rules():
    # markers quoted inside a line of prose are user text, kept verbatim (mlaudit writes each
    # marker as a whole line); an unpaired whole-line marker is a broken earlier write: dropped
    prose = f"keep {END} this\nand {BEGIN} that"
    out = merge_section(prose, "**mlaudit verdict: x**")
    assert strip_section(out) == prose and out.count(BEGIN) == 2
    assert strip_section(merge_section(out, "**mlaudit verdict: y**")) == prose
    stray = f"keep\n{END}\nthis\n{BEGIN}\nthat"
    out = merge_section(stray, "**mlaudit verdict: x**")
    assert strip_section(out) == "keep\nthis\nthat" and out.count(BEGIN) == 1
    # a copied section quoted in a fenced code block is the user's, every line of it
    quoted = f"see:\n```\n{BEGIN}\n**mlaudit verdict: fake**\n{END}\n```\nend"
    out = merge_section(quoted, "**mlaudit verdict: real**")
    assert strip_section(out) == quoted and split_section(out)[1] == "**mlaudit verdict: real**"
    assert strip_section(merge_section(out, "**mlaudit verdict: again**")) == quoted
    # a legacy section (what mlaudit < 16 wrote) is replaced, in place of the old one
    legacy = (
        f"top\n\n{LEGACY_BEGIN}\n**mlaudit verdict: old** · cause healthy\n\nold body\n"
        f"{LEGACY_END}\n\nuser text after it"
    )
    user, found = split_section(legacy)
    assert found.startswith("**mlaudit verdict: old**") and user == "top\n\nuser text after it"
    out = merge_section(legacy, "**mlaudit verdict: new**")
    assert "old body" not in out and LEGACY_BEGIN not in out and "user text after it" in out
    # a legacy-looking block inside a code fence is the user's, even without a section
    fenced = f"```\n{LEGACY_BEGIN}\n**mlaudit verdict: doc example**\n{LEGACY_END}\n```"
    assert split_section(fenced) == (fenced, None)
    # without a limit nothing is shortened; with one the result always fits
    m = merge("u" * 100, "**mlaudit verdict: v**\n" + "- finding\n" * 50, limit=500)
    assert len(m.text) <= 500 and m.shortened and m.text.rstrip().endswith(END)
    assert merge("u" * 490, "**mlaudit verdict: v**", limit=500).section is None


def test_write_section_merges_again_when_the_text_changes_under_it():
    from mlaudit_core.writeback import write_section

    store = {"text": "user"}
    saves = []

    def write(text):
        store["text"] = text
        saves.append(text)
        if len(saves) == 1:  # the user saves a page loaded before mlaudit's write
            store["text"] = "user\nlater edit"

    out = write_section(lambda: store["text"], write, "**mlaudit verdict: v**", pause_s=0)
    assert out.verified and out.writes == 2 and out.conflicts == 1
    assert strip_section(store["text"]) == "user\nlater edit" and store["text"].count(BEGIN) == 1


@pytest.mark.parametrize("recheck, reads, writes", [(False, 1, 1), (True, 4, 2)])
def test_write_section_rereads_only_when_recheck_says_so(recheck, reads, writes):
    """``recheck`` gets the description as first read: False writes once and reads no more
    (nothing said the text is changing); True reads back and merges a later save again."""
    from mlaudit_core.writeback import write_section

    store = {"text": "user"}
    calls: dict = {"read": 0, "writes": []}
    seen = []

    def read():
        calls["read"] += 1
        return store["text"]

    def write(text):
        store["text"] = text
        calls["writes"].append(text)
        if len(calls["writes"]) == 1:  # a save from a page loaded before the write
            store["text"] = "user\nlater edit"

    def decide(current):
        seen.append(current)
        return recheck

    out = write_section(read, write, "**mlaudit verdict: v**", pause_s=0, recheck=decide)
    assert seen == ["user"] and calls["read"] == reads and len(calls["writes"]) == writes
    assert out.verified and out.rechecked is recheck
    # the user's text is kept either way; only with the re-read is the section back
    assert "later edit" in store["text"]
    assert (store["text"].count(BEGIN) == 1) is recheck


@pytest.fixture
def _dummy(tmp_path) -> Path:
    return tmp_path
