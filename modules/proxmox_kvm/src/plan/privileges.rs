//! A plan's actions as the writes PVE checks privileges for (`common::pve::privileges`).

use ferrox_pve_rules::privileges::Write;
use ferrox_pve_rules::propstring::formats::REQUEST_PARAMS;
use serde_json::{Map, Value};

use crate::plan::{Action, Plan};

fn text(config: &Map<String, Value>, key: &str) -> Option<String> {
    match config.get(key)? {
        Value::String(s) => Some(s.clone()),
        Value::Null => None,
        other => Some(other.to_string()),
    }
}

/// Every write of `plan`, with what its `known` holds of the VM's config (and a clone's
/// source) for the checks that look at the value being replaced.
pub(crate) fn of(plan: &Plan) -> Vec<Write> {
    let known = &plan.known;
    let vmid = plan.vm.vmid;
    let field = |form: &[(String, String)], k: &str| form.iter().find(|(f, _)| f == k).map(|(_, v)| v.clone());
    let mut out = Vec::new();
    for action in &plan.actions {
        match action {
            Action::Create { form, .. } => {
                let config = form
                    .iter()
                    .filter(|(k, _)| !REQUEST_PARAMS.contains(&k.as_str()))
                    .cloned()
                    .collect();
                out.push(Write::Create {
                    vmid,
                    pool: field(form, "pool"),
                    storage: field(form, "storage"),
                    start: field(form, "start").as_deref() == Some("1"),
                    ha_managed: field(form, "ha-managed").as_deref() == Some("1"),
                    config,
                });
            }
            Action::Clone { source, form, .. } => out.push(Write::Clone {
                source: source.vmid,
                vmid,
                pool: field(form, "pool"),
                storage: field(form, "storage"),
                source_config: known
                    .clone_source
                    .iter()
                    .flatten()
                    .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                    .collect(),
            }),
            Action::Converge { changes, .. } => {
                let current = known.current.as_ref();
                let set = changes
                    .set
                    .iter()
                    .map(|(k, v)| {
                        (
                            k.clone(),
                            v.clone(),
                            changes
                                .before
                                .get(k)
                                .cloned()
                                .flatten()
                                .or_else(|| current.and_then(|c| text(c, k))),
                        )
                    })
                    .collect();
                out.push(Write::Config {
                    vmid,
                    set,
                    delete: vec![],
                });
                for g in &changes.grow {
                    let storage = changes
                        .set
                        .get(&g.key)
                        .cloned()
                        .or_else(|| current.and_then(|c| text(c, &g.key)))
                        .and_then(|v| {
                            v.split(',')
                                .next()
                                .and_then(|f| f.split_once(':'))
                                .map(|(s, _)| s.to_string())
                        })
                        .unwrap_or_default();
                    out.push(Write::Resize { vmid, storage });
                }
            }
            Action::DeleteKeys(keys) => {
                let current = known.current.as_ref();
                let delete = keys
                    .iter()
                    .map(|k| (k.clone(), current.and_then(|c| text(c, k)).unwrap_or_default()))
                    .collect();
                out.push(Write::Config {
                    vmid,
                    set: vec![],
                    delete,
                });
            }
            Action::RevertKeys(_) => out.push(Write::Config {
                vmid,
                set: vec![],
                delete: vec![],
            }),
            Action::Power(_) | Action::RebootIfPending { .. } => out.push(Write::Power { vmid }),
            Action::Template => out.push(Write::Template { vmid }),
            Action::Destroy { .. } => out.push(Write::Destroy { vmid }),
            Action::Migrate { .. } => out.push(Write::Migrate {
                vmid,
                targetstorage: None,
            }),
            Action::MoveClone { targetstorage, .. } => out.push(Write::Migrate {
                vmid,
                targetstorage: targetstorage.clone(),
            }),
            Action::PoolMove { from, to } => out.push(Write::PoolMove {
                vmid,
                from: from.clone(),
                to: to.clone(),
            }),
            Action::WaitListed => {}
        }
    }
    out
}
