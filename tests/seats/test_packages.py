"""The install command a refusal names is this machine's: read from
/etc/os-release, by the distribution and the families it is like."""

from __future__ import annotations

from pathlib import Path

import pytest

from referee.seats.packages import install_hint, os_release


@pytest.mark.parametrize(
    ("release", "hint"),
    [
        ({"ID": "debian"}, "install bubblewrap: apt-get install bubblewrap"),
        ({"ID": "ubuntu", "ID_LIKE": "debian"}, "install bubblewrap: apt-get install bubblewrap"),
        ({"ID": "linuxmint", "ID_LIKE": "ubuntu debian"}, "install bubblewrap: apt-get install bubblewrap"),
        ({"ID": "fedora"}, "install bubblewrap: dnf install bubblewrap"),
        ({"ID": "rocky", "ID_LIKE": "rhel centos fedora"}, "install bubblewrap: dnf install bubblewrap"),
        ({"ID": "arch"}, "install bubblewrap: pacman -S bubblewrap"),
        ({"ID": "opensuse-tumbleweed", "ID_LIKE": "opensuse suse"}, "install bubblewrap: zypper install bubblewrap"),
        ({"ID": "plan9"}, "install bubblewrap with this system's package manager"),
        ({}, "install bubblewrap with this system's package manager"),
    ],
)
def test_the_hint_names_the_machines_package_manager(release: dict[str, str], hint: str) -> None:
    assert install_hint("bubblewrap", release) == hint


def test_a_package_named_otherwise_gets_its_own_name() -> None:
    assert install_hint("util-linux", {"ID": "alpine"}) == "install util-linux: apk add util-linux-misc"


def test_os_release_is_read_with_quotes_and_comments(tmp_path: Path) -> None:
    f = tmp_path / "os-release"
    f.write_text("# comment\nNAME=\"Debian GNU/Linux\"\nID=debian\nID_LIKE=''\n\nbroken line\n")
    assert os_release(f) == {"NAME": "Debian GNU/Linux", "ID": "debian", "ID_LIKE": ""}
    assert os_release(tmp_path / "missing") == {}


def test_a_sandbox_refused_for_a_missing_tool_names_the_command_in_the_same_line() -> None:
    import dataclasses

    from referee.seats.sandbox import probe_host

    host = dataclasses.replace(probe_host(), bwrap=None, prlimit=None, root=False)
    problems = host.problems()
    hint = install_hint("bubblewrap")
    assert any(p.startswith("bubblewrap (bwrap) is not installed: ") and p.endswith(hint) for p in problems)
    assert any(p.endswith(install_hint("util-linux")) for p in problems)
