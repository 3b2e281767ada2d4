"""The TensorBoard reader's vectorised shortcuts give exactly what plain decoding gives.

``_frame`` jumps over repeating cycles of record lengths, ``_fast_simple_values`` decodes the
plain scalar shape with numpy in chunks, ``_factorize_tags`` groups tags by hashed 64-bit words.
Each is compared here with the straightforward way (a Python walk of the length fields, the
protobuf ``Event`` message, grouping by full bytes) on files written by tensorboardX's real
``SummaryWriter``: tags of different lengths in a cycle and out of it, steps whose varint grows
(128, 16,384, 2**21), a negative step, text summaries, and truncated and corrupted copies.
Speed is measured by ``benchmarks/ingest.py``, not here.
"""

from __future__ import annotations

import struct

import numpy as np
import pytest

pytest.importorskip("tensorboardX")
pytest.importorskip("tensorboard")

from mlaudit_tensorboard import reader  # noqa: E402


def _walk(data: bytes) -> tuple[list[int], list[int]]:
    """Reference framing: follow every length field in Python; (payload starts, lengths) of the
    whole records."""
    starts, lengths, off = [], [], 0
    while off + 8 <= len(data):
        n = struct.unpack_from("<Q", data, off)[0]
        if off + n + 16 > len(data):
            break
        starts.append(off + 12)
        lengths.append(n)
        off += n + 16
    return starts, lengths


@pytest.fixture(scope="module")
def event_bytes(tmp_path_factory) -> bytes:
    from tensorboardX import SummaryWriter

    d = tmp_path_factory.mktemp("tb")
    w = SummaryWriter(str(d), max_queue=100000, flush_secs=3600)
    step = 0
    for i in range(6000):
        step += (1, 1, 7, 300)[i % 4] if i < 5000 else 5000  # steps pass 128, 16,384 and 2**21
        w.add_scalar("loss", 1.0 / (i + 1), step)
        w.add_scalar("lr", 0.1, step)
        w.add_scalar("grad/norm_of_a_long_parameter_name", float(i), step)
        if i % 97 == 0:
            w.add_scalar("val/accuracy", 0.5, step)
        if i % 1500 == 0:
            w.add_text("note", f"text at {i}", step)
    w.add_scalar("neg", 2.0, -5)
    w.add_scalar("x" * 100, 3.0, 2**40)
    w.close()
    (f,) = reader.event_files(d)
    return f.read_bytes()


def _variants(data: bytes) -> dict[str, bytes]:
    return {
        "whole": data,
        "cut in a record": data[: len(data) // 2 + 7],
        "cut in a header": data[:-3],
        "corrupt length": data[:5000] + b"\xff" * 8 + data[5008:],
        "zeroed payload": data[:9000] + bytes(40) + data[9040:],
    }


def test_frame_jumps_give_the_plain_walk(event_bytes):
    for name, data in _variants(event_bytes).items():
        starts, lengths = reader._frame(data, name, [])
        ref_s, ref_l = _walk(data)
        # the plain walk stops at the first record running past the end; so does _frame
        assert starts.tolist() == ref_s and lengths.tolist() == ref_l, name
    # the file is mostly a cycle of 3 record lengths, so the jumps were taken
    assert len(_walk(event_bytes)[0]) > 18000


def test_fast_tier_decodes_what_protobuf_decodes(event_bytes):
    from tensorboard.compat.proto import event_pb2

    data = event_bytes
    starts, lengths = reader._frame(data, "x", [])
    old_chunk = reader._FAST_CHUNK
    reader._FAST_CHUNK = 4096  # several chunks, filled into one output
    try:
        ok, steps, walls, values, t_start, t_len = reader._fast_simple_values(data, starts, lengths)
    finally:
        reader._FAST_CHUNK = old_chunk
    assert ok.sum() > 18000 and (~ok).sum() >= 5  # file version and text records go to protobuf
    got = iter(
        zip(steps.tolist(), walls.tolist(), values.tolist(), t_start.tolist(), t_len.tolist())
    )
    for r in range(starts.size):
        ev = event_pb2.Event.FromString(data[starts[r] : starts[r] + lengths[r]])
        if not ok[r]:
            assert not (
                len(ev.summary.value) == 1
                and ev.summary.value[0].WhichOneof("value") == "simple_value"
                and ev.step >= 0
            ), r  # only unusual shapes (here: the negative step) are left out
            continue
        step, wall, value, a, n = next(got)
        (v,) = ev.summary.value
        assert (step, wall, value, data[a : a + n].decode()) == (
            ev.step,
            ev.wall_time,
            v.simple_value,
            v.tag,
        )


def test_tag_grouping_equals_grouping_by_full_bytes(event_bytes, monkeypatch):
    data = event_bytes
    starts, lengths = reader._frame(data, "x", [])
    ok, _s, _w, _v, t_start, t_len = reader._fast_simple_values(data, starts, lengths)
    codes, tags = reader._factorize_tags(data, t_start, t_len)
    ref_codes, ref_tags = reader._factorize_tags_unique(data, t_start, t_len)
    assert tags == ref_tags and np.array_equal(codes, ref_codes)
    assert tags[:3] == [b"loss", b"lr", b"grad/norm_of_a_long_parameter_name"]  # first-seen order
    # a hash collision (simulated: every key in one group) is caught and grouped by bytes
    import pandas as pd

    monkeypatch.setattr(
        pd, "factorize", lambda key, sort=False: (np.zeros(len(key), np.int64), key[:1])
    )
    codes2, tags2 = reader._factorize_tags(data, t_start, t_len)
    assert tags2 == ref_tags and np.array_equal(codes2, ref_codes)


def test_whole_file_reads_the_same_through_load_logdir_and_event_accumulator(event_bytes, tmp_path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    f = tmp_path / "events.out.tfevents.1.host"
    f.write_bytes(event_bytes)
    run = reader.load_logdir(tmp_path)
    acc = EventAccumulator(str(tmp_path), size_guidance={"scalars": 0})
    acc.Reload()
    assert sorted(run.metrics.keys) == sorted(acc.Tags()["scalars"])
    for tag in acc.Tags()["scalars"]:
        ev = acc.Scalars(tag)
        s = run.metrics.series(tag)
        assert s.steps.tolist() == [e.step for e in ev]
        assert np.allclose(s.values, [e.value for e in ev], rtol=0, atol=0)
