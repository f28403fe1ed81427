"""A verification as a verdict table (text), JSON or Markdown; the checks keep their names
(``model-on-xla``, ...) in every format."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: the CLI imports the renderers' names at every start
    from codemods.verify.checks import Check
    from codemods.verify.verify import Verification

_LOSSES_SHOWN = 10


def render_text(verification: Verification) -> str:
    if verification.error is not None:
        return f"cannot verify: {verification.error}\n"
    width = max(len(c.check) for c in verification.checks)
    lines = [f"{c.status.upper():<4}  {c.check:<{width}}  {_where(c)}{c.message}" for c in verification.checks]
    lines.extend(_loss_lines(verification.losses))
    lines.extend(f"note: {note}" for note in verification.notes)
    lines.append(f"verdict: {verification.verdict} ({_counts(verification.checks)})")
    return "\n".join(lines) + "\n"


def render_json(verification: Verification) -> str:
    data: dict[str, object] = {
        "verdict": verification.verdict,
        "checks": [c.as_dict() for c in verification.checks],
        "losses": verification.losses,
    }
    if verification.error is not None:
        data["error"] = verification.error
    if verification.notes:
        data["notes"] = verification.notes
    return json.dumps(data, indent=2) + "\n"


def render_markdown(verification: Verification) -> str:
    if verification.error is not None:
        return f"**xla-codemod verify: cannot verify**: {_cell(verification.error)}\n"
    lines = [
        f"**xla-codemod verify: {verification.verdict}** ({_counts(verification.checks)})",
        "",
        "| check | status | where | message |",
        "|---|---|---|---|",
    ]
    for check in verification.checks:
        where = f"`{check.path}:{check.line}`" if check.path else ""
        lines.append(f"| `{check.check}` | {check.status} | {where} | {_cell(check.message)} |")
    losses = _loss_lines(verification.losses)
    if losses:
        lines.extend(["", "```", *losses, "```"])
    return "\n".join(lines) + "\n"


RENDERERS = {"text": render_text, "json": render_json, "markdown": render_markdown}


def _where(check: Check) -> str:
    return f"{check.path}:{check.line}: " if check.path else ""


def _counts(checks: list[Check]) -> str:
    return ", ".join(
        f"{sum(1 for c in checks if c.status == s)} {word}"
        for s, word in (("pass", "passed"), ("fail", "failed"), ("skip", "skipped"))
    )


def _loss_lines(losses: dict[str, object]) -> list[str]:
    port, reference = losses.get("port") or [], losses.get("reference") or []
    if not isinstance(port, list) or not isinstance(reference, list) or not (port and reference):
        return []
    lines = ["step  original        port"]
    for index, (theirs, mine) in enumerate(zip(reference, port), start=1):
        if index > _LOSSES_SHOWN:
            break
        mark = "  <- the losses part" if losses.get("first_mismatch") == index else ""
        lines.append(f"{index:>4}  {_values(theirs):<14}  {_values(mine)}{mark}")
    return lines


def _values(values: object) -> str:
    return ", ".join(f"{v:.6g}" for v in values) if isinstance(values, list) else str(values)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
