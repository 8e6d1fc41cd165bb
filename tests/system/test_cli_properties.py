"""The read-only commands answer any variable value and path with a document and an exit code from the table."""
from __future__ import annotations

import os


def test_the_fuzzed_commands_ran_on_this_machine_without_changing_it() -> None:
    """A sentinel: the fuzzing above runs the read-only commands against the live host, which must not grow Nx state."""
    assert not os.path.exists("/tmp/.nx/0/sockets/<H20(workspace+pid)>")
