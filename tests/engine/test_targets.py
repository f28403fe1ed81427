"""The target name tables are the single source of torch_xla spellings: check them.

* 2.9: every name the table (and so the tool) writes exists in the installed
  torch_xla 2.9, and the seed names that 2.9 removed are really gone.
* sagemaker: every name is the seed's spelling, and every torch_xla name in the converted
  fixtures exists in torch_xla 1.13 (its API inventory, tests/data/api_inventory/, read
  from the v1.13.0 sources by scripts/api_inventory.py).
tests/engine/test_target_inventory.py checks the tables, what the rewrites write and what
the messages name against each release's inventory.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import TypedDict

import libcst as cst
import pytest

from codemods.analyse import analyse
from codemods.engine.nodes import walk
from codemods.targets import TARGETS
from tests.support.api_inventory import inventory
from tests.support.fixtures import convert_fixture, fixture_scripts, output_bytes
from tests.support.paths import DATA

SEED_CODE = (DATA / "seed_000_code.txt").read_text()
# The concepts the seed spells out in its code; the others (wait_device_ops) are
# checked against the 1.13 inventory only.
SEED_CONCEPTS = (
    "device",
    "sync",
    "world_size",
    "global_ordinal",
    "local_ordinal",
    "optimizer_step",
    "save",
    "mp_device_loader",
)
REMOVED_IN_2_9 = ("torch_xla.core.xla_model.xrt_world_size", "torch_xla.core.xla_model.get_ordinal")


def torch_xla_names_in(code: bytes) -> set[str]:
    """Qualified torch_xla names that a converted script references."""
    module = cst.parse_module(code)
    imports = analyse(module).imports.table
    names = set()
    for node in walk(module):
        if isinstance(node, (cst.Name, cst.Attribute)):
            qualified = imports.resolve(node)
            if qualified and qualified.startswith("torch_xla"):
                names.add(qualified)
    return names


def converted_fixtures(target: str) -> dict[str, bytes]:
    """Every fixture training script converted for ``target`` (what the snapshots show)."""
    return {str(script): output_bytes(convert_fixture(script, target)) for script in fixture_scripts()}


def test_sagemaker_names_are_the_seed_spelling() -> None:
    apis = TARGETS["sagemaker"].apis
    for concept in SEED_CONCEPTS:
        api = apis[concept]
        assert f"import {api.module} as {api.alias}" in SEED_CODE
        assert f"{api.alias}.{api.attr}(" in SEED_CODE, concept


def test_sagemaker_output_uses_only_torch_xla_1_13_names() -> None:
    """Not only what the tool writes: every torch_xla name the converted fixtures use."""
    outputs = converted_fixtures("sagemaker")
    assert outputs
    release = inventory("sagemaker")
    for name, code in outputs.items():
        # Prefixes such as "torch_xla.core" resolve too; every name must be a 1.13 name.
        assert {n for n in torch_xla_names_in(code) if release.entry(n) is None} == set(), name


class _InstalledNames(TypedDict):
    version: str
    missing: list[str]


def _missing_in_installed_torch_xla(names: set[str]) -> _InstalledNames:
    """Runs in a subprocess: which names the installed torch_xla lacks."""
    program = """
import importlib, json, sys
names = json.loads(sys.argv[1])
missing = []
for name in names:
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for attr in parts[cut:]:
                obj = getattr(obj, attr)
        except AttributeError:
            missing.append(name)
        break
    else:
        missing.append(name)
import torch_xla
print(json.dumps({"version": torch_xla.__version__, "missing": sorted(missing)}))
"""
    result = subprocess.run(
        [sys.executable, "-c", program, json.dumps(sorted(names))],
        capture_output=True,
        text=True,
        env={**os.environ, "PJRT_DEVICE": "CPU"},
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    installed: _InstalledNames = json.loads(result.stdout.strip().splitlines()[-1])
    return installed


@pytest.mark.executed
def test_2_9_names_exist_in_torch_xla_2_9() -> None:
    written = {api.qualified_name for api in TARGETS["2.9"].apis.values()}
    for code in converted_fixtures("2.9").values():
        written |= torch_xla_names_in(code)
    found = _missing_in_installed_torch_xla(written | set(REMOVED_IN_2_9))
    assert found["version"].startswith("2.9")
    assert sorted(set(found["missing"]) - set(REMOVED_IN_2_9)) == []
    # The reason the output is version-aware: the seed's names are gone in 2.9.
    assert sorted(set(found["missing"]) & set(REMOVED_IN_2_9)) == sorted(REMOVED_IN_2_9)
