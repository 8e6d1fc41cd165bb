"""A peer's link where your binding cache belongs is never followed, by ``cache list`` or by ``doctor`` (whose audit
runs as you under root's ``--user`` and ``--all-users`` too): Nx refuses the directory, so there is nothing to list."""

from __future__ import annotations

import shlex
import subprocess

import pytest
from harness import PEER, USER, as_user_prefix, stage_nxsock

WS = f"/home/u{USER}/ws"
CACHE = f"/tmp/.nx/{USER}/native-cache"


@pytest.mark.tool("strace")
@pytest.mark.parametrize("args", [["cache", "list"], ["cache", "list", "--json"], ["doctor", "--json"], ["doctor"]],
                         ids=" ".join)
def test_a_peers_link_at_the_cache_is_not_followed(args: list[str]) -> None:
    python, pythonpath = stage_nxsock()
    command = f"{as_user_prefix(USER)} PYTHONPATH={shlex.quote(pythonpath)} {shlex.quote(python)} -m nxsock " \
              + " ".join(map(shlex.quote, args))
    script = f"""set -e
mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t tmpfs -o mode=0755 tmpfs /home
install -d -o {USER} -g {USER} /home/u{USER} {WS}
echo '{{}}' > {WS}/nx.json
install -d -m 1777 /tmp/.nx
install -d -m 0700 -o {USER} -g {USER} /tmp/.nx/{USER}
install -d -m 0755 -o {PEER} -g {PEER} /tmp/peer-target /tmp/peer-target/24.0.6
touch /tmp/peer-target/24.0.6/24.0.6-aaaaaaaaaaaa-nx.linux-x64-gnu.node
ln -s /tmp/peer-target {CACHE}
chown -h {PEER}:{PEER} {CACHE}
cd {WS}
set +e
strace -f -qq -o /tmp/.trace -e trace=%file,%desc {command} >/tmp/.out 2>&1
echo "<<<RC $?"
grep -v '= -1' /tmp/.trace | grep -E 'peer-target/|native-cache/|open(at)?\\(.*(peer-target|native-cache)"' \\
  | grep -v O_NOFOLLOW || true
echo '<<<OUT'; cat /tmp/.out
"""
    proc = subprocess.run(["unshare", "-m", "--propagation", "private", "bash", "-c", script], cwd="/",
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120)
    head, _, out = proc.stdout.partition("<<<OUT\n")
    rc_line, _, followed = head.partition("\n")
    assert rc_line.startswith("<<<RC ") and int(rc_line.split()[1]) < 70, proc.stdout + proc.stderr
    assert "Traceback" not in out, out
    # Reading the link and lstat-ing its target judge it, as Nx does; opening it or anything beneath it follows it.
    assert followed.strip() == "", followed
