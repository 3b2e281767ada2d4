"""The outcome a report states in words, and shapes of a paste the readers now take apart (real reports of
tests/data/reports, several batches each):

* verdict.stated_symptom.stated_symptom with verdict.policy._symptom_stated (V19k): the reporter's symptom
  sentence when no curve could be judged: a training figure that does not move (b15-05 CoupletAI 'the loss is
  still about 4.9', b32-02 tianshou 'the test_reward never change', b30-10 VariantWorks 'the training loss
  does not go to zero'), a loss that becomes NaN (b7-07), a throughput at two figures (b32-06 neosr 'from 2.9
  it/s to 1.6 it/s', b18-08 scvi-tools 42.55 s/it against 538.26 s/it), a task metric at zero (b11-09 MONAI
  'accuracy is always zero': its measurement is broken, the outcome unknown), a pasted record with a NaN
  loss (b18-01, under mixed precision: data_config);
* verdict.statements._fix_landed (stated_cause): a maintainer's fix that landed in the project (a pull
  request that closes the issue, 'resolved in #167', 'Fixed. Please update') is the code's fix unless its
  title names a setting; a maintainer's 'have not been tuned' names the settings (b32-02; b30-04, whose
  speaker note holds parentheses: formats.consolelog.context._SPEAKER_LINE now reads it);
* statements._KILLED and _IMPROVED: the shell's 'killed' quoted ('it shows 'killed''), 'did the job';
  policy._environment_fixed_unseen takes the outcome the text states (b31-05);
* signatures._Scan: a paste that ends inside a traceback's frames keeps the traceback as cut, and a line
  that is only an exception's class names it (b32-09 OneTrainer 'MemoryError' above a cut traceback);
  exception_causes 'python-memory-error': Python's MemoryError is the host's memory running out.
"""

from __future__ import annotations

from pathlib import Path

from report_helpers import report_case, report_verdict

from mlaudit_core.verdict.stated_symptom import stated_symptom


def _without(case: Path, tmp_path: Path, *starts: str) -> Path:
    """The case's context with the lines starting with ``starts`` left out."""
    out = tmp_path / "context.txt"
    lines = (case / "context.txt").read_text().splitlines()
    out.write_text("\n".join(ln for ln in lines if not ln.startswith(starts)))
    return out


def test_a_loss_stated_at_one_level_after_200_epochs_is_a_plateau():
    """Before: unknown/inconclusive ('no metric was logged at all'). The maintainer's 'Because num_label is
    too large' names no object: the plateau's usual cause, model_convergence."""
    v = report_verdict(report_case("b15-05"))
    assert (v["rule"], v["outcome"], v["cause"]) == ("V19k", "plateaued", "model_convergence")
    assert "still about 4.9" in v["summary"]


def test_a_reward_that_never_changes_with_untuned_scripts_is_a_plateau_of_the_settings():
    """Before: unknown/inconclusive. The maintainer's 'the scripts ... have not been tuned' names the settings."""
    v = report_verdict(report_case("b32-02"))
    assert (v["rule"], v["outcome"], v["cause"]) == ("V19k", "plateaued", "data_config")
    assert "never change" in v["summary"] and "not been tuned" in v["summary"]


def test_a_loss_that_does_not_go_to_zero_fixed_by_a_pull_request_is_a_code_plateau(tmp_path):
    """b30-10: 'this issue is resolved in #167' by a maintainer: the project's code changed. Without the
    maintainers' lines, the plateau's usual cause."""
    case = report_case("b30-10")
    v = report_verdict(case)
    assert (v["rule"], v["outcome"], v["cause"]) == ("V19k", "plateaued", "correctness_bug")
    v = report_verdict(case, _without(case, tmp_path, "maintainer"))
    assert (v["outcome"], v["cause"]) == ("plateaued", "model_convergence")


def test_a_loss_that_becomes_nan_told_in_words_is_a_divergence():
    """Before: unknown/correctness_bug (the cause read, the outcome not): the table of experiments holds
    the NaN only in Chinese notes."""
    v = report_verdict(report_case("b7-07"))
    assert (v["rule"], v["outcome"], v["cause"]) == ("V19k", "diverged", "correctness_bug")


def test_a_throughput_stated_at_two_figures_is_slow_and_a_fix_in_the_project_is_code():
    """b32-06 ('from 2.9 it/s to 1.6 it/s'; maintainer 'Fixed. Please update') and b18-08 ('way slower'
    beside 42.55s/it and 538.26s/it; a maintainer's pull request 'bug: ...' closes the issue)."""
    for prefix in ("b32-06", "b18-08"):
        v = report_verdict(report_case(prefix))
        assert (v["rule"], v["outcome"], v["cause"]) == ("V19k", "slow", "correctness_bug"), prefix


def test_a_task_metric_at_zero_is_a_broken_measurement_not_a_judged_training():
    """b11-09: 'lowering loss scores across epochs, but accuracy is always zero': below chance, so the
    measurement (labels, split) is broken; before: unknown/inconclusive."""
    v = report_verdict(report_case("b11-09"))
    assert (v["rule"], v["outcome"], v["cause"]) == ("V19k", "unknown", "data_config")


def test_stated_symptom_reads_observations_not_answers_questions_or_small_changes():
    assert stated_symptom(["the reward is stuck around 145"]) == (
        "plateaued",
        "the reward is stuck around 145",
    )
    assert stated_symptom(["Is the loss stuck around 4.9?"]) is None
    assert (
        stated_symptom(["maintainer NAME: if the loss stays at 4.9, lower the vocabulary"]) is None
    )
    assert stated_symptom(["If the loss becomes nan, lower the learning rate."]) is None
    assert (
        stated_symptom(["Exception: Current loss scale already at minimum - cannot decrease"])
        is None
    )
    assert stated_symptom(["INFO: val_acc does not improve after 3, stopping the fitting"]) is None
    assert stated_symptom(["- RGT: from 2.9 it/s to 2.7 it/s"]) is None
    assert stated_symptom(["Speed went from 3.0 s/it to 4.5 s/it"])[0] == "slow"


def test_a_cut_traceback_takes_the_class_pasted_apart_and_memoryerror_is_the_host():
    """b32-09: 'MemoryError' on its own line, then the traceback cut inside a frame ('site-pa[...]') at the
    paste's end; before: unknown/inconclusive (the traceback was dropped)."""
    v = report_verdict(report_case("b32-09"))
    assert (v["outcome"], v["cause"]) == ("crashed", "infra_runtime")
    assert "MemoryError" in v["summary"] and "__save_safetensors" in v["summary"]


def test_a_quoted_killed_with_more_ram_doing_the_job_is_an_infra_crash(tmp_path):
    """b31-05: the maintainer 'it shows 'killed' and does not print any stack trace', the reporter 'Indeed,
    increasing the RAM did the job'. Before: unknown/healthy (from 'the loss looks fine'). Without the
    reporter's confirmation the stated kill alone decides (V19i)."""
    case = report_case("b31-05")
    v = report_verdict(case)
    assert (v["rule"], v["outcome"], v["cause"]) == ("V00", "crashed", "infra_runtime")
    assert "'killed'" in v["summary"]
    v = report_verdict(case, _without(case, tmp_path, 'reporter ulliit: "Indeed'))
    assert (v["rule"], v["outcome"], v["cause"]) == ("V19i", "crashed", "infra_runtime")


def test_a_pasted_record_with_a_nan_loss_under_mixed_precision_is_a_divergence_of_the_setting():
    """b18-01: '(Step: 95400) train_mel_loss_before = nan.' pasted once, mixed precision stated; the
    maintainer's 'continue training without mixed_precision' is unconfirmed. Before: unknown/inconclusive."""
    v = report_verdict(report_case("b18-01"))
    assert (v["rule"], v["outcome"], v["cause"]) == ("V19k", "diverged", "data_config")
    assert "reduced precision" in v["summary"]


def test_a_speaker_note_with_parentheses_inside_is_read_and_an_untuned_example_is_the_settings():
    """b30-04: 'maintainer sven1977, pull request #7556 ("[RLlib] PPO(torch) on CartPole not tuned well
    enough ..."), which closes this issue: ...' was dropped by the context reader (a parenthesis inside the
    note); read, its title names the settings. Before: unknown/inconclusive."""
    from mlaudit_core.formats.consolelog.context import read_context_file

    case = report_case("b30-04")
    params = read_context_file(case / "context.txt")
    assert any(k.startswith("maintainer sven1977") and "PPO(torch)" in k for k in params)
    v = report_verdict(case)
    assert (v["rule"], v["outcome"], v["cause"]) == ("V19k", "plateaued", "data_config")
    assert "does not converge" in v["summary"] and "not tuned well enough" in v["summary"]
