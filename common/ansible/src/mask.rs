//! Secrets never leave the process: every string of a result is scrubbed of the values
//! of `no_log` options before it is printed, as AnsibleModule does.

use serde_json::Value;

/// What AnsibleModule prints instead of a secret inside a string.
pub const MASK: &str = "********";
/// What AnsibleModule shows for a `no_log` option in `invocation.module_args`.
pub const NO_LOG_PLACEHOLDER: &str = "VALUE_SPECIFIED_IN_NO_LOG_PARAMETER";

/// The non-empty secrets, longest first, so a secret that contains another is masked whole.
fn longest_first(secrets: &[String]) -> Vec<&str> {
    let mut sorted: Vec<&str> = secrets.iter().map(String::as_str).filter(|s| !s.is_empty()).collect();
    sorted.sort_by_key(|s| std::cmp::Reverse(s.len()));
    sorted
}

/// Masks `text` where it holds a secret; a string without one is left as it is (most
/// are: a result of thousands of strings is scanned, not copied).
fn mask_in_place(text: &mut String, sorted: &[&str]) {
    for secret in sorted {
        if text.contains(secret) {
            *text = text.replace(secret, MASK);
        }
    }
}

/// Scrubs every string (and object key) inside `value`.
pub fn mask_value(value: &mut Value, secrets: &[String]) {
    let sorted = longest_first(secrets);
    if !sorted.is_empty() {
        mask_sorted(value, &sorted);
    }
}

fn mask_sorted(value: &mut Value, sorted: &[&str]) {
    match value {
        Value::String(s) => mask_in_place(s, sorted),
        Value::Array(items) => items.iter_mut().for_each(|v| mask_sorted(v, sorted)),
        Value::Object(map) => {
            map.values_mut().for_each(|v| mask_sorted(v, sorted));
            if map.keys().any(|k| sorted.iter().any(|secret| k.contains(secret))) {
                // Rebuilt only when a key holds a secret, keeping the keys' order.
                *map = std::mem::take(map)
                    .into_iter()
                    .map(|(mut k, v)| {
                        mask_in_place(&mut k, sorted);
                        (k, v)
                    })
                    .collect();
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
        assert_eq!(
            v,
            json!({"msg": "auth ******** failed", "list": ["x ********"], "********": 1})
        );
    }

    #[test]
    fn keys_keep_their_order_and_nothing_is_masked_without_secrets() {
        let mut v = json!({"a": 1, "x-s3cr3t": 2, "z": "s3cr3t"});
        mask_value(&mut v, &["s3cr3t".to_string()]);
        assert_eq!(
            v.as_object().unwrap().keys().collect::<Vec<_>>(),
            ["a", "x-********", "z"]
        );
        let mut untouched = json!({"k": "s3cr3t"});
        mask_value(&mut untouched, &[String::new()]);
        assert_eq!(untouched, json!({"k": "s3cr3t"}), "an empty secret masks nothing");
    }
}
