"""The events each kind of change produces: what a listener inside the metastore would see.

Each :class:`Change` is one modeled call in flight. :meth:`Change.before` reads, on the shim's own
connections, what the event needs from before the change (the old table of an alter, the table and
partitions of a drop); :meth:`Change.events` builds the events once the reply is in, reading back what
the metastore stored when the request does not carry it (the server fills in ``createTime``, parameters,
locations). They mirror Hive's ``HMSHandler``: one AddPartitionEvent per add call, one
AlterPartitionEvent and one DropPartitionEvent per partition, DropTableEvents (``deleteData`` false)
before the DropDatabaseEvent of a cascading drop, an AddPartitionEvent on the destination plus a
DropPartitionEvent per source partition for exchange_partition(s), an AlterTableEvent (old -> new) for a
rename.

An object that does not exist is not reported (an alter of a table that was not there fails anyway). An
object that could not be *read* (a timeout, the metastore restarting) is replaced by what the request
carried, or by an object holding only the names the request gave; the event then says so in its
``parameters`` (:data:`INCOMPLETE`, e.g. ``"old_table"``) and a WARNING is logged. A successful change is
not left without its event because a read failed.
"""

from __future__ import annotations

from hivewire_shim.change import DDL_TIME, INCOMPLETE, OUTCOME, TRANSACTION_ACTIVE, Change, Params, copy_struct
from hivewire_shim.database_changes import AlterDatabase, CreateDatabase, DropDatabase
from hivewire_shim.partition_changes import AddPartitions, AlterPartitions, DropPartitions, ExchangePartitions
from hivewire_shim.table_changes import AlterTable, CreateTable, DropTable, Insert

__all__ = [
    "DDL_TIME",
    "INCOMPLETE",
    "OUTCOME",
    "TRANSACTION_ACTIVE",
    "AddPartitions",
    "AlterDatabase",
    "AlterPartitions",
    "AlterTable",
    "Change",
    "CreateDatabase",
    "CreateTable",
    "DropDatabase",
    "DropPartitions",
    "DropTable",
    "ExchangePartitions",
    "Insert",
    "Params",
    "copy_struct",
]
