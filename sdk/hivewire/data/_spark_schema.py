"""hivewire.arrow's schema in Spark SQL types: ``SPARK_SCHEMA``, the schema of every events DataFrame.

pyspark and pyarrow are imported on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hivewire.errors import PrerequisiteError

if TYPE_CHECKING:
    from pyspark.sql.types import StructType


def _spark_type(arrow_type: Any) -> Any:
    """The Spark SQL type of an Arrow type of hivewire.arrow.SCHEMA (every value nullable, as in Arrow)."""
    import importlib

    from pyspark.sql import types as st

    pa = importlib.import_module("pyarrow")  # untyped: imported by name so that mypy treats it as Any
    if pa.types.is_list(arrow_type):
        return st.ArrayType(_spark_type(arrow_type.value_type), containsNull=True)
    if pa.types.is_struct(arrow_type):
        return st.StructType([st.StructField(f.name, _spark_type(f.type), nullable=True) for f in arrow_type])
    if pa.types.is_map(arrow_type):
        return st.MapType(_spark_type(arrow_type.key_type), _spark_type(arrow_type.item_type), valueContainsNull=True)
    if pa.types.is_timestamp(arrow_type):
        return st.TimestampType()  # an instant (Arrow's timestamp with tz=UTC); shown in the session time zone
    atomic = {
        pa.string(): st.StringType(),
        pa.bool_(): st.BooleanType(),
        pa.int32(): st.IntegerType(),
        pa.int64(): st.LongType(),
        pa.date32(): st.DateType(),
        pa.binary(): st.BinaryType(),
    }
    return atomic[arrow_type]


_SCHEMAS: dict[str, StructType] = {}


def _events_schema() -> StructType:
    """``SPARK_SCHEMA``, built on first use (pyspark and pyarrow are imported only then)."""
    schema = _SCHEMAS.get("events")
    if schema is None:
        try:
            from pyspark.sql import types as st
        except ImportError as e:
            raise PrerequisiteError(
                "hivewire.spark needs pyspark, which is not installed: pip install 'hivewire[spark]'"
            ) from e

        from hivewire.data._arrow import SCHEMA

        schema = st.StructType([st.StructField(f.name, _spark_type(f.type), nullable=True) for f in SCHEMA])
        _SCHEMAS["events"] = schema
    return schema
