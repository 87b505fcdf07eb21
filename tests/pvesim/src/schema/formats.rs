//! Named string formats of pve-common/qemu-server (`pve-vmid`, `dns-name`, ...).
//! Each check returns PVE's detail text (with its trailing newline) on failure; the
//! caller prefixes `invalid format - `. Formats not listed here are accepted.

use regex::Regex;
use std::sync::LazyLock;

macro_rules! re {
    ($name:ident, $pat:expr) => {
        static $name: LazyLock<Regex> = LazyLock::new(|| Regex::new($pat).unwrap());
    };
}

re!(NODE, r"^[a-zA-Z0-9]([a-zA-Z0-9\-]*[a-zA-Z0-9])?$");
re!(STORAGE_ID, r"(?i)^[a-z][a-z0-9\-_.]*[a-z0-9]$");
re!(CONFIGID, r"(?i)^[a-z][a-z0-9_-]+$");
re!(
    DNS,
    r"^[a-zA-Z0-9]([a-zA-Z0-9\-]*[a-zA-Z0-9])?(\.[a-zA-Z0-9]([a-zA-Z0-9\-]*[a-zA-Z0-9])?)*$"
);
re!(MAC, r"(?i)^[a-f0-9][02468ace](:[a-f0-9]{2}){5}$");
re!(TAG, r"(?i)^[a-z0-9_][a-z0-9_\-+.]*$");
re!(DISK_SIZE, r"^\d+(\.\d+)?[KMGT]?$");
re!(BRIDGE, r"^[-_.\w\d]+$");
re!(POOL, r"^[A-Za-z0-9\.\-_]+(?:/[A-Za-z0-9\.\-_]+){0,2}$");
re!(VOLID, r"(?i)^([a-z][a-z0-9\-_.]*[a-z0-9]):(.+)$");
re!(URLENC, r"^[-%a-zA-Z0-9_.!~*'()]*$");
re!(BOOTDISK, r"^(ide|sata|scsi|virtio|efidisk|tpmstate)\d+$");
re!(HOTPLUG, r"^(network|disk|cpu|memory|usb|cloudinit)$");
re!(VMID, r"^\d+$");
re!(LIST_SPLIT, r"[,;\s]+");
// The ids of `user.cfg`, each `m/^…$/` in Perl, whose `$` also matches before a final
// newline (`\n?\z` here): pve-access-control `src/PVE/Auth/Plugin.pm` `$user_regex`,
// `$realm_regex`, `$groupname_regex`; `src/PVE/AccessControl.pm` `$token_full_regex`,
// `verify_rolename`.
re!(USERID, r"^[^\s:/]+@[A-Za-z][A-Za-z0-9\.\-_]+\n?\z");
re!(
    TOKENID,
    r"^[^\s:/]+@[A-Za-z][A-Za-z0-9\.\-_]+![A-Za-z][A-Za-z0-9\.\-_]+\n?\z"
);
re!(GROUPID, r"^[A-Za-z0-9\.\-_]+\n?\z");

/// Split a `-list` value the way PVE does (`,`, `;` or whitespace).
pub fn split_list(v: &str) -> Vec<String> {
    LIST_SPLIT
        .split(v)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

pub fn check(format: &str, value: &str) -> Result<(), String> {
    match format {
        "pve-vmid" => ok_if(VMID.is_match(value), "value does not look like a valid VM ID\n".into()),
        "pve-node" => ok_if(
            NODE.is_match(value),
            "value does not look like a valid node name\n".into(),
        ),
        "pve-storage-id" => ok_if(
            STORAGE_ID.is_match(value),
            format!("storage ID '{value}' contains illegal characters\n"),
        ),
        // pve-storage's `verify_content`: the dir plugin's content types.
        "pve-storage-content" => ok_if(
            [
                "images", "rootdir", "vztmpl", "iso", "backup", "snippets", "none", "import",
            ]
            .contains(&value),
            format!("invalid content type '{value}'\n"),
        ),
        "pve-configid" => configid(value),
        "pve-configid-list" => {
            for id in split_list(value) {
                configid(&id)?;
            }
            Ok(())
        }
        "dns-name" => ok_if(
            DNS.is_match(value),
            "value does not look like a valid DNS name\n".into(),
        ),
        "mac-addr" => ok_if(
            MAC.is_match(value),
            "value does not look like a valid unicast MAC address\n".into(),
        ),
        "pve-tag-list" => {
            let tags: Vec<&str> = value.split([';', ',', ' ']).filter(|s| !s.is_empty()).collect();
            if tags.is_empty() {
                return Err("invalid tag format\n".into());
            }
            for t in tags {
                if !TAG.is_match(t) {
                    return Err(format!("invalid tag '{t}'\n"));
                }
            }
            Ok(())
        }
        "disk-size" => ok_if(DISK_SIZE.is_match(value), format!("unable to parse size '{value}'\n")),
        "pve-userid" => verify_username(value),
        "pve-tokenid" => ok_if(
            TOKENID.is_match(value),
            format!("value '{value}' does not look like a valid token ID\n"),
        ),
        "pve-groupid" => ok_if(
            GROUPID.is_match(value),
            format!("group name '{value}' contains invalid characters\n"),
        ),
        "pve-roleid" => ok_if(
            GROUPID.is_match(value),
            format!("role name '{value}' contains invalid characters\n"),
        ),
        "pve-userid-list" | "pve-tokenid-list" | "pve-groupid-list" | "pve-roleid-list" => {
            let one = format.trim_end_matches("-list");
            split_list(value).iter().try_for_each(|v| check(one, v))
        }
        "pve-bridge-id" => ok_if(BRIDGE.is_match(value), format!("invalid bridge ID '{value}'\n")),
        // pve-access-control's verify_poolname: up to three levels `a/b/c` (PVE 8.1+).
        "pve-poolid" if value.split('/').count() > 3 => {
            Err(format!("pool name '{value}' nested too deeply (max levels = 3)\n"))
        }
        "pve-poolid" => ok_if(
            POOL.is_match(value),
            format!("pool name '{value}' contains invalid characters\n"),
        ),
        "pve-volume-id" => ok_if(VOLID.is_match(value), format!("unable to parse volume ID '{value}'\n")),
        "pve-volume-id-or-qm-path" | "pve-volume-id-or-absolute-path" => ok_if(
            value == "none" || value == "cdrom" || value.starts_with('/') || VOLID.is_match(value),
            format!("unable to parse volume ID '{value}'\n"),
        ),
        "urlencoded" => ok_if(URLENC.is_match(value), format!("invalid urlencoded string: {value}\n")),
        "pve-qm-bootdisk" => ok_if(BOOTDISK.is_match(value), format!("invalid boot disk '{value}'\n")),
        "pve-hotplug-features" => {
            if value == "0" || value == "1" {
                return Ok(());
            }
            for f in value.split(',') {
                if !HOTPLUG.is_match(f) {
                    return Err(format!("invalid hotplug feature '{f}'\n"));
                }
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// pve-access-control's `verify_username`: 3 to 64 characters (Perl's `length` of the
/// decoded text), `name@realm`; a false value (`0`) counts as empty.
pub fn verify_username(value: &str) -> Result<(), String> {
    let value = if value == "0" { "" } else { value };
    let len = value.chars().count();
    if len < 3 {
        return Err(format!("user name '{value}' is too short\n"));
    }
    if len > 64 {
        return Err(format!("user name '{value}' is too long ({len} > 64)\n"));
    }
    ok_if(
        USERID.is_match(value),
        format!("value '{value}' does not look like a valid user name\n"),
    )
}

fn configid(id: &str) -> Result<(), String> {
    ok_if(CONFIGID.is_match(id), format!("invalid configuration ID '{id}'\n"))
}

fn ok_if(ok: bool, msg: String) -> Result<(), String> {
    if ok {
        Ok(())
    } else {
        Err(msg)
    }
}

pub fn is_volid(v: &str) -> bool {
    VOLID.is_match(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert!(check("dns-name", "web01.example.com").is_ok());
        assert_eq!(
            check("dns-name", "web_01").unwrap_err(),
            "value does not look like a valid DNS name\n"
        );
        assert!(check("mac-addr", "BC:24:11:AA:BB:CC").is_ok());
        assert!(check("mac-addr", "01:24:11:AA:BB:CC").is_err(), "multicast bit set");
        assert_eq!(
            check("pve-configid-list", "net0,1abc").unwrap_err(),
            "invalid configuration ID '1abc'\n"
        );
        assert!(check("pve-configid-list", "net0; scsi1 ide2").is_ok());
        assert!(check("pve-tag-list", "a;B;c-d").is_ok());
        assert!(check("pve-tag-list", "a;b!").is_err());
        assert!(check("pve-storage-id", "local-lvm").is_ok());
        assert!(check("pve-storage-id", "1local").is_err());
        assert!(check("pve-storage-content", "import").is_ok());
        assert_eq!(
            check("pve-storage-content", "isos"),
            Err("invalid content type 'isos'\n".into())
        );
        assert!(check("pve-hotplug-features", "network,disk").is_ok());
        assert!(check("pve-hotplug-features", "network,foo").is_err());
        assert!(check("some-unknown-format", "anything").is_ok());
    }

    #[test]
    fn user_cfg_ids_read_as_pve_access_control_reads_them() {
        assert_eq!(check("pve-userid", "0"), Err("user name '' is too short\n".into()));
        assert_eq!(check("pve-userid", "ab"), Err("user name 'ab' is too short\n".into()));
        let long = format!("{}@pve", "ä".repeat(31));
        assert!(check("pve-userid", &long).is_ok(), "66 bytes, 35 characters");
        assert_eq!(
            check("pve-userid", "jdoe@a"),
            Err("value 'jdoe@a' does not look like a valid user name\n".into())
        );
        assert!(
            check("pve-userid", "jdoe@pve\n").is_ok(),
            "Perl's `$` before a final newline"
        );
        assert!(check("pve-userid", "jdoe@pve\n\n").is_err());
        assert!(check("pve-tokenid", "jdoe@pve!t1").is_ok());
        assert_eq!(
            check("pve-tokenid", "jdoe@pve!1t"),
            Err("value 'jdoe@pve!1t' does not look like a valid token ID\n".into())
        );
        assert_eq!(
            check("pve-groupid", "a b"),
            Err("group name 'a b' contains invalid characters\n".into())
        );
        assert_eq!(
            check("pve-roleid-list", "PVEAuditor,Bad!"),
            Err("role name 'Bad!' contains invalid characters\n".into())
        );
        assert!(check("pve-userid-list", "").is_ok(), "an empty list is allowed");
    }

    #[test]
    fn list_split() {
        assert_eq!(split_list("a, b;c  d"), vec!["a", "b", "c", "d"]);
    }
}
