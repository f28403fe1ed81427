"""Settings from ``[tool.xla-codemod]`` in the nearest pyproject.toml (command-line
options win): target, select, ignore, exclude, max-size."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised only on Python 3.10
    import tomli as tomllib

KEYS = {"target", "select", "ignore", "exclude", "max-size"}


class ConfigError(Exception):
    pass


@dataclass(frozen=True)
class Settings:
    target: str | None = None
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    max_size: float | None = None
    source: str | None = None


def find_pyproject(start: Path) -> Path | None:
    for folder in [start, *start.parents]:
        candidate = folder / "pyproject.toml"
        try:
            if candidate.is_file():
                return candidate
        except OSError:  # a folder we may not look into: keep going up
            continue
    return None


def load(start: Path) -> Settings:
    path = find_pyproject(start.resolve())
    if path is None:
        return Settings()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise ConfigError(f"{path}: {error}") from None
    table = data.get("tool", {}).get("xla-codemod", {})
    unknown = set(table) - KEYS
    if unknown:
        raise ConfigError(f"{path}: unknown [tool.xla-codemod] key(s): {', '.join(sorted(unknown))}")

    def strings(key: str) -> tuple[str, ...]:
        value = table.get(key, [])
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"{path}: [tool.xla-codemod] {key} must be a list of strings")
        return tuple(value)

    target = table.get("target")
    if target is not None and not isinstance(target, str):
        raise ConfigError(f"{path}: [tool.xla-codemod] target must be a string")
    max_size = table.get("max-size")
    if max_size is not None and (isinstance(max_size, bool) or not isinstance(max_size, (int, float)) or max_size <= 0):
        raise ConfigError(f"{path}: [tool.xla-codemod] max-size must be a positive number (MiB)")
    return Settings(target, strings("select"), strings("ignore"), strings("exclude"), max_size, str(path))
