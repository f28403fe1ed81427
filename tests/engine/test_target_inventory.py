"""What the tool writes for a target, and what its messages name, exists in that release.

The inventories (tests/data/api_inventory/, scripts/api_inventory.py) list each release's
names and signatures.  What the tool writes is derived, not listed: every fixture and
every rule case converted for the target, and the torch/torch_xla uses that the output
has and the input had not (names, arguments, the strings that name devices, backends,
rendezvous schemes, compile backends).  What it names: the messages of those
conversions, and the rule pages.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

from codemods import convert_source
from codemods.engine.report import Finding
from codemods.targets import TARGETS
from tests.support import api_inventory
from tests.support.api_inventory import (
    Use,
    inventory,
    named_uses,
    pjrt_devices_named,
    rendezvous_schemes_named,
    written_uses,
)
from tests.support.executed import run_command, run_environment
from tests.support.fixtures import convert_fixture, fixture_project, fixture_scripts, output_bytes
from tests.support.paths import FIXTURES, ROOT, SCRIPTS
from tests.support.rule_cases import CASES


@dataclass(frozen=True)
class Converted:
    where: str
    before: str | bytes
    after: str | bytes
    findings: tuple[Finding, ...]
    error: str = ""  # the conversion stopped with an internal error (after: the input)


def _converted_distributed(script: Path, target: str) -> Converted:
    """The fixture converted as ``convert --distributed`` converts it."""
    before = (FIXTURES / script).read_bytes()
    where = f"{script} --distributed"
    try:
        conversion = convert_source(
            before,
            target=target,
            distributed=True,
            imports=fixture_project(script, target).imports_of(FIXTURES / script),
        )
    except Exception as error:  # an internal error is a problem to report, with the others
        return Converted(where, before, before, (), f"{type(error).__name__}: {error}")
    return Converted(where, before, output_bytes(conversion), tuple(conversion.findings))


@cache
def conversions(target: str) -> tuple[Converted, ...]:
    """Every fixture (as it is, and with --distributed) and every Python rule case (of
    either target) converted for ``target``."""
    found = []
    for script in fixture_scripts():
        before = (FIXTURES / script).read_bytes()
        conversion = convert_fixture(script, target)
        found.append(Converted(str(script), before, output_bytes(conversion), tuple(conversion.findings)))
        found.append(_converted_distributed(script, target))
    for case in CASES:  # every target's cases: their messages for this target too
        if case.filename.endswith(".py") and not case.run_level:
            conversion = convert_source(case.before, target=target)
            found.append(Converted(case.id, case.before, conversion.output, tuple(conversion.findings)))
    return tuple(found)


def _reported(problem: str, findings: tuple[Finding, ...]) -> bool:
    """A keyword the release lacks, kept from the script (the callee renamed) and reported as
    an error that names it: the converted script stops there, as the finding says."""
    keyword = problem.partition("has no parameter '")[2].partition("'")[0]
    return bool(keyword) and any(f.severity == "error" and f"`{keyword}=" in f.message for f in findings)


def written_problems(target: str, inv: api_inventory.Inventory | None = None) -> list[str]:
    """What the release cannot run among the uses the tool wrote (silently) for ``target``."""
    inv = inv or inventory(target)
    found = {
        f"internal error: {converted.error}  (converting {converted.where})"
        for converted in conversions(target)
        if converted.error
    }
    for converted, uses in written(target):
        for use in uses:
            found |= {
                f"{problem}  (written in {converted.where})"
                for problem in inv.problems(use)
                if not _reported(problem, converted.findings)
            }
    return sorted(found)


@cache
def written(target: str) -> tuple[tuple[Converted, frozenset[Use]], ...]:
    """Each conversion for ``target`` with the uses it wrote."""
    return tuple(
        (converted, frozenset(written_uses(converted.before, converted.after))) for converted in conversions(target)
    )


def message_problems(target: str) -> list[str]:
    inv = inventory(target)
    found = set()
    for converted in conversions(target):
        for finding in converted.findings:
            where = f"{converted.where}:{finding.line} {finding.rule}"
            found |= {
                f"{problem}  (message at {where}: {finding.message!r})"
                for use in named_uses(finding.message, converted.before)
                for problem in inv.problems(use)
            }
            found |= {
                f"PJRT_DEVICE={device}: no such PJRT device  (message at {where}: {finding.message!r})"
                for device in pjrt_devices_named(finding.message)
                if device not in inv.listed("pjrt_devices")
            }
            found |= {
                f"{scheme}://: no rendezvous handler for {scheme + '://'!r}  (message at {where}: {finding.message!r})"
                for scheme in rendezvous_schemes_named(finding.message)
                if scheme not in inv.listed("rendezvous_schemes") and f"{scheme}://" not in _text(converted.before)
            }
    return sorted(found)


def _text(code: str | bytes) -> str:
    return code.decode("utf-8", "replace") if isinstance(code, bytes) else code


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_everything_written_exists_in_the_target_release(target: str) -> None:
    assert sum(len(uses) for _, uses in written(target)) > 100
    assert written_problems(target) == []


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_every_target_table_name_exists_in_its_release(target: str) -> None:
    inv = inventory(target)
    assert [concept for concept, api in TARGETS[target].apis.items() if inv.entry(api.qualified_name) is None] == []
    assert TARGETS[target].device_string in {"xla"}
    if TARGETS[target].compile_backend is not None:
        assert TARGETS[target].compile_backend in inv.listed("compile_backends")
    else:
        assert inv.entry("torch.compile") is None


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_every_api_a_message_names_exists_in_the_target_release(target: str) -> None:
    assert sum(len(c.findings) for c in conversions(target)) > 100
    assert message_problems(target) == []


def test_every_torch_xla_api_a_rule_page_names_exists_in_a_release() -> None:
    """A rule page is read for either target: the torch_xla names it gives exist in one of
    them (its torch names are mostly the CUDA code it is about; the arguments its examples
    write are checked above, as rule cases)."""
    releases = [inventory(target) for target in TARGETS]
    found = []
    for page in sorted((ROOT / "docs" / "rules").glob("*.md")):
        text = page.read_text()
        found += [
            f"{page.name}: {use.name}"
            for use in named_uses(text)
            if use.name.startswith("torch_xla") and all(inv.entry(use.name) is None for inv in releases)
        ]
        found += [
            f"{page.name}: PJRT_DEVICE={device}"
            for device in pjrt_devices_named(text)
            if not any(device in inv.listed("pjrt_devices") for inv in releases)
        ]
    assert found == []


# Negative controls: a planted missing name, signature or table entry fails the checks.


def _without(target: str, module: str, name: str) -> api_inventory.Inventory:
    inv = inventory(target)
    modules = {m: dict(names) for m, names in inv.modules.items()}
    del modules[module][name]
    return dataclasses.replace(inv, data={**inv.data, "modules": modules})


def test_a_name_missing_from_the_release_fails_the_check() -> None:
    planted = _without("sagemaker", "torch_xla.core.xla_model", "mark_step")
    problems = written_problems("sagemaker", planted)
    assert any("torch_xla.core.xla_model.mark_step" in p and "has no" in p for p in problems)
    assert not any("mark_step" in p for p in written_problems("sagemaker"))


def test_a_keyword_the_signature_lacks_fails_the_check() -> None:
    inv = inventory("2.9")
    modules = {m: dict(names) for m, names in inv.modules.items()}
    modules["torch_xla.core.xla_model"]["add_step_closure"] = "def (closure, run_async=)"
    planted = dataclasses.replace(inv, data={**inv.data, "modules": modules})
    assert any("add_step_closure" in p and "has no parameter 'args'" in p for p in written_problems("2.9", planted))


def test_a_renamed_target_table_entry_fails_the_check(monkeypatch: pytest.MonkeyPatch) -> None:
    sync = TARGETS["2.9"].apis["sync"]
    monkeypatch.setitem(TARGETS["2.9"].apis, "sync", dataclasses.replace(sync, attr="synchronize"))
    assert inventory("2.9").entry(TARGETS["2.9"].api("sync").qualified_name) is None
    output = convert_source(
        "import torch\nfor x in range(3):\n    loss = model(x)\n    loss.backward()\n", target="2.9"
    ).output
    uses = written_uses("", output)
    assert any("torch_xla.synchronize" in p for use in uses for p in inventory("2.9").problems(use))


def test_messages_are_read_for_the_apis_they_name() -> None:
    """The message check reads names, calls and their strings as the output check does."""
    named = named_uses("call torch_xla.sync() or xm.mark_step(), torch.autocast('xla', dtype=torch.bfloat16)")
    assert {use.name for use in named} >= {"torch_xla.sync", "torch_xla.core.xla_model.mark_step", "torch.autocast"}
    problems = [p for use in named for p in inventory("sagemaker").problems(use)]
    assert any("torch_xla.sync" in p for p in problems)
    assert any("autocast has no device type 'xla'" in p for p in problems)
    assert not any("mark_step" in p for p in problems)
    assert pjrt_devices_named("set PJRT_DEVICE=CUDA first") == {"CUDA"}
    assert "CUDA" not in inventory("2.9").listed("pjrt_devices")


@pytest.mark.executed
def test_the_2_9_inventory_is_what_the_installed_release_gives(tmp_path: Path) -> None:
    """The 2.9 inventory is the generator's output on the installed torch_xla, not edited."""
    run_command(
        [sys.executable, str(SCRIPTS / "api_inventory.py"), "2.9", "--out", str(tmp_path)],
        ROOT,
        run_environment(PJRT_DEVICE="CPU"),
    )
    written_now = json.loads((tmp_path / "torch_xla_2_9.json").read_text())
    assert written_now == inventory("2.9").data


def test_strings_a_release_has_not_registered_fail_the_check() -> None:
    code = """
import torch
import torch.distributed as dist
import torch_xla.core.xla_model as xm

xm.all_reduce("avg", [t], scale=0.5)
dist.init_process_group("xla", init_method="pjrt://")
torch.compile(model, backend="xla")
with torch.autocast("xla"):
    pass
"""
    problems = {
        target: [p for use in written_uses("", code) for p in inventory(target).problems(use)] for target in TARGETS
    }
    for target in TARGETS:
        assert any("no reduce type 'avg'" in p for p in problems[target]), target
        assert any("no rendezvous handler for 'pjrt://'" in p for p in problems[target]), target
    assert any("no torch.compile backend 'xla'" in p for p in problems["2.9"])
    assert any("sagemaker has no torch.compile" in p for p in problems["sagemaker"])
    assert any("no device type 'xla'" in p for p in problems["sagemaker"])
    assert not any("device type" in p for p in problems["2.9"])
