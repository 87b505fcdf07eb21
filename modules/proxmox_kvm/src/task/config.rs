//! From the task's options to the VM config keys PVE expects (community.proxmox 1.6
//! §2.7): booleans as 0/1, dict options flattened into numbered keys, `efidisk0` and
//! `tpmstate0` rendered, lists joined, `sshkeys` URL-encoded, `smbios` as `smbios1`.
//!
//! Pure: no API calls. Part of reading the task ([`super::KvmTask::read`]): only config
//! keys come out; the options that steer the run are read in [`super`].

use std::collections::BTreeMap;

use ferrox_ansible::options::Reader;
use ferrox_pve_rules::propstring::keys::Accepts;
use ferrox_pve_rules::propstring::versions::{self, Needs, Versioned};
use ferrox_pve_rules::propstring::{self, formats, keys};
use serde_json::Value;

/// Wanted config, key -> value as sent to PVE.
pub(crate) type Config = BTreeMap<String, String>;

/// Options that map onto exactly one config key (the option's declared type says how
/// its value is written: a bool as 0/1).
const SIMPLE: &[(&str, &str)] = &[
    ("acpi", "acpi"),
    ("args", "args"),
    ("autostart", "autostart"),
    ("balloon", "balloon"),
    ("bios", "bios"),
    ("boot", "boot"),
    ("bootdisk", "bootdisk"),
    ("cicustom", "cicustom"),
    ("cipassword", "cipassword"),
    ("citype", "citype"),
    ("ciupgrade", "ciupgrade"),
    ("ciuser", "ciuser"),
    ("cores", "cores"),
    ("cpu", "cpu"),
    ("cpulimit", "cpulimit"),
    ("cpuunits", "cpuunits"),
    ("description", "description"),
    ("freeze", "freeze"),
    ("hookscript", "hookscript"),
    ("hotplug", "hotplug"),
    ("hugepages", "hugepages"),
    ("keyboard", "keyboard"),
    ("kvm", "kvm"),
    ("localtime", "localtime"),
    ("lock", "lock"),
    ("machine", "machine"),
    ("memory", "memory"),
    ("migrate_downtime", "migrate_downtime"),
    ("migrate_speed", "migrate_speed"),
    ("name", "name"),
    ("numa_enabled", "numa"),
    ("onboot", "onboot"),
    ("ostype", "ostype"),
    ("protection", "protection"),
    ("reboot", "reboot"),
    ("rng0", "rng0"),
    ("scsihw", "scsihw"),
    ("shares", "shares"),
    ("smbios", "smbios1"),
    ("sockets", "sockets"),
    ("startdate", "startdate"),
    ("startup", "startup"),
    ("tablet", "tablet"),
    ("tdf", "tdf"),
    ("template", "template"),
    ("vcpus", "vcpus"),
    ("vga", "vga"),
    ("watchdog", "watchdog"),
    ("allow_ksm", "allow-ksm"),
    ("spice_enhancements", "spice_enhancements"),
    ("affinity", "affinity"),
    ("arch", "arch"),
    ("keephugepages", "keephugepages"),
    ("vmgenid", "vmgenid"),
    ("vmstatestorage", "vmstatestorage"),
];

/// Config keys set by options that are not in [`SIMPLE`] or [`NUMBERED`] (or that PVE
/// spells another way: `cdrom` is `ide2`, `smp` is `sockets`).
const OTHER_OPTIONS: &[(&str, &str)] = &[
    ("agent", "agent"),
    ("efidisk0", "efidisk0"),
    ("tpmstate0", "tpmstate0"),
    ("nameserver", "nameservers"),
    ("searchdomain", "searchdomains"),
    ("tags", "tags"),
    ("sshkeys", "sshkeys"),
    ("cdrom", "ide"),
    ("smp", "sockets"),
];

/// The parameters of PVE's create and config calls that are not config keys, and the
/// option that sends each (`None`: no place in a task, the reason in `extra_config`'s
/// docs). A test holds this list to the schema's.
pub(crate) const REQUEST_OPTIONS: &[(&str, Option<&str>)] = &[
    ("archive", Some("archive")),
    ("background_delay", None),
    ("bwlimit", Some("bwlimit")),
    ("delete", Some("delete")),
    ("digest", Some("digest")),
    ("force", Some("force")),
    ("ha-managed", Some("ha_managed")),
    ("import-working-storage", Some("import_working_storage")),
    ("live-restore", Some("live_restore")),
    ("node", Some("node")),
    ("pool", Some("pool")),
    ("revert", Some("revert")),
    ("skiplock", Some("skiplock")),
    ("start", Some("state")),
    ("storage", Some("storage")),
    ("unique", Some("unique")),
    ("vmid", Some("vmid")),
];

/// The option that sets config key `key` (`cores` -> `cores`, `net3` -> `net`,
/// `smbios1` -> `smbios`), if the module has one; `unusedN` belong to proxmox_disk.
pub(crate) fn option_for_key(key: &str) -> Option<&'static str> {
    if let Some((option, _)) = SIMPLE.iter().find(|(_, k)| *k == key) {
        return Some(option);
    }
    if let Some((_, option)) = OTHER_OPTIONS.iter().find(|(k, _)| *k == key) {
        return Some(option);
    }
    let (prefix, index) = propstring::split_indexed(key);
    index?;
    if prefix == "unused" {
        return Some("ferrox.proxmox.proxmox_disk");
    }
    NUMBERED
        .iter()
        .find(|(_, p, _)| *p == prefix)
        .map(|(option, _, _)| *option)
}

/// Dict options flattened into numbered keys: option, key prefix, highest index
/// (PVE's own ranges from `propstring` take precedence).
pub(crate) const NUMBERED: &[(&str, &str, u32)] = &[
    ("audio", "audio", 0),
    ("hostpci", "hostpci", 15),
    ("ide", "ide", 3),
    ("ipconfig", "ipconfig", 31),
    ("net", "net", 31),
    ("numa", "numa", 7),
    ("parallel", "parallel", 2),
    ("sata", "sata", 5),
    ("scsi", "scsi", 30),
    ("serial", "serial", 3),
    ("usb", "usb", 29),
    ("virtio", "virtio", 15),
    ("virtiofs", "virtiofs", 9),
];

/// The config keys the task asks for, and those of their keys only the node that parses
/// them decides ([`versions`]: newer than the schema, or brought by a later release).
pub(crate) fn config(p: &Reader) -> Result<(Config, Vec<Versioned>), String> {
    let mut out = Config::new();
    let mut newer = Vec::new();
    for (option, key) in SIMPLE {
        let Some(text) = p.config_text(option) else { continue };
        check_property_string(option, key, &text, &mut newer)?;
        out.insert((*key).to_string(), text);
    }
    if let Some(agent) = p.str("agent") {
        let value = agent_value(agent);
        check_property_string("agent", "agent", &value, &mut newer)?;
        out.insert("agent".into(), value);
    }
    for (option, prefix, max) in NUMBERED {
        if let Some(map) = p.dict(option) {
            for (key, value) in map {
                check_numbered_key(option, prefix, propstring::max_index(prefix).unwrap_or(*max), key)?;
                match value {
                    Value::Null => continue,
                    Value::Object(_) | Value::Array(_) => {
                        return Err(format!(
                        "{option}.{key} must be a PVE property string like the examples of option {option}, got a {}",
                        if value.is_object() { "dict" } else { "list" }
                    ))
                    }
                    other => {
                        let text = scalar_text(other);
                        check_property_string(option, key, &text, &mut newer)?;
                        out.insert(key.clone(), text)
                    }
                };
            }
        }
    }
    if let Some(extra) = p.dict("extra_config") {
        for (key, value) in extra {
            if let Some(text) = extra_value(key, value, &mut newer)? {
                out.insert(key.clone(), text);
            }
        }
    }
    if let Some(efi) = p.sub("efidisk0") {
        out.insert("efidisk0".into(), efidisk(&efi)?);
    }
    if let Some(tpm) = p.sub("tpmstate0") {
        let storage = tpm
            .non_empty("storage")
            .ok_or("tpmstate0.storage is required: name the storage to allocate the TPM state on")?;
        let version = tpm.str_or_default("version");
        out.insert("tpmstate0".into(), format!("{storage}:1,version=v{version}"));
    }
    for (option, key) in [("nameservers", "nameserver"), ("searchdomains", "searchdomain")] {
        if let Some(items) = p.strings(option).filter(|l| !l.is_empty()) {
            out.insert(key.into(), items.join(" "));
        }
    }
    if let Some(tags) = p.strings("tags").filter(|l| !l.is_empty()) {
        for tag in &tags {
            if !valid_tag(tag) {
                return Err(format!("{tag} is not a valid tag"));
            }
        }
        out.insert("tags".into(), tags.join(";"));
    }
    if let Some(keys) = p.str("sshkeys") {
        out.insert("sshkeys".into(), url_encode(keys));
    }
    Ok((out, newer))
}

/// A value of a property-string key must parse in PVE's format for that key; the
/// message names the option, the key and the bad field. Its sub-keys the schema does
/// not know, or a later release brought, go to `newer`, for the node to decide.
fn check_property_string(option: &str, key: &str, value: &str, newer: &mut Vec<Versioned>) -> Result<(), String> {
    let Some(f) = formats::for_config_key(key) else {
        return Ok(());
    };
    let at = if option == key {
        key.to_string()
    } else {
        format!("{option}.{key}")
    };
    propstring::parse_keeping_unknown(value, f).map_err(|e| format!("{at}: {e}"))?;
    newer.extend(versions::sub_keys(&at, key, value, f));
    Ok(())
}

fn bool_01(b: bool) -> String {
    if b { "1" } else { "0" }.to_string()
}

fn scalar_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Bool(b) => bool_01(*b),
        other => other.to_string(),
    }
}

/// `agent`: a boolean word becomes 0/1, anything else is a property string.
fn agent_value(text: &str) -> String {
    match text.to_ascii_lowercase().as_str() {
        "yes" | "on" | "1" | "true" | "t" | "y" => "1".into(),
        "no" | "off" | "0" | "false" | "f" | "n" => "0".into(),
        _ => text.to_string(),
    }
}

fn check_numbered_key(option: &str, prefix: &str, max: u32, key: &str) -> Result<(), String> {
    let index = key.strip_prefix(prefix).and_then(|n| n.parse::<u32>().ok());
    match index {
        Some(n) if n <= max && key == format!("{prefix}{n}") => Ok(()),
        _ => Err(format!(
            "{option}: '{key}' is not a PVE config key; use {prefix}0{} as keys",
            if max > 0 {
                format!(" to {prefix}{max}")
            } else {
                String::new()
            }
        )),
    }
}

/// One `extra_config` entry as sent to PVE (`None`: a null value, nothing to set),
/// checked against the schema: the key must be one no option sets, the value must be in
/// the key's format; a key (or sub-key) the schema does not know goes to `newer`, for
/// the node to decide.
fn extra_value(key: &str, value: &Value, newer: &mut Vec<Versioned>) -> Result<Option<String>, String> {
    if let Some(option) = option_for_key(key) {
        return Err(if option.contains('.') {
            format!("extra_config: {key} is not set here; unused disks are managed with {option}")
        } else {
            format!("extra_config: {key} has its own option; use {option} instead")
        });
    }
    if let Some((_, option)) = REQUEST_OPTIONS.iter().find(|(param, _)| *param == key) {
        return Err(match option {
            Some(option) => format!("extra_config: {key} is not a VM config key but a parameter of PVE's call; use the option {option}"),
            None => format!("extra_config: {key} is not a VM config key but a parameter of PVE's call, which this module does not send"),
        });
    }
    let Some(schema) = keys::config_key(key) else {
        return unknown_extra_value(key, value, newer);
    };
    let text = match value {
        Value::Null => return Ok(None),
        Value::Object(_) | Value::Array(_) => {
            return Err(format!(
                "extra_config.{key} must be a value in PVE's format {}, got a {}",
                schema.typetext,
                if value.is_object() { "dict" } else { "list" }
            ))
        }
        Value::Bool(b) => bool_01(*b),
        other => scalar_text(other),
    };
    let checked = match schema.accepts {
        Accepts::PropString(f) => {
            newer.extend(versions::sub_keys(&format!("extra_config.{key}"), key, &text, f));
            propstring::parse_keeping_unknown(&text, f).map(|_| ())
        }
        _ => keys::check(schema, &text),
    };
    checked.map_err(|e| format!("extra_config.{key}: {e}; PVE's format for {key} is {}", schema.typetext))?;
    Ok(Some(text))
}

/// An `extra_config` key the schema does not know: sent as given, for the node to
/// decide ([`versions`]).
fn unknown_extra_value(key: &str, value: &Value, newer: &mut Vec<Versioned>) -> Result<Option<String>, String> {
    let text = match value {
        Value::Null => return Ok(None),
        Value::Object(_) | Value::Array(_) => {
            return Err(format!(
                "extra_config.{key} must be a plain value (text, number or boolean), got a {}",
                if value.is_object() { "dict" } else { "list" }
            ))
        }
        Value::Bool(b) => bool_01(*b),
        other => scalar_text(other),
    };
    newer.push(Versioned {
        at: "extra_config".into(),
        param: key.to_string(),
        key: key.to_string(),
        needs: Needs::Unknown {
            hint: "not a VM config key in the schema".into(),
        },
    });
    Ok(Some(text))
}

/// `efidisk0` as PVE's allocation syntax; unset sub-options are left out.
fn efidisk(efi: &Reader) -> Result<String, String> {
    let storage = efi
        .non_empty("storage")
        .ok_or("efidisk0.storage is required: name the storage to allocate the EFI disk on")?;
    let mut parts = vec![format!("{storage}:1")];
    if let Some(f) = efi.str("format") {
        parts.push(format!("format={f}"));
    }
    if let Some(t) = efi.str("efitype") {
        parts.push(format!("efitype={t}"));
    }
    if let Some(k) = efi.bool("pre_enrolled_keys") {
        parts.push(format!("pre-enrolled-keys={}", bool_01(k)));
    }
    if let Some(cert) = efi.str("ms_cert") {
        parts.push(format!("ms-cert={cert}"));
    }
    Ok(parts.join(","))
}

fn valid_tag(tag: &str) -> bool {
    let mut chars = tag.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphanumeric() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || "_-+.".contains(c))
}

/// Every byte except `A-Z a-z 0-9 _ . - ~` as `%XX`, as PVE stores `sshkeys`.
pub(crate) fn url_encode(text: &str) -> String {
    let mut out = String::new();
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"_.-~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The inverse of [`url_encode`] (also of other encoders' `+`-free output).
pub(crate) fn url_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok();
            if let Some(b) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Map};

    /// The config keys of a task with these options (the others unset).
    fn read(v: Value) -> Result<(Config, Vec<Versioned>), String> {
        let opts = crate::options::all();
        let mut map: Map<String, Value> = opts.iter().map(|o| (o.name.to_string(), Value::Null)).collect();
        for (k, val) in v.as_object().unwrap() {
            map.insert(k.clone(), val.clone());
        }
        config(&Reader::new(ferrox_ansible::options::Params::new(map), &opts))
    }

    fn config_of(v: Value) -> Result<Config, String> {
        read(v).map(|(c, _)| c)
    }

    /// (where, key, the release it needs or "unknown") of each key the cluster decides.
    fn newer_of(v: Value) -> Vec<(String, String, String)> {
        let (_, newer) = read(v).unwrap();
        let needs = |n: &Needs| match n {
            Needs::Release(i) => i.pve.to_string(),
            Needs::Unknown { .. } => "unknown".to_string(),
        };
        newer
            .iter()
            .map(|v| (v.at.clone(), v.key.clone(), needs(&v.needs)))
            .collect()
    }

    fn triple(at: &str, key: &str, needs: &str) -> (String, String, String) {
        (at.into(), key.into(), needs.into())
    }

    #[test]
    fn keys_newer_than_the_schema_are_left_to_the_clusters_release() {
        let task = json!({
            "net": {"net0": "virtio,bridge=vmbr0,host-tunnel=0", "net1": "virtio,bridge=vmbr0,speed=10"},
            "cpu": "x86-64-v2-AES,level=30",
            "agent": "1,freeze-fs-on-backup=0",
            "extra_config": {"nosuchkey": 1, "ivshmem": "size=32,color=red"},
        });
        let c = config_of(task.clone()).unwrap();
        assert_eq!(c["net0"], "virtio,bridge=vmbr0,host-tunnel=0");
        assert_eq!(
            (c["cpu"].as_str(), c["nosuchkey"].as_str()),
            ("x86-64-v2-AES,level=30", "1")
        );
        assert_eq!(
            newer_of(task),
            [
                triple("cpu", "level", "9.1.16"),
                triple("net.net0", "host-tunnel", "9.2.4"),
                triple("net.net1", "speed", "unknown"),
                triple("extra_config", "nosuchkey", "unknown"),
                triple("extra_config.ivshmem", "color", "unknown"),
            ]
        );
        assert!(newer_of(json!({"net": {"net0": "virtio,bridge=vmbr0"}})).is_empty());
    }

    #[test]
    fn options_become_config_keys() {
        let c = config_of(json!({
            "name": "web01", "cores": 2, "onboot": true, "numa_enabled": false, "smbios": "manufacturer=X",
            "agent": "yes", "allow_ksm": true,
            "net": {"net0": "virtio,bridge=vmbr0"}, "scsi": {"scsi0": "local-lvm:8"},
            "nameservers": ["1.1.1.1", "9.9.9.9"], "tags": ["web", "Prod"],
            "efidisk0": {"storage": "local-lvm", "format": null, "efitype": "4m", "pre_enrolled_keys": true, "ms_cert": "2023k"},
            "tpmstate0": {"storage": "local-lvm", "version": "2.0"},
        }))
        .unwrap();
        assert_eq!(c["name"], "web01");
        assert_eq!(c["cores"], "2");
        assert_eq!(c["onboot"], "1");
        assert_eq!(c["numa"], "0");
        assert_eq!(c["smbios1"], "manufacturer=X");
        assert_eq!(c["agent"], "1");
        assert_eq!(c["allow-ksm"], "1");
        assert_eq!(c["net0"], "virtio,bridge=vmbr0");
        assert_eq!(c["scsi0"], "local-lvm:8");
        assert_eq!(c["nameserver"], "1.1.1.1 9.9.9.9");
        assert_eq!(c["tags"], "web;Prod");
        assert_eq!(
            c["efidisk0"],
            "local-lvm:1,efitype=4m,pre-enrolled-keys=1,ms-cert=2023k"
        );
        assert_eq!(c["tpmstate0"], "local-lvm:1,version=v2.0");
        assert!(!c.contains_key("memory"));
    }

    #[test]
    fn bad_input_names_the_option() {
        let e = config_of(json!({"net": {"eth0": "virtio"}})).unwrap_err();
        assert_eq!(e, "net: 'eth0' is not a PVE config key; use net0 to net31 as keys");
        let e = config_of(json!({"net": {"net0": "virtio,bridge=vmbr0,host-tunnel=maybe"}})).unwrap_err();
        assert!(
            e.starts_with("net.net0: invalid value 'maybe' for key 'host-tunnel'"),
            "{e}"
        );
        let e = config_of(json!({"scsi": {"scsi0": "local-lvm:8,cache=fast"}})).unwrap_err();
        assert!(e.starts_with("scsi.scsi0: invalid value 'fast' for key 'cache'"), "{e}");
        let e = config_of(json!({"tags": ["ok", "not ok"]})).unwrap_err();
        assert_eq!(e, "not ok is not a valid tag");
        let e = config_of(json!({"efidisk0": {"storage": null, "format": null, "efitype": "4m", "pre_enrolled_keys": null, "ms_cert": null}})).unwrap_err();
        assert!(e.starts_with("efidisk0.storage is required"));
        // An empty storage is refused like a missing one (AnsibleModule's `required`
        // only checks presence; PVE would be sent `:1,version=v2.0`).
        let e = config_of(json!({"tpmstate0": {"storage": "", "version": "2.0"}})).unwrap_err();
        assert_eq!(
            e,
            "tpmstate0.storage is required: name the storage to allocate the TPM state on"
        );
    }

    #[test]
    fn extra_config_is_checked_against_the_schema() {
        let c = config_of(json!({"extra_config": {"ivshmem": "size=32,name=lg", "amd-sev": null}})).unwrap();
        assert_eq!(c["ivshmem"], "size=32,name=lg");
        assert!(!c.contains_key("amd-sev"));
        let err = |extra: Value| config_of(json!({ "extra_config": extra })).unwrap_err();
        assert_eq!(
            err(json!({"ivshmem": "size=big"})),
            "extra_config.ivshmem: invalid value 'big' for key 'size': expected an integer; PVE's format for ivshmem is size=<integer> [,name=<string>]"
        );
        assert_eq!(
            err(json!({"nosuchkey": {"a": 1}})),
            "extra_config.nosuchkey must be a plain value (text, number or boolean), got a dict"
        );
        assert_eq!(
            err(json!({"cores": 4})),
            "extra_config: cores has its own option; use cores instead"
        );
        assert_eq!(
            err(json!({"net1": "virtio,bridge=vmbr0"})),
            "extra_config: net1 has its own option; use net instead"
        );
        assert_eq!(
            err(json!({"smbios1": "serial=x"})),
            "extra_config: smbios1 has its own option; use smbios instead"
        );
        assert_eq!(
            err(json!({"start": true})),
            "extra_config: start is not a VM config key but a parameter of PVE's call; use the option state"
        );
        assert!(err(json!({"unused0": "local-lvm:vm-1-disk-1"})).contains("ferrox.proxmox.proxmox_disk"));
        assert!(err(json!({"intel-tdx": {"type": "tdx"}}))
            .starts_with("extra_config.intel-tdx must be a value in PVE's format [type=]<tdx-type>"));
    }

    #[test]
    fn sshkeys_round_trip() {
        let keys = "ssh-ed25519 AAAA+b/c= me@host\nssh-rsa BBB you@x";
        let enc = url_encode(keys);
        assert_eq!(&enc[..22], "ssh-ed25519%20AAAA%2Bb");
        assert_eq!(url_decode(&enc), keys);
    }
}
