//! Writes [`super::formats`] from PVE's API schema (the `format` of each config key of
//! `POST /nodes/{node}/qemu`; for keys whose format is only named there, like `boot`
//! or `cpu`, from the `typetext`). Run `UPDATE_FORMATS=1 cargo test -p ferrox-pve-rules
//! formats_table` after a schema update; the same test fails when the table is stale.
//! `newer-keys.json` beside this file names the sub-keys later qemu-server releases
//! added, each with its releases and source: their definitions are merged into the
//! formats, and every entry is listed in `INTRODUCED` for the version rule.

use std::collections::BTreeMap;

use serde_json::Value;

/// The Rust constant of a config key's format: `net[n]` -> `NET`, `amd-sev` -> `AMD_SEV`.
fn constant_of(config_key: &str) -> String {
    config_key
        .trim_end_matches("[n]")
        .replace('-', "_")
        .to_ascii_uppercase()
}

/// Parameters of the config calls that are not config keys: what GET config answers
/// decides (a config key is one PVE stores), `digest` aside.
fn is_config_key(name: &str, stored: &serde_json::Map<String, Value>) -> bool {
    stored.contains_key(name) && name != "digest"
}

/// Whether a parameter's value is a property string: an inline format, or a named
/// format whose typetext lists `key=` parts.
fn is_property_string(param: &Value) -> bool {
    let typetext = param["typetext"].as_str().unwrap_or("");
    param["format"].is_object() || (param["format"].is_string() && typetext.contains('=') && !typetext.starts_with('('))
}

/// The schema file: `$PVE_API_SCHEMA`, else the official schema the repository keeps in
/// `tests/pvesim/schema/pve-api-schema.json` (its provenance and licence are in that
/// folder's README), so the freshness test has something to compare on every checkout.
pub(super) fn schema_path() -> std::path::PathBuf {
    if let Some(p) = std::env::var_os("PVE_API_SCHEMA") {
        return p.into();
    }
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/pvesim/schema/pve-api-schema.json")
}

fn find_path<'a>(nodes: &'a [Value], path: &str) -> Option<&'a Value> {
    for node in nodes {
        if node["path"] == path {
            return Some(node);
        }
        if let Some(found) = node["children"].as_array().and_then(|c| find_path(c, path)) {
            return Some(found);
        }
    }
    None
}

/// The Rust source of `formats.rs` for this schema: the format of every property-string
/// config key, every config key with what it accepts, and the parameters of the create
/// and config calls that are not config keys.
pub(super) fn generate(schema: &Value, newer: &Value) -> Result<String, String> {
    let root = schema.as_array().ok_or("the schema is not a JSON array")?;
    let method = |path: &str, m: &str| {
        find_path(root, path)
            .and_then(|n| n["info"][m].as_object())
            .ok_or(format!("no {m} {path} in the schema"))
    };
    let create = &method("/nodes/{node}/qemu", "POST")?["parameters"]["properties"];
    let update = &method("/nodes/{node}/qemu/{vmid}/config", "PUT")?["parameters"]["properties"];
    let update_async = &method("/nodes/{node}/qemu/{vmid}/config", "POST")?["parameters"]["properties"];
    let stored = method("/nodes/{node}/qemu/{vmid}/config", "GET")?["returns"]["properties"]
        .as_object()
        .cloned()
        .ok_or("GET config has no returns.properties")?;
    let (Some(create), Some(update), Some(update_async)) =
        (create.as_object(), update.as_object(), update_async.as_object())
    else {
        return Err("the create or config call has no parameters".into());
    };
    let mut out = String::from(
        "//! Property-string formats and the config keys of QEMU VMs, generated from PVE's API\n\
         //! schema by `UPDATE_FORMATS=1 cargo test -p ferrox-pve-rules formats_table`. Do not edit\n\
         //! by hand.\n\n\
         use super::format_spec::{alias, format_among, key, key_alias, Format, Kind};\n\
         use super::schema_entry::{Accepts, ConfigKey, Introduced};\n",
    );
    let newer_keys = newer["keys"].as_array().ok_or("newer-keys.json has no keys")?;
    let mut config_keys: Vec<(&String, &Value)> = update.iter().filter(|(k, _)| is_config_key(k, &stored)).collect();
    config_keys.sort_by(|a, b| a.0.cmp(b.0));
    let mut constants = Vec::new();
    for (config_key, param) in &config_keys {
        if !is_property_string(param) {
            continue;
        }
        let mut keys = match &param["format"] {
            Value::Object(obj) => keys_from_object(obj),
            _ => keys_from_typetext(param["typetext"].as_str().unwrap_or_default()),
        };
        merge_newer(&mut keys, config_key, newer_keys);
        let constant = constant_of(config_key);
        out.push_str(&format!(
            "\n/// The property string of the `{config_key}` config key, as the schema declares it.\n\
             pub const {constant}: Format = Format {{\n    name: {config_key:?},\n    keys: &[\n"
        ));
        for line in keys.values() {
            out.push_str(&format!("        {line},\n"));
        }
        out.push_str("    ],\n};\n");
        constants.push(constant);
    }
    out.push_str("\n/// Every format above.\npub const ALL: &[&Format] = &[");
    out.push_str(&constants.iter().map(|c| format!("&{c}")).collect::<Vec<_>>().join(", "));
    out.push_str("];\n");
    out.push_str(
        "\n/// The format of a VM config key: `net3` -> `net[n]`, `scsi0` -> `scsi[n]`, `efidisk0`.\n\
         /// `None` for keys that are not property strings or indexes out of range.\n\
         pub fn for_config_key(key: &str) -> Option<&'static Format> {\n    format_among(ALL, key)\n}\n",
    );
    out.push_str("\n/// Every key of a VM config PVE lets a client set, with what it accepts.\npub const CONFIG_KEYS: &[ConfigKey] = &[\n");
    for (config_key, param) in &config_keys {
        out.push_str(&format!(
            "    ConfigKey {{ name: {config_key:?}, accepts: {}, typetext: {:?} }},\n",
            accepts_of(config_key, param),
            typetext_of(param)
        ));
    }
    out.push_str("];\n");
    let mut requests: Vec<&String> = create
        .keys()
        .chain(update.keys())
        .chain(update_async.keys())
        .filter(|k| !is_config_key(k, &stored))
        .collect();
    requests.sort();
    requests.dedup();
    out.push_str("\n/// Parameters of the create and config calls that are not config keys.\npub const REQUEST_PARAMS: &[&str] = &[");
    out.push_str(&requests.iter().map(|k| format!("{k:?}")).collect::<Vec<_>>().join(", "));
    out.push_str("];\n");
    out.push_str(&introduced(newer, newer_keys)?);
    Ok(out)
}

/// Adds the sub-keys of `newer-keys.json` with a definition to `config_key`'s format.
fn merge_newer(keys: &mut BTreeMap<String, String>, config_key: &str, newer_keys: &[Value]) {
    for entry in newer_keys.iter().filter(|e| e["config_key"] == config_key) {
        let (Some(name), Some(def)) = (entry["key"].as_str(), entry["definition"].as_object()) else {
            continue;
        };
        let mut one = serde_json::Map::new();
        one.insert(name.to_string(), Value::Object(def.clone()));
        keys.extend(keys_from_object(&one));
    }
}

/// The release the schema describes and the `INTRODUCED` table: every entry of
/// `newer-keys.json` with the releases that brought it.
fn introduced(newer: &Value, newer_keys: &[Value]) -> Result<String, String> {
    let schema_pve = newer["schema_pve"]
        .as_str()
        .ok_or("newer-keys.json has no schema_pve")?;
    let mut out = format!(
        "\n/// The pve-manager release the schema above describes (newer-keys.json says why).\n\
         pub const SCHEMA_PVE: &str = {schema_pve:?};\n\
         \n/// Sub-keys a PVE release has and an older one lacks, from newer-keys.json.\n\
         pub const INTRODUCED: &[Introduced] = &[\n"
    );
    for e in newer_keys {
        let text = |k: &str| e[k].as_str().ok_or(format!("a newer-keys.json entry has no {k}"));
        out.push_str(&format!(
            "    Introduced {{ config_key: {:?}, key: {:?}, pve: {:?}, qemu_server: {:?} }},\n",
            text("config_key")?,
            text("key")?,
            text("pve")?,
            text("qemu_server")?
        ));
    }
    out.push_str("];\n");
    Ok(out)
}

/// A config key's value in the schema's terms, as a Rust `Accepts`.
fn accepts_of(config_key: &str, param: &Value) -> String {
    let bound = |k: &str| match &param[k] {
        Value::Number(n) => Some(n.to_string()),
        Value::String(s) if s.parse::<f64>().is_ok() => Some(s.clone()),
        _ => None,
    };
    let opt = |v: Option<String>, float: bool| match v {
        Some(n) if float && !n.contains('.') => format!("Some({n}.0)"),
        Some(n) => format!("Some({n})"),
        None => "None".into(),
    };
    let text = |k: &str| param[k].as_str().map_or("None".to_string(), |s| format!("Some({s:?})"));
    match param["type"].as_str().unwrap_or("string") {
        "boolean" => "Accepts::Bool".into(),
        "integer" => format!(
            "Accepts::Int {{ min: {}, max: {} }}",
            opt(bound("minimum"), false),
            opt(bound("maximum"), false)
        ),
        "number" => format!(
            "Accepts::Number {{ min: {}, max: {} }}",
            opt(bound("minimum"), true),
            opt(bound("maximum"), true)
        ),
        _ if is_property_string(param) => format!("Accepts::PropString(&{})", constant_of(config_key)),
        _ if param["enum"].is_array() => {
            let words: Vec<String> = param["enum"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(Value::as_str)
                .map(|w| format!("{w:?}"))
                .collect();
            format!("Accepts::Enum(&[{}])", words.join(", "))
        }
        _ => format!(
            "Accepts::Text {{ format: {}, pattern: {} }}",
            text("format"),
            text("pattern")
        ),
    }
}

/// How the schema spells a key's value for people (its typetext, or the choices).
fn typetext_of(param: &Value) -> String {
    if let Some(t) = param["typetext"].as_str() {
        return t.trim().to_string();
    }
    if let Some(words) = param["enum"].as_array() {
        let words: Vec<&str> = words.iter().filter_map(Value::as_str).collect();
        return format!("<{}>", words.join(" | "));
    }
    match param["format_description"].as_str() {
        Some(d) => format!("<{d}>"),
        None => format!("<{}>", param["type"].as_str().unwrap_or("string")),
    }
}

fn keys_from_object(obj: &serde_json::Map<String, Value>) -> BTreeMap<String, String> {
    let mut keys = BTreeMap::new();
    for (name, def) in obj {
        let line = match (def["alias"].as_str(), def["keyAlias"].as_str()) {
            (Some(target), Some(k)) => format!("key_alias({name:?}, {target:?}, {k:?})"),
            (Some(target), None) => format!("alias({name:?}, {target:?})"),
            _ => {
                let default = match &def["default"] {
                    Value::Null => "None".to_string(),
                    Value::String(s) => format!("Some({s:?})"),
                    other => format!("Some({:?})", other.to_string()),
                };
                let default_key = def["default_key"].as_i64() == Some(1);
                format!("key({name:?}, {}, {default}, {default_key})", kind_of(def))
            }
        };
        keys.insert(name.clone(), line);
    }
    keys
}

fn kind_of(def: &Value) -> String {
    let text = |k: &str| def[k].as_str().unwrap_or("");
    match text("type") {
        "boolean" => "Kind::Bool".into(),
        "integer" => "Kind::Int".into(),
        "number" => "Kind::Number".into(),
        _ if text("format") == "disk-size" => "Kind::Size".into(),
        _ if text("format") == "mac-addr" => "Kind::Mac".into(),
        _ if def["enum"].is_array() => enum_kind(def["enum"].as_array().unwrap().iter().filter_map(Value::as_str)),
        _ if text("format_description").contains(';') || text("pattern").contains(";\\d") => "Kind::List".into(),
        _ => "Kind::Str".into(),
    }
}

fn enum_kind<'a>(words: impl Iterator<Item = &'a str>) -> String {
    let quoted: Vec<String> = words.map(|w| format!("{w:?}")).collect();
    format!("Kind::Enum(&[{}])", quoted.join(", "))
}

/// Keys from a typetext like `[[legacy=]<[acdn]{1,4}>] [,order=<device[;device...]>]`.
fn keys_from_typetext(typetext: &str) -> BTreeMap<String, String> {
    let mut keys = BTreeMap::new();
    // A required key after the first is written ` ,key=<..>` (intel-tdx's attestation).
    let typetext = typetext.trim().replace(" ,", " [,");
    for (i, part) in typetext.split(" [,").enumerate() {
        let mut part = part.trim();
        if i > 0 {
            part = part.strip_suffix(']').unwrap_or(part);
        } else if part.starts_with("[[") {
            // `[[key=]<type>]`: an optional default key; drop the outer bracket only.
            part = part[1..].strip_suffix(']').unwrap_or(&part[1..]);
        }
        let (name, value, is_default) = match part.strip_prefix('[') {
            Some(rest) if rest.find("=]").is_some_and(|eq| !rest[..eq].contains('<')) => {
                let eq = rest.find("=]").unwrap();
                (&rest[..eq], &rest[eq + 2..], true)
            }
            Some(rest) => {
                let rest = rest.strip_suffix(']').unwrap_or(rest);
                let (n, v) = rest.split_once('=').unwrap_or((rest, ""));
                (n, v, false)
            }
            None => {
                let (n, v) = part.split_once('=').unwrap_or((part, ""));
                (n, v, false)
            }
        };
        let kind = typetext_kind(value);
        keys.insert(name.to_string(), format!("key({name:?}, {kind}, None, {is_default})"));
    }
    keys
}

fn typetext_kind(value: &str) -> String {
    let inner = value.trim().trim_start_matches('<').trim_end_matches('>');
    match inner {
        "1|0" => "Kind::Bool".into(),
        "integer" | "\\d+" => "Kind::Int".into(),
        "number" => "Kind::Number".into(),
        _ if inner.contains("[;") => "Kind::List".into(),
        _ if inner.contains('|')
            && inner
                .split('|')
                .all(|w| w.starts_with(|c: char| c.is_ascii_alphabetic() || c == '/')) =>
        {
            enum_kind(inner.split('|'))
        }
        _ => "Kind::Str".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_table_is_fresh() {
        let path = schema_path();
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
            panic!(
                "the PVE API schema {} cannot be read ({e}): the freshness check has nothing to compare",
                path.display()
            )
        });
        let schema: Value = serde_json::from_str(&text).expect("schema is JSON");
        let newer: Value = serde_json::from_str(include_str!("newer-keys.json")).expect("newer-keys.json is JSON");
        let generated = generate(&schema, &newer).expect("schema has the expected shape");
        let table = concat!(env!("CARGO_MANIFEST_DIR"), "/src/propstring/formats.rs");
        if std::env::var_os("UPDATE_FORMATS").is_some() {
            std::fs::write(table, &generated).expect("write formats.rs");
            return;
        }
        let current = std::fs::read_to_string(table).unwrap_or_default();
        assert!(
            current == generated,
            "common/rules/src/propstring/formats.rs is stale: run `UPDATE_FORMATS=1 cargo test -p ferrox-pve-rules formats_table`"
        );
    }

    #[test]
    fn typetext_keys_keep_their_default_key_and_kinds() {
        let boot = keys_from_typetext("[[legacy=]<[acdn]{1,4}>] [,order=<device[;device...]>]");
        assert_eq!(boot["legacy"], "key(\"legacy\", Kind::Str, None, true)");
        assert_eq!(boot["order"], "key(\"order\", Kind::List, None, false)");
        let rng = keys_from_typetext("[source=]</dev/urandom|/dev/random|/dev/hwrng> [,max_bytes=<integer>]");
        assert!(rng["source"].contains("Kind::Enum(&[\"/dev/urandom\"") && rng["source"].ends_with("true)"));
        assert_eq!(rng["max_bytes"], "key(\"max_bytes\", Kind::Int, None, false)");
        let smbios = keys_from_typetext("[base64=<1|0>] [,uuid=<UUID>]");
        assert_eq!(smbios["base64"], "key(\"base64\", Kind::Bool, None, false)");
        let startup = keys_from_typetext("[[order=]\\d+] [,up=\\d+] [,down=\\d+] ");
        assert_eq!(startup["order"], "key(\"order\", Kind::Int, None, true)");
        assert_eq!(startup["down"], "key(\"down\", Kind::Int, None, false)");
        let cpu = keys_from_typetext("[[cputype=]<string>] [,phys-bits=<8-64|host>]");
        assert_eq!(cpu["phys-bits"], "key(\"phys-bits\", Kind::Str, None, false)");
    }
}
