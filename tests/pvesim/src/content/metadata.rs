//! `GET /nodes/{node}/query-url-metadata` as pve-manager answers it: one `HEAD` (LWP,
//! redirects followed), the file name from `Content-Disposition` or the URL's last path
//! segment, the size from `Content-Length`, the MIME type without its parameters.

use super::fetch::{self, NoAnswer};
use crate::error::{ApiError, ApiResult};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

/// The file name of a URL: what follows its last `/` before any query.
fn url_filename(url: &str) -> Option<String> {
    let before_query = url.split('?').next().unwrap_or("");
    let (_, last) = before_query.rsplit_once('/')?;
    Some(last.to_string())
}

/// `filename="x"` or `filename=x` of a `Content-Disposition`.
fn disposition_filename(d: &str) -> Option<String> {
    if let Some(rest) = d.split_once("filename=\"").map(|(_, r)| r) {
        return rest.split_once('"').map(|(name, _)| name.to_string());
    }
    d.split_once("filename=")
        .map(|(_, r)| r.split(';').next().unwrap_or("").to_string())
}

/// Runs without the cluster lock: the HEAD may take as long as the remote side does.
pub fn query(p: &BTreeMap<String, String>) -> ApiResult<Value> {
    let url = p.get("url").map(String::as_str).unwrap_or("");
    let verify = p.get("verify-certificates").map(String::as_str) != Some("0");
    let (host, port) = fetch::host_port(url);
    let head = fetch::head(url, verify).map_err(|e| {
        let line = match e {
            NoAnswer::Unresolved => format!("500 Can't connect to {host}:{port} (Name or service not known)"),
            NoAnswer::Connect(why) => format!("500 Can't connect to {host}:{port} ({why})"),
            NoAnswer::Broken(why) => format!("500 {why}"),
        };
        ApiError::internal(format!("invalid server response: '{line}'"))
    })?;
    if head.status != 200 {
        return Err(ApiError::internal(format!(
            "invalid server response: '{} {}'",
            head.status, head.reason
        )));
    }
    let mut out = Map::new();
    let filename = head
        .disposition
        .as_deref()
        .and_then(disposition_filename)
        .or_else(|| url_filename(url));
    if let Some(f) = filename.filter(|f| !f.is_empty() && f != "0") {
        out.insert("filename".into(), json!(f));
    }
    if let Some(n) = head.content_length.filter(|n| *n > 0) {
        out.insert("size".into(), json!(n));
    }
    if let Some(t) = head.content_type.filter(|t| !t.is_empty() && t != "0") {
        let t = match t.split_once(';') {
            Some((main, _)) => main.to_string(),
            None => t,
        };
        out.insert("mimetype".into(), json!(t));
    }
    Ok(Value::Object(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_from_url_and_disposition() {
        assert_eq!(url_filename("http://h/a/b.qcow2?x=1/2").as_deref(), Some("b.qcow2"));
        assert_eq!(url_filename("http://h/").as_deref(), Some(""));
        assert_eq!(
            disposition_filename("attachment; filename=\"x y.iso\"").as_deref(),
            Some("x y.iso")
        );
        assert_eq!(
            disposition_filename("attachment; filename=z.iso; size=3").as_deref(),
            Some("z.iso")
        );
        assert_eq!(disposition_filename("inline"), None);
    }
}
