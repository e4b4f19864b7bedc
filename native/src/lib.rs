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
use pyo3::Borrowed;
use pyo3::types::{PyBytes, PyCapsule, PyList, PyString, PyTuple};

use columns::Builder;

/// mimalloc for every allocation of this module (the rows' cells, the columns' buffers): glibc's malloc and
/// free took a tenth of a batch's time, and its fresh pages faulted.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

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

/// Item `i` of `list`, borrowed (no reference counted: the list is not changed while a batch is decoded, and the
/// caller holds it).
fn item<'a, 'py>(list: &'a Bound<'py, PyList>, i: usize) -> PyResult<Borrowed<'a, 'py, PyAny>> {
    let i = pyo3::ffi::Py_ssize_t::try_from(i).map_err(value_error)?;
    // SAFETY: PyList_GetItem returns a borrowed reference (or NULL with an exception set), valid while `list`
    // holds the item; `list` is borrowed for 'a and nothing runs Python code that could change it meanwhile
    // (the fallback may run Python code: its items are taken again after it returns).
    unsafe { Borrowed::from_ptr_or_err(list.py(), pyo3::ffi::PyList_GetItem(list.as_ptr(), i)) }
}

/// The text of the topics met so far, by the topic object (a batch has one or a few: its text is read once).
struct Topics<'py> {
    last: Option<(Bound<'py, PyAny>, String)>,
}

impl<'py> Topics<'py> {
    fn text(&mut self, topic: Borrowed<'_, 'py, PyAny>) -> PyResult<&str> {
        let same = matches!(&self.last, Some((t, _)) if t.is(&*topic));
        if !same {
            let text = topic.cast::<PyString>()?.to_str()?.to_owned();
            self.last = Some((topic.to_owned(), text));
        }
        Ok(self.last.as_ref().map_or("", |(_, text)| text.as_str()))
    }
}

/// The origin of one message (an Origin tuple or None); its topic's text is kept by `topics`.
fn origin<'t, 'py>(o: Borrowed<'_, 'py, PyAny>, topics: &'t mut Topics<'py>) -> PyResult<Option<Origin<'t>>> {
    if o.is_none() {
        return Ok(None);
    }
    let t = o.cast::<PyTuple>()?;
    let ts = t.get_borrowed_item(3)?;
    let partition = t.get_borrowed_item(1)?.extract()?;
    let offset = t.get_borrowed_item(2)?.extract()?;
    let timestamp = if ts.is_none() { None } else { Some(ts.extract()?) };
    Ok(Some(Origin {
        topic: Cow::Borrowed(topics.text(t.get_borrowed_item(0)?)?),
        partition,
        offset,
        timestamp,
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
        let mut bytes = 0;
        for i in 0..rows {
            if let Ok(b) = item(values, i)?.cast::<PyBytes>() {
                bytes += b.as_bytes().len();
            }
        }
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
        let mut topics = Topics { last: None };
        for i in 0..rows {
            bump.reset();
            let value = item(values, i)?;
            let o = match origins {
                Some(list) => origin(item(list, i)?, &mut topics)?,
                None => None,
            };
            let bytes = value.cast::<PyBytes>().ok();
            let native = match &bytes {
                Some(b) => row::row(&self.spec, &self.ix, &bump, b.as_bytes(), o.as_ref(), need).ok(),
                None => None,
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
