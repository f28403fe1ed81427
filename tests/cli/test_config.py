"""[tool.xla-codemod] settings: validation messages name the file and the key;
overrides apply to the paths their globs match, in order."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods.config import ConfigError, Settings, load


def settings(tmp_path: Path, toml: str) -> Settings:
    (tmp_path / "pyproject.toml").write_text(toml)
    return load(tmp_path)


OVERRIDES = """
[tool.xla-codemod]
target = "2.9"
ignore = ["XLA105"]
fail-on = "warning"

[[tool.xla-codemod.overrides]]
paths = ["legacy/", "scripts/*_tpu.py"]
target = "sagemaker"
select = ["XLA1", "XLA3"]
ignore = ["XLA301"]

[[tool.xla-codemod.overrides]]
paths = ["*_test.py"]
fail-on = "info"
ignore = ["XLA5"]
"""


@pytest.mark.parametrize(
    ("path", "target", "select", "ignore", "fail_on"),
    [
        ("train.py", "2.9", (), ("XLA105",), "warning"),
        ("legacy/a/train.py", "sagemaker", ("XLA1", "XLA3"), ("XLA105", "XLA301"), "warning"),
        ("legacy_other.py", "2.9", (), ("XLA105",), "warning"),
        ("scripts/run_tpu.py", "sagemaker", ("XLA1", "XLA3"), ("XLA105", "XLA301"), "warning"),
        ("deep/down/model_test.py", "2.9", (), ("XLA105", "XLA5"), "info"),
        ("legacy/model_test.py", "sagemaker", ("XLA1", "XLA3"), ("XLA105", "XLA301", "XLA5"), "info"),
    ],
)
def test_overrides_apply_in_order(tmp_path: Path, path: str, target: str, select, ignore, fail_on: str) -> None:  # type: ignore[no-untyped-def]
    file = settings(tmp_path, OVERRIDES).for_path(str(tmp_path / path))
    assert (file.target, file.select, file.ignore, file.fail_on) == (target, select, ignore, fail_on)


def test_paths_outside_the_project_get_the_base_settings(tmp_path: Path) -> None:
    (tmp_path / "project").mkdir()
    base = settings(tmp_path / "project", OVERRIDES)
    assert base.for_path(str(tmp_path / "legacy" / "x.py")) == base


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ('[tool.xla-codemod]\nfail-on = "fatal"\n', "[tool.xla-codemod] fail-on must be one of: error, warning, info"),
        ('[tool.xla-codemod]\ntarget = "1.13"\n', "[tool.xla-codemod] target must be one of: 2.9, sagemaker"),
        ('[tool.xla-codemod]\nselect = ["XLA999"]\n', "[tool.xla-codemod] select: unknown rule code(s): XLA999"),
        ('[[tool.xla-codemod.overrides]]\ntarget = "2.9"\n', "[[tool.xla-codemod.overrides]] #1 needs paths"),
        ('[[tool.xla-codemod.overrides]]\npaths = ["a"]\nexclude = ["b"]\n', "#1: unknown key(s): exclude"),
        ('[[tool.xla-codemod.overrides]]\npaths = "a"\nignore = ["XLA77"]\n', "#1 ignore: unknown rule code(s): XLA77"),
        ("[tool.xla-codemod]\noverrides = 3\n", "overrides must be tables"),
    ],
)
def test_bad_settings_are_named(tmp_path: Path, toml: str, message: str) -> None:
    with pytest.raises(ConfigError) as error:
        settings(tmp_path, toml)
    assert str(error.value).startswith(str(tmp_path / "pyproject.toml"))
    assert message in str(error.value)
