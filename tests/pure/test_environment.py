"""The workspace root, .env files and Nx version, found as Nx finds them."""

from __future__ import annotations

from conftest import USER, machine

from nxsock.core.dotenv import load_dotenv_variables, parse_dotenv
from nxsock.core.fsview import Entry
from nxsock.core.workspace import find_workspace_root, read_nx_version


def test_dotenv_parsing_follows_the_dotenv_package() -> None:
    text = "export A=1\nB = 'two words' # c\nC=\"x\\ny\"\n# comment\nD=plain # trailing\nE=\n"
    assert parse_dotenv(text) == {"A": "1", "B": "two words", "C": "x\ny", "D": "plain", "E": ""}


def test_the_environment_wins_then_the_first_file() -> None:
    view = machine(
        files={"/home/ada/acme/.local.env": "X=local\nY=${HOME}/y\n", "/home/ada/acme/.env": "X=plain\nZ=$X-z\n"}
    )
    found = load_dotenv_variables(view, "/home/ada/acme", {"HOME": "/home/ada", "Z": "env"})
    assert found["X"].value == "local" and found["X"].source == "/home/ada/acme/.local.env"
    assert found["Y"].value == "/home/ada/y"
    assert "Z" not in found  # already in the environment


def test_expansion_defaults() -> None:
    view = machine(files={"/home/ada/acme/.env": "A=${UNSET:-fallback}\nB=${HOME:+set}\nC=\\$HOME\n"})
    found = load_dotenv_variables(view, "/home/ada/acme", {"HOME": "/home/ada"})
    assert (found["A"].value, found["B"].value, found["C"].value) == ("fallback", "set", "$HOME")


def test_an_expanded_value_keeps_what_was_written_and_what_it_drew_from_the_environment() -> None:
    """What the reports need to show a refused file's value as written: the text, and the names read from the
    process."""
    view = machine(files={"/home/ada/acme/.env": "A=/tmp/x-${TOKEN}-$B\nB=file\nC=${NONE:-d}\nD=plain\nE=${A}\n"})
    found = load_dotenv_variables(view, "/home/ada/acme", {"TOKEN": "s3cret"})
    assert found["A"] == ("/tmp/x-s3cret-file", "/home/ada/acme/.env", "/tmp/x-${TOKEN}-$B", ("TOKEN",))
    assert found["C"].expanded_from == () and found["C"].written == "${NONE:-d}"
    assert found["D"].written is None and found["D"].expanded_from == ()
    assert found["E"].value == "/tmp/x-s3cret-file" and found["E"].expanded_from == (
        "TOKEN",
    )  # drawn through another key


def test_workspace_root_markers_and_candidates() -> None:
    """A marker wins at once; node_modules/nx only makes a candidate and the outermost one wins."""
    nx_pkg = Entry("file", USER, USER, 0o644)
    view = machine({
        "/home/ada/acme/apps": Entry("dir", USER, USER, 0o755),
        "/srv": Entry("dir", 0, 0, 0o755), "/srv/a": Entry("dir", 0, 0, 0o755), "/srv/a/b": Entry("dir", 0, 0, 0o755),
        "/srv/a/node_modules/nx/package.json": nx_pkg, "/srv/a/b/node_modules/nx/package.json": nx_pkg,
    })
    assert find_workspace_root(view, "/home/ada/acme/apps", None) == ("/home/ada/acme", "nx.json")
    assert find_workspace_root(view, "/srv/a/b", None) == ("/srv/a", "node_modules/nx")
    assert find_workspace_root(view, "/srv", None) == ("/srv", "current directory")
    assert find_workspace_root(view, "/srv", "/elsewhere") == ("/elsewhere", "NX_WORKSPACE_ROOT_PATH")


def test_version_is_read_from_the_installed_package() -> None:
    view = machine(files={"/home/ada/acme/node_modules/nx/package.json": '{"name": "nx", "version": "24.0.6"}'})
    assert read_nx_version(view, "/home/ada/acme") == "24.0.6"
    assert (
        read_nx_version(machine(files={"/home/ada/acme/node_modules/nx/package.json": "[]"}), "/home/ada/acme") is None
    )


def test_a_dotenv_that_is_a_link_is_read_through_it_as_node_reads_it() -> None:
    """Found by the red team: O_NOFOLLOW skipped a linked .env, so the audit predicted other directories than Nx
    uses."""
    view = machine(
        {"/home/ada/envs": Entry("dir", USER, USER, 0o755)},
        links={"/home/ada/acme/.env": "/home/ada/envs/acme"},
        files={"/home/ada/envs/acme": "NX_WORKSPACE_DATA_DIRECTORY=/home/ada/data\n"},
    )
    found = load_dotenv_variables(view, "/home/ada/acme", {"HOME": "/home/ada"})
    assert found["NX_WORKSPACE_DATA_DIRECTORY"].value == "/home/ada/data"
    assert (
        found["NX_WORKSPACE_DATA_DIRECTORY"].source == "/home/ada/acme/.env"
    )  # the trust rule judges the link, then its target
