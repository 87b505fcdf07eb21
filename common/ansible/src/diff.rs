//! Before/after for `--diff`, in the shape ansible's callback prints.
//!
//! Modules describe a change as two JSON objects (only the keys that change, or the
//! whole resource); the callback serialises and diffs them. Secrets are masked later,
//! with the rest of the result.

use serde_json::{json, Map, Value};

/// One `diff` entry: `{before, after, before_header, after_header}`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Diff {
    /// The keys that change, as they are now (absent: the key is new).
    pub before: Map<String, Value>,
    /// The keys that change, as the task wants them (absent: the key goes).
    pub after: Map<String, Value>,
    /// What changes (`VM 100`), shown as `(current)` and `(wanted)` headers.
    pub header: String,
}

impl Diff {
    /// An empty diff under `header`.
    pub fn new(header: impl Into<String>) -> Diff {
        Diff {
            header: header.into(),
            ..Diff::default()
        }
    }

    /// Record that `key` goes from `before` to `after` (`None` = absent).
    pub fn change(&mut self, key: &str, before: Option<Value>, after: Option<Value>) {
        if before == after {
            return;
        }
        if let Some(b) = before {
            self.before.insert(key.to_string(), b);
        }
        if let Some(a) = after {
            self.after.insert(key.to_string(), a);
        }
    }

    /// Whether nothing changes.
    pub fn is_empty(&self) -> bool {
        self.before.is_empty() && self.after.is_empty()
    }

    /// The entry as ansible's callback reads it.
    pub fn to_value(&self) -> Value {
        json!({
            "before": Value::Object(self.before.clone()),
            "after": Value::Object(self.after.clone()),
            "before_header": format!("{} (current)", self.header),
            "after_header": format!("{} (wanted)", self.header),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unchanged_keys_are_left_out() {
        let mut d = Diff::new("vm/100");
        d.change("memory", Some(json!("2048")), Some(json!("4096")));
        d.change("cores", Some(json!(2)), Some(json!(2)));
        d.change("net1", None, Some(json!("virtio,bridge=vmbr0")));
        assert_eq!(
            d.to_value(),
            json!({"before": {"memory": "2048"}, "after": {"memory": "4096", "net1": "virtio,bridge=vmbr0"},
                   "before_header": "vm/100 (current)", "after_header": "vm/100 (wanted)"})
        );
    }
}
