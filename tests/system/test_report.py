"""``doctor --report`` (Markdown to paste) and ``doctor --format github`` (workflow commands), on a real hostile state.

The state is built as root in a private mount namespace and the command run
as an unprivileged uid: a user called ``ada`` whose name is also part of a
workspace path outside the home, a workspace directory whose name holds a
backtick, a pipe, a percent sign, a newline with a Markdown heading after
it and a terminal escape, and a ``disabled`` marker whose recorded reason
tries to close a code fence, start a heading and open HTML.  The Markdown is
read back with a real CommonMark parser (markdown-it-py).
"""
from __future__ import annotations

import json
import shlex
import typing as t

import pytest
from harness import PEER, USER, run_as_user
from pure.test_report import _tokens

from nxsock.output.report import Masks

#: Its module fixture builds the states once: under pytest-xdist the module runs on one worker.
pytestmark = pytest.mark.xdist_group("report")


NAME = "ada"
HOME = "/home/ada"


#: A workspace outside the home whose path holds the user name and every character that could break Markdown.
WS = "/tmp/ada-work/we`ir|d%25 ``x\n## planted heading\x1b[31m"


REASON = "```\n# planted\n<script>alert(1)</script> | a | b |\x1b]0;title\x07\n~~~"
#: NX_DAEMON=true and Nx installed: the marker is all that keeps the daemon off, even on a host that is a container.
ENV = {"HOME": HOME, "USER": NAME, "LOGNAME": NAME, "NX_DAEMON": "true"}


def _setup() -> str:
    ws, d = shlex.quote(WS), shlex.quote(f"{WS}/.nx/workspace-data/d")
    return (
        f"install -d -o {USER} -g {USER} {HOME}; install -d -o {USER} -g {USER} /tmp/ada-work {ws}; "
        f"echo '{{}}' > {ws}/nx.json; install -d -o {USER} {ws}/.nx {ws}/.nx/workspace-data; install "
        f"-d -m 0700 -o {USER} {d}; "
        f"printf %s {shlex.quote(REASON)} > {d}/disabled; install -d {ws}/node_modules/nx; "
        f"echo '{{\"version\": \"24.0.6\"}}' > {ws}/node_modules/nx/package.json; chown -R {USER}:{USER} {ws}"
    )


def _doctor(*args: str) -> t.Any:
    result = run_as_user(_setup(), ["doctor", *args], env=ENV, cwd=WS)
    assert "Traceback" not in result.stderr, result.stderr
    assert result.tree_before == result.tree_after
    return result


@pytest.fixture(scope="module")
def runs() -> dict[str, t.Any]:
    return {"json": _doctor("--json"), "report": _doctor("--report"), "raw": _doctor("--report", "--no-redact"),
            "github": _doctor("--format", "github"), "github-strict": _doctor("--format", "github", "--strict")}




class TestReport:

    def test_the_report_masks_the_home_and_the_user_name_everywhere(self, runs: dict[str, t.Any]) -> None:
        """Not one ``ada`` is left — in the home, in a path outside it, in the environment line; --no-redact keeps
        them."""
        report = runs["report"].stdout
        assert NAME not in report and HOME not in report, [line for line in report.splitlines() if NAME in line]
        assert (
            "/tmp/<user>-work/" in report and "HOME \\~," in report
        )  # in text, Markdown's own characters are backslashed
        raw = runs["raw"].stdout
        assert "/tmp/ada-work" in raw and f"HOME {HOME}," in raw and "<user>" not in raw

    def test_the_report_is_markdown_no_name_from_disk_can_break(self, runs: dict[str, t.Any]) -> None:
        """Parsed by CommonMark: only the report's own headings, no HTML but its own folds, the fences it opened, the
        names shown escaped."""
        report = runs["report"].stdout
        tokens = _tokens(report)
        headings = [tokens[i + 1].content for i, tok in enumerate(tokens) if tok.type == "heading_open"]
        own = ("nxsock doctor report", "Findings", "Other checks", "Resolved paths", "✗ error: ", "⚠ warning: ")
        assert headings and all(h.startswith(own) for h in headings), headings
        html = [tok.content.strip() for tok in tokens if tok.type in ("html_block", "html_inline")]
        folds = ("<details><summary>Other checks (", "<details><summary>Resolved paths</summary>", "</details>")
        assert html and all(block.startswith(folds) and "\n" not in block for block in html), html
        assert {tok.info for tok in tokens if tok.type == "fence"} <= {"sh", "text"}
        recorded = next(tok.content for tok in tokens if tok.type == "fence" and tok.info == "text")
        assert "<script>alert(1)</script> | a | b |\\x1b]0;title\\x07" in recorded and recorded.splitlines()[0] == "```"
        codes = [tok.content for tok in tokens if tok.type == "code_inline"]
        assert any("we`ir|d%25 ``x\\x0a## planted heading\\x1b[31m" in code for code in codes), codes
        assert not any(ch in report for ch in "\x1b\x07\r")
        findings = json.loads(runs["json"].stdout)["findings"]
        problems = [f for f in findings if f["severity"] in ("warn", "error")]
        others = [f for f in findings if f["severity"] in ("ok", "info")]
        assert len(headings) == 2 + len(problems), headings  # the others and the paths are folded, not headed
        assert (f"<details><summary>Other checks ({len(others)})</summary>" in html) == bool(others), html
        assert any(f["id"] == "daemon-disabled" for f in problems)

    def test_every_finding_is_in_the_report_with_its_fix(self, runs: dict[str, t.Any]) -> None:
        findings = json.loads(runs["json"].stdout)["findings"]
        fences = [
            tok.content.strip() for tok in _tokens(runs["report"].stdout) if tok.type == "fence" and tok.info == "sh"
        ]
        masks = Masks((HOME,), (NAME,))
        for finding in findings:
            if finding["severity"] in ("warn", "error") and finding["remedy"]:
                assert masks.apply(finding["remedy"]).replace("\n", "\\x0a") in fences, finding["remedy"]
        assert runs["report"].returncode == runs["json"].returncode

    def test_github_annotations_are_one_per_problem_escaped_and_the_exit_code_unchanged(
        self, runs: dict[str, t.Any]
    ) -> None:
        """One workflow command per error or warning, of its level, the notes only with --strict; no planted newline
        splits one."""
        findings = json.loads(runs["json"].stdout)["findings"]
        level = {"error": "error", "warn": "warning", "info": "notice"}
        lines = runs["github"].stdout.splitlines()
        expected = [level[f["severity"]] for f in findings if f["severity"] in ("error", "warn")]
        assert expected and [line.split(" ", 1)[0][2:] for line in lines] == expected, lines
        strict = runs["github-strict"].stdout.splitlines()
        with_notes = [level[f["severity"]] for f in findings if f["severity"] != "ok"]
        assert "notice" in with_notes and [line.split(" ", 1)[0][2:] for line in strict] == with_notes, strict
        assert all(line.startswith("::") and " title=nxsock doctor%3A " in line for line in lines)
        assert "\r" not in runs["github"].stdout and "\x1b" not in runs["github"].stdout
        assert any("we`ir|d%2525 ``x\\x0a## planted heading\\x1b[31m" in line for line in lines)
        assert runs["github"].returncode == runs["json"].returncode


# -- reports that leak nothing: issue 21, findings 6, 7 and 10 ---------------------------------------------------------

#: Secrets in the victim's environment, each of a shape the redaction knows (none of them real).
TOKENS = {
    "GITHUB_TOKEN": "ghp_" + "R3dT3amF1nd1ngS1x" * 2 + "ab",
    "AWS_ACCESS_KEY_ID": "AKIA" + "Q7W3E5R7T9Y1U3I5",
    "NPM_TOKEN": "npm_" + "L3akM3N0tPl3as3" * 2 + "xyzAB1",
    "SLACK_TOKEN": "xoxb-" + "1234567890-abcdefghij",
}
PEER_WS = "/tmp/peer-ws"
#: The peer's .env: every variable nxsock reads set from the victim's secrets, as dotenv-expand would expand them.
PEER_DOTENV = ("NX_SOCKET_DIR=/tmp/leak-${GITHUB_TOKEN}\n"
               "NX_WORKSPACE_DATA_DIRECTORY=/tmp/data-$AWS_ACCESS_KEY_ID\n"
               "NX_NATIVE_FILE_CACHE_DIRECTORY=/tmp/cache-${NPM_TOKEN:-none}-${SLACK_TOKEN}\n")


def _peer_dotenv_run(args: t.Sequence[str]) -> t.Any:
    setup = (
        f"install -d -o {USER} -g {USER} {HOME}; install -d -m 0755 -o {PEER} {PEER_WS}; echo "
        f"'{{}}' > {PEER_WS}/nx.json; "
        f"printf %s {shlex.quote(PEER_DOTENV)} > {PEER_WS}/.env; chown -R {PEER} {PEER_WS}"
    )
    result = run_as_user(setup, list(args), env={**ENV, **TOKENS}, cwd=PEER_WS)
    assert "Traceback" not in result.stderr, result.stderr
    assert result.tree_before == result.tree_after
    return result


def _leaked(result: t.Any) -> list[str]:
    """Each secret found anywhere in what the command printed, whole or as a good part of it."""
    out = (result.stdout + result.stderr).encode()
    return [name for name, value in TOKENS.items() if value.encode() in out or value[4:20].encode() in out]


class TestAPeersDotenvLeaksNoSecretOfYours:
    """Finding 6: a peer's ``.env`` holding ``NX_SOCKET_DIR=/tmp/leak-${GITHUB_TOKEN}`` is expanded with the victim's
    environment (as Nx does), and the prediction keeps that value; no report shows it."""

    @pytest.mark.parametrize(
        "args",
        [
            ["doctor", "--report"],
            ["doctor", "--report", "--no-redact"],
            ["doctor", "--format", "github", "--strict"],
            ["paths", "--json"],
            ["doctor", "--json"],
        ],
        ids=" ".join,
    )
    def test_no_secret_appears_in_the_output(self, args: list[str]) -> None:
        result = _peer_dotenv_run(args)
        assert _leaked(result) == [], result.stdout
        assert "/tmp/leak-${GITHUB_TOKEN}" in result.stdout, result.stdout  # shown as written in the file

    def test_paths_json_says_why_and_predicts_with_the_value_nx_uses(self) -> None:
        document = json.loads(_peer_dotenv_run(["paths", "--json"]).stdout)
        variable = document["variables"]["NX_SOCKET_DIR"]
        assert variable["value"] == "/tmp/leak-${GITHUB_TOKEN}" and variable["source"] == f"{PEER_WS}/.env"
        assert "GITHUB_TOKEN" in variable["withheld"] and "trust rule" in variable["withheld"], variable
        assert document["variables"]["HOME"]["withheld"] is None
        daemon = document["sockets"]["daemon"]
        assert daemon["path"] == "/tmp/leak-${GITHUB_TOKEN}/d.sock"
        # the length is the one of the path Nx builds, with the token in it
        assert daemon["length"] == len(f"/tmp/leak-{TOKENS['GITHUB_TOKEN']}/d.sock"), daemon


#: A token URL as Nx's daemon log quotes a failing git fetch, and credentials of every shape the redaction knows.
LOG_SECRET = "ghp_" + "D43m0nL0gT0k3n" * 2 + "abcdefgh"
DAEMON_ERROR = ("Error: git fetch failed: https://x-access-token:" + LOG_SECRET + "@github.com/acme/repo.git\n"
                "Messages from the log:\n"
                "[NX Daemon Server] - 2026 - fetching https://deploy:hunter2hunter2@git.example.com/x.git\n"
                "[NX Daemon Server] - 2026 - npm token npm_" + "Xx1" * 12 + " and AWS key AKIA" + "Z9X8C7V6B5N4M3L2\n"
                "More information: /w/.nx/workspace-data/d/daemon.log\n")


def test_a_token_in_the_daemons_log_is_quoted_redacted() -> None:
    """Finding 6: Nx's own daemon log (the error file and the ``disabled`` reason) is quoted redacted, in both
    formats."""
    d = f"{HOME}/ws/.nx/workspace-data/d"
    setup = (
        f"install -d -o {USER} -g {USER} {HOME} {HOME}/ws {HOME}/ws/.nx {HOME}/ws/.nx/workspace-data; echo "
        f"'{{}}' > {HOME}/ws/nx.json; "
        f"install -d -m 0700 -o {USER} {d}; printf %s {shlex.quote(DAEMON_ERROR)} > {d}/daemon-error.log; "
        f"printf %s {shlex.quote(DAEMON_ERROR)} > {d}/disabled; chown -R {USER} {HOME}/ws"
    )
    for args in (
        ["doctor", "--report"],
        ["doctor", "--format", "github", "--strict"],
        ["doctor", "--report", "--no-redact"],
    ):
        result = run_as_user(setup, args, env=ENV, cwd=f"{HOME}/ws")
        out = result.stdout + result.stderr
        assert "daemon-error" in out and "Traceback" not in out, out
        for secret in (LOG_SECRET, "hunter2hunter2", "Xx1" * 12, "Z9X8C7V6B5N4M3L2"):
            assert secret not in out, (args, secret, out)
        assert "https://\\<redacted\\>@github.com" in out or "https://<redacted>@github.com" in out, out


def _passwd_entry(name: str, uid: int, home: str) -> str:
    """Shell: *name* as the passwd entry of *uid*, in a copy of /etc/passwd bound over it (this namespace only)."""
    return (f"cp /etc/passwd /tmp/.passwd-{uid}; echo '{name}:x:{uid}:{uid}::{home}:/bin/sh' >> /tmp/.passwd-{uid}; "
            f"mount --bind /tmp/.passwd-{uid} /etc/passwd")


class TestMasksMaskOnlyTheUser:
    """Finding 7: masks match whole path parts, never Nx's own names, and cover sudo's invoking user and a linked
    home."""

    @pytest.mark.parametrize("name", ["nx", "node"])
    def test_a_user_named_like_nx_s_own_files_leaves_them_intact(self, name: str) -> None:
        ws = f"/tmp/{name}-work"
        nm = f"{ws}/node_modules"
        setup = (
            f"{_passwd_entry(name, USER, f'/home/{name}')}; install -d -o {USER} -g {USER} /home/{name}; "
            f"install -d -o {USER} {ws} {nm} {nm}/nx {nm}/@nx {nm}/@nx/nx-linux-x64-gnu; echo '{{}}' > {ws}/nx.json; "
            f"echo '{{\"version\": \"24.0.6\"}}' > {nm}/nx/package.json; echo bin > "
            f"{nm}/@nx/nx-linux-x64-gnu/nx.linux-x64-gnu.node; "
            f"chown -R {USER} {ws}; install -d -m 1777 /tmp/.nx"
        )  # provisioned: its boot warning names /tmp/.nx in prose
        result = run_as_user(
            setup, ["doctor", "--report"], env={"HOME": f"/home/{name}", "USER": name, "LOGNAME": name}, cwd=ws
        )
        report = result.stdout
        assert "Traceback" not in result.stderr, result.stderr
        assert "`/tmp/.nx/" in report and "/nx-console.sock`" in report and "nx.linux-x64-gnu.node" in report, report
        assert "recreates /tmp/.nx:" in report, report
        assert "/tmp/\\<user\\>-work" in report or "/tmp/<user>-work" in report, report  # the user's own name is masked
        assert f"/tmp/{name}-work" not in report
        garbled = [
            line
            for line in report.splitlines()
            if ".<user>" in line or "<user>-console" in line or "\\<user\\>-console" in line or ".\\<user\\>" in line
        ]
        assert garbled == [], garbled

    @pytest.mark.parametrize("name", ["tmp", "var", "home"])
    def test_a_user_named_like_a_system_directory_leaves_tmp_nx_intact(self, name: str) -> None:
        """Red team: a user called ``tmp`` had ``/tmp/.nx`` reported as ``/<user>/.nx`` (``var``: ``/var/tmp``,
        ``home``: other users' homes); the system's own top directories are no one's name."""
        ws = f"/tmp/{name}-work"
        setup = (
            f"{_passwd_entry(name, USER, f'/home/u{USER}')}; install -d -o {USER} {ws}; echo '{{}}' > {ws}/nx.json; "
            f"install -d -m 1777 /tmp/.nx; install -d -o {PEER} /home/peer"
        )
        env = {
            "HOME": f"/home/u{USER}",
            "USER": name,
            "LOGNAME": name,
            "TMPDIR": "/var/tmp",
            "NX_SOCKET_DIR": "/home/peer/s",
        }
        result = run_as_user(setup, ["doctor", "--report"], env=env, cwd=ws)
        report = result.stdout
        assert "Traceback" not in result.stderr and result.tree_before == result.tree_after, result.stderr
        assert "/tmp/.nx/" in report and "/var/tmp" in report and "/home/peer/s" in report, report
        assert "/tmp/\\<user\\>-work" in report or "/tmp/<user>-work" in report, (
            report
        )  # the user's own name is still masked
        garbled = [line for line in report.splitlines() if "/<user>/" in line or "/\\<user\\>/" in line]
        assert garbled == [], garbled

    def test_under_sudo_the_invoking_users_home_and_name_are_masked(self) -> None:
        """Root's report, run through sudo from the user's workspace: the user's home (from passwd) and name are
        hidden."""
        home = "/home/sudoer"
        setup = (
            f"{_passwd_entry('sudoer', USER, home)}; install -d -o {USER} -g {USER} {home} {home}/ws; echo "
            f"'{{}}' > {home}/ws/nx.json"
        )
        env = {
            "HOME": "/root",
            "USER": "root",
            "LOGNAME": "root",
            "SUDO_USER": "sudoer",
            "SUDO_UID": str(USER),
            "SUDO_GID": str(USER),
        }
        result = run_as_user(setup, ["doctor", "--report"], env=env, uid=0, cwd=f"{home}/ws")
        assert "Traceback" not in result.stderr, result.stderr
        assert "sudoer" not in result.stdout, [line for line in result.stdout.splitlines() if "sudoer" in line]
        assert "`~<user>/ws`" in result.stdout, result.stdout

    def test_a_home_reached_through_a_link_is_masked_by_its_real_path(self) -> None:
        setup = (
            f"install -d -o {USER} -g {USER} /tmp/real-home /tmp/real-home/ws; echo '{{}}' > "
            "/tmp/real-home/ws/nx.json; "
            f"rm -rf {HOME}; ln -s /tmp/real-home {HOME}"
        )
        result = run_as_user(setup, ["doctor", "--report"], env=ENV, cwd=f"{HOME}/ws")
        assert "Traceback" not in result.stderr, result.stderr
        assert "real-home" not in result.stdout, [line for line in result.stdout.splitlines() if "real-home" in line]
        assert "`~/ws`" in result.stdout, result.stdout

    def test_roots_report_for_a_user_keeps_root_root(self) -> None:
        """``sudo nxsock doctor --user UID --report`` with ``USER=root``: the chown that hands /tmp/.nx to root says
        root:root."""
        setup = f"install -d -m 1777 -o {PEER} /tmp/.nx; install -d -o {USER} /tmp/ws; echo '{{}}' > /tmp/ws/nx.json"
        result = run_as_user(
            setup,
            ["doctor", "--user", str(USER), "--report"],
            env={"HOME": "/root", "USER": "root", "LOGNAME": "root"},
            uid=0,
            cwd="/tmp/ws",
        )
        assert "Traceback" not in result.stderr, result.stderr
        assert "sudo chown -h root:root -- /tmp/.nx" in result.stdout, result.stdout
        assert "<user>" not in result.stdout and "\\<user\\>" not in result.stdout, result.stdout


#: Red team: a secret of no known shape holding what a finding escapes — a private key's newline, a tab, a backslash,
#: ESC.
ODD_SECRET = "-----BEGIN KEY-----\nMIIEvQIBADANBgkqhkiG\tW1nd0w5\\Pa55`x\x1b[0m-----END KEY-----"


@pytest.mark.parametrize(
    "args",
    [
        ["doctor", "--report"],
        ["doctor", "--report", "--no-redact"],
        ["doctor", "--format", "github", "--strict"],
        ["paths", "--json"],
        ["doctor", "--json"],
    ],
    ids=" ".join,
)
def test_a_withheld_secret_holding_a_newline_is_not_shown_escaped(args: list[str]) -> None:
    """``doctor``'s environment note quotes the value by ``repr``: the victim's multi-line key, drawn in by a peer's
    ``.env``, was shown whole (``'/tmp/k-----BEGIN KEY-----\\nMIIE…'``) in ``--report`` and ``--format github``."""
    dotenv = "NX_SOCKET_DIR=/tmp/k${DEPLOY_KEY}\n"
    setup = (
        f"install -d -o {USER} -g {USER} {HOME}; install -d -m 0755 -o {PEER} {PEER_WS}; echo "
        f"'{{}}' > {PEER_WS}/nx.json; "
        f"printf %s {shlex.quote(dotenv)} > {PEER_WS}/.env; chown -R {PEER} {PEER_WS}"
    )
    result = run_as_user(setup, args, env={**ENV, "DEPLOY_KEY": ODD_SECRET}, cwd=PEER_WS)
    out = result.stdout + result.stderr
    assert "Traceback" not in out and result.tree_before == result.tree_after, out
    for piece in ("MIIEvQIBADANBgkqhkiG", "W1nd0w5", "Pa55", "BEGIN KEY", "END KEY"):
        assert piece not in out, (piece, [line for line in out.splitlines() if piece in line])
    assert "${DEPLOY_KEY}" in out


#: Red team: AWS secret keys are base64 and hold ``/`` (AWS's own example does), sometimes ``//``.
SLASHED_SECRETS = {
    "slashes": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "double": "wJalrXUtnFEMI//K7MDENGbPxRfiCYEXAMPLEKEY",
    "dot": "wJalrXUtnFEMI/./K7MDENGbPxRfiCYEXAMPLEKEY",
    "trailing": "wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY/",
}


@pytest.mark.parametrize("secret", SLASHED_SECRETS.values(), ids=SLASHED_SECRETS.keys())
@pytest.mark.parametrize(
    "args", [["doctor", "--report"], ["doctor", "--format", "github", "--strict"], ["paths", "--json"]], ids=" ".join
)
def test_a_withheld_secret_holding_slashes_is_not_shown_normalised(args: list[str], secret: str) -> None:
    """The resolver normalises ``/tmp/s-${KEY}`` (``//`` and ``/./`` collapse, a trailing ``/`` goes) and ``paths
    --json`` lists each parent to create (``/tmp/s-wJalrXUtnFEMI``): neither spelling is the value as drawn, and both
    were shown."""
    dotenv = "NX_SOCKET_DIR=/tmp/s-${AWS_SECRET_ACCESS_KEY}\n"
    setup = (
        f"install -d -o {USER} -g {USER} {HOME}; install -d -m 0755 -o {PEER} {PEER_WS}; echo "
        f"'{{}}' > {PEER_WS}/nx.json; "
        f"printf %s {shlex.quote(dotenv)} > {PEER_WS}/.env; chown -R {PEER} {PEER_WS}"
    )
    result = run_as_user(setup, args, env={**ENV, "AWS_SECRET_ACCESS_KEY": secret}, cwd=PEER_WS)
    out = result.stdout + result.stderr
    assert "Traceback" not in out and result.tree_before == result.tree_after, out
    for piece in ("wJalrXUtnFEMI", "K7MDENG", "CYEXAMPLEKEY"):
        assert piece not in out, (piece, [line[:300] for line in out.splitlines() if piece in line])
    assert "${AWS_SECRET_ACCESS_KEY}" in out


@pytest.mark.parametrize("name", ["CI", "GITHUB_ACTIONS", "BUILDKITE"])
@pytest.mark.parametrize("args", [["paths", "--json"], ["doctor", "--report"], ["doctor", "--json"]], ids=" ".join)
def test_a_daemon_switch_drawing_a_secret_is_withheld(args: list[str], name: str) -> None:
    """Red team: a peer's ``.env`` setting only ``CI=${DB_PASSWORD}`` steers no path, so nothing was judged and
    ``paths --json`` showed ``variables.CI.value`` expanded with the victim's secret."""
    dotenv = f"{name}=x${{DB_PASSWORD}}\n"
    setup = (
        f"install -d -o {USER} -g {USER} {HOME}; install -d -m 0755 -o {PEER} {PEER_WS}; echo "
        f"'{{}}' > {PEER_WS}/nx.json; "
        f"printf %s {shlex.quote(dotenv)} > {PEER_WS}/.env; chown -R {PEER} {PEER_WS}"
    )
    result = run_as_user(setup, args, env={**ENV, "DB_PASSWORD": "HunterTwoSecretZ"}, cwd=PEER_WS)
    out = result.stdout + result.stderr
    assert "Traceback" not in out and result.tree_before == result.tree_after, out
    assert "HunterTwo" not in out, [line[:300] for line in out.splitlines() if "HunterTwo" in line]
