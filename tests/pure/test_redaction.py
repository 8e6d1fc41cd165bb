"""The one redaction a public report goes through (``nxsock.core.redaction``), by properties over generated text."""

from __future__ import annotations

import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nxsock.core.redaction import REDACTED, redact, withhold
from nxsock.core.terminal import printable

ALNUM = string.ascii_letters + string.digits
B64 = ALNUM + "/+"


def _token(prefix: str, alphabet: str, low: int, high: int) -> st.SearchStrategy[str]:
    return st.text(alphabet, min_size=low, max_size=high).map(lambda body: prefix + body)


#: Every shape the redaction promises to hide, generated.
SECRETS = st.one_of(
    st.sampled_from("pousr").flatmap(lambda k: _token(f"gh{k}_", ALNUM, 36, 60)),
    _token("github_pat_", ALNUM + "_", 22, 82),
    st.sampled_from(["AKIA", "ASIA"]).flatmap(lambda p: _token(p, string.ascii_uppercase + string.digits, 16, 16)),
    _token("npm_", ALNUM, 36, 36),
    st.sampled_from("abpr").flatmap(lambda k: _token(f"xox{k}-", ALNUM + "-", 10, 50)),
    st.tuples(*(st.text(ALNUM + "-_", min_size=8, max_size=40) for _ in range(3))).map(
        lambda p: f"eyJ{p[0]}.eyJ{p[1]}.{p[2]}"
    ),
    # an AWS secret access key: 40 of base64, with upper, lower case and a digit
    st.tuples(st.text(B64, min_size=37, max_size=37), st.permutations("Aa1")).map(
        lambda p: "x" + "".join(p[1]) + p[0][1:]
    ),
)
#: What may stand around a secret in a log line: words, paths, punctuation, other lines.
AROUND = st.text(string.ascii_letters + string.digits + " /.:-=\n'\"()[]@#", max_size=40)
#: Text that cannot hold a secret's shape: no upper case, no ``_``, ``:``, ``@``, ``=`` and no ``x``.
PLAIN = st.text("abcdefghijklmnopqrstuvwyz0123456789 /.-,;()#\n", max_size=200)


def _separated(before: str, after: str, secret: str) -> str:
    """*secret* between *before* and *after*, a blank either side so it stands as a word, as logs print one."""
    return f"{before} {secret} {after}"


class TestRedact:
    @given(AROUND, SECRETS, AROUND)
    def test_no_secret_of_a_known_shape_survives(self, before: str, secret: str, after: str) -> None:
        """Wherever a token stands in a line, the redacted line does not hold it."""
        shown = redact(_separated(before, after, secret))
        assert secret not in shown and REDACTED in shown

    @given(
        AROUND,
        st.text(ALNUM + "-._~", min_size=1, max_size=20),
        st.text(ALNUM + "-._~!$&*+;=%", min_size=1, max_size=30),
        st.sampled_from(["https", "http", "git+ssh", "redis", "postgres"]),
    )
    def test_the_credentials_of_a_url_are_hidden(self, before: str, user: str, password: str, scheme: str) -> None:
        shown = redact(f"{before} {scheme}://{user}:{password}@example.com/x")
        assert f":{password}@" not in shown and f"{scheme}://{REDACTED}@example.com/x" in shown

    @given(st.text(max_size=300))
    def test_it_is_idempotent_on_any_text(self, text: str) -> None:
        once = redact(text)
        assert redact(once) == once

    @given(PLAIN)
    def test_text_without_a_secrets_shape_is_unchanged(self, text: str) -> None:
        assert redact(text) == text

    @pytest.mark.parametrize("text", [
        "/tmp/.nx/1001/sockets/e26151583e05690e0e3e/d.sock",
        "/tmp/.nx/1001/native-cache/24.0.6/24.0.6-008320a42b4e-nx.linux-x64-gnu.node",
        "commit 4b825dc642cb6eb9a060e54bf8d69288fbee4904",
        "sudo chown -h root:root -- /tmp/.nx && test ! -L /tmp/.nx && sudo chmod 1777 -- /tmp/.nx",
        "export NX_SOCKET_DIR=/home/ada/.nxs",
        "git clone https://github.com/nrwl/nx.git",
        "/home/ada/acme/node_modules/@nx/nx-linux-x64-gnu/nx.linux-x64-gnu.node",
    ])
    def test_nx_s_own_paths_and_commands_are_unchanged(self, text: str) -> None:
        assert redact(text) == text

    @pytest.mark.parametrize(
        ("text", "secret"),
        [
            (
                "https://x-access-token:ghp_abcdefghijklmnopqrstuvwxyz0123456789@github.com/o/r.git",
                "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
            ),
            (
                "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            ),
            ("//registry.npmjs.org/:_authToken=0123abcd-ef45-6789", "0123abcd-ef45-6789"),
            ("NX_SOCKET_DIR=/tmp/leak-ghs_abcdefghijklmnopqrstuvwxyz0123456789", "ghs_abcdefghijklmnopqrstuvwxyz"),
        ],
    )
    def test_secrets_in_nx_s_logs_and_variables(self, text: str, secret: str) -> None:
        assert secret not in redact(text)


class TestWithhold:
    @given(st.text(max_size=60), st.text(string.ascii_letters + string.digits + "_-/.", min_size=1, max_size=40),
           st.text(max_size=60), st.from_regex(r"\A[A-Z_][A-Z0-9_]{0,20}\Z"))
    def test_a_withheld_value_is_shown_as_its_reference(self, before: str, value: str, after: str, name: str) -> None:
        """A value drawn from the environment never survives, wherever it stands, unless its reference holds it."""
        reference = "${" + name + "}"
        shown = withhold(before + value + after, [(value, reference)])
        if value not in reference:
            assert value not in shown
        assert reference in shown

    def test_the_longest_is_replaced_first(self) -> None:
        pairs = [("abc", "${A}"), ("/tmp/leak-abcdef", "/tmp/leak-${B}")]
        assert withhold("/tmp/leak-abcdef/d.sock and abc", pairs) == "/tmp/leak-${B}/d.sock and ${A}"

    @given(
        st.text(ALNUM, min_size=4, max_size=12),
        st.sampled_from("\n\t\r\\\x1b\x07\u200e'\""),
        st.text(ALNUM, min_size=4, max_size=12),
    )
    def test_a_value_holding_an_escaped_character_is_withheld_as_a_finding_quotes_it(
        self, head: str, odd: str, tail: str
    ) -> None:
        """Red team: ``doctor``'s environment note shows ``NX_SOCKET_DIR='…'`` by ``repr`` (and other texts by the
        terminal's escapes), so a secret holding a newline (a private key) was shown, escaped, whole, in ``--report``
        and ``--format github``."""
        head, tail = "Qz" + head, "Qz" + tail  # never a piece of the text around it
        secret = head + odd + tail
        for text in (f"NX_SOCKET_DIR={f'/tmp/s-{secret}'!r} (from /w/.env)", f"dir /tmp/s-{printable(secret)}/d.sock"):
            shown = withhold(text, [(f"/tmp/s-{secret}", "/tmp/s-${KEY}"), (secret, "${KEY}")])
            assert head not in shown and tail not in shown, shown
            assert "${KEY}" in shown


class TestRedTeamShapes:
    """Red team over the redaction: quoted values after a secret's name, and a URL's credentials after a digit."""

    @pytest.mark.parametrize("text, secret", [
        ('password="hunter2hunter2"', "hunter2hunter2"),
        ("token: 'Tk3nV4lu3xyz'", "Tk3nV4lu3xyz"),
        ('{"password": "two words here"}', "two words"),  # a JSON config as a daemon log quotes it
        ('"_authToken":"Npm0ld5tyl3"', "Npm0ld5tyl3"),
        ("DB_PASSWORD='p4ss w0rd'", "p4ss"),
        ("fetch failed:1https://deploy:hunter2hunter2@git.example.com/x.git", "hunter2hunter2"),
        ("/tmp/ci_ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8/d.sock", "A1b2C3d4E5f6G7h8"),  # a name built from the token
        ("/tmp/build_npm_" + "Ab1" * 12, "Ab1Ab1Ab1Ab1"),
        ("key_AKIAQ7W3E5R7T9Y1U3I5", "Q7W3E5R7T9Y1U3I5"),
    ])
    def test_it_is_hidden(self, text: str, secret: str) -> None:
        shown = redact(text)
        assert secret not in shown and REDACTED in shown, shown
        assert redact(shown) == shown

    def test_the_quotes_stay(self) -> None:
        assert redact('{"password": "x y"}') == '{"password": "<redacted>"}'
