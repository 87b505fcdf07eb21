//! What PVE would accept and fail only half-way (or at the next start), checked
//! before anything is written: bridges, the volumes and storages drives name, the
//! task's pool (an EFI disk without OVMF, which needs no read, is a decision's:
//! [`crate::decide::efi`]).

use ferrox_ansible::protocol::Failure;
use ferrox_cluster::{pools, references};
use serde_json::{Map, Value};

use crate::api;
use crate::converge::Changes;
use crate::observe::listing::Listing;
use crate::step::Run;
use crate::task::Config;

/// A new VM (a create's, a clone's) on `node` with the task's `config`: its bridges,
/// its drives' storages and volumes, and its pool, before the first write.
pub(crate) fn check_new_vm(run: &Run, listing: &Listing, node: &str, config: &Config) -> Result<(), Failure> {
    check_bridges(run, node, config.iter())?;
    check_drives(run, listing, node, config.iter())?;
    check_pool(run)
}

/// Bridges named by the NICs the run writes must exist on the node: PVE accepts an
/// unknown bridge and only the next start fails. When the node's bridges cannot be
/// listed (no Sys.Audit), PVE's own checks are left to answer.
pub(crate) fn check_bridges<'v>(
    run: &Run,
    node: &str,
    nets: impl Iterator<Item = (&'v String, &'v String)>,
) -> Result<(), Failure> {
    let wanted: Vec<(String, String)> = nets
        .filter(|(k, _)| crate::converge::nic::is_net_key(k))
        .filter_map(|(k, v)| crate::converge::nic::bridge_of(v).map(|b| (k.clone(), b)))
        .collect();
    if wanted.is_empty() {
        return Ok(());
    }
    let Ok(bridges) = api::bridges(run.client, node) else {
        return Ok(());
    };
    match unknown_bridge(&wanted, &bridges) {
        // PVE leaves out bridges the caller has no SDN privilege on: say so when it may be why.
        Some((key, bridge)) => match run.gate.hidden_bridge_reason(bridge) {
            Some(why) => Err(Failure::new(format!(
                "{key}: bridge {bridge} is not among the bridges node {node} shows ({}): Proxmox VE hides a bridge from callers without an SDN privilege on it, and {why}",
                bridges.join(", ")
            ))),
            None => Err(Failure::new(format!(
                "{key}: bridge {bridge} does not exist on node {node} (bridges: {})",
                bridges.join(", ")
            ))),
        },
        None => Ok(()),
    }
}

/// The storages, ISO images and volumes the drive entries a run writes name must be
/// there (`common::cluster::references`): PVE would fail half-way, and a dry run would say yes.
pub(crate) fn check_drives<'v>(
    run: &Run,
    listing: &Listing,
    node: &str,
    entries: impl Iterator<Item = (&'v String, &'v String)>,
) -> Result<(), Failure> {
    references::verify_listed(
        run.client,
        node,
        &listing.storages,
        entries.map(|(k, v)| (k.as_str(), v.as_str())),
        &run.task.assume,
    )
    .map_err(Failure::new)
}

/// The entries of `changes` that name a volume the VM does not have there already (an
/// option change of an attached disk references nothing new).
pub(crate) fn newly_referenced<'c>(
    changes: &'c Changes,
    current: &'c Map<String, Value>,
) -> impl Iterator<Item = (&'c String, &'c String)> {
    use crate::converge::disk::volume_of;
    changes.set.iter().filter(move |(k, v)| {
        let now = current.get(*k).map(crate::converge::text_of);
        now.as_deref().and_then(|c| volume_of(k, c)) != volume_of(k, v) || now.is_none()
    })
}

/// The task's `pool` must exist (one pool read, only when the task names one).
/// A pool the caller may not audit is left to PVE's own check.
pub(crate) fn check_pool(run: &Run) -> Result<(), Failure> {
    let Some(pool) = run.task.pool.as_deref().filter(|p| !run.task.assume.pool(p)) else {
        return Ok(());
    };
    if !matches!(pools::read(run.client, pool), Ok(None)) {
        return Ok(());
    }
    let known = pools::ids(run.client).unwrap_or_default();
    Err(Failure::new(format!(
        "pool '{pool}' does not exist (pools: {}); create it first (pveum pool add {pool}) or leave pool out{}",
        if known.is_empty() {
            "none visible".to_string()
        } else {
            known.join(", ")
        },
        run.task.assume.hint("pools", pool)
    )))
}

/// The first NIC whose bridge is not among `bridges`.
pub(crate) fn unknown_bridge<'a>(wanted: &'a [(String, String)], bridges: &[String]) -> Option<&'a (String, String)> {
    wanted.iter().find(|(_, b)| !bridges.contains(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_bridges_are_found() {
        let wanted = vec![
            ("net0".to_string(), "vmbr0".to_string()),
            ("net1".to_string(), "vmbr9".to_string()),
        ];
        let bridges = vec!["vmbr0".to_string(), "vmbr1".to_string()];
        assert_eq!(
            unknown_bridge(&wanted, &bridges),
            Some(&("net1".to_string(), "vmbr9".to_string()))
        );
        assert_eq!(unknown_bridge(&wanted[..1], &bridges), None);
    }
}
