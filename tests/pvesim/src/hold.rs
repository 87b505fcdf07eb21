//! `/_pvesim/hold`: requests held back, before they are carried out, until the test
//! releases them. A test about concurrency makes its condition happen this way (one
//! login held while the other clients of a run reach the point where they wait for it)
//! instead of hoping a loaded machine's scheduler produces it. The hold has an upper
//! bound of its own (`max_ms`), so a test that never releases does not hang its run.

use regex::Regex;
use serde::Deserialize;
use serde_json::{json, Value};
use std::sync::Mutex;
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// What `POST /_pvesim/hold` takes.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HoldSpec {
    /// Requests whose path (`/api2/json/…`) this matches are held.
    pub path_regex: String,
    /// Only this method (any when absent).
    #[serde(default)]
    pub method: Option<String>,
    /// The longest a request is held (default 120 000).
    #[serde(default = "default_max_ms")]
    pub max_ms: u64,
}

fn default_max_ms() -> u64 {
    120_000
}

struct Rule {
    method: Option<String>,
    path: Regex,
    until: Instant,
}

/// The hold in force, the requests waiting in it, and the release signal.
pub struct Hold {
    rule: Mutex<Option<Rule>>,
    waiting: Mutex<u64>,
    released: watch::Sender<u64>,
}

impl Default for Hold {
    fn default() -> Self {
        Hold {
            rule: Mutex::new(None),
            waiting: Mutex::new(0),
            released: watch::channel(0).0,
        }
    }
}

impl Hold {
    /// Holds the requests `spec` names from now on.
    pub fn set(&self, spec: HoldSpec) -> Result<(), String> {
        let path = Regex::new(&spec.path_regex).map_err(|e| format!("bad path_regex: {e}"))?;
        *self.rule.lock().unwrap_or_else(|e| e.into_inner()) = Some(Rule {
            method: spec.method,
            path,
            until: Instant::now() + Duration::from_millis(spec.max_ms),
        });
        Ok(())
    }

    /// Lets every held request go on and holds no more.
    pub fn release(&self) {
        *self.rule.lock().unwrap_or_else(|e| e.into_inner()) = None;
        self.released.send_modify(|generation| *generation += 1);
    }

    /// `GET /_pvesim/hold`: whether a hold is in force and how many requests wait in it.
    pub fn status(&self) -> Value {
        let holding = self.rule.lock().unwrap_or_else(|e| e.into_inner()).is_some();
        json!({"holding": holding, "waiting": *self.waiting.lock().unwrap_or_else(|e| e.into_inner())})
    }

    /// Waits while `method path` is held: until released or the hold's bound.
    pub async fn wait(&self, method: &str, path: &str) {
        // Subscribed before the rule is read: a release between the two is not missed.
        let mut released = self.released.subscribe();
        let until = {
            let rule = self.rule.lock().unwrap_or_else(|e| e.into_inner());
            match rule.as_ref() {
                Some(r)
                    if r.method.as_deref().is_none_or(|m| m.eq_ignore_ascii_case(method)) && r.path.is_match(path) =>
                {
                    r.until
                }
                _ => return,
            }
        };
        *self.waiting.lock().unwrap_or_else(|e| e.into_inner()) += 1;
        let left = until.saturating_duration_since(Instant::now());
        let _ = tokio::time::timeout(left, released.changed()).await;
        *self.waiting.lock().unwrap_or_else(|e| e.into_inner()) -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_held_request_waits_until_released_and_others_pass() {
        let hold = std::sync::Arc::new(Hold::default());
        hold.set(HoldSpec {
            path_regex: "^/api2/json/access/ticket$".into(),
            method: Some("POST".into()),
            max_ms: 60_000,
        })
        .unwrap();
        hold.wait("GET", "/api2/json/access/ticket").await;
        hold.wait("POST", "/api2/json/version").await;
        let held = {
            let hold = hold.clone();
            tokio::spawn(async move { hold.wait("POST", "/api2/json/access/ticket").await })
        };
        while hold.status()["waiting"] != json!(1) {
            tokio::task::yield_now().await;
        }
        assert!(!held.is_finished());
        hold.release();
        held.await.unwrap();
        assert_eq!(hold.status(), json!({"holding": false, "waiting": 0}));
    }

    #[tokio::test]
    async fn a_hold_ends_at_its_bound() {
        let hold = Hold::default();
        hold.set(HoldSpec {
            path_regex: ".".into(),
            method: None,
            max_ms: 10,
        })
        .unwrap();
        hold.wait("GET", "/x").await;
        assert_eq!(hold.status()["waiting"], json!(0));
    }
}
