//! The validating parse: one message's JSON against the description of what the Python fast path accepts
//! (msgspec's models of the Thrift objects, `hivewire.data._columnar`), into a borrowed tree of the values
//! the columns read. Whatever the models refuse, this refuses (an `Err`), and so do duplicate keys, numbers
//! outside 64 bits and strings that lower-case differently in Rust and Python: a refused message goes to the
//! Python decoder, which decides its row. Values the columns never read are validated and not kept.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::fmt;

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

/// A parsed value; `Skip` stands for a value validated and not kept (numbers are never kept).
#[derive(Debug)]
pub enum V<'a> {
    Null,
    Skip,
    Bool(bool),
    Str(Cow<'a, str>),
    List(Vec<V<'a>>),
    Map(Vec<(Cow<'a, str>, V<'a>)>),
    Struct(Vec<V<'a>>),
}

pub static NULL: V<'static> = V::Null;

impl<'a> V<'a> {
    pub fn is_null(&self) -> bool {
        matches!(self, V::Null | V::Skip)
    }
    pub fn str(&self) -> Option<&str> {
        match self {
            V::Str(s) => Some(s),
            _ => None,
        }
    }
    /// A struct's field by index (null when this is not a struct or the model has no such field).
    pub fn get(&self, index: Option<usize>) -> &V<'a> {
        match (self, index) {
            (V::Struct(fields), Some(i)) => &fields[i],
            _ => &NULL,
        }
    }
    pub fn list(&self) -> &[V<'a>] {
        match self {
            V::List(items) => items,
            _ => &[],
        }
    }
    pub fn map(&self) -> &[(Cow<'a, str>, V<'a>)] {
        match self {
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

/// Parses one value against `accept`.
pub struct Seed<'s> {
    pub models: &'s [Model],
    pub accept: &'s Accept,
    pub keep: bool,
}

impl<'de> DeserializeSeed<'de> for Seed<'_> {
    type Value = V<'de>;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Seed<'_> {
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
        self.text(Cow::Borrowed(v))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        self.text(Cow::Owned(v.to_owned()))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let Some(item) = self.accept.list.as_deref() else {
            return Err(refuse());
        };
        let seed = || Seed { models: self.models, accept: item, keep: self.keep };
        if !self.keep {
            while seq.next_element_seed(seed())?.is_some() {}
            return Ok(V::Skip);
        }
        let mut items = Vec::new();
        while let Some(v) = seq.next_element_seed(seed())? {
            items.push(v);
        }
        Ok(V::List(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        if let Some(m) = self.accept.model {
            let fields = fill(&mut map, self.models, &self.models[m], self.keep, None)?;
            return Ok(if self.keep { V::Struct(fields) } else { V::Skip });
        }
        let Some(value) = self.accept.dict.as_deref() else {
            return Err(refuse());
        };
        // Duplicate keys are refused: Python keeps the last value at the first key's place; let it decide.
        let mut entries: Vec<(Cow<'de, str>, V<'de>)> = Vec::new();
        let mut keys: Option<HashSet<Cow<'de, str>>> = None;
        while let Some(key) = map.next_key_seed(Text)? {
            let v = map.next_value_seed(Seed { models: self.models, accept: value, keep: true })?;
            if entries.len() < 16 {
                if entries.iter().any(|(k, _)| *k == key) {
                    return Err(refuse());
                }
            } else {
                let set = keys.get_or_insert_with(|| entries.iter().map(|(k, _)| k.clone()).collect());
                if !set.insert(key.clone()) {
                    return Err(refuse());
                }
            }
            entries.push((key, v));
        }
        Ok(if self.keep { V::Map(entries) } else { V::Skip })
    }
}

impl Seed<'_> {
    fn text<'de, E: de::Error>(self, v: Cow<'de, str>) -> Result<V<'de>, E> {
        let ok = self.accept.string || self.accept.literals.as_ref().is_some_and(|l| l.contains(v.as_ref()));
        if !ok {
            return Err(refuse());
        }
        Ok(if self.keep { V::Str(v) } else { V::Skip })
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
) -> Result<Vec<V<'de>>, A::Error> {
    let mut fields: Vec<V<'de>> = Vec::new();
    if keep {
        fields.resize_with(model.fields.len(), || V::Null);
    }
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
                let v = map.next_value_seed(Seed { models, accept: &f.accept, keep })?;
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
pub fn tagged<'a, F>(text: &'a str, models: &[Model], model_of: F) -> Result<Option<(Cow<'a, str>, Vec<V<'a>>)>, Refused>
where
    F: Fn(&str) -> Option<usize>,
{
    struct Tagged<'s, F> {
        models: &'s [Model],
        model_of: F,
    }
    impl<'de, F: Fn(&str) -> Option<usize>> Visitor<'de> for Tagged<'_, F> {
        type Value = Option<(Cow<'de, str>, Vec<V<'de>>)>;
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
            let fields = fill(&mut map, self.models, &self.models[m], true, Some("eventType"))?;
            Ok(Some((tag, fields)))
        }
    }
    let mut d = serde_json::Deserializer::from_str(text);
    let out = de::Deserializer::deserialize_map(&mut d, Tagged { models, model_of }).map_err(|_| Refused)?;
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
pub fn value<'a>(models: &[Model], accept: &Accept, raw: &'a RawValue, keep: bool) -> Result<V<'a>, Refused> {
    let mut d = serde_json::Deserializer::from_str(raw.get());
    let v = Seed { models, accept, keep }.deserialize(&mut d).map_err(|_| Refused)?;
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
