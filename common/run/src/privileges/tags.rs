//! The cluster's tag rules as `GET /cluster/options` shows them to the caller, so the
//! pre-write check predicts `403 Permission check failed (/, Sys.Modify for modifying tag
//! '<tag>')` (pve-guest-common `GuestHelpers.pm` `assert_tag_permissions`).
//!
//! Every user gets `allowed-tags` (`get_allowed_tags`: the tags it may use, registered
//! ones left out); only with `Sys.Audit` on `/` does the answer hold `user-tag-access` and
//! `registered-tags`, which say whether any other tag is free to use. Without them a tag
//! outside `allowed-tags` may still be allowed (the default `user-allow=free`), so it is
//! not refused here: PVE decides.

use std::collections::BTreeSet;

use serde_json::Value;

/// What the caller may know of datacenter.cfg's tag rules.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TagRules {
    /// `allowed-tags`: the tags `get_allowed_tags` lets the caller use.
    allowed: BTreeSet<String>,
    /// `registered-tags`, when the answer shows the whole config.
    registered: Option<BTreeSet<String>>,
    /// Whether `user-allow` is `free` (its default), when the answer shows it.
    free: Option<bool>,
}

/// A list option as PVE answers it (an array) or as written (`a;b`).
fn list(v: Option<&Value>) -> BTreeSet<String> {
    match v {
        Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).map(str::to_string).collect(),
        Some(Value::String(s)) => s.split(';').filter(|t| !t.is_empty()).map(str::to_string).collect(),
        _ => BTreeSet::new(),
    }
}

impl TagRules {
    /// From the data of `GET /cluster/options`; `whole_config`: the caller holds
    /// `Sys.Audit` on `/`, so absent options are at their defaults.
    pub fn from_options(data: &Value, whole_config: bool) -> TagRules {
        let allowed = list(data.get("allowed-tags"));
        if !whole_config {
            return TagRules {
                allowed,
                ..TagRules::default()
            };
        }
        let access = data.get("user-tag-access");
        let user_allow = match access {
            Some(Value::Object(m)) => m.get("user-allow").and_then(Value::as_str).map(str::to_string),
            Some(Value::String(s)) => s
                .split(',')
                .find_map(|p| p.strip_prefix("user-allow="))
                .map(str::to_string),
            _ => None,
        };
        TagRules {
            allowed,
            registered: Some(list(data.get("registered-tags"))),
            free: Some(user_allow.as_deref().is_none_or(|u| u == "free")),
        }
    }

    /// Whether a caller without `Sys.Modify` on `/` may add or remove `tag`; true when
    /// the rules shown cannot tell.
    pub fn allows(&self, tag: &str) -> bool {
        if self.registered.as_ref().is_some_and(|r| r.contains(tag)) {
            return false;
        }
        self.free != Some(false) || self.allowed.contains(tag)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_whole_config_decides_each_tag() {
        let listed = TagRules::from_options(
            &json!({"user-tag-access": {"user-allow": "list", "user-allow-list": ["web"]},
                    "registered-tags": ["prod"], "allowed-tags": ["web"]}),
            true,
        );
        assert!(listed.allows("web"));
        assert!(!listed.allows("other"), "not in the list");
        assert!(!listed.allows("prod"), "registered");
        let free = TagRules::from_options(&json!({"registered-tags": "prod", "allowed-tags": []}), true);
        assert!(free.allows("anything"), "user-allow defaults to free");
        assert!(!free.allows("prod"));
    }

    #[test]
    fn without_the_whole_config_only_allowed_tags_are_known_and_nothing_is_refused() {
        let partial = TagRules::from_options(&json!({"allowed-tags": ["web"]}), false);
        assert!(partial.allows("web"));
        assert!(partial.allows("other"), "may be free: PVE decides");
    }
}
