//! Request parameters as pve-http-server collects them: query string, form or JSON
//! body (query wins), repeated form keys become lists, `_dc` is dropped.

use crate::error::{ApiError, ApiResult};
use serde_json::Value;
use std::collections::BTreeMap;

pub type RawParams = BTreeMap<String, Value>;

/// pve-http-server `AnyEvent.pm` `decode_urlencoded`: pairs split at `&` or `;`, each
/// `split(/=/, $kv)` into key and value, so a value ends at a second raw `=` and a pair
/// without a non-empty field after its key (`k=`, `k`, `k==`) has no value (undef, here
/// `null`, which replaces an earlier value of the key as Perl's assignment does); `+` is a
/// space, `%XX` a byte, the value UTF-8. Repeated keys with values become a list.
pub fn parse_form(data: &[u8]) -> RawParams {
    let mut out = RawParams::new();
    let text = String::from_utf8_lossy(data);
    let mut pairs: Vec<&str> = text.split(['&', ';']).collect();
    // Perl's split drops trailing empty fields.
    while pairs.last().is_some_and(|p| p.is_empty()) {
        pairs.pop();
    }
    for kv in pairs {
        let mut fields: Vec<&str> = kv.split('=').collect();
        while fields.last().is_some_and(|f| f.is_empty()) {
            fields.pop();
        }
        let key = unescape(fields.first().copied().unwrap_or(""));
        match fields.get(1) {
            Some(v) => add(&mut out, key, unescape(v)),
            None => {
                out.insert(key, Value::Null);
            }
        }
    }
    out
}

/// `s/\+/ /g` then `s/%([0-9a-fA-F]{2})/chr(hex($1))/eg`, read as UTF-8.
fn unescape(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() && bytes[i + 1].is_ascii_hexdigit() && bytes[i + 2].is_ascii_hexdigit() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("00");
                out.push(u8::from_str_radix(hex, 16).unwrap_or(0));
                i += 2;
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn add(out: &mut RawParams, k: String, v: String) {
    match out.get_mut(&k) {
        Some(Value::Array(a)) => a.push(Value::String(v)),
        Some(Value::Null) | None => {
            out.insert(k, Value::String(v));
        }
        Some(old) => {
            let prev = old.take();
            *old = Value::Array(vec![prev, Value::String(v)]);
        }
    }
}

pub fn parse(method: &str, query: Option<&str>, content_type: Option<&str>, body: &[u8]) -> ApiResult<RawParams> {
    let mut params = RawParams::new();
    if !body.is_empty() {
        if method == "GET" || method == "DELETE" {
            return Err(ApiError::status501(format!("Unexpected content for method '{method}'")));
        }
        let ct = content_type.unwrap_or("application/x-www-form-urlencoded");
        let base = ct.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
        match base.as_str() {
            "application/x-www-form-urlencoded" | "" => params = parse_form(body),
            "application/json" => {
                let v: Value = serde_json::from_slice(body)
                    .map_err(|e| ApiError::with_status(400, format!("malformed JSON string - {e}")))?;
                match v {
                    Value::Object(m) => params.extend(m),
                    _ => {
                        return Err(ApiError::with_status(
                            400,
                            "malformed JSON string - expected a JSON object",
                        ))
                    }
                }
            }
            _ => {
                return Err(ApiError::with_status(
                    506,
                    format!("upload 'Content-Type '{ct}' not implemented"),
                ))
            }
        }
    }
    if let Some(q) = query {
        for (k, v) in parse_form(q.as_bytes()) {
            params.insert(k, v);
        }
    }
    params.remove("_dc");
    Ok(params)
}

/// Merge URI parameters; a differing value under the same name is PVE's 400.
pub fn merge_path(params: &mut RawParams, path: &BTreeMap<String, String>) -> ApiResult<()> {
    let mut errors = BTreeMap::new();
    for (k, v) in path {
        if let Some(existing) = params.get(k) {
            let same = match existing {
                Value::String(s) => s == v,
                Value::Number(n) => &n.to_string() == v,
                _ => false,
            };
            if !same {
                errors.insert(
                    k.clone(),
                    "duplicate parameter (already defined in URI) with conflicting values!".to_string(),
                );
                continue;
            }
        }
        params.insert(k.clone(), Value::String(v.clone()));
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(ApiError::params(errors))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn form_query_json() {
        let p = parse(
            "POST",
            Some("name=q&_dc=1"),
            None,
            b"name=b&delete=a&delete=b&size=%2B2G&x=a+b",
        )
        .unwrap();
        assert_eq!(p["name"], "q", "query wins");
        assert_eq!(p["delete"], serde_json::json!(["a", "b"]));
        assert_eq!(p["size"], "+2G");
        assert_eq!(p["x"], "a b");
        assert!(!p.contains_key("_dc"));
        let p = parse(
            "PUT",
            None,
            Some("application/json; charset=utf-8"),
            br#"{"cores":2,"onboot":true}"#,
        )
        .unwrap();
        assert_eq!(p["cores"], 2);
        assert_eq!(parse("DELETE", None, None, b"x=1").unwrap_err().status, 501);
        assert_eq!(
            parse("POST", None, Some("application/json"), b"{bad")
                .unwrap_err()
                .status,
            400
        );
        assert_eq!(parse("POST", None, Some("text/plain"), b"x").unwrap_err().status, 506);
    }

    #[test]
    fn form_pairs_split_as_decode_urlencoded_splits_them() {
        let p = parse_form(b"a=1;b=x=y&c=&d&e==z&f=%3D%3B");
        assert_eq!(p["a"], "1", "`;` separates pairs too");
        assert_eq!(p["b"], "x", "the value ends at a second raw `=`");
        assert_eq!(p["c"], Value::Null, "an empty value is undef");
        assert_eq!(p["d"], Value::Null);
        assert_eq!(p["e"], "", "an empty field before a non-empty one is kept");
        assert_eq!(p["f"], "=;", "encoded `=` and `;` are data");
        let p = parse_form(b"k=1&k=&k=2");
        assert_eq!(p["k"], "2", "undef replaces the list, the next value starts anew");
    }

    #[test]
    fn uri_conflicts() {
        let mut p = parse("POST", None, None, b"vmid=100&node=pve1").unwrap();
        let path: BTreeMap<String, String> = [
            ("node".to_string(), "pve1".to_string()),
            ("vmid".to_string(), "101".to_string()),
        ]
        .into();
        let e = merge_path(&mut p, &path).unwrap_err();
        assert_eq!(
            e.errors.unwrap()["vmid"],
            "duplicate parameter (already defined in URI) with conflicting values!"
        );
    }
}
