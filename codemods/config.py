"""Settings from ``[tool.xla-codemod]`` in the nearest pyproject.toml (command-line
options win): target, select, ignore, exclude, max-size, fail-on, show-info, and
``[[tool.xla-codemod.overrides]]`` tables that change target, select, ignore and
fail-on for the paths their globs match."""

from __future__ import annotations

import fnmatch
import os
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from codemods.engine.rule import RuleSelection
from codemods.rules import SEVERITIES, Severity
from codemods.targets import TARGETS

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised only on Python 3.10
    import tomli as tomllib

KEYS = {"target", "select", "ignore", "exclude", "max-size", "fail-on", "show-info", "overrides"}
OVERRIDE_KEYS = {"paths", "target", "select", "ignore", "fail-on"}


class ConfigError(Exception):
    pass


@dataclass(frozen=True)
class Override:
    """Settings for the files that ``paths`` match (globs relative to pyproject.toml's
    folder).  ``select`` replaces the base selection; ``ignore`` adds to it."""

    paths: tuple[str, ...]
    target: str | None = None
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    fail_on: Severity | None = None

    def matches(self, relative: str) -> bool:
        return any(_glob_matches(relative, pattern) for pattern in self.paths)


def _glob_matches(relative: str, pattern: str) -> bool:
    """fnmatch, where ``*`` also crosses folders; a folder's pattern covers what is
    under it, and a pattern without ``/`` matches a file name at any depth."""
    pattern = pattern.removeprefix("./").rstrip("/")
    return (
        fnmatch.fnmatchcase(relative, pattern)
        or fnmatch.fnmatchcase(relative, pattern + "/*")
        or ("/" not in pattern and fnmatch.fnmatchcase(relative.rsplit("/", 1)[-1], pattern))
    )


@dataclass(frozen=True)
class Settings:
    target: str | None = None
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    max_size: float | None = None
    fail_on: Severity | None = None
    overrides: tuple[Override, ...] = ()
    source: str | None = None
    show_info: bool = False

    def for_path(self, path: str) -> Settings:
        """The settings of one file: every override that matches it applies, in order
        (later ones win; their ``ignore`` lists add up)."""
        if not self.overrides or self.source is None:
            return self
        relative = os.path.relpath(os.path.abspath(path), os.path.dirname(self.source)).replace(os.sep, "/")
        if relative.startswith("../"):
            return self
        settings = self
        for override in self.overrides:
            if override.matches(relative):
                settings = replace(
                    settings,
                    target=override.target or settings.target,
                    select=override.select or settings.select,
                    ignore=settings.ignore + override.ignore,
                    fail_on=override.fail_on or settings.fail_on,
                )
        return settings


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
    where = f"{path}: [tool.xla-codemod]"
    _known_keys(table, KEYS, where)
    read = _Reader(table, where)
    max_size = table.get("max-size")
    if max_size is not None and (isinstance(max_size, bool) or not isinstance(max_size, (int, float)) or max_size <= 0):
        raise ConfigError(f"{where} max-size must be a positive number (MiB)")
    show_info = table.get("show-info", False)
    if not isinstance(show_info, bool):
        raise ConfigError(f"{where} show-info must be true or false")
    overrides = table.get("overrides", [])
    if not isinstance(overrides, list) or not all(isinstance(o, dict) for o in overrides):
        raise ConfigError(f"{where} overrides must be tables: [[tool.xla-codemod.overrides]]")
    return Settings(
        target=read.target(),
        select=read.codes("select"),
        ignore=read.codes("ignore"),
        exclude=read.strings("exclude"),
        max_size=max_size,
        fail_on=read.severity(),
        overrides=tuple(
            _override(o, f"{path}: [[tool.xla-codemod.overrides]] #{i}") for i, o in enumerate(overrides, 1)
        ),
        source=str(path),
        show_info=show_info,
    )


def _override(table: dict[str, Any], where: str) -> Override:
    _known_keys(table, OVERRIDE_KEYS, where)
    read = _Reader(table, where)
    paths = read.strings("paths")
    if not paths:
        raise ConfigError(f"{where} needs paths (a list of globs)")
    return Override(paths, read.target(), read.codes("select"), read.codes("ignore"), read.severity())


def _known_keys(table: dict[str, Any], keys: set[str], where: str) -> None:
    unknown = set(table) - keys
    if unknown:
        raise ConfigError(f"{where}: unknown key(s): {', '.join(sorted(unknown))}")


class _Reader:
    """Typed values of one table, with messages that say where they are."""

    def __init__(self, table: dict[str, Any], where: str) -> None:
        self.table = table
        self.where = where

    def strings(self, key: str) -> tuple[str, ...]:
        value = self.table.get(key, [])
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"{self.where} {key} must be a list of strings")
        return tuple(value)

    def codes(self, key: str) -> tuple[str, ...]:
        codes = tuple(c.strip().upper() for c in self.strings(key) if c.strip())
        unknown = RuleSelection(select=codes).unknown_patterns()
        if unknown:
            raise ConfigError(f"{self.where} {key}: unknown rule code(s): {', '.join(unknown)}")
        return codes

    def _choice(self, key: str, allowed: tuple[str, ...]) -> str | None:
        value = self.table.get(key)
        if value is not None and (not isinstance(value, str) or value not in allowed):
            raise ConfigError(f"{self.where} {key} must be one of: {', '.join(allowed)}")
        return value

    def target(self) -> str | None:
        return self._choice("target", tuple(sorted(TARGETS)))

    def severity(self) -> Severity | None:
        return self._choice("fail-on", SEVERITIES)  # type: ignore[return-value]  # _choice returns one of ``allowed`` (SEVERITIES): a str to mypy, not the Literal
