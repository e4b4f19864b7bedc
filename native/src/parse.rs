//! The validating parse: one message's JSON against the description of what the Python fast path accepts
//! (msgspec's models of the Thrift objects, `hivewire.data._columnar`), into a borrowed tree of the values
//! the columns read. Whatever the models refuse, this refuses (an `Err`), and so do duplicate keys, numbers
//! outside 64 bits and strings that lower-case differently in Rust and Python: a refused message goes to the
//! Python decoder, which decides its row. Values the columns never read are validated and not kept. The tree
//! lives in an arena (`bumpalo`) the caller empties between messages: no allocation or drop per node.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::fmt;

use bumpalo::Bump;

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

/// What a JSON value may be (a union of msgspec types).
#[derive(Debug, Default)]
pub struct Accept {
    pub null: bool,
    pub boolean: bool,
    pub int: Option<(i64, i64)>,
    pub string: bool,
    pub literals: Option<HashSet<String>>,
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
        match self.fields.get(hint) {
            Some(f) if f.key == key => Some(hint),
            _ => self.fields.iter().position(|f| f.key == key),
        }
    }
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

fn refuse<E: de::Error>() -> E {
    E::custom("refused")
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

/// A string kept in the tree: borrowed when it has no escapes, else made in the arena.
struct Kept<'de>(&'de Bump);

impl<'de> DeserializeSeed<'de> for Kept<'de> {
    type Value = &'de str;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Kept<'de> {
    type Value = &'de str;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(v)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(self.0.alloc_str(v))
    }
}

/// Parses one value against `accept`, its lists, maps and structs made in `bump`.
pub struct Seed<'s, 'de> {
    pub models: &'s [Model],
    pub accept: &'s Accept,
    pub keep: bool,
    pub bump: &'de Bump,
}

impl<'de> DeserializeSeed<'de> for Seed<'_, 'de> {
    type Value = V<'de>;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Seed<'_, 'de> {
    type Value = V<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a value of the model")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        if self.accept.null {
            Ok(V::Null)
        } else {
            Err(refuse())
        }
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
        if self.accept.boolean {
            Ok(if self.keep { V::Bool(v) } else { V::Skip })
        } else {
            Err(refuse())
        }
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        match self.accept.int {
            Some((lo, hi)) if lo <= v && v <= hi => Ok(V::Skip), // no column reads a number
            _ => Err(refuse()),
        }
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        match i64::try_from(v) {
            Ok(v) => self.visit_i64(v),
            Err(_) => Err(refuse()),
        }
    }

    fn visit_f64<E: de::Error>(self, _v: f64) -> Result<Self::Value, E> {
        Err(refuse())
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        self.text(v)?;
        Ok(if self.keep { V::Str(v) } else { V::Skip })
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        self.text(v)?;
        Ok(if self.keep { V::Str(self.bump.alloc_str(v)) } else { V::Skip })
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let Some(item) = self.accept.list.as_deref() else {
            return Err(refuse());
        };
        let seed = || Seed { models: self.models, accept: item, keep: self.keep, bump: self.bump };
        if !self.keep {
            while seq.next_element_seed(seed())?.is_some() {}
            return Ok(V::Skip);
        }
        let mut items = bumpalo::collections::Vec::new_in(self.bump);
        while let Some(v) = seq.next_element_seed(seed())? {
            items.push(v);
        }
        Ok(V::List(items.into_bump_slice()))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        if let Some(m) = self.accept.model {
            let fields = fill(&mut map, self.models, &self.models[m], self.keep, None, self.bump)?;
            return Ok(if self.keep { V::Struct(fields) } else { V::Skip });
        }
        let Some(value) = self.accept.dict.as_deref() else {
            return Err(refuse());
        };
        // Duplicate keys are refused: Python keeps the last value at the first key's place; let it decide.
        let mut entries = bumpalo::collections::Vec::<(&'de str, V<'de>)>::new_in(self.bump);
        let mut keys: Option<HashSet<&'de str>> = None;
        while let Some(key) = map.next_key_seed(Kept(self.bump))? {
            let v = map.next_value_seed(Seed { models: self.models, accept: value, keep: true, bump: self.bump })?;
            if entries.len() < 16 {
                if entries.iter().any(|(k, _)| *k == key) {
                    return Err(refuse());
                }
            } else {
                let set = keys.get_or_insert_with(|| entries.iter().map(|(k, _)| *k).collect());
                if !set.insert(key) {
                    return Err(refuse());
                }
            }
            entries.push((key, v));
        }
        Ok(if self.keep { V::Map(entries.into_bump_slice()) } else { V::Skip })
    }
}

impl Seed<'_, '_> {
    fn text<E: de::Error>(&self, v: &str) -> Result<(), E> {
        if self.accept.string || self.accept.literals.as_ref().is_some_and(|l| l.contains(v)) {
            Ok(())
        } else {
            Err(refuse())
        }
    }
}

/// The fields of one object of ``model`` (empty when not kept), its keys read from ``map``. ``tag``: a key
/// already read (the envelope's ``eventType``), refused if it comes again.
fn fill<'de, A: MapAccess<'de>>(
    map: &mut A,
    models: &[Model],
    model: &Model,
    keep: bool,
    tag: Option<&str>,
    bump: &'de Bump,
) -> Result<&'de [V<'de>], A::Error> {
    let fields: &'de mut [V<'de>] = if keep { bump.alloc_slice_fill_copy(model.fields.len(), V::Null) } else { &mut [] };
    let mut seen: u128 = 0; // a bit per field (spec::load refuses models of more than 128 fields)
    let mut hint = 0;
    while let Some(key) = map.next_key_seed(Text)? {
        match model.find(&key, hint) {
            None if tag == Some(key.as_ref()) => return Err(refuse()),
            None => {
                map.next_value::<IgnoredAny>()?;
            }
            Some(i) => {
                hint = i + 1;
                if seen & (1 << i) != 0 {
                    return Err(refuse());
                }
                seen |= 1 << i;
                let f = &model.fields[i];
                let keep = keep && f.keep;
                let v = map.next_value_seed(Seed { models, accept: &f.accept, keep, bump })?;
                if keep {
                    fields[i] = v;
                }
            }
        }
    }
    if model.required & !seen != 0 {
        return Err(refuse());
    }
    Ok(fields)
}

/// A message whose first member is its ``eventType`` tag, parsed in one pass: the tag and the envelope's
/// fields (``None`` when the first member is another, see :func:`members`).
pub fn tagged<'a, F>(
    text: &'a str,
    bump: &'a Bump,
    models: &[Model],
    model_of: F,
) -> Result<Option<(Cow<'a, str>, &'a [V<'a>])>, Refused>
where
    F: Fn(&str) -> Option<usize>,
{
    struct Tagged<'s, 'de, F> {
        models: &'s [Model],
        model_of: F,
        bump: &'de Bump,
    }
    impl<'de, F: Fn(&str) -> Option<usize>> Visitor<'de> for Tagged<'_, 'de, F> {
        type Value = Option<(Cow<'de, str>, &'de [V<'de>])>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            match map.next_key_seed(Text)? {
                Some(k) if k == "eventType" => {}
                _ => return Ok(None),
            }
            let tag = map.next_value_seed(Text)?;
            let m = (self.model_of)(&tag).ok_or_else(refuse)?;
            let fields = fill(&mut map, self.models, &self.models[m], true, Some("eventType"), self.bump)?;
            Ok(Some((tag, fields)))
        }
    }
    let mut d = serde_json::Deserializer::from_str(text);
    let out = de::Deserializer::deserialize_map(&mut d, Tagged { models, model_of, bump }).map_err(|_| Refused)?;
    if out.is_some() {
        d.end().map_err(|_| Refused)?;
    }
    Ok(out)
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

/// One value (a member's raw text) against `accept`.
pub fn value<'a>(models: &[Model], accept: &Accept, raw: &'a RawValue, bump: &'a Bump) -> Result<V<'a>, Refused> {
    let mut d = serde_json::Deserializer::from_str(raw.get());
    let v = Seed { models, accept, keep: true, bump }.deserialize(&mut d).map_err(|_| Refused)?;
    Ok(v)
}

/// A string member (the ``eventType`` tag).
pub fn string(raw: &RawValue) -> Result<Cow<'_, str>, Refused> {
    let mut d = serde_json::Deserializer::from_str(raw.get());
    Text.deserialize(&mut d).map_err(|_| Refused)
}

/// A JSON string's value.
pub fn string_value(raw: &str) -> Result<String, Refused> {
    serde_json::from_str::<String>(raw).map_err(|_| Refused)
}

