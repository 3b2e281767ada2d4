"""``load_path`` on a folder with no run (mlaudit_core/formats/__init__.py): an empty folder is said to
be empty, and every refusal points at the console (``mlaudit logs FILE``). The session-17 new-user
pass met it on an HF ``Trainer`` ``output_dir`` left empty by ``save_strategy="no"`` (the Trainer
writes nothing there without checkpoints; its metrics went to the console only)."""

from __future__ import annotations

import pytest

from mlaudit_core.errors import InputError
from mlaudit_core.formats import load_path


def test_load_path_empty_folder_is_said_empty_and_points_at_the_console(tmp_path):
    out = tmp_path / "hf_overfit"
    out.mkdir()
    with pytest.raises(InputError) as e:
        load_path(out)
    msg = str(e.value)
    assert "the folder is empty" in msg and "mlaudit logs FILE" in msg, msg


def test_load_path_folder_without_a_run_points_at_the_console(tmp_path):
    (tmp_path / "notes.txt").write_text("nothing logged here\n")
    with pytest.raises(InputError) as e:
        load_path(tmp_path)
    msg = str(e.value)
    assert "nothing recognisable as a training run" in msg and "mlaudit logs FILE" in msg, msg
