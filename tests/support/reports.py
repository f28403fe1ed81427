"""Report formats parsed back, for the tests of what the command line prints."""

from __future__ import annotations

import re
from urllib.parse import unquote

_COMMAND = re.compile(r"^::(?P<level>error|warning|notice) (?P<properties>[^:]*)::(?P<message>.*)$")


def parse_github(output: str) -> list[dict[str, str]]:
    """Workflow commands back to their level, properties and message (unescaped)."""
    commands = []
    for line in output.splitlines():
        match = _COMMAND.match(line)
        assert match, line
        properties = dict(p.split("=", 1) for p in match["properties"].split(","))
        commands.append(
            {
                "level": match["level"],
                "message": unquote(match["message"]),
                **{k: unquote(v) for k, v in properties.items()},
            }
        )
    return commands
