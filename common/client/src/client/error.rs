//! API errors, rendered like community.proxmox 1.6 rendered them (so playbooks that
//! match on `msg` keep working), and transport errors that name the option to fix.

use serde_json::{Map, Value};

pub use ferrox_python_repr::python_repr;

/// What kind of failure an [`ApiError`] is: it decides whether a call may be sent again and how its text reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApiErrorKind {
    /// PVE answered with an HTTP error status.
    Http,
    /// The host could not be reached (DNS, refused, unreachable, closed before the request
    /// was sent): Proxmox VE never saw the request.
    Connect,
    /// The TLS handshake or certificate verification failed.
    Tls,
    /// The request was sent but no answer came within `api_timeout`: whether Proxmox VE
    /// carried it out is unknown.
    Timeout,
    /// The connection closed after the request was sent and before the answer: whether
    /// Proxmox VE carried it out is unknown.
    Dropped,
    /// Login failed (password, OTP) or credentials were rejected.
    Auth,
    /// Anything else (a malformed answer).
    Other,
}

/// One failed API call.
#[derive(Debug, Clone)]
pub struct ApiError {
    /// What kind of failure it is.
    pub kind: ApiErrorKind,
    /// HTTP status for `Http` errors.
    pub status: Option<u16>,
    /// PVE's message (the body's `message`, else the reason phrase), without trailing newline;
    /// for other kinds, the full human-readable explanation.
    pub message: String,
    /// The body's `errors` object of a 400 (parameter -> problem).
    pub errors: Option<Map<String, Value>>,
}

impl ApiError {
    /// An HTTP error status with PVE's message and (for 400) its `errors` object.
    pub fn http(status: u16, message: impl Into<String>, errors: Option<Map<String, Value>>) -> ApiError {
        ApiError {
            kind: ApiErrorKind::Http,
            status: Some(status),
            message: message.into().trim_end_matches('\n').to_string(),
            errors: errors.filter(|e| !e.is_empty()),
        }
    }

    /// A non-HTTP failure whose `message` is the whole explanation.
    pub fn other(kind: ApiErrorKind, message: impl Into<String>) -> ApiError {
        ApiError {
            kind,
            status: None,
            message: message.into(),
            errors: None,
        }
    }

    /// The request reached Proxmox VE (or may have) but its answer was lost: a write may
    /// or may not have taken effect, so the cluster must be read to learn which.
    pub fn answer_lost(&self) -> bool {
        matches!(self.kind, ApiErrorKind::Timeout | ApiErrorKind::Dropped)
    }

    /// PVE could not take its per-VM file lock (`can't lock file '…' - got timeout`). It
    /// takes that lock before changing anything, so nothing was written.
    pub fn is_lock_timeout(&self) -> bool {
        self.kind == ApiErrorKind::Http
            && self.status == Some(500)
            && self.message.contains("can't lock file")
            && self.message.contains("got timeout")
    }

    /// True for an HTTP error with this status.
    pub fn is_status(&self, status: u16) -> bool {
        self.kind == ApiErrorKind::Http && self.status == Some(status)
    }

    /// The problem PVE reported for one parameter of a 400 (`errors.<param>`).
    pub fn param_error(&self, param: &str) -> Option<&str> {
        self.errors.as_ref()?.get(param)?.as_str()
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.kind, self.status) {
            (ApiErrorKind::Http, Some(status)) => {
                match standard_reason(status) {
                    Some(reason) => write!(f, "{status} {reason}: {}", self.message)?,
                    None => write!(f, "{status}: {}", self.message)?,
                }
                if let Some(errors) = &self.errors {
                    write!(f, " - {}", python_repr(&Value::Object(errors.clone())))?;
                }
                Ok(())
            }
            _ => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for ApiError {}

/// The standard reason phrase of a status, as Python's `http.client.responses` has it
/// (what 1.6 put between the code and PVE's text). PVE's own 595/596 have none.
pub fn standard_reason(status: u16) -> Option<&'static str> {
    Some(match status {
        400 => "Bad Request",
        401 => "Unauthorized",
        402 => "Payment Required",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        406 => "Not Acceptable",
        408 => "Request Timeout",
        409 => "Conflict",
        410 => "Gone",
        411 => "Length Required",
        413 => "Request Entity Too Large",
        414 => "Request-URI Too Long",
        415 => "Unsupported Media Type",
        422 => "Unprocessable Entity",
        423 => "Locked",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        505 => "HTTP Version Not Supported",
        506 => "Variant Also Negotiates",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn errors(v: Value) -> Option<Map<String, Value>> {
        v.as_object().cloned()
    }

    #[test]
    fn http_error_renders_like_1_6() {
        let e = ApiError::http(
            500,
            "unable to create VM 108 - VM 108 already exists on node 'pve1'\n",
            None,
        );
        assert_eq!(
            e.to_string(),
            "500 Internal Server Error: unable to create VM 108 - VM 108 already exists on node 'pve1'"
        );
    }

    #[test]
    fn parameter_errors_render_as_a_python_dict() {
        let e = ApiError::http(
            400,
            "Parameter verification failed.\n",
            errors(json!({"vmid": "duplicate parameter (already defined in URI)"})),
        );
        assert_eq!(
            e.to_string(),
            "400 Bad Request: Parameter verification failed. - {'vmid': 'duplicate parameter (already defined in URI)'}"
        );
        assert_eq!(
            e.param_error("vmid"),
            Some("duplicate parameter (already defined in URI)")
        );
    }

    #[test]
    fn several_parameter_errors_keep_pve_order_and_embedded_newlines() {
        let e = ApiError::http(
            400,
            "Parameter verification failed.",
            errors(
                json!({"net0": "invalid format - format error\nnet0.model: bad\n", "memory": "value must have a minimum value of 16"}),
            ),
        );
        assert_eq!(
            e.to_string(),
            "400 Bad Request: Parameter verification failed. - {'net0': 'invalid format - format error\\nnet0.model: bad\\n', 'memory': 'value must have a minimum value of 16'}"
        );
    }

    #[test]
    fn empty_errors_object_is_not_rendered() {
        let e = ApiError::http(400, "Parameter verification failed.", errors(json!({})));
        assert_eq!(e.to_string(), "400 Bad Request: Parameter verification failed.");
    }

    #[test]
    fn non_standard_status_has_no_reason() {
        assert_eq!(
            ApiError::http(595, "No route to host", None).to_string(),
            "595: No route to host"
        );
    }

    #[test]
    fn other_kinds_show_their_message() {
        let e = ApiError::other(ApiErrorKind::Timeout, "took too long");
        assert_eq!(e.to_string(), "took too long");
        assert!(!e.is_status(500));
    }

    #[test]
    fn python_repr_quotes_and_escapes_like_python() {
        assert_eq!(python_repr(&json!("it's")), "\"it's\"");
        assert_eq!(python_repr(&json!("say \"x\" it's")), "'say \"x\" it\\'s'");
        assert_eq!(python_repr(&json!("a\\b\tc")), "'a\\\\b\\tc'");
        assert_eq!(
            python_repr(&json!({"a": [1, null, true, false, 2.5, 2.0]})),
            "{'a': [1, None, True, False, 2.5, 2.0]}"
        );
    }
}
