//! Just enough of PVE's property strings (`virtio=BC:24:..,bridge=vmbr0`) to compare a
//! task's value with the VM's: split into a default value and sorted `key=value` pairs,
//! with booleans spelled one way.
//!
//! Kept small and private on purpose: the full grammar (formats per config key,
//! canonical order) belongs to `ferrox_common::propstring`.

use std::collections::BTreeMap;

/// A parsed property string: the leading value without a key (the format's default
/// key, e.g. the volume of a disk) and the remaining pairs, sorted by key.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Props {
    pub default: Option<String>,
    pub pairs: BTreeMap<String, String>,
}

impl Props {
    /// Parses `text`; a leading element without `=` becomes [`Props::default`], and so
    /// does the value of `default_key` when written out (`model=virtio`).
    pub fn parse(text: &str, default_key: Option<&str>) -> Props {
        let mut props = Props::default();
        for (i, part) in text.split(',').map(str::trim).filter(|p| !p.is_empty()).enumerate() {
            match part.split_once('=') {
                Some((k, v)) if Some(k) == default_key => props.default = Some(v.to_string()),
                Some((k, v)) => {
                    props.pairs.insert(k.to_string(), normalise_value(v));
                }
                None if i == 0 => props.default = Some(part.to_string()),
                None => {
                    props.pairs.insert(part.to_string(), String::new());
                }
            }
        }
        props
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.pairs.get(key).map(String::as_str)
    }

    /// The property string: default value first, then the pairs in key order.
    pub fn render(&self) -> String {
        let mut parts: Vec<String> = self.default.iter().cloned().collect();
        parts.extend(self.pairs.iter().map(|(k, v)| format!("{k}={v}")));
        parts.join(",")
    }

    /// Keys whose values differ between `self` (current) and `wanted`, looking only
    /// at the keys `wanted` names (PVE adds keys of its own, like `size=`).
    pub fn differing_named(&self, wanted: &Props, ignore: &[&str]) -> Vec<String> {
        wanted
            .pairs
            .iter()
            .filter(|(k, _)| !ignore.contains(&k.as_str()))
            .filter(|(k, v)| self.pairs.get(*k) != Some(v))
            .map(|(k, _)| k.clone())
            .collect()
    }
}

/// Booleans as PVE stores them (`1`/`0`), other values unchanged.
pub fn normalise_value(v: &str) -> String {
    match v.to_ascii_lowercase().as_str() {
        "true" | "yes" => "1".into(),
        "false" | "no" => "0".into(),
        _ => v.to_string(),
    }
}

/// The default key of the property-string config keys the module compares as
/// property strings; `None` for keys compared as plain text.
pub fn default_key_of(config_key: &str) -> Option<Option<&'static str>> {
    let base = config_key.trim_end_matches(|c: char| c.is_ascii_digit());
    Some(match base {
        "agent" => Some("enabled"),
        "cpu" => Some("cputype"),
        "memory" => Some("current"),
        "rng" => Some("source"),
        "audio" => Some("device"),
        "hostpci" | "usb" => Some("host"),
        "watchdog" => Some("model"),
        "vga" => Some("type"),
        "virtiofs" => Some("dirid"),
        "boot" => Some("legacy"),
        "startup" => Some("order"),
        "ipconfig" | "numa" | "smbios" | "spice_enhancements" => None,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_default_and_sorted_pairs() {
        let p = Props::parse("local-lvm:vm-100-disk-0,ssd=1,discard=on,size=32G", None);
        assert_eq!(p.default.as_deref(), Some("local-lvm:vm-100-disk-0"));
        assert_eq!(p.render(), "local-lvm:vm-100-disk-0,discard=on,size=32G,ssd=1");
    }

    #[test]
    fn named_default_key_and_booleans_normalise() {
        let a = Props::parse("enabled=true,fstrim_cloned_disks=1", Some("enabled"));
        let b = Props::parse("1,fstrim_cloned_disks=yes", Some("enabled"));
        assert_eq!(a.default.as_deref(), Some("true"));
        assert_eq!(b.differing_named(&a, &[]), Vec::<String>::new());
    }

    #[test]
    fn only_named_keys_are_compared() {
        let current = Props::parse("uuid=7b1e,manufacturer=ACME", None);
        assert!(current.differing_named(&Props::parse("manufacturer=ACME", None), &[]).is_empty());
        assert_eq!(current.differing_named(&Props::parse("manufacturer=Other", None), &[]), vec!["manufacturer"]);
    }
}
