"""A reproduction run at another total batch than its recipe's.

A recipe's figure holds for the recipe's total batch (GPUs x images per GPU) and the learning rate tuned
for it. A run that keeps the recipe's learning rate at a batch several times smaller or larger follows
another optimisation path (Goyal et al. 2017, "Accurate, Large Minibatch SGD": the learning rate scales
linearly with the total batch; MMEngine's ``auto_scale_lr`` and the OpenMMLab docs say a config's
learning rate is for its ``{GPUs}xb{batch}`` and must be rescaled otherwise). A gap between such a run's
figure and the recipe's is the configuration's, not a fault of the code (data_config).

Read from a report's text: the recipe's total batch from an OpenMMLab config name (``..._8xb64-210e_...``
is 8 GPUs x 64 images: :data:`_CONFIG_NAME`, the convention of the OpenMMLab config naming docs) or from
``8 GPUs x 64 images per GPU`` in a line about the config or recipe; the run's total batch from a stated
product (``4 GPUs x 8 = 32 images per step``, ``total batch 32``); no sentence says the learning rate was
rescaled (:data:`_RESCALED`). The two must differ by :data:`SCALE_FACTOR` or more.
"""

from __future__ import annotations

import re

#: The ratio of total batches from which the recipe's learning rate is off by the same factor under the
#: linear scaling rule: a factor 2 halves or doubles the effective step, outside any tuned optimum.
SCALE_FACTOR = 2.0

_CONFIG_NAME = re.compile(r"(?<![A-Za-z0-9])(\d+)xb(\d+)(?=[-_.]|$|\s)", re.I)
_GPUS_X = re.compile(
    r"\b(\d+)\s*(?:GPUs?|cards?|devices?)\s*[x×*]\s*(\d+)\s*(?:images?|imgs|samples?)?\s*(?:per|/)\s*"
    r"(?:GPU|card|device)\b",
    re.I,
)
_RECIPE_LINE = re.compile(r"^\s*(?:config\w*|recipe|reference|paper|default)\b", re.I)
_RUN_TOTAL = re.compile(
    r"=\s*(?P<a>\d+)\s*(?:images?|imgs|samples?)\s+per\s+(?:step|iteration|batch)\b"
    r"|\btotal\s+batch(?:[ _-]?size)?\s*(?:of|=|:|is)?\s*(?P<b>\d+)\b",
    re.I,
)
_RESCALED = re.compile(
    r"\bauto[_ -]?scale[_ -]?lr\b|\b(?:scaled?|rescaled?|adjust(?:ed)?)\s+(?:the\s+)?(?:learning[ _-]?rate|lr)\b"
    r"|\b(?:learning[ _-]?rate|lr)\s+(?:was\s+|is\s+)?(?:linearly\s+)?(?:scaled|rescaled|adjusted)\b",
    re.I,
)


def _recipe_total(lines: list[str]) -> tuple[int, str] | None:
    for t in lines:
        m = _CONFIG_NAME.search(t)
        if m:
            return int(m.group(1)) * int(m.group(2)), t.strip()
    for t in lines:
        m = _GPUS_X.search(t)
        if m and _RECIPE_LINE.match(t) and not _RUN_TOTAL.search(t):
            return int(m.group(1)) * int(m.group(2)), t.strip()
    return None


def _run_total(lines: list[str]) -> tuple[int, str] | None:
    for t in lines:
        m = _RUN_TOTAL.search(t)
        if m:
            return int(m.group("a") or m.group("b")), t.strip()
    return None


def batch_off_recipe(lines: list[str]) -> tuple[int, int, str, str] | None:
    """``(recipe_total, run_total, recipe_text, run_text)`` when the text states the recipe's total batch
    and the run's, apart by :data:`SCALE_FACTOR` or more, and no line says the learning rate was rescaled
    (module docstring); else ``None``."""
    if any(_RESCALED.search(t) for t in lines):
        return None
    recipe, run = _recipe_total(lines), _run_total(lines)
    if recipe is None or run is None or min(recipe[0], run[0]) <= 0:
        return None
    if max(recipe[0], run[0]) / min(recipe[0], run[0]) < SCALE_FACTOR:
        return None
    return recipe[0], run[0], recipe[1], run[1]
