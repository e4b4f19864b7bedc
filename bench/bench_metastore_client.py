"""get_table calls per second: hivewire.MetastoreClient vs hmsclient, same server, same run.

Usage: python bench/bench_metastore_client.py [--uri thrift://host:port] [--calls 2000] [--json] [--update-readme]
Without --uri a local Hive Metastore is started from pyspark's jars.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _common import Output, add_output_options, hivewire_module, interleaved, report
from hmsclient import hmsclient

import hivewire as hw
from hivewire.testing import make_database, make_table

LocalMetastore = hivewire_module("hivewire.tools", "hivewire.local").LocalMetastore


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--uri")
    parser.add_argument("--calls", type=int, default=2000)
    add_output_options(parser)
    args = parser.parse_args()
    with Output(__file__, args) as out:
        run(args, out)


def run(args: argparse.Namespace, out: Output) -> None:
    with contextlib.ExitStack() as stack:
        uri = args.uri or stack.enter_context(LocalMetastore()).uri
        ours = stack.enter_context(hw.MetastoreClient(uri))
        with contextlib.suppress(hw.AlreadyExistsError):
            ours.create_database(make_database("bench"))
        with contextlib.suppress(hw.AlreadyExistsError):
            ours.create_table(
                make_table(
                    "bench", "t", columns={f"c{i}": "string" for i in range(20)}, partition_keys={"dt": "string"}
                )
            )
        host, port = uri.removeprefix("thrift://").split(":")
        peer = stack.enter_context(hmsclient.HMSClient(host=host, port=int(port)))

        def hivewire_get_table() -> int:
            for _ in range(args.calls):
                ours.get_table("bench", "t")
            return args.calls

        def hmsclient_get_table() -> int:
            for _ in range(args.calls):
                peer.get_table("bench", "t")
            return args.calls

        def hivewire_legacy_get_table() -> int:  # the same RPC hmsclient makes
            for _ in range(args.calls):
                ours.call("get_table", "bench", "t")
            return args.calls

        # MetastoreClient.get_table sends get_table_req (a request object; what Hive 4 requires), hmsclient
        # the legacy get_table: both are shown, and hivewire's legacy call for a like-for-like comparison.
        rates = interleaved(
            {
                "hmsclient get_table": hmsclient_get_table,
                "hivewire get_table (legacy RPC)": hivewire_legacy_get_table,
                "hivewire get_table (get_table_req RPC)": hivewire_get_table,
            }
        )
        report(
            f"get_table against {uri} (thrift C extension: {hw.metastore.ACCELERATED})",
            rates,
            "calls",
            "hmsclient get_table",
        )
        for name, rate in rates.items():
            out.figure(name, rate, "calls/s")
            if name != "hmsclient get_table":
                out.figure(f"{name} / hmsclient", rate / rates["hmsclient get_table"], "ratio")


if __name__ == "__main__":
    main()
