"""The machine around Nx, as pure values: tmpfiles.d precedence, a zombie's state line, mount-table verdicts."""
from __future__ import annotations

import typing as t

import pytest

from nxsock.act.tmpfiles import DROP_IN, EARLY_DROP_IN, container_lines, drop_in_for, tmpfiles_lines
from nxsock.core.fsview import Entry, MemoryView
from nxsock.core.liveness import state_of_stat_line
from nxsock.core.mounts import mount_of, parse_mountinfo
from nxsock.output.paths_json import fix_line

DIRS = ("/etc", "/etc/tmpfiles.d", "/run", "/run/tmpfiles.d", "/usr", "/usr/lib", "/usr/lib/tmpfiles.d")


def _view(files: t.Mapping[str, str], links: t.Mapping[str, str] | None = None) -> MemoryView:
    entries = {"/": Entry("dir", 0, 0, 0o755), **{d: Entry("dir", 0, 0, 0o755) for d in DIRS}}
    entries.update({path: Entry("file", 0, 0, 0o644, len(text)) for path, text in files.items()})
    entries.update({path: Entry("link", 0, 0, 0o777) for path in (links or {})})
    return MemoryView(entries, links, files=files)


class TestTmpfilesPrecedence:
    def test_files_are_read_by_name_whatever_their_directory_and_the_first_line_for_a_path_wins(self) -> None:
        """/usr/lib/a.conf is read before /etc/b.conf: its line for /tmp/.nx is obeyed, the later one ignored."""
        view = _view({"/usr/lib/tmpfiles.d/a.conf": "d /tmp/.nx 0755 1000 1000 -\n",
                      "/etc/tmpfiles.d/b.conf": "d /tmp/.nx 1777 root root -\nx /tmp/.nx/*\n"})
        obeyed = container_lines(tmpfiles_lines(view))
        assert [(line.where, line.fields[0]) for line in obeyed] == [("/usr/lib/tmpfiles.d/a.conf:1", "d"),
                                                                     ("/etc/tmpfiles.d/b.conf:2", "x")]

    def test_a_same_named_file_in_etc_masks_run_and_usr_lib_and_a_link_to_dev_null_masks_with_nothing(self) -> None:
        view = _view({"/usr/lib/tmpfiles.d/nx.conf": "d /tmp/.nx 0755 1000 1000 -\n",
                      "/run/tmpfiles.d/nx.conf": "d /tmp/.nx 0700 1000 1000 -\n",
                      "/etc/tmpfiles.d/nx.conf": "d /tmp/.nx 1777 root root -\n"})
        assert [line.file for line in container_lines(tmpfiles_lines(view))] == ["/etc/tmpfiles.d/nx.conf"]
        masked = _view({"/usr/lib/tmpfiles.d/nx.conf": "d /tmp/.nx 0755 1000 1000 -\n"},
                       links={"/etc/tmpfiles.d/nx.conf": "/dev/null"})
        assert container_lines(tmpfiles_lines(masked)) == []

    def test_the_drop_in_goes_where_it_is_read_first_or_nowhere(self) -> None:
        """nxsock.conf where nothing conflicts, 00-nxsock.conf before nx.conf, none before 0.conf."""
        assert drop_in_for([]) == DROP_IN
        late = container_lines(tmpfiles_lines(_view({"/etc/tmpfiles.d/zz.conf": "d /tmp/.nx 0755 1 1 -\n"})))
        assert drop_in_for(late) == DROP_IN
        nx = container_lines(tmpfiles_lines(_view({"/etc/tmpfiles.d/nx.conf": "d /tmp/.nx 0755 1 1 -\n"})))
        assert drop_in_for(nx) == EARLY_DROP_IN
        first = container_lines(tmpfiles_lines(_view({"/usr/lib/tmpfiles.d/0.conf": "d /tmp/.nx 0755 1 1 -\n"})))
        assert drop_in_for(first) is None
        foreign = container_lines(tmpfiles_lines(_view({"/etc/tmpfiles.d/nxsock.conf": "d /tmp/.nx 0755 1 1 -\n"})))
        assert drop_in_for(foreign, lambda path: False) == EARLY_DROP_IN  # a same-named file not nxsock's


class TestBootRuleFindings:
    @pytest.mark.parametrize(("line", "words"), [
        ("d /tmp/.nx 0755 1000 1000 -", "its mode is 0755"),
        ("d /tmp/.nx 1777 1000 1000 -", "hands /tmp/.nx to 1000:1000"),
        ("d /tmp/.nx 1777 root root 10d", "its age 10d"),
    ])
    def test_a_bad_rule_for_the_container_is_a_warning_naming_file_and_line_with_the_drop_in(
        self, line: str, words: str
    ) -> None:
        from nxsock.audit.checks_host import _judge_boot_rules

        ctx = _context(_view({"/etc/tmpfiles.d/nx.conf": f"# mine\n{line}\n"}))
        (finding,) = t.cast(list, _judge_boot_rules(ctx, systemd=True))
        assert (
            finding.severity == "warn"
            and finding.message.startswith("/etc/tmpfiles.d/nx.conf:2 ")
            and words in finding.message
        )
        assert fix_line(finding.advice) == "sudo nxsock provision --tmpfiles --install"

    def test_lines_below_the_container_that_age_or_hand_over_a_level_are_warnings_and_exclusions_are_not(self) -> None:
        from nxsock.audit.checks_host import _judge_boot_rules

        ctx = _context(
            _view(
                {
                    "/etc/tmpfiles.d/nx.conf": "d /tmp/.nx 1777 root root -\nx /tmp/.nx/*\n"
                    "d /tmp/.nx/1000 0755 1001 1001 -\ne /tmp/.nx/1002 - - - 1d\nd /tmp/.nx/1003 0700 1003 1003 -\n"
                }
            )
        )
        found = t.cast(list, _judge_boot_rules(ctx, systemd=True))
        assert [f.severity for f in found] == ["ok", "warn", "warn"]
        assert found[1].path == "/tmp/.nx/1000" and found[2].path == "/tmp/.nx/1002" and "age" in found[2].message


def _context(view: MemoryView) -> t.Any:
    """A doctor context over *view*, for the checks that read only the view and the remedy policy."""
    from nxsock.audit.findings import Context
    from nxsock.core.fresh_machine import fresh_environment
    from nxsock.core.resolver import resolve
    from nxsock.core.wording import context_for

    resolution = resolve(fresh_environment("linux", nx_version="24.0.6"), view)
    return Context(resolution, view, context_for(resolution, view), None, 0, (), ())


class TestLiveness:
    def test_the_state_is_read_after_the_last_parenthesis_so_a_name_cannot_forge_it(self) -> None:
        assert state_of_stat_line("7 (a) R (b)) Z 1 7") == "Z"
        assert state_of_stat_line("7 (node) S 1 7") == "S"


class TestNetworkMounts:
    def test_an_nfs_mount_under_the_home_nx_is_a_network_filesystem(self) -> None:
        """The fixture: NFS under ~/.nx, the rest local."""
        table = parse_mountinfo("1 0 8:1 / / rw - ext4 /dev/sda1 rw\n"
                                "2 1 0:40 /export/ada /home/ada/.nx rw,relatime - nfs4 srv:/export rw,vers=4.2\n")
        mount = mount_of(table, "/home/ada/.nx/sockets/0123456789abcdef0123")
        assert mount is not None and mount.network and mount.source == "srv:/export"
        home = mount_of(table, "/home/ada/ws")
        assert home is not None and not home.network
