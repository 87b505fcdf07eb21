//! Ruling `/cluster/resources` entries out unread. A task that looks for one or two
//! guests on a cluster of thousands decodes only the entries that may be them (and, in
//! the unfiltered listing, the nodes and storages); every other entry is skipped as text.
//! Each test here answers "certainly not" or "maybe": an entry whose text is not in
//! PVE's plain flat shape (escapes, nesting, spacing) is always decoded.

use memchr::memmem;

/// Rules out the entries that cannot be the guest named `name`: PVE guest names are DNS
/// names, which JSON writes verbatim, so an entry whose text lacks `"name"` (quoted) is
/// not it — unless it has no name at all: PVE lists a new VM's name only after its
/// node's next status broadcast, so an unnamed entry may be it
/// ([`crate::vm::name_unbroadcast`] reads its config). A name JSON would
/// escape rules nothing out.
pub struct NameProbe {
    quoted: Option<memmem::Finder<'static>>,
    key: memmem::Finder<'static>,
}

impl NameProbe {
    /// A probe for the guest named `name` (`None`: any entry may match).
    pub fn new(name: Option<&str>) -> NameProbe {
        let verbatim = |n: &str| !n.is_empty() && n.bytes().all(|b| b.is_ascii_alphanumeric() || b"-._".contains(&b));
        let quoted = name
            .filter(|n| verbatim(n))
            .map(|n| memmem::Finder::new(format!("\"{n}\"").as_bytes()).into_owned());
        NameProbe {
            quoted,
            key: memmem::Finder::new(br#""name":"#).into_owned(),
        }
    }

    /// False only when the entry is certainly not the named guest.
    pub fn may_match(&self, entry_json: &[u8]) -> bool {
        self.quoted
            .as_ref()
            .is_none_or(|f| f.find(entry_json).is_some() || self.key.find(entry_json).is_none())
    }
}

/// The guests a lookup can return: by vmid ([`crate::vm::by_vmid`], which wins over the
/// name), else by name ([`crate::per_node::qemu_by_name_on`]); plus any further vmid the
/// task reads.
pub struct LookupTargets {
    vmids: Vec<u32>,
    names: Vec<NameProbe>,
    keys: Keys,
}

/// The searchers for the keys read from the text, built once per listing (building one
/// costs more than a search through an entry).
struct Keys {
    vmid: memmem::Finder<'static>,
    kind: memmem::Finder<'static>,
    name: memmem::Finder<'static>,
    lock: memmem::Finder<'static>,
    node: memmem::Finder<'static>,
    pool: memmem::Finder<'static>,
}

impl Keys {
    fn new() -> Keys {
        Keys {
            vmid: memmem::Finder::new(br#""vmid":"#),
            kind: memmem::Finder::new(br#""type":"#),
            name: memmem::Finder::new(br#""name":"#),
            lock: memmem::Finder::new(br#""lock":"#),
            node: memmem::Finder::new(br#""node":"#),
            pool: memmem::Finder::new(br#""pool":"#),
        }
    }
}

/// A guest the lookup does not seek, as its entry states it plainly: what tells which
/// vmids are taken, and by which name (`vmid_range`), and, when asked, where it is (the
/// run's name index).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OtherGuest {
    /// Its vmid.
    pub vmid: u32,
    /// As [`crate::vm::Guest::name`]: a non-empty string, else none.
    pub name: Option<String>,
    /// Its config lock, if any.
    pub lock: Option<String>,
    /// Read only for the name index (three more reads of each entry's text).
    pub place: Option<Place>,
}

/// Where an unsought guest is, and what it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    /// The node it is on.
    pub node: String,
    /// The pool it is in, if listed.
    pub pool: Option<String>,
    /// A QEMU VM (else an LXC container).
    pub qemu: bool,
}

impl LookupTargets {
    /// What a lookup by `vmid` (which wins) or else by `name` can return.
    pub fn lookup(vmid: Option<u32>, name: Option<&str>) -> LookupTargets {
        match vmid {
            Some(id) => LookupTargets::nothing().and_vmid(id),
            None => name.into_iter().fold(LookupTargets::nothing(), LookupTargets::and_name),
        }
    }

    /// No guest yet: add the vmids and names.
    pub fn nothing() -> LookupTargets {
        LookupTargets {
            vmids: Vec::new(),
            names: Vec::new(),
            keys: Keys::new(),
        }
    }

    /// Also the guest with this vmid (a disk move's target VM).
    pub fn and_vmid(mut self, vmid: u32) -> LookupTargets {
        self.vmids.push(vmid);
        self
    }

    /// Also every guest with this name (a clone's source template).
    pub fn and_name(mut self, name: &str) -> LookupTargets {
        self.names.push(NameProbe::new(Some(name)));
        self
    }

    /// Whether the lookup seeks one name and nothing else (no vmid, no second name).
    pub fn only_one_name(&self) -> bool {
        self.vmids.is_empty() && self.names.len() == 1
    }

    /// False only when the entry is certainly a guest that is not sought. `only_guests`:
    /// the listing was asked for `type=vm`, so every entry is a guest.
    pub fn may_need(&self, entry_json: &[u8], only_guests: bool) -> bool {
        if !plain(entry_json) || !(only_guests || self.plainly_a_guest(entry_json)) {
            return true;
        }
        match self.plain_vmid(entry_json) {
            None => true,
            Some(id) if self.vmids.contains(&id) => true,
            Some(_) => self.names.iter().any(|p| p.may_match(entry_json)),
        }
    }

    /// The vmid, name and lock of an entry [`LookupTargets::may_need`] rules out, and with
    /// `placed` its node, pool and type, when its text states them plainly; `None` when
    /// only decoding can tell.
    pub fn unsought(&self, entry_json: &[u8], placed: bool) -> Option<OtherGuest> {
        let vmid = self.plain_vmid(entry_json)?;
        let name = plain_text(&self.keys.name, entry_json)?.map(str::to_string);
        let lock = plain_text(&self.keys.lock, entry_json)?.map(str::to_string);
        let place = if placed { Some(self.place(entry_json)?) } else { None };
        Some(OtherGuest {
            vmid,
            name,
            lock,
            place,
        })
    }

    fn place(&self, entry_json: &[u8]) -> Option<Place> {
        let node = plain_text(&self.keys.node, entry_json)??.to_string();
        let pool = plain_text(&self.keys.pool, entry_json)?.map(str::to_string);
        let qemu = once_after(&self.keys.kind, entry_json)?.starts_with(br#""qemu""#);
        Some(Place { node, pool, qemu })
    }

    /// Of type `qemu` or `lxc`, stated once.
    fn plainly_a_guest(&self, entry_json: &[u8]) -> bool {
        let Some(value) = once_after(&self.keys.kind, entry_json) else {
            return false;
        };
        value.starts_with(br#""qemu""#) || value.starts_with(br#""lxc""#)
    }

    /// The vmid of a plain entry that states it once as `"vmid":<digits>` then `,` or `}`.
    fn plain_vmid(&self, entry_json: &[u8]) -> Option<u32> {
        let value = once_after(&self.keys.vmid, entry_json)?;
        let digits = value.iter().take_while(|b| b.is_ascii_digit()).count();
        let leading_zero = digits > 1 && value[0] == b'0';
        if digits == 0 || leading_zero || !matches!(value.get(digits), Some(b',' | b'}')) {
            return None;
        }
        std::str::from_utf8(&value[..digits]).ok()?.parse().ok()
    }
}

/// A plain entry's string field, non-empty: `Some(None)` when the key is absent or its
/// value is no string or empty (as the decoded entry has it), `None` when the key is
/// there twice.
fn plain_text<'j>(key: &memmem::Finder<'_>, entry_json: &'j [u8]) -> Option<Option<&'j str>> {
    if key.find(entry_json).is_none() {
        return Some(None);
    }
    let value = once_after(key, entry_json)?;
    let Some(text) = value.strip_prefix(b"\"") else {
        return Some(None);
    };
    let text = &text[..memchr::memchr(b'"', text)?];
    Some(std::str::from_utf8(text).ok().filter(|t| !t.is_empty()))
}

/// The text after the key, when the entry holds the key exactly once.
fn once_after<'j>(key: &memmem::Finder<'_>, entry_json: &'j [u8]) -> Option<&'j [u8]> {
    let rest = &entry_json[key.find(entry_json)? + key.needle().len()..];
    key.find(rest).is_none().then_some(rest)
}

/// No escape and no nesting: every `"key":` in the text then is one of the entry's keys.
fn plain(entry_json: &[u8]) -> bool {
    entry_json.len() > 1 && memchr::memchr3(b'\\', b'{', b'[', &entry_json[1..]).is_none()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_name_probe_rules_out_only_entries_without_the_quoted_name() {
        let probe = NameProbe::new(Some("web01"));
        assert!(probe.may_match(br#"{"name":"web01","vmid":101}"#));
        assert!(
            probe.may_match(br#"{"name": "x", "tags": "web01"}"#),
            "a false positive is decoded, never lost"
        );
        assert!(!probe.may_match(br#"{"name":"web011","vmid":102}"#));
        assert!(!probe.may_match(br#"{"name":"web0","vmid":103}"#));
        assert!(
            probe.may_match(br#"{"vmid":104,"status":"unknown"}"#),
            "a name not broadcast yet may be it"
        );
        assert!(
            NameProbe::new(Some("we\"b")).may_match(b"{}"),
            "a name JSON escapes rules nothing out"
        );
        assert!(NameProbe::new(None).may_match(b"{}"));
    }

    #[test]
    fn a_vmid_lookup_skips_only_plain_guests_with_another_vmid() {
        let sought = LookupTargets::lookup(Some(101), Some("web01"));
        let needs = |json: &str| sought.may_need(json.as_bytes(), false);
        assert!(needs(r#"{"type":"qemu","vmid":101,"node":"pve1"}"#));
        assert!(
            !needs(r#"{"type":"qemu","vmid":1010,"node":"pve1","name":"web01"}"#),
            "the vmid wins over the name"
        );
        assert!(!needs(r#"{"type":"lxc","vmid":10,"maxmem":101}"#));
        // What the text does not say plainly is decoded.
        for unclear in [
            r#"{"type":"qemu","vmid":"102"}"#,
            r#"{"type":"qemu","vmid": 102}"#,
            r#"{"type":"qemu","vmid":0101}"#,
            r#"{"type":"qemu","vmid":102,"vmid":101}"#,
            r#"{"type":"qemu","vmid":102,"name":"a\u0062"}"#,
            r#"{"type":"qemu","vmid":102,"ha":{"managed":1}}"#,
            r#"{"type":"qemu","node":"pve1"}"#,
            r#"{"type": "qemu","vmid":102}"#,
            r#"{"type":"qemu","type":"storage","vmid":102}"#,
        ] {
            assert!(needs(unclear), "{unclear}");
        }
        // Nodes, storages and every other type are always decoded in the unfiltered listing.
        assert!(needs(r#"{"type":"node","node":"pve1","vmid":5}"#));
        assert!(needs(r#"{"type":"storage","storage":"local","node":"pve1"}"#));
        assert!(
            !sought.may_need(br#"{"id":"qemu/5","vmid":5}"#, true),
            "a type=vm listing holds guests only"
        );
    }

    #[test]
    fn an_unsought_guest_is_known_by_what_its_entry_states_plainly() {
        let sought = LookupTargets::lookup(None, Some("web01"));
        let thin = |json: &str| sought.unsought(json.as_bytes(), false);
        let expect = |vmid, name: Option<&str>, lock: Option<&str>| {
            Some(OtherGuest {
                vmid,
                name: name.map(str::to_string),
                lock: lock.map(str::to_string),
                place: None,
            })
        };
        assert_eq!(
            thin(r#"{"type":"qemu","vmid":103,"name":"db01","node":"pve1"}"#),
            expect(103, Some("db01"), None)
        );
        assert_eq!(
            thin(r#"{"type":"qemu","vmid":104,"name":"VM 104","lock":"clone"}"#),
            expect(104, Some("VM 104"), Some("clone"))
        );
        assert_eq!(
            thin(r#"{"type":"qemu","vmid":105,"name":"","lock":null}"#),
            expect(105, None, None)
        );
        assert_eq!(thin(r#"{"type":"qemu","vmid":106}"#), expect(106, None, None));
        assert_eq!(
            thin(r#"{"type":"qemu","vmid":107,"name":"a","name":"b"}"#),
            None,
            "stated twice: decoded"
        );
        assert_eq!(thin(r#"{"type":"qemu","vmid":"108","name":"a"}"#), None);
    }

    #[test]
    fn placed_an_unsought_guest_also_tells_its_node_pool_and_type() {
        let sought = LookupTargets::lookup(None, Some("web01"));
        let place = |json: &str| sought.unsought(json.as_bytes(), true).map(|u| u.place.unwrap());
        let at = |node: &str, pool: Option<&str>, qemu| {
            Some(Place {
                node: node.into(),
                pool: pool.map(str::to_string),
                qemu,
            })
        };
        assert_eq!(
            place(r#"{"type":"qemu","vmid":103,"name":"db01","node":"pve1"}"#),
            at("pve1", None, true)
        );
        assert_eq!(
            place(r#"{"type":"lxc","vmid":104,"node":"pve2","pool":"prod"}"#),
            at("pve2", Some("prod"), false)
        );
        assert_eq!(place(r#"{"type":"qemu","vmid":105}"#), None, "no node: decoded");
        assert_eq!(
            place(r#"{"type":"qemu","vmid":106,"node":"a","node":"b"}"#),
            None,
            "stated twice: decoded"
        );
    }

    #[test]
    fn a_name_lookup_keeps_every_guest_that_may_carry_the_name_and_the_extra_vmid() {
        let sought = LookupTargets::lookup(None, Some("web01")).and_vmid(300);
        let needs = |json: &str| sought.may_need(json.as_bytes(), true);
        assert!(needs(r#"{"vmid":101,"name":"web01"}"#));
        assert!(
            needs(r#"{"vmid":102,"name":"web01"}"#),
            "a twin is kept, so the lookup still sees both"
        );
        assert!(needs(r#"{"vmid":300,"name":"db"}"#));
        assert!(!needs(r#"{"vmid":103,"name":"web011"}"#));
        let nothing = LookupTargets::lookup(None, None);
        assert!(!nothing.may_need(br#"{"vmid":101,"name":"web01"}"#, true));
    }
}
