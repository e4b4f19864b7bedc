//! The description of the messages, made by Python (`hivewire.data._native_description`) from the msgspec
//! models and the event types' roles: one source of truth for what is accepted and which field fills which
//! column.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use crate::parse::{Accept, FieldSpec, Model};

/// The fields of the Thrift objects the columns read: the only ones kept after validation.
const KEPT: &[&str] = &[
    "dbName", "tableName", "sd", "location", "cols", "name", "type", "comment", "partitionKeys", "tableType",
    "parameters", "values", "locationUri",
];

/// Field indices of one event type's envelope model, by role (`hivewire.data._rows.Roles`).
#[derive(Debug, Default)]
pub struct Roles {
    pub table: Option<usize>,
    pub old_table: Option<usize>,
    pub partitions: Option<usize>,
    pub new_partition: Option<usize>,
    pub old_partition: Option<usize>,
    pub database: Option<usize>,
    pub old_database: Option<usize>,
    pub delete_data: Option<usize>,
    pub files: Option<usize>,
    pub key_values: Option<usize>,
    pub metadata: Option<usize>,
    pub previous_metadata: Option<usize>,
}

#[derive(Debug)]
pub struct Event {
    pub model: usize,
    pub event_type: String,
    pub database_event: bool,
    pub log_only: bool,
    pub required: Vec<usize>,
    pub roles: Roles,
    pub database_name: Option<usize>,
    pub table_name: Option<usize>,
    pub status: Option<usize>,
    pub parameters: Option<usize>,
}

#[derive(Debug)]
pub struct Constants {
    pub max_message_bytes: usize,
    pub table_type: String,
    pub metadata_location: String,
    pub previous_metadata_location: String,
    pub snapshot_id: String,
    pub snapshot_timestamp: String,
    pub snapshot_summary: String,
    pub summary_counts: Vec<String>,
    pub volatile: HashSet<String>,
    pub hive_version: String,
}

pub struct Spec {
    pub models: Vec<Model>,
    pub events: HashMap<String, Event>,
    pub constants: Constants,
    /// Model index of each Thrift class the columns read, by class name.
    pub classes: HashMap<String, usize>,
}

fn bad(what: &str) -> String {
    format!("hivewire native decoder: bad description ({what})")
}

fn accept(v: &Value) -> Result<Accept, String> {
    let mut a = Accept::default();
    add(&mut a, v)?;
    Ok(a)
}

fn add(a: &mut Accept, v: &Value) -> Result<(), String> {
    let kind = v["k"].as_str().ok_or_else(|| bad("type kind"))?;
    match kind {
        "none" => a.null = true,
        "bool" => a.boolean = true,
        "int" => a.int = Some((v["ge"].as_i64().unwrap_or(i64::MIN), v["le"].as_i64().unwrap_or(i64::MAX))),
        "str" => a.string = true,
        "lit" => {
            let set = a.literals.get_or_insert_with(Vec::new);
            for item in v["values"].as_array().ok_or_else(|| bad("literals"))? {
                match item {
                    Value::String(s) => {
                        set.push(s.clone());
                    }
                    _ => return Err(bad("non-string literal")),
                }
            }
        }
        "list" => a.list = Some(Box::new(accept(&v["item"])?)),
        "dict" => a.dict = Some(Box::new(accept(&v["value"])?)),
        "struct" => a.model = Some(v["model"].as_u64().ok_or_else(|| bad("model"))? as usize),
        "union" => {
            for t in v["types"].as_array().ok_or_else(|| bad("union"))? {
                add(a, t)?;
            }
        }
        other => return Err(bad(other)),
    }
    Ok(())
}

fn string(v: &Value, key: &str) -> Result<String, String> {
    v[key].as_str().map(str::to_owned).ok_or_else(|| bad(key))
}

pub fn load(text: &str) -> Result<Spec, String> {
    let d: Value = serde_json::from_str(text).map_err(|e| bad(&e.to_string()))?;
    let mut models = Vec::new();
    let mut classes = HashMap::new();
    for (i, m) in d["models"].as_array().ok_or_else(|| bad("models"))?.iter().enumerate() {
        let mut fields = Vec::new();
        let mut index = HashMap::new();
        for f in m["fields"].as_array().ok_or_else(|| bad("fields"))? {
            let key = string(f, "key")?;
            if key.bytes().any(|c| c < 0x20 || c == b'"' || c == b'\\') {
                return Err(bad("a key with a quote, a backslash or a control character"));
            }
            index.insert(key.clone(), fields.len());
            fields.push(FieldSpec {
                keep: KEPT.contains(&key.as_str()) || m["envelope"].as_bool() == Some(true),
                key,
                accept: accept(&f["type"])?,
                required: f["required"].as_bool().unwrap_or(false),
            });
        }
        if fields.len() > 128 {
            return Err(bad("a model of more than 128 fields"));
        }
        let required = fields.iter().enumerate().filter(|(_, f)| f.required).fold(0u128, |r, (i, _)| r | 1 << i);
        classes.insert(string(m, "name")?, i);
        let keys = fields.iter().map(|f| f.key.clone().into_boxed_str()).collect();
        models.push(Model { fields, index, keys, required });
    }
    let mut events = HashMap::new();
    for e in d["events"].as_array().ok_or_else(|| bad("events"))? {
        let model = e["model"].as_u64().ok_or_else(|| bad("event model"))? as usize;
        let field = |key: &str| models[model].field(key);
        let role = |name: &str| e["roles"][name].as_str().and_then(field);
        let roles = Roles {
            table: role("table"),
            old_table: role("old_table"),
            partitions: role("partitions"),
            new_partition: role("new_partition"),
            old_partition: role("old_partition"),
            database: role("database"),
            old_database: role("old_database"),
            delete_data: role("delete_data"),
            files: role("files"),
            key_values: role("key_values"),
            metadata: role("metadata"),
            previous_metadata: role("previous_metadata"),
        };
        let required = e["required"]
            .as_array()
            .ok_or_else(|| bad("required"))?
            .iter()
            .filter_map(|k| k.as_str().and_then(field))
            .collect();
        events.insert(
            string(e, "tag")?,
            Event {
                model,
                event_type: string(e, "event_type")?,
                database_event: e["database_event"].as_bool().unwrap_or(false),
                log_only: e["log_only"].as_bool().unwrap_or(false),
                required,
                roles,
                database_name: field("databaseName"),
                table_name: field("tableName"),
                status: field("status"),
                parameters: field("parameters"),
            },
        );
    }
    let c = &d["constants"];
    let list = |key: &str| -> Vec<String> {
        c[key].as_array().map(|a| a.iter().filter_map(|s| s.as_str().map(str::to_owned)).collect()).unwrap_or_default()
    };
    let constants = Constants {
        max_message_bytes: c["max_message_bytes"].as_u64().ok_or_else(|| bad("max_message_bytes"))? as usize,
        table_type: string(c, "table_type")?,
        metadata_location: string(c, "metadata_location")?,
        previous_metadata_location: string(c, "previous_metadata_location")?,
        snapshot_id: string(c, "snapshot_id")?,
        snapshot_timestamp: string(c, "snapshot_timestamp")?,
        snapshot_summary: string(c, "snapshot_summary")?,
        summary_counts: list("summary_counts"),
        volatile: list("volatile").into_iter().collect(),
        hive_version: string(c, "hive_version")?,
    };
    Ok(Spec { models, events, constants, classes })
}
