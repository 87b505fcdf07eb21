//! Secrets never leave the process: every string of a result is scrubbed of the values
//! of `no_log` options before it is printed, as AnsibleModule does.

use serde_json::Value;

/// What AnsibleModule prints instead of a secret inside a string.
pub const MASK: &str = "********";
/// What AnsibleModule shows for a `no_log` option in `invocation.module_args`.
pub const NO_LOG_PLACEHOLDER: &str = "VALUE_SPECIFIED_IN_NO_LOG_PARAMETER";

/// Replaces every occurrence of each secret in `text`.
pub fn mask_str(text: &str, secrets: &[String]) -> String {
    let mut out = text.to_string();
    // Longest first, so a secret that contains another is masked whole.
    let mut sorted: Vec<&String> = secrets.iter().filter(|s| !s.is_empty()).collect();
    sorted.sort_by_key(|s| std::cmp::Reverse(s.len()));
    for secret in sorted {
        if out.contains(secret.as_str()) {
            out = out.replace(secret.as_str(), MASK);
        }
    }
    out
}

/// Scrubs every string (and object key) inside `value`.
pub fn mask_value(value: &mut Value, secrets: &[String]) {
    if secrets.is_empty() {
        return;
    }
    match value {
        Value::String(s) => *s = mask_str(s, secrets),
        Value::Array(items) => items.iter_mut().for_each(|v| mask_value(v, secrets)),
        Value::Object(map) => {
            let entries: Vec<(String, Value)> = std::mem::take(map).into_iter().collect();
            for (k, mut v) in entries {
                mask_value(&mut v, secrets);
                map.insert(mask_str(&k, secrets), v);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn masks_nested_strings_and_keys() {
        let secrets = vec!["s3cr3t".to_string(), "s3cr3t-long".to_string()];
        let mut v = json!({"msg": "auth s3cr3t-long failed", "list": ["x s3cr3t"], "s3cr3t": 1});
        mask_value(&mut v, &secrets);
        assert_eq!(v, json!({"msg": "auth ******** failed", "list": ["x ********"], "********": 1}));
    }
}
