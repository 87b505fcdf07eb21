//! An opt-in record of the API calls a module run makes: with `FERROX_API_TRACE=<file>`
//! in the module's environment, every HTTP request appends one JSON line
//! (`{"method","path","status","ms"}`) to that file. `cargo collection conformance`
//! sets it to count what each scenario asked of a real cluster. Paths carry no
//! secret (credentials travel in headers, form values are not recorded).

use std::io::Write;
use std::time::Duration;

/// The environment variable naming the trace file.
pub const ENV: &str = "FERROX_API_TRACE";

/// Appends one line for a request when tracing is on; never fails the call.
pub fn record(method: &str, path: &str, status: Option<u16>, elapsed: Duration) {
    let Some(file) = std::env::var_os(ENV).filter(|f| !f.is_empty()) else {
        return;
    };
    let line = serde_json::json!({
        "method": method,
        "path": path,
        "status": status,
        "ms": elapsed.as_millis() as u64,
    });
    // One write of a short line to an O_APPEND file: lines of parallel runs do not interleave.
    if let Ok(mut f) = std::fs::OpenOptions::new().create(true).append(true).open(file) {
        let _ = f.write_all(format!("{line}\n").as_bytes());
    }
}
