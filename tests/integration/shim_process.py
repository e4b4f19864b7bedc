"""A shim in a process of its own, for tests that limit or measure that process:
``python shim_process.py UPSTREAM NOFILE MAX_BUFFERED_BYTES``. Prints ``PORT HEALTH_PORT`` once it listens,
logs to stderr, stops when stdin closes. NOFILE 0: no descriptor limit."""

from __future__ import annotations

import logging
import resource
import sys

from hivewire_shim import Shim

upstream, nofile, max_buffered = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(levelname)s %(name)s %(message)s")
if nofile:
    resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
with Shim(upstream, host="127.0.0.1", health_port=0, max_buffered_bytes=max_buffered) as shim:
    assert shim.health_url is not None
    print(shim.port, shim.health_url.rsplit(":", 1)[1].split("/")[0], flush=True)
    sys.stdin.read()
