"""Every ``# type: ignore`` in the package and the scripts says why after it (issue 34):
``# type: ignore[code]  # <reason>``, so a reader can check, by reading the line, that a
library's typing (or mypy's narrowing) forces it rather than a type error it hides."""

from __future__ import annotations

import io
import re
import tokenize

from tests.support.paths import ROOT

# A comment token is the rest of the line: the reason is a second ``#`` with text after the ignore.
_IGNORE = re.compile(r"#\s*type:\s*ignore\b(?P<codes>\[[^\]]*\])?(?P<rest>.*)")
_REASON = re.compile(r"\s+#\s*\S")


def ignores_without_reason(source: str) -> list[int]:
    """The lines of ``source`` with a ``# type: ignore`` comment and no reason comment after it
    (comments only: the words in a string are not an ignore)."""
    found = []
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type != tokenize.COMMENT:
            continue
        match = _IGNORE.search(token.string)
        if match is not None and not _REASON.match(match["rest"]):
            found.append(token.start[0])
    return found


def test_the_checker_finds_a_bare_ignore_and_passes_a_reasoned_one() -> None:
    source = (
        "x = f()  # type: ignore[arg-type]\n"
        "y = g()  # type: ignore\n"
        "z = h()  # type: ignore[attr-defined]  # narrowed by type() above\n"
        'pattern = "# type: ignore[arg-type]"\n'
    )
    assert ignores_without_reason(source) == [1, 2]


def test_every_ignore_says_why() -> None:
    paths = sorted([*(ROOT / "codemods").rglob("*.py"), *(ROOT / "scripts").rglob("*.py")])
    assert len(paths) > 100  # the scan sees the package and the scripts
    bare = {
        f"{path.relative_to(ROOT).as_posix()}:{line}"
        for path in paths
        for line in ignores_without_reason(path.read_text(encoding="utf-8"))
    }
    assert sorted(bare) == []
