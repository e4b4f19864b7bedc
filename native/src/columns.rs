//! Column builders for the shapes of `hivewire.arrow.SCHEMA`, typed by the schema Python hands over (so the
//! batch's types, field names and nullability are exactly pyarrow's), filled from native rows or from the rows
//! the Python decoder made.

use std::borrow::Cow;
use std::sync::Arc;

use arrow_array::builder::{
    ArrayBuilder,
    BinaryBuilder, BooleanBuilder, Date32Builder, Int32Builder, Int64Builder, StringBuilder,
    TimestampMicrosecondBuilder,
};
use arrow_array::{ArrayRef, ListArray, MapArray, StructArray};
use arrow_buffer::{NullBufferBuilder, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, FieldRef};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString};

use crate::row::Cell;

pub struct Offsets {
    offsets: Vec<i32>,
    nulls: NullBufferBuilder,
}

impl Offsets {
    fn new(rows: usize) -> Self {
        let mut offsets = Vec::with_capacity(rows + 1);
        offsets.push(0);
        Offsets { offsets, nulls: NullBufferBuilder::new(rows) }
    }
    fn close(&mut self, len: usize) -> Result<(), String> {
        let len = i32::try_from(len).map_err(|_| "more than 2^31 list items in one batch".to_owned())?;
        self.offsets.push(len);
        self.nulls.append_non_null();
        Ok(())
    }
    fn null(&mut self) {
        let last = *self.offsets.last().unwrap_or(&0);
        self.offsets.push(last);
        self.nulls.append_null();
    }
    fn finish(&mut self) -> (OffsetBuffer<i32>, Option<arrow_buffer::NullBuffer>) {
        let offsets = std::mem::replace(&mut self.offsets, vec![0]);
        (OffsetBuffer::new(ScalarBuffer::from(offsets)), self.nulls.finish())
    }
}

fn strings<'a>(b: &mut StringBuilder, items: impl IntoIterator<Item = &'a Option<Cow<'a, str>>>) -> usize {
    let mut n = 0;
    for item in items {
        b.append_option(item.as_deref());
        n += 1;
    }
    n
}

pub enum Builder {
    Str(StringBuilder),
    Bool(BooleanBuilder),
    I32(Int32Builder),
    I64(Int64Builder),
    Ts(TimestampMicrosecondBuilder, DataType),
    Date(Date32Builder),
    Bin(BinaryBuilder),
    StrList(Offsets, StringBuilder),
    StrLists(Offsets, Offsets, StringBuilder),
    Triples(Offsets, [StringBuilder; 3]),
    Map(Offsets, StringBuilder, StringBuilder),
}

fn item(dt: &DataType) -> Option<&FieldRef> {
    match dt {
        DataType::List(f) => Some(f),
        _ => None,
    }
}

impl Builder {
    /// The builder of a column of `dt`, sized for `rows` rows (`bytes`: the messages' size, for the binary
    /// column), so that the buffers are not grown and copied while the batch fills.
    pub fn new(dt: &DataType, rows: usize, bytes: usize) -> Result<Builder, String> {
        let text = |n: usize| StringBuilder::with_capacity(n, n * 16);
        let triples = || Builder::Triples(Offsets::new(rows), [text(rows), text(rows), text(rows)]);
        Ok(match dt {
            DataType::Utf8 => Builder::Str(text(rows)),
            DataType::Boolean => Builder::Bool(BooleanBuilder::with_capacity(rows)),
            DataType::Int32 => Builder::I32(Int32Builder::with_capacity(rows)),
            DataType::Int64 => Builder::I64(Int64Builder::with_capacity(rows)),
            DataType::Timestamp(_, _) => Builder::Ts(TimestampMicrosecondBuilder::with_capacity(rows), dt.clone()),
            DataType::Date32 => Builder::Date(Date32Builder::with_capacity(rows)),
            DataType::Binary => Builder::Bin(BinaryBuilder::with_capacity(rows, bytes)),
            DataType::Map(_, _) => Builder::Map(Offsets::new(rows), text(rows * 4), text(rows * 4)),
            DataType::List(f) => match f.data_type() {
                DataType::Utf8 => Builder::StrList(Offsets::new(rows), text(rows)),
                DataType::List(_) => Builder::StrLists(Offsets::new(rows), Offsets::new(rows), text(rows)),
                DataType::Struct(fields) if fields.len() == 3 => triples(),
                other => return Err(format!("no builder for list<{other}>")),
            },
            other => return Err(format!("no builder for {other}")),
        })
    }

    pub fn push(&mut self, cell: &Cell<'_>) -> Result<(), String> {
        let wrong = || format!("a value of the wrong shape: {cell:?}");
        match (self, cell) {
            (Builder::Str(b), Cell::Null) => b.append_null(),
            (Builder::Str(b), Cell::Str(s)) => b.append_value(s),
            (Builder::Bool(b), Cell::Null) => b.append_null(),
            (Builder::Bool(b), Cell::Bool(v)) => b.append_value(*v),
            (Builder::I32(b), Cell::Null) => b.append_null(),
            (Builder::I32(b), Cell::Int(v)) => b.append_value(i32::try_from(*v).map_err(|_| wrong())?),
            (Builder::I64(b), Cell::Null) => b.append_null(),
            (Builder::I64(b), Cell::Int(v)) => b.append_value(*v),
            (Builder::Ts(b, _), Cell::Null) => b.append_null(),
            (Builder::Ts(b, _), Cell::Int(v)) => b.append_value(*v),
            (Builder::Date(b), Cell::Null) => b.append_null(),
            (Builder::Date(b), Cell::Int(v)) => b.append_value(i32::try_from(*v).map_err(|_| wrong())?),
            (Builder::Bin(b), Cell::Null) => b.append_null(),
            (Builder::Bin(b), Cell::Bytes(v)) => b.append_value(v),
            (Builder::StrList(o, _), Cell::Null) => o.null(),
            (Builder::StrList(o, b), Cell::StrList(items)) => {
                strings(b, items);
                o.close(b.len())?;
            }
            (Builder::StrLists(o, _, _), Cell::Null) => o.null(),
            (Builder::StrLists(o, inner, b), Cell::StrLists(lists)) => {
                for list in lists {
                    strings(b, list);
                    inner.close(b.len())?;
                }
                o.close(inner.offsets.len() - 1)?;
            }
            (Builder::Triples(o, _), Cell::Null) => o.null(),
            (Builder::Triples(o, [a, b, c]), Cell::Triples(items)) => {
                for [x, y, z] in items {
                    a.append_option(x.as_deref());
                    b.append_option(y.as_deref());
                    c.append_option(z.as_deref());
                }
                o.close(a.len())?;
            }
            (Builder::Map(o, _, _), Cell::Null) => o.null(),
            (Builder::Map(o, k, v), Cell::Map(entries)) => {
                for (key, value) in entries {
                    k.append_value(key);
                    v.append_option(value.as_deref());
                }
                o.close(k.len())?;
            }
            _ => return Err(wrong()),
        }
        Ok(())
    }

    pub fn finish(&mut self, dt: &DataType) -> Result<ArrayRef, String> {
        let bad = || format!("the builder does not fit {dt}");
        Ok(match self {
            Builder::Str(b) => Arc::new(b.finish()),
            Builder::Bool(b) => Arc::new(b.finish()),
            Builder::I32(b) => Arc::new(b.finish()),
            Builder::I64(b) => Arc::new(b.finish()),
            Builder::Ts(b, dt) => Arc::new(b.finish().with_data_type(dt.clone())),
            Builder::Date(b) => Arc::new(b.finish()),
            Builder::Bin(b) => Arc::new(b.finish()),
            Builder::StrList(o, b) => {
                let (offsets, nulls) = o.finish();
                Arc::new(ListArray::new(item(dt).ok_or_else(bad)?.clone(), offsets, Arc::new(b.finish()), nulls))
            }
            Builder::StrLists(o, inner, b) => {
                let outer = item(dt).ok_or_else(bad)?;
                let inner_field = item(outer.data_type()).ok_or_else(bad)?;
                let (inner_offsets, inner_nulls) = inner.finish();
                let lists = ListArray::new(inner_field.clone(), inner_offsets, Arc::new(b.finish()), inner_nulls);
                let (offsets, nulls) = o.finish();
                Arc::new(ListArray::new(outer.clone(), offsets, Arc::new(lists), nulls))
            }
            Builder::Triples(o, [a, b, c]) => {
                let field = item(dt).ok_or_else(bad)?;
                let DataType::Struct(fields) = field.data_type() else { return Err(bad()) };
                let children: Vec<ArrayRef> = vec![Arc::new(a.finish()), Arc::new(b.finish()), Arc::new(c.finish())];
                let structs = StructArray::new(fields.clone(), children, None);
                let (offsets, nulls) = o.finish();
                Arc::new(ListArray::new(field.clone(), offsets, Arc::new(structs), nulls))
            }
            Builder::Map(o, k, v) => {
                let DataType::Map(entries, sorted) = dt else { return Err(bad()) };
                let DataType::Struct(fields) = entries.data_type() else { return Err(bad()) };
                let children: Vec<ArrayRef> = vec![Arc::new(k.finish()), Arc::new(v.finish())];
                let structs = StructArray::new(fields.clone(), children, None);
                let (offsets, nulls) = o.finish();
                Arc::new(MapArray::new(entries.clone(), offsets, structs, nulls, *sorted))
            }
        })
    }

    /// The cell of a value of a row the Python decoder made, in this builder's shape.
    pub fn py_cell<'py>(&self, v: &Bound<'py, PyAny>) -> PyResult<Cell<'static>> {
        if v.is_none() {
            return Ok(Cell::Null);
        }
        let text = |x: &Bound<'py, PyAny>| -> PyResult<Option<Cow<'static, str>>> {
            if x.is_none() {
                Ok(None)
            } else {
                Ok(Some(Cow::Owned(x.cast::<PyString>()?.to_str()?.to_owned())))
            }
        };
        let texts = |x: &Bound<'py, PyAny>| -> PyResult<Vec<Option<Cow<'static, str>>>> {
            x.try_iter()?.map(|i| text(&i?)).collect()
        };
        Ok(match self {
            Builder::Str(_) => Cell::Str(text(v)?.unwrap_or_default()),
            Builder::Bool(_) => Cell::Bool(v.extract()?),
            Builder::I32(_) | Builder::I64(_) | Builder::Ts(_, _) | Builder::Date(_) => Cell::Int(v.extract()?),
            Builder::Bin(_) => Cell::Bytes(Cow::Owned(v.cast::<PyBytes>()?.as_bytes().to_vec())),
            Builder::StrList(_, _) => Cell::StrList(texts(v)?),
            Builder::StrLists(_, _, _) => {
                Cell::StrLists(v.try_iter()?.map(|l| texts(&l?)).collect::<PyResult<_>>()?)
            }
            Builder::Triples(_, _) => Cell::Triples(
                v.try_iter()?
                    .map(|t| {
                        let t = t?;
                        Ok([text(&t.get_item(0)?)?, text(&t.get_item(1)?)?, text(&t.get_item(2)?)?])
                    })
                    .collect::<PyResult<_>>()?,
            ),
            Builder::Map(_, _, _) => {
                let d = v.cast::<PyDict>()?;
                let mut entries = Vec::with_capacity(d.len());
                for (k, x) in d.iter() {
                    entries.push((text(&k)?.ok_or_else(|| PyTypeError::new_err("a null map key"))?, text(&x)?));
                }
                Cell::Map(entries)
            }
        })
    }
}
