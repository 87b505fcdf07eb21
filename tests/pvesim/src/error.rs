//! PVE-shaped API errors: the status code, the reason phrase (first line of the
//! message) and the JSON body are all derived from one value so they never disagree.

use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    pub status: u16,
    /// Full message; the reason phrase is its first line.
    pub message: String,
    /// Per-parameter errors (only for 400).
    pub errors: Option<BTreeMap<String, String>>,
    /// 401s of the HTTP server carry no body at all.
    pub empty_body: bool,
    /// Whether the trailing newline PVE adds to `die` messages is appended.
    pub newline: bool,
}

pub type ApiResult<T> = Result<T, ApiError>;

impl ApiError {
    /// A plain `die` inside a handler: HTTP 500.
    pub fn internal(msg: impl Into<String>) -> Self {
        Self::with_status(500, msg)
    }

    pub fn with_status(status: u16, msg: impl Into<String>) -> Self {
        ApiError {
            status,
            message: msg.into(),
            errors: None,
            empty_body: false,
            newline: true,
        }
    }

    /// `raise_param_exc`: 400 with an `errors` object.
    pub fn params(errors: BTreeMap<String, String>) -> Self {
        ApiError {
            status: 400,
            message: "Parameter verification failed.".into(),
            errors: Some(errors),
            empty_body: false,
            newline: true,
        }
    }

    pub fn param(key: &str, msg: impl Into<String>) -> Self {
        let mut m = BTreeMap::new();
        m.insert(key.to_string(), msg.into());
        Self::params(m)
    }

    /// Unknown path or method: 501 without the trailing newline.
    pub fn not_implemented(method: &str, path: &str) -> Self {
        ApiError {
            status: 501,
            message: format!("Method '{method} {path}' not implemented"),
            errors: None,
            empty_body: false,
            newline: false,
        }
    }

    pub fn status501(msg: impl Into<String>) -> Self {
        ApiError {
            newline: false,
            ..Self::with_status(501, msg)
        }
    }

    /// Authentication failures of the HTTP server: 401, empty body.
    pub fn unauthorized(reason: &str) -> Self {
        ApiError {
            status: 401,
            message: reason.into(),
            errors: None,
            empty_body: true,
            newline: false,
        }
    }

    /// A failure pveproxy relays from its HTTP client when forwarding to a node
    /// (AnyEvent::HTTP's 595 connection, 596 TLS/sending/headers, 597 body, 599 other):
    /// status and reason as the library set them, no body.
    pub fn proxy_failure(status: u16, reason: impl Into<String>) -> Self {
        ApiError {
            status,
            message: reason.into(),
            errors: None,
            empty_body: true,
            newline: false,
        }
    }

    pub fn forbidden(path: &str, privs: &str) -> Self {
        Self::with_status(403, format!("Permission check failed ({path}, {privs})"))
    }

    pub fn forbidden_plain() -> Self {
        Self::with_status(403, "Permission check failed")
    }

    /// Reason phrase: first line, restricted to bytes hyper accepts.
    pub fn reason(&self) -> String {
        let first = self.message.lines().next().unwrap_or("").trim_end();
        first
            .chars()
            .filter(|c| *c == '\t' || (*c >= ' ' && *c != '\u{7f}' && c.is_ascii()))
            .collect()
    }

    /// JSON body as PVE >= 8.3 sends it (`None` for body-less replies).
    pub fn body(&self) -> Option<serde_json::Value> {
        if self.empty_body {
            return None;
        }
        let mut msg = self.message.clone();
        if self.newline && !msg.ends_with('\n') {
            msg.push('\n');
        }
        let mut obj = serde_json::Map::new();
        obj.insert("data".into(), serde_json::Value::Null);
        if let Some(e) = &self.errors {
            obj.insert("errors".into(), serde_json::to_value(e).unwrap_or_default());
        }
        obj.insert("message".into(), serde_json::Value::String(msg));
        Some(serde_json::Value::Object(obj))
    }

    /// Text used when the error ends a task (`exitstatus`).
    pub fn task_text(&self) -> String {
        let mut s = if self.status == 400 {
            let mut s = format!("{} {}", self.status, self.message);
            if let Some(e) = &self.errors {
                for (k, v) in e {
                    s.push_str(&format!(" {k}: {v}"));
                }
            }
            s
        } else {
            self.message.clone()
        };
        s = s.trim_end_matches('\n').replace('\n', " ");
        s
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.status, self.message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reason_is_first_line_and_body_has_newline() {
        let e = ApiError::internal("line one\nline two");
        assert_eq!(e.reason(), "line one");
        assert_eq!(e.body().unwrap()["message"], "line one\nline two\n");
        let e = ApiError::not_implemented("GET", "/x");
        assert_eq!(e.body().unwrap()["message"], "Method 'GET /x' not implemented");
        assert!(ApiError::unauthorized("No ticket").body().is_none());
    }

    #[test]
    fn param_errors_in_task_text() {
        let e = ApiError::param("net0", "hotplug problem - x");
        assert_eq!(
            e.task_text(),
            "400 Parameter verification failed. net0: hotplug problem - x"
        );
    }
}
