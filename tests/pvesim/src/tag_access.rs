//! Who may set which guest tags: datacenter.cfg's `user-tag-access` and `registered-tags`,
//! as pve-guest-common `src/PVE/GuestHelpers.pm` applies them (`get_allowed_tags`,
//! `assert_tag_permissions`). qemu-server checks them on every tag update and, since
//! 9.2.0, on create (`src/PVE/API2/Qemu.pm` `create_vm`, commit a929b3e0).

use crate::auth::{self, Identity};
use crate::error::{ApiError, ApiResult};
use crate::schema::formats::split_list;
use crate::state::Cluster;
use std::collections::{BTreeMap, BTreeSet};

/// `user-tag-access`'s `user-allow` (pve-cluster `PVE/DataCenterConfig.pm`, default `free`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum UserAllow {
    None,
    List,
    Existing,
    Free,
}

/// The tag rules of datacenter.cfg.
#[derive(Debug, Clone)]
struct TagAccess {
    user_allow: UserAllow,
    /// `user-tag-access`'s `user-allow-list` (`;`-separated).
    user_allow_list: Vec<String>,
    /// `registered-tags` (`;`-separated): only users with `Sys.Modify` on `/` may set them.
    registered: BTreeSet<String>,
}

impl TagAccess {
    fn of(c: &Cluster) -> TagAccess {
        let access = c.datacenter.get("user-tag-access").map(String::as_str).unwrap_or("");
        let mut user_allow = UserAllow::Free;
        let mut user_allow_list = Vec::new();
        for part in access.split(',') {
            match part.split_once('=') {
                Some(("user-allow", v)) => {
                    user_allow = match v {
                        "none" => UserAllow::None,
                        "list" => UserAllow::List,
                        "existing" => UserAllow::Existing,
                        _ => UserAllow::Free,
                    }
                }
                Some(("user-allow-list", v)) => {
                    user_allow_list = v.split(';').filter(|t| !t.is_empty()).map(str::to_string).collect()
                }
                _ => {}
            }
        }
        let registered = c
            .datacenter
            .get("registered-tags")
            .map(|r| r.split(';').filter(|t| !t.is_empty()).map(str::to_string).collect())
            .unwrap_or_default();
        TagAccess {
            user_allow,
            user_allow_list,
            registered,
        }
    }
}

/// `get_allowed_tags`: the tags `who` may use (`GET /cluster/options`' `allowed-tags`), the
/// registered ones, and whether any other tag is free to use.
pub fn allowed_tags(c: &Cluster, who: &Identity) -> (BTreeSet<String>, BTreeSet<String>, bool) {
    let privileged = auth::has(c, who, "/", "Sys.Modify");
    let rules = TagAccess::of(c);
    let mut allowed = BTreeSet::new();
    if rules.user_allow != UserAllow::None || privileged {
        allowed.extend(rules.user_allow_list.iter().cloned());
    }
    if matches!(rules.user_allow, UserAllow::Free | UserAllow::Existing) || privileged {
        for g in c.guests.values() {
            if !privileged && !auth::has(c, who, &format!("/vms/{}", g.vmid), "VM.Audit") {
                continue;
            }
            allowed.extend(g.conf.current.get("tags").map(|t| split_list(t)).unwrap_or_default());
        }
    }
    if privileged {
        allowed.extend(rules.registered.iter().cloned());
    } else {
        allowed.retain(|t| !rules.registered.contains(t));
    }
    (allowed, rules.registered, rules.user_allow == UserAllow::Free)
}

/// `assert_tag_permissions($vmid, $old, $new)` after its `VM.Config.Options` check: each
/// tag whose count differs between the old and the new value must be allowed, else
/// `403 Permission check failed (/, Sys.Modify for modifying tag '<tag>')`. Users with
/// `Sys.Modify` on `/` may set any tag.
pub fn assert_changes_allowed(c: &Cluster, who: &Identity, old: Option<&str>, new: Option<&str>) -> ApiResult<()> {
    if auth::has(c, who, "/", "Sys.Modify") {
        return Ok(());
    }
    let count = |v: Option<&str>| {
        let mut m: BTreeMap<String, usize> = BTreeMap::new();
        for t in split_list(v.unwrap_or("")) {
            *m.entry(t).or_default() += 1;
        }
        m
    };
    let (old, new) = (count(old), count(new));
    let changed: BTreeSet<String> = old
        .keys()
        .chain(new.keys())
        .filter(|t| old.get(*t) != new.get(*t))
        .cloned()
        .collect();
    if changed.is_empty() {
        return Ok(());
    }
    let (allowed, registered, free) = allowed_tags(c, who);
    match changed
        .into_iter()
        .find(|t| (!allowed.contains(t) && !free) || registered.contains(t))
    {
        Some(t) => Err(ApiError::forbidden("/", &format!("Sys.Modify for modifying tag '{t}'"))),
        None => Ok(()),
    }
}
