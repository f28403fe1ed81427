"""The container images a launcher script's estimators run (``image_uri``), for the
check across the files of a run (containers/across_files.py, SM308)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import libcst as cst

from codemods.launcher.facts import Constant, Estimator, Value


@dataclass(frozen=True)
class ImageUse:
    """An estimator that runs a container image: from a launcher script."""

    path: str
    line: int
    image_uri: str
    entry_point: str | None


def image_uses(
    estimators: Iterable[Estimator], path: str, position_of: Callable[[cst.CSTNode], tuple[int, int] | None]
) -> tuple[ImageUse, ...]:
    """The estimators of a launcher that name their image with a literal ``image_uri``."""
    uses = []
    for estimator in estimators:
        image = _literal(estimator.value("image_uri"))
        if image is None:
            continue
        position = position_of(estimator.call)
        uses.append(ImageUse(path, position[0] if position else 1, image, _literal(estimator.value("entry_point"))))
    return tuple(uses)


def _literal(value: Value | None) -> str | None:
    return value.value if isinstance(value, Constant) and isinstance(value.value, str) else None
