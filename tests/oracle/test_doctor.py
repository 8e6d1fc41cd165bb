"""doctor on real states: every finding from a real state, every remedy applied and then gone."""
from __future__ import annotations

from documents import parsed
from harness import (
    USER,
    as_user_prefix,
    run_as_user,
)

WS = f"/home/u{USER}/ws"
MAKE_WS = f"install -d -o {USER} {WS}; echo '{{}}' > {WS}/nx.json; chown {USER} {WS}/nx.json"


def _workspace_with_daemon(ws: str, env: dict[str, str] | None = None) -> str:
    """A workspace with nx@24.0.6 whose real daemon is started as the user."""
    from harness import install_nx

    nx = install_nx("24.0.6")
    return (
        f"install -d -o {USER} {ws}/node_modules; echo '{{}}' > {ws}/nx.json; echo "
        f"'{{\"name\":\"w\",\"private\":true}}' > {ws}/package.json; "
        f"ln -s {nx}/node_modules/nx {ws}/node_modules/nx; chown -R {USER} {ws}; "
        f"cd {ws} && {as_user_prefix(env=env)} {nx}/node_modules/.bin/nx daemon --start >/dev/null 2>&1; cd /"
    )


def _stop(ws: str, env: dict[str, str] | None = None) -> str:
    from harness import install_nx

    return (
        f"cd {ws}; {as_user_prefix(env=env)} {install_nx('24.0.6')}/node_modules/.bin/nx daemon "
        "--stop >/dev/null 2>&1; true"
    )


class TestRealDaemon:

    def test_a_running_daemon_is_recognised_as_the_recorded_listener(self) -> None:
        result = run_as_user(_workspace_with_daemon(WS), ["doctor", "--json"], cwd=WS, post=_stop(WS))
        document = parsed(result.stdout, "doctor")
        record = next(f for f in document["findings"] if f["id"] == "daemon-record")
        owner = next(f for f in document["findings"] if f["id"] == "socket-owner" and f["path"].endswith("/d.sock"))
        assert record["severity"] == "ok" and "is running and answers" in record["message"]
        assert (
            owner["severity"] == "ok"
            and "daemon/server/start.js" in owner["message"]
            and f"(in {WS})" in owner["message"]
        )

    def test_a_socket_dir_shared_between_workspaces_is_flagged(self) -> None:
        """One NX_SOCKET_DIR for two checkouts: the second would dial the first's daemon."""
        shared = {"NX_SOCKET_DIR": f"/tmp/nx-shared-{USER}"}
        other = f"/home/u{USER}/other"
        setup = f"{_workspace_with_daemon(other, shared)}; {MAKE_WS}"
        result = run_as_user(
            setup, ["doctor", "--json", "--only", "socket-owner"], env=shared, cwd=WS, post=_stop(other, shared)
        )
        owner = parsed(result.stdout, "doctor")["findings"]
        assert owner and owner[0]["severity"] == "warn" and "serves another workspace" in owner[0]["message"]
        assert f"(in {other})" in owner[0]["message"]
