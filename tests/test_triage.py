"""mlaudit_core.triage on generated sweeps of known structure (the factor that causes the
failures is known), noise-only sweeps, and the bad inputs of issue 32 (1 run, all healthy, no
params, 500 distinct params)."""

from __future__ import annotations

import numpy as np
import pytest

from mlaudit_core.triage import MAX_FACTORS, bh, render_text, seed_noise, triage


def sweep(n: int, cause: str, rng: np.random.Generator, flip: float = 0.03) -> list[dict]:
    """``n`` runs with lr (log-uniform), batch size, optimizer, seed, host, commit and start
    time; failures caused by ``cause`` (``lr``: lr >= 3e-3; ``host``: gpu-3; ``commit``: c3;
    ``time``: runs started after the middle; ``noise``: 20 % at random)."""
    recs = []
    for i in range(n):
        lr = float(10 ** rng.uniform(-4, -2))
        host = f"gpu-{rng.integers(6)}"
        commit = str(rng.choice(["a1", "b2", "c3"]))
        bad = {
            "lr": lr >= 3e-3,
            "host": host == "gpu-3",
            "commit": commit == "c3",
            "time": i >= n // 2,
            "noise": rng.random() < 0.2,
        }[cause]
        if cause != "noise" and rng.random() < flip:
            bad = not bad
        recs.append(
            {
                "run_id": f"r{i:04d}",
                "outcome": "diverged" if bad else "succeeded",
                "cause": None,
                "params": {
                    "lr": f"{lr:.6g}",
                    "batch_size": str(rng.choice([32, 64])),
                    "optimizer": str(rng.choice(["adam", "sgd"])),
                    "seed": str(i % 3),
                },
                "tags": {"team": "vision"},
                "start_time": 1.7e9 + 60 * i,
                "commit": commit,
                "host": host,
                "metrics": {"val/loss": float(rng.normal(1.0, 0.05))},
            }
        )
    return recs


@pytest.mark.parametrize(
    "cause,name",
    [("lr", "param:lr"), ("host", "host"), ("commit", "commit"), ("time", "start_time")],
)
def test_triage_finds_the_known_factor_first(cause, name):
    t = triage(sweep(150, cause, np.random.default_rng(7)))
    assert t.significant, render_text(t)
    top = t.factors[0]
    assert top.name == name and top.significant and top.q_value <= 0.05
    g, r = top.counts["group"], top.counts["rest"]
    assert g["failing"] + r["failing"] == t.outcomes["diverged"]
    assert g["runs"] + r["runs"] == 150
    assert str(g["failing"]) in top.effect and str(r["runs"]) in top.effect


def test_triage_lr_effect_in_words():
    t = triage(sweep(150, "lr", np.random.default_rng(3), flip=0.0))
    top = t.factors[0]
    n_bad = t.outcomes["diverged"]
    assert top.effect.startswith(f"all {n_bad} diverged runs have lr >= ")
    assert f"0 of {150 - n_bad} runs with lr < " in top.effect
    thr = float(top.effect.split("lr >= ")[1].split(" ")[0])
    assert 2e-3 < thr <= 3.2e-3


def test_triage_noise_only_claims_nothing_in_most_sweeps():
    """False discovery on noise-only sweeps: at most 2 of 20 (target <= 5 %; the benchmark
    measures it on more sweeps)."""
    rng = np.random.default_rng(11)
    claimed = sum(bool(triage(sweep(80, "noise", rng), seed=k).significant) for k in range(20))
    assert claimed <= 2


def test_triage_change_point_names_last_good_and_first_bad():
    recs = sweep(100, "time", np.random.default_rng(5), flip=0.0)
    for r in recs[50:]:
        r["commit"] = "c9"
    t = triage(recs)
    cp = t.change_point
    assert cp and cp["significant"] and cp["direction"] == "failures start"
    assert cp["last_good"] == "r0049" and cp["first_bad"] == "r0050"
    assert cp["before"] == {"runs": 50, "failing": 0} and cp["after"] == {"runs": 50, "failing": 50}
    assert cp["changed"]["commit"][1] == "c9"


def test_triage_one_run_all_healthy_no_params_too_many():
    one = triage(sweep(1, "lr", np.random.default_rng(1)))
    assert not one.factors and "nothing to compare" in one.statements[-1]

    healthy = sweep(40, "noise", np.random.default_rng(2))
    for r in healthy:
        r["outcome"] = "succeeded"
    t = triage(healthy)
    assert not t.factors and any("all 40 runs succeeded" in s for s in t.statements)

    bare = [{"run_id": f"r{i}", "outcome": "diverged" if i % 3 else "succeeded"} for i in range(30)]
    t = triage(bare)
    assert not t.factors and any(
        "no param, tag, commit, host or start time varies" in s for s in t.statements
    )
    assert any("no run carries params" in s for s in t.statements)

    wide = sweep(60, "noise", np.random.default_rng(4))
    for i, r in enumerate(wide):
        r["params"] = {f"p{k}": f"{(i * 7919 + k) % 1000}" for k in range(500)}
    t = triage(wide)
    assert not t.factors and any(f"over the limit of {MAX_FACTORS}" in s for s in t.statements)


def test_triage_distinct_value_per_run_is_not_a_factor():
    recs = sweep(120, "lr", np.random.default_rng(9))
    for r in recs:
        r["params"]["output_dir"] = f"/runs/{r['run_id']}"
    t = triage(recs)
    assert "param:output_dir" not in {f.name for f in t.factors}
    assert any("output_dir" in s for s in t.statements)


def test_triage_small_group_is_said_small_and_not_claimed():
    recs = sweep(60, "noise", np.random.default_rng(1))
    for r in recs:
        r["outcome"] = "succeeded"
    for r in recs[:3]:
        r["outcome"], r["host"] = "crashed", "gpu-bad"
    t = triage(recs)
    assert not t.significant
    assert any("small group: 3 crashed run(s)" in s for s in t.statements)
    assert "(small group: 3 crashed run(s))" in t.factors[0].effect


def test_bh_matches_the_definition():
    p = [0.01, 0.04, 0.03, 0.5]
    # sorted 0.01, 0.03, 0.04, 0.5 -> p*m/rank 0.04, 0.06, 0.0533, 0.5, then the running minimum
    assert bh(p) == pytest.approx([0.04, 0.16 / 3, 0.16 / 3, 0.5])


def test_seed_noise_judges_the_best_run():
    rng = np.random.default_rng(0)
    recs = []
    for cfg, mean in (("a", 1.0), ("b", 1.01), ("c", 0.5)):
        for s in range(4):
            recs.append(
                {
                    "run_id": f"{cfg}{s}",
                    "outcome": "succeeded",
                    "params": {"cfg": cfg, "seed": str(s)},
                    "metrics": {"val/loss": mean + float(rng.normal(0, 0.02))},
                }
            )
    sn = seed_noise(recs)
    assert sn["metric"] == "val/loss" and sn["lower_is_better"] and sn["real"] is True
    assert sn["best_run"].startswith("c") and sn["repeated_groups"] == 3
    close = [r for r in recs if not r["run_id"].startswith("c")]
    sn = seed_noise(close)
    assert sn["real"] is False and "within seed noise" in sn["statement"]


def test_triage_to_dict_shape():
    d = triage(sweep(100, "host", np.random.default_rng(2))).to_dict()
    f = d["factors"][0]
    assert set(f) >= {"name", "kind", "effect", "counts", "p_value", "q_value", "significant"}
    assert f["kind"] == "categorical" and f["significant"] is True


def test_render_html_one_plot_per_significant_factor_escaped():
    from mlaudit_core.triage import render_html

    recs = sweep(120, "host", np.random.default_rng(4), flip=0.0)
    for r in recs:
        if r["host"] == "gpu-3":
            r["host"] = "<script>alert(1)</script>"
    t = triage(recs)
    page = render_html(t)
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert page.count("<svg") == len(t.significant) >= 1
    host = next(f for f in t.significant if f.name == "host")
    bar = next(b for b in host.bins if b["label"] == "<script>alert(1)</script>")
    assert bar["failing"] == bar["runs"] == t.outcomes["diverged"]
    lr_bins = next(f for f in t.factors if f.name == "param:lr").bins
    assert len(lr_bins) == 10 and sum(b["runs"] for b in lr_bins) == 120


def test_seed_noise_identical_seeds_say_so():
    recs = [
        {
            "run_id": f"{c}{s}",
            "outcome": "succeeded",
            "params": {"cfg": c, "seed": str(s)},
            "metrics": {"loss": 1.0 if c == "a" else 2.0},
        }
        for c in "ab"
        for s in range(3)
    ]
    sn = seed_noise(recs)
    assert sn["real"] is None and "identical values across seeds (sd 0)" in sn["statement"]


def _commit_sweep(rng: np.random.Generator, bad_from: int | None, flip: float = 0.03) -> list[dict]:
    """120 runs over 6 commits used one after the other (20 runs each; the runs of neighbouring
    commits interleave in time as branches do); from commit ``bad_from`` on, runs diverge
    (a regression); at that commit the ``loss_scale`` default changed too."""
    recs = []
    for i in range(120):
        k = min(5, max(0, (i + int(rng.integers(-3, 4))) // 20))
        bad = bad_from is not None and k >= bad_from
        if bad_from is None:
            bad = rng.random() < 0.25
        elif rng.random() < flip:
            bad = not bad
        recs.append(
            {
                "run_id": f"r{i:03d}",
                "outcome": "diverged" if bad else "succeeded",
                "params": {
                    "lr": f"{10 ** rng.uniform(-4, -3):.6g}",
                    "seed": str(i % 4),
                    "loss_scale": "dynamic" if (bad_from is not None and k >= bad_from) else "1024",
                },
                "tags": {},
                "start_time": 1.7e9 + 60 * i,
                "commit": f"{k:02d}" + "abcdef"[k] * 6,
                "host": f"gpu-{i % 4}",
            }
        )
    return recs


def test_triage_commit_change_point_names_last_good_and_first_bad_commit():
    t = triage(_commit_sweep(np.random.default_rng(11), bad_from=3))
    cc = t.commit_change_point
    assert cc and cc["significant"] and cc["direction"] == "failures start"
    assert cc["commits"] == ["00aaaaaa", "01bbbbbb", "02cccccc", "03dddddd", "04eeeeee", "05ffffff"]
    assert cc["last_good_commit"] == "02cccccc" and cc["first_bad_commit"] == "03dddddd"
    assert cc["before"]["commits"] == 3 and cc["after"]["commits"] == 3
    assert cc["changed"]["commit"] == ["02cccccc", "03dddddd"]
    assert cc["changed"]["param:loss_scale"] == ["1024", "dynamic"]
    assert "seed" not in " ".join(cc["changed"])
    text = render_text(t)
    assert "last good commit 02cccccc" in text and "first bad commit 03dddddd" in text
    assert "param:loss_scale: '1024' -> 'dynamic'" in text
    assert t.to_dict()["commit_change_point"]["first_bad_commit"] == "03dddddd"


def test_triage_commit_change_point_not_claimed_on_noise_or_without_commits():
    claimed = 0
    for s in range(20):
        t = triage(_commit_sweep(np.random.default_rng(100 + s), bad_from=None))
        claimed += bool(t.commit_change_point and t.commit_change_point["significant"])
    assert claimed <= 2
    recs = _commit_sweep(np.random.default_rng(12), bad_from=3)
    recs[5]["commit"] = None  # a run without a recorded commit: no commit order
    assert triage(recs).commit_change_point is None
    two = _commit_sweep(np.random.default_rng(13), bad_from=3)
    for r in two:
        r["commit"] = "aaaa" if r["commit"] < "03" else "bbbb"
    assert triage(two).commit_change_point is None  # 2 commits: the commit factor says it


def test_candidates_hide_the_values_of_a_credential_param():
    """A param named like a credential (``db_password``) that differs between failing and
    healthy runs is still a factor, but its values are opaque labels in every statement,
    rule and level: ``db_password != 's3cretP@ss'`` leaked past the text redactor (it
    knows ``key = value``, not ``key != value``, nor a bare level label)."""
    import json

    from mlaudit_core.triage import candidates

    recs = [
        {
            "run_id": f"r{i}",
            "outcome": "diverged" if i >= 6 else "succeeded",
            "params": {"db_password": "s3cretP@ss" if i >= 6 else "0therP@ss", "lr": "0.1"},
            "start_time": 1.8e9 + 60 * i,
        }
        for i in range(12)
    ]
    cands = candidates(recs)
    assert sorted(set(cands["param:db_password"])) == [
        "[REDACTED value 1]",
        "[REDACTED value 2]",
    ]
    doc = json.dumps(triage(recs, permutations=999).to_dict())
    text = render_text(triage(recs, permutations=999))
    for out in (doc, text):
        assert "s3cretP@ss" not in out and "0therP@ss" not in out
    assert "param:db_password" in doc  # the factor is still tested and named
    assert json.loads(doc)["change_point"]["changed"]["param:db_password"] == [
        "[REDACTED value 1]",
        "[REDACTED value 2]",
    ]


def test_render_html_redacts_before_escaping():
    """A credential inside a param value that is not named like one (a JSON config echo
    ``{"api_key": "sk-..."}``) is redacted in the HTML page: escaping first turned the quotes
    into ``&quot;`` and the text redactor, run on the escaped page by every caller, no longer
    saw ``"api_key": "..."``."""
    from mlaudit_core.redact import redact_text
    from mlaudit_core.triage import render_html

    recs = [
        {
            "run_id": f"r{i}",
            "outcome": "diverged" if i % 2 else "succeeded",
            "params": {
                "cfg": '{"api_key": "sk-abcdefabcdef123456789' + ("0", "1")[i % 2] + '"}',
            },
        }
        for i in range(16)
    ]
    t = triage(recs, permutations=999)
    assert t.significant  # the factor is plotted: its effect and bin labels are on the page
    page = render_html(t)
    assert "sk-abcdefabcdef" not in page and "sk-abcdefabcdef" not in redact_text(page)
