"""Where a callable handed an optimizer (training/library_steppers.py) comes from when the tool can
find it nowhere: neither in the file, nor in a module of the project, nor in a package.  Two shapes:
a name the file calls and never binds, which only a star import of a module the tool cannot read may
bind (SEAL's ``sys.path.append('../../pytorch_DGCNN')`` and ``from main import *``, a module cloned
beside the project, then ``loop_dataset(graphs, model, idxes, optimizer=optimizer)``), and a name
imported from a module of the project whose file is missing (``from train.train_x import
train_epoch``, with ``train/`` a folder of the project and no ``train_x.py`` in it).  No run converts
or reads such code: the step barrier, the XLA optimizer step and the device of the batches it makes
cannot be proven (SPEC section 5, "No silent port": XLA307 at the call).  Known libraries keep their
own treatment: a name an import binds from a package resolves to it (XLA307's table, XLA004, or an
unfollowed package); the standard library's and the followed packages' star imports are not named."""

from __future__ import annotations

from typing import TYPE_CHECKING

from codemods import apis

if TYPE_CHECKING:
    import libcst as cst

    from codemods.engine.imports import ImportFacts
    from codemods.project.analysis import ProjectAnalysis

# Words of a callable's name that say it does not run the steps: it schedules or sets the learning
# rate (``adjust_learning_rate(optimizer, epoch)``), saves, loads, logs or prints.
_NO_STEP_WORDS = (
    "sched",
    "warmup",
    "lr",
    "learning_rate",
    "save",
    "load",
    "checkpoint",
    "ckpt",
    "restore",
    "resume",
    "state",
    "log",
    "print",
)


def steps_nothing(name: str) -> bool:
    """The callable's name says it steps no optimizer it is handed."""
    last = name.rsplit(".", 1)[-1].lower()
    return any(word in last for word in _NO_STEP_WORDS)


def unread_stars(name: str, bound: set[str], imports: ImportFacts) -> tuple[cst.ImportFrom, ...]:
    """The star imports that alone may bind ``name``, a name the file calls and never binds (nor one
    of Python's builtins): those of modules the tool cannot read (``ImportFacts.unread_star_sources``),
    whose names may step an optimizer.  Empty where the name does not say it may step one."""
    return () if steps_nothing(name) else imports.unread_star_sources(name, bound)


def missing_module(callee: str, project: ProjectAnalysis) -> str:
    """The module of the project that ``callee`` (qualified through the imports, and that no module
    of the project holds: ``ProjectAnalysis.origin`` is None) is imported from, when that module's
    file is missing: its head names a folder or module of the project, so it is no package
    (``ProjectAnalysis.library_package``).  "" otherwise."""
    if apis.unfollowed_package(callee) is None or project.library_package(callee) is not None:
        return ""
    return callee.rpartition(".")[0]
