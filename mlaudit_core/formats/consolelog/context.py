"""Run context from small config / context files, and the figures detectors read from params.

``--config`` files become the run's params: JSON, YAML (``yaml.safe_load``) and
TOML are flattened to dotted keys; any other text is read as ``key = value`` or
``key: value`` lines (several ``k=v`` pairs on one comma-separated line are
split), with ``# `` comment lines and bracketed annotations ignored, except a comment line that
quotes a person of a report's thread (``# reporter: ...``, ``# maintainer (NAME): ...``, ``# other user
(NAME): ...``; :data:`_COMMENTED_SPEAKER`), which is read as that person's sentence.

The helpers below read a figure out of params whatever the framework called it
(``steps_per_epoch``, ``Number of batches per epoch (training set)``, ``1352
steps per epoch`` in prose).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import yaml

from .parser import strip_annotations
from .reader import LineReader, UnreadableLog

_KV_MULTI = re.compile(r"(?:^|,\s*)(?P<k>[A-Za-z_][\w.\-]*)\s*=\s*(?P<v>'[^']*'|\"[^\"]*\"|[^,]*)")
#: Words from which a value is a sentence, not one setting (as ``verdict.statements.PROSE_WORDS``).
_PROSE_WORDS = 3
#: ``key: value`` / ``key = value``; a key may name who said a sentence of a report's thread, with commas,
#: quotes and an issue number (``reporter (later, the cause): ...``, ``maintainer NAME (PR #2, "fixes
#: #1"): ...``).
_KV_LINE = re.compile(
    r"^\s*(?P<k>[A-Za-z][\w .()/@,#\"'-]{0,80}?)\s*(?:=|:(?=\s|$))\s*(?P<v>.*?)\s*$"
)
#: A sentence of a report's thread attributed to its speaker by a longer key than :data:`_KV_LINE` reads: a
#: role word, then words and parenthesised notes that may hold any punctuation but a colon outside them
#: (``maintainer NAME, on the same output in issue #38 ("which of the 12 MAE values is the paper's
#: 13.583?"): ...``, ``maintainers' follow-up (PR #299, "Notify users ... in #297"): ...``), a note holding
#: one level of parentheses itself (``maintainer NAME, pull request #7556 ("PPO(torch) on CartPole not
#: tuned well enough"), which closes this issue: ...``).
_SPEAKER_LINE = re.compile(
    r"^\s*(?P<k>(?:maintainers?'?|reporters?'?|authors?'?|users?|owners?|developers?|commenters?|"
    r"contributors?|op)\b(?:[^:()\n]|\((?:[^()\n]|\([^()\n]*\))*\)){0,240}?)\s*:\s+(?P<v>\S.*?)\s*$",
    re.I,
)
#: A comment line that quotes a person of a report's thread: ``#``, an optional ordinal (``other``,
#: ``second``), then a line :data:`_SPEAKER_LINE` reads. Issue exports keep the thread's words this way
#: beside the ``key: value`` setup; a comment that describes a file (``# reporter's prose (ISSUE, "TITLE")``)
#: has no ``role: sentence`` shape and stays a comment.
_COMMENTED_SPEAKER = re.compile(r"^#+\s*(?:(?:other|another|second|third)\s+)?(?=\w)", re.I)


def read_context_file(path: str | Path) -> dict[str, str]:
    """Params from one config / context file.

    Raises:
        UnreadableLog: the file is missing, empty, binary, or its JSON/YAML/TOML does not parse.
    """
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix in (".json", ".yaml", ".yml", ".toml"):
        reader = LineReader(p)  # same checks (missing, empty, binary) as for logs
        text = "\n".join(t for _, t in reader)
        from mlaudit_core.safeparse import TooComplex, load_yaml, loads_json, loads_toml

        try:  # depth, size and YAML alias expansion bounded (mlaudit_core.safeparse)
            if suffix == ".json":
                data = loads_json(text)
            elif suffix == ".toml":
                data = loads_toml(text)
            else:
                data = load_yaml(text)
        except TooComplex as exc:
            raise UnreadableLog(f"{p}: skipped: {exc}") from None
        except (ValueError, yaml.YAMLError) as exc:
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise UnreadableLog(f"{p}: not valid {suffix[1:].upper()}: {first}") from None
        out: dict[str, str] = {}
        _flatten("", data, out)
        return out
    return parse_context_lines(t for _, t in LineReader(p))


def _toml():
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    return tomllib


def parse_context_lines(lines) -> dict[str, str]:
    """Params from ``key = value`` / ``key: value`` text lines."""
    out: dict[str, str] = {}
    for raw in lines:
        line = raw.strip()
        if line.startswith("#"):
            line = _commented_speaker(line)
        if not line:
            continue
        line = strip_annotations(line).strip()
        if not line:
            continue
        multi = list(_KV_MULTI.finditer(line)) if line.count("=") >= 2 else []
        kv = _KV_LINE.match(line)
        if kv is None or not kv["v"]:
            kv = _SPEAKER_LINE.match(line)
        if len(multi) >= 2:
            for m in multi:
                out[m["k"]] = _unquote(m["v"])
            # a ``key: sentence`` line whose sentence lists settings (``task: ... 10 repeats, each
            # resetting every seed, benchmark=False, enabled=False``): the sentence is kept too
            if kv and kv.start("v") > kv.end("k") and ":" in line[kv.end("k") : kv.start("v")]:
                if len(kv["v"].split()) >= _PROSE_WORDS and kv["k"].strip() not in out:
                    out[kv["k"].strip()] = kv["v"]
            continue
        if kv and kv["v"]:
            key, val = kv["k"].strip(), _unquote(kv["v"])
            # a second sentence of the same speaker (``reporter: ...`` twice) is kept beside the first;
            # a setting given twice keeps its last value
            if (
                key in out
                and len(val.split()) >= _PROSE_WORDS
                and len(out[key].split()) >= _PROSE_WORDS
            ):
                key = next(f"{key} ({n})" for n in range(2, 1000) if f"{key} ({n})" not in out)
            out[key] = val
    return out


def _commented_speaker(line: str) -> str:
    """A comment line that quotes a person of a thread (:data:`_COMMENTED_SPEAKER`) without its ``#``,
    else ``""`` (a comment)."""
    m = _COMMENTED_SPEAKER.match(line)
    if m is None:
        return ""
    rest = line[m.start() :].lstrip("#").strip()
    kv = _SPEAKER_LINE.match(line[m.end() :])
    return rest if kv is not None and len(kv["v"].split()) >= _PROSE_WORDS else ""


def _unquote(v: str) -> str:
    v = v.strip()
    if len(v) >= 2 and v[0] == v[-1] and v[0] in "'\"":
        return v[1:-1]
    return v


def _flatten(prefix: str, data: Any, out: dict[str, str]) -> None:
    if isinstance(data, dict):
        for k, v in data.items():
            _flatten(f"{prefix}.{k}" if prefix else str(k), v, out)
    elif isinstance(data, list) and prefix:
        out[prefix] = json.dumps(data, default=str)[:1000]
    elif prefix:
        out[prefix] = str(data)


# --- figures read from params ------------------------------------------------------------------

_SPE_KEY = re.compile(
    r"(?:steps|batches|iterations|iters|updates)_?(?:per|/)_?epoch", re.IGNORECASE
)
_SPE_TEXT = re.compile(
    r"(\d+)\s+(?:training\s+|optimi[sz]er\s+)?(?:steps|batches|iterations|updates)\s+per\s+epoch",
    re.IGNORECASE,
)
_NOT_TRAIN = re.compile(r"valid|eval|test|predict", re.IGNORECASE)
_LEADING_INT = re.compile(r"^\s*(\d+)(?:\.0+)?\b")


def steps_per_epoch(params: dict[str, str]) -> tuple[int, str] | None:
    """Training steps per epoch and the param it came from, or ``None``.

    Looks at keys like ``steps_per_epoch``, ``num_update_steps_per_epoch``,
    ``Number of batches per epoch (training set)`` (validation/test keys are
    ignored), then at prose such as ``1352 steps per epoch`` in any value.
    Keys recovered from the log structure (``log.steps_per_epoch``) come last.
    """
    ordered = sorted(params.items(), key=lambda kv: kv[0].startswith("log."))
    for k, v in ordered:
        nk = k.lower().replace(" ", "_")
        if _NOT_TRAIN.search(nk):
            continue
        if _SPE_KEY.search(nk):
            m = _LEADING_INT.match(str(v))
            if m and int(m[1]) > 0:
                return int(m[1]), k
    for k, v in ordered:
        m = _SPE_TEXT.search(str(v))
        if m and int(m[1]) > 0:
            return int(m[1]), k
    return None


def gradient_accumulation(params: dict[str, str]) -> int:
    """Gradient-accumulation steps from params (1 when not given)."""
    for k, v in params.items():
        nk = k.lower()
        if re.search(r"grad(?:ient)?_?accum", nk):
            m = _LEADING_INT.match(str(v))
            if m and int(m[1]) > 0:
                return int(m[1])
    return 1


_CHANCE = re.compile(r"chance\s*(?:level)?\s*(?:=|:|is|of)?\s*(?P<p>0?\.\d+|1/\d+)", re.IGNORECASE)
_NCLASS_KEY = re.compile(
    r"^(?:.*[._])?(?:num_classes|n_classes|nb_classes|num_labels|n_labels|classes|nclass)$",
    re.IGNORECASE,
)
_BINARY = re.compile(r"\bbinary\b", re.IGNORECASE)


def chance_level(params: dict[str, str]) -> tuple[float, str] | None:
    """Accuracy of a uniform guess and the param key it came from, or ``None``.

    From an explicit ``chance = 0.5`` in any value, else ``1 / num_classes`` (or
    ``num_labels`` ...), else 0.5 when a value says the task is binary.
    """
    for k, v in params.items():
        m = _CHANCE.search(str(v))
        if m:
            p = m["p"]
            val = 1.0 / int(p[2:]) if p.startswith("1/") else float(p)
            return val, k
    for k, v in params.items():
        if _NCLASS_KEY.match(k.strip()):
            m = _LEADING_INT.match(str(v))
            if m and int(m[1]) >= 2:
                return 1.0 / int(m[1]), k
    for k, v in params.items():
        if _BINARY.search(str(v)) or _BINARY.search(k):
            return 0.5, k
    return None


_PRECISION_KEY = re.compile(
    r"(?:^|[._])(?:precision|fp16|bf16|half|amp|mixed_precision|dtype|torch_dtype)$", re.IGNORECASE
)
_PURE_16 = re.compile(
    r"^\s*[\"']?(?:16-true|bf16-true|true16|half|float16|fp16-true|torch\.float16)[\"']?\s*$",
    re.IGNORECASE,
)


def precision_setting(params: dict[str, str]) -> tuple[str, str, bool] | None:
    """(param key, value, pure 16-bit?) of the precision setting, or ``None``.

    Pure 16-bit (``16-true``, ``half``, ``float16``) keeps weights and optimizer
    state in fp16 with no fp32 master copy and no loss scaling; ``16-mixed`` /
    ``fp16=True`` with AMP is mixed precision.
    """
    for k, v in params.items():
        if _PRECISION_KEY.search(k.strip()):
            return k, str(v), bool(_PURE_16.match(str(v)))
    return None
