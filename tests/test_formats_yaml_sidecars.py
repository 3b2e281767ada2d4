"""CSV readers' YAML sidecars refuse alias bombs.

``lightning_logs/version_N/hparams.yaml`` (and timm/Ultralytics args.yaml) are read by
``mlaudit_core.formats._common.read_yaml``. It used ``yaml.SafeLoader`` without the alias
limit of ``mlaudit_core.safeparse``: a billion-laughs document constructs at once (aliases are
shared objects) and then expands when flattened into params (11 levels of 10: mlaudit ran
for minutes). Now the document is refused with a warning naming the file; Lightning's
``!!python/object`` tags are still read as plain mappings. Metrics written by the real
Lightning CSVLogger.
"""

from __future__ import annotations

from lightning.fabric.loggers import CSVLogger  # the dev extra (frameworks)

from mlaudit_core.formats import load_path


def _run_dir(tmp_path, name, hparams: str):
    logger = CSVLogger(str(tmp_path), name=name, version=0)
    for s in range(20):
        logger.log_metrics({"train_loss": 2.0 - 0.05 * s, "epoch": s // 5}, step=s)
    logger.save()
    (tmp_path / name / "version_0" / "hparams.yaml").write_text(hparams)
    return tmp_path / name / "version_0"


def test_alias_bomb_in_hparams_is_refused(tmp_path):
    levels = ["a0: &a0 [" + ", ".join(["x"] * 10) + "]"]
    levels += [
        f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 6)
    ]  # 10^6 values
    run_dir = _run_dir(tmp_path, "bomb", "lr: 0.1\n" + "\n".join(levels) + "\n")
    [(_, run)] = load_path(run_dir)
    assert not any(k.endswith("a5") for k in run.params)
    assert any("hparams.yaml" in w and "alias" in w for w in run.warnings)
    assert "train/loss" in run.metrics.keys or "train_loss" in run.metrics.keys


def test_python_tagged_hparams_are_still_read(tmp_path):
    run_dir = _run_dir(
        tmp_path, "tagged", "lr: 0.1\nopt: !!python/object:argparse.Namespace\n  momentum: 0.9\n"
    )
    [(_, run)] = load_path(run_dir)
    assert any(k.endswith("lr") and v == "0.1" for k, v in run.params.items())
    assert any(k.endswith("momentum") and v == "0.9" for k, v in run.params.items())
