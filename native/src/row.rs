//! One message's row: the port of `hivewire.data._rows` (`object_columns`, `iceberg_columns`, `envelope_row`)
//! and `hivewire.events._changes.changes`, reading the parsed tree. Where Python and Rust could disagree
//! (lower-casing beyond ASCII, a snapshot summary Python's `json` reads differently), the row is refused and
//! the Python decoder makes it.

use std::borrow::Cow;
use std::collections::BTreeMap;

use bumpalo::Bump;

use crate::parse::{self, Refused, V};
use crate::scan;
use crate::spec::{Event, Spec};

/// One cell of a row, in the shape its column takes.
#[derive(Debug)]
pub enum Cell<'a> {
    Null,
    Str(Cow<'a, str>),
    Bool(bool),
    Int(i64),
    Bytes(Cow<'a, [u8]>),
    StrList(Vec<Option<Cow<'a, str>>>),
    StrLists(Vec<Vec<Option<Cow<'a, str>>>>),
    Triples(Vec<[Option<Cow<'a, str>>; 3]>),
    Map(Vec<(Cow<'a, str>, Option<Cow<'a, str>>)>),
}

pub const COLUMNS: usize = 41;

/// Where a message came from (`hivewire.events.Origin`).
pub struct Origin<'a> {
    pub topic: Cow<'a, str>,
    pub partition: i64,
    pub offset: i64,
    pub timestamp: Option<i64>,
}

/// Field indices of the Thrift models the columns read.
pub struct Ix {
    t_db: Option<usize>,
    t_name: Option<usize>,
    t_sd: Option<usize>,
    t_keys: Option<usize>,
    t_type: Option<usize>,
    t_params: Option<usize>,
    sd_location: Option<usize>,
    sd_cols: Option<usize>,
    f_name: Option<usize>,
    f_type: Option<usize>,
    f_comment: Option<usize>,
    p_values: Option<usize>,
    p_sd: Option<usize>,
    p_params: Option<usize>,
    d_name: Option<usize>,
    d_location: Option<usize>,
}

impl Ix {
    pub fn new(spec: &Spec) -> Ix {
        let f = |class: &str, key: &str| spec.classes.get(class).and_then(|&m| spec.models[m].field(key));
        Ix {
            t_db: f("Table", "dbName"),
            t_name: f("Table", "tableName"),
            t_sd: f("Table", "sd"),
            t_keys: f("Table", "partitionKeys"),
            t_type: f("Table", "tableType"),
            t_params: f("Table", "parameters"),
            sd_location: f("StorageDescriptor", "location"),
            sd_cols: f("StorageDescriptor", "cols"),
            f_name: f("FieldSchema", "name"),
            f_type: f("FieldSchema", "type"),
            f_comment: f("FieldSchema", "comment"),
            p_values: f("Partition", "values"),
            p_sd: f("Partition", "sd"),
            p_params: f("Partition", "parameters"),
            d_name: f("Database", "name"),
            d_location: f("Database", "locationUri"),
        }
    }
}

fn s<'a>(v: &V<'a>) -> Option<Cow<'a, str>> {
    v.str().map(Cow::Borrowed)
}

fn cell<'a>(v: Option<Cow<'a, str>>) -> Cell<'a> {
    v.map_or(Cell::Null, Cell::Str)
}

fn strs<'a>(v: &V<'a>) -> Vec<Option<Cow<'a, str>>> {
    v.list().iter().map(s).collect()
}

fn map<'a>(v: &V<'a>) -> Vec<(Cow<'a, str>, Option<Cow<'a, str>>)> {
    v.map().iter().map(|(k, v)| (Cow::Borrowed(*k), s(v))).collect()
}

fn get<'v, 'a>(entries: &'v [(&'a str, V<'a>)], key: &str) -> Option<&'v V<'a>> {
    entries.iter().find(|(k, _)| parse::same(k, key)).map(|(_, v)| v)
}

fn get_str<'a>(entries: &[(&'a str, V<'a>)], key: &str) -> Option<Cow<'a, str>> {
    get(entries, key).and_then(s)
}

/// Python's ``x or None`` of an optional string.
fn nonempty(v: Option<Cow<'_, str>>) -> Option<Cow<'_, str>> {
    v.filter(|s| !s.is_empty())
}

/// Python's f-string of an optional string.
fn show(v: Option<&str>) -> &str {
    v.unwrap_or("None")
}

impl Ix {
    fn fields<'a>(&self, list: &V<'a>) -> Vec<[Option<Cow<'a, str>>; 3]> {
        list.list()
            .iter()
            .filter(|f| !f.is_null())
            .map(|f| [s(f.get(self.f_name)), s(f.get(self.f_type)), s(f.get(self.f_comment))])
            .collect()
    }

    fn cols<'v, 'a>(&self, obj: &'v V<'a>, sd_index: Option<usize>) -> &'v [V<'a>] {
        obj.get(sd_index).get(self.sd_cols).list()
    }
}

/// ``name or ""``, refused beyond ASCII: compared as ``(name or "").lower()`` is (ASCII case ignored), since
/// Python's and Rust's lower-casing differ beyond ASCII.
fn ascii(v: Option<&str>) -> Result<&str, Refused> {
    let v = v.unwrap_or("");
    if !v.is_ascii() {
        return Err(Refused);
    }
    Ok(v)
}

/// ``a + "." + b``.
fn dotted(a: &str, b: &str) -> String {
    let mut out = String::with_capacity(a.len() + 1 + b.len());
    out.push_str(a);
    out.push('.');
    out.push_str(b);
    out
}

/// Dict semantics of Python's comprehension: first key's place, last value.
/// Keys are the names as they are (ASCII), compared with ASCII case ignored: ``name.lower()``'s equality.
fn by_name<'v, 'a>(ix: &Ix, cols: &'v [V<'a>]) -> Result<Vec<(&'a str, &'v V<'a>)>, Refused> {
    let mut out: Vec<(&'a str, &V)> = Vec::with_capacity(cols.len());
    for c in cols {
        let k = ascii(c.get(ix.f_name).str())?;
        match out.iter_mut().find(|(key, _)| key.eq_ignore_ascii_case(k)) {
            Some(slot) => slot.1 = c,
            None => out.push((k, c)),
        }
    }
    Ok(out)
}

type Changes<'a> = [Cell<'a>; 5];

/// ``hivewire.events._changes.changes`` as the five columns from ``columns_added`` to ``old_location``.
fn changes<'a>(
    ix: &Ix,
    spec: &Spec,
    old: &V<'a>,
    new: &V<'a>,
    sd: Option<usize>,
    params: Option<usize>,
) -> Result<Changes<'a>, Refused> {
    let before = by_name(ix, ix.cols(old, sd))?;
    let after = by_name(ix, ix.cols(new, sd))?;
    let triple = |c: &V<'a>| [s(c.get(ix.f_name)), s(c.get(ix.f_type)), s(c.get(ix.f_comment))];
    let find = |list: &[(&str, &'_ V<'a>)], k: &str| list.iter().position(|(key, _)| key.eq_ignore_ascii_case(k));
    let added = after.iter().filter(|(k, _)| find(&before, k).is_none()).map(|(_, c)| triple(c)).collect();
    let removed = before.iter().filter(|(k, _)| find(&after, k).is_none()).map(|(_, c)| triple(c)).collect();
    let mut retyped = Vec::new();
    for (k, c) in &after {
        if let Some(i) = find(&before, k) {
            let old_type = before[i].1.get(ix.f_type).str();
            let new_type = c.get(ix.f_type).str();
            if !ascii(old_type)?.eq_ignore_ascii_case(ascii(new_type)?) {
                // the key, ``(name or "").lower()``, when the name is empty: ""
                let name = nonempty(s(c.get(ix.f_name))).unwrap_or(Cow::Borrowed(""));
                retyped.push([Some(name), s(before[i].1.get(ix.f_type)), s(c.get(ix.f_type))]);
            }
        }
    }
    let old_params = old.get(params).map();
    let new_params = new.get(params).map();
    let mut keys: BTreeMap<&'a str, ()> = BTreeMap::new();
    for (k, _) in old_params.iter().chain(new_params) {
        keys.insert(*k, ());
    }
    let mut parameters = Vec::new();
    for k in keys.keys() {
        if spec.constants.volatile.contains(*k) {
            continue;
        }
        let (o, n) = (get_str(old_params, k), get_str(new_params, k));
        if o != n {
            parameters.push([Some(Cow::Borrowed(*k)), o, n]);
        }
    }
    let old_location = s(old.get(sd).get(ix.sd_location));
    Ok([
        Cell::Triples(added),
        Cell::Triples(removed),
        Cell::Triples(retyped),
        Cell::Triples(parameters),
        cell(old_location),
    ])
}

/// The members of a snapshot summary as ``_rows._summary`` reads it: empty when it is no JSON object; refused
/// where Python's json reads what serde_json does not (NaN and Infinity, lone surrogates, deep nesting).
fn summary(text: &str) -> Result<Vec<(Cow<'_, str>, &serde_json::value::RawValue)>, Refused> {
    if let Ok(members) = parse::members(text) {
        return Ok(members);
    }
    match serde_json::from_str::<serde::de::IgnoredAny>(text) {
        Ok(_) => Ok(Vec::new()), // JSON, not an object
        Err(e)
            if (e.is_syntax() || e.is_eof())
                && !text.contains("NaN")
                && !text.contains("Infinity")
                && !text.contains("\\u")
                && !e.to_string().contains("recursion") =>
        {
            Ok(Vec::new())
        }
        Err(_) => Err(Refused),
    }
}

/// ``hivewire.data._rows.whole``: decimal digits with an optional minus, within int64.
fn whole(v: Option<&str>) -> Option<i64> {
    let v = v?;
    let digits = v.strip_prefix('-').unwrap_or(v);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let trimmed = digits.trim_start_matches('0');
    if trimmed.len() > 19 {
        return None;
    }
    let n: i128 = if trimmed.is_empty() { 0 } else { trimmed.parse().ok()? };
    let n = if v.starts_with('-') { -n } else { n };
    i64::try_from(n).ok()
}

const NO_ICEBERG: usize = 9;

/// The cells `objects` makes: 12, the five changes, the Iceberg ones.
const OBJECT_CELLS: usize = 12 + 5 + NO_ICEBERG;

/// ``iceberg_columns``: the nine ``iceberg_*`` cells, pushed onto `out`.
fn iceberg<'a>(
    out: &mut Vec<Cell<'a>>,
    ix: &Ix,
    spec: &Spec,
    event: &Event,
    env: &V<'a>,
    table: &V<'a>,
    old: &V<'a>,
) -> Result<(), Refused> {
    let c = &spec.constants;
    let nulls = |out: &mut Vec<Cell<'a>>| out.extend((0..NO_ICEBERG).map(|_| Cell::Null));
    if table.is_null() {
        nulls(out);
        return Ok(());
    }
    let params = table.get(ix.t_params).map();
    let kind = get_str(params, &c.table_type).unwrap_or(Cow::Borrowed(""));
    if !kind.is_ascii() {
        return Err(Refused);
    }
    if !kind.eq_ignore_ascii_case("ICEBERG") {
        nulls(out);
        return Ok(());
    }
    let roles = &event.roles;
    let (current, previous) = if roles.metadata.is_some() && roles.previous_metadata.is_some() {
        (nonempty(s(env.get(roles.metadata))), nonempty(s(env.get(roles.previous_metadata))))
    } else {
        let current = nonempty(get_str(params, &c.metadata_location));
        let previous = if roles.old_table.is_some() {
            nonempty(get_str(old.get(ix.t_params).map(), &c.metadata_location))
        } else {
            nonempty(get_str(params, &c.previous_metadata_location))
        };
        (current, previous)
    };
    let id = whole(get_str(params, &c.snapshot_id).as_deref());
    let committed = whole(get_str(params, &c.snapshot_timestamp).as_deref())
        .filter(|ms| ms.unsigned_abs() < (i64::MAX as u64 / 1000))
        .map(|ms| ms * 1000);
    let text = get_str(params, &c.snapshot_summary);
    let summary = match text.as_deref() {
        None => Vec::new(),
        Some(text) => summary(text)?,
    };
    // ``_scalar`` of a summary value: Python's json reads numbers as their text (parse_int=str), and a raw
    // JSON number's text is exactly that
    let scalar = |key: &str| -> Result<Option<String>, Refused> {
        let Some(raw) = summary.iter().rev().find(|(k, _)| k == key).map(|(_, raw)| raw.get()) else {
            return Ok(None);
        };
        Ok(match raw.as_bytes()[0] {
            b'"' => Some(parse::string_value(raw)?),
            b't' => Some("true".to_owned()),
            b'f' => Some("false".to_owned()),
            b'-' | b'0'..=b'9' => Some(raw.to_owned()),
            _ => None,
        })
    };
    let count = |key: &str| -> Result<Cell<'a>, Refused> {
        Ok(whole(scalar(key)?.as_deref()).map_or(Cell::Null, Cell::Int))
    };
    let cells = [
        cell(current),
        cell(previous),
        id.map_or(Cell::Null, Cell::Int),
        committed.map_or(Cell::Null, Cell::Int),
        scalar("operation")?.map_or(Cell::Null, |s| Cell::Str(Cow::Owned(s))),
    ];
    let mut counts = Vec::with_capacity(c.summary_counts.len());
    for key in &c.summary_counts {
        counts.push(count(key)?);
    }
    out.extend(cells);
    out.extend(counts);
    Ok(())
}

/// Which of the costly cells a batch reads: the others are left null (the message is still parsed and
/// validated whole, so that whether it decodes does not depend on the columns asked for).
#[derive(Clone, Copy)]
pub struct Need {
    /// The cells `objects` makes (``location`` .. ``files`` but ``parameters``, the changes, the Iceberg
    /// cells), and ``decode_error`` (a message whose objects the Python decoder would fail on).
    pub objects: bool,
    pub parameters: bool,
}

impl Need {
    pub const ALL: Need = Need { objects: true, parameters: true };

    /// What the columns at `selected` (indices into the schema) need.
    pub fn of(selected: &[usize]) -> Need {
        let objects = |c: &usize| matches!(c, 11..=19 | 21..=23 | 25 | 27..=40);
        Need { objects: selected.iter().any(objects), parameters: selected.contains(&20) }
    }
}

/// The row of one message, or ``Refused`` when the Python decoder must make it.
pub fn row<'a>(
    spec: &'a Spec,
    ix: &Ix,
    bump: &'a Bump,
    value: &'a [u8],
    origin: Option<&Origin<'a>>,
    need: Need,
) -> Result<Vec<Cell<'a>>, Refused> {
    if value.len() > spec.constants.max_message_bytes {
        return Err(Refused);
    }
    let (event, fields) = scan::message(value, bump, spec)?;
    let env = V::Struct(fields);
    for &r in &event.required {
        if env.get(Some(r)).is_null() {
            return Err(Refused);
        }
    }
    let mut db_name = s(env.get(event.database_name));
    let table_name = if event.database_event { None } else { s(env.get(event.table_name)) };
    if event.log_only {
        db_name = Some(db_name.unwrap_or(Cow::Borrowed("")));
    } else if db_name.is_none() || (table_name.is_none() && !event.database_event) {
        return Err(Refused);
    }
    let db = db_name.unwrap_or(Cow::Borrowed(""));
    let qualified = match &table_name {
        None => db.clone(),
        Some(t) => Cow::Owned(dotted(&db, t)),
    };
    let status = match env.get(event.status) {
        V::Bool(b) => *b,
        _ => true,
    };
    let objects = if need.objects {
        objects(spec, ix, event, &env)?
    } else {
        (0..OBJECT_CELLS).map(|_| Cell::Null).collect()
    };
    let parameters = env.get(event.parameters);
    let hive_version = get_str(parameters.map(), &spec.constants.hive_version);
    let mut out = Vec::with_capacity(COLUMNS);
    out.push(Cell::Str(Cow::Borrowed(&event.event_type)));
    out.push(Cell::Str(db));
    out.push(cell(table_name));
    out.push(Cell::Str(qualified));
    out.push(Cell::Bool(status));
    kafka(origin, &mut out);
    let mut objects = objects.into_iter();
    out.extend(objects.by_ref().take(9));
    out.push(if need.parameters { Cell::Map(map(parameters)) } else { Cell::Null });
    out.extend(objects.by_ref().take(3));
    out.push(cell(hive_version));
    out.push(Cell::Null);
    out.push(Cell::Bytes(Cow::Borrowed(value)));
    out.extend(objects);
    debug_assert_eq!(out.len(), COLUMNS);
    Ok(out)
}

const MS_PER_DAY: i64 = 86_400_000;

/// ``kafka_columns``: event_time (us), event_date (days), topic, partition, offset, timestamp (ms).
pub fn kafka<'a>(origin: Option<&Origin<'a>>, out: &mut Vec<Cell<'a>>) {
    let Some(o) = origin else {
        out.extend((0..6).map(|_| Cell::Null));
        return;
    };
    match o.timestamp {
        Some(ms) => {
            out.push(Cell::Int(ms * 1000));
            out.push(Cell::Int(ms.div_euclid(MS_PER_DAY)));
        }
        None => out.extend([Cell::Null, Cell::Null]),
    }
    out.push(Cell::Str(o.topic.clone()));
    out.push(Cell::Int(o.partition));
    out.push(Cell::Int(o.offset));
    out.push(o.timestamp.map_or(Cell::Null, Cell::Int));
}

/// ``object_columns``: location .. files (12 cells), then the five changes and the nine iceberg cells.
fn objects<'a>(spec: &Spec, ix: &Ix, event: &Event, env: &V<'a>) -> Result<Vec<Cell<'a>>, Refused> {
    let roles = &event.roles;
    let mut table: &V<'a> = &parse::NULL;
    let mut old_table: &V<'a> = &parse::NULL;
    let mut location: Option<Cow<'a, str>> = None;
    let mut keys: Option<Vec<[Option<Cow<'a, str>>; 3]>> = None;
    let (mut table_type, mut cols, mut values, mut locations) = (None, None, None, None);
    let (mut old_values, mut old_name, mut new_name) = (None, None, None);
    let (mut table_parameters, mut delete_data, mut files) = (None, None, None);
    let mut altered: Option<Changes<'a>> = None;
    if roles.table.is_some() {
        table = env.get(roles.table);
        if roles.old_table.is_some() {
            old_table = env.get(roles.old_table);
            let (o, t) = (old_table, table);
            if !o.is_null() && !t.is_null() {
                let (od, on) = (o.get(ix.t_db).str(), o.get(ix.t_name).str());
                let (td, tn) = (t.get(ix.t_db).str(), t.get(ix.t_name).str());
                if (od, on) != (td, tn) {
                    old_name = Some(Cow::Owned(dotted(show(od), show(on))));
                    new_name = Some(Cow::Owned(dotted(show(td), show(tn))));
                }
            }
            altered = Some(changes(ix, spec, old_table, table, ix.t_sd, ix.t_params)?);
        }
    }
    let part_location = |p: &V<'a>| {
        let sd = p.get(ix.p_sd);
        if sd.is_null() {
            None
        } else {
            s(sd.get(ix.sd_location))
        }
    };
    if roles.partitions.is_some() {
        let parts: Vec<&V<'a>> = env.get(roles.partitions).list().iter().filter(|p| !p.is_null()).collect();
        values = Some(parts.iter().map(|p| strs(p.get(ix.p_values))).collect::<Vec<_>>());
        locations = Some(parts.iter().map(|p| part_location(p)).collect::<Vec<_>>());
    } else if roles.new_partition.is_some() {
        let new = env.get(roles.new_partition);
        if !new.is_null() {
            values = Some(vec![strs(new.get(ix.p_values))]);
            locations = Some(vec![part_location(new)]);
        }
        if roles.old_partition.is_some() {
            let old = env.get(roles.old_partition);
            if !old.is_null() {
                old_values = Some(strs(old.get(ix.p_values)));
            }
            altered = Some(changes(ix, spec, old, new, ix.p_sd, ix.p_params)?);
        }
    } else if roles.key_values.is_some() {
        let kv = env.get(roles.key_values).map();
        keys = Some(kv.iter().map(|(k, _)| [Some(Cow::Borrowed(*k)), None, None]).collect());
        if kv.is_empty() {
            values = Some(vec![]);
            locations = Some(vec![]);
        } else {
            values = Some(vec![kv.iter().map(|(_, v)| s(v)).collect()]);
            locations = Some(vec![None]);
        }
    }
    if roles.delete_data.is_some() {
        delete_data = Some(matches!(env.get(roles.delete_data), V::Bool(true)));
    }
    if roles.files.is_some() {
        files = Some(strs(env.get(roles.files)));
    }
    if roles.database.is_some() {
        let database = env.get(roles.database);
        location = if database.is_null() { None } else { s(database.get(ix.d_location)) };
        if roles.old_database.is_some() {
            let old_db = env.get(roles.old_database);
            if !old_db.is_null() && !database.is_null() {
                let (o, n) = (old_db.get(ix.d_name).str(), database.get(ix.d_name).str());
                if o != n {
                    old_name = s(old_db.get(ix.d_name));
                    new_name = s(database.get(ix.d_name));
                }
            }
        }
    }
    if !table.is_null() {
        let sd = table.get(ix.t_sd);
        if !sd.is_null() {
            location = s(sd.get(ix.sd_location));
            cols = Some(ix.fields(sd.get(ix.sd_cols)));
        }
        keys = Some(ix.fields(table.get(ix.t_keys)));
        table_type = s(table.get(ix.t_type));
        table_parameters = Some(map(table.get(ix.t_params)));
    }
    let mut out = Vec::with_capacity(OBJECT_CELLS);
    out.extend([
        cell(location),
        cell(table_type),
        cols.map_or(Cell::Null, Cell::Triples),
        keys.map_or(Cell::Null, Cell::Triples),
        values.map_or(Cell::Null, Cell::StrLists),
        locations.map_or(Cell::Null, Cell::StrList),
        old_values.map_or(Cell::Null, Cell::StrList),
        cell(old_name),
        cell(new_name),
        table_parameters.map_or(Cell::Null, Cell::Map),
        delete_data.map_or(Cell::Null, Cell::Bool),
        files.map_or(Cell::Null, Cell::StrList),
    ]);
    match altered {
        Some(changed) => out.extend(changed),
        None => out.extend((0..5).map(|_| Cell::Null)),
    }
    iceberg(&mut out, ix, spec, event, env, table, old_table)?;
    Ok(out)
}
