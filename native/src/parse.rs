//! The parsed message: what a JSON value may be (`Accept`, from the description of what the Python fast path
//! accepts: msgspec's models of the Thrift objects, `hivewire.data._columnar`) and the borrowed tree of the
//! values the columns read (`V`), which `scan.rs` makes. The tree lives in an arena (`bumpalo`) the caller
//! empties between messages: no allocation or drop per node. Also here: the members of a JSON object read by
//! serde_json, for the Iceberg snapshot summaries (a JSON text inside a string), read as Python's `json` does.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, Visitor};
use serde_json::value::RawValue;

/// What a JSON value may be (a union of msgspec types).
#[derive(Debug, Default)]
pub struct Accept {
    pub null: bool,
    pub boolean: bool,
    pub int: Option<(i64, i64)>,
    pub string: bool,
    pub literals: Option<Vec<String>>,
    pub list: Option<Box<Accept>>,
    pub dict: Option<Box<Accept>>,
    pub model: Option<usize>,
}

#[derive(Debug)]
pub struct FieldSpec {
    pub key: String,
    pub accept: Accept,
    pub required: bool,
    pub keep: bool,
}

#[derive(Debug)]
pub struct Model {
    pub fields: Vec<FieldSpec>,
    pub index: HashMap<String, usize>,
    /// The fields' keys, apart from the rest of their specs: what the parse looks up per member stays in few
    /// cache lines.
    pub keys: Vec<Box<str>>,
    /// A bit per required field.
    pub required: u128,
}

impl Model {
    pub fn field(&self, key: &str) -> Option<usize> {
        self.index.get(key).copied()
    }

    /// The field named ``key``, looked for from ``hint`` on (messages list the fields in the model's order,
    /// so the next key is almost always the next field).
    #[inline]
    pub fn find(&self, key: &str, hint: usize) -> Option<usize> {
        match self.keys.get(hint) {
            Some(k) if same(k, key) => Some(hint),
            _ => self.keys.iter().position(|k| same(k, key)),
        }
    }
}

/// Whether two (short) strings are equal, compared eight bytes at a time in line (a call of `memcmp` per
/// key cost more than the comparison).
#[inline]
pub fn same(a: &str, b: &str) -> bool {
    same_bytes(a.as_bytes(), b.as_bytes())
}

/// [`same`] of bytes.
#[inline]
pub fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut ca = a.chunks_exact(8);
    let mut cb = b.chunks_exact(8);
    for (x, y) in ca.by_ref().zip(cb.by_ref()) {
        if u64::from_ne_bytes(x.try_into().unwrap_or_default()) != u64::from_ne_bytes(y.try_into().unwrap_or_default()) {
            return false;
        }
    }
    let (ra, rb) = (ca.remainder(), cb.remainder());
    let mut i = 0;
    while i < ra.len() {
        if ra[i] != rb[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// A parsed value; `Skip` stands for a value validated and not kept (numbers are never kept). Strings are
/// borrowed from the message (or, with escapes, made in the arena), lists, maps and structs are slices of the
/// arena: a tree costs no allocation of its own and nothing to drop.
#[derive(Debug, Clone, Copy)]
pub enum V<'a> {
    Null,
    Skip,
    Bool(bool),
    Str(&'a str),
    List(&'a [V<'a>]),
    Map(&'a [(&'a str, V<'a>)]),
    Struct(&'a [V<'a>]),
}

pub static NULL: V<'static> = V::Null;

impl<'a> V<'a> {
    pub fn is_null(&self) -> bool {
        matches!(self, V::Null | V::Skip)
    }
    pub fn str(&self) -> Option<&'a str> {
        match *self {
            V::Str(s) => Some(s),
            _ => None,
        }
    }
    /// A struct's field by index (null when this is not a struct or the model has no such field).
    pub fn get(&self, index: Option<usize>) -> &'a V<'a> {
        match (*self, index) {
            (V::Struct(fields), Some(i)) => &fields[i],
            _ => &NULL,
        }
    }
    pub fn list(&self) -> &'a [V<'a>] {
        match *self {
            V::List(items) => items,
            _ => &[],
        }
    }
    pub fn map(&self) -> &'a [(&'a str, V<'a>)] {
        match *self {
            V::Map(entries) => entries,
            _ => &[],
        }
    }
}

#[derive(Debug)]
pub struct Refused;

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("refused")
    }
}

impl std::error::Error for Refused {}

impl de::Error for Refused {
    fn custom<T: fmt::Display>(_msg: T) -> Self {
        Refused
    }
}

/// A key or a string, borrowed when it has no escapes.
struct Text;

impl<'de> DeserializeSeed<'de> for Text {
    type Value = Cow<'de, str>;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_str(TextVisitor)
    }
}

struct TextVisitor;

impl<'de> Visitor<'de> for TextVisitor {
    type Value = Cow<'de, str>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v.to_owned()))
    }
}

/// The top-level object's members, values not parsed yet.
pub fn members(text: &str) -> Result<Vec<(Cow<'_, str>, &RawValue)>, Refused> {
    struct Members;
    impl<'de> Visitor<'de> for Members {
        type Value = Vec<(Cow<'de, str>, &'de RawValue)>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut out = Vec::with_capacity(16);
            while let Some(key) = map.next_key_seed(Text)? {
                let raw: &'de RawValue = map.next_value()?;
                out.push((key, raw));
            }
            Ok(out)
        }
    }
    let mut d = serde_json::Deserializer::from_str(text);
    let out = de::Deserializer::deserialize_map(&mut d, Members).map_err(|_| Refused)?;
    d.end().map_err(|_| Refused)?;
    Ok(out)
}

/// A JSON string's value.
pub fn string_value(raw: &str) -> Result<String, Refused> {
    serde_json::from_str::<String>(raw).map_err(|_| Refused)
}

