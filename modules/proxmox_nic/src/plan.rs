//! The plan: from the NIC's current config entry and the task, what would change.
//! Check mode reports it, a real run writes exactly it. Pure: no I/O here.

use serde_json::json;

use ferrox_ansible::diff::Diff;
use ferrox_pve_rules::propstring::{formats::NET, parse, same_value, PropString};
use ferrox_pve_rules::unknown;

use crate::task::{NicTask, Want};

/// The one write a NIC task makes (`PUT .../config`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Action {
    Set { key: String, value: String },
    Delete { key: String },
}

#[derive(Debug, Clone)]
pub(crate) struct Plan {
    pub msg: String,
    pub action: Option<Action>,
    pub changes: Vec<String>,
    /// The entry after the plan (`None`: no NIC).
    pub after: Option<String>,
    /// The MAC after the plan; `None` only for a new NIC whose MAC PVE generates.
    pub mac: Option<String>,
    /// A bridge the NIC is newly attached to (checked before writing).
    pub new_bridge: Option<String>,
    pub warnings: Vec<String>,
    pub diff: Diff,
}

impl Plan {
    pub(crate) fn changed(&self) -> bool {
        self.action.is_some()
    }
}

/// Plans `task` for VM `vmid` whose config holds `current` at the interface key.
pub(crate) fn plan(task: &NicTask, vmid: u32, current: Option<&str>) -> Result<Plan, String> {
    let key = &task.interface;
    let cur = match current {
        Some(text) => Some(parse(text, &NET).map_err(|e| format!("cannot read {key} of VM {vmid} ({text}): {e}"))?),
        None => None,
    };
    let cur_mac = cur.as_ref().and_then(|c| c.get("macaddr")).map(str::to_ascii_uppercase);
    let mut plan = Plan {
        msg: String::new(),
        action: None,
        changes: Vec::new(),
        after: current.map(str::to_string),
        mac: cur_mac.clone(),
        new_bridge: None,
        warnings: Vec::new(),
        diff: Diff::new(format!("VM {vmid}")),
    };
    if task.absent {
        match current {
            Some(text) => {
                plan.msg = format!("Nic {key} deleted on VM with vmid {vmid}");
                plan.action = Some(Action::Delete { key: key.clone() });
                plan.changes.push(format!("delete {key}"));
                plan.after = None;
                plan.diff.change(key, Some(json!(text)), None);
            }
            None => plan.msg = format!("Nic {key} does not exist on VM with vmid {vmid}"),
        }
        return Ok(plan);
    }

    let mut props = cur.clone().unwrap_or_default();
    let model = task
        .model
        .clone()
        .or_else(|| props.get("model").map(str::to_string))
        .unwrap_or_else(|| "virtio".into());
    if props.get("model") != Some(model.as_str()) {
        if let Some(old) = props.get("model") {
            plan.changes.push(format!("model: {old} -> {model}"));
        }
        props.set("model", model.clone());
    }
    if let Some(mac) = &task.mac {
        if cur_mac.as_ref() != Some(mac) {
            if let Some(old) = &cur_mac {
                plan.changes.push(format!("macaddr: {old} -> {mac}"));
            }
            props.set("macaddr", mac.clone());
        }
        plan.mac = Some(mac.clone());
    }
    for (option, want) in &task.options {
        let old = props.get(option).map(str::to_string);
        if *option == "mtu" && model != "virtio" && matches!(want, Want::Set(_)) {
            plan.warnings.push(format!(
                "Ignoring MTU for nic {key} on VM with vmid {vmid}, model should be set to 'virtio': {model} NICs have no MTU setting"
            ));
            continue;
        }
        match want {
            Want::Set(value) if !same_value(&NET, option, old.as_deref(), Some(value)) => {
                if cur.is_some() {
                    plan.changes
                        .push(format!("{option}: {} -> {value}", old.as_deref().unwrap_or("unset")));
                }
                props.set(option, value.clone());
            }
            Want::Remove if old.is_some() => {
                plan.changes
                    .push(format!("{option}: {} -> removed", old.unwrap_or_default()));
                props.remove(option);
            }
            _ => {}
        }
    }
    // A new NIC does not spell out values that are PVE's defaults anyway.
    if cur.is_none() {
        let defaults: Vec<String> = props
            .iter()
            .filter(|(k, v)| same_value(&NET, k, None, Some(v)))
            .map(|(k, _)| k.to_string())
            .collect();
        for k in defaults {
            props.remove(&k);
        }
    }
    let value = props.to_canonical(&NET);
    let bridge_changed = props.get("bridge") != cur.as_ref().and_then(|c| c.get("bridge"));
    plan.new_bridge = props.get("bridge").filter(|_| bridge_changed).map(str::to_string);

    let changed = match &cur {
        None => {
            plan.changes.insert(0, format!("create {key}: {value}"));
            true
        }
        Some(_) => !plan.changes.is_empty(),
    };
    if changed {
        plan.msg = format!("Nic {key} updated on VM with vmid {vmid}");
        plan.action = Some(Action::Set {
            key: key.clone(),
            value: value.clone(),
        });
        // As PVE will store it: a new NIC's MAC is known after apply.
        let shown = unknown::after_write(key, &value);
        plan.diff.change(key, current.map(|c| json!(c)), Some(json!(shown)));
        plan.after = Some(shown);
    } else {
        plan.msg = format!("Nic {key} unchanged on VM with vmid {vmid}");
    }
    Ok(plan)
}

/// The MAC of a NIC entry, upper case.
pub(crate) fn mac_of(entry: &str) -> Option<String> {
    let props: PropString = parse(entry, &NET).ok()?;
    props.get("macaddr").map(str::to_ascii_uppercase)
}

#[cfg(test)]
#[path = "plan_tests.rs"]
mod tests;
