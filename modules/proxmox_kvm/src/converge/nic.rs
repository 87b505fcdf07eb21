//! NICs on an existing VM: a NIC keeps its MAC unless the task names one; the settings
//! the task names (model, bridge, VLAN, firewall, ...) change in place, the others stay.

use ferrox_pve_rules::propstring::{self, formats, PropString};

pub(crate) fn is_net_key(key: &str) -> bool {
    key.strip_prefix("net")
        .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
}

fn parse(text: &str) -> Option<PropString> {
    propstring::parse_keeping_unknown(text, &formats::NET).ok()
}

/// The MAC of a net value (`virtio=AA:..`, `model=virtio,macaddr=AA:..`), upper case.
pub(crate) fn mac_of(text: &str) -> Option<String> {
    parse(text)?.get("macaddr").map(str::to_ascii_uppercase)
}

/// The bridge a net value names.
pub(crate) fn bridge_of(text: &str) -> Option<String> {
    parse(text)?.get("bridge").map(str::to_string)
}

/// The value to write for a NIC, or `None` when it already is as wanted.
pub(crate) fn converge(current: Option<&str>, wanted: &str) -> Option<String> {
    let Some(current) = current else {
        return Some(wanted.to_string());
    };
    let (Some(cur), Some(want)) = (parse(current), parse(wanted)) else {
        return (current != wanted).then(|| wanted.to_string());
    };
    let differing = propstring::differing_keys(&cur, &want, &formats::NET);
    if differing.is_empty() {
        return None;
    }
    let mut next = cur;
    for key in differing {
        next.set(&key, want.get(&key).unwrap_or_default());
    }
    Some(next.to_canonical(&formats::NET))
}

#[cfg(test)]
mod tests {
    use super::*;

    const CUR: &str = "virtio=BC:24:11:00:00:01,bridge=vmbr0,firewall=1";

    #[test]
    fn keys_newer_than_the_schema_converge_too() {
        let cur = "virtio=BC:24:11:00:00:01,bridge=vmbr0,host-tunnel=0,speed=10";
        assert_eq!(
            converge(Some(cur), "virtio,bridge=vmbr0,host-tunnel=off,speed=10"),
            None
        );
        assert_eq!(
            converge(Some(cur), "virtio,bridge=vmbr0,speed=20").as_deref(),
            Some("virtio=BC:24:11:00:00:01,bridge=vmbr0,host-tunnel=0,speed=20")
        );
    }

    #[test]
    fn same_nic_without_mac_is_no_change() {
        assert_eq!(converge(Some(CUR), "virtio,bridge=vmbr0,firewall=1"), None);
        assert_eq!(converge(Some(CUR), "model=virtio,bridge=vmbr0,firewall=true"), None);
        assert_eq!(
            converge(Some(CUR), "virtio,bridge=vmbr0"),
            None,
            "unnamed settings are kept"
        );
    }

    #[test]
    fn changes_keep_the_mac() {
        assert_eq!(
            converge(Some(CUR), "virtio,bridge=vmbr1,tag=20").as_deref(),
            Some("virtio=BC:24:11:00:00:01,bridge=vmbr1,firewall=1,tag=20")
        );
        assert_eq!(
            converge(Some(CUR), "e1000,bridge=vmbr0").as_deref(),
            Some("e1000=BC:24:11:00:00:01,bridge=vmbr0,firewall=1")
        );
    }

    #[test]
    fn a_named_mac_is_applied() {
        assert_eq!(
            converge(Some(CUR), "virtio=bc:24:11:00:00:02,bridge=vmbr0").as_deref(),
            Some("virtio=bc:24:11:00:00:02,bridge=vmbr0,firewall=1")
        );
        assert_eq!(
            converge(Some(CUR), "virtio=bc:24:11:00:00:01"),
            None,
            "MAC case does not matter"
        );
        assert_eq!(mac_of(CUR).as_deref(), Some("BC:24:11:00:00:01"));
        assert_eq!(bridge_of(CUR).as_deref(), Some("vmbr0"));
    }
}
