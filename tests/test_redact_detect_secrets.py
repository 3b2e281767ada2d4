"""The redaction catalogue against the catalogue it ports: every line of the shape cases
(tests/test_redact.py, tests/test_redact_channels.py) in which a provider detector of
detect-secrets (the version installed, 1.5.0 when the catalogue was ported) finds a secret
holds none that detector finds after :func:`mlaudit_core.redact.redact_text`. The entropy,
keyword and IP detectors are left out (mlaudit's key-name rule stands for the keyword one; see
docs/index.md, "Catalogue: source and version")."""

from __future__ import annotations

import pytest
from test_redact import CASES
from test_redact_channels import ISSUE_SHAPES

from mlaudit_core.redact import redact_text

detect_secrets = pytest.importorskip("detect_secrets")

LEFT_OUT = (
    "Base64HighEntropyString",
    "HexHighEntropyString",
    "KeywordDetector",
    "IPPublicDetector",
)


def _plugins() -> list:
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class

    return [
        cls()
        for cls in get_mapping_from_secret_type_to_class().values()
        if cls.__name__ not in LEFT_OUT
    ]


def _lines() -> list[str]:
    texts = [text for (text, _, _), _ in CASES.values()] + [text for text, _ in ISSUE_SHAPES]
    return [line for t in texts for line in t.split("\n") if line.strip()]


def test_redact_text_leaves_nothing_detect_secrets_finds():
    plugins = _plugins()
    assert len(plugins) >= 20
    found, leaks = 0, []
    for line in _lines():
        for pl in plugins:
            if not list(pl.analyze_line(filename="train.log", line=line, line_number=1)):
                continue
            found += 1
            out = redact_text(line)
            if list(pl.analyze_line(filename="train.log", line=out, line_number=1)):
                leaks.append((type(pl).__name__, out))
    assert found >= 15, found  # the cases exercise the ported detectors
    assert leaks == []
