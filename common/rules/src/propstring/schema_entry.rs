//! One entry of the tables [`super::formats`] is generated with, beside the format
//! types of [`super::format_spec`]: a config key and what it accepts ([`ConfigKey`],
//! [`Accepts`]), and a sub-key newer than the schema ([`Introduced`]). Below the table,
//! so the table and the lookups over it ([`super::keys`], [`super::versions`]) import
//! these types and the table imports none of the lookups.

use super::format_spec::Format;

/// What a config key accepts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Accepts {
    /// A boolean (`1`/`0`, `true`/`false`, `yes`/`no`, `on`/`off`).
    Bool,
    /// An integer within the bounds given.
    Int {
        /// The least value, if the schema sets one.
        min: Option<i64>,
        /// The greatest value, if the schema sets one.
        max: Option<i64>,
    },
    /// A number within the bounds given.
    Number {
        /// The least value, if the schema sets one.
        min: Option<f64>,
        /// The greatest value, if the schema sets one.
        max: Option<f64>,
    },
    /// One of these words.
    Enum(&'static [&'static str]),
    /// A property string in this format.
    PropString(&'static Format),
    /// Text; `format` is PVE's name for a check made on the node (`pve-storage-id`),
    /// `pattern` a regular expression PVE matches (both checked by PVE as well).
    Text {
        /// PVE's name for the check made on the node, if any.
        format: Option<&'static str>,
        /// The regular expression PVE matches, if any.
        pattern: Option<&'static str>,
    },
}

/// One key of the schema, `net[n]` standing for `net0` to `net31`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ConfigKey {
    /// The key as the schema names it (`net[n]` for `net0` to `net31`).
    pub name: &'static str,
    /// What values the key takes.
    pub accepts: Accepts,
    /// The value as the schema spells it for people (`size=<integer> [,name=<string>]`).
    pub typetext: &'static str,
}

/// A sub-key a PVE release has and an older one lacks (an entry of `newer-keys.json`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Introduced {
    /// The config key as the schema names it: `net[n]`, `cpu`, `agent`.
    pub config_key: &'static str,
    /// The sub-key: `host-tunnel`.
    pub key: &'static str,
    /// The first pve-manager release that came with it.
    pub pve: &'static str,
    /// The qemu-server release that added it.
    pub qemu_server: &'static str,
}
