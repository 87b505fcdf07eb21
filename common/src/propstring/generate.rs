//! Writes [`super::formats`] from PVE's API schema (the `format` of each config key of
//! `POST /nodes/{node}/qemu`; for keys whose format is only named there, like `boot`
//! or `cpu`, from the `typetext`). Run `UPDATE_FORMATS=1 cargo test -p ferrox-common
//! formats_table` after a schema update; the same test fails when the table is stale.

use std::collections::BTreeMap;

use serde_json::Value;

/// (config key in the schema, Rust constant name), in the order they are written.
pub const WANTED: &[(&str, &str)] = &[
    ("net[n]", "NET"),
    ("ide[n]", "IDE"),
    ("sata[n]", "SATA"),
    ("scsi[n]", "SCSI"),
    ("virtio[n]", "VIRTIO"),
    ("efidisk0", "EFIDISK0"),
    ("tpmstate0", "TPMSTATE0"),
    ("unused[n]", "UNUSED"),
    ("ipconfig[n]", "IPCONFIG"),
    ("agent", "AGENT"),
    ("boot", "BOOT"),
    ("memory", "MEMORY"),
    ("cpu", "CPU"),
    ("smbios1", "SMBIOS1"),
    ("startup", "STARTUP"),
    ("rng0", "RNG0"),
    ("vga", "VGA"),
    ("numa[n]", "NUMA"),
    ("hostpci[n]", "HOSTPCI"),
    ("usb[n]", "USB"),
    ("audio0", "AUDIO0"),
    ("spice_enhancements", "SPICE_ENHANCEMENTS"),
    ("virtiofs[n]", "VIRTIOFS"),
];

/// The schema file: `$PVE_API_SCHEMA`, else the shared copy next to the checkout.
pub fn schema_path() -> std::path::PathBuf {
    std::env::var_os("PVE_API_SCHEMA")
        .map(Into::into)
        .unwrap_or_else(|| concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/pve-api/pve-api-schema.json").into())
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

/// The Rust source of `formats.rs` for this schema.
pub fn generate(schema: &Value) -> Result<String, String> {
    let root = schema.as_array().ok_or("the schema is not a JSON array")?;
    let create = find_path(root, "/nodes/{node}/qemu").ok_or("no /nodes/{node}/qemu in the schema")?;
    let params = &create["info"]["POST"]["parameters"]["properties"];
    let mut out = String::from(
        "//! Property-string formats of QEMU config keys, generated from PVE's API schema by\n\
         //! `UPDATE_FORMATS=1 cargo test -p ferrox-common formats_table`. Do not edit by hand.\n\n\
         pub use super::format::for_config_key;\n\n\
         use super::format::{alias, key, key_alias, Format, Kind};\n",
    );
    for (config_key, constant) in WANTED {
        let param = &params[*config_key];
        let keys = match &param["format"] {
            Value::Object(obj) => keys_from_object(obj),
            _ => keys_from_typetext(param["typetext"].as_str().ok_or(format!("{config_key}: no format or typetext"))?),
        };
        out.push_str(&format!("\npub const {constant}: Format = Format {{\n    name: {config_key:?},\n    keys: &[\n"));
        for line in keys.values() {
            out.push_str(&format!("        {line},\n"));
        }
        out.push_str("    ],\n};\n");
    }
    out.push_str("\n/// Every format above.\npub const ALL: &[&Format] = &[");
    out.push_str(&WANTED.iter().map(|(_, c)| format!("&{c}")).collect::<Vec<_>>().join(", "));
    out.push_str("];\n");
    Ok(out)
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
    for (i, part) in typetext.trim().split(" [,").enumerate() {
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
            && inner.split('|').all(|w| w.starts_with(|c: char| c.is_ascii_alphabetic() || c == '/')) =>
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
        let Ok(text) = std::fs::read_to_string(&path) else {
            eprintln!("schema not found at {}; skipping the freshness check", path.display());
            return;
        };
        let schema: Value = serde_json::from_str(&text).expect("schema is JSON");
        let generated = generate(&schema).expect("schema has the expected shape");
        let table = concat!(env!("CARGO_MANIFEST_DIR"), "/src/propstring/formats.rs");
        if std::env::var_os("UPDATE_FORMATS").is_some() {
            std::fs::write(table, &generated).expect("write formats.rs");
            return;
        }
        let current = std::fs::read_to_string(table).unwrap_or_default();
        assert!(
            current == generated,
            "src/propstring/formats.rs is stale: run `UPDATE_FORMATS=1 cargo test -p ferrox-common formats_table`"
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
