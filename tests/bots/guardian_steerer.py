"""Tries to steer the referee's guardian, then plays first-legal.

`target=PGID report=PATH`: finds the guardian (a child of this bot's parent,
the referee, with the tag variable's name on its command line) and tries to
make it register PGID: by opening the guardian's stdin through /proc, by
opening the referee's sockets through /proc, and by copying the guardian's
and the referee's descriptors with pidfd_getfd (which works only for a
process allowed to ptrace them). Each attempt is written to PATH as
`what: ok` or `what: ERRNO-NAME`, then `done`.
"""

import ctypes
import errno
import os

from _botlib import first_legal, options, serve

SYS_PIDFD_OPEN, SYS_PIDFD_GETFD = 434, 438
opts = options()
line = f"+{opts['target']}\n".encode()
referee = os.getppid()
results = []


def attempt(what, fn):
    try:
        fn()
        results.append(f"{what}: ok")
    except OSError as exc:
        results.append(f"{what}: {errno.errorcode.get(exc.errno, exc.errno)}")


def write_path(path):
    fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)


def write_stolen(pid, target_fd):
    libc = ctypes.CDLL(None, use_errno=True)
    pidfd = libc.syscall(SYS_PIDFD_OPEN, pid, 0)
    if pidfd < 0:
        raise OSError(ctypes.get_errno(), "pidfd_open")
    try:
        fd = libc.syscall(SYS_PIDFD_GETFD, pidfd, target_fd, 0)
        if fd < 0:
            raise OSError(ctypes.get_errno(), "pidfd_getfd")
        try:
            os.write(fd, line)
        finally:
            os.close(fd)
    finally:
        os.close(pidfd)


guardian = None
for name in os.listdir("/proc"):
    if not name.isdigit():
        continue
    try:
        with open(f"/proc/{name}/stat", "rb") as fh:
            text = fh.read()
        with open(f"/proc/{name}/cmdline", "rb") as fh:
            cmdline = fh.read()
    except OSError:
        continue
    ppid = int(text[text.rindex(b")") + 2 :].split()[1])
    if ppid == referee and b"CHICAGO_REFEREE_BOT" in cmdline:
        guardian = int(name)
results.append(f"guardian: {guardian}")
if guardian is not None:
    attempt("guardian stdin via /proc", lambda: write_path(f"/proc/{guardian}/fd/0"))
    attempt("guardian stdin via pidfd_getfd", lambda: write_stolen(guardian, 0))
for fd_name in os.listdir(f"/proc/{referee}/fd"):
    try:
        link = os.readlink(f"/proc/{referee}/fd/{fd_name}")
    except OSError:
        continue
    if link.startswith("socket:"):
        attempt(f"referee fd {fd_name} via /proc", lambda: write_path(f"/proc/{referee}/fd/{fd_name}"))
        attempt(f"referee fd {fd_name} via pidfd_getfd", lambda: write_stolen(referee, int(fd_name)))
with open(opts["report"], "w") as fh:
    fh.write("\n".join(results + ["done"]) + "\n")
serve("guardian_steerer", lambda n, msg: first_legal(msg))
