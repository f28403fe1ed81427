"""Launcher scripts and Dockerfiles (seed 004): snapshots of the fixtures under
fixtures/launchers/ and fixtures/containers/, the seed's "done when" on the command line,
checks across files of a run (SM308), rule examples, the launcher analysis, and bad input.

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
from codemods.files import discover, is_dockerfile
from codemods.launcher.analysis import Constant, Mapping, Unknown, analyse_launcher
from codemods.launcher.instances import INSTANCE_TYPES, lookup
from codemods.rules import RuleSelection
from codemods.runner import Job, run
from tests.support.fixtures import review_diff
from tests.support.paths import FIXTURES, SNAPSHOTS
from tests.support.rule_cases import RUN_CASES

LAUNCHERS = sorted(p.relative_to(FIXTURES) for p in (FIXTURES / "launchers").glob("*.py"))
DOCKERFILES = sorted(p.relative_to(FIXTURES) for p in (FIXTURES / "containers").rglob("*") if is_dockerfile(p.name))
SEED_PYTORCH_BROKEN = FIXTURES / "launchers" / "seed_pytorch_estimator_broken.py"


def lint_run(paths) -> list[FileReport]:  # type: ignore[no-untyped-def]
    """What `xla-codemod lint PATH...` runs, in this process."""
    job = Job("lint", "2.9", RuleSelection())
    return run([(str(path), job) for path in paths])


def _report(path: Path, conversion) -> str:  # type: ignore[no-untyped-def]
    return render_text(Report([FileReport(str(path), conversion.changed, None, conversion.findings)]))


@pytest.mark.parametrize("launcher", LAUNCHERS, ids=str)
def test_launcher_snapshot(launcher: Path, snapshot) -> None:  # type: ignore[no-untyped-def]
    conversion = convert_source((FIXTURES / launcher).read_bytes(), filename=launcher.name)
    snapshot.snapshot_dir = SNAPSHOTS
    stem = str(launcher.with_suffix(""))
    snapshot.assert_match(review_diff(launcher, (FIXTURES / launcher).read_bytes(), conversion.output), f"{stem}.diff")
    snapshot.assert_match(_report(launcher, conversion), f"{stem}.report.txt")


@pytest.mark.parametrize("launcher", LAUNCHERS, ids=str)
def test_launcher_conversion_is_idempotent_and_points_at_new_code(launcher: Path) -> None:
    once = convert_source((FIXTURES / launcher).read_bytes(), filename=launcher.name)
    twice = convert_source(once.output, filename=launcher.name)
    assert twice.output == once.output
    assert [f for f in twice.findings if f.fixed] == []
    assert {(f.rule, f.message) for f in twice.findings} <= {(f.rule, f.message) for f in once.findings}
    lines = once.output.decode("utf-8").splitlines()
    for finding in once.findings:
        if finding.fixed and " -> " in finding.message:
            new = finding.message.split(" -> ", 1)[1].split(": ")[0]
            assert lines[finding.line - 1][finding.col - 1 :].startswith(new), finding


@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=str)
def test_dockerfile_snapshot(dockerfile: Path, snapshot) -> None:  # type: ignore[no-untyped-def]
    """Dockerfiles are checked, never rewritten; a broken one gets its one-line error."""
    reports = lint_run([str(FIXTURES / dockerfile)])
    assert reports[0].changed is False
    text = render_text(Report(reports)).replace(str(FIXTURES) + "/", "")
    snapshot.snapshot_dir = SNAPSHOTS
    snapshot.assert_match(text, f"{dockerfile}.report.txt")


def test_entry_point_outside_the_image_is_reported_across_files(snapshot) -> None:  # type: ignore[no-untyped-def]
    folder = FIXTURES / "containers" / "entry_point"
    reports = lint_run(discover((str(folder),)))
    snapshot.snapshot_dir = SNAPSHOTS
    snapshot.assert_match(render_text(Report(reports)).replace(str(FIXTURES) + "/", ""), "containers/entry_point.report.txt")


@pytest.mark.parametrize("rule,kind,files", RUN_CASES, ids=[f"{r}-{k}-{i}" for i, (r, k, _) in enumerate(RUN_CASES)])
def test_run_case(rule: str, kind: str, files: dict[str, str], tmp_path: Path) -> None:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(textwrap.dedent(text).lstrip("\n"))
    reports = lint_run(discover((str(tmp_path),)))
    assert not any(r.error for r in reports), reports
    fired = [f for r in reports for f in r.findings if f.rule == rule]
    assert bool(fired) == (kind != "negative"), fired
    for finding in fired:  # on the Dockerfile, naming the launcher's estimator line
        assert "launch.py:" in finding.message


# -- the "done when" -------------------------------------------------------------------


def test_lint_reports_each_problem_of_the_seed_pytorch_estimator_with_its_line() -> None:
    result = CliRunner().invoke(main, ["lint", str(SEED_PYTORCH_BROKEN)])
    assert result.exit_code == 1
    path = str(SEED_PYTORCH_BROKEN)
    for expected in (
        f"{path}:10:9: SM102 [*] \"partitions\" -> \"pipeline_parallel_degree\"",
        f"{path}:21:28: SM104 [*] processes_per_host 16 -> 8: ml.p3.16xlarge has 8 GPUs",
        f'{path}:22:28: SM105 [*] custom_mpi_options -> "-x NCCL_DEBUG=WARN -x SMP_NCCL_THROTTLE_LIMIT=1"',
        f"{path}:34:57: SM103 \"modelparallel\" and \"dataparallel\" cannot be used in one job",
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
    assert [line.split(" ", 2)[1] for line in relint.output.splitlines() if line.startswith(str(launcher))] == ["SM103"]


def test_lint_says_what_a_dockerfile_misses_with_the_line(tmp_path: Path) -> None:
    dlc = tmp_path / "dlc" / "Dockerfile"
    dlc.parent.mkdir()
    dlc.write_text("# extends a DLC\nFROM 763104351884.dkr.ecr.us-west-2.amazonaws.com/pytorch-training:1.13.1-gpu-py39\n"
                   "RUN pip install transformers\n")
    custom = tmp_path / "custom.Dockerfile"
    custom.write_text((FIXTURES / "containers" / "broken" / "Dockerfile.no-sagemaker-training").read_text())
    result = CliRunner().invoke(main, ["lint", str(tmp_path)])
    assert result.exit_code == 1
    assert f"{dlc}:2:1: SM302 no `ENV SAGEMAKER_SUBMIT_DIRECTORY`" in result.output
    assert f"{custom}:3:1: SM303 a custom image installs the SageMaker training toolkit" in result.output


# -- bad input -----------------------------------------------------------------------------------

SEED_GENERIC_ESTIMATOR = '''\
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
'''


def test_the_seeds_generic_estimator_gets_the_one_line_syntax_error(tmp_path: Path) -> None:
    launcher = tmp_path / "launch.py"
    launcher.write_text("import sagemaker\nfrom sagemaker.estimator import Estimator\n\n" + SEED_GENERIC_ESTIMATOR)
    result = CliRunner().invoke(main, ["lint", str(launcher)])
    assert result.exit_code == 2
    errors = [line for line in result.output.splitlines() if ": error: " in line]
    assert errors == [f"{launcher}: error: line 9, column 15: cannot parse: invalid syntax. Perhaps you forgot a comma?"]


def test_a_broken_dockerfile_gets_one_line_with_the_line_and_others_go_on(tmp_path: Path) -> None:
    broken = tmp_path / "Dockerfile"
    broken.write_text("FROM 1.dkr.ecr.us-east-1.amazonaws.com/pytorch-training:2\nRUN true\nENV A=1 B\nRUN true\n")
    fine = tmp_path / "ok.Dockerfile"
    fine.write_text("FROM 1.dkr.ecr.us-east-1.amazonaws.com/pytorch-training:2\n")
    result = CliRunner().invoke(main, ["lint", str(tmp_path)])
    assert result.exit_code == 2
    assert f"{broken}: error: line 3: cannot parse: Syntax error - can't find = in \"B\"" in result.output
    assert f"{fine}:1:1: SM302" in result.output


@pytest.mark.parametrize("data,message", [
    (b"FROM x\x00\n", "binary file"),
    (b"FROM 1.dkr.ecr.us-east-1.amazonaws.com/pytorch-training:2\nRUN echo \xff\n", "line 2: cannot decode"),
])
def test_unreadable_dockerfiles(data: bytes, message: str, tmp_path: Path) -> None:
    path = tmp_path / "Dockerfile"
    path.write_bytes(data)
    result = CliRunner().invoke(main, ["lint", str(path)])
    assert result.exit_code == 2 and message in result.output, result.output


def test_dockerfiles_of_other_services_are_left_alone() -> None:
    web = "FROM python:3.11\nRUN pip install flask\nCMD [\"flask\", \"run\"]\n"
    conversion = convert_source(web, filename="Dockerfile")
    assert conversion.findings == [] and conversion.output == web
    assert convert_source("FROM x\nENV A=1 B\n", filename="Dockerfile").findings == []  # not even parsed


def test_dockerfiles_are_found_by_name(tmp_path: Path) -> None:
    for name in ("Dockerfile", "gpu.Dockerfile", "Dockerfile.smp", "Dockerfile.dockerignore", "notes.txt", "train.py"):
        (tmp_path / name).write_text("")
    found = sorted(Path(p).name for p in discover((str(tmp_path),)))
    assert found == ["Dockerfile", "Dockerfile.smp", "gpu.Dockerfile", "train.py"]


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
    assert rule.why and rule.examples
    for example in rule.examples:
        conversion = convert_source(example.before, target=example.target, filename=example.filename)
        assert conversion.output == (example.after if example.after is not None else example.before)
        if rule.code != "SM308":  # compares two files of a run: its Run cases (RUN_CASES)
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


@pytest.mark.parametrize("imports,call,kind", [
    ("from sagemaker.pytorch import PyTorch", "PyTorch", "PyTorch"),
    ("from sagemaker.pytorch import PyTorch as P", "P", "PyTorch"),
    ("import sagemaker.pytorch", "sagemaker.pytorch.PyTorch", "PyTorch"),
    ("import sagemaker", "sagemaker.tensorflow.TensorFlow", "TensorFlow"),
    ("from sagemaker import huggingface as hf", "hf.HuggingFace", "HuggingFace"),
    ("from sagemaker.estimator import Estimator", "Estimator", "Estimator"),
    ("from sagemaker.pytorch.estimator import PyTorch", "PyTorch", "PyTorch"),
])
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


@pytest.mark.parametrize("setup,why", [
    ("kind = read()", "it comes from `read()`"),
    ("kind = 'a'\nkind = 'b'", "`kind` is bound more than once"),
    ("for kind in kinds: pass", "`kind` is a loop variable"),
    ("import kind", "`kind` is imported"),
    ("", "`kind` is not set in this file"),
    ("kind = f'ml.{size}'", "it is a formatted string"),
])
def test_values_that_cannot_be_known_say_why(setup: str, why: str) -> None:
    facts = _analyse(f"from sagemaker.pytorch import PyTorch\n{setup}\nPyTorch(instance_type=kind)\n")
    value = facts.estimators[0].value("instance_type")
    assert isinstance(value, Unknown) and value.why == why


def test_checks_across_files_follow_the_selection_and_suppressions(tmp_path: Path) -> None:
    folder = FIXTURES / "containers" / "entry_point"
    for name in ("launch.py", "Dockerfile"):
        (tmp_path / name).write_bytes((folder / name).read_bytes())
    assert CliRunner().invoke(main, ["lint", "--ignore", "SM308", str(tmp_path)]).exit_code == 0
    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text(dockerfile.read_text().replace("ENV SAGEMAKER", "# xla-codemod: ignore[SM308]\nENV SAGEMAKER"))
    assert CliRunner().invoke(main, ["lint", str(tmp_path)]).exit_code == 0


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
    twice = convert_source(once.output, filename=launcher.name)
    assert twice.output == once.output and not any(f.fixed for f in twice.findings)
