"""The documentation stays true: the rule pages in docs/rules/ are the ones the rule
objects give, every relative link of the README, DEVELOPERS.md, CHANGELOG.md and docs/
reaches a file (and a heading), the README stays a five-minute read and links every page of
the user guide (docs/) and the developers' part (docs/dev/), and no user-facing text calls
the AWS guide "the seed"."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from click.testing import CliRunner
from markdown_it import MarkdownIt

from codemods import rule_docs
from codemods.cli import main
from codemods.rules import RULES, RULES_BY_CODE
from tests.support.paths import ROOT

DOCS = ROOT / "docs"
DEVELOPER_DOCS = DOCS / "dev"
PAGES = ROOT / rule_docs.RULE_PAGES
MARKDOWN = [ROOT / "README.md", ROOT / "DEVELOPERS.md", ROOT / "CHANGELOG.md", *sorted(DOCS.rglob("*.md"))]


def test_rule_pages_are_current() -> None:
    """The pages are generated in memory from the rule objects and compared with the tree."""
    expected = rule_docs.markdown_files()
    present = {path.name: path.read_text() for path in PAGES.glob("*.md")}
    stale = sorted(name for name in set(expected) | set(present) if expected.get(name) != present.get(name))
    assert not stale, (
        f"{rule_docs.RULE_PAGES}/ is not what the rule objects give ({', '.join(stale[:8])}"
        f"{', ...' if len(stale) > 8 else ''}): run `{rule_docs.REGENERATE}` and commit the pages"
    )


def test_every_rule_has_a_page_in_the_index() -> None:
    index = (PAGES / "README.md").read_text()
    for rule in RULES:
        assert f"[{rule.code}]({rule.code}.md)" in index
    assert len(rule_docs.markdown_files()) == len(RULES) + 1


def headings(text: str) -> list[str]:
    tokens = MarkdownIt().parse(text)
    return [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]


def test_a_fixed_rule_page_shows_the_fix_and_what_to_write() -> None:
    rule = RULES_BY_CODE["XLA201"]
    page = rule_docs.render_markdown_page(rule)
    assert headings(page) == [
        "XLA201 optimizer-step",
        "Why it matters on XLA",
        "Example",
        "Use instead",
        "Is the fix safe?",
    ]
    assert f"{rule.summary}." in page and rule.why in page
    assert "Severity: **error**. Fix: written by `xla-codemod convert`." in page
    instead = page.split("## Use instead\n", 1)[1].split("\n## ", 1)[0]
    # What the fix adds in the example, each run of lines dedented: not the lines it keeps.
    imports = "import torch_xla\nimport torch_xla.core.xla_model as xm\n"
    assert f"```python\n{imports}\nxm.optimizer_step(optimizer)\n" in instead
    assert "loss.backward()" not in instead
    assert "Yes: `xla-codemod convert` writes this fix" in page


def test_a_report_only_rule_page_says_so_and_gives_the_summary_advice() -> None:
    page = rule_docs.render_markdown_page(RULES_BY_CODE["XLA505"])
    assert "Fix: reported only." in page and "is reported and left as it is." in page
    assert "## Use instead\n\nUse xm.set_rng_state(seed).\n" in page
    assert "Reported only: `xla-codemod convert` leaves the code as it is" in page
    assert "Severity warning: left as it is, the script runs, but slowly" in page
    # Advice that the why gives, in sentences (or clauses) that start with it.
    assert "## Use instead\n\nUse torch.where, or decide once per log interval.\n" in (
        rule_docs.render_markdown_page(RULES_BY_CODE["XLA703"])
    )
    runtime = rule_docs.render_markdown_page(RULES_BY_CODE["XLD102"])
    assert "is named by `xla-codemod doctor` while the script runs." in runtime


def test_report_only_launcher_container_and_doctor_rules_say_what_to_use_instead() -> None:
    """Their findings name no line the tool could rewrite, so each says what to write (the
    rule's ``instead``), not the generic pointer to the finding's message."""
    generic = [
        rule.code for rule in RULES if not rule.fixable and rule.code.startswith(("SM", "XLD")) and not rule.instead
    ]
    assert generic == []
    page = rule_docs.render_markdown_page(RULES_BY_CODE["SM303"])
    assert "## Use instead\n\n`RUN pip install sagemaker-training` (the SageMaker training toolkit)" in page
    assert rule_docs.as_dict(RULES_BY_CODE["XLD106"])["instead"] == RULES_BY_CODE["XLD106"].instead  # for tools too


def test_a_rule_whose_fix_removes_code_says_nothing_is_written_instead() -> None:
    page = rule_docs.render_markdown_page(RULES_BY_CODE["XLA721"])
    assert "Nothing (target sagemaker): `xla-codemod convert` removes it." in page
    assert 'writes in the example (target 2.9):\n\n```python\nmodel = torch.compile(model, backend="openxla")' in page


def test_rules_command_prints_the_markdown_pages() -> None:
    result = CliRunner().invoke(main, ["rules", "XLA4", "--format", "markdown"])
    assert result.exit_code == 0
    pages = [rule_docs.render_markdown_page(RULES_BY_CODE[code]) for code in ("XLA401", "XLA402", "XLA403", "XLA404")]
    assert result.output == "\n".join(pages)


def test_families_cover_every_rule_once() -> None:
    assert {rule_docs.family_of(rule.code) for rule in RULES} == set(rule_docs.FAMILIES)
    index = (PAGES / "README.md").read_text()
    assert headings(index)[1:] == [f"{prefix} {title}" for prefix, title in rule_docs.FAMILIES.items()]


def test_readme_is_a_five_minute_read() -> None:
    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) < 250, f"README.md has {len(lines)} lines: move the detail to docs/"
    assert [h for h in headings("\n".join(lines))][1:] == [
        "Try it",
        "Install",
        "Tests",
        "Before and after",
        "Commands",
        "Use it on a repository",
        "Use it as a pre-commit hook",
        "Use it in review",
        "Configuration",
        "Rules",
        "Documentation",
        "License",
    ]


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


def links(path: Path) -> list[str]:
    tokens = MarkdownIt().parse(path.read_text())
    found = []
    for token in tokens:
        for child in token.children or []:
            if child.type == "link_open":
                found.append(str(child.attrGet("href")))
    return found


def test_every_relative_link_reaches_a_file_and_its_heading() -> None:
    broken = []
    for page in MARKDOWN:
        for href in links(page):
            if re.match(r"[a-z]+:", href):
                continue
            target, _, anchor = href.partition("#")
            file = (page.parent / target).resolve() if target else page
            if not file.exists():
                broken.append(f"{page.relative_to(ROOT)}: {href} (no such file)")
            elif anchor and file.suffix == ".md" and anchor not in {slug(h) for h in headings(file.read_text())}:
                broken.append(f"{page.relative_to(ROOT)}: {href} (no such heading)")
    assert not broken, "\n".join(broken)


def test_every_guide_is_linked_from_the_readme() -> None:
    linked = {(ROOT / href.partition("#")[0]).resolve() for href in links(ROOT / "README.md")}
    guides = {path.resolve() for folder in (DOCS, DEVELOPER_DOCS) for path in folder.glob("*.md")}
    assert guides <= linked, sorted(str(p.relative_to(ROOT)) for p in guides - linked)


# "the seed" (the AWS guide the project was specified from) is an internal name: user-facing
# text says "the AWS guide" or "torch_xla 1.13". The RNG sense ("seeding", "the seed;") is fine.
SEED_DOCUMENT = re.compile(r"\bseed's\b|\bseed documents?\b|\bthe seed\b(?!;)|\bseed_\w+\.py\b", re.IGNORECASE)


def message_strings(path: Path) -> str:
    """Every string literal of a module but its docstrings: the messages it can print."""
    tree = ast.parse(path.read_text())
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return "\n".join(
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
    )


def user_facing_texts() -> dict[str, str]:
    texts = {str(path.relative_to(ROOT)): path.read_text() for path in MARKDOWN}
    for module in sorted((ROOT / "codemods").rglob("*.py")):
        texts[str(module.relative_to(ROOT))] = message_strings(module)
    for rule in RULES:
        texts[f"rule {rule.code}"] = f"{rule.name}\n{rule.summary}\n{rule.why}"
    runner = CliRunner()
    for command in ([], ["convert"], ["lint"], ["rules"], ["doctor"]):
        texts[f"xla-codemod {' '.join(command)} --help"] = runner.invoke(main, [*command, "--help"]).output
    return texts


def test_no_seed_in_user_facing_text() -> None:
    found = [
        f"{where}: {match.group(0)!r}"
        for where, text in user_facing_texts().items()
        for match in SEED_DOCUMENT.finditer(text)
    ]
    assert not found, "say 'the AWS guide' or 'torch_xla 1.13' instead:\n" + "\n".join(found)


def test_the_seed_check_finds_what_it_is_for() -> None:
    """The pattern catches the document's name and leaves random seeds alone."""
    assert SEED_DOCUMENT.search("as the seed's recipe says") and SEED_DOCUMENT.search("the seed document")
    assert SEED_DOCUMENT.search("fixtures/launchers/seed_pytorch_estimator.py")
    assert not SEED_DOCUMENT.search("CUDA seeding ignores the seed; xm.set_rng_state(seed) seeds it")
    assert not SEED_DOCUMENT.search("torch.cuda.manual_seed_all(1) and the name seed_all")


def test_a_notebook_example_shows_its_cells_and_metadata() -> None:
    page = rule_docs.render_markdown_page(RULES_BY_CODE["XLN102"])
    assert "Cell 1 (code):\n\n```python\nimport torch\n```" in page
    assert 'Notebook metadata:\n\n```json\n{\n "accelerator": "GPU",' in page and '"cells"' not in page
