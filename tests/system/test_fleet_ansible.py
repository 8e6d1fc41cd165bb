"""``contrib/ansible/nxsock.yml`` run by the real ``ansible-playbook`` twice: the first run changes, the second not.

ansible-core is not a dependency of the test extra (every CI run would install it and its own dependencies,
and its supported Pythons move faster than nxsock's): this test installs it once from PyPI into a virtual
environment in the test cache, keyed by the interpreter, and reuses it afterwards.  The playbook runs with
``connection: local`` as root in a private mount namespace: a fresh tmpfs ``/tmp`` (so ``/tmp/.nx`` is new)
and a scratch directory bound over ``/etc/tmpfiles.d``; the units go to a scratch directory and no timer is
started (no systemd runs here).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import harness
import pytest

REPO = Path(__file__).resolve().parents[2]
PLAYBOOK = REPO / "contrib" / "ansible" / "nxsock.yml"
RECAP = re.compile(r"^localhost\s*:\s*(.*)$", re.MULTILINE)


def ansible_playbook() -> Path:
    """``ansible-playbook`` from a virtual environment in the test cache, made on first use (pip, from PyPI)."""
    # The real interpreter, not the venv pytest runs in: a venv's python links to its maker's, and a checkout's
    # .venv under /tmp is hidden by the scenario's fresh tmpfs (stage 2 of CI runs from such a venv).
    python = Path(sys.executable).resolve()
    key = hashlib.sha256(f"{python}\0{sys.version}".encode()).hexdigest()[:12]
    venv = harness.cache_dir() / f"ansible-{sys.version_info.major}.{sys.version_info.minor}-{key}"
    tool = venv / "bin" / "ansible-playbook"
    with harness._Lock(harness.cache_dir() / ".lock-ansible"):
        if not (venv / ".installed").exists():
            subprocess.run([str(python), "-m", "venv", "--clear", str(venv)], check=True, capture_output=True)
            result = subprocess.run(
                [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "ansible-core>=2.15"],
                capture_output=True,
                text=True,
                timeout=600,
            )
            if result.returncode != 0:
                raise RuntimeError(f"pip install ansible-core failed:\n{result.stderr[-2000:]}")
            (venv / ".installed").write_text("ok")
    return tool


def _recaps(output: str) -> list[dict[str, int]]:
    return [{k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", line)} for line in RECAP.findall(output)]


def staged_contrib() -> Path:
    """``contrib/`` copied into the test cache: a checkout under /tmp (CI's clone) is hidden by the scenario's tmpfs,
    and the playbook finds the units beside it (``playbook_dir/../systemd``)."""
    source = REPO / "contrib"
    digest = hashlib.sha256()
    for file in sorted(source.rglob("*")):
        if file.is_file():
            digest.update(str(file.relative_to(source)).encode() + b"\0" + file.read_bytes())
    target = harness.cache_dir() / f"contrib-{digest.hexdigest()[:16]}"
    with harness._Lock(harness.cache_dir() / ".lock-ansible"):
        if not target.exists():
            partial = target.with_name(f"{target.name}.{os.getpid()}")
            shutil.rmtree(partial, ignore_errors=True)
            shutil.copytree(source, partial)
            for root, _dirs, files in os.walk(partial):
                os.chmod(root, 0o755)
                for name in files:
                    os.chmod(os.path.join(root, name), 0o644)
            partial.rename(target)
    return target


@pytest.mark.tool("/etc/tmpfiles.d")
def test_the_playbook_provisions_and_a_second_run_changes_nothing() -> None:
    tool = ansible_playbook()
    playbook = staged_contrib() / PLAYBOOK.relative_to(REPO / "contrib")
    python, pythonpath = harness.stage_nxsock()
    q = shlex.quote
    extra = {
        "nxsock_bin": "/tmp/bin/nxsock",
        "nxsock_textfile_dir": "/tmp/textfile",
        "nxsock_systemd_dir": "/tmp/systemd",
        "nxsock_start_timer": False,
        "nxsock_become": False,
        "ansible_python_interpreter": str(tool.parent / "python"),
    }
    run = (
        f"env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/tmp/ansible-home LANG=C.UTF-8 ANSIBLE_NOCOLOR=1 "
        f"ANSIBLE_LOCAL_TEMP=/tmp/ansible-local ANSIBLE_REMOTE_TEMP=/tmp/ansible-remote ANSIBLE_RETRY_FILES_ENABLED=0 "
        f"{q(str(tool))} -i localhost, -c local -e {q(json.dumps(extra))} {q(str(playbook))}"
    )
    script = f"""set -e
mount -t tmpfs -o mode=1777 tmpfs /tmp
mkdir /tmp/etc-tmpfiles /tmp/bin /tmp/systemd /tmp/ansible-home
mount --bind /tmp/etc-tmpfiles /etc/tmpfiles.d
printf '#!/bin/sh\\nPYTHONPATH=%s PYTHONDONTWRITEBYTECODE=1 exec %s -m nxsock "$@"\\n' {q(pythonpath)} {q(python)} \\
  > /tmp/bin/nxsock
chmod 0755 /tmp/bin/nxsock
cd /
set +e
echo '<<<FIRST'; {run}; echo "<<<FIRSTRC $?"
echo '<<<SECOND'; {run}; echo "<<<SECONDRC $?"
echo '<<<CONTAINER'; stat -c '%F %U %G %a' /tmp/.nx
echo '<<<DROPIN'; cat /etc/tmpfiles.d/nxsock.conf
echo '<<<UNITS'; ls /tmp/systemd; cat /tmp/systemd/nxsock-metrics.service
echo '<<<PROVISION'; /tmp/bin/nxsock provision --json
echo '<<<TMPFILES'; /tmp/bin/nxsock provision --tmpfiles --install --json
echo '<<<END'
"""
    proc = subprocess.run(
        ["unshare", "-m", "--propagation", "private", "bash", "-c", script],
        capture_output=True,
        stdin=subprocess.DEVNULL,
        timeout=600,
        cwd="/",
    )
    out = proc.stdout.decode("utf-8", "replace")
    sections = {chunk.partition("\n")[0]: chunk.partition("\n")[2] for chunk in out.split("<<<")[1:]}
    print("first run:", RECAP.search(sections.get("FIRST", "")) and RECAP.search(sections["FIRST"])[0])
    print("second run:", RECAP.search(sections.get("SECOND", "")) and RECAP.search(sections["SECOND"])[0])
    assert any(k.startswith("FIRSTRC 0") for k in sections), out[-4000:] + proc.stderr.decode()[-2000:]
    assert any(k.startswith("SECONDRC 0") for k in sections), out[-4000:]
    (first,), (second,) = _recaps(sections["FIRST"]), _recaps(sections["SECOND"])
    # /tmp/.nx, the drop-in, the directory, the units
    assert first["changed"] == 4 and first["failed"] == 0, sections["FIRST"]
    assert second["changed"] == 0 and second["failed"] == 0, sections["SECOND"]
    assert sections["CONTAINER"].strip() == "directory root root 1777"
    assert sections["DROPIN"].startswith("# Written by nxsock provision --tmpfiles --install.")
    assert sections["UNITS"].split()[:2] == ["nxsock-metrics.service", "nxsock-metrics.timer"]
    for line in ("ExecStart=/tmp/bin/nxsock doctor --all-users --format openmetrics \\\n",
                 "    --output /tmp/textfile/nxsock.prom\n",
                 "ExecStart=/tmp/bin/nxsock provision --check --format openmetrics \\\n"):
        assert line in sections["UNITS"], sections["UNITS"]
    assert "ReadWritePaths=/tmp/textfile" in sections["UNITS"]
    provision = json.loads(sections["PROVISION"])
    expected = (False, False, "/tmp/.nx is provisioned; nothing to change.")
    assert (provision["changed"], provision["failed"], provision["msg"]) == expected
    tmpfiles = json.loads(sections["TMPFILES"])
    assert (tmpfiles["changed"], tmpfiles["failed"]) == (False, False) and "already installed" in tmpfiles["msg"]
