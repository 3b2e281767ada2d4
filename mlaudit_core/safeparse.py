"""Bounded parsing of run-controlled JSON, YAML and TOML (settings, ``--config`` files).

Three ways a small file can take an audit down, each a :class:`TooComplex` error naming the
limit here:

* nesting: ``[[[[...]]]]`` thousands deep makes ``json.loads``, PyYAML's composer and
  ``tomllib`` recurse until ``RecursionError`` (exit 3). Depth is counted first, in one pass
  over the text for JSON and while composing for YAML, and capped at :data:`MAX_DEPTH`;
* YAML aliases: a 1 KB "billion laughs" document (nine anchors, each a list of nine aliases
  to the previous one) composes to a few dozen nodes, but any walk over the loaded value
  visits 9**9 (387 million) of them: 5.6 GB before the flattening of ``--config`` values died.
  The composed graph's *expanded* size is counted (memoised per node, so the count itself is
  linear) and capped at :data:`MAX_YAML_VALUES` before anything is constructed. Plain anchors
  and merge keys (``<<: *defaults``) in real configs stay well under it;
* size: texts over :data:`MAX_BYTES` are refused before parsing.

The YAML loader is PyYAML's ``SafeLoader`` (no Python objects are ever constructed).
"""

from __future__ import annotations

import json
from typing import Any

import yaml

#: Deepest nesting accepted. Real configs nest under 10 levels (Hydra, HF, Lightning); Python's
#: recursion limit (1,000) is hit by JSON near 1,000 levels.
MAX_DEPTH = 100
#: Largest number of values a YAML document may expand to through its aliases.
MAX_YAML_VALUES = 200_000
#: Largest text parsed (bytes of UTF-8): configs and settings are kilobytes.
MAX_BYTES = 16 << 20


class TooComplex(ValueError):
    """A document over a limit; the message says which (``too deep``, ``aliases expand``,
    ``too large``)."""


def json_depth(text: str, limit: int = MAX_DEPTH) -> int:
    """Nesting depth of a JSON text (brackets outside strings), scanning at most until it
    exceeds ``limit``. O(n), no recursion."""
    depth = deepest = 0
    in_str = esc = False
    for ch in text:
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > limit:
                    return deepest
        elif ch in "]}":
            depth -= 1
    return deepest


def _check_size(text: str, what: str) -> None:
    if len(text) > MAX_BYTES:
        raise TooComplex(f"too large to read as {what} (over {MAX_BYTES >> 20} MiB)")


def loads_json(text: str | bytes, *, max_depth: int = MAX_DEPTH) -> Any:
    """``json.loads`` after the size and depth checks.

    Raises:
        TooComplex: larger than :data:`MAX_BYTES` or nested deeper than ``max_depth``.
        ValueError: not JSON.
    """
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    _check_size(text, "JSON")
    if json_depth(text, max_depth) > max_depth:
        raise TooComplex(f"too deep (nested over {max_depth} levels)")
    return json.loads(text)


class _BoundedLoader(yaml.SafeLoader):
    """SafeLoader that refuses documents nested deeper than ``max_depth`` while composing."""

    max_depth = MAX_DEPTH

    def __init__(self, stream) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent, index):
        self._depth += 1
        if self._depth > self.max_depth:
            raise TooComplex(f"too deep (nested over {self.max_depth} levels)")
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def _expanded_size(node, memo: dict[int, int], limit: int) -> int:
    """Values ``node`` stands for once its aliases are expanded (memoised per node; a node
    reached through an alias is the same object as its anchor)."""
    key = id(node)
    if key in memo:
        return memo[key]
    memo[key] = 1  # a cycle (an alias inside its own anchor) counts once
    n = 1
    if isinstance(node, yaml.SequenceNode):
        for child in node.value:
            n += _expanded_size(child, memo, limit)
            if n > limit:
                break
    elif isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            n += _expanded_size(k, memo, limit) + _expanded_size(v, memo, limit)
            if n > limit:
                break
    memo[key] = n
    return n


def load_yaml(text: str, *, max_depth: int = MAX_DEPTH, max_values: int = MAX_YAML_VALUES) -> Any:
    """One YAML document, safely: SafeLoader, depth and alias-expansion limits.

    Raises:
        TooComplex: over a limit (see the module docstring).
        yaml.YAMLError: not YAML.
    """
    _check_size(text, "YAML")
    loader = type("Loader", (_BoundedLoader,), {"max_depth": max_depth})(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        if _expanded_size(node, {}, max_values) > max_values:
            raise TooComplex(f"its aliases expand to over {max_values:,} values (an alias bomb?)")
        return loader.construct_document(node)
    except RecursionError:
        raise TooComplex(f"too deep (nested over {max_depth} levels)") from None
    finally:
        loader.dispose()


def loads_toml(text: str, *, max_depth: int = MAX_DEPTH) -> dict:
    """``tomllib.loads`` after the size check, with deep nesting reported as :class:`TooComplex`.

    Raises:
        TooComplex: larger than :data:`MAX_BYTES` or nested deeper than ``max_depth``.
        tomllib.TOMLDecodeError: not TOML.
    """
    import sys

    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    _check_size(text, "TOML")
    # inline arrays/tables are the only unbounded nesting TOML has: brackets outside strings
    # (a table header [a.b] counts one level, harmless)
    if json_depth(text.replace("'", '"'), max_depth) > max_depth:
        raise TooComplex(f"too deep (nested over {max_depth} levels)")
    try:
        return tomllib.loads(text)
    except RecursionError:
        raise TooComplex(f"too deep (nested over {max_depth} levels)") from None
