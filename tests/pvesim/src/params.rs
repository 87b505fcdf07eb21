//! Request parameters as pve-http-server collects them: query string, form or JSON
//! body (query wins), repeated form keys become lists, `_dc` is dropped.

use crate::error::{ApiError, ApiResult};
use serde_json::Value;
use std::collections::BTreeMap;

pub type RawParams = BTreeMap<String, Value>;

fn add(out: &mut RawParams, k: String, v: String) {
    match out.get_mut(&k) {
        Some(Value::Array(a)) => a.push(Value::String(v)),
        Some(old) => {
            let prev = old.take();
            *old = Value::Array(vec![prev, Value::String(v)]);
        }
        None => {
            out.insert(k, Value::String(v));
        }
    }
}

pub fn parse_form(data: &[u8]) -> RawParams {
    let mut out = RawParams::new();
    for (k, v) in form_urlencoded::parse(data) {
        add(&mut out, k.into_owned(), v.into_owned());
    }
    out
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
