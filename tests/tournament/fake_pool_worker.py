"""Pool workers that go wrong, for tests: `fake_pool_worker.py MODE NAME`.

* `unsandboxable`: the real worker, on a machine whose host probe finds no
  bubblewrap (it must refuse sandboxed games);
* `garbage`: says it is ready, then answers the first job with bytes that
  are not a frame;
* `exit`: writes one line to stderr and exits with code 3 before it is ready;
* `silent`: never says it is ready (sleeps until its stdin closes);
* `stall`: says it is ready, then, at the first job, writes half a frame
  header and goes quiet (a hung worker).
"""

import os
import sys

mode = sys.argv[1]
if mode == "unsandboxable":
    from referee.seats.sandbox import host as sandbox
    from referee.tournament import pool_worker

    real = sandbox.probe_host()
    missing = sandbox.HostReport(**{**real.__dict__, "bwrap": None, "works": False})
    sandbox.probe_host = lambda: missing
    sys.argv = [sys.argv[0], *sys.argv[2:]]
    pool_worker.main()
elif mode == "garbage":
    from referee.tournament.pool_wire import Ready, frame

    os.write(1, frame(Ready(pid=os.getpid())))
    os.read(0, 4)  # the first job is on its way
    os.write(1, b"\x00\x00\x00\x05\xc1\xc1\xc1\xc1\xc1")  # 0xc1 is never valid msgpack
    os.read(0, 1 << 20)
elif mode == "stall":
    from referee.tournament.pool_wire import Ready, frame

    os.write(1, frame(Ready(pid=os.getpid())))
    os.read(0, 4)
    os.write(1, b"\x00\x00")
    while os.read(0, 65536):
        pass
elif mode == "exit":
    sys.stderr.write("this worker cannot start: a broken installation\n")
    sys.exit(3)
elif mode == "silent":
    while os.read(0, 65536):
        pass
