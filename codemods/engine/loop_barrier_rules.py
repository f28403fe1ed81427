"""Which rules end a training loop's iterations with the step barrier, as their modules
declare it: a rule of another concern that relies on the barrier (a step closure runs
at it) asks here whether the loop gets one, without importing the rules that put it there.

This module imports no LibCST: rule modules declare themselves here when they are loaded."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.rewriter import Context
    from codemods.engine.rule import Rule

# (rule, whether its barrier comes only with the loader it wraps in MpDeviceLoader)
_GIVERS: list[tuple[Rule, bool]] = []


def gives_loop_barriers(rule: Rule, *, by_wrapping_loader: bool = False) -> None:
    """Declare that ``rule``'s fix ends each iteration of a training loop with the barrier."""
    _GIVERS.append((rule, by_wrapping_loader))


def barrier_off(ctx: Context[Any], loop: cst.CSTNode, *, loader_wrapped: bool) -> str | None:
    """Why ``loop`` (a training loop the port gives its barrier) gets none in this run: every
    rule that would give it one is off there; None when one is on."""
    rules = [rule for rule, by_loader in _GIVERS if loader_wrapped or not by_loader]
    if any(ctx.enabled(rule, loop) for rule in rules):
        return None
    codes = " and ".join(rule.code for rule in rules)
    return f"the loop gets no step barrier ({codes} {'is' if len(rules) == 1 else 'are'} off)"
