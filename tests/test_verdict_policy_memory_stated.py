"""verdict.policy._memory_stated (V19i) and verdict.statements.stated_memory_exhaustion on real reports
whose out-of-memory is told in words, with no framework message pasted (tests/data/reports b15-07: 'the
GPU runs out of memory' on a 12 GB GTX 1080, the OOM traceback a screenshot; b16-14: 'The workstation's
128 GB RAM was quickly filled up, which was likely the cause that the training script failed')."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from mlaudit.cli import app
from mlaudit_core.verdict.statements import stated_memory_exhaustion

REPORTS = Path(__file__).resolve().parent / "data" / "reports"


def _verdict(case: Path, log: Path | None = None) -> dict:
    args = ["logs", str(log or case / "report.log"), "--config", str(case / "context.txt")]
    return json.loads(CliRunner().invoke(app, [*args, "--format", "json"]).stdout)["verdict"]


def test_an_out_of_memory_told_in_words_is_an_infra_crash(tmp_path):
    """Before: unknown/inconclusive ('no metric was logged at all'). The finding quotes the sentence and
    names the device: the GPU for b15-07, the host's RAM (not the GPU) for b16-14. The same report with
    the event turned into a question is not judged by this rule."""
    (gpu,) = REPORTS.glob("b15-07-*")
    v = _verdict(gpu)
    assert (v["rule"], v["outcome"], v["cause"]) == ("V19i", "crashed", "infra_runtime")
    assert "GPU ran out of memory" in v["summary"] and "runs out of memory" in v["summary"]
    (host,) = REPORTS.glob("b16-14-*")
    v = _verdict(host)
    assert (v["rule"], v["outcome"], v["cause"]) == ("V19i", "crashed", "infra_runtime")
    assert (
        "host's memory (RAM)" in v["summary"] and "128 GB RAM was quickly filled up" in v["summary"]
    )
    log = tmp_path / "report.log"
    log.write_text(
        (gpu / "report.log")
        .read_text()
        .replace("the GPU runs out of memory.", "does the GPU run out of memory?")
    )
    assert _verdict(gpu, log)["rule"] != "V19i"


def test_stated_memory_exhaustion_reads_only_what_a_sentence_asserts():
    assert stated_memory_exhaustion(["I got a CUDA OOM at step 10."])[0] == "gpu"
    assert stated_memory_exhaustion(["It runs out of memory with batch 8."])[0] == "memory"
    for said in (
        "There is no OOM, the loss is just flat.",
        "Lower the batch size to avoid running out of GPU memory.",
        "If the GPU runs out of memory, lower the batch size.",
        "Maybe the GPU ran out of memory?",
        "The RAM was filled up by the cache.",  # the host's memory full, but nothing failed
    ):
        assert stated_memory_exhaustion([said]) is None, said


def test_a_kill_told_in_the_passive_is_read_and_the_users_own_stop_is_not():
    assert (
        stated_memory_exhaustion(["My training process was killed after epoch 3."])[0] == "killed"
    )
    assert stated_memory_exhaustion(["The job got silently killed by the cluster."])[0] == "killed"
    for said in (
        "I killed the training since it was slow.",
        "The process was not killed.",
        "Why was the job killed?",
    ):
        assert stated_memory_exhaustion([said]) is None, said


def test_a_distributed_timeout_told_beside_a_failure_is_an_infra_crash():
    """b18-10 (MedicalGPT, prose only): 'at 30 minutes it always errors out; torch's init_process_group
    default timeout is 1800 s'. Before: unknown/inconclusive."""
    from mlaudit_core.verdict.statements import stated_timeout

    (case,) = REPORTS.glob("b18-10-*")
    v = _verdict(case)
    assert (v["rule"], v["outcome"], v["cause"]) == ("V19i", "crashed", "infra_runtime")
    assert "always errors out" in v["summary"] and "init_process_group" in v["summary"]
    assert stated_timeout(["The NCCL timeout is 30 minutes."]) is None  # no failure stated
    assert stated_timeout(["It crashed. Is the NCCL timeout too short?"]) is None
