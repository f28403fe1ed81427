"""Dockerfiles: parsed with Docker's own parser (the ``dockerfile`` package wraps
BuildKit's Go parser, so continuations, heredocs, JSON forms and escape directives read
exactly as ``docker build`` reads them), then reduced to the facts the container checks
need: the image's stages, its build variables expanded, what it installs and copies.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field

import dockerfile

_VARIABLE = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)(?::?[-+][^}]*)?\}|([A-Za-z_][A-Za-z0-9_]*))")


class DockerfileSyntaxError(Exception):
    def __init__(self, message: str, line: int | None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


@dataclass
class Instruction:
    cmd: str  # upper case: FROM, RUN, ENV, ...
    line: int  # 1-based first line
    words: tuple[str, ...]  # arguments with build variables expanded
    text: str  # the arguments as one string, variables expanded, heredoc bodies included
    flags: tuple[str, ...] = ()
    # Variables used without a value (ARG without default, never set): name -> None.
    unset: tuple[str, ...] = ()


@dataclass
class Stage:
    image: str  # the FROM image, variables expanded
    line: int
    name: str | None
    instructions: list[Instruction] = field(default_factory=list)
    unset: tuple[str, ...] = ()


@dataclass
class DockerfileFacts:
    stages: list[Stage]
    # Lines where a build variable is given its value (ARG/ENV): wheel tags written there.
    definitions: dict[str, Instruction] = field(default_factory=dict)

    def image_chain(self) -> list[Stage]:
        """The stages the built image is made of: the last stage and the stages it is
        built FROM (``FROM builder``), root first."""
        if not self.stages:
            return []
        by_name = {s.name.lower(): s for s in self.stages if s.name}
        chain = [self.stages[-1]]
        while chain[-1].image.lower() in by_name and by_name[chain[-1].image.lower()] not in chain:
            chain.append(by_name[chain[-1].image.lower()])
        return list(reversed(chain))


def parse(text: str) -> DockerfileFacts:
    try:
        commands = dockerfile.parse_string(text)
    except dockerfile.GoParseError as error:
        raise DockerfileSyntaxError(str(error), _error_line(text, str(error))) from None
    variables: dict[str, str | None] = {}
    facts = DockerfileFacts([])
    for command in commands:
        cmd = command.cmd.upper()
        raw = " ".join(command.value)
        for heredoc in command.heredocs:
            raw += "\n" + heredoc.content
        expanded, unset = _expand(raw, variables)
        words = tuple(_expand(word, variables)[0] for word in command.value)
        instruction = Instruction(cmd, command.start_line, words, expanded, command.flags, unset)
        if cmd == "FROM":
            name = command.value[2] if len(command.value) >= 3 and command.value[1].upper() == "AS" else None
            facts.stages.append(Stage(words[0] if words else "", command.start_line, name, unset=unset))
            continue
        if cmd == "ARG":
            for word in words:
                key, has_value, value = word.partition("=")
                if has_value or key not in variables:
                    variables[key] = unquote(value) if has_value else variables.get(key)
                facts.definitions[key] = instruction
        elif cmd == "ENV":
            for key, value in zip(words[::2], words[1::2]):
                variables[key] = unquote(value)
                facts.definitions[key] = instruction
        if facts.stages:
            facts.stages[-1].instructions.append(instruction)
    return facts


def unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value


def _expand(text: str, variables: dict[str, str | None]) -> tuple[str, tuple[str, ...]]:
    """``$VAR`` and ``${VAR}`` replaced by their values; the names that have none."""
    unset: list[str] = []

    def value(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2)
        known = variables.get(name)
        if known is None:
            unset.append(name)
            return match.group(0)
        return known

    return _VARIABLE.sub(value, text), tuple(unset)


def _error_line(text: str, message: str) -> int | None:
    """The Go parser names no line: the shortest prefix of the file that fails with the
    same message ends on the line at fault."""
    lines = text.splitlines(keepends=True)

    def fails(count: int) -> bool:
        try:
            dockerfile.parse_string("".join(lines[:count]))
        except dockerfile.GoParseError as error:
            return str(error) == message
        return False

    if not lines or not fails(len(lines)):
        return None
    low, high = 1, len(lines)
    while low < high:
        middle = (low + high) // 2
        if fails(middle):
            high = middle
        else:
            low = middle + 1
    return low


def normalize_destination(destination: str, workdir: str) -> str:
    """A COPY/ADD destination as an absolute path (relative ones are under WORKDIR);
    a trailing slash (a folder) is kept."""
    folder = destination.endswith("/") or destination in (".", "./")
    path = posixpath.normpath(posixpath.join(workdir or "/", destination))
    return path.rstrip("/") + "/" if folder else path
