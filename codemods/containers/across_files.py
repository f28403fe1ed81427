"""Across the files of a run (SM308): an estimator whose ``image_uri`` names an image that
a Dockerfile of the same run builds must find its entry point where that image puts the
user code.  It runs once every file is checked, and adds its findings to the reports of
those Dockerfiles (containers/check.py gives what each image copies where,
containers/estimators.py the images the launchers run)."""

from __future__ import annotations

import posixpath
from dataclasses import replace
from pathlib import PurePosixPath

from codemods.containers.check import SUBMIT_VARIABLE, ImageBuild
from codemods.containers.estimators import ImageUse
from codemods.containers.rules import ENTRY_POINT_DIRECTORY
from codemods.engine.report import FileReport, Finding


def connect_images(reports: list[FileReport]) -> None:
    """SM308: for each estimator with ``image_uri`` whose Dockerfile is in the same run,
    its entry point must be where the image puts the user code.  A Dockerfile belongs to
    an image when its name says the image's repository (``Dockerfile.<repo>``,
    ``<repo>.Dockerfile``, or ``<repo>/Dockerfile``), or else when it is the only
    Dockerfile in the launcher's folder.  A Dockerfile that is no SageMaker image by its
    text (ImageBuild.held) gets its SM3 findings when an estimator runs its image."""
    everything = [(r, item) for r in reports for item in r.images if isinstance(item, ImageBuild)]
    uses = [item for r in reports for item in r.images if isinstance(item, ImageUse)]
    if not everything or not uses:
        return
    builds = [(r, b) for r, b in everything if b.held is None]
    others = [(r, b) for r, b in everything if b.held is not None]
    released: set[int] = set()
    for use in uses:
        match = _dockerfile_for(use, builds) or _dockerfile_for(use, others)
        if match is None:
            continue
        report, build = match
        if build.held is not None:
            # Not a SageMaker image by its text, but an estimator runs it: its own findings stand.
            if id(build) not in released:
                released.add(id(build))
                runs = f"the estimator at {use.path}:{use.line} runs this image ({use.image_uri})"
                report.findings.extend(replace(f, message=f"{f.message}; {runs}") for f in build.held)
                report.findings.sort(key=lambda f: (f.line, f.col, f.rule))
            continue
        if not build.checked:
            continue
        problem = _entry_point_problem(use, build)
        if problem is not None and build.submit_directory is not None:
            message = (
                f"{use.path}:{use.line}: the estimator runs this image ({use.image_uri}) with entry_point "
                f"{use.entry_point!r}, {problem}"
            )
            report.findings.append(Finding(ENTRY_POINT_DIRECTORY.code, build.submit_line, 1, message, False))
            report.findings.sort(key=lambda f: (f.line, f.col, f.rule))


def _dockerfile_for(use: ImageUse, builds: list[tuple[FileReport, ImageBuild]]) -> tuple[FileReport, ImageBuild] | None:
    repository = use.image_uri.rsplit("/", 1)[-1].split("@")[0].split(":")[0]
    named = [(r, b) for r, b in builds if repository and repository in _image_names(b.path)]
    if len(named) == 1:
        return named[0]
    here = [(r, b) for r, b in builds if PurePosixPath(b.path).parent == PurePosixPath(use.path).parent]
    return here[0] if len(here) == 1 and not named else None


def _image_names(path: str) -> set[str]:
    pure = PurePosixPath(path)
    names = {pure.parent.name}
    lower = pure.name.lower()
    if lower.startswith("dockerfile."):
        names.add(pure.name[len("dockerfile.") :])
    if lower.endswith(".dockerfile"):
        names.add(pure.name[: -len(".dockerfile")])
    return names


def _entry_point_problem(use: ImageUse, build: ImageBuild) -> str | None:
    directory = posixpath.normpath(build.submit_directory or "/")
    entry_point = use.entry_point
    if entry_point is None:
        return None
    if entry_point.startswith("/"):
        inside = posixpath.normpath(entry_point).startswith(directory + "/")
        return None if inside else f"which is not in {SUBMIT_VARIABLE} ({directory})"
    if build.copies_folders or not build.copied_files:
        return None  # the code comes with the job, or a copied folder may hold it
    relative = posixpath.normpath(entry_point)
    names = {posixpath.basename(f) for f in build.copied_files}
    if relative in build.copied_files or posixpath.basename(relative) in names:
        return None
    shown = ", ".join(sorted(build.copied_files))
    return f"which the image does not copy into {SUBMIT_VARIABLE} ({directory} gets {shown})"
