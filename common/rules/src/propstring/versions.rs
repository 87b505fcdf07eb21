//! Keys newer than the schema: sent, and decided by the node that parses them.
//!
//! The collection carries the PVE 9.1 schema, with the sub-keys later qemu-server
//! releases added (`newer-keys.json`, [`INTRODUCED`]). Whether a node takes such a key,
//! or one the schema does not know at all, is a fact of that node alone:
//!
//! - a `/nodes/{node}/...` call is handed to `{node}` before its parameters are
//!   validated (pve-manager `PVE/HTTPServer.pm` `rest_handler`: `proxyto`, then
//!   `$handler->handle`, which runs pve-common's `PVE::JSONSchema::validate`), so the
//!   qemu-server installed on that node parses the config keys;
//! - pve-manager sets only a floor for that qemu-server (9.2.x `debian/control`:
//!   `qemu-server (>= 9.1.13)`; `host-tunnel` came with 9.1.18), and `GET /version` is
//!   the pve-manager of whichever node answered.
//!
//! So no version the client reads says whether a key will be taken. The node's own
//! package list (`GET /nodes/{node}/apt/versions`) needs `Sys.Audit` on `/nodes/{node}`
//! (pve-manager `PVE/API2/APT.pm` `versions`), which the VM roles lack (`PVEVMAdmin` is
//! built from pve-access-control's `VM` privileges only); without it the client would
//! have to guess again, and with it the answer could only tell what the call itself
//! tells. The rule is therefore never to refuse such a key on a version: it is sent,
//! and when the node lacks it, its refusal (a 400 `Parameter verification failed.`,
//! given before anything is done) is relayed naming the key, the node and the fix
//! ([`refusal`]). Check mode writes nothing and so cannot ask the node: it says the key
//! is sent and the node decides ([`notes`]). A key the schema does not know is said so
//! in every run, since a spelling mistake is the likelier cause.

pub use super::formats::{INTRODUCED, SCHEMA_PVE};
use super::keys::SCHEMA_VERSION;
pub use super::schema_entry::Introduced;
use super::Format;
use serde_json::{Map, Value};

/// Why only the node decides a key of the task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Needs {
    /// A sub-key of [`INTRODUCED`]: the node's qemu-server must be at least its release.
    Release(&'static Introduced),
    /// A key the schema does not know; `hint` says what it knows instead.
    Unknown {
        /// What the schema knows instead (`known keys: ...`).
        hint: String,
    },
}

/// A key or sub-key of the task that only the node parsing it decides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Versioned {
    /// Where the task names it, in the task's terms: `net.net0`, `cpu`, `extra_config`.
    pub at: String,
    /// The config key it is sent in (`net0`, `cpu`); for a key of its own, the key.
    pub param: String,
    /// The key or sub-key (`host-tunnel`, `level`).
    pub key: String,
    /// Why only the node decides it.
    pub needs: Needs,
}

/// What a run says of `keys` before it sends them: a key the schema does not know
/// always (sent as given); one of [`INTRODUCED`] only in check mode, which cannot learn
/// whether the node has it (a run that sends it learns it from the node's answer).
pub fn notes(keys: &[Versioned], check_mode: bool) -> Vec<String> {
    keys.iter()
        .filter_map(|Versioned { at, key, needs, .. }| match needs {
            Needs::Release(i) if check_mode => Some(format!(
                "{at}: {key} came with qemu-server {} (PVE {}); whether the target node's qemu-server has it only that node can say, so it is sent and the node decides (check mode sends nothing)",
                i.qemu_server, i.pve
            )),
            Needs::Release(_) => None,
            Needs::Unknown { .. } => Some(format!(
                "{at}: {key} is not in the PVE {SCHEMA_VERSION} schema this collection knows; sent as given, for the target node's qemu-server to decide"
            )),
        })
        .collect()
}

/// A node's refusal of keys of the task, in the task's terms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// What the user reads: each refused key, the node, PVE's words and the fix.
    pub message: String,
    /// The parameters of the 400's `errors` the message explains.
    pub params: Vec<String>,
}

/// The keys of `keys` that `node` refused in a 400's `errors` (parameter -> PVE's
/// text): a sub-key as pve-common's `parse_property_string` refuses it (`invalid key in
/// comma-separated list property: <key>`), a key of its own as `validate` does
/// (`property is not defined in schema ...`). `None` when the 400 is about none of them.
pub fn refusal(keys: &[Versioned], node: &str, errors: &Map<String, Value>) -> Option<Refusal> {
    let mut messages = Vec::new();
    let mut params = Vec::new();
    for v in keys {
        let Some(text) = errors.get(&v.param).and_then(Value::as_str) else {
            continue;
        };
        let text = text.trim_end();
        let refused = text.ends_with(&format!("invalid key in comma-separated list property: {}", v.key))
            || (v.param == v.key && text.contains("not defined in schema"));
        if !refused {
            continue;
        }
        let Versioned { at, key, needs, .. } = v;
        messages.push(match needs {
            Needs::Release(i) => format!(
                "{at}: node {node} refused {key} ({text}): its qemu-server is older than {}, the release that brought {key} (with PVE {}); upgrade qemu-server on {node} (apt full-upgrade), or leave {key} out",
                i.qemu_server, i.pve
            ),
            Needs::Unknown { hint } => format!(
                "{at}: node {node} refused {key} ({text}): neither its qemu-server nor the PVE {SCHEMA_VERSION} schema this collection knows has it ({hint}); check the spelling, or upgrade qemu-server on {node} if a newer release brought {key}"
            ),
        });
        if !params.contains(&v.param) {
            params.push(v.param.clone());
        }
    }
    (!messages.is_empty()).then(|| Refusal {
        message: format!(
            "{}. PVE checks the parameters before acting, so this call changed nothing",
            messages.join("; ")
        ),
        params,
    })
}

/// The sub-keys written in `text` (the value of config key `param`, in format `f`)
/// that only the node decides: those of [`INTRODUCED`] as written (an old alias like
/// `freeze-fs-on-backup` is not one) and those `f` does not know.
pub fn sub_keys(at: &str, param: &str, text: &str, f: &Format) -> Vec<Versioned> {
    let written = text
        .split(',')
        .filter_map(|part| part.split_once('=').map(|(k, _)| k.trim()));
    written
        .filter_map(|key| {
            let needs = match INTRODUCED.iter().find(|i| i.config_key == f.name && i.key == key) {
                Some(i) => Needs::Release(i),
                None if f.raw_key(key).is_none() => Needs::Unknown {
                    hint: format!(
                        "known keys: {}",
                        f.canonical_keys().map(|k| k.name).collect::<Vec<_>>().join(", ")
                    ),
                },
                None => return None,
            };
            Some(Versioned {
                at: at.to_string(),
                param: param.to_string(),
                key: key.to_string(),
                needs,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::propstring::formats::{AGENT, CPU, NET};
    use serde_json::json;

    fn unknown(key: &str) -> Versioned {
        Versioned {
            at: "extra_config".into(),
            param: key.into(),
            key: key.into(),
            needs: Needs::Unknown { hint: "a hint".into() },
        }
    }

    fn introduced(key: &str) -> Versioned {
        let i = INTRODUCED.iter().find(|i| i.key == key).unwrap();
        let (at, param) = match i.config_key {
            "net[n]" => ("net.net0", "net0"),
            other => (other, other),
        };
        Versioned {
            at: at.into(),
            param: param.into(),
            key: key.into(),
            needs: Needs::Release(i),
        }
    }

    fn errors(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn no_key_is_refused_before_it_is_sent_and_check_mode_says_the_node_decides() {
        let keys = [introduced("host-tunnel"), introduced("level"), unknown("newkey")];
        // (check mode, the keys a note is given for)
        let table: &[(bool, &[&str])] = &[(true, &["host-tunnel", "level", "newkey"]), (false, &["newkey"])];
        for (check_mode, noted) in table {
            let got = notes(&keys, *check_mode);
            assert_eq!(got.len(), noted.len(), "check_mode={check_mode}: {got:?}");
            for (note, key) in got.iter().zip(*noted) {
                assert!(note.contains(&format!(": {key} ")), "{note}");
                assert!(!note.contains("upgrade") && !note.contains("refuse"), "{note}");
            }
        }
        assert_eq!(
            notes(&[introduced("host-tunnel")], true),
            ["net.net0: host-tunnel came with qemu-server 9.1.18 (PVE 9.2.4); whether the target node's qemu-server has it only that node can say, so it is sent and the node decides (check mode sends nothing)"]
        );
        assert_eq!(
            notes(&[unknown("newkey")], false),
            ["extra_config: newkey is not in the PVE 9.1 schema this collection knows; sent as given, for the target node's qemu-server to decide"]
        );
    }

    #[test]
    fn a_node_s_refusal_names_the_key_the_node_and_the_fix() {
        let keys = [introduced("host-tunnel"), introduced("level")];
        let got = refusal(
            &keys,
            "pve2",
            &errors(json!({"net0": "invalid format - invalid key in comma-separated list property: host-tunnel\n"})),
        )
        .unwrap();
        assert_eq!(
            got.message,
            "net.net0: node pve2 refused host-tunnel (invalid format - invalid key in comma-separated list property: host-tunnel): its qemu-server is older than 9.1.18, the release that brought host-tunnel (with PVE 9.2.4); upgrade qemu-server on pve2 (apt full-upgrade), or leave host-tunnel out. PVE checks the parameters before acting, so this call changed nothing"
        );
        assert_eq!(got.params, ["net0"]);
        let got = refusal(
            &[unknown("newkey")],
            "pve1",
            &errors(json!({"newkey": "property is not defined in schema and the schema does not allow additional properties"})),
        )
        .unwrap();
        assert_eq!(
            got.message,
            "extra_config: node pve1 refused newkey (property is not defined in schema and the schema does not allow additional properties): neither its qemu-server nor the PVE 9.1 schema this collection knows has it (a hint); check the spelling, or upgrade qemu-server on pve1 if a newer release brought newkey. PVE checks the parameters before acting, so this call changed nothing"
        );
    }

    #[test]
    fn only_a_refusal_of_the_task_s_own_newer_keys_is_explained() {
        let keys = [introduced("host-tunnel"), introduced("level")];
        // (the 400's errors, the parameters explained; none: PVE's answer stays as it is)
        let table: Vec<(Value, Option<Vec<&str>>)> = vec![
            (json!({"memory": "value must have a minimum value of 16"}), None),
            (
                json!({"net0": "invalid format - format error\nnet0.model: bad\n"}),
                None,
            ),
            (
                json!({"net0": "invalid format - invalid key in comma-separated list property: colour\n"}),
                None,
            ),
            (
                json!({"cpu": "invalid format - invalid key in comma-separated list property: level\n"}),
                Some(vec!["cpu"]),
            ),
            (
                json!({"cpu": "invalid format - invalid key in comma-separated list property: level\n",
                       "net0": "invalid format - invalid key in comma-separated list property: host-tunnel\n",
                       "memory": "value must have a minimum value of 16"}),
                Some(vec!["net0", "cpu"]),
            ),
            (json!({"level": "property is not defined in schema"}), None),
        ];
        for (errs, explained) in table {
            let got = refusal(&keys, "pve1", &errors(errs.clone()));
            assert_eq!(
                got.as_ref()
                    .map(|r| r.params.iter().map(String::as_str).collect::<Vec<_>>()),
                explained,
                "{errs}"
            );
        }
    }

    #[test]
    fn sub_keys_are_the_introduced_and_the_unknown_ones_as_written() {
        let found = sub_keys("net.net0", "net0", "virtio,bridge=vmbr0,host-tunnel=0,speed=10", &NET);
        assert_eq!(
            found.iter().map(|v| v.key.as_str()).collect::<Vec<_>>(),
            ["host-tunnel", "speed"]
        );
        assert!(found.iter().all(|v| v.param == "net0"));
        assert!(matches!(found[0].needs, Needs::Release(i) if i.qemu_server == "9.1.18"));
        assert!(matches!(&found[1].needs, Needs::Unknown { hint } if hint.starts_with("known keys: ")));
        assert!(sub_keys("cpu", "cpu", "host,flags=+aes", &CPU).is_empty());
        assert_eq!(sub_keys("cpu", "cpu", "host,level=30", &CPU)[0].key, "level");
        assert!(
            sub_keys("agent", "agent", "1,freeze-fs-on-backup=0", &AGENT).is_empty(),
            "the old name is not new"
        );
        assert_eq!(sub_keys("agent", "agent", "1,freeze-fs=0", &AGENT)[0].key, "freeze-fs");
    }
}
