"""`mlaudit ci` reads the old code's run on the same runner: drift moves old and new code alike,
a change under test moves only the new code.

Each fixture is a real git repository (tests/ci_shapes.py ``make_git_repo``: ``main`` recorded
the golden values, ``pr`` is the change under test) and one real CI job that runs the suite on
``main`` and then on ``pr`` on the same machine (git, ``train.py`` and pytest in subprocesses).
The Buildkite and GitHub variants frame that same real output the way those systems store a
job log (per-line timestamps, sections, pytest's own ANSI colours); no buildkite-agent or
GitHub runner can run here, so the framing follows their documented formats.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from ci_shapes import (
    ALLCLOSE_TEST,
    APPROX_TEST,
    GOOD,
    TRAIN,
    make_git_repo,
    run_two_versions,
)
from test_ci_shapes import IMAGE_BUMP, audit, curves, failing

#: the change under test: the default matmul precision of the training code drops to float16
#: (a code change that moves the loss by drift-sized, mixed-sign amounts)
TRAIN_F16 = TRAIN.replace(
    'os.environ.get("MATMUL_PRECISION", "float64")', 'os.environ.get("MATMUL_PRECISION", "float16")'
)
#: a harmless change under test (a comment)
TRAIN_SAME = TRAIN + "\n# refactor: nothing that changes the numbers\n"


@pytest.fixture(scope="module")
def code_change(tmp_path_factory):
    repo = make_git_repo(
        tmp_path_factory.mktemp("codechange"), ALLCLOSE_TEST.replace("{rtol}", "1e-4"), TRAIN_F16
    )
    return repo, run_two_versions(repo, GOOD)


def _verdict(r):
    return r["verdict"]["outcome"], r["verdict"]["cause"]


def test_old_code_reproducing_golden_makes_drift_sized_deviations_a_real_change(code_change):
    repo, log = code_change
    text = log.read_text()
    assert text.count("test session starts") == 2
    assert "1 passed" in text and "FAILED tests/test_convergence.py::test_loss_curve" in text
    r, _ = audit(repo, log)
    # the deviations alone look like drift (mixed signs, < 10x the allowed deviation) ...
    an = failing(r)["analysis"]
    a, g, _ = curves(repo)
    assert an["n_outside"] == int((np.abs(a - g) > 1e-4 * np.abs(g)).sum()) > 0
    assert an["sign"] == "mixed" and an["excess"] < 10
    # ... but the base branch, run before it in the same job, passes the same test
    assert _verdict(r) == ("regressed", "model_convergence"), r["verdict"]["summary"]
    s = r["verdict"]["summary"]
    assert "A real change, not numerical drift" in s and "passes the same test" in s
    assert "on the same runner" in s and "ci.log:" in s
    assert "drift would move the old code too" in s
    acts = json.dumps(r["next_actions"])
    assert "Bisect" in acts and "Widen" not in acts
    hyps = {h["statement"].split(":")[0]: h for h in r["hypotheses"]}
    assert hyps["model/convergence regression"]["status"] == "supported"
    drift = hyps["numerical drift from an environment change (image, library, hardware)"]
    assert drift["status"] == "rejected"
    assert any("passes the same test" in x for x in drift["evidence_against"])


def test_without_the_old_code_run_the_same_failure_reads_as_drift(code_change, tmp_path):
    """The control: the PR half of the same job alone is judged drift-like (it cannot be told
    apart without the old code), so the old code's run is what decided above."""
    repo, log = code_change
    text = log.read_text()
    pr_half = text[text.index("$ git checkout -q pr") :]
    only = tmp_path / "pr_only.log"
    only.write_text(pr_half)
    r, _ = audit(repo, only)
    assert _verdict(r) == ("succeeded", "metric_policy")


def test_old_code_failing_the_same_way_confirms_environment_drift(tmp_path):
    repo = make_git_repo(tmp_path, APPROX_TEST, TRAIN_SAME, rtol=1e-4)
    # the new image runs matmuls in reduced precision for every commit
    log = run_two_versions(repo, GOOD, env={"MATMUL_PRECISION": "float16"}, header=IMAGE_BUMP)
    assert log.read_text().count("FAILED tests/test_convergence.py") == 2
    r, _ = audit(repo, log)
    assert _verdict(r) == ("succeeded", "metric_policy")
    assert r["verdict"]["confidence"] == 0.9
    s = r["verdict"]["summary"]
    assert "Numerical drift" in s and "Confirmed: the old code" in s and "fails the same test" in s
    assert "Widen" in r["next_actions"][0]["action"]


def test_buildkite_log_with_timestamps_colours_and_sections(code_change, tmp_path):
    """The same job as Buildkite stores it: ``ESC _bk;t=... BEL`` before every line, ``--- `` /
    ``+++ `` sections naming the reference step, pytest run with ``--color=yes``."""
    repo, _ = code_change
    (repo / "metrics.json").unlink()
    log = run_two_versions(repo, GOOD, system="buildkite", name="buildkite.log")
    raw = log.read_text()
    assert "\x1b_bk;t=" in raw and "\x1b[31m" in raw and "--- :git: Reference" in raw
    r, _ = audit(repo, log)
    assert _verdict(r) == ("regressed", "model_convergence"), r["verdict"]["summary"]
    c = failing(r)
    assert c["analysis"]["log_agrees"] is True  # the assertion figures were read through ANSI
    assert "Reference: the base branch (main)" in r["verdict"]["summary"]


def test_github_downloaded_log_with_timestamps_and_groups(code_change):
    repo, _ = code_change
    log = run_two_versions(repo, GOOD, system="github", name="github.log")
    raw = log.read_text()
    assert raw.startswith("2026-12-01T19:") and "##[group]Run git checkout main" in raw
    r, _ = audit(repo, log)
    assert _verdict(r) == ("regressed", "model_convergence"), r["verdict"]["summary"]
    assert failing(r)["analysis"]["log_agrees"] is True


def test_old_code_values_file_is_recomputed_with_the_failing_gate(code_change, tmp_path):
    """The reference job's metrics artifact (``metrics_main.json``) is evaluated with the very
    gate the new code fails: it passes, so the old code reproduces the golden values."""
    repo, log = code_change
    text = log.read_text()
    only = tmp_path / "pr.log"
    only.write_text(text[text.index("$ git checkout -q pr") :])
    golden = json.loads((repo / "golden_values.json").read_text())
    ref = tmp_path / "metrics_main.json"
    ref.write_text(json.dumps({"loss": golden["loss"]}))  # main reproduced them bit-exactly
    r, _ = audit(repo, only, ref)
    assert _verdict(r) == ("regressed", "model_convergence"), r["verdict"]["summary"]
    s = r["verdict"]["summary"]
    assert "still reproduces the golden loss under the same gate" in s and "0 of 40" in s
    # the test's own metrics.json (the PR's values) is still what the new code is judged on
    assert failing(r)["analysis"]["n_outside"] > 0


def test_a_statement_in_the_logs_about_the_old_code(code_change, tmp_path):
    repo, log = code_change
    text = log.read_text()
    only = tmp_path / "pr_note.log"
    only.write_text(
        "# Reporter: reverting the PR on the same runner reproduces the golden values.\n"
        + text[text.index("$ git checkout -q pr") :]
    )
    r, _ = audit(repo, only)
    assert _verdict(r) == ("regressed", "model_convergence")
    assert (
        "the logs state that the old code reproduces the golden values" in r["verdict"]["summary"]
    )


def test_buildkite_annotation_through_buildkite_agent(code_change, tmp_path):
    """``BUILDKITE=true``: the report becomes ``buildkite-agent annotate --style error --context
    mlaudit-ci`` with the Markdown on stdin. The agent is a Go binary that no package registry
    here provides, so a stand-in executable named ``buildkite-agent`` on PATH records the
    arguments and the body it receives (what the real agent would upload)."""
    import os
    import stat

    repo, log = code_change
    bindir = tmp_path / "bin"
    bindir.mkdir()
    agent = bindir / "buildkite-agent"
    agent.write_text(
        f'#!/bin/sh\nprintf "%s\\n" "$@" > "{tmp_path}/argv"\ncat > "{tmp_path}/body.md"\n'
    )
    agent.chmod(agent.stat().st_mode | stat.S_IEXEC)
    env = {"BUILDKITE": "true", "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}"}
    r, _ = audit(repo, log, env=env)
    argv = (tmp_path / "argv").read_text().split("\n")
    assert argv[:5] == ["annotate", "--style", "error", "--context", "mlaudit-ci"]
    body = (tmp_path / "body.md").read_text()
    assert "mlaudit ci: **regressed** / **model_convergence**" in body
    assert "| loss | allclose | `tests/test_convergence.py:" in body
    assert r["verdict"]["summary"][:40] in body


def test_buildkite_without_the_agent_is_one_warning(code_change, tmp_path):
    import os

    repo, log = code_change
    empty = tmp_path / "empty"
    empty.mkdir()
    py = os.path.dirname(os.sys.executable)
    r, out = audit(repo, log, env={"BUILDKITE": "true", "PATH": f"{empty}{os.pathsep}{py}"})
    assert "buildkite-agent is not on PATH; no annotation" in out
    assert r["verdict"]["cause"] == "model_convergence"


@pytest.mark.parametrize(
    "checkout",
    [
        "/usr/bin/git checkout --progress --force -B main refs/remotes/origin/main",  # actions/checkout
        "$ git checkout main",  # a push build that checks out its own branch
    ],
)
def test_a_build_of_main_itself_is_not_taken_for_the_old_code(tmp_path, checkout):
    """A push build of ``main`` checks out ``main``: with no other run in the log, its results
    are the job's own (the approx regression stays a regression, never 'not judged')."""
    from ci_shapes import make_repo, run_job

    repo = make_repo(tmp_path, APPROX_TEST, rtol=1e-4)
    log = run_job(repo, dict(GOOD, lr=0.45), header=checkout + "\nSwitched to branch 'main'")
    r, _ = audit(repo, log)
    assert _verdict(r) == ("regressed", "model_convergence"), r["verdict"]["summary"]
    assert failing(r)["analysis"]["log_agrees"] is True


def test_gitlab_raw_log_with_sections_and_timestamps(code_change, tmp_path):
    """The same job as GitLab's raw job log stores it with ``FF_TIMESTAMPS``: every line
    prefixed ``<RFC3339>Z 00O `` (``00O+`` for a continued line), ``section_start:<t>:<name>``
    / ``section_end:`` markers followed by ``ESC[0K``, ANSI colours (gitlab-runner's format)."""
    repo, log = code_change
    out = ["section_start:1764600000:step_script\r\x1b[0K\x1b[36;1mExecuting step_script\x1b[0;m"]
    for i, ln in enumerate(log.read_text().split("\n")):
        out.append(f"2026-12-01T19:00:{i % 60:02d}.{i:06d}Z 00O {ln}")
    out.append("section_end:1764600100:step_script\r\x1b[0K")
    gl = tmp_path / "gitlab.log"
    gl.write_text("\n".join(out))
    r, _ = audit(repo, gl)
    assert _verdict(r) == ("regressed", "model_convergence"), r["verdict"]["summary"]
    assert failing(r)["analysis"]["log_agrees"] is True
    assert "passes the same test" in r["verdict"]["summary"]


def test_csv_with_golden_new_and_old_code_columns(tmp_path):
    """``x_golden, x_new, x_old``: with its own golden column, the ``old`` column is the old
    code's rerun (a reference set), not a second golden seed; ``x_main`` likewise."""
    from mlaudit_core.ci.golden import load_values

    p = tmp_path / "outputs.csv"
    p.write_text(
        "step,logit_golden,logit_new,logit_old,loss_main\n1,0.5,0.51,0.5,2.0\n2,0.4,0.39,0.4,1.9\n"
    )
    roles = {(s.role, tuple(s.metrics)) for s in load_values(p, "golden")}
    assert roles == {
        ("golden", ("logit",)),
        ("actual", ("logit",)),
        ("reference", ("logit",)),
        ("reference", ("loss",)),
    }
    # without a golden column, "old"/"before" stays the golden side (the shipped image-bump case)
    q = tmp_path / "before_after.csv"
    q.write_text("step,loss_before,loss_after\n1,2.0,2.0\n")
    assert {s.role for s in load_values(q, "golden")} == {"golden", "actual"}


@pytest.mark.parametrize(
    ("text", "decides"),
    [
        ("# Reverting the PR on the same runner reproduces the golden values.", True),
        ("# the previous commit still passes on this runner", True),
        ("# the last green build passed the test", False),  # the image may have changed since
        ("# with the previous version of torch the values match", None),  # a library, not code
    ],
)
def test_statements_about_the_old_code(text, decides):
    from mlaudit_core.ci.logs import ref_statement
    from mlaudit_core.ci.model import CIContext, Line
    from mlaudit_core.ci.reference import decisive, find_reference

    said = ref_statement(text)
    if decides is None:
        assert said is None
        return
    assert said is True
    ctx = CIContext(repo=".")
    ctx.ref_statements.append(Line("ci.log", 1, text, [], "reference:reproduces"))
    find_reference(ctx, [])
    assert (decisive(ctx) is not None) is decides


def test_missing_values_stay_unknown_but_name_the_old_code(tmp_path):
    """Without the new code's values the gate cannot be recomputed (unknown), but the old
    code passing the same test in the same job is reported with the verdict."""
    repo = make_git_repo(tmp_path, ALLCLOSE_TEST.replace("{rtol}", "1e-4"), TRAIN_F16)
    log = run_two_versions(repo, GOOD)
    (repo / "metrics.json").unlink()
    r, _ = audit(repo, log)
    assert _verdict(r) == ("unknown", "inconclusive")
    s = r["verdict"]["summary"]
    assert "metrics.json" in s and "passes the same test" in s
    assert "the change under test, not the environment, moved the values" in s


def test_reference_evidence_round_trips_through_the_context(code_change):
    """``mlaudit evidence`` saves the context; the old code's results survive the round trip."""
    from pathlib import Path

    from mlaudit_core.ci import collect
    from mlaudit_core.ci.model import CIContext
    from mlaudit_core.ci.recompute import recompute

    repo, log = code_change
    ctx, _ = collect(Path(repo), [Path(log)])
    recompute(ctx)
    assert ctx.ref_tests and ctx.reference
    back = CIContext.from_dict(json.loads(json.dumps(ctx.to_dict())))
    assert back.reference == ctx.reference and back.ref_tests == ctx.ref_tests


def test_a_values_file_named_main_alone_is_this_jobs_values(tmp_path):
    """A build of ``main`` uploading ``metrics_main.json`` with no other values: its own."""
    from ci_shapes import make_repo, run_job

    repo = make_repo(tmp_path, APPROX_TEST, rtol=1e-4)
    log = run_job(repo, dict(GOOD, lr=0.45))
    mine = tmp_path / "metrics_main.json"
    (repo / "metrics.json").rename(mine)
    r, _ = audit(repo, log, mine)
    assert _verdict(r) == ("regressed", "model_convergence"), r["verdict"]["summary"]
    assert any("named like the old code's" in u for u in r["unknowns"])
