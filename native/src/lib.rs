//! `hivewire._native`: raw Apiary messages to Arrow record batches of `hivewire.arrow.SCHEMA`, no Python per
//! message. What is accepted, and how fields fill columns, comes from Python (`hivewire.data._native`), as
//! does the Arrow schema; a message this decoder refuses is handed to a Python callable, whose row (the per-event
//! path's) takes its place, so the batch is always the one the Python decoder would make.

mod columns;
mod parse;
mod row;
mod scan;
mod spec;

use std::borrow::Cow;

use arrow_array::ffi::{to_ffi, FFI_ArrowSchema};
use arrow_array::{Array, ArrayRef, StructArray};
use arrow_schema::{Field, Fields, Schema};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyCapsule, PyList, PyString, PyTuple};

use columns::Builder;

use row::{Cell, Ix, Need, Origin, COLUMNS};

#[pyclass(frozen)]
struct Decoder {
    spec: spec::Spec,
    ix: Ix,
    schema: Schema,
}

fn value_error(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// The origin of one message; its topic is borrowed from `topic`, the tuple's first item, which the caller
/// keeps alive (no copy per message).
fn origin<'b, 'py>(o: &Bound<'py, PyAny>, topic: &'b mut Option<Bound<'py, PyAny>>) -> PyResult<Option<Origin<'b>>> {
    if o.is_none() {
        return Ok(None);
    }
    let t = o.cast::<PyTuple>()?;
    let ts = t.get_item(3)?;
    let topic = topic.insert(t.get_item(0)?);
    Ok(Some(Origin {
        topic: Cow::Borrowed(topic.cast::<PyString>()?.to_str()?),
        partition: t.get_item(1)?.extract()?,
        offset: t.get_item(2)?.extract()?,
        timestamp: if ts.is_none() { None } else { Some(ts.extract()?) },
    }))
}

#[pymethods]
impl Decoder {
    /// `description`: the JSON `hivewire.data._native` makes; `schema`: a capsule of `SCHEMA.__arrow_c_schema__()`.
    #[new]
    fn new(description: &str, schema: &Bound<'_, PyCapsule>) -> PyResult<Self> {
        let spec = spec::load(description).map_err(value_error)?;
        let ptr = schema.pointer_checked(Some(c"arrow_schema"))?;
        // SAFETY: an "arrow_schema" capsule holds an FFI_ArrowSchema (the Arrow PyCapsule interface); it is
        // only read here and stays owned by the capsule.
        let ffi = unsafe { ptr.cast::<FFI_ArrowSchema>().as_ref() };
        let schema = Schema::try_from(ffi).map_err(value_error)?;
        if schema.fields().len() != COLUMNS {
            return Err(value_error(format!("the schema has {} columns, not {COLUMNS}", schema.fields().len())));
        }
        let ix = Ix::new(&spec);
        Ok(Decoder { spec, ix, schema })
    }

    /// The batch of `values` (bytes or None) with their `origins` (Origin tuples or None; None: no origins),
    /// only the columns at `columns` (all when None), as (schema capsule, array capsule) of a struct array.
    /// `fallback(i)` makes the row of message `i` when this decoder refuses it (its exceptions propagate).
    #[pyo3(signature = (values, origins, columns, fallback))]
    fn decode<'py>(
        &self,
        py: Python<'py>,
        values: &Bound<'py, PyList>,
        origins: Option<&Bound<'py, PyList>>,
        columns: Option<Vec<usize>>,
        fallback: &Bound<'py, PyAny>,
    ) -> PyResult<(Bound<'py, PyCapsule>, Bound<'py, PyCapsule>, usize)> {
        let selected: Vec<usize> = columns.unwrap_or_else(|| (0..COLUMNS).collect());
        if selected.iter().any(|&c| c >= COLUMNS) {
            return Err(value_error("a column index out of range"));
        }
        let fields = self.schema.fields();
        let need = if selected.len() == COLUMNS { Need::ALL } else { Need::of(&selected) };
        let rows = values.len();
        let bytes: usize = values.iter().map(|v| v.cast::<PyBytes>().map_or(0, |b| b.as_bytes().len())).sum();
        let mut builders: Vec<Builder> = selected
            .iter()
            .map(|&c| Builder::new(fields[c].data_type(), rows, bytes))
            .collect::<Result<_, _>>()
            .map_err(value_error)?;
        if let Some(o) = origins {
            if o.len() != values.len() {
                return Err(value_error("values and origins differ in length"));
            }
        }
        let mut refused = 0;
        // one arena for the parsed trees, emptied before each message (its cells are in the builders by then)
        let mut bump = bumpalo::Bump::new();
        for (i, value) in values.iter().enumerate() {
            bump.reset();
            let mut topic = None;
            let o = match origins {
                Some(list) => origin(&list.get_item(i)?, &mut topic)?,
                None => None,
            };
            let native = match value.cast::<PyBytes>() {
                Ok(b) => row::row(&self.spec, &self.ix, &bump, b.as_bytes(), o.as_ref(), need).ok(),
                Err(_) => None,
            };
            match native {
                Some(cells) => {
                    for (b, &c) in builders.iter_mut().zip(&selected) {
                        b.push(&cells[c]).map_err(value_error)?;
                    }
                }
                None => {
                    refused += 1;
                    let made = fallback.call1((i,))?;
                    let made = made.cast::<PyTuple>()?;
                    if made.len() != COLUMNS {
                        return Err(PyTypeError::new_err("the fallback row has the wrong length"));
                    }
                    for (b, &c) in builders.iter_mut().zip(&selected) {
                        let cell: Cell<'_> = b.py_cell(&made.get_item(c)?)?;
                        b.push(&cell).map_err(value_error)?;
                    }
                }
            }
        }
        let mut arrays: Vec<ArrayRef> = Vec::with_capacity(selected.len());
        let mut kept: Vec<Field> = Vec::with_capacity(selected.len());
        for (b, &c) in builders.iter_mut().zip(&selected) {
            let field = fields[c].as_ref();
            arrays.push(b.finish(field.data_type()).map_err(value_error)?);
            kept.push(field.clone());
        }
        let array = StructArray::try_new_with_length(Fields::from(kept), arrays, None, values.len()).map_err(value_error)?;
        let (ffi_array, ffi_schema) = to_ffi(&array.to_data()).map_err(value_error)?;
        let schema = PyCapsule::new_with_value(py, ffi_schema, c"arrow_schema")?;
        let array = PyCapsule::new_with_value(py, ffi_array, c"arrow_array")?;
        Ok((schema, array, refused))
    }
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Decoder>()?;
    Ok(())
}
