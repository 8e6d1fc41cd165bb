"""Lines a person pastes run where they are pasted: a ``sudo`` line names the nxsock root can run, with the values
the person gave, proven by running it as root."""
from __future__ import annotations

import shlex
import subprocess

from harness import USER, as_user_prefix, stage_nxsock

#: A console script as pip writes one into a virtual environment's ``bin/`` (``nxsock = nxsock.cli:main``).
CONSOLE_SCRIPT = """#!{python}
import sys
sys.path.insert(0, {pythonpath!r})
from nxsock.cli import main
sys.exit(main())
"""


def _in_namespace(script: str) -> subprocess.CompletedProcess[str]:
    """*script* as root in a private mount namespace with a fresh /tmp and /home."""
    body = f"set -e\nmount -t tmpfs -o mode=1777 tmpfs /tmp\nmount -t tmpfs -o mode=0755 tmpfs /home\n{script}"
    return subprocess.run(["unshare", "-m", "--propagation", "private", "bash", "-c", body], cwd="/",
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120)


class TestDoctorUserAsNonRoot:
    """``doctor --user 8602`` as a user printed ``sudo nxsock doctor --user UID``: the placeholder, and a name root's
    path may not find."""

    def test_a_venv_script_is_named_by_its_path_with_the_uid_given_and_the_line_runs_as_root(self) -> None:
        python, pythonpath = stage_nxsock()
        venv = f"/home/u{USER}/my venv/bin"  # a space: the path must come out as one word
        script = CONSOLE_SCRIPT.format(python=python, pythonpath=pythonpath)
        other = USER + 1
        run = _in_namespace(f"""
install -d -o {USER} -g {USER} /home/u{USER}
mkdir -p {shlex.quote(venv)}
printf '%s' {shlex.quote(script)} > {shlex.quote(venv + "/nxsock")}
chmod 0755 {shlex.quote(venv + "/nxsock")}
cd /home/u{USER}
set +e
{as_user_prefix(USER)} {shlex.quote(venv + "/nxsock")} doctor --user {other} 2>&1; echo "<<<RC $?"
line=$({as_user_prefix(USER)} {shlex.quote(venv + "/nxsock")} doctor --user {other} 2>&1 \\
  | sed -n 's/^.*needs root: sudo //p')
eval "$line --json" > /dev/null; echo "<<<ROOT $?"
""")
        expected = f"nxsock doctor: --user needs root: sudo {shlex.quote(venv + '/nxsock')} doctor --user {other}\n"
        assert run.stdout.startswith(expected + "<<<RC 77\n"), run.stdout + run.stderr
        assert run.stdout.split("<<<ROOT ")[1].strip() in ("0", "1"), run.stdout + run.stderr  # root's audit ran

    def test_run_as_python_m_the_plain_name_with_the_uid_given(self) -> None:
        python, pythonpath = stage_nxsock()
        run = _in_namespace(f"""
install -d -o {USER} -g {USER} /home/u{USER}
cd /home/u{USER}
set +e
{as_user_prefix(USER)} PYTHONPATH={shlex.quote(pythonpath)} {shlex.quote(python)} -m nxsock doctor --user 8602
echo "<<<RC $?"
""")
        assert run.stderr == "nxsock doctor: --user needs root: sudo nxsock doctor --user 8602\n"
        assert run.stdout == "<<<RC 77\n"
