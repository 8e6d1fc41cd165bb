"""Root's ``doctor --user``: a child audit that fails says so, and ``--json`` still prints exactly one document."""
from __future__ import annotations

import json
import os

import pytest

from nxsock import exitcodes
from nxsock.audit import as_user
from nxsock.audit.request import DoctorRequest
from nxsock.core.host_overrides import HostOverrides
from nxsock.output import doctor


def _failing_drop(uid: int) -> None:
    raise ModuleNotFoundError("No module named 'shutil'")  # as when the audited user cannot read root's interpreter


@pytest.mark.parametrize("json_flag", [False, True])
def test_a_child_that_fails_says_why(json_flag: bool, monkeypatch: pytest.MonkeyPatch,
                                     capfd: pytest.CaptureFixture[str]) -> None:
    """It ended with exit 70 and no word at all (the exception was swallowed), and --json printed nothing."""
    monkeypatch.setattr(as_user, "drop_to", _failing_drop)
    code = doctor.audit_as_user(DoctorRequest(HostOverrides(), "nxsock", output="json" if json_flag else "text",
                                              user=os.getuid()))
    out, err = capfd.readouterr()
    assert f"the audit as uid {os.getuid()} failed: ModuleNotFoundError" in err
    if json_flag:
        assert json.loads(out)["status"] == "error" and code == exitcodes.PROBLEM
    else:
        assert out == "" and code == exitcodes.SOFTWARE
