//! The keys of a VM config and what each accepts, as PVE's API schema states them
//! ([`super::formats::CONFIG_KEYS`], generated with the formats): a value is checked
//! here before any write, so a typo fails the task instead of reaching PVE.

use super::format_spec::{max_index, split_indexed};
use super::formats::CONFIG_KEYS;
pub use super::schema_entry::{Accepts, ConfigKey};

/// The Proxmox VE release whose API schema the tables are generated from (the schema
/// file's README states it).
pub const SCHEMA_VERSION: &str = "9.1";

/// Highest index of indexed keys the formats' ranges do not cover.
const MORE_INDEX_RANGES: &[(&str, u32)] = &[("serial", 3), ("parallel", 2)];

/// The schema entry of a config key as written in a config (`scsi3`, `audio0`, `cores`).
pub fn config_key(key: &str) -> Option<&'static ConfigKey> {
    if let Some(k) = CONFIG_KEYS.iter().find(|k| k.name == key && !k.name.ends_with("[n]")) {
        return Some(k);
    }
    let (prefix, index) = split_indexed(key);
    let index = index?;
    let max = max_index(prefix).or_else(|| MORE_INDEX_RANGES.iter().find(|(p, _)| *p == prefix).map(|(_, n)| *n))?;
    if index > max || key != format!("{prefix}{index}") {
        return None;
    }
    let indexed = format!("{prefix}[n]");
    CONFIG_KEYS.iter().find(|k| k.name == indexed)
}

/// A config value as `GET .../config` answers it: qemu-server's `check_type`
/// (`QemuServer.pm`, run on each key as `parse_vm_config` reads the file) turns an
/// integer into a number (`int`) and a boolean into 1 or 0, and leaves a `number` (a
/// `cpulimit`) and everything else text. A value it would refuse stays text.
pub fn as_returned(key: &str, value: &str) -> serde_json::Value {
    let text = || serde_json::Value::String(value.to_string());
    match config_key(key).map(|k| k.accepts) {
        Some(Accepts::Int { .. }) if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
            value.parse::<u64>().map_or_else(|_| text(), serde_json::Value::from)
        }
        Some(Accepts::Bool) => match value.to_ascii_lowercase().as_str() {
            "1" | "on" | "yes" | "true" => 1.into(),
            "0" | "off" | "no" | "false" => 0.into(),
            _ => text(),
        },
        _ => text(),
    }
}

/// Checks `value` against what `key` accepts; the error says why in the schema's terms.
pub fn check(key: &ConfigKey, value: &str) -> Result<(), String> {
    let v = value.trim();
    let fail = |why: String| Err(format!("'{value}' is not {why}"));
    match key.accepts {
        Accepts::Bool => match super::normalise(super::Kind::Bool, v) {
            Ok(_) => Ok(()),
            Err(_) => fail("a boolean (1/0, true/false, yes/no, on/off)".into()),
        },
        Accepts::Int { min, max } => match v.parse::<i64>() {
            Ok(n) if min.is_none_or(|m| n >= m) && max.is_none_or(|m| n <= m) => Ok(()),
            _ => fail(format!(
                "an integer{}",
                range_text(min.map(|m| m as f64), max.map(|m| m as f64))
            )),
        },
        Accepts::Number { min, max } => match v.parse::<f64>() {
            Ok(x) if x.is_finite() && min.is_none_or(|m| x >= m) && max.is_none_or(|m| x <= m) => Ok(()),
            _ => fail(format!("a number{}", range_text(min, max))),
        },
        Accepts::Enum(words) if words.contains(&v) => Ok(()),
        Accepts::Enum(words) => fail(format!("one of: {}", words.join(", "))),
        Accepts::PropString(f) => super::parse(v, f).map(|_| ()),
        Accepts::Text { format, .. } => match format.map(|f| (f, named_format_ok(f, v))) {
            Some((f, Some(false))) => fail(format!("a valid {f}")),
            _ => Ok(()),
        },
    }
}

fn range_text(min: Option<f64>, max: Option<f64>) -> String {
    let n = |x: f64| super::number_text(x);
    match (min, max) {
        (Some(a), Some(b)) => format!(" from {} to {}", n(a), n(b)),
        (Some(a), None) => format!(" of at least {}", n(a)),
        (None, Some(b)) => format!(" of at most {}", n(b)),
        (None, None) => String::new(),
    }
}

/// The named formats checked here, as PVE's JSONSchema checks them; `None` for the
/// ones only PVE can check (volumes, and what the node knows).
fn named_format_ok(format: &str, v: &str) -> Option<bool> {
    let id = |s: &str| {
        let b = s.as_bytes();
        !b.is_empty()
            && b[0].is_ascii_alphabetic()
            && b[b.len() - 1].is_ascii_alphanumeric()
            && s.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
    };
    match format {
        "pve-storage-id" => Some(id(v)),
        // `0,5,8-11`: cores and ranges.
        "pve-cpuset" => Some(
            !v.is_empty()
                && v.split(',').all(|part| {
                    let mut ends = part.splitn(2, '-');
                    let a = ends.next().and_then(|a| a.parse::<u32>().ok());
                    match (a, ends.next().map(|b| b.parse::<u32>().ok())) {
                        (Some(_), None) => true,
                        (Some(a), Some(Some(b))) => a <= b,
                        _ => false,
                    }
                }),
        ),
        "dns-name" => Some(
            !v.is_empty()
                && v.split('.').all(|label| {
                    !label.is_empty()
                        && !label.starts_with('-')
                        && !label.ends_with('-')
                        && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
                }),
        ),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indexed_and_plain_keys_are_found_in_range_only() {
        assert_eq!(config_key("scsi30").map(|k| k.name), Some("scsi[n]"));
        assert!(config_key("scsi31").is_none());
        assert_eq!(config_key("serial3").map(|k| k.name), Some("serial[n]"));
        assert!(config_key("serial4").is_none() && config_key("scsi01").is_none());
        assert_eq!(config_key("audio0").map(|k| k.name), Some("audio0"));
        assert_eq!(config_key("ivshmem").map(|k| k.name), Some("ivshmem"));
        assert!(
            config_key("ivshmem0").is_none() && config_key("nosuchkey").is_none() && config_key("digest").is_none()
        );
    }

    #[test]
    fn values_are_typed_as_pve_answers_them() {
        use serde_json::json;
        let cases = [
            ("cores", "4", json!(4)),
            ("onboot", "1", json!(1)),
            ("onboot", "yes", json!(1)),
            ("acpi", "off", json!(0)),
            ("cpulimit", "1.5", json!("1.5")),
            ("memory", "2048", json!("2048")),
            ("net0", "virtio,bridge=vmbr0", json!("virtio,bridge=vmbr0")),
            ("cores", "-1", json!("-1")),
            ("nosuchkey", "4", json!("4")),
        ];
        for (key, value, answered) in cases {
            assert_eq!(as_returned(key, value), answered, "{key}={value}");
        }
    }

    #[test]
    fn values_are_checked_in_the_keys_terms() {
        let k = |name| config_key(name).unwrap();
        assert!(check(k("keephugepages"), "1").is_ok());
        assert_eq!(
            check(k("keephugepages"), "maybe").unwrap_err(),
            "'maybe' is not a boolean (1/0, true/false, yes/no, on/off)"
        );
        assert_eq!(
            check(k("shares"), "60000").unwrap_err(),
            "'60000' is not an integer from 0 to 50000"
        );
        assert_eq!(
            check(k("arch"), "riscv").unwrap_err(),
            "'riscv' is not one of: x86_64, aarch64"
        );
        assert!(check(k("ivshmem"), "size=32,name=shm").is_ok());
        assert!(check(k("ivshmem"), "size=big")
            .unwrap_err()
            .starts_with("invalid value 'big' for key 'size'"));
        assert!(check(k("intel-tdx"), "type=tdx,attestation=1").is_ok());
        assert!(check(k("affinity"), "0,5,8-11").is_ok());
        assert_eq!(
            check(k("affinity"), "0-").unwrap_err(),
            "'0-' is not a valid pve-cpuset"
        );
        assert_eq!(
            check(k("vmstatestorage"), "bad id").unwrap_err(),
            "'bad id' is not a valid pve-storage-id"
        );
        assert!(check(k("cpulimit"), "1.5").is_ok() && check(k("cpulimit"), "200").is_err());
    }
}
