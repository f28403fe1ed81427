"""Write the rule pages of docs/rules/ (one page per rule and the index by family) from
the rule objects, removing pages of rules that are gone.  ``--check`` writes nothing and
exits 1 if the pages in the tree are not the generated ones (tests/docs/test_docs.py checks
the same).

    python scripts/rule_pages.py [--check]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from codemods.rule_docs import RULE_PAGES, markdown_files  # noqa: E402


def stale(folder: Path, pages: dict[str, str]) -> list[str]:
    """Names of files in ``folder`` that differ from ``pages``, are missing, or are extra."""
    present = {path.name for path in folder.glob("*.md")} if folder.is_dir() else set()
    return sorted(
        name
        for name in present | set(pages)
        if name not in pages or name not in present or (folder / name).read_text() != pages[name]
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if a page is not current")
    args = parser.parse_args()
    folder = ROOT / RULE_PAGES
    pages = markdown_files()
    outdated = stale(folder, pages)
    if args.check:
        for name in outdated:
            print(f"{RULE_PAGES}/{name}: not current")
        return 1 if outdated else 0
    folder.mkdir(parents=True, exist_ok=True)
    for name in outdated:
        if name in pages:
            (folder / name).write_text(pages[name])
        else:
            (folder / name).unlink()
    print(f"{RULE_PAGES}: {len(pages)} pages, {len(outdated)} written or removed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
