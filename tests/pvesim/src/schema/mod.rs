//! The official PVE API schema: loading (embedded subset or a full dump), routing a
//! concrete path to its schema entry, and validating parameters against it.

pub mod formats;
pub mod validate;

use serde_json::Value;
use std::collections::BTreeMap;

/// The subset of the official schema (PVE 9.1) covering the methods served here.
pub const EMBEDDED_SUBSET: &str = include_str!("../../schema/pve-api-subset.json");
/// `METHOD /path` lines naming the served methods.
pub const SERVED: &str = include_str!("../../schema/served.txt");

/// One path template with its method objects.
#[derive(Debug, Clone)]
pub struct Endpoint {
    pub path: String,
    segments: Vec<Segment>,
    pub info: BTreeMap<String, Value>,
}

#[derive(Debug, Clone)]
enum Segment {
    Literal(String),
    Param(String),
}

#[derive(Debug, Clone)]
pub struct Schema {
    endpoints: Vec<Endpoint>,
}

/// Result of routing: template path, its methods, and the path parameters.
pub struct Route<'a> {
    pub endpoint: &'a Endpoint,
    pub path_params: BTreeMap<String, String>,
}

pub fn served_methods() -> Vec<(String, String)> {
    SERVED
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .filter_map(|l| l.split_once(' ').map(|(m, p)| (m.to_string(), p.to_string())))
        .collect()
}

impl Schema {
    /// The subset, extended with the sub-keys later releases added
    /// ([`crate::qemu::versions`]): what a node's qemu-server lacks is refused per request.
    pub fn embedded() -> Schema {
        let mut subset: Value = serde_json::from_str(EMBEDDED_SUBSET).expect("embedded schema subset is JSON");
        crate::qemu::versions::extend_schema(&mut subset);
        Self::from_json(&subset.to_string()).expect("embedded schema subset is valid")
    }

    /// Accepts either the full upstream tree or the flat subset.
    pub fn from_json(text: &str) -> anyhow::Result<Schema> {
        let v: Value = serde_json::from_str(text)?;
        let mut endpoints = Vec::new();
        fn walk(n: &Value, out: &mut Vec<Endpoint>) {
            if let (Some(path), Some(info)) = (n.get("path").and_then(Value::as_str), n.get("info")) {
                if let Some(info) = info.as_object() {
                    let segments = split(path)
                        .into_iter()
                        .map(|s| {
                            if s.starts_with('{') && s.ends_with('}') {
                                Segment::Param(s[1..s.len() - 1].to_string())
                            } else {
                                Segment::Literal(s.to_string())
                            }
                        })
                        .collect();
                    out.push(Endpoint {
                        path: path.to_string(),
                        segments,
                        info: info.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
                    });
                }
            }
            if let Some(children) = n.get("children").and_then(Value::as_array) {
                for c in children {
                    walk(c, out);
                }
            }
        }
        for n in v
            .as_array()
            .ok_or_else(|| anyhow::anyhow!("schema must be a JSON array"))?
        {
            walk(n, &mut endpoints);
        }
        anyhow::ensure!(!endpoints.is_empty(), "schema has no paths");
        Ok(Schema { endpoints })
    }

    /// Extract the served subset in the same shape as `pve-api-subset.json`.
    pub fn extract_subset(&self) -> anyhow::Result<Value> {
        let mut out: Vec<Value> = Vec::new();
        for (method, path) in served_methods() {
            let ep = self
                .endpoints
                .iter()
                .find(|e| e.path == path)
                .ok_or_else(|| anyhow::anyhow!("schema lacks {path}"))?;
            let info = ep
                .info
                .get(&method)
                .ok_or_else(|| anyhow::anyhow!("schema lacks {method} {path}"))?;
            if let Some(last) = out.last_mut().filter(|l| l["path"] == path) {
                last["info"][&method] = info.clone();
            } else {
                out.push(serde_json::json!({"path": path, "info": {method: info}}));
            }
        }
        Ok(Value::Array(out))
    }

    /// Find the template matching a concrete path (literal segments win over params).
    pub fn route(&self, path: &str) -> Option<Route<'_>> {
        let segs = split(path);
        let mut best: Option<(usize, Route<'_>)> = None;
        for ep in &self.endpoints {
            // `…/content/{volume}` takes the rest of the path (pve-storage registers it with
            // an empty fragment delimiter: volume ids hold `/`).
            let tail = ep
                .segments
                .last()
                .is_some_and(|s| matches!(s, Segment::Param(n) if n == "volume"));
            let joined: Vec<String>;
            let view: Vec<&str>;
            let segs: &[&str] = if tail && segs.len() > ep.segments.len() {
                let n = ep.segments.len() - 1;
                joined = segs[..n]
                    .iter()
                    .map(|s| s.to_string())
                    .chain([segs[n..].join("/")])
                    .collect();
                view = joined.iter().map(String::as_str).collect();
                &view
            } else {
                &segs
            };
            if ep.segments.len() != segs.len() {
                continue;
            }
            let mut params = BTreeMap::new();
            let mut literals = 0;
            let mut ok = true;
            for (t, s) in ep.segments.iter().zip(segs) {
                match t {
                    Segment::Literal(l) if l == s => literals += 1,
                    Segment::Literal(_) => {
                        ok = false;
                        break;
                    }
                    Segment::Param(name) => {
                        params.insert(name.clone(), percent_decode(s));
                    }
                }
            }
            if ok && best.as_ref().is_none_or(|(n, _)| literals > *n) {
                best = Some((
                    literals,
                    Route {
                        endpoint: ep,
                        path_params: params,
                    },
                ));
            }
        }
        best.map(|(_, r)| r)
    }

    /// Property schema of a create/config key (for value typing of configs).
    pub fn method(&self, path: &str, method: &str) -> Option<&Value> {
        self.endpoints
            .iter()
            .find(|e| e.path == path)
            .and_then(|e| e.info.get(method))
    }
}

fn split(path: &str) -> Vec<&str> {
    path.split('/').filter(|s| !s.is_empty()).collect()
}

pub fn percent_decode(s: &str) -> String {
    percent_encoding::percent_decode_str(s).decode_utf8_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_literal_over_param() {
        let s = Schema::embedded();
        let r = s.route("/nodes/pve1/qemu/100/status/current").unwrap();
        assert_eq!(r.endpoint.path, "/nodes/{node}/qemu/{vmid}/status/current");
        assert_eq!(r.path_params["vmid"], "100");
        assert!(s.route("/nodes/pve1/qemu/100/foo").is_none());
        let r = s.route("/nodes/pve1/tasks/UPID%3Apve1%3A/status").unwrap();
        assert_eq!(r.path_params["upid"], "UPID:pve1:");
    }

    #[test]
    fn embedded_subset_has_every_served_method() {
        let s = Schema::embedded();
        for (m, p) in served_methods() {
            assert!(s.method(&p, &m).is_some(), "{m} {p}");
        }
    }

    /// The committed subset is exactly what extraction yields from the full official
    /// schema the repository keeps beside it (`schema/pve-api-schema.json`).
    #[test]
    fn subset_matches_full_schema() {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("schema/pve-api-schema.json");
        let text = std::fs::read_to_string(&p).unwrap_or_else(|e| {
            panic!(
                "{} cannot be read ({e}): the subset has nothing to be checked against",
                p.display()
            )
        });
        let full = Schema::from_json(&text).unwrap();
        let extracted = full.extract_subset().unwrap();
        let committed: Value = serde_json::from_str(EMBEDDED_SUBSET).unwrap();
        assert_eq!(
            extracted, committed,
            "schema/pve-api-subset.json is stale: run schema/extract.py"
        );
    }
}
