//! A guest's addresses as its QEMU guest agent reports them
//! (`GET …/agent/network-get-interfaces`), matched to the VM's `netN` by MAC, and the
//! one address a playbook connects to.
//!
//! Usable means reachable from outside the guest: not loopback, not link-local
//! (IPv6 fe80::/10, IPv4 169.254/16 — the APIPA address a Windows guest shows until
//! DHCP or sysprep gives it a real one), not unspecified. Proxmox VE's own answer, with
//! every address, stays available (proxmox_vm_info `network`).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use serde_json::{json, Map, Value};

/// Which addresses a task waits for and picks its primary address from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// IPv4 addresses only.
    Ipv4,
    /// IPv6 addresses only.
    Ipv6,
    /// An address of either family.
    Any,
}

impl Family {
    /// In messages: `an IPv4 address`.
    pub fn describe(self) -> &'static str {
        match self {
            Family::Ipv4 => "a usable IPv4 address",
            Family::Ipv6 => "a usable IPv6 address",
            Family::Any => "a usable IP address",
        }
    }
}

/// One `netN` of the VM and the guest's usable addresses on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Nic {
    /// `netN`'s index.
    pub index: u32,
    /// As the VM's config has it (upper case).
    pub mac: String,
    /// The usable IPv4 addresses on it.
    pub ipv4: Vec<String>,
    /// The usable IPv6 addresses on it.
    pub ipv6: Vec<String>,
}

/// What the agent reported, per `netN` (in index order), and every address seen
/// (usable or not, loopback left out) for a message when none is usable.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Addresses {
    /// Each `netN` the agent reported on, with its usable addresses.
    pub nics: Vec<Nic>,
    /// Every address the agent showed (loopback left out), usable or not.
    pub seen: Vec<String>,
}

impl Addresses {
    /// From the VM's config (its `netN` keys) and the agent's `result` list. A guest
    /// interface matches the `netN` with its MAC (any case); VLAN or bond interfaces
    /// sharing a MAC add to the same `netN`; interfaces of no `netN` are left out.
    pub fn read(config: &Map<String, Value>, interfaces: &Value) -> Addresses {
        let mut nics: Vec<Nic> = config
            .iter()
            .filter_map(|(k, v)| {
                let index = k.strip_prefix("net")?.parse::<u32>().ok()?;
                let mac = mac_of(v.as_str()?)?;
                Some(Nic {
                    index,
                    mac,
                    ipv4: Vec::new(),
                    ipv6: Vec::new(),
                })
            })
            .collect();
        nics.sort_by_key(|n| n.index);
        let mut seen = Vec::new();
        for iface in interfaces.as_array().into_iter().flatten() {
            let hw = iface
                .get("hardware-address")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let nic = nics.iter_mut().find(|n| n.mac.eq_ignore_ascii_case(hw));
            let mut usable = Vec::new();
            for entry in iface
                .get("ip-addresses")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let Some(ip) = entry
                    .get("ip-address")
                    .and_then(Value::as_str)
                    .and_then(|t| t.parse::<IpAddr>().ok())
                else {
                    continue;
                };
                if ip.is_loopback() {
                    continue;
                }
                if !seen.contains(&ip.to_string()) {
                    seen.push(ip.to_string());
                }
                if is_usable(ip) {
                    usable.push(ip);
                }
            }
            if let Some(nic) = nic {
                for ip in usable {
                    let list = if ip.is_ipv4() { &mut nic.ipv4 } else { &mut nic.ipv6 };
                    if !list.contains(&ip.to_string()) {
                        list.push(ip.to_string());
                    }
                }
            }
        }
        Addresses { nics, seen }
    }

    /// The first usable address of `family` on the lowest `netN` that has one
    /// (`Any`: IPv4 first, as most playbooks connect over IPv4).
    pub fn primary(&self, family: Family) -> Option<&str> {
        self.nics.iter().find_map(|n| {
            let v4 = n.ipv4.first().map(String::as_str);
            let v6 = n.ipv6.first().map(String::as_str);
            match family {
                Family::Ipv4 => v4,
                Family::Ipv6 => v6,
                Family::Any => v4.or(v6),
            }
        })
    }

    /// The result's `ip_addresses`: `{net0: {mac, ipv4: [...], ipv6: [...]}, ...}`.
    pub fn to_value(&self) -> Value {
        let map: Map<String, Value> = self
            .nics
            .iter()
            .map(|n| {
                (
                    format!("net{}", n.index),
                    json!({"mac": n.mac, "ipv4": n.ipv4, "ipv6": n.ipv6}),
                )
            })
            .collect();
        Value::Object(map)
    }
}

/// Reachable from outside the guest.
pub fn is_usable(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => !(v4.is_loopback() || v4.is_link_local() || v4.is_unspecified() || v4 == Ipv4Addr::BROADCAST),
        IpAddr::V6(v6) => !(v6.is_loopback() || v6.is_unspecified() || is_link_local_v6(v6)),
    }
}

/// fe80::/10.
fn is_link_local_v6(ip: Ipv6Addr) -> bool {
    (ip.segments()[0] & 0xffc0) == 0xfe80
}

/// The MAC of a `netN` value: `virtio=BC:24:11:…,bridge=…` or `macaddr=…`.
fn mac_of(net: &str) -> Option<String> {
    net.split(',').find_map(|part| {
        let (key, value) = part.split_once('=')?;
        let is_mac = value.split(':').count() == 6
            && value
                .split(':')
                .all(|b| b.len() == 2 && u8::from_str_radix(b, 16).is_ok());
        (is_mac && key != "bridge").then(|| value.to_ascii_uppercase())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> Map<String, Value> {
        json!({
            "net0": "virtio=BC:24:11:00:00:01,bridge=vmbr0",
            "net1": "model=e1000,macaddr=bc:24:11:00:00:02,bridge=vmbr1",
            "net10": "virtio=BC:24:11:00:00:0A,bridge=vmbr0",
            "name": "web",
        })
        .as_object()
        .cloned()
        .unwrap()
    }

    fn iface(mac: &str, ips: &[&str]) -> Value {
        let ips: Vec<Value> = ips
            .iter()
            .map(|ip| json!({"ip-address": ip, "ip-address-type": if ip.contains(':') { "ipv6" } else { "ipv4" }, "prefix": 24}))
            .collect();
        json!({"name": "x", "hardware-address": mac, "ip-addresses": ips})
    }

    #[test]
    fn addresses_match_nics_by_mac_in_any_case() {
        let agent = json!([
            iface("00:00:00:00:00:00", &["127.0.0.1", "::1"]),
            iface("bc:24:11:00:00:02", &["fe80::1", "2001:db8::2"]),
            iface("bc:24:11:00:00:01", &["fe80::be24:11ff:fe00:1", "192.0.2.10"]),
            iface("02:42:ac:11:00:01", &["172.17.0.1"]),
        ]);
        let a = Addresses::read(&config(), &agent);
        assert_eq!(
            a.to_value(),
            json!({
                "net0": {"mac": "BC:24:11:00:00:01", "ipv4": ["192.0.2.10"], "ipv6": []},
                "net1": {"mac": "BC:24:11:00:00:02", "ipv4": [], "ipv6": ["2001:db8::2"]},
                "net10": {"mac": "BC:24:11:00:00:0A", "ipv4": [], "ipv6": []},
            })
        );
        assert_eq!(a.primary(Family::Any), Some("192.0.2.10"));
        assert_eq!(a.primary(Family::Ipv6), Some("2001:db8::2"), "the lowest netN with one");
        assert!(a.seen.contains(&"172.17.0.1".to_string()) && !a.seen.contains(&"127.0.0.1".to_string()));
    }

    #[test]
    fn link_local_apipa_and_loopback_are_not_usable() {
        for ip in [
            "127.0.0.1",
            "::1",
            "fe80::1",
            "febf::1",
            "169.254.10.1",
            "0.0.0.0",
            "::",
        ] {
            assert!(!is_usable(ip.parse().unwrap()), "{ip}");
        }
        for ip in ["10.0.0.1", "192.0.2.1", "2001:db8::1", "fec0::1", "fd00::1"] {
            assert!(is_usable(ip.parse().unwrap()), "{ip}");
        }
        let windows = json!([iface("BC:24:11:00:00:01", &["fe80::1", "169.254.0.1"])]);
        let a = Addresses::read(&config(), &windows);
        assert_eq!(a.primary(Family::Any), None);
        assert_eq!(a.seen, ["fe80::1", "169.254.0.1"]);
    }

    #[test]
    fn nic_macs_from_either_spelling() {
        assert_eq!(
            mac_of("virtio=bc:24:11:00:00:01,bridge=vmbr0").as_deref(),
            Some("BC:24:11:00:00:01")
        );
        assert_eq!(
            mac_of("model=virtio,macaddr=BC:24:11:00:00:01").as_deref(),
            Some("BC:24:11:00:00:01")
        );
        assert_eq!(mac_of("virtio,bridge=vmbr0"), None);
    }
}
