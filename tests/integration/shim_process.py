"""A shim in a process of its own, for tests that limit or measure that process:
``python shim_process.py UPSTREAM NOFILE MAX_BUFFERED_BYTES [THREADS]``. Prints ``PORT HEALTH_PORT`` once it
listens, logs to stderr, stops when stdin closes. NOFILE 0: no descriptor limit. THREADS (default 0: no
limit): once it listens, room for only that many more threads, by the address space limit (``RLIMIT_AS``)
with 64 MB thread stacks, so the next ``Thread.start`` fails as it does at a real limit (root ignores
``RLIMIT_NPROC``, and tests run as root here); 48 MB are left for everything else."""

from __future__ import annotations

import logging
import resource
import sys
import threading
from pathlib import Path

from hivewire_shim import Shim

upstream, nofile, max_buffered = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
threads = int(sys.argv[4]) if len(sys.argv) > 4 else 0
STACK = 64 << 20
logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(levelname)s %(name)s %(message)s")
if nofile:
    resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
with Shim(upstream, host="127.0.0.1", health_port=0, max_buffered_bytes=max_buffered) as shim:
    assert shim.health_url is not None
    if threads:
        threading.stack_size(STACK)
        status = Path("/proc/self/status").read_text().splitlines()
        size = next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmSize:"))
        resource.setrlimit(resource.RLIMIT_AS, (size + threads * STACK + (48 << 20), resource.RLIM_INFINITY))
    print(shim.port, shim.health_url.rsplit(":", 1)[1].split("/")[0], flush=True)
    sys.stdin.read()
