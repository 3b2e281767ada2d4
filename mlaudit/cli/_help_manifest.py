"""What ``mlaudit --help`` lists, kept here so that printing it loads no command module.

``COMMANDS``: ``[name, help text, help panel or None, deprecated]`` of every visible
top-level command, as the built command tree has them (built-in ``cmd_*`` modules and the
plugins' ``register(app)``); ``ENTRY_POINTS``: the ``mlaudit.trackers`` and
``mlaudit.commands`` entry points they were read with. :func:`mlaudit.cli.main` prints the
list from here when the installed entry points are exactly these, else it builds the tree.
``tests/test_cli_light_start.py`` fails when this file is stale; regenerate it with
``python -m mlaudit.cli._help_manifest``.
"""

from __future__ import annotations

ENTRY_POINTS: list[str] = [
    "mlaudit.commands:demo=mlaudit_demo.cli:register",
    "mlaudit.trackers:clearml=mlaudit_clearml.plugin:ClearMLPlugin",
    "mlaudit.trackers:mlflow=mlaudit_mlflow.plugin:MlflowPlugin",
    "mlaudit.trackers:tensorboard=mlaudit_tensorboard.plugin:TensorBoardPlugin",
    "mlaudit.trackers:wandb=mlaudit_wandb.plugin:WandbPlugin",
]
COMMANDS: list[list] = [
    [
        "audit",
        "Audit a local run file or folder; the format is detected (docs/formats.md).\n"
        "\n"
        "Hugging Face trainer_state.json, Lightning/Keras/Ultralytics/timm CSV logs,\n"
        "detectron2/mmdetection/DETR/LLaMA-Factory JSON-lines logs, console logs,\n"
        "TensorBoard log directories, MLflow file stores, W&B run folders and ClearML\n"
        "offline sessions. Also reachable as 'mlaudit PATH'.",
        None,
        False,
    ],
    [
        "ci",
        "Audit an ML CI failure: real regression, or gate / setup / drift / runtime problem?\n"
        "\n"
        "Collects failure, pass and metric lines from the logs; finds how the repo gates metrics\n"
        "(golden files, pytest.approx, assert_allclose, rtol/atol, exact equality, timing "
        "thresholds,\n"
        "timeouts, Megatron CHECK_THRESHOLDS); recomputes every gated metric from the raw values;\n"
        "classifies the failure and recommends the minimal action.",
        None,
        False,
    ],
    [
        "evidence",
        "Collect a failure's evidence: failure, pass and metric lines with context windows, test "
        "outcomes, config and source candidates, the gates the repo applies and every gated metric "
        "recomputed from the raw values; each item with file:line. No verdict: the first pass an "
        "analyst or agent starts from (`mlaudit ci` decides on this same collection).",
        None,
        False,
    ],
    [
        "logs",
        "Diagnose a run from its console logs: metrics and failure signatures from plain text.\n"
        "\n"
        "Hugging Face Trainer, PyTorch Lightning, Keras, Megatron-LM / NeMo, fairseq,\n"
        "DeepSpeed, the PyTorch ImageNet example, tqdm bars, litgpt / nanoGPT and\n"
        "generic key=value lines are recognised (docs/logs.md). Nothing is written\n"
        "anywhere except --out.",
        None,
        False,
    ],
    [
        "mcp",
        "Serve audits to AI agents over MCP: audit_run, audit_path, audit_logs, audit_ci, "
        "collect_evidence, compare_runs, explain_rule, list_rules, get_series. Nothing is written "
        "back unless a call sets write_back; needs the mcp extra (pip install 'mlaudit\\[mcp]').",
        None,
        False,
    ],
    ["rules", "List every detector: code, name, family, summary.", None, False],
    ["rule", "Print one detector's documentation and parameters.", None, False],
    ["schema", "Print the JSON Schema of the report.", None, False],
    [
        "clearml",
        "Audit a ClearML task; write labels, user properties, a comment section and a report panel "
        "back. Credentials: clearml.conf or CLEARML_API_HOST / CLEARML_API_ACCESS_KEY / "
        "CLEARML_API_SECRET_KEY.",
        None,
        False,
    ],
    [
        "mlflow",
        "Audit an MLflow run; write tags, mlaudit/ artifacts and a Description section back.",
        None,
        False,
    ],
    [
        "tensorboard",
        "Audit a TensorBoard log directory; write the verdict as a text summary in its own event "
        "file.",
        None,
        False,
    ],
    [
        "wandb",
        "Audit a W&B run; write tags, mlaudit/ summary keys, a notes section and report files back "
        "(with --panel also a report panel). Credentials: WANDB_API_KEY / WANDB_BASE_URL / ~/.netrc.",
        None,
        False,
    ],
    [
        "demo",
        "Train five real small runs (healthy, high LR, overfit, underfit, data-starved) on "
        "scikit-learn's digits, log them to a local MLflow store and TensorBoard, audit each and "
        "write the verdicts back.",
        None,
        False,
    ],
    ["batch", "Audit every run of an experiment; resumable, with a summary.", None, False],
    ["serve", "Run a receiver that audits runs when a tracker calls it.", None, False],
    ["watch", "Watch a tracker and audit runs as they end (polling).", None, False],
]


def _generate() -> str:
    """This module's source with the lists read from the fully built command tree."""
    import pprint
    from pathlib import Path

    from mlaudit.cli import entry_point_names, help_rows

    src = Path(__file__).read_text(encoding="utf-8")
    head = src[: src.index("ENTRY_POINTS: list[str] = ")]
    tail = src[src.index("\n\ndef _generate()") :]
    body = (
        f"ENTRY_POINTS: list[str] = {pprint.pformat(entry_point_names(), width=96)}\n"
        f"COMMANDS: list[list] = {pprint.pformat(help_rows(), width=96)}\n"
    )
    return head + body + tail


if __name__ == "__main__":
    from pathlib import Path

    Path(__file__).write_text(_generate(), encoding="utf-8")
