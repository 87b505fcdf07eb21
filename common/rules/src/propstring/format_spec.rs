//! The shape of a property-string format: its keys, their value kinds, defaults and
//! aliases. The tables themselves are generated from PVE's API schema into
//! [`super::formats`]; this file holds the types, the lookup by config key in a table,
//! and the two facts the schema does not state (index ranges, implicit defaults).

/// How a value is read and compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `1|0|on|off|yes|no|true|false`, compared as 1/0.
    Bool,
    /// An integer, compared numerically.
    Int,
    /// A number, compared numerically (`10` = `10.0`).
    Number,
    /// A disk size (`32G` = `32768M`).
    Size,
    /// A MAC address, compared case-insensitively.
    Mac,
    /// One of the listed words, compared exactly.
    Enum(&'static [&'static str]),
    /// A `;`-separated list (`trunks=10;20`, `order=scsi0;net0`), compared item by item.
    List,
    /// Anything else, compared exactly.
    Str,
}

/// One key of a format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Key {
    /// The key's name as PVE's schema spells it.
    pub name: &'static str,
    /// The values the key takes.
    pub kind: Kind,
    /// The value PVE assumes when the key is absent, as text.
    pub default: Option<&'static str>,
    /// A bare first value (without `key=`) belongs to this key.
    pub default_key: bool,
    /// This name is another spelling of the key named here (`volume` -> `file`).
    pub alias: Option<&'static str>,
    /// With [`Key::alias`]: writing this name as a key also sets the key named here to
    /// the name itself (`virtio=MAC` means `model=virtio,macaddr=MAC`).
    pub key_alias: Option<&'static str>,
}

/// One property-string format, e.g. `net[n]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Format {
    /// The schema's name of the config key (`net[n]`, `efidisk0`).
    pub name: &'static str,
    /// The keys the format accepts, aliases included.
    pub keys: &'static [Key],
}

impl Format {
    /// The key definition for `name`, following a plain alias to its target.
    pub fn key(&self, name: &str) -> Option<&'static Key> {
        let key = self.keys.iter().find(|k| k.name == name)?;
        match (key.alias, key.key_alias) {
            (Some(target), None) => self.keys.iter().find(|k| k.name == target),
            _ => Some(key),
        }
    }

    /// The raw definition for `name` (aliases not followed).
    pub fn raw_key(&self, name: &str) -> Option<&'static Key> {
        self.keys.iter().find(|k| k.name == name)
    }

    /// The key a bare first value belongs to.
    pub fn default_key(&self) -> Option<&'static Key> {
        self.keys.iter().find(|k| k.default_key)
    }

    /// The canonical names (aliases left out), in schema order.
    pub fn canonical_keys(&self) -> impl Iterator<Item = &'static Key> {
        self.keys.iter().filter(|k| k.alias.is_none())
    }

    /// The value PVE assumes for an absent key: the schema's default, or one of the
    /// [`IMPLICIT_DEFAULTS`].
    pub fn default_of(&self, key: &str) -> Option<&'static str> {
        self.key(key)?.default.or_else(|| {
            IMPLICIT_DEFAULTS
                .iter()
                .find(|(formats, k, _)| *k == key && formats.contains(&self.name))
                .map(|(_, _, v)| *v)
        })
    }
}

const DRIVES: &[&str] = &["ide[n]", "sata[n]", "scsi[n]", "virtio[n]"];

/// Defaults PVE applies in code but the schema does not state, per (formats, key):
/// an absent `backup` means the drive is backed up, absent booleans of these keys are off.
/// (`detect_zeroes` is deliberately not here: absent means QEMU's own choice.)
pub const IMPLICIT_DEFAULTS: &[(&[&str], &str, &str)] = &[
    (DRIVES, "backup", "1"),
    (DRIVES, "ssd", "0"),
    (DRIVES, "iothread", "0"),
    (DRIVES, "ro", "0"),
    (DRIVES, "snapshot", "0"),
    (&["net[n]"], "firewall", "0"),
    (&["net[n]"], "link_down", "0"),
];

/// Highest index of each indexed config key (from qemu-server; the schema states only
/// some in prose).
pub const INDEX_RANGES: &[(&str, u32)] = &[
    ("ide", 3),
    ("sata", 5),
    ("scsi", 30),
    ("virtio", 15),
    ("unused", 255),
    ("net", 31),
    ("ipconfig", 31),
    ("numa", 7),
    ("hostpci", 15),
    ("usb", 13),
    ("virtiofs", 9),
];

/// The highest index allowed for an indexed key prefix (`scsi` -> 30).
pub fn max_index(prefix: &str) -> Option<u32> {
    INDEX_RANGES.iter().find(|(p, _)| *p == prefix).map(|(_, n)| *n)
}

/// Splits `scsi12` into (`scsi`, Some(12)); `efidisk0` stays whole when it is not an
/// indexed key.
pub fn split_indexed(key: &str) -> (&str, Option<u32>) {
    let digits = key.len() - key.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    if digits == 0 || digits == key.len() {
        return (key, None);
    }
    let (prefix, index) = key.split_at(key.len() - digits);
    (prefix, index.parse().ok())
}

/// The buses a drive sits on, as config key prefixes.
pub const DRIVE_BUSES: [&str; 4] = ["ide", "sata", "scsi", "virtio"];

/// A drive on a bus: `ide0`, `sata5`, `scsi30`, `virtio15` (a disk, a CD-ROM, a
/// cloud-init drive). The one rule every module and check reads.
pub fn is_bus_drive_key(key: &str) -> bool {
    DRIVE_BUSES.iter().any(|bus| {
        key.strip_prefix(bus)
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    })
}

/// A key that holds a volume: a bus drive, `efidisk0` or `tpmstate0`.
pub fn is_drive_key(key: &str) -> bool {
    matches!(key, "efidisk0" | "tpmstate0") || is_bus_drive_key(key)
}

/// The format of a VM config key among `formats`: `net3` -> `net[n]`, `scsi0` -> `scsi[n]`,
/// `efidisk0`. `None` for keys that are not property strings or indexes out of range.
/// The table is handed in ([`super::formats::for_config_key`] hands in its own), so
/// this file stays below the table written with its types.
pub(super) fn format_among(formats: &[&'static Format], key: &str) -> Option<&'static Format> {
    if let Some(f) = formats.iter().copied().find(|f| f.name == key) {
        return Some(f);
    }
    let (prefix, index) = split_indexed(key);
    let index = index?;
    if index > max_index(prefix)? {
        return None;
    }
    let wanted = format!("{prefix}[n]");
    formats.iter().copied().find(|f| f.name == wanted)
}

/// A plain key (the generated tables are written with these).
pub(super) const fn key(name: &'static str, kind: Kind, default: Option<&'static str>, default_key: bool) -> Key {
    Key {
        name,
        kind,
        default,
        default_key,
        alias: None,
        key_alias: None,
    }
}

/// Another spelling of `target`.
pub(super) const fn alias(name: &'static str, target: &'static str) -> Key {
    Key {
        name,
        kind: Kind::Str,
        default: None,
        default_key: false,
        alias: Some(target),
        key_alias: None,
    }
}

/// A key whose name is a value of `key` and whose value goes to `target`
/// (`virtio=MAC`: `model=virtio`, `macaddr=MAC`).
pub(super) const fn key_alias(name: &'static str, target: &'static str, key: &'static str) -> Key {
    Key {
        name,
        kind: Kind::Str,
        default: None,
        default_key: false,
        alias: Some(target),
        key_alias: Some(key),
    }
}
