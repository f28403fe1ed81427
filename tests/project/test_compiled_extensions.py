"""A layer whose forward calls a compiled extension imported relatively (``from ._ext import
deform_conv``, built in place by the project's setup.py: no Python module of the project) is
an error (XLA512) in a run that knows the project; a relative import of a module the project
has is not, and a file whose folder is not known cannot tell the two apart (nothing said).
So is a call in a forward of a module that a setup.py of the project builds with
torch.utils.cpp_extension's ``CUDAExtension``/``CppExtension`` (``import pointnet2._ext as _ext``,
an absolute import: the module is installed by ``python setup.py install``), whatever the
spelling of the import; a module the setup.py does not build is not."""

from __future__ import annotations

from pathlib import Path

import pytest

from codemods import convert_source
from codemods.engine.report import Finding
from codemods.engine.rule import RuleSelection
from codemods.pipeline import summarise_with
from codemods.project.resolver import Project

TARGETS = ["2.9", "sagemaker"]

LAYER = """\
import torch
from torch.autograd import Function

from .{module} import deform_conv as backend


class DeformFunction(Function):
    @staticmethod
    def forward(ctx, x, offset):
        out = x.new_empty(x.shape)
        backend.forward(x, offset, out)
        return out
"""

HELPER = """\
def forward(x, offset, out):
    out.copy_(x + offset)
"""


def _findings(tmp_path: Path, module: str, target: str, located: bool = True) -> list[Finding]:
    repo = tmp_path / "repo"
    (repo / "layers").mkdir(parents=True)
    (repo / ".git").mkdir()
    (repo / "layers" / "__init__.py").write_text("")
    (repo / "layers" / "dcn.py").write_text(LAYER.format(module=module))
    (repo / "layers" / "helpers.py").write_text(HELPER)
    path = repo / "layers" / "dcn.py"
    project = Project(repo, summarise_with(target, RuleSelection(), None), in_run=[path])
    imports = project.imports_of(path) if located else None
    conversion = convert_source(path.read_bytes(), target=target, imports=imports)
    return [f for f in conversion.findings if f.rule == "XLA512"]


@pytest.mark.parametrize("target", TARGETS)
def test_an_op_of_an_extension_built_in_place_is_an_error_in_the_forward(tmp_path: Path, target: str) -> None:
    (finding,) = _findings(tmp_path, "_ext", target)
    assert finding.line == 11
    assert "`backend.forward(...)` runs an op of a compiled extension" in finding.message
    assert "`from ._ext import deform_conv`, no Python module of the project" in finding.message


@pytest.mark.parametrize("target", TARGETS)
def test_a_module_of_the_project_is_no_extension(tmp_path: Path, target: str) -> None:
    assert _findings(tmp_path, "helpers", target) == []


def test_a_file_whose_folder_is_not_known_says_nothing(tmp_path: Path) -> None:
    assert _findings(tmp_path, "_ext", "2.9", located=False) == []


SETUP = """\
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, {kind}

setup(
    name="pts",
    ext_modules=[{kind}(name="pts._ext", sources=["src/ops.cpp", "src/ops_kernel.cu"])],
    cmdclass={{"build_ext": BuildExtension}},
)
"""

SAMPLING = """\
import torch
from torch.autograd import Function

{imports}


class FurthestPointSampling(Function):
    @staticmethod
    def forward(ctx, xyz, npoint):
        return {call}(xyz, npoint)


def warm_up(xyz):
    return {call}(xyz, 1)
"""

IMPORTS = {
    "module alias": ("import pts._ext as _ext", "_ext.furthest_point_sampling"),
    "from the package": ("from pts import _ext", "_ext.furthest_point_sampling"),
    "the op itself": ("from pts._ext import furthest_point_sampling as fps", "fps"),
    "plain import": ("import pts._ext", "pts._ext.furthest_point_sampling"),
}


def _built_findings(tmp_path: Path, target: str, imports: str, call: str, setup: str | None) -> list[Finding]:
    repo = tmp_path / "repo"
    (repo / "pts").mkdir(parents=True)
    (repo / ".git").mkdir()
    if setup is not None:
        (repo / "pts" / "setup.py").write_text(setup)
    (repo / "pts" / "pts_utils.py").write_text(SAMPLING.format(imports=imports, call=call))
    path = repo / "pts" / "pts_utils.py"
    project = Project(repo, summarise_with(target, RuleSelection(), None), in_run=[path])
    conversion = convert_source(path.read_bytes(), target=target, imports=project.imports_of(path))
    return [f for f in conversion.findings if f.rule == "XLA512"]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("spelling", list(IMPORTS))
def test_an_op_of_an_extension_the_setup_py_builds_is_an_error_in_the_forward(
    tmp_path: Path, target: str, spelling: str
) -> None:
    imports, call = IMPORTS[spelling]
    (finding,) = _built_findings(tmp_path, target, imports, call, SETUP.format(kind="CUDAExtension"))
    assert finding.line == 10  # the forward's call, not warm_up's
    assert f"`{call}(...)` runs an op of a compiled extension (`pts._ext`, a C++/CUDA extension that " in (
        finding.message
    )
    assert "pts/setup.py builds with torch.utils.cpp_extension), which raises on XLA tensors" in finding.message


def test_an_op_of_a_cpp_extension_is_an_error_too(tmp_path: Path) -> None:
    """A C++ op reads its tensors' memory on the CPU: it raises on XLA tensors, as a
    ``load(...)`` extension's op does (XLA512 reports those whatever their sources)."""
    imports, call = IMPORTS["module alias"]
    (finding,) = _built_findings(tmp_path, "2.9", imports, call, SETUP.format(kind="CppExtension"))
    assert finding.line == 10


@pytest.mark.parametrize("target", TARGETS)
def test_a_module_no_setup_py_builds_is_no_extension(tmp_path: Path, target: str) -> None:
    imports, call = IMPORTS["module alias"]
    plain = 'from setuptools import setup\n\nsetup(name="pts", packages=["pts"])\n'
    assert _built_findings(tmp_path, target, imports, call, plain) == []
    other = SETUP.format(kind="CUDAExtension").replace("pts._ext", "pts._ops")
    assert _built_findings(tmp_path / "other", target, imports, call, other) == []


MODEL = """\
import torch
from pts.pts_utils import furthest_point_sample


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(3, 3)

    def forward(self, xyz):
        return self.fc(xyz)[furthest_point_sample(xyz, 4)]
"""

TRAIN = """\
import torch
from model import Net

net = Net().to("cuda")
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
for xyz in [torch.randn(16, 3)]:
    optimizer.zero_grad()
    net(xyz.to("cuda")).sum().backward()
    optimizer.step()
"""


@pytest.mark.parametrize("target", TARGETS)
def test_a_single_file_run_names_the_extension_op_its_model_reaches(tmp_path: Path, target: str) -> None:
    """The op is reached through a module-level alias of the Function (``furthest_point_sample =
    FurthestPointSampling.apply``) of a module the run does not convert: XLA003 names it."""
    repo = tmp_path / "repo"
    (repo / "pts").mkdir(parents=True)
    (repo / ".git").mkdir()
    (repo / "pts" / "setup.py").write_text(SETUP.format(kind="CUDAExtension"))
    sampling = SAMPLING.format(imports="import pts._ext as _ext", call="_ext.furthest_point_sampling")
    (repo / "pts" / "pts_utils.py").write_text(sampling + "\n\nfurthest_point_sample = FurthestPointSampling.apply\n")
    (repo / "model.py").write_text(MODEL)
    (repo / "train.py").write_text(TRAIN)
    path = repo / "train.py"
    project = Project(repo, summarise_with(target, RuleSelection(), None), in_run=[path])
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(repo)
        conversion = convert_source(path.read_bytes(), target=target, imports=project.imports_of(path), locate="input")
    (finding,) = [f for f in conversion.findings if f.rule == "XLA003"]
    assert finding.line == 2
    assert "what this file uses of model.py, which this run does not convert, holds code that does not run on XLA" in (
        finding.message
    )
    assert "`FurthestPointSampling` in pts/pts_utils.py has `_ext.furthest_point_sampling(xyz, npoint)`" in (
        finding.message
    )


# Outside a forward: the op handed a tensor the function moves to the GPU (on the XLA device after the port).
WARM_UP_ON_THE_DEVICE = ("def warm_up(xyz):\n", "def warm_up(points):\n    xyz = points.cuda()\n")


@pytest.mark.parametrize("target", TARGETS)
def test_an_op_outside_a_forward_handed_a_device_tensor_is_an_error(tmp_path: Path, target: str) -> None:
    imports, call = IMPORTS["module alias"]
    setup = SETUP.format(kind="CUDAExtension")
    repo = tmp_path / "repo"
    (repo / "pts").mkdir(parents=True)
    (repo / ".git").mkdir()
    (repo / "pts" / "setup.py").write_text(setup)
    text = SAMPLING.format(imports=imports, call=call)
    assert WARM_UP_ON_THE_DEVICE[0] in text
    path = repo / "pts" / "pts_utils.py"
    path.write_text(text.replace(*WARM_UP_ON_THE_DEVICE))
    project = Project(repo, summarise_with(target, RuleSelection(), None), in_run=[path])
    conversion = convert_source(path.read_bytes(), target=target, imports=project.imports_of(path))
    found = [f for f in conversion.findings if f.rule == "XLA512"]
    assert [f.line for f in found] == [11, 16]  # (in the output, below the added torch_xla import)
    assert "on `xyz`, which the port puts on the XLA device: the op raises on XLA tensors" in found[1].message
    assert "`pts._ext`, a C++/CUDA extension that " in found[1].message
    assert "pts/setup.py builds with torch.utils.cpp_extension) on `xyz`" in found[1].message


# A setup.py that picks the class into a name (C++ first, CUDA where it is found) and builds
# ``mypkg._C`` with it; the package imports the module absolutely and binds its op to a name.
SETUP_BY_NAME = """\
import torch
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CppExtension, CUDAExtension

extension = CppExtension
if torch.cuda.is_available():
    extension = CUDAExtension
setup(name="mypkg", ext_modules=[extension("mypkg._C", ["csrc/ops.cpp"])], cmdclass={"build_ext": BuildExtension})
"""

NMS = """\
from mypkg import _C

nms = _C.nms
"""

ROI_ALIGN = """\
from torch.autograd import Function

from mypkg import _C


class _RoIAlign(Function):
    @staticmethod
    def forward(ctx, x, rois):
        return _C.roi_align_forward(x, rois, 1.0, 7, 7, 2)
"""

# The same layer importing a name of its own package (``from . import Backend as backend``).
PACKAGE_LAYER = LAYER.replace("from .{module} import deform_conv as backend", "from . import {name} as backend")

RE_EXPORTED = """\
class Backend:
    @staticmethod
    def forward(x, offset, out):
        out.copy_(x + offset)
"""


@pytest.mark.parametrize("target", TARGETS)
def test_an_extension_a_setup_py_builds_through_a_name_is_known(tmp_path: Path, target: str) -> None:
    from tests.support.projects import unfixed_findings, write_project

    files = {"setup.py": SETUP_BY_NAME, "mypkg/__init__.py": "", "mypkg/nms.py": NMS, "mypkg/roi.py": ROI_ALIGN}
    repo = write_project(tmp_path / "repo", "mypkg", files)
    names = ["mypkg/nms.py", "mypkg/roi.py"]
    found = unfixed_findings(repo, names, target)
    assert [(line, "`_C.nms` is an op of a compiled extension (`mypkg._C`" in m) for r, line, m in found["nms.py"]] == [
        (3, True)
    ]
    assert [(r, line) for r, line, _ in found["roi.py"] if r == "XLA512"] == [("XLA512", 9)]
    # Without the setup.py, ``mypkg._C`` is not known to be an extension: nothing said.
    (repo / "setup.py").unlink()
    found = unfixed_findings(repo, names, target)
    assert [r for r, _, _ in [*found["nms.py"], *found["roi.py"]] if r == "XLA512"] == []


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(("init", "extension"), [("from .helpers import Backend\n", False), ("", True)])
def test_a_name_the_package_binds_is_no_extension(tmp_path: Path, target: str, init: str, extension: bool) -> None:
    """``from . import Backend`` where the package's ``__init__.py`` re-exports a class of a sibling
    module: a Python name, no compiled extension; with ``__init__.py`` binding nothing it is one."""
    repo = tmp_path / "repo"
    (repo / "layers").mkdir(parents=True)
    (repo / ".git").mkdir()
    (repo / "layers" / "__init__.py").write_text(init)
    (repo / "layers" / "helpers.py").write_text(RE_EXPORTED)
    path = repo / "layers" / "dcn.py"
    path.write_text(PACKAGE_LAYER.format(name="Backend"))
    project = Project(repo, summarise_with(target, RuleSelection(), None), in_run=[path])
    conversion = convert_source(path.read_bytes(), target=target, imports=project.imports_of(path))
    found = [f for f in conversion.findings if f.rule == "XLA512"]
    assert bool(found) == extension, found


DISPATCH = (
    LAYER
    + """

deform_cuda = DeformFunction.apply


class Deform(torch.nn.Module):
    def forward(self, x, offset):
        if x.is_cuda:
            return deform_cuda(x, offset)
        return x + offset
"""
)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("named_elsewhere", [False, True])
def test_an_op_the_layer_runs_only_on_cuda_tensors_is_not_an_error(
    tmp_path: Path, target: str, named_elsewhere: bool
) -> None:
    """``if x.is_cuda:`` (False on XLA) is the only way the file reaches the op's Function (through a
    module-level alias): the torch branch runs there. Another file naming the alias may call it unguarded."""
    repo = tmp_path / "repo"
    (repo / "layers").mkdir(parents=True)
    (repo / ".git").mkdir()
    (repo / "layers" / "__init__.py").write_text("")
    (repo / "layers" / "dcn.py").write_text(DISPATCH.format(module="_ext"))
    if named_elsewhere:
        (repo / "layers" / "use.py").write_text(
            "from .dcn import deform_cuda\n\n\ndef run(x, o):\n    return deform_cuda(x, o)\n"
        )
    path = repo / "layers" / "dcn.py"
    project = Project(repo, summarise_with(target, RuleSelection(), None), in_run=[path])
    conversion = convert_source(path.read_bytes(), target=target, imports=project.imports_of(path))
    found = [(f.line, f.col) for f in conversion.findings if f.rule == "XLA512"]
    assert found == ([(11, 9)] if named_elsewhere else [])
