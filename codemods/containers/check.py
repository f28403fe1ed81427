"""Container checks (SM3): a Dockerfile that runs SageMaker training with the
model-parallel library, on its own; what it builds (ImageBuild) is checked against the
estimators of the same run by containers/across_files.py.

Which Dockerfiles: SageMaker training images, those that mention SageMaker or
smdistributed (``ENV SAGEMAKER_*``, ``pip install sagemaker-training``) or start from a
SageMaker deep-learning-container (DLC) training image; any other Dockerfile of a
repository is left alone, also one that merely downloads from an AWS address (a plain
CUDA image fetching a tool from ``s3-us-west-2.amazonaws.com``), unless an estimator of
the same run names its image (``image_uri``): its findings are held for that check
(ImageBuild.held, containers/across_files.py).  What is required depends on the base image:
- a DLC training image already holds CUDA, the training toolkit and the libraries: it
  needs ``ENV SAGEMAKER_SUBMIT_DIRECTORY``;
- a custom image (an NVIDIA CUDA base image) also installs ``sagemaker-training`` and,
  when it is meant for the model-parallel library (it mentions model parallel), both
  smdistributed wheels with the image's Python tag, METIS and the RAPIDS memory manager.
Findings point at the instruction at fault, or at the FROM line of the image for what
is missing.  Nothing is rewritten.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from codemods.containers.dockerfile import (
    DockerfileFacts,
    DockerfileSyntaxError,
    Instruction,
    Stage,
    normalize_destination,
    parse,
    unquote,
)
from codemods.containers.rules import (
    BASE_IMAGE,
    DOCKERFILE_UNRESOLVED,
    ENTRY_POINT_DIRECTORY,
    METIS,
    RMM,
    SAGEMAKER_TRAINING,
    SMDISTRIBUTED_WHEELS,
    SUBMIT_DIRECTORY,
    WHEEL_PYTHON_TAG,
)
from codemods.engine.report import Finding
from codemods.engine.rule import Rule, RuleSelection
from codemods.engine.suppressions import Suppressions, suppressions

RELEVANT = re.compile(r"sagemaker|smdistributed|deep-learning-containers", re.IGNORECASE)
SUBMIT_VARIABLE = "SAGEMAKER_SUBMIT_DIRECTORY"
_DLC = re.compile(
    r"^(?:[\w.-]+\.dkr\.ecr\.[\w.-]+\.amazonaws\.com(?:\.cn)?|public\.ecr\.aws/deep-learning-containers)/"
    r"(?:[\w.-]+/)*[\w.-]*-training(?:[:@]|$)"
)
_PRIVATE_ECR = re.compile(r"^[\w.-]+\.dkr\.ecr\.[\w.-]+\.amazonaws\.com")
_CUDA = re.compile(r"^(?:[\w.:-]+/)?nvidia/cuda(?:[:@]|$)|^nvcr\.io/nvidia/")
_PIP_INSTALL = re.compile(r"\bpip3?(?:\.\d+)?\s+install\b|-m\s+pip\s+install\b|\bconda\s+install\b")
_WHEEL = re.compile(r"smdistributed[_-](modelparallel|dataparallel)-[\w.+!]+?-(cp\d+)-", re.IGNORECASE)
_MODEL_PARALLEL = re.compile(r"model[_-]?parallel", re.IGNORECASE)
_SAGEMAKER_TRAINING = re.compile(r"\bsagemaker[-_]training\b", re.IGNORECASE)
_METIS = re.compile(r"metis", re.IGNORECASE)
_RMM = re.compile(r"\brmm\b|librmm|rapidsai/rmm", re.IGNORECASE)
_PYTHON_VARIABLES = ("PYTHON_VERSION", "PYTHON", "PY_VERSION", "PYTHON_VER")
_PYTHON_IN_COMMANDS = re.compile(r"\bpython(?:3\.|=|==|\s*=\s*)(3\.\d+)|\bpython3\.(\d+)\b")
_DLC_PYTHON = re.compile(r"-py3(\d+)\b")
_WHEEL_NAMES = {"modelparallel": "smdistributed_modelparallel", "dataparallel": "smdistributed_dataparallel"}


@dataclass(frozen=True)
class ImageBuild:
    """What a checked Dockerfile puts where: for the estimators of the same run."""

    path: str
    submit_directory: str | None
    submit_line: int
    # Files the image copies into the submit directory (paths relative to it), and
    # whether it copies whole folders there (then any entry point may be among them).
    copied_files: frozenset[str] = frozenset()
    copies_folders: bool = False
    # SM308 is on (selected, not silenced on the submit directory's line).
    checked: bool = True
    # None for a SageMaker image (its findings are the file's own); for any other image,
    # the findings it gets if an estimator of the run runs it.
    held: tuple[Finding, ...] | None = None


@dataclass
class ContainerCheck:
    findings: list[Finding] = field(default_factory=list)
    build: ImageBuild | None = None


def check_dockerfile(text: str, selection: RuleSelection, path: str = "Dockerfile") -> ContainerCheck:
    """The SM3 findings of one Dockerfile's text; raises DockerfileSyntaxError."""
    result = ContainerCheck()
    mentioned = RELEVANT.search(text) is not None
    try:
        facts = parse(text)
    except DockerfileSyntaxError:
        if mentioned or "amazonaws.com" in text.lower():
            raise
        return result  # not a SageMaker image, whatever it is
    chain = facts.image_chain()
    if not chain:
        return result
    comments = suppressions(text, comment_lines_only=True)
    checker = _Checker(facts, chain, selection, comments)
    checker.run()
    findings = sorted(checker.findings, key=lambda f: (f.line, f.col, f.rule))
    if not (mentioned or any(_DLC.match(stage.image) for stage in chain)):
        # Not a SageMaker image by its text (an S3 download is no sign of one): checked
        # only if an estimator of the run names it.
        result.build = ImageBuild(path, None, chain[-1].line, held=tuple(findings))
        return result
    result.findings = findings
    submit = checker.submit_directory()
    if submit is not None:
        directory, instruction = submit
        checked = selection.enabled(ENTRY_POINT_DIRECTORY.code) and not comments.silences(
            ENTRY_POINT_DIRECTORY, instruction.line
        )
        result.build = ImageBuild(path, directory, instruction.line, *checker.copies_into(directory), checked)
    return result


class _Checker:
    def __init__(
        self,
        facts: DockerfileFacts,
        chain: list[Stage],
        selection: RuleSelection,
        comments: Suppressions,
    ) -> None:
        self.facts = facts
        self.chain = chain
        self.image = chain[-1]
        self.instructions = [i for stage in chain for i in stage.instructions]
        self.selection = selection
        self.comments = comments
        self.findings: list[Finding] = []

    def report(self, rule: Rule, line: int, message: str) -> None:
        if self.selection.enabled(rule.code) and not self.comments.silences(rule, line):
            self.findings.append(Finding(rule.code, line, 1, message, False))

    def run(self) -> None:
        kind = self.base_kind()
        if self.submit_directory() is None:
            self.report(
                SUBMIT_DIRECTORY,
                self.image.line,
                f"no `ENV {SUBMIT_VARIABLE}`: the SageMaker training toolkit runs "
                "the user code from that directory (for example `ENV SAGEMAKER_SUBMIT_DIRECTORY /opt/ml/code`)",
            )
        if kind != "cuda":
            return
        runs = [i for i in self.instructions if i.cmd == "RUN"]
        installs = [i for i in runs if _PIP_INSTALL.search(i.text)]
        if not any(_SAGEMAKER_TRAINING.search(i.text) for i in installs):
            self.report(
                SAGEMAKER_TRAINING,
                self.image.line,
                "a custom image installs the SageMaker training toolkit: add `RUN pip install sagemaker-training`",
            )
        if not any(_MODEL_PARALLEL.search(i.text) for i in self.instructions) and not _MODEL_PARALLEL.search(
            " ".join(self.facts.definitions)
        ):
            return
        self.wheels(installs)
        if not any(_METIS.search(i.text) for i in runs):
            self.report(
                METIS,
                self.image.line,
                "the model-parallel library needs METIS: build it (metis-5.1.0, "
                "`make config shared=1 && make install`) or install libmetis-dev",
            )
        if not any(_RMM.search(i.text) for i in runs):
            self.report(
                RMM,
                self.image.line,
                "the model-parallel library needs the RAPIDS memory manager: build "
                "librmm (rapidsai/rmm, `./build.sh librmm`; CMake 3.14 or later)",
            )

    def base_kind(self) -> str:
        root = self.chain[0]
        if root.unset:
            names = ", ".join(f"${{{n}}}" for n in root.unset)
            self.report(
                DOCKERFILE_UNRESOLVED,
                root.line,
                f"could not check the base image: {names} has no default (it comes from --build-arg)",
            )
            return "unknown"
        image = root.image
        if _DLC.match(image):
            return "dlc"
        if _CUDA.match(image):
            return "cuda"
        if _PRIVATE_ECR.match(image):
            self.report(
                DOCKERFILE_UNRESOLVED,
                root.line,
                f"could not check the base image: {image} is a private ECR image, not a "
                "SageMaker training image; the checks for custom images were not run",
            )
            return "unknown"
        self.report(
            BASE_IMAGE,
            root.line,
            f"{image} is neither a SageMaker deep-learning-container training image nor an "
            "NVIDIA CUDA base image: the model-parallel library needs one of them",
        )
        return "other"

    def submit_directory(self) -> tuple[str, Instruction] | None:
        found: tuple[str, Instruction] | None = None
        for instruction in self.instructions:
            if instruction.cmd != "ENV":
                continue
            for key, value in zip(instruction.words[::2], instruction.words[1::2]):
                if key == SUBMIT_VARIABLE:
                    found = (unquote(value), instruction)
        return found

    def wheels(self, installs: list[Instruction]) -> None:
        installed = {kind for i in installs for kind, _ in _wheels_in(i.text)}
        for kind, wheel in _WHEEL_NAMES.items():
            if kind not in installed:
                self.report(
                    SMDISTRIBUTED_WHEELS,
                    self.image.line,
                    f"the image does not install the {wheel} wheel: the "
                    "model-parallel library needs both smdistributed wheels (model parallel and data parallel)",
                )
        tags = self.wheel_tags()
        python = self.python_version()
        if isinstance(python, str):
            expected = "cp3" + python.split(".")[1]
            for kind, (tag, line) in tags.items():
                if tag != expected:
                    self.report(
                        WHEEL_PYTHON_TAG,
                        line,
                        f"the {_WHEEL_NAMES[kind]} wheel is built for {tag}, the image's Python "
                        f"is {python} ({expected})",
                    )
            return
        if len({tag for tag, _ in tags.values()}) > 1:
            line = max(line for _, line in tags.values())
            shown = ", ".join(f"{_WHEEL_NAMES[k]} {t}" for k, (t, _) in sorted(tags.items()))
            self.report(WHEEL_PYTHON_TAG, line, f"the smdistributed wheels are built for different Pythons ({shown})")
        if isinstance(python, tuple) and tags:
            self.report(DOCKERFILE_UNRESOLVED, self.image.line, f"could not check the wheels' Python tag: {python[0]}")

    def wheel_tags(self) -> dict[str, tuple[str, int]]:
        """The Python tag of each smdistributed wheel and the line that writes it."""
        tags: dict[str, tuple[str, int]] = {}
        for instruction in self.instructions:
            if instruction.cmd in ("ARG", "ENV", "RUN"):
                for kind, tag in _wheels_in(" ".join(instruction.words)):
                    tags.setdefault(kind, (tag, instruction.line))
        return tags

    def python_version(self) -> str | None | tuple[str]:
        """The image's Python ("3.8"); None when nothing says; a 1-tuple saying why
        not when the image names several."""
        versions: dict[str, int] = {}
        dlc = _DLC_PYTHON.search(self.chain[0].image)
        if dlc:
            versions.setdefault(f"3.{dlc.group(1)}", self.chain[0].line)
        for name in _PYTHON_VARIABLES:
            definition = self.facts.definitions.get(name)
            value = _variable_value(definition, name) if definition else None
            match = re.match(r"(3\.\d+)", value or "")
            if match and definition is not None:  # (value is None unless definition is set)
                versions.setdefault(match.group(1), definition.line)
        for instruction in self.instructions:
            if instruction.cmd == "RUN":
                for match in _PYTHON_IN_COMMANDS.finditer(instruction.text):
                    versions.setdefault(match.group(1) or f"3.{match.group(2)}", instruction.line)
        if len(versions) > 1:
            return (f"the image names several Pythons ({', '.join(sorted(versions))})",)
        return next(iter(versions), None)

    def copies_into(self, directory: str) -> tuple[frozenset[str], bool]:
        """Files copied into ``directory`` (relative to it) and whether folders are."""
        root = posixpath.normpath(directory)
        files: set[str] = set()
        folders = False
        workdir = "/"
        for instruction in self.instructions:
            if instruction.cmd == "WORKDIR" and instruction.words:
                workdir = posixpath.normpath(posixpath.join(workdir, unquote(instruction.words[0])))
            if instruction.cmd not in ("COPY", "ADD") or len(instruction.words) < 2:
                continue
            *sources, destination = (unquote(w) for w in instruction.words)
            target = normalize_destination(destination, workdir)
            into_folder = target.endswith("/") or len(sources) > 1 or target.rstrip("/") == root
            base = target.rstrip("/")
            for source in sources:
                placed = posixpath.join(base, posixpath.basename(source.rstrip("/"))) if into_folder else base
                if not (placed + "/").startswith(root + "/") and base != root:
                    continue
                if source in (".", "./") or source.endswith("/") or "." not in posixpath.basename(source):
                    folders = folders or (base + "/").startswith(root + "/")
                    continue
                files.add(posixpath.relpath(placed, root))
        return frozenset(files), folders


def _wheels_in(text: str) -> Iterable[tuple[str, str]]:
    for match in _WHEEL.finditer(text):
        yield match.group(1).lower(), match.group(2).lower()


def _variable_value(definition: Instruction, name: str) -> str | None:
    if definition.cmd == "ARG":
        for word in definition.words:
            key, _, value = word.partition("=")
            if key == name:
                return unquote(value)
        return None
    pairs = dict(zip(definition.words[::2], definition.words[1::2]))
    return unquote(pairs[name]) if name in pairs else None
