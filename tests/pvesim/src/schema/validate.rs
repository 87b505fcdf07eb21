//! Parameter verification as pve-common's JSONSchema does it, with PVE's exact texts.
//! Input values are strings (form) or JSON values; on success every value is turned
//! into the string a Perl handler would see (booleans `1`/`0`, lists joined by `,`).

use super::formats;
use crate::propstring;
use regex::Regex;
use serde_json::{Map, Value};
use std::collections::{BTreeMap, HashMap};
use std::sync::{LazyLock, Mutex};

pub type Errors = BTreeMap<String, String>;

static INTEGER: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^[+-]?\d+$").unwrap());
static NUMBER: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$").unwrap());
static PATTERNS: LazyLock<Mutex<HashMap<String, Option<Regex>>>> = LazyLock::new(Default::default);

/// Schema patterns are anchored like Perl's `m/^$pattern$/`; compiled once.
fn pattern(p: &str) -> Option<Regex> {
    let mut cache = PATTERNS.lock().unwrap_or_else(|e| e.into_inner());
    cache
        .entry(p.to_string())
        .or_insert_with(|| Regex::new(&format!("^(?:{p})$")).ok())
        .clone()
}

/// Index ranges of `key[n]` properties (qemu-server; not in the schema).
pub fn index_max(base: &str) -> u32 {
    match base {
        "scsi" => 30,
        "virtio" => 15,
        "ide" => 3,
        "sata" => 5,
        "net" | "ipconfig" => 31,
        "unused" => 255,
        "numa" => 7,
        "hostpci" => 15,
        "usb" => 13,
        "serial" => 3,
        "parallel" => 2,
        "virtiofs" => 9,
        "mp" => 255,
        _ => 31,
    }
}

/// Look up the schema of `key`, resolving `net7` to `net[n]` within its index range.
pub fn find_prop<'a>(props: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    if let Some(p) = props.get(key) {
        if !key.ends_with("[n]") {
            return Some(p);
        }
    }
    let digits = key.trim_start_matches(|c: char| !c.is_ascii_digit());
    let base = &key[..key.len() - digits.len()];
    if digits.is_empty() || base.is_empty() || !digits.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    if digits.len() > 1 && digits.starts_with('0') {
        return None;
    }
    let idx: u32 = digits.parse().ok()?;
    if idx > index_max(base) {
        return None;
    }
    props.get(&format!("{base}[n]"))
}

fn num(v: Option<&Value>) -> Option<f64> {
    match v? {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

fn fmt_num(f: f64) -> String {
    if f.fract() == 0.0 && f.abs() < 1e15 {
        format!("{}", f as i64)
    } else {
        format!("{f}")
    }
}

fn type_name(t: &str) -> &str {
    t
}

/// Convert a JSON-typed input to the string a handler sees, or a type error.
fn to_text(ty: &str, v: &Value, list: bool) -> Result<String, String> {
    match v {
        Value::String(s) => Ok(s.clone()),
        Value::Bool(b) if ty == "boolean" => Ok(if *b { "1" } else { "0" }.into()),
        Value::Bool(b) => Err(format!(
            "type check ('{}') failed - got '{}'",
            type_name(ty),
            if *b { 1 } else { 0 }
        )),
        Value::Number(n) => Ok(n.to_string()),
        Value::Array(items) if list || ty == "array" => {
            let parts: Result<Vec<String>, String> = items.iter().map(|i| to_text("string", i, false)).collect();
            Ok(parts?.join(","))
        }
        Value::Array(_) => Err(format!("type check ('{ty}') failed - got ARRAY")),
        Value::Object(_) => Err(format!("type check ('{ty}') failed - got HASH")),
        Value::Null => Ok(String::new()),
    }
}

/// Check one scalar value against its property schema. `in_propstring` relaxes the
/// boolean rule (on/off/yes/no/true/false accepted there).
pub fn check_scalar(schema: &Map<String, Value>, value: &str, path: &str, in_propstring: bool) -> Result<(), String> {
    let ty = schema.get("type").and_then(Value::as_str).unwrap_or("string");
    match ty {
        "integer" => {
            let ok = INTEGER.is_match(value);
            if !ok {
                return Err(format!("type check ('integer') failed - got '{value}'"));
            }
        }
        "number" => {
            let ok = NUMBER.is_match(value);
            if !ok {
                return Err(format!("type check ('number') failed - got '{value}'"));
            }
        }
        "boolean" => {
            let ok = if in_propstring {
                propstring::parse_bool(value).is_some()
            } else {
                value == "1" || value == "0"
            };
            if !ok {
                return Err(format!("type check ('boolean') failed - got '{value}'"));
            }
        }
        _ => {}
    }
    match schema.get("format") {
        Some(Value::String(f)) => {
            if let Err(e) = formats::check(f, value) {
                return Err(format!("invalid format - {e}"));
            }
        }
        Some(Value::Object(f)) => check_propstring(f, value, path)?,
        _ => {}
    }
    if let Some(p) = schema.get("pattern").and_then(Value::as_str) {
        let ok = pattern(p).map(|r| r.is_match(value)).unwrap_or(true);
        if !ok {
            return Err("value does not match the regex pattern".into());
        }
    }
    if ty == "string" {
        let len = value.chars().count() as f64;
        if let Some(max) = num(schema.get("maxLength")) {
            if len > max {
                return Err(format!("value may only be {} characters long", fmt_num(max)));
            }
        }
        if let Some(min) = num(schema.get("minLength")) {
            if len < min {
                return Err(format!("value must be at least {} characters long", fmt_num(min)));
            }
        }
    }
    if ty == "integer" || ty == "number" {
        let v: f64 = value.parse().unwrap_or(0.0);
        if let Some(min) = num(schema.get("minimum")) {
            if v < min {
                return Err(format!("value must have a minimum value of {}", fmt_num(min)));
            }
        }
        if let Some(max) = num(schema.get("maximum")) {
            if v > max {
                return Err(format!("value must have a maximum value of {}", fmt_num(max)));
            }
        }
    }
    if let Some(e) = schema.get("enum").and_then(Value::as_array) {
        let names: Vec<&str> = e.iter().filter_map(Value::as_str).collect();
        if !names.contains(&value) {
            return Err(format!(
                "value '{value}' does not have a value in the enumeration '{}'",
                names.join(", ")
            ));
        }
    }
    Ok(())
}

/// Property string: grammar, then each sub-value; sub-errors are reported as
/// `<param>.<key>: <msg>` lines under `format error`.
pub fn check_propstring(format: &Map<String, Value>, value: &str, path: &str) -> Result<(), String> {
    let props = propstring::parse(format, value).map_err(|e| format!("invalid format - {e}"))?;
    let mut lines = Vec::new();
    for (k, v) in &props {
        let Some(sub) = format.get(k).and_then(Value::as_object) else {
            continue;
        };
        if let Err(e) = check_scalar(sub, v, &format!("{path}.{k}"), true) {
            lines.push(format!("{path}.{k}: {e}"));
        }
    }
    for (k, sub) in format {
        let Some(sub) = sub.as_object() else { continue };
        if sub.contains_key("alias") {
            continue;
        }
        if !propstring::truthy(sub.get("optional")) && !props.contains_key(k) {
            lines.push(format!("{path}.{k}: property is missing and it is not optional"));
        }
    }
    if lines.is_empty() {
        Ok(())
    } else {
        Err(format!("invalid format - format error\n{}\n", lines.join("\n")))
    }
}

/// Validate all parameters of a request against a method's `parameters` schema and
/// turn them into strings.
pub fn validate(params: &BTreeMap<String, Value>, pschema: &Value) -> Result<BTreeMap<String, String>, Errors> {
    let empty = Map::new();
    let props = pschema.get("properties").and_then(Value::as_object).unwrap_or(&empty);
    let additional = pschema.get("additionalProperties");
    let forbid_additional = matches!(additional, Some(v) if !propstring::truthy(Some(v)));
    let mut errors = Errors::new();
    let mut out = BTreeMap::new();
    let add = |errors: &mut Errors, k: &str, msg: String| {
        errors
            .entry(k.to_string())
            .and_modify(|e| e.push_str(&format!("\\n{msg}")))
            .or_insert(msg);
    };
    for (k, v) in params {
        let Some(schema) = find_prop(props, k).and_then(Value::as_object) else {
            if forbid_additional {
                add(
                    &mut errors,
                    k,
                    "property is not defined in schema and the schema does not allow additional properties".into(),
                );
            } else {
                out.insert(k.clone(), to_text("string", v, true).unwrap_or_default());
            }
            continue;
        };
        if v.is_null() {
            // `check_prop` on an undefined value: absent (see the missing check below).
            continue;
        }
        let ty = schema.get("type").and_then(Value::as_str).unwrap_or("string");
        let is_list = matches!(schema.get("format"), Some(Value::String(f)) if f.ends_with("-list"));
        let text = match to_text(ty, v, is_list) {
            Ok(t) => t,
            Err(e) => {
                add(&mut errors, k, e);
                continue;
            }
        };
        if let Err(e) = check_scalar(schema, &text, k, false) {
            add(&mut errors, k, e);
            continue;
        }
        out.insert(k.clone(), text);
    }
    for (k, schema) in props {
        if k.ends_with("[n]") {
            continue;
        }
        if !propstring::truthy(schema.get("optional")) && params.get(k).is_none_or(Value::is_null) {
            add(&mut errors, k, "property is missing and it is not optional".into());
        }
    }
    for k in params.keys() {
        if let Some(req) = find_prop(props, k)
            .and_then(|s| s.get("requires"))
            .and_then(Value::as_str)
        {
            if !params.contains_key(req) {
                add(&mut errors, req, format!("missing property required by '{k}'"));
            }
        }
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::Schema;
    use serde_json::json;

    fn create_schema() -> Value {
        Schema::embedded().method("/nodes/{node}/qemu", "POST").unwrap()["parameters"].clone()
    }

    fn p(pairs: &[(&str, &str)]) -> BTreeMap<String, Value> {
        pairs.iter().map(|(k, v)| (k.to_string(), json!(v))).collect()
    }

    #[test]
    fn missing_and_unknown() {
        let e = validate(&p(&[("node", "pve1"), ("foo", "1")]), &create_schema()).unwrap_err();
        assert_eq!(e["vmid"], "property is missing and it is not optional");
        assert_eq!(
            e["foo"],
            "property is not defined in schema and the schema does not allow additional properties"
        );
    }

    #[test]
    fn types_ranges_and_booleans() {
        let s = create_schema();
        let e = validate(&p(&[("node", "pve1"), ("vmid", "abc")]), &s).unwrap_err();
        assert_eq!(e["vmid"], "type check ('integer') failed - got 'abc'");
        let e = validate(&p(&[("node", "pve1"), ("vmid", "99")]), &s).unwrap_err();
        assert_eq!(e["vmid"], "value must have a minimum value of 100");
        let e = validate(&p(&[("node", "pve1"), ("vmid", "100"), ("onboot", "true")]), &s).unwrap_err();
        assert_eq!(e["onboot"], "type check ('boolean') failed - got 'true'");
        let mut params = p(&[("node", "pve1"), ("vmid", "100")]);
        params.insert("onboot".into(), json!(true));
        assert_eq!(validate(&params, &s).unwrap()["onboot"], "1");
        let e = validate(&p(&[("node", "pve1"), ("vmid", "100"), ("ostype", "dos")]), &s).unwrap_err();
        assert!(e["ostype"].starts_with("value 'dos' does not have a value in the enumeration 'other, wxp"));
        let e = validate(&p(&[("node", "pve1"), ("vmid", "100"), ("net32", "virtio")]), &s).unwrap_err();
        assert!(e.contains_key("net32"), "index out of range");
        assert!(validate(&p(&[("node", "pve1"), ("vmid", "100"), ("net31", "virtio")]), &s).is_ok());
    }

    #[test]
    fn property_string_errors() {
        let s = create_schema();
        let e = validate(
            &p(&[("node", "pve1"), ("vmid", "100"), ("net0", "foo,bridge=vmbr0")]),
            &s,
        )
        .unwrap_err();
        assert!(
            e["net0"].starts_with("invalid format - format error\nnet0.model: value 'foo' does not have a value in the enumeration 'e1000, "),
            "{}",
            e["net0"]
        );
        assert!(e["net0"].ends_with("'\n"));
        let e = validate(
            &p(&[("node", "pve1"), ("vmid", "100"), ("net0", "virtio,bridge=a,bridge=b")]),
            &s,
        )
        .unwrap_err();
        assert_eq!(
            e["net0"],
            "invalid format - duplicate key in comma-separated list property: bridge\n"
        );
        let e = validate(&p(&[("node", "pve1"), ("vmid", "100"), ("net0", "virtio,tag=abc")]), &s).unwrap_err();
        assert_eq!(
            e["net0"],
            "invalid format - format error\nnet0.tag: type check ('integer') failed - got 'abc'\n"
        );
        let e = validate(&p(&[("node", "pve1"), ("vmid", "100"), ("name", "bad_name")]), &s).unwrap_err();
        assert_eq!(
            e["name"],
            "invalid format - value does not look like a valid DNS name\n"
        );
        assert!(validate(
            &p(&[("node", "pve1"), ("vmid", "100"), ("net0", "virtio,firewall=on")]),
            &s
        )
        .is_ok());
    }
}
