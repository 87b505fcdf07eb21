//! Drive keys and drive values (`scsi0: local-lvm:vm-100-disk-0,iothread=1,size=32G`).

use crate::propstring::{self, Props};
use crate::schema::Schema;
use serde_json::{Map, Value};

/// `ide0-3`, `sata0-5`, `scsi0-30`, `virtio0-15`, `efidisk0`, `tpmstate0`.
pub fn is_disk_key(k: &str) -> bool {
    if k == "efidisk0" || k == "tpmstate0" {
        return true;
    }
    for (base, max) in [("ide", 3u32), ("sata", 5), ("scsi", 30), ("virtio", 15)] {
        if let Some(n) = k.strip_prefix(base) {
            if !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()) && !(n.len() > 1 && n.starts_with('0')) {
                return n.parse::<u32>().is_ok_and(|i| i <= max);
            }
        }
    }
    false
}

pub fn is_unused_key(k: &str) -> bool {
    k.strip_prefix("unused")
        .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
}

pub fn is_net_key(k: &str) -> bool {
    k.strip_prefix("net")
        .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
}

/// Order in which PVE walks drives when allocating (ide, sata, scsi, virtio, efidisk0,
/// tpmstate0), which decides the `disk-<n>` numbers; non-drive keys sort first.
pub fn drive_rank(k: &str) -> (u8, u32) {
    if !is_disk_key(k) {
        return (0, 0);
    }
    let n = k
        .trim_start_matches(|c: char| c.is_ascii_alphabetic())
        .parse()
        .unwrap_or(0);
    let bus = match k.trim_end_matches(|c: char| c.is_ascii_digit()) {
        "ide" => 1,
        "sata" => 2,
        "scsi" => 3,
        "virtio" => 4,
        "efidisk" => 5,
        _ => 6,
    };
    (bus, n)
}

/// Bus order PVE searches for the first disk at create (`boot: order=`).
pub fn boot_search_order() -> Vec<String> {
    let mut v = Vec::new();
    for (b, n) in [("ide", 4), ("scsi", 31), ("virtio", 16), ("sata", 6)] {
        for i in 0..n {
            v.push(format!("{b}{i}"));
        }
    }
    v
}

/// Inline property-string format of a config key (from the create method's schema).
pub fn key_format(schema: &Schema, key: &str) -> Option<Map<String, Value>> {
    let props = schema
        .method("/nodes/{node}/qemu", "POST")?
        .get("parameters")?
        .get("properties")?
        .as_object()?;
    crate::schema::validate::find_prop(props, key)?
        .get("format")?
        .as_object()
        .cloned()
}

/// Type of a config key per schema (`integer`, `boolean`, `number`, `string`).
pub fn key_type(schema: &Schema, key: &str) -> String {
    let props = schema
        .method("/nodes/{node}/qemu", "POST")
        .and_then(|m| m.get("parameters"))
        .and_then(|p| p.get("properties"))
        .and_then(Value::as_object);
    props
        .and_then(|p| crate::schema::validate::find_prop(p, key))
        .and_then(|s| s.get("type"))
        .and_then(Value::as_str)
        .unwrap_or("string")
        .to_string()
}

#[derive(Debug, Clone, PartialEq)]
pub struct Drive {
    pub file: String,
    pub opts: Props,
}

impl Drive {
    pub fn parse(schema: &Schema, key: &str, value: &str) -> Option<Drive> {
        let fmt = key_format(schema, key)?;
        let mut opts = propstring::parse(&fmt, value).ok()?;
        let file = opts.remove("file")?;
        Some(Drive { file, opts })
    }

    /// Quick parse without the schema (for stored values, which are canonical).
    pub fn parse_stored(value: &str) -> Drive {
        let mut parts = value.split(',');
        let file = parts.next().unwrap_or("").to_string();
        let opts = parts
            .filter_map(|p| p.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Drive { file, opts }
    }

    pub fn is_cdrom(&self) -> bool {
        self.opts.get("media").is_some_and(|m| m == "cdrom")
    }

    /// The managed volume id, if the drive refers to one.
    pub fn volid(&self) -> Option<&str> {
        (self.file.contains(':') && !self.file.starts_with('/')).then_some(self.file.as_str())
    }

    pub fn size(&self) -> Option<u64> {
        self.opts.get("size").and_then(|s| crate::storage::parse_size(s))
    }

    /// Canonical text: file first, then options sorted, booleans as 1/0.
    pub fn print(&self, fmt: Option<&Map<String, Value>>) -> String {
        let mut opts = self.opts.clone();
        if let Some(f) = fmt {
            for (k, v) in opts.iter_mut() {
                if f.get(k).and_then(|s| s.get("type")).and_then(Value::as_str) == Some("boolean") {
                    if let Some(b) = propstring::parse_bool(v) {
                        *v = b.to_string();
                    }
                }
            }
        }
        propstring::print_with_head(&self.file, &opts, &["file", "import-from"])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys() {
        assert!(is_disk_key("scsi30"));
        assert!(!is_disk_key("scsi31"));
        assert!(is_disk_key("ide3") && !is_disk_key("ide4"));
        assert!(is_disk_key("efidisk0") && !is_disk_key("efidisk1"));
        assert!(!is_disk_key("scsihw"));
        assert!(is_unused_key("unused0") && !is_unused_key("unused"));
        assert!(is_net_key("net3") && !is_net_key("netx"));
    }

    #[test]
    fn drive_roundtrip() {
        let s = Schema::embedded();
        let d = Drive::parse(&s, "scsi0", "local-lvm:32,ssd=on,iothread=1,discard=on").unwrap();
        assert_eq!(d.file, "local-lvm:32");
        let fmt = key_format(&s, "scsi0");
        assert_eq!(d.print(fmt.as_ref()), "local-lvm:32,discard=on,iothread=1,ssd=1");
        let d = Drive::parse(&s, "ide2", "volume=isos:iso/x.iso,media=cdrom").unwrap();
        assert!(d.is_cdrom());
        assert_eq!(d.volid(), Some("isos:iso/x.iso"));
    }
}
