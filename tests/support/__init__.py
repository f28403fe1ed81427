"""What the tests share, in one place (test modules import from here, never from each other).

- ``paths``: the project's folders (ROOT, FIXTURES, SNAPSHOTS, DATA).
- ``fixtures``: the fixture scripts, converted as a run over their folder would convert them.
- ``rule_cases``: every rule's cases, read from the rule objects.
- ``executed``: running fixtures in eager mode and on torch_xla, and the checks on those runs;
  ``runners/``: the scripts those runs start by path (``python runners/xla_runner.py SCRIPT``).
- ``ci``: whether torch_xla is installed and whether CI is set (the executed tests' gate).
- ``repos``: git work trees and the real pre-commit, for the hook and README tests.
- ``cli``: the command line in this process, and a probe of the modules it loads.
- ``notebooks``: notebooks written as Jupyter writes them.
- ``reports``: report formats parsed back.
"""
