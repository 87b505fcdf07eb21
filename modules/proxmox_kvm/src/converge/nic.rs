//! NICs on an existing VM: a NIC keeps its MAC unless the task names one; its other
//! settings (model, bridge, VLAN, firewall, ...) change in place.

use crate::props::Props;

pub fn is_net_key(key: &str) -> bool {
    key.strip_prefix("net").is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
}

/// A NIC in one shape: model, MAC (upper case) and the other settings.
#[derive(Debug, Clone, PartialEq)]
pub struct Nic {
    pub model: Option<String>,
    pub mac: Option<String>,
    pub rest: Props,
}

/// Reads `virtio=AA:..,bridge=..`, `virtio,bridge=..` or `model=virtio,macaddr=..`.
pub fn parse(text: &str) -> Nic {
    let mut rest = Props::parse(text, None);
    let mut model = rest.pairs.remove("model");
    let mut mac = rest.pairs.remove("macaddr");
    if let Some(first) = rest.default.take() {
        model = Some(first);
    }
    // `virtio=AA:BB:..` parses as a pair whose key is the model.
    if model.is_none() {
        if let Some(k) = rest.pairs.keys().find(|k| looks_like_model(k, &rest)).cloned() {
            mac = rest.pairs.remove(&k);
            model = Some(k);
        }
    }
    Nic { model, mac: mac.map(|m| m.to_ascii_uppercase()), rest }
}

fn looks_like_model(key: &str, props: &Props) -> bool {
    props.pairs.get(key).is_some_and(|v| v.len() == 17 && v.matches(':').count() == 5)
}

/// The MAC of a stored net value, if any.
pub fn mac_of(text: &str) -> Option<String> {
    parse(text).mac
}

impl Nic {
    /// PVE's stored form: `model=MAC` first, then the other settings sorted.
    pub fn render(&self) -> String {
        let head = match (&self.model, &self.mac) {
            (Some(m), Some(mac)) => format!("{m}={mac}"),
            (Some(m), None) => m.clone(),
            (None, Some(mac)) => format!("macaddr={mac}"),
            (None, None) => String::new(),
        };
        let rest = self.rest.render();
        [head, rest].into_iter().filter(|s| !s.is_empty()).collect::<Vec<_>>().join(",")
    }
}

/// The value to write for a NIC, or `None` when it already is as wanted.
pub fn converge(current: Option<&str>, wanted: &str) -> Option<String> {
    let Some(current) = current else { return Some(wanted.to_string()) };
    let cur = parse(current);
    let mut want = parse(wanted);
    if want.mac.is_none() {
        want.mac = cur.mac.clone();
    }
    if want.model.is_none() {
        want.model = cur.model.clone();
    }
    (want != cur).then(|| want.render())
}

#[cfg(test)]
mod tests {
    use super::*;

    const CUR: &str = "virtio=BC:24:11:00:00:01,bridge=vmbr0,firewall=1";

    #[test]
    fn same_nic_without_mac_is_no_change() {
        assert_eq!(converge(Some(CUR), "virtio,bridge=vmbr0,firewall=1"), None);
        assert_eq!(converge(Some(CUR), "model=virtio,bridge=vmbr0,firewall=true"), None);
    }

    #[test]
    fn changes_keep_the_mac() {
        assert_eq!(
            converge(Some(CUR), "virtio,bridge=vmbr1,tag=20,firewall=1").as_deref(),
            Some("virtio=BC:24:11:00:00:01,bridge=vmbr1,firewall=1,tag=20")
        );
        assert_eq!(
            converge(Some(CUR), "e1000,bridge=vmbr0,firewall=1").as_deref(),
            Some("e1000=BC:24:11:00:00:01,bridge=vmbr0,firewall=1")
        );
    }

    #[test]
    fn a_named_mac_is_applied() {
        assert_eq!(
            converge(Some(CUR), "virtio=bc:24:11:00:00:02,bridge=vmbr0,firewall=1").as_deref(),
            Some("virtio=BC:24:11:00:00:02,bridge=vmbr0,firewall=1")
        );
        assert_eq!(mac_of(CUR).as_deref(), Some("BC:24:11:00:00:01"));
    }
}
