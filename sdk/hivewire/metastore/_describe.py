"""Short, readable descriptions of metastore requests for error messages.

What objects a call names (``sales.orders partition dt=1``), and what in a request cannot be encoded.
"""

from __future__ import annotations

from typing import Any

from thrift.Thrift import TType


def _describe(args: tuple[Any, ...]) -> str:
    """A short, readable rendering of call arguments for error messages: names, not whole objects."""
    parts = []
    for a in args:
        if isinstance(a, bool) or a is None:
            continue
        if isinstance(a, (list, tuple, set, frozenset)):
            items = list(a)
            parts.append(f"[{len(items)} items]" if len(items) > 3 else ", ".join(_describe_value(i) for i in items))
        else:
            parts.append(_describe_value(a))
    return ", ".join(p for p in parts if p)


def _describe_value(value: Any) -> str:
    if isinstance(value, str):
        return _brief(value)
    if isinstance(value, (int, float)):
        return str(value)
    if getattr(value, "thrift_spec", None) is not None:
        return _describe_struct(value)
    return type(value).__name__


def _brief(text: str) -> str:
    return text if len(text) <= 80 else text[:77] + "..."


# Where Hive's structs (plain objects and *Request objects alike) keep the names an error message needs.
_DB_FIELDS = ("dbName", "db_name", "dbname", "databaseName", "oldDbName")


_TABLE_FIELDS = ("tableName", "tblName", "tbl_name", "table_name", "functionName")


_NAME_FIELDS = ("name", "catName")


_INNER_FIELDS = ("table", "tbl", "newDb", "database", "db", "partition", "newPart", "new_part")


_PART_FIELDS = (
    "partName",
    "part_name",
    "name",
    "partVals",
    "part_vals",
    "values",
    "names",
    "partNames",
    "parts",
    "partitions",
    "new_parts",
)


_LIST_FIELDS = ("tblNames", "tableNames", "names")


def _text(obj: Any, fields: tuple[str, ...]) -> str | None:
    for field in fields:
        value = getattr(obj, field, None)
        if isinstance(value, str) and value:
            return value
    return None


def _describe_struct(obj: Any, depth: int = 0) -> str:
    """``sales.orders``, ``sales.orders partition dt=1``, ``sales: a, b``, ``sales``: from whichever of Hive's
    field names the struct (or the struct inside a request, such as ``CreateTableRequest.table``) carries."""
    db = _text(obj, _DB_FIELDS)
    table = _text(obj, _TABLE_FIELDS)
    if db is not None and table is not None:
        detail = _partition_detail(obj)
        return f"{db}.{table}" + (f" partition {detail}" if detail else "")
    if depth < 2:
        for field in _INNER_FIELDS:
            inner = getattr(obj, field, None)
            if getattr(inner, "thrift_spec", None) is not None:
                return _describe_struct(inner, depth + 1)
    if db is not None:
        for field in _LIST_FIELDS:
            names = getattr(obj, field, None)
            if isinstance(names, list) and names:
                return f"{db}: {_brief_list(names)}"
        return db
    name = _text(obj, _NAME_FIELDS)
    return name if name is not None else type(obj).__name__


def _partition_detail(obj: Any) -> str:
    for field in _PART_FIELDS:
        value = getattr(obj, field, None)
        if isinstance(value, str) and value:
            return _brief(value)
        if isinstance(value, list) and value:
            if all(isinstance(v, str) for v in value):
                # partVals / values: one partition's values; names: several partition names.
                return "/".join(value) if field in ("partVals", "part_vals", "values") else _brief_list(value)
            if len(value) > 3:
                return f"[{len(value)} partitions]"
            return ", ".join(d for d in map(_partition_detail, value) if d)
        if getattr(value, "thrift_spec", None) is not None:  # RequestPartsSpec, a union of names or exprs
            return _partition_detail(value)
    return ""


def _brief_list(items: list[Any]) -> str:
    return f"[{len(items)} items]" if len(items) > 3 else ", ".join(_brief(str(i)) for i in items)


def _unencodable_message(
    uri: str | None, method: str, args: tuple[Any, ...], arguments: type, error: BaseException
) -> str:
    try:
        where = _unencodable_field(arguments(*args), "")
    except Exception:  # only a better message is at stake; the error itself is reported below
        where = None
    cause = f"{type(error).__name__}: {_reason(error)}"
    return (
        f"{uri} {method}({_describe(args)}): the request cannot be sent: it could not be encoded"
        f"{f': {where} ({cause})' if where else f' ({cause})'}; fix the argument to match the Thrift IDL "
        "(the connection was closed, since part of the request may be in its buffer; the next call reconnects)"
    )


_INT_BITS = {TType.BYTE: 8, TType.I16: 16, TType.I32: 32, TType.I64: 64}


def _unencodable_field(struct: Any, path: str) -> str | None:
    """Where in ``struct`` a value does not fit its Thrift type (``tbl.partitionKeys[0] is None where a
    FieldSchema belongs``), or None. Only run after encoding failed, to say which field was at fault."""
    for spec in getattr(struct, "thrift_spec", None) or ():
        if spec is None:
            continue
        value = getattr(struct, spec[2], None)
        if value is not None:  # an unset field is not sent
            problem = _unencodable_value(value, spec[1], spec[3], f"{path}.{spec[2]}" if path else spec[2])
            if problem:
                return problem
    return None


def _unencodable_value(value: Any, ttype: int, type_args: Any, path: str) -> str | None:
    def wrong(expected: str) -> str:
        return f"{path} is {'None' if value is None else 'a ' + type(value).__name__} where {expected} belongs"

    if ttype == TType.STRUCT:
        cls = type_args[0]
        return _unencodable_field(value, path) if isinstance(value, cls) else wrong(f"a {cls.__name__}")
    if ttype in (TType.LIST, TType.SET):
        if not isinstance(value, (list, tuple, set, frozenset)):
            return wrong("a list" if ttype == TType.LIST else "a set")
        for i, item in enumerate(value):
            problem = _unencodable_value(item, type_args[0], type_args[1], f"{path}[{i}]")
            if problem:
                return problem
        return None
    if ttype == TType.MAP:
        if not isinstance(value, dict):
            return wrong("a dict")
        for key, item in value.items():
            problem = _unencodable_value(key, type_args[0], type_args[1], f"{path} key {key!r}") or _unencodable_value(
                item, type_args[2], type_args[3], f"{path}[{key!r}]"
            )
            if problem:
                return problem
        return None
    if ttype == TType.STRING:
        if isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeError:
                return f"{path} is not valid UTF-8 text"
            return None
        return None if isinstance(value, bytes) and type_args == "BINARY" else wrong("a str")
    if ttype in _INT_BITS:
        if not isinstance(value, int):
            return wrong("an int")
        bits = _INT_BITS[ttype]
        if not -(1 << (bits - 1)) <= value < 1 << (bits - 1):
            return f"{path} = {value} does not fit the IDL's i{bits}"
        return None
    if ttype == TType.DOUBLE:
        return None if isinstance(value, (int, float)) else wrong("a float")
    return None  # a bool field takes any value's truth


def _reason(e: BaseException) -> str:
    text = str(e) or type(e).__name__
    return text.splitlines()[0][:200]
