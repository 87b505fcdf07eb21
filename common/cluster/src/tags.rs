//! Guest tags compared as the cluster stores them. PVE de-duplicates tags on every
//! write (`get_unique_tags`): lower-cased unless the datacenter's `tag-style` has
//! `case-sensitive=1`, where `Web` and `web` are two tags. That setting is read
//! (`GET /cluster/options`, open to every user since PVE 7.3) only when two tag lists
//! differ in case alone, so a task whose tags match, or differ anyway, costs no call.

use std::cell::OnceCell;
use std::collections::BTreeSet;
use std::rc::Rc;

use serde_json::Value;

use ferrox_pve_client::client::Client;

use crate::options::ClusterOptions;

/// Tags as PVE's `split_list` reads a tag list (`;`, `,` or whitespace between).
pub fn split(text: &str) -> impl Iterator<Item = &str> {
    text.split([';', ',', ' ', '\t', '\n']).filter(|t| !t.is_empty())
}

/// How the cluster treats the case of tags: read once per run, when first needed.
#[derive(Clone)]
pub struct TagCase<'a> {
    options: Option<ClusterOptions<'a>>,
    read: Rc<OnceCell<Result<Rule, String>>>,
}

#[derive(Clone, Debug, PartialEq)]
struct Rule {
    sensitive: bool,
    /// Why the setting could not be read and case-insensitive tags were assumed.
    warning: Option<String>,
}

impl<'a> TagCase<'a> {
    /// The cluster's setting, read through `client` when a comparison needs it.
    pub fn of_cluster(client: &'a Client) -> TagCase<'a> {
        TagCase::of_options(ClusterOptions::of(client))
    }

    /// The cluster's setting, from a read of `/cluster/options` shared with others.
    pub fn of_options(options: ClusterOptions<'a>) -> TagCase<'a> {
        TagCase {
            options: Some(options),
            read: Rc::default(),
        }
    }

    /// A known setting (unit tests, and where no cluster is at hand).
    pub fn known(sensitive: bool) -> TagCase<'static> {
        let read = OnceCell::new();
        let _ = read.set(Ok(Rule {
            sensitive,
            warning: None,
        }));
        TagCase {
            options: None,
            read: Rc::new(read),
        }
    }

    /// Whether the cluster keeps tags case-sensitive. A refused read (PVE before 7.3
    /// asks `Sys.Audit` on `/`) is taken as PVE's default, case-insensitive, with a
    /// warning; any other failure is an error naming the call.
    pub fn sensitive(&self) -> Result<bool, String> {
        let rule = self.read.get_or_init(|| match &self.options {
            Some(options) => read(options),
            None => Ok(Rule {
                sensitive: false,
                warning: None,
            }),
        });
        rule.as_ref().map(|r| r.sensitive).map_err(Clone::clone)
    }

    /// The warning of a refused read, if the setting was needed and could not be read.
    pub fn warning(&self) -> Option<String> {
        self.read
            .get()
            .and_then(|r| r.as_ref().ok())
            .and_then(|r| r.warning.clone())
    }

    /// Whether `current` (the VM's tags) already are the tags `wanted`: the same set of
    /// tags, compared with the case as the cluster compares it.
    pub fn same(&self, current: &str, wanted: &str) -> Result<bool, String> {
        let exact = |t: &str| split(t).map(str::to_string).collect::<BTreeSet<_>>();
        let folded = |t: &str| split(t).map(str::to_lowercase).collect::<BTreeSet<_>>();
        if exact(current) == exact(wanted) {
            return Ok(true);
        }
        if folded(current) != folded(wanted) {
            return Ok(false);
        }
        self.sensitive().map(|s| !s)
    }
}

fn read(options: &ClusterOptions<'_>) -> Result<Rule, String> {
    let client = options.client();
    match options.get() {
        Ok(options) => Ok(Rule { sensitive: case_sensitive(&options["tag-style"]), warning: None }),
        Err(e) if e.status == Some(403) => Ok(Rule {
            sensitive: false,
            warning: Some(format!(
                "Tags that differ only in case were compared case-insensitively (PVE's default): the datacenter's tag-style could not be read ({e}). Grant Sys.Audit on / to {} so a cluster set to case-sensitive tags is compared as it stores them.",
                client.identity()
            )),
        }),
        Err(e) => Err(format!("Unable to read the datacenter's tag-style (GET /cluster/options) to compare tags: {e}")),
    }
}

/// `case-sensitive` of a `tag-style`, as PVE answers it (parsed, `{"case-sensitive": 1}`)
/// or as a property string.
fn case_sensitive(style: &Value) -> bool {
    let truthy = |v: &str| matches!(v.to_ascii_lowercase().as_str(), "1" | "true" | "yes" | "on");
    match style {
        Value::Object(m) => match m.get("case-sensitive") {
            Some(Value::Bool(b)) => *b,
            Some(Value::Number(n)) => n.as_f64().is_some_and(|n| n != 0.0),
            Some(Value::String(s)) => truthy(s),
            _ => false,
        },
        Value::String(s) => s
            .split(',')
            .any(|p| p.strip_prefix("case-sensitive=").is_some_and(truthy)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_same_tags_in_any_order_or_spelling_of_the_list_are_the_same() {
        for sensitive in [false, true] {
            let case = TagCase::known(sensitive);
            assert!(case.same("prod;web", "web,prod").unwrap());
            assert!(case.same("Web;prod", "prod Web").unwrap());
            assert!(!case.same("prod;web", "prod;db").unwrap());
            assert!(!case.same("prod", "prod;web").unwrap());
        }
    }

    #[test]
    fn tags_differing_in_case_alone_are_the_same_unless_the_cluster_is_case_sensitive() {
        assert!(TagCase::known(false).same("prod;web", "Web;prod").unwrap());
        assert!(!TagCase::known(true).same("Web;prod", "web;prod").unwrap());
        // PVE keeps one of `Web` and `web` unless case-sensitive.
        assert!(TagCase::known(false).same("web", "Web;web").unwrap());
    }

    #[test]
    fn the_setting_is_read_as_pve_answers_it() {
        assert!(case_sensitive(&json!({"case-sensitive": 1, "shape": "dense"})));
        assert!(case_sensitive(&json!({"case-sensitive": "true"})));
        assert!(case_sensitive(&json!("shape=full,case-sensitive=1")));
        assert!(!case_sensitive(&json!({"case-sensitive": 0})));
        assert!(!case_sensitive(&json!({"ordering": "config"})));
        assert!(!case_sensitive(&Value::Null), "no tag-style: PVE's default");
    }
}
