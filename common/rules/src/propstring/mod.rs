//! PVE property strings (`virtio=BC:24:11:..,bridge=vmbr0,tag=10`): parse, format in
//! PVE's canonical order, compare normalised.
//!
//! ```text
//! let f = formats::for_config_key("net0").unwrap();           // -> &formats::NET
//! let cur = parse("virtio=bc:24:11:00:00:01,bridge=vmbr0,firewall=0", f)?;
//! cur.get("model") == Some("virtio"); cur.get("macaddr") == Some("bc:24:11:00:00:01");
//! let want = parse("model=virtio,bridge=vmbr0,macaddr=BC:24:11:00:00:01", f)?;
//! differing_keys(&cur, &want, f).is_empty();                   // MAC case, order, firewall=0
//! want.to_canonical(f) == "virtio=BC:24:11:00:00:01,bridge=vmbr0";
//! ```
//!
//! - [`parse`] reads a value the way PVE does: `,`-separated parts, `key=value` or a bare
//!   value for the format's default key, aliases resolved to canonical keys (`volume` ->
//!   `file`, `bps_rd_length` -> `bps_rd_max_length`, `virtio=MAC` -> `model` + `macaddr`),
//!   every value checked against its kind. Errors name the bad key.
//! - [`PropString`] keeps the (canonical key, value as written) pairs in order.
//! - [`PropString::to_canonical`] writes PVE's order: the default key first (bare; for a
//!   net `model=MAC`), the rest sorted, booleans as `1`/`0`.
//! - [`differing_keys`] and [`same_value`] compare normalised: booleans, numbers
//!   (`10` = `10.0`), sizes (`32G` = `32768M`), MAC case, `;`-lists item by item, and an
//!   absent key equals its default (net `firewall=0`, drive `backup=1`).
//! - [`formats`] holds the formats, generated from PVE's API schema;
//!   [`formats::for_config_key`] finds the one of a config key (`scsi0`, `net3`).
//! - [`keys`] holds every config key the schema lets a client set and what it accepts
//!   ([`keys::config_key`], [`keys::check`]), generated with the formats.
//! - [`versions`]: keys newer than the schema (`newer-keys.json`, merged by the
//!   generator): sent, never refused on a version, and a node's refusal explained.

mod format_spec;
#[rustfmt::skip]
pub mod formats;
#[cfg(test)]
mod generate;
pub mod keys;
mod schema_entry;
pub mod versions;

pub use format_spec::{
    is_bus_drive_key, is_drive_key, max_index, split_indexed, Format, Key, Kind, DRIVE_BUSES, IMPLICIT_DEFAULTS,
    INDEX_RANGES,
};

use crate::size;

/// A parsed property string: (canonical key, value as written), in input order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PropString {
    entries: Vec<(String, String)>,
}

impl PropString {
    /// An empty property string.
    pub fn new() -> PropString {
        PropString::default()
    }

    /// The value of `key` (a canonical key) as written, if set.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.entries.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }

    /// Sets `key` (a canonical key), keeping its position when it was already set.
    pub fn set(&mut self, key: &str, value: impl Into<String>) {
        let value = value.into();
        match self.entries.iter_mut().find(|(k, _)| k == key) {
            Some(entry) => entry.1 = value,
            None => self.entries.push((key.to_string(), value)),
        }
    }

    /// Removes `key` (a canonical key), returning its value if it was set.
    pub fn remove(&mut self, key: &str) -> Option<String> {
        let at = self.entries.iter().position(|(k, _)| k == key)?;
        Some(self.entries.remove(at).1)
    }

    /// Whether `key` (a canonical key) is set.
    pub fn contains(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// The canonical keys set, in input order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|(k, _)| k.as_str())
    }

    /// The (canonical key, value) pairs, in input order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.entries.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// Whether no key is set.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The value as PVE writes it: default key first, the rest sorted.
    pub fn to_canonical(&self, f: &Format) -> String {
        let mut parts = Vec::new();
        let mut skip: Vec<&str> = Vec::new();
        if let Some(dk) = f.default_key() {
            if let Some(first) = self.get(dk.name) {
                skip.push(dk.name);
                // A keyAlias format (net): `model=MAC` when the aliased value is set.
                let pair = f
                    .keys
                    .iter()
                    .find(|k| k.key_alias == Some(dk.name))
                    .and_then(|k| k.alias);
                match pair.and_then(|target| self.get(target).map(|v| (target, v))) {
                    Some((target, value)) => {
                        skip.push(target);
                        parts.push(format!("{first}={value}"));
                    }
                    None => parts.push(render(f, dk.name, first)),
                }
            }
        }
        let mut rest: Vec<&(String, String)> = self
            .entries
            .iter()
            .filter(|(k, _)| !skip.contains(&k.as_str()))
            .collect();
        rest.sort_by(|a, b| a.0.cmp(&b.0));
        parts.extend(rest.into_iter().map(|(k, v)| format!("{k}={}", render(f, k, v))));
        parts.join(",")
    }
}

/// Booleans are written `1`/`0`, everything else as given.
fn render(f: &Format, key: &str, value: &str) -> String {
    match f.key(key).map(|k| k.kind) {
        Some(Kind::Bool) => normalise(Kind::Bool, value).unwrap_or_else(|_| value.to_string()),
        _ => value.to_string(),
    }
}

/// Reads `text` in format `f`. Errors name the bad key (`unknown key 'foo' ...`).
pub fn parse(text: &str, f: &Format) -> Result<PropString, String> {
    parse_with(text, f, false)
}

/// Reads `text` like [`parse`], keeping keys `f` does not know as text (compared
/// exactly, printed sorted): a value from a cluster newer than the schema, or one the
/// task sends for the node to decide ([`versions`]).
pub fn parse_keeping_unknown(text: &str, f: &Format) -> Result<PropString, String> {
    parse_with(text, f, true)
}

fn parse_with(text: &str, f: &Format, keep_unknown: bool) -> Result<PropString, String> {
    let mut ps = PropString::new();
    let mut insert = |key: &str, value: &str| -> Result<(), String> {
        if ps.contains(key) {
            return Err(format!("duplicate key '{key}'"));
        }
        ps.entries.push((key.to_string(), value.to_string()));
        Ok(())
    };
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let Some((name, value)) = part.split_once('=') else {
            let dk = f
                .default_key()
                .ok_or_else(|| format!("value '{part}' has no key, and {} has no default key", f.name))?;
            insert(dk.name, part)?;
            continue;
        };
        let name = name.trim();
        if keep_unknown && f.raw_key(name).is_none() {
            insert(name, value)?;
            continue;
        }
        let def = f.raw_key(name).ok_or_else(|| {
            let known: Vec<&str> = f.canonical_keys().map(|k| k.name).collect();
            format!("unknown key '{name}' (known keys: {})", known.join(", "))
        })?;
        match (def.alias, def.key_alias) {
            (Some(target), Some(key_of_name)) => {
                insert(key_of_name, name)?;
                insert(target, value)?;
            }
            (Some(target), None) => insert(target, value)?,
            _ => insert(name, value)?,
        }
    }
    for (key, value) in &ps.entries {
        let kind = f.key(key).map(|k| k.kind).unwrap_or(Kind::Str);
        normalise(kind, value).map_err(|why| format!("invalid value '{value}' for key '{key}': {why}"))?;
    }
    Ok(ps)
}

/// Parses the value of a VM config key (`scsi0`, `net1`, ...) in that key's format.
pub fn parse_config_value(config_key: &str, text: &str) -> Result<(PropString, &'static Format), String> {
    let f = formats::for_config_key(config_key)
        .ok_or_else(|| format!("{config_key} is not a known property-string key"))?;
    let ps = parse(text, f).map_err(|e| format!("{config_key}: {e}"))?;
    Ok((ps, f))
}

/// The comparable form of a value of this kind, or why it is not one.
pub fn normalise(kind: Kind, value: &str) -> Result<String, String> {
    let v = value.trim();
    // A dry run's stand-in for what PVE decides (a new NIC's MAC) is a value of any kind.
    if v == crate::unknown_marker::UNKNOWN {
        return Ok(v.to_string());
    }
    match kind {
        Kind::Bool => match v.to_ascii_lowercase().as_str() {
            "1" | "on" | "yes" | "true" => Ok("1".into()),
            "0" | "off" | "no" | "false" => Ok("0".into()),
            _ => Err("expected a boolean (1/0, on/off, yes/no, true/false)".into()),
        },
        Kind::Int => match v.parse::<i64>() {
            Ok(n) => Ok(n.to_string()),
            Err(_) => match v.parse::<f64>() {
                Ok(x) if x.fract() == 0.0 && x.abs() < 1e15 => Ok((x as i64).to_string()),
                _ => Err("expected an integer".into()),
            },
        },
        Kind::Number => match v.parse::<f64>() {
            Ok(x) if x.is_finite() => Ok(number_text(x)),
            _ => Err("expected a number".into()),
        },
        Kind::Size => size::parse(v).map(|b| b.to_string()),
        Kind::Mac => {
            let ok = v.len() == 17
                && v.split(':').count() == 6
                && v.split(':')
                    .all(|p| p.len() == 2 && p.chars().all(|c| c.is_ascii_hexdigit()));
            if ok {
                Ok(v.to_ascii_uppercase())
            } else {
                Err("expected a MAC address like BC:24:11:AA:BB:CC".into())
            }
        }
        Kind::Enum(words) => {
            if words.contains(&v) {
                Ok(v.to_string())
            } else {
                Err(format!("expected one of: {}", words.join(", ")))
            }
        }
        Kind::List => Ok(v
            .split(';')
            .map(str::trim)
            .filter(|i| !i.is_empty())
            .collect::<Vec<_>>()
            .join(";")),
        Kind::Str => Ok(v.to_string()),
    }
}

/// `10.0` -> `10`, `2.5` -> `2.5`.
pub fn number_text(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        format!("{x}")
    }
}

/// Whether two values of `key` mean the same (`None` = absent = the key's default).
pub fn same_value(f: &Format, key: &str, a: Option<&str>, b: Option<&str>) -> bool {
    let default = f.default_of(key);
    let a = a.or(default);
    let b = b.or(default);
    match (a, b) {
        (None, None) => true,
        (Some(x), Some(y)) => {
            let kind = f.key(key).map(|k| k.kind).unwrap_or(Kind::Str);
            match (normalise(kind, x), normalise(kind, y)) {
                (Ok(x), Ok(y)) => x == y,
                _ => x == y,
            }
        }
        _ => false,
    }
}

/// The keys of `wanted` whose normalised value differs from `current`'s. Keys only in
/// `current` are not looked at: what the task does not mention is kept.
pub fn differing_keys(current: &PropString, wanted: &PropString, f: &Format) -> Vec<String> {
    wanted
        .iter()
        .filter(|(k, v)| !same_value(f, k, current.get(k), Some(v)))
        .map(|(k, _)| k.to_string())
        .collect()
}

#[cfg(test)]
mod tests;
