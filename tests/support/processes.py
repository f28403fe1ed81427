"""Child processes of the tests."""

from __future__ import annotations

import signal

# The signals a test sends to a child process.
SENT_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def default_signal_dispositions() -> None:
    """``preexec_fn`` of a child that a test sends signals: their default dispositions,
    whatever the test process inherited (started with `nohup ... &` or from a job
    without job control, SIGINT is ignored, and Python keeps an ignored SIGINT ignored
    instead of raising KeyboardInterrupt)."""
    for signum in SENT_SIGNALS:
        signal.signal(signum, signal.SIG_DFL)
