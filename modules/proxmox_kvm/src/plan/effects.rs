//! What a check-mode run of this module adds to the playbook run's plan: each action
//! of the run's [`Plan`] as the [`Effect`] it would have, with values only PVE decides
//! left unknown. The plan's later tasks read the cluster through these.

use ferrox_cluster::tags::TagCase;
use ferrox_dryrun::Effect;
use ferrox_pve_rules::propstring::{self, formats};
use ferrox_pve_rules::unknown::{after_write, config_after_write};
use ferrox_pve_rules::{boot, snapshot};
use serde_json::{Map, Value};

use crate::converge::{disk::is_disk_key, nic::is_net_key, text_of, Changes};
use crate::plan::{Action, Plan, PowerCall};

/// What the driver knew when it planned, beyond the actions.
#[derive(Debug, Default, Clone)]
pub(crate) struct Known {
    /// The VM's config the plan was made against (existing VM).
    pub(crate) current: Option<Map<String, Value>>,
    /// The config a clone copies from its source.
    pub(crate) clone_source: Option<Map<String, Value>>,
    /// Keys a running VM keeps pending (predicted), with their new values.
    pub(crate) pending: Map<String, Value>,
    /// Deletions a running VM keeps pending (predicted).
    pub(crate) pending_deletes: Vec<String>,
}

/// The pool a create or clone puts the new VM in (its `pool` field).
fn placed_in_pool(vmid: u32, node: &str, form: &[(String, String)]) -> Option<Effect> {
    form.iter().find(|(k, _)| k == "pool").map(|(_, pool)| Effect::Pool {
        vmid,
        node: node.to_string(),
        pool: Some(pool.clone()),
    })
}

/// The effects of `plan`'s actions, in order, on the VM named `name`, with what the
/// plan's `known` holds of the VM's config, a clone's source and what stays pending.
pub(crate) fn effects(plan: &Plan, name: Option<&str>, tag_case: &TagCase) -> Vec<Effect> {
    let known = &plan.known;
    let vmid = plan.vm.vmid;
    // The node the VM is on at each step (a clone moved to another node changes it).
    let mut node = plan.vm.node.as_str();
    let mut out: Vec<Effect> = Vec::new();
    for action in &plan.actions {
        match action {
            Action::Create { form, .. } => out.extend(created(vmid, node, name, form)),
            Action::Clone { source, form, .. } => {
                let config = clone_config(known.clone_source.as_ref(), name);
                out.extend(cloned(vmid, node, name, source.vmid, config, form));
            }
            Action::WaitListed => {}
            Action::Converge {
                changes,
                wanted,
                recompute,
                ..
            } => {
                // A clone or restore is converged against what it will be, not its source.
                let effect = match made_config(&out).filter(|_| *recompute) {
                    Some(config) => {
                        let changes = crate::converge::changes(&config, wanted, vmid, tag_case)
                            .unwrap_or_else(|_| changes.clone());
                        updated(vmid, node, &changes, Some(&config), &known.pending)
                    }
                    None => updated(vmid, node, changes, known.current.as_ref(), &known.pending),
                };
                out.push(effect);
            }
            Action::Power(call) => out.push(powered(vmid, node, call)),
            Action::RebootIfPending { cloud_init } if *cloud_init || !known.pending.is_empty() => {
                out.push(rebooted_for_pending(vmid, node))
            }
            Action::RebootIfPending { .. } => {}
            Action::Template => out.push(Effect::Template {
                vmid,
                node: node.to_string(),
            }),
            Action::Destroy { .. } => out.push(Effect::Remove {
                vmid,
                node: node.to_string(),
            }),
            Action::PoolMove { to, .. } => out.push(Effect::Pool {
                vmid,
                node: node.to_string(),
                pool: Some(to.clone()),
            }),
            Action::Migrate { target, .. } => out.push(migrated(vmid, node, target)),
            Action::MoveClone { from, to, .. } => {
                out.push(migrated(vmid, from, to));
                node = to.as_str();
            }
            Action::DeleteKeys(keys) => out.push(deleted(vmid, node, keys, &known.pending_deletes)),
            Action::RevertKeys(keys) => out.push(reverted(vmid, node, keys)),
        }
    }
    out
}

/// The config of the VM an earlier effect makes (a create, restore or clone).
fn made_config(so_far: &[Effect]) -> Option<Map<String, Value>> {
    so_far.iter().rev().find_map(|e| match e {
        Effect::Create { config, .. } => Some(config.clone()),
        _ => None,
    })
}

/// A create or restore: the form's config keys as PVE stores them, and the pool the
/// form puts the VM in.
fn created(vmid: u32, node: &str, name: Option<&str>, form: &[(String, String)]) -> Vec<Effect> {
    let config: Map<String, Value> = form
        .iter()
        .filter(|(k, _)| !formats::REQUEST_PARAMS.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), Value::String(v.clone())))
        .collect();
    let field = |key: &str| form.iter().any(|(k, v)| k == key && v == "1");
    let mut config = config_after_write(&config);
    // A restore's config is the backup's; a create without `boot` gets qemu-server's default.
    let restore = form.iter().any(|(k, _)| k == "archive");
    if !restore && !config.contains_key("boot") {
        if let Some(order) = boot::default_order(&config) {
            config.insert("boot".into(), Value::String(order));
        }
    }
    let create = Effect::Create {
        vmid,
        node: node.to_string(),
        name: name.map(str::to_string),
        config,
        clone_of: None,
        ha_state: field("ha-managed").then(|| if field("start") { "started" } else { "stopped" }.to_string()),
    };
    std::iter::once(create)
        .chain(placed_in_pool(vmid, node, form))
        .collect()
}

/// A clone of `source` with `config`, and the pool the form puts it in.
fn cloned(
    vmid: u32,
    node: &str,
    name: Option<&str>,
    source: u32,
    config: Map<String, Value>,
    form: &[(String, String)],
) -> Vec<Effect> {
    let create = Effect::Create {
        vmid,
        node: node.to_string(),
        name: name.map(str::to_string),
        config,
        clone_of: Some(source),
        ha_state: None,
    };
    std::iter::once(create)
        .chain(placed_in_pool(vmid, node, form))
        .collect()
}

/// An update's config writes as PVE will store them (a disk keeps its size, a grown
/// disk has its new one) against `current`; of the keys a running VM keeps pending
/// (`pending_keys`), those written are marked pending.
fn updated(
    vmid: u32,
    node: &str,
    changes: &Changes,
    current: Option<&Map<String, Value>>,
    pending_keys: &Map<String, Value>,
) -> Effect {
    let mut e = Effect::config(vmid, node);
    if let Effect::Config { set, pending, what, .. } = &mut e {
        for (k, v) in &changes.set {
            let before = current.and_then(|c| c.get(k)).map(text_of);
            set.insert(
                k.clone(),
                Value::String(keep_size(k, before.as_deref(), &after_write(k, v))),
            );
        }
        for g in &changes.grow {
            let base = set
                .get(&g.key)
                .map(text_of)
                .or_else(|| current.and_then(|c| c.get(&g.key)).map(text_of))
                .unwrap_or_default();
            set.insert(g.key.clone(), Value::String(with_size(&g.key, &base, &g.to)));
            what.push(format!("grow {} from {} to {}", g.key, g.from, g.to));
        }
        pending.extend(pending_keys.keys().filter(|k| set.contains_key(*k)).cloned());
        if !changes.set.is_empty() {
            what.push(format!(
                "set {}",
                changes.set.keys().cloned().collect::<Vec<_>>().join(", ")
            ));
        }
    }
    e
}

/// The power state a call leads to, and whether it applies pending changes.
fn powered(vmid: u32, node: &str, call: &PowerCall) -> Effect {
    let (status, applies_pending) = match call {
        PowerCall::Start | PowerCall::Resume | PowerCall::Reboot => ("running", true),
        PowerCall::Reset => ("running", false),
        PowerCall::Shutdown { .. } => ("stopped", false),
        PowerCall::Suspend { to_disk: false } => ("paused", false),
        PowerCall::Suspend { to_disk: true } => ("hibernated", false),
    };
    Effect::Power {
        vmid,
        node: node.to_string(),
        status: status.into(),
        applies_pending,
    }
}

/// A reboot that applies what an update left pending.
fn rebooted_for_pending(vmid: u32, node: &str) -> Effect {
    Effect::Power {
        vmid,
        node: node.to_string(),
        status: "running".into(),
        applies_pending: true,
    }
}

/// The VM moved from `node` to `to`.
fn migrated(vmid: u32, node: &str, to: &str) -> Effect {
    Effect::Migrate {
        vmid,
        node: node.to_string(),
        to: to.to_string(),
    }
}

/// Config keys deleted; the deletions a running VM keeps pending are marked.
fn deleted(vmid: u32, node: &str, keys: &[String], pending_deletes: &[String]) -> Effect {
    let mut e = Effect::config(vmid, node);
    if let Effect::Config {
        delete, pending, what, ..
    } = &mut e
    {
        delete.extend(keys.iter().cloned());
        pending.extend(pending_deletes.iter().cloned());
        what.push(format!("delete {}", keys.join(", ")));
    }
    e
}

/// Pending changes of config keys reverted.
fn reverted(vmid: u32, node: &str, keys: &[String]) -> Effect {
    let mut e = Effect::config(vmid, node);
    if let Effect::Config { revert, what, .. } = &mut e {
        revert.extend(keys.iter().cloned());
        what.push(format!("revert pending {}", keys.join(", ")));
    }
    e
}

/// A clone's config: the source's, with what PVE gives every clone anew (MACs,
/// volumes, the SMBIOS uuid, the VM generation id) unknown, and not a template.
fn clone_config(source: Option<&Map<String, Value>>, name: Option<&str>) -> Map<String, Value> {
    let mut config = Map::new();
    for (k, v) in source.into_iter().flatten() {
        if matches!(k.as_str(), "template" | "digest" | "lock" | "vmgenid" | "meta") || snapshot::is_unused_disk(k) {
            continue;
        }
        let text = text_of(v);
        let value = if is_net_key(k) {
            renew(k, &text, "macaddr")
        } else if is_disk_key(k) && !is_shared_medium(&text) {
            renew(k, &text, "file")
        } else if k == "smbios1" {
            renew(k, &text, "uuid")
        } else {
            v.clone()
        };
        config.insert(k.clone(), value);
    }
    if let Some(n) = name {
        config.insert("name".into(), Value::String(n.to_string()));
    }
    config
}

/// A drive a clone shares with its source: an ISO image, an empty or host CD-ROM.
fn is_shared_medium(text: &str) -> bool {
    let file = text.split(',').next().unwrap_or_default();
    matches!(file, "none" | "cdrom")
        || file.starts_with('/')
        || file.split_once(':').is_some_and(|(_, v)| v.starts_with("iso/"))
}

/// `text` with `field` made unknown (a volume keeps its storage).
fn renew(key: &str, text: &str, field: &str) -> Value {
    let Some(f) = formats::for_config_key(key) else {
        return Value::String(text.to_string());
    };
    let Ok(mut props) = propstring::parse(text, f) else {
        return Value::String(text.to_string());
    };
    let unknown = ferrox_pve_rules::unknown::UNKNOWN;
    let value = match (field, props.get(field)) {
        ("file", Some(file)) => match file.split_once(':') {
            Some((storage, _)) => format!("{storage}:{unknown}"),
            None => return Value::String(text.to_string()),
        },
        _ => unknown.to_string(),
    };
    props.set(field, value);
    Value::String(props.to_canonical(f))
}

/// A disk's new value keeps the size PVE keeps (an option change sends no `size`).
fn keep_size(key: &str, before: Option<&str>, after: &str) -> String {
    let size = before.filter(|_| is_disk_key(key)).and_then(|b| {
        let f = formats::for_config_key(key)?;
        propstring::parse(b, f).ok()?.get("size").map(str::to_string)
    });
    match size {
        Some(s) if !after.contains("size=") => with_size(key, after, &s),
        _ => after.to_string(),
    }
}

fn with_size(key: &str, text: &str, size: &str) -> String {
    let Some(f) = formats::for_config_key(key) else {
        return text.to_string();
    };
    let Ok(mut props) = propstring::parse(text, f) else {
        return text.to_string();
    };
    props.set("size", size);
    props.to_canonical(f)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::Vm;
    use crate::converge::{Changes, Grow};
    use crate::plan::Allocation;
    use serde_json::json;

    fn plan(actions: Vec<Action>) -> Plan {
        let mut p = Plan::new(Vm {
            node: "pve1".into(),
            vmid: 101,
        });
        for a in actions {
            p.push(a);
        }
        p
    }

    #[test]
    fn a_create_plans_the_vm_with_unknown_macs_and_volumes() {
        let form = vec![
            ("pool".to_string(), "web".to_string()),
            ("name".to_string(), "web1".to_string()),
            ("net0".to_string(), "virtio,bridge=vmbr0".to_string()),
            ("scsi0".to_string(), "local-lvm:32".to_string()),
        ];
        let e = effects(
            &plan(vec![Action::Create {
                form,
                allocation: Allocation::NextId,
            }]),
            Some("web1"),
            &TagCase::known(false),
        );
        assert_eq!(
            serde_json::to_value(&e).unwrap(),
            json!([{"kind": "create", "vmid": 101, "node": "pve1", "name": "web1", "config": {
                "name": "web1", "net0": "virtio=(known after apply),bridge=vmbr0", "scsi0": "local-lvm:(known after apply),size=32G",
                "boot": "order=scsi0;net0"}},
                {"kind": "pool", "vmid": 101, "node": "pve1", "pool": "web"}])
        );
    }

    #[test]
    fn an_update_keeps_sizes_grows_and_marks_pending() {
        let mut changes = Changes::default();
        changes
            .set
            .insert("scsi0".into(), "local-lvm:vm-101-disk-0,cache=none".into());
        changes.set.insert("cores".into(), "4".into());
        changes.grow.push(Grow {
            key: "scsi0".into(),
            from: "32G".into(),
            to: "40G".into(),
        });
        let known = Known {
            current: Some(
                json!({"scsi0": "local-lvm:vm-101-disk-0,size=32G", "cores": 2})
                    .as_object()
                    .unwrap()
                    .clone(),
            ),
            pending: json!({"cores": "4"}).as_object().unwrap().clone(),
            ..Known::default()
        };
        let mut update = plan(vec![Action::Converge {
            wanted: Default::default(),
            changes,
            digest: None,
            recompute: false,
        }]);
        update.known = known;
        let e = effects(&update, None, &TagCase::known(false));
        let Effect::Config { set, pending, .. } = &e[0] else {
            panic!("{e:?}")
        };
        assert_eq!(set["scsi0"], json!("local-lvm:vm-101-disk-0,cache=none,size=40G"));
        assert_eq!(pending, &["cores"]);
    }

    #[test]
    fn a_clone_renews_what_pve_renews() {
        let source = json!({"name": "base", "template": 1, "net0": "virtio=BC:24:11:90:00:01,bridge=vmbr0",
            "scsi0": "vmdata:9000/base-9000-disk-0.qcow2,size=3G", "ide2": "vmdata:9000/vm-9000-cloudinit.qcow2,media=cdrom",
            "ide0": "isos:iso/debian.iso,media=cdrom", "smbios1": "uuid=6a1c"});
        let known = Known {
            clone_source: source.as_object().cloned(),
            ..Known::default()
        };
        let src = Vm {
            node: "pve1".into(),
            vmid: 9000,
        };
        let mut clone = plan(vec![Action::Clone {
            source: src,
            form: vec![],
            allocation: Allocation::NextId,
        }]);
        clone.known = known;
        let e = effects(&clone, Some("web2"), &TagCase::known(false));
        let Effect::Create { config, clone_of, .. } = &e[0] else {
            panic!("{e:?}")
        };
        assert_eq!(*clone_of, Some(9000));
        assert_eq!(
            Value::Object(config.clone()),
            json!({"name": "web2", "net0": "virtio=(known after apply),bridge=vmbr0", "scsi0": "vmdata:(known after apply),size=3G",
                   "ide2": "vmdata:(known after apply),media=cdrom", "ide0": "isos:iso/debian.iso,media=cdrom",
                   "smbios1": "uuid=(known after apply)"})
        );
    }

    #[test]
    fn power_calls_and_removal() {
        let e = effects(
            &plan(vec![
                Action::Power(PowerCall::Shutdown {
                    force: true,
                    timeout: 5,
                }),
                Action::Destroy {
                    purge: false,
                    unreferenced_disks: false,
                },
            ]),
            None,
            &TagCase::known(false),
        );
        assert_eq!(
            serde_json::to_value(&e).unwrap(),
            json!([{"kind": "power", "vmid": 101, "node": "pve1", "status": "stopped", "applies_pending": false},
                   {"kind": "remove", "vmid": 101, "node": "pve1"}])
        );
    }
}
