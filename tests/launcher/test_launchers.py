"""Launcher scripts (seed 004): snapshots of the fixtures under fixtures/launchers/, the
seed's "done when" on the command line, the examples of the SageMaker rules (SM1, SM2, and
the Dockerfiles' SM3, whose other tests are in tests/containers/), the launcher analysis,
and bad input.

Update snapshots with ``pytest --snapshot-update`` and read every changed one.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import libcst as cst
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from codemods import RULES, ConversionError, convert_source
from codemods.cli import main
from codemods.engine.imports import ImportTable
from codemods.engine.nodes import walk
from codemods.engine.report import FileReport, Report, render_text
from codemods.launcher.analysis import analyse_launcher
from codemods.launcher.facts import Constant, Mapping, Unknown
from codemods.launcher.instances import INSTANCE_TYPES, lookup
from tests.support.fixtures import output_bytes, output_text, review_diff
from tests.support.paths import FIXTURES, SNAPSHOTS

LAUNCHERS = sorted(p.relative_to(FIXTURES) for p in (FIXTURES / "launchers").glob("*.py"))
SEED_PYTORCH_BROKEN = FIXTURES / "launchers" / "seed_pytorch_estimator_broken.py"


def _report(path: Path, conversion) -> str:  # type: ignore[no-untyped-def]
    return render_text(Report([FileReport(str(path), conversion.changed, None, conversion.findings)]))


@pytest.mark.parametrize("launcher", LAUNCHERS, ids=str)
def test_launcher_snapshot(launcher: Path, snapshot) -> None:  # type: ignore[no-untyped-def]
    conversion = convert_source((FIXTURES / launcher).read_bytes(), filename=launcher.name)
    snapshot.snapshot_dir = SNAPSHOTS
    stem = str(launcher.with_suffix(""))
    snapshot.assert_match(
        review_diff(launcher, (FIXTURES / launcher).read_bytes(), output_bytes(conversion)), f"{stem}.diff"
    )
    snapshot.assert_match(_report(launcher, conversion), f"{stem}.report.txt")


@pytest.mark.parametrize("launcher", LAUNCHERS, ids=str)
def test_launcher_conversion_is_idempotent_and_points_at_new_code(launcher: Path) -> None:
    once = convert_source((FIXTURES / launcher).read_bytes(), filename=launcher.name)
    twice = convert_source(output_bytes(once), filename=launcher.name)
    assert twice.output == once.output
    assert [f for f in twice.findings if f.fixed] == []
    assert {(f.rule, f.message) for f in twice.findings} <= {(f.rule, f.message) for f in once.findings}
    lines = output_bytes(once).decode("utf-8").splitlines()
    for finding in once.findings:
        if finding.fixed and " -> " in finding.message:
            new = finding.message.split(" -> ", 1)[1].split(": ")[0]
            assert lines[finding.line - 1][finding.col - 1 :].startswith(new), finding


# -- the "done when" -------------------------------------------------------------------


def test_lint_reports_each_problem_of_the_seed_pytorch_estimator_with_its_line() -> None:
    result = CliRunner().invoke(main, ["lint", str(SEED_PYTORCH_BROKEN)])
    assert result.exit_code == 1
    path = str(SEED_PYTORCH_BROKEN)
    for expected in (
        f'{path}:10:9: error: SM102 [*] would replace "partitions" with "pipeline_parallel_degree"',
        f"{path}:21:28: error: SM104 [*] would replace processes_per_host 16 with 8: ml.p3.16xlarge has 8 GPUs",
        f'{path}:22:28: error: SM105 [*] would replace custom_mpi_options with "-x NCCL_DEBUG=WARN -x SMP_NCCL_THROTTLE_LIMIT=1"',
        f'{path}:34:57: error: SM103 "modelparallel" and "dataparallel" cannot be used in one job',
    ):
        assert expected in result.output, result.output


def test_convert_makes_the_seed_pytorch_job_valid_for_smp_1_6(tmp_path: Path) -> None:
    launcher = tmp_path / "launch.py"
    launcher.write_bytes(SEED_PYTORCH_BROKEN.read_bytes())
    result = CliRunner().invoke(main, ["convert", str(launcher)])
    assert result.exit_code == 1, result.output
    converted = launcher.read_text()
    assert '"pipeline_parallel_degree": 2,' in converted and '"partitions": 2' not in converted
    assert '"processes_per_host" : 8,' in converted
    # Every other MPI option is kept, in order; only the repeated default is gone.
    assert '"custom_mpi_options" : "-x NCCL_DEBUG=WARN -x SMP_NCCL_THROTTLE_LIMIT=1",' in converted
    relint = CliRunner().invoke(main, ["lint", str(launcher)])
    assert [line.split(" ", 3)[2] for line in relint.output.splitlines() if line.startswith(str(launcher))] == ["SM103"]


# -- bad input -----------------------------------------------------------------------------------

SEED_GENERIC_ESTIMATOR = """\
smd_mp_estimator = Estimator(
    entry_point="your_training_script.py",
    role=sagemaker.get_execution_role(),
    instance_type='ml.p3.16xlarge',
    sagemaker_session=sagemaker_session,
    image_uri='your_aws_account_id.dkr.ecr.region.amazonaws.com/name:tag'
    instance_count=1,
    distribution={
        "smdistributed": smp_options,
        "mpi": mpi_options
    },
    base_job_name="SMD-MP-demo",
)
"""


def test_the_seeds_generic_estimator_gets_the_one_line_syntax_error(tmp_path: Path) -> None:
    launcher = tmp_path / "launch.py"
    launcher.write_text("import sagemaker\nfrom sagemaker.estimator import Estimator\n\n" + SEED_GENERIC_ESTIMATOR)
    result = CliRunner().invoke(main, ["lint", str(launcher)])
    assert result.exit_code == 2
    errors = [line for line in result.output.splitlines() if ": error: " in line]
    assert errors == [f"{launcher}:9:15: error: cannot parse: invalid syntax. Perhaps you forgot a comma?"]


def test_a_model_parallel_training_script_is_not_ported_to_xla() -> None:
    """It runs on CUDA GPUs under smdistributed: only the SM checks apply (porting it
    would remove the very set_device call SM107 asks for)."""
    source = (FIXTURES / "launchers" / "smp_train.py").read_text()
    conversion = convert_source(source)
    assert conversion.output == source and conversion.findings == []


# -- rules, examples, the instance table -------------------------------------------------------------

SM_RULES = [r for r in RULES if r.code.startswith("SM")]


@pytest.mark.parametrize("rule", SM_RULES, ids=lambda r: r.code)
def test_rule_has_why_and_examples_that_hold(rule) -> None:  # type: ignore[no-untyped-def]
    assert rule.why and rule.example_cases()
    for example in rule.example_cases():
        conversion = convert_source(example.before, target=example.target, filename=example.filename)
        assert conversion.output == (example.after if example.after is not None else example.before)
        if rule.code != "SM308":  # compares two files of a run: its Run cases (tests/containers/)
            assert rule.code in {f.rule for f in conversion.findings}, conversion.findings


def test_instance_table() -> None:
    assert lookup("ml.p3.16xlarge").gpus == 8 and not lookup("ml.p3.16xlarge").efa  # type: ignore[union-attr]
    assert lookup("ml.p4d.24xlarge").efa and lookup("ml.p3dn.24xlarge").efa  # type: ignore[union-attr]
    assert lookup("ml.m5.xlarge").gpus == 0  # type: ignore[union-attr]
    assert lookup("local_gpu") is None and lookup("ml.p9.huge") is None
    assert all(name.startswith("ml.") and entry.gpus >= 0 for name, entry in INSTANCE_TYPES.items())
    assert all(entry.gpus > 0 for entry in INSTANCE_TYPES.values() if entry.efa)


# -- the launcher analysis --------------------------------------------------------------------------


def _analyse(source: str):  # type: ignore[no-untyped-def]
    module = cst.parse_module(textwrap.dedent(source))
    table = ImportTable()
    for node in walk(module):
        if isinstance(node, (cst.Import, cst.ImportFrom)):
            table.add(node)
    return analyse_launcher(module, table)


@pytest.mark.parametrize(
    "imports,call,kind",
    [
        ("from sagemaker.pytorch import PyTorch", "PyTorch", "PyTorch"),
        ("from sagemaker.pytorch import PyTorch as P", "P", "PyTorch"),
        ("import sagemaker.pytorch", "sagemaker.pytorch.PyTorch", "PyTorch"),
        ("import sagemaker", "sagemaker.tensorflow.TensorFlow", "TensorFlow"),
        ("from sagemaker import huggingface as hf", "hf.HuggingFace", "HuggingFace"),
        ("from sagemaker.estimator import Estimator", "Estimator", "Estimator"),
        ("from sagemaker.pytorch.estimator import PyTorch", "PyTorch", "PyTorch"),
    ],
)
def test_estimators_in_every_import_spelling(imports: str, call: str, kind: str) -> None:
    facts = _analyse(f"{imports}\n{call}(entry_point='train.py')\n")
    assert [e.kind for e in facts.estimators] == [kind]
    assert isinstance(facts.estimators[0].value("entry_point"), Constant)


def test_estimator_like_names_that_are_not_the_sdk_are_ignored() -> None:
    assert not _analyse("from mylib import PyTorch\nPyTorch(entry_point='x')\n").estimators
    assert not _analyse("def PyTorch(**kw): ...\nPyTorch(entry_point='x')\n").estimators


def test_values_are_followed_through_names_and_dict_calls() -> None:
    facts = _analyse("""
        from sagemaker.pytorch import PyTorch
        params = dict(pipeline_parallel_degree=2)
        smp = {"enabled": True, "parameters": params}
        kind = "ml.p3.16xlarge"
        PyTorch(instance_type=kind, distribution={"smdistributed": {"modelparallel": smp}})
    """)
    estimator = facts.estimators[0]
    assert estimator.value("instance_type") == Constant(estimator.value("instance_type").node, "ml.p3.16xlarge")
    distribution = estimator.value("distribution")
    assert isinstance(distribution, Mapping)
    parallel = distribution.get("smdistributed").get("modelparallel")  # type: ignore[union-attr]
    degree = parallel.get("parameters").get("pipeline_parallel_degree")  # type: ignore[union-attr]
    assert isinstance(degree, Constant) and degree.value == 2


@pytest.mark.parametrize(
    "setup,why",
    [
        ("kind = read()", "it comes from `read()`"),
        ("kind = 'a'\nkind = 'b'", "`kind` is bound more than once"),
        ("for kind in kinds: pass", "`kind` is a loop variable"),
        ("import kind", "`kind` is imported"),
        ("", "`kind` is not set in this file"),
        ("kind = f'ml.{size}'", "it is a formatted string"),
    ],
)
def test_values_that_cannot_be_known_say_why(setup: str, why: str) -> None:
    facts = _analyse(f"from sagemaker.pytorch import PyTorch\n{setup}\nPyTorch(instance_type=kind)\n")
    value = facts.estimators[0].value("instance_type")
    assert isinstance(value, Unknown) and value.why == why


def test_the_documented_example_is_what_lint_prints(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/launchers.md shows lint on the broken estimator, copied as launch.py."""
    (tmp_path / "launch.py").write_bytes((FIXTURES / "launchers" / "seed_pytorch_estimator_broken.py").read_bytes())
    monkeypatch.chdir(tmp_path)
    guide = (FIXTURES.parent / "docs" / "launchers.md").read_text()
    assert "$ xla-codemod lint launch.py\n" in guide
    shown = [line for line in guide.splitlines() if line.startswith("launch.py:")]
    result = CliRunner().invoke(main, ["lint", "launch.py"])
    assert len(shown) == 4
    for line in shown:
        assert line.removesuffix("...") in result.output, line


def _compiles(source: str) -> bool:
    try:
        compile(source, "<launcher>", "exec")
    except SyntaxError:
        return False
    return True


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_launchers_with_lines_dropped_never_crash_and_stay_idempotent(data: st.DataObject) -> None:
    """Half-written launchers (lines missing here and there): the checks never raise, the
    output parses, and a second run changes nothing."""
    launcher = data.draw(st.sampled_from(LAUNCHERS))
    lines = (FIXTURES / launcher).read_text().splitlines(keepends=True)
    dropped = data.draw(st.sets(st.integers(0, len(lines) - 1), max_size=4))
    source = "".join(line for number, line in enumerate(lines) if number not in dropped)
    try:
        once = convert_source(source, filename=launcher.name)
    except ConversionError:
        return  # not Python any more: the one-line error, tested elsewhere
    if once.output != source and _compiles(source):  # (a file that no longer mentions torch or sagemaker is
        # skipped unparsed; one that no longer compiles, with a keyword given twice, may stay so)
        compile(once.output, str(launcher), "exec")
    twice = convert_source(output_text(once), filename=launcher.name)
    assert twice.output == once.output and not any(f.fixed for f in twice.findings)
