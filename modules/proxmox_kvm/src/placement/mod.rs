//! `placement`: ferrox chooses the node of a VM it creates or clones when the task names
//! no `node`. Only what is created is placed: a VM that exists (by vmid or name) is found
//! wherever it is and converged there, never moved.
//!
//! The candidates ([`gather`]) are read from the listing the task reads anyway
//! (`/cluster/resources`: nodes with `maxmem`/`maxcpu`, every guest's configured size,
//! storages per node) plus the run's earlier placements ([`ferrox_run::placements`]);
//! bridges are read per node (`GET /nodes/{node}/network`) only for the best-ranked
//! candidates, until one has them. The choice ([`choose`]) ranks by the strategy; `spread`
//! is [`rendezvous`] hashing of the name.
//!
//! "Free" memory is the node's `maxmem` less the configured `maxmem` of every guest on it,
//! running or stopped: PVE reserves nothing for a stopped guest, but starting it needs its
//! memory, so a node whose stopped guests fill it is full. No node is configured past
//! its memory unless `max_memory_ratio` allows more ([`choose`]).
//!
//! A storage the task names must be usable on the node: listed there, and active
//! (`/cluster/resources` lists a storage the node cannot activate as `status: unknown`);
//! a disabled storage is listed nowhere, so only then is one node's storage listing read
//! to tell a disabled storage from one the caller may not see.

pub(crate) mod choose;
pub(crate) mod gather;
pub(crate) mod rendezvous;

use std::collections::BTreeSet;

use ferrox_ansible::options::Choice;
use ferrox_ansible::protocol::{Failure, Output};
use ferrox_cluster::listing_probe::LookupTargets;
use ferrox_cluster::load::Load;
use ferrox_cluster::vm::{self, Guest, GuestType, ListingQuery};
use ferrox_run::placements::Reservation;
use serde_json::{json, Value};

use crate::api;
use crate::observe::{self, listing::Listing};
use crate::step::Run;
pub(crate) use crate::task::placement::{Placement, Strategy};
use crate::task::{KvmTask, Operation};
use choose::{Candidate, Exclusion, Want};

/// Default memory of a VM whose task and source name none (PVE's `memory` default), MiB.
const PVE_DEFAULT_MEMORY_MIB: u64 = 512;
const MIB: u64 = 1 << 20;

/// The node chosen, what the VM takes, and why (the result's `placement`).
#[derive(Debug, Clone)]
pub(crate) struct Placed {
    pub(crate) node: String,
    pub(crate) memory: u64,
    pub(crate) cpus: u64,
    pub(crate) why: Value,
}

/// Chooses the node when the task creates a VM without naming one; the task as placed
/// (`node`, and a clone's `target` when it ends away from its source) for the rest of
/// the run, and the choice. `None`: nothing to place (the VM exists, or the task names
/// its node). Takes the listing's load.
pub(crate) fn place(
    run: &Run,
    listing: &mut Listing,
    reservations: &[Reservation],
) -> Result<Option<(KvmTask, Placed)>, Failure> {
    let Some(p) = run.task.placement.clone().filter(|_| run.task.chooses_node()) else {
        return Ok(None);
    };
    let source = match run.task.operation {
        Operation::Clone => match clone_sources(run, listing)? {
            Some(sources) => Some(sources),
            None => return Ok(None),
        },
        _ if observe::target(run, listing)?.is_some() => return Ok(None),
        _ => None,
    };
    let load = match listing.load.take() {
        Some(l) => l,
        None => {
            let nothing = LookupTargets::nothing();
            let query = ListingQuery::whole_cluster()
                .only(&nothing)
                .with_others_thin()
                .with_load();
            vm::read(run.client, &query)
                .map_err(|e| Failure::new(format!("placement: Unable to retrieve the cluster's nodes: {e}")))?
                .load
                .unwrap_or_default()
        }
    };
    let placed = choose_node(run, listing, &p, &load, reservations, source.as_deref())?;
    let mut task = run.task.clone();
    if let Some(sources) = source.as_deref() {
        let local = sources.iter().any(|g| *g.node == *placed.node);
        task.clone.target = (!local).then(|| placed.node.clone());
    }
    task.node = Some(placed.node.clone());
    Ok(Some((task, placed)))
}

/// The guests a clone may be made from (`vmid`, else every QEMU VM named `clone`);
/// `None` when the clone exists already (it is converged where it is).
fn clone_sources(run: &Run, listing: &Listing) -> Result<Option<Vec<Guest>>, Failure> {
    let task = run.task;
    let exists = match task.clone.newid {
        Some(id) => observe::qemu_by_vmid(run.client, listing, id)?.is_some(),
        None => task.given_name().is_some_and(|n| {
            listing.guests.iter().any(|g| {
                g.kind == GuestType::Qemu && g.name.as_deref() == Some(n) && !g.template && n != task.clone.source
            })
        }),
    };
    if exists {
        return Ok(None);
    }
    let sources: Vec<Guest> = match task.vmid {
        Some(id) => observe::qemu_by_vmid(run.client, listing, id)?.into_iter().collect(),
        None => listing
            .guests
            .iter()
            .filter(|g| g.kind == GuestType::Qemu && g.name.as_deref() == Some(&task.clone.source))
            .cloned()
            .collect(),
    };
    if sources.is_empty() {
        return Err(Failure::new(format!(
            "VM with name = {} does not exist in cluster",
            task.clone.source
        )));
    }
    Ok(Some(sources))
}

/// The size of the new VM: `memory` (MiB, or `current=` of PVE 9's property string) and
/// `cores` × `sockets`, else the clone source's listed size, else PVE's defaults.
fn size(task: &KvmTask, load: &Load, source: Option<&[Guest]>) -> (u64, u64) {
    let num = |k: &str| {
        task.config.get(k).and_then(|v| {
            let v = v.split(',').find_map(|p| p.strip_prefix("current=")).unwrap_or(v);
            v.trim().parse::<u64>().ok()
        })
    };
    let listed = source.and_then(|s| s.first()).and_then(|g| load.guest(g.vmid));
    let memory = num("memory")
        .map(|m| m * MIB)
        .or(listed.and_then(|g| g.maxmem))
        .unwrap_or(PVE_DEFAULT_MEMORY_MIB * MIB);
    let cpus = match (num("cores"), num("sockets")) {
        (None, None) => listed.and_then(|g| g.maxcpu).unwrap_or(1),
        (c, s) => c.unwrap_or(1) * s.unwrap_or(1),
    };
    (memory, cpus)
}

/// The candidates, ranked; the first with the task's bridges wins.
fn choose_node(
    run: &Run,
    listing: &Listing,
    p: &Placement,
    load: &Load,
    reservations: &[Reservation],
    source: Option<&[Guest]>,
) -> Result<Placed, Failure> {
    let task = run.task;
    let (memory, cpus) = size(task, load, source);
    let name = task.given_name().unwrap_or_default();
    let storages = gather::storages_named(task.config.iter(), task.storage.as_deref());
    let needs = gather::Needs {
        nodes: p.nodes.as_deref(),
        disabled: disabled_storages(run, load, &listing.storages, &storages),
        storages,
        source_nodes: source.and_then(|s| source_nodes(task, s)),
        group: p.group.as_deref(),
    };
    let (cands, mut excluded) = gather::candidates(load, &listing.storages, reservations, &needs);
    let want = Want {
        name,
        memory,
        cpus,
        strategy: p.strategy,
        grouped: p.group.is_some(),
        max_memory_ratio: p.max_memory_ratio,
    };
    let (ranked, full) = choose::rank(cands, &want);
    excluded.extend(full);
    let nets = bridges_named(task);
    let mut chosen = None;
    for c in &ranked {
        match missing_bridge(run, &c.node, &nets) {
            Some(reason) => excluded.push(Exclusion {
                node: c.node.clone(),
                reason,
            }),
            None => {
                chosen = Some(c.clone());
                break;
            }
        }
    }
    let Some(chosen) = chosen else {
        excluded.sort_by(|a, b| a.node.cmp(&b.node));
        let what = if name.is_empty() {
            "the new VM".to_string()
        } else {
            format!("VM {name}")
        };
        return Err(Failure::new(choose::none_left(&what, &excluded)));
    };
    Ok(Placed {
        node: chosen.node.clone(),
        memory,
        cpus,
        why: why(p, &chosen, &ranked, &excluded, memory, cpus),
    })
}

/// The storages the task names that storage.cfg disables. `/cluster/resources` leaves a
/// disabled storage out on every node (pve-manager: `storage_check_enabled`), so only a
/// storage it lists nowhere is looked up, in one online node's storage listing, which
/// shows it with `enabled: 0`. A listing that cannot be read leaves it to PVE.
fn disabled_storages(run: &Run, load: &Load, listed: &[vm::Storage], named: &[(String, String)]) -> Vec<String> {
    let unlisted: Vec<&String> = named
        .iter()
        .map(|(s, _)| s)
        .filter(|s| !listed.iter().any(|l| l.storage == **s))
        .collect();
    let Some((node, _)) = load.nodes.iter().find(|(_, c)| c.status == "online") else {
        return Vec::new();
    };
    if unlisted.is_empty() {
        return Vec::new();
    }
    let Ok(listing) = api::node_storages(run.client, node) else {
        return Vec::new();
    };
    let off = |v: &Value| v.as_u64() == Some(0) || v.as_bool() == Some(false) || v.as_str() == Some("0");
    listing
        .as_array()
        .into_iter()
        .flatten()
        .filter(|s| off(&s["enabled"]))
        .filter_map(|s| s["storage"].as_str())
        .filter(|s| unlisted.iter().any(|u| u.as_str() == *s))
        .map(str::to_string)
        .collect()
}

/// Where a clone can be made: a linked clone only beside its template, and with one
/// source per node (same name) only on those nodes, each cloning its own.
fn source_nodes(task: &KvmTask, sources: &[Guest]) -> Option<(BTreeSet<String>, String)> {
    let nodes: BTreeSet<String> = sources.iter().map(|g| g.node.to_string()).collect();
    let list = nodes.iter().cloned().collect::<Vec<_>>().join(", ");
    if !task.clone.full {
        return Some((nodes, format!("a linked clone stays on its template's node ({list})")));
    }
    (sources.len() > 1).then(|| {
        let why = format!(
            "holds no VM named {} (one per node: a clone is made from the node's own; on {list})",
            task.clone.source
        );
        (nodes, why)
    })
}

/// `(netN, bridge)` of the task's NICs.
fn bridges_named(task: &KvmTask) -> Vec<(String, String)> {
    task.config
        .iter()
        .filter(|(k, _)| crate::converge::nic::is_net_key(k))
        .filter_map(|(k, v)| crate::converge::nic::bridge_of(v).map(|b| (k.clone(), b)))
        .collect()
}

/// Why `node` cannot carry the task's NICs (one `GET /nodes/{node}/network`); a node
/// whose bridges cannot be listed is left to PVE, as `node` tasks are.
fn missing_bridge(run: &Run, node: &str, nets: &[(String, String)]) -> Option<String> {
    if nets.is_empty() {
        return None;
    }
    let bridges = api::bridges(run.client, node).ok()?;
    crate::checks::unknown_bridge(nets, &bridges).map(|(key, b)| format!("lacks bridge {b} ({key})"))
}

/// The result's `placement`: the strategy, the numbers compared, what was left out.
fn why(
    p: &Placement,
    chosen: &Candidate,
    ranked: &[Candidate],
    excluded: &[Exclusion],
    memory: u64,
    cpus: u64,
) -> Value {
    let strategy = Strategy::ALL
        .iter()
        .find(|(_, s)| *s == p.strategy)
        .map_or("", |(n, _)| n);
    let candidates: Vec<Value> = ranked
        .iter()
        .map(|c| {
            json!({
                "node": c.node, "maxmem": c.maxmem, "maxcpu": c.maxcpu,
                "configured_memory": c.configured_memory, "configured_cpus": c.configured_cpus,
                "free_memory": c.free_memory() as i64, "group_members": c.group_members,
            })
        })
        .collect();
    let excluded: serde_json::Map<String, Value> = excluded
        .iter()
        .map(|e| (e.node.clone(), Value::from(e.reason.clone())))
        .collect();
    json!({
        "node": chosen.node, "strategy": strategy, "group": p.group,
        "memory": memory, "cpus": cpus, "candidates": candidates, "excluded": excluded,
    })
}

/// The node the listing shows the result's VM on (`vmid`), if it lists it: where a VM
/// found existing is, or where another run created the one this task then adopted.
pub(crate) fn listed_node(out: &Output, listing: &Listing) -> Option<String> {
    let vmid = out.get("vmid").and_then(Value::as_u64)?;
    listing
        .guests
        .iter()
        .find(|g| u64::from(g.vmid) == vmid)
        .map(|g| g.node.to_string())
}

/// The result of a task that could place but found its VM existing (by name, or made
/// by another run at the same moment): `node` says where it is, as for a placed one.
pub(crate) fn found_existing(out: Output, node: Option<String>) -> Output {
    match node {
        Some(node) if out.get("node").is_none() => out.with("node", node),
        _ => out,
    }
}

/// The result of a placed task: `node` (where the listing shows the VM, else the node
/// chosen) and `placement`, the node in the diff, and the reservation the run keeps
/// (only for a VM this task made).
pub(crate) fn finish(
    out: Output,
    placed: &Placed,
    listed: Option<String>,
    group: Option<&str>,
    name: Option<&str>,
) -> (Output, Option<Reservation>) {
    let created = out.get("changed") == Some(&Value::Bool(true));
    let vmid = out
        .get("vmid")
        .and_then(Value::as_u64)
        .and_then(|v| u32::try_from(v).ok());
    let node = listed.unwrap_or_else(|| placed.node.clone());
    let mut out = out.with("node", &node).with("placement", &placed.why);
    if let Some(mut diff) = out.take_diff() {
        diff.change("node", None, Some(Value::from(node.clone())));
        out = out.with_diff(diff);
    }
    let reservation = vmid.filter(|_| created).map(|vmid| Reservation {
        vmid,
        node,
        name: name.map(str::to_string),
        group: group.map(str::to_string),
        memory: placed.memory,
        cpus: placed.cpus,
    });
    (out, reservation)
}
