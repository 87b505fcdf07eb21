//! The host variables, exactly as community.proxmox 1.6's inventory plugin builds them
//! from the same answers (its `_handle_item`, `_get_vm_config`, `_get_vm_status`,
//! `_get_vm_snapshots`, `_get_lxc_interfaces`, `_get_agent_network_interfaces`), plus
//! the usable addresses. Pure: answers in, variables out.

use ferrox_cluster::guest_net::{Addresses, Family};
use serde_json::{json, Map, Value};

/// community's `to_safe`: spaces dropped, anything but `[A-Za-z0-9_]` becomes `_`.
pub(crate) fn to_safe(word: &str) -> String {
    word.chars()
        .filter(|c| *c != ' ')
        .map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' })
        .collect()
}

/// A fact's name: prefix + name, lower-cased (Python's `lower()`), made safe.
pub(crate) fn fact(prefix: &str, name: &str) -> String {
    to_safe(&format!("{prefix}{}", name.to_lowercase()))
}

/// One guest of the listing, with what the variables and groups need.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Item {
    pub vmid: u64,
    pub name: String,
    pub node: String,
    /// `qemu` or `lxc`.
    pub kind: String,
    pub status: String,
    pub tags: Option<String>,
    pub template: bool,
    pub pool: Option<String>,
    /// Whether the guest gets `proxmox_template` (community.proxmox 2.x; not 1.6).
    pub template_fact: bool,
}

/// The variables every guest gets from the listing alone.
pub(crate) fn base(prefix: &str, item: &Item) -> Map<String, Value> {
    let mut v = Map::new();
    v.insert(fact(prefix, "node"), json!(item.node));
    v.insert(fact(prefix, "vmid"), json!(item.vmid));
    v.insert(fact(prefix, "vmtype"), json!(item.kind));
    v.insert(fact(prefix, "name"), json!(item.name));
    v.insert(fact(prefix, "status"), json!(item.status));
    if item.template_fact {
        v.insert(fact(prefix, "template"), json!(item.template));
    }
    if let Some(tags) = item.tags.as_deref().filter(|t| !t.is_empty()) {
        v.insert(fact(prefix, "tags"), json!(tags));
    }
    v
}

/// Whether `status/current` tells more than the listing: only for a running VM, whose
/// `qmpstatus` may be `paused`, `prelaunch`, ... For a stopped VM PVE answers
/// `qmpstatus` = `status` = `stopped`, and a container's answer is its status alone.
pub(crate) fn needs_status_read(item: &Item) -> bool {
    item.kind == "qemu" && item.status == "running"
}

/// `status/current`: `status`, and for QEMU `qmpstatus`.
pub(crate) fn add_status(prefix: &str, kind: &str, current: &Value, v: &mut Map<String, Value>) {
    v.insert(
        fact(prefix, "status"),
        current.get("status").cloned().unwrap_or(Value::Null),
    );
    if kind == "qemu" {
        v.insert(
            fact(prefix, "qmpstatus"),
            current.get("qmpstatus").cloned().unwrap_or(Value::Null),
        );
    }
}

/// Python's `str()` of a JSON value from PVE (strings as they are).
fn py_str(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Null => "None".into(),
        other => other.to_string(),
    }
}

/// Whether the `agent` config value enables the agent (community: the first
/// comma-separated field as an integer, or `enabled=1`).
pub(crate) fn agent_enabled(value: &Value) -> bool {
    let Some(text) = value.as_str() else { return false };
    let first = text.split(',').next().unwrap_or("");
    match first.trim().parse::<i64>() {
        Ok(n) => n != 0,
        Err(_) => first == "enabled=1",
    }
}

/// The config's keys as community's facts, in the config's order. `agent_interfaces`:
/// the agent's answer as [`agent_interfaces`] made it (set only when not empty).
pub(crate) fn add_config(
    prefix: &str,
    config: &Map<String, Value>,
    agent: Option<Vec<Value>>,
    v: &mut Map<String, Value>,
) {
    let mut agent = agent;
    for (name, raw) in config {
        let key = fact(prefix, name);
        let mut value = raw.clone();
        if name == "rootfs" || ["virtio", "sata", "ide", "scsi"].iter().any(|p| name.starts_with(p)) {
            value = Value::String(format!("disk_image={}", py_str(raw)));
        }
        if name == "tags" {
            if let Some(text) = value.as_str() {
                let stripped = text.trim();
                if !stripped.is_empty() {
                    let parsed: Vec<Value> = stripped.replace(',', ";").split(';').map(|t| json!(t.trim())).collect();
                    v.insert(format!("{key}_parsed"), Value::Array(parsed));
                }
            }
        }
        if name == "agent" && agent_enabled(raw) {
            if let Some(ifaces) = agent.take().filter(|i| !i.is_empty()) {
                v.insert(to_safe(&format!("{key}_interfaces")), Value::Array(ifaces));
            }
        }
        if name == "lxc" {
            if let Some(pairs) = raw.as_array() {
                let mut out = Map::new();
                for pair in pairs {
                    if let Some([k, val]) = pair.as_array().map(Vec::as_slice) {
                        let k = py_str(k);
                        let k = k.strip_prefix("lxc.").map(str::to_string).unwrap_or(k);
                        out.insert(k, val.clone());
                    }
                }
                value = Value::Object(out);
            }
        }
        if name != "description" {
            if let Some(text) = value.as_str() {
                if text.split(',').all(|part| part.contains('=')) {
                    let mut dict = Map::new();
                    for part in text.split(',') {
                        let (k, val) = part.split_once('=').unwrap_or((part, ""));
                        dict.insert(k.to_string(), json!(val));
                    }
                    value = Value::Object(dict);
                }
            }
        }
        v.insert(key, value);
    }
}

/// community's `proxmox_agent_interfaces`: per interface its name, MAC (or "") and
/// `ip/prefix` list. An answer that is an error object gives none.
pub(crate) fn agent_interfaces(result: &Value) -> Vec<Value> {
    let Some(ifaces) = result.as_array() else {
        return Vec::new();
    };
    ifaces
        .iter()
        .map(|iface| {
            let ips: Vec<Value> = iface
                .get("ip-addresses")
                .and_then(Value::as_array)
                .map(|ips| {
                    ips.iter()
                        .map(|ip| json!(format!("{}/{}", py_str(&ip["ip-address"]), py_str(&ip["prefix"]))))
                        .collect()
                })
                .unwrap_or_default();
            json!({
                "name": iface.get("name").cloned().unwrap_or(Value::Null),
                "mac-address": iface.get("hardware-address").cloned().unwrap_or(json!("")),
                "ip-addresses": ips,
            })
        })
        .collect()
}

/// community's `proxmox_snapshots`: the names, `current` left out.
pub(crate) fn snapshots(list: &Value) -> Vec<Value> {
    list.as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s.get("name"))
        .filter(|n| n.as_str() != Some("current"))
        .cloned()
        .collect()
}

/// community's `proxmox_lxc_interfaces`: name, hwaddr, and inet/inet6 when present.
pub(crate) fn lxc_interfaces(list: &Value) -> Vec<Value> {
    list.as_array()
        .into_iter()
        .flatten()
        .map(|iface| {
            let mut o = Map::new();
            o.insert("name".into(), iface.get("name").cloned().unwrap_or(Value::Null));
            o.insert("hwaddr".into(), iface.get("hwaddr").cloned().unwrap_or(Value::Null));
            for k in ["inet", "inet6"] {
                if let Some(x) = iface.get(k) {
                    o.insert(k.into(), x.clone());
                }
            }
            Value::Object(o)
        })
        .collect()
}

/// A container's `…/interfaces` in the agent's shape (`hardware-address`,
/// `ip-addresses`), for [`Addresses::read`]: PVE 8 gives both; older only `inet`/`inet6`.
pub(crate) fn lxc_as_agent(list: &Value) -> Value {
    let ifaces = list.as_array().into_iter().flatten().map(|iface| {
        let mac = iface
            .get("hardware-address")
            .or_else(|| iface.get("hwaddr"))
            .cloned()
            .unwrap_or(json!(""));
        let ips = match iface.get("ip-addresses").and_then(Value::as_array) {
            Some(ips) => ips.clone(),
            None => ["inet", "inet6"]
                .iter()
                .filter_map(|k| iface.get(*k).and_then(Value::as_str))
                .map(|cidr| json!({"ip-address": cidr.split('/').next().unwrap_or(cidr)}))
                .collect(),
        };
        json!({"hardware-address": mac, "ip-addresses": ips})
    });
    Value::Array(ifaces.collect())
}

/// `proxmox_ip_addresses` (usable addresses on the guest's `netN` interfaces, by `netN`,
/// IPv4 before IPv6 on each) and `proxmox_ip_address` (the first usable IPv4 address of
/// the lowest `netN` that has one, else the first IPv6): the rule of proxmox_kvm's
/// wait_for_ip. Interfaces without a `netN` (docker0, tunnels) and loopback, link-local
/// and APIPA addresses are left out.
pub(crate) fn add_addresses(prefix: &str, config: &Map<String, Value>, interfaces: &Value, v: &mut Map<String, Value>) {
    let addresses = Addresses::read(config, interfaces);
    let all: Vec<Value> = addresses
        .nics
        .iter()
        .flat_map(|n| n.ipv4.iter().chain(n.ipv6.iter()))
        .map(|a| json!(a))
        .collect();
    v.insert(fact(prefix, "ip_addresses"), Value::Array(all));
    if let Some(primary) = addresses.primary(Family::Any) {
        v.insert(fact(prefix, "ip_address"), json!(primary));
    }
}

/// A node's address as community picks it from `GET /nodes/{node}/network`: sorted by
/// interface name, the first with `active`, `address` and `gateway` keys.
pub(crate) fn node_address(interfaces: &Value) -> Value {
    let mut list: Vec<&Value> = interfaces.as_array().into_iter().flatten().collect();
    list.sort_by(|a, b| {
        a.get("iface")
            .and_then(Value::as_str)
            .cmp(&b.get("iface").and_then(Value::as_str))
    });
    list.into_iter()
        .find(|i| i.get("active").is_some() && i.get("address").is_some() && i.get("gateway").is_some())
        .and_then(|i| i.get("address").cloned())
        .unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item() -> Item {
        Item {
            vmid: 110,
            name: "app01".into(),
            node: "pve-1".into(),
            kind: "qemu".into(),
            status: "running".into(),
            tags: Some("app;prod".into()),
            template: false,
            pool: None,
            template_fact: false,
        }
    }

    #[test]
    fn names_are_made_safe_as_community_does() {
        assert_eq!(to_safe("foo-bar baz"), "foo_barbaz");
        assert_eq!(fact("proxmox_", "Net0"), "proxmox_net0");
        assert_eq!(fact("pve-", "x"), "pve_x");
    }

    #[test]
    fn base_variables() {
        let v = base("proxmox_", &item());
        assert_eq!(
            Value::Object(v),
            json!({"proxmox_node": "pve-1", "proxmox_vmid": 110, "proxmox_vmtype": "qemu", "proxmox_name": "app01", "proxmox_status": "running", "proxmox_tags": "app;prod"})
        );
        let mut untagged = item();
        untagged.tags = Some(String::new());
        assert!(!base("proxmox_", &untagged).contains_key("proxmox_tags"));
    }

    #[test]
    fn the_template_variable_is_community_2s_and_a_bool() {
        let mut template = item();
        template.template = true;
        template.template_fact = true;
        assert_eq!(base("px_", &template).get("px_template"), Some(&json!(true)));
        template.template = false;
        assert_eq!(base("px_", &template).get("px_template"), Some(&json!(false)));
        template.template_fact = false;
        assert!(!base("px_", &template).contains_key("px_template"));
    }

    #[test]
    fn config_values_as_community_splits_them() {
        let config = json!({
            "scsi0": "local-lvm:vm-110-disk-0,size=16G",
            "scsihw": "virtio-scsi-single",
            "net0": "virtio=BC:24:11:00:01:10,bridge=vmbr0",
            "description": "a=b,c=d",
            "tags": "app; prod,x",
            "agent": "1",
            "cores": 2,
            "ostype": "l26",
            "empty": "",
            "lxc": [["lxc.apparmor.profile", "unconfined"], ["other", "x"]],
        });
        let agent = vec![json!({"name": "eth0"})];
        let mut v = Map::new();
        add_config("proxmox_", config.as_object().unwrap(), Some(agent), &mut v);
        assert_eq!(
            Value::Object(v),
            json!({
                "proxmox_scsi0": {"disk_image": "local-lvm:vm-110-disk-0", "size": "16G"},
                "proxmox_scsihw": {"disk_image": "virtio-scsi-single"},
                "proxmox_net0": {"virtio": "BC:24:11:00:01:10", "bridge": "vmbr0"},
                "proxmox_description": "a=b,c=d",
                "proxmox_tags_parsed": ["app", "prod", "x"],
                "proxmox_tags": "app; prod,x",
                "proxmox_agent_interfaces": [{"name": "eth0"}],
                "proxmox_agent": "1",
                "proxmox_cores": 2,
                "proxmox_ostype": "l26",
                "proxmox_empty": "",
                "proxmox_lxc": {"apparmor.profile": "unconfined", "other": "x"},
            })
        );
    }

    #[test]
    fn agent_flag() {
        assert!(agent_enabled(&json!("1")));
        assert!(agent_enabled(&json!("1,fstrim_cloned_disks=1")));
        assert!(agent_enabled(&json!("enabled=1,type=virtio")));
        assert!(!agent_enabled(&json!("0")));
        assert!(!agent_enabled(&json!("enabled=0")));
    }

    #[test]
    fn agent_interfaces_as_community_lists_them() {
        let result = json!([
            {"name": "lo", "hardware-address": "00:00:00:00:00:00", "ip-addresses": [{"ip-address": "127.0.0.1", "prefix": 8, "ip-address-type": "ipv4"}]},
            {"name": "eth0"},
        ]);
        assert_eq!(
            agent_interfaces(&result),
            vec![
                json!({"name": "lo", "mac-address": "00:00:00:00:00:00", "ip-addresses": ["127.0.0.1/8"]}),
                json!({"name": "eth0", "mac-address": "", "ip-addresses": []}),
            ]
        );
        assert!(agent_interfaces(&json!({"error": {"class": "Unsupported"}})).is_empty());
    }

    #[test]
    fn usable_addresses_only_and_the_primary_first() {
        let config =
            json!({"net0": "virtio=BC:24:11:00:01:10,bridge=vmbr0", "net1": "virtio=BC:24:11:00:01:11,bridge=vmbr1"});
        let agent = json!([
            {"name": "lo", "hardware-address": "00:00:00:00:00:00", "ip-addresses": [{"ip-address": "127.0.0.1", "prefix": 8}]},
            {"name": "eth1", "hardware-address": "bc:24:11:00:01:11", "ip-addresses": [{"ip-address": "198.51.100.7", "prefix": 24}]},
            {"name": "eth0", "hardware-address": "bc:24:11:00:01:10", "ip-addresses": [
                {"ip-address": "169.254.3.4", "prefix": 16}, {"ip-address": "fe80::1", "prefix": 64},
                {"ip-address": "2001:db8::10", "prefix": 64}, {"ip-address": "192.0.2.10", "prefix": 24}]},
            {"name": "docker0", "hardware-address": "02:42:ac:11:00:01", "ip-addresses": [{"ip-address": "172.17.0.1", "prefix": 16}]},
        ]);
        let mut v = Map::new();
        add_addresses("proxmox_", config.as_object().unwrap(), &agent, &mut v);
        assert_eq!(
            Value::Object(v),
            json!({"proxmox_ip_addresses": ["192.0.2.10", "2001:db8::10", "198.51.100.7"], "proxmox_ip_address": "192.0.2.10"})
        );

        // A guest with only APIPA / link-local: the list is empty, no primary.
        let apipa = json!([{"hardware-address": "BC:24:11:00:01:10", "ip-addresses": [{"ip-address": "169.254.9.9", "prefix": 16}]}]);
        let mut v = Map::new();
        add_addresses("proxmox_", config.as_object().unwrap(), &apipa, &mut v);
        assert_eq!(Value::Object(v), json!({"proxmox_ip_addresses": []}));
        let usable = |ip: &str| ferrox_cluster::guest_net::is_usable(ip.parse().unwrap());
        assert!(!usable("fe80::1") && !usable("127.0.0.1") && usable("10.1.2.3"));
    }

    #[test]
    fn containers_addresses_from_their_interfaces() {
        let config = json!({"net0": "name=eth0,bridge=vmbr0,hwaddr=BC:24:11:20:02:01,ip=192.0.2.62/24,type=veth"});
        let old_style = json!([{"name": "lo", "hwaddr": "00:00:00:00:00:00", "inet": "127.0.0.1/8"},
                                {"name": "eth0", "hwaddr": "bc:24:11:20:02:01", "inet": "192.0.2.62/24", "inet6": "fe80::be24:11ff:fe20:201/64"}]);
        let mut v = Map::new();
        add_addresses(
            "proxmox_",
            config.as_object().unwrap(),
            &lxc_as_agent(&old_style),
            &mut v,
        );
        assert_eq!(v["proxmox_ip_address"], json!("192.0.2.62"));
        assert_eq!(
            lxc_interfaces(&old_style)[1],
            json!({"name": "eth0", "hwaddr": "bc:24:11:20:02:01", "inet": "192.0.2.62/24", "inet6": "fe80::be24:11ff:fe20:201/64"})
        );
    }

    #[test]
    fn node_address_as_community_picks_it() {
        let net = json!([
            {"iface": "vmbr1", "active": 1, "address": "10.0.0.2", "gateway": "10.0.0.1"},
            {"iface": "eno1", "active": 1},
            {"iface": "vmbr0", "active": 1, "address": "192.0.2.11", "gateway": "192.0.2.1"},
        ]);
        assert_eq!(node_address(&net), json!("192.0.2.11"));
        assert_eq!(node_address(&json!([])), Value::Null);
    }

    #[test]
    fn only_running_vms_need_their_status_read() {
        assert!(needs_status_read(&item()));
        let mut stopped = item();
        stopped.status = "stopped".into();
        assert!(!needs_status_read(&stopped));
        let mut ct = item();
        ct.kind = "lxc".into();
        assert!(!needs_status_read(&ct));
        let mut v = Map::new();
        add_status(
            "proxmox_",
            "qemu",
            &json!({"status": "stopped", "qmpstatus": "stopped"}),
            &mut v,
        );
        assert_eq!(
            Value::Object(v),
            json!({"proxmox_status": "stopped", "proxmox_qmpstatus": "stopped"})
        );
    }

    #[test]
    fn snapshot_names() {
        assert_eq!(
            snapshots(&json!([{"name": "a"}, {"name": "current"}])),
            vec![json!("a")]
        );
    }
}
