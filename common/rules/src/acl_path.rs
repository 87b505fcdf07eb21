//! ACL paths as pve-access-control accepts them (`AccessControl.pm`, PVE 9.1):
//! [`normalize_path`] (slashes collapsed, none trailing, one leading; only
//! `[[:alnum:]._/-]`), and [`check_path`], the paths an entry may be set on (the
//! `check_path` pattern list; removing an entry skips it, as `update_acl` does).

/// `normalize_path`: `None` for an empty path or one with other characters.
pub fn normalize_path(path: &str) -> Option<String> {
    if path.is_empty() {
        return None;
    }
    let mut p = String::new();
    for ch in path.chars() {
        if !(ch == '/' && p.ends_with('/')) {
            p.push(ch);
        }
    }
    if p.len() > 1 && p.ends_with('/') {
        p.pop();
    }
    if !p.starts_with('/') {
        p.insert(0, '/');
    }
    p.chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | '/'))
        .then_some(p)
}

fn word(s: &str, extra: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || extra.contains(c))
}

/// `check_path`: whether PVE lets an ACL entry be set on this (normalised) path.
pub fn check_path(path: &str) -> bool {
    let segs: Vec<&str> = path.split('/').skip(1).filter(|s| !s.is_empty()).collect();
    let id = |s: &str| word(s, ".-_");
    let alnum = |s: &str| word(s, "");
    match segs.as_slice() {
        [] => true,
        ["access"] | ["nodes"] | ["pool"] | ["sdn"] | ["storage"] | ["vms"] | ["mapping"] => true,
        ["access", "groups" | "realm"] => true,
        ["access", "groups" | "realm", name] => id(name),
        ["nodes", node] | ["storage", node] | ["mapping", node] => id(node),
        ["mapping", a, b] => id(a) && id(b),
        ["pool", rest @ ..] => rest.len() <= 3 && rest.iter().all(|s| id(s)),
        ["vms", vmid] => vmid.len() >= 3 && !vmid.starts_with('0') && vmid.chars().all(|c| c.is_ascii_digit()),
        ["sdn", "controllers" | "dns" | "fabrics" | "ipams" | "prefix-lists" | "route-maps" | "zones"] => true,
        ["sdn", "controllers", name] => word(name, "_-"),
        ["sdn", "dns" | "fabrics" | "ipams" | "prefix-lists" | "route-maps", name] => alnum(name),
        ["sdn", "zones", zone] => id(zone),
        ["sdn", "zones", zone, vnet] => id(zone) && id(vnet),
        ["sdn", "zones", zone, vnet, tag] => {
            id(zone)
                && id(vnet)
                && (1..=4).contains(&tag.len())
                && !tag.starts_with('0')
                && tag.chars().all(|c| c.is_ascii_digit())
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_as_pve_normalises_and_accepts_them() {
        assert_eq!(normalize_path("//vms//100/").as_deref(), Some("/vms/100"));
        assert_eq!(normalize_path("vms/100").as_deref(), Some("/vms/100"));
        assert_eq!(normalize_path("/").as_deref(), Some("/"));
        assert_eq!(normalize_path("/vms/1 0"), None);
        assert_eq!(normalize_path(""), None);
        for ok in [
            "/",
            "/vms",
            "/vms/100",
            "/storage/local-lvm",
            "/pool/prod",
            "/pool/a/b/c",
            "/access/groups/owners",
            "/nodes/pve1",
            "/sdn/zones/localnetwork/vmbr0/100",
            "/mapping/pci/gpu",
        ] {
            assert!(check_path(ok), "{ok}");
        }
        for bad in [
            "/vms/99",
            "/vms/0100",
            "/vm/100",
            "/pool/a/b/c/d",
            "/storage/a/b",
            "/sdn/zones/z/v/0",
        ] {
            assert!(!check_path(bad), "{bad}");
        }
    }
}
