//! The candidates of a placement and the nodes left out before any number is compared:
//! not a node of the cluster, offline, capacity not listed, lacking a storage the task
//! names or having it disabled or not active, or unable to take the clone source. What
//! is configured on each node counts every guest (running or stopped) and every VM this
//! run placed there.

use std::collections::{BTreeMap, BTreeSet};

use ferrox_cluster::load::Load;
use ferrox_cluster::references::{drive_refs, DriveRef};
use ferrox_cluster::vm::Storage;
use ferrox_run::placements::Reservation;

use super::choose::{Candidate, Exclusion};

/// What the nodes are checked against.
pub(crate) struct Needs<'a> {
    /// `placement.nodes`, else every node listed.
    pub(crate) nodes: Option<&'a [String]>,
    /// The storages the task allocates on or reads from, each with the first key naming it.
    pub(crate) storages: Vec<(String, String)>,
    /// The nodes a clone can be made on (`None`: any), and why the others cannot.
    pub(crate) source_nodes: Option<(BTreeSet<String>, String)>,
    /// The placement group, if any.
    pub(crate) group: Option<&'a str>,
    /// Storages of `storages` that storage.cfg disables (`enabled: 0` in a node's
    /// storage listing; `/cluster/resources` leaves them out).
    pub(crate) disabled: Vec<String>,
}

/// The storages the task's drive values allocate on or read from (disks, `efidisk0`,
/// `tpmstate0`, the cloud-init drive, `import-from`), then the task's `storage`.
pub(crate) fn storages_named<'v>(
    entries: impl Iterator<Item = (&'v String, &'v String)>,
    storage: Option<&str>,
) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for (key, value) in entries {
        for r in drive_refs(key, value) {
            let st = match &r {
                DriveRef::Allocate { storage, .. } => storage.clone(),
                DriveRef::Volume { volid, .. } => volid.split(':').next().unwrap_or_default().to_string(),
            };
            if !out.iter().any(|(s, _)| *s == st) {
                out.push((st, key.clone()));
            }
        }
    }
    if let Some(st) = storage.filter(|st| !out.iter().any(|(s, _)| s == st)) {
        out.push((st.to_string(), "storage".into()));
    }
    out
}

/// Candidates with their numbers, and the nodes excluded with their reasons.
pub(crate) fn candidates(
    load: &Load,
    storages: &[Storage],
    reservations: &[Reservation],
    needs: &Needs,
) -> (Vec<Candidate>, Vec<Exclusion>) {
    let listed: Vec<String> = load.nodes.keys().cloned().collect();
    let names = needs.nodes.map_or(listed, <[String]>::to_vec);
    let used = configured(load, reservations, needs.group);
    let mut cands = Vec::new();
    let mut excluded = Vec::new();
    for node in names {
        match exclusion(load, storages, needs, &node) {
            Some(reason) => excluded.push(Exclusion { node, reason }),
            None => {
                let cap = &load.nodes[&node];
                let (mem, cpus, members) = used.get(&node).copied().unwrap_or_default();
                cands.push(Candidate {
                    maxmem: cap.maxmem.unwrap_or(0),
                    maxcpu: cap.maxcpu.unwrap_or(0),
                    configured_memory: mem,
                    configured_cpus: cpus,
                    group_members: members,
                    node,
                });
            }
        }
    }
    (cands, excluded)
}

/// Why `node` cannot take the VM, before numbers are compared.
fn exclusion(load: &Load, storages: &[Storage], needs: &Needs, node: &str) -> Option<String> {
    let Some(cap) = load.nodes.get(node) else {
        return Some("not a node of this cluster".into());
    };
    if cap.status != "online" {
        return Some(format!(
            "{} (placement takes online nodes only)",
            if cap.status.is_empty() {
                "status unknown"
            } else {
                &cap.status
            }
        ));
    }
    // Every strategy holds a node to its memory (see `choose`), so it must be listed.
    if cap.maxmem.is_none() {
        return Some(format!(
            "its memory is not listed: the token needs Sys.Audit on /nodes/{node} for placement to compare nodes"
        ));
    }
    for (storage, key) in &needs.storages {
        if needs.disabled.contains(storage) {
            return Some(format!(
                "storage {storage} is disabled ({key}; storage.cfg: disable, Datacenter > Storage)"
            ));
        }
        let listed_anywhere = storages.iter().any(|s| s.storage == *storage);
        let here = storages.iter().find(|s| s.storage == *storage && s.node == node);
        // A storage the caller cannot see anywhere is left to PVE's own check.
        match here {
            None if listed_anywhere => return Some(format!("lacks storage {storage} ({key})")),
            Some(s) if !s.active => return Some(not_active(storage, key)),
            _ => {}
        }
    }
    match &needs.source_nodes {
        Some((nodes, why)) if !nodes.contains(node) => Some(why.clone()),
        _ => None,
    }
}

/// Why a node whose storage is listed `status: unknown` is left out.
fn not_active(storage: &str, key: &str) -> String {
    format!("storage {storage} is not active on it ({key}; status unknown: the node cannot reach or activate it)")
}

/// Per node: configured memory (bytes), CPUs, and members of `group`. A listed guest
/// counts with its listed `maxmem`, else (listed before its node's broadcast) with the
/// size this run reserved for it; a reservation not listed yet counts on its node.
/// Group members: this run's placements in the group, and guests tagged with its name.
fn configured(load: &Load, reservations: &[Reservation], group: Option<&str>) -> BTreeMap<String, (u64, u64, usize)> {
    let mut out: BTreeMap<String, (u64, u64, usize)> = BTreeMap::new();
    let reserved = |vmid: u32| reservations.iter().find(|r| r.vmid == vmid);
    let in_group = |r: Option<&Reservation>, tags: &[String]| {
        group.is_some_and(|g| r.is_some_and(|r| r.group.as_deref() == Some(g)) || tags.iter().any(|t| t == g))
    };
    for g in &load.guests {
        let r = reserved(g.vmid);
        let slot = out.entry(g.node.clone()).or_default();
        slot.0 += g.maxmem.or(r.map(|r| r.memory)).unwrap_or(0);
        slot.1 += g.maxcpu.or(r.map(|r| r.cpus)).unwrap_or(0);
        slot.2 += usize::from(in_group(r, &g.tags));
    }
    for r in reservations.iter().filter(|r| load.guest(r.vmid).is_none()) {
        let slot = out.entry(r.node.clone()).or_default();
        slot.0 += r.memory;
        slot.1 += r.cpus;
        slot.2 += usize::from(in_group(Some(r), &[]));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferrox_cluster::load::{GuestLoad, NodeCapacity};

    const G: u64 = 1 << 30;

    fn load() -> Load {
        let mut l = Load::default();
        for (name, status, mem) in [("pve1", "online", 64), ("pve2", "online", 32), ("pve3", "offline", 0)] {
            l.nodes.insert(
                name.into(),
                NodeCapacity {
                    status: status.into(),
                    maxmem: (mem > 0).then_some(mem * G),
                    maxcpu: (mem > 0).then_some(8),
                },
            );
        }
        l.guests = vec![
            GuestLoad {
                vmid: 100,
                node: "pve1".into(),
                maxmem: Some(4 * G),
                maxcpu: Some(2),
                tags: vec!["web".into()],
            },
            // Made by this run moments ago: listed without its size yet.
            GuestLoad {
                vmid: 101,
                node: "pve2".into(),
                maxmem: None,
                maxcpu: None,
                tags: vec![],
            },
        ];
        l
    }

    fn storage(id: &str, node: &str) -> Storage {
        Storage {
            storage: id.into(),
            node: node.into(),
            content: vec!["images".into()],
            shared: false,
            active: true,
        }
    }

    fn reservation(vmid: u32, node: &str, gib: u64) -> Reservation {
        Reservation {
            vmid,
            node: node.into(),
            name: None,
            group: Some("web".into()),
            memory: gib * G,
            cpus: 1,
        }
    }

    fn needs<'a>(nodes: Option<&'a [String]>) -> Needs<'a> {
        Needs {
            nodes,
            storages: vec![("fast".into(), "scsi0".into())],
            source_nodes: None,
            group: Some("web"),
            disabled: Vec::new(),
        }
    }

    #[test]
    fn a_storage_disabled_or_not_active_on_a_node_excludes_it_naming_why() {
        let mut dead = storage("fast", "pve2");
        dead.active = false;
        let storages = [storage("fast", "pve1"), dead];
        let (cands, excluded) = candidates(&load(), &storages, &[], &needs(None));
        assert_eq!(cands.iter().map(|c| c.node.as_str()).collect::<Vec<_>>(), ["pve1"]);
        assert_eq!(
            excluded[0],
            Exclusion {
                node: "pve2".into(),
                reason:
                    "storage fast is not active on it (scsi0; status unknown: the node cannot reach or activate it)"
                        .into()
            }
        );
        let mut n = needs(None);
        n.disabled = vec!["fast".into()];
        let (cands, excluded) = candidates(&load(), &[], &[], &n);
        assert!(cands.is_empty());
        assert_eq!(
            excluded
                .iter()
                .filter(|e| e.reason == "storage fast is disabled (scsi0; storage.cfg: disable, Datacenter > Storage)")
                .count(),
            2,
            "both online nodes: {excluded:?}"
        );
    }

    #[test]
    fn a_node_whose_memory_is_not_listed_is_excluded_whatever_the_strategy() {
        let mut l = load();
        l.nodes.get_mut("pve2").unwrap().maxmem = None;
        let storages = [storage("fast", "pve1"), storage("fast", "pve2")];
        let (_, excluded) = candidates(&l, &storages, &[], &needs(None));
        assert!(
            excluded[0].reason.starts_with("its memory is not listed"),
            "{excluded:?}"
        );
    }

    #[test]
    fn exclusions_keep_their_reasons() {
        let storages = [storage("fast", "pve1")];
        let named = ["pve1".to_string(), "pve2".into(), "pve3".into(), "pve9".into()];
        let (cands, excluded) = candidates(&load(), &storages, &[], &needs(Some(&named)));
        assert_eq!(cands.iter().map(|c| c.node.as_str()).collect::<Vec<_>>(), ["pve1"]);
        let reasons: Vec<(&str, &str)> = excluded.iter().map(|e| (e.node.as_str(), e.reason.as_str())).collect();
        assert_eq!(
            reasons,
            [
                ("pve2", "lacks storage fast (scsi0)"),
                ("pve3", "offline (placement takes online nodes only)"),
                ("pve9", "not a node of this cluster"),
            ]
        );
    }

    #[test]
    fn a_storage_no_node_lists_is_left_to_pve_and_clone_sources_restrict() {
        let mut n = needs(None);
        n.source_nodes = Some((
            BTreeSet::from(["pve2".to_string()]),
            "a linked clone stays on its template's node (pve2)".into(),
        ));
        let (cands, excluded) = candidates(&load(), &[], &[], &n);
        assert_eq!(cands.iter().map(|c| c.node.as_str()).collect::<Vec<_>>(), ["pve2"]);
        assert_eq!(excluded[0].reason, "a linked clone stays on its template's node (pve2)");
    }

    #[test]
    fn the_runs_reservations_count_once_and_make_group_members() {
        // 101 is listed (no size yet) and reserved; 102 is reserved, not listed yet.
        let res = [reservation(101, "pve2", 2), reservation(102, "pve2", 8)];
        let storages = [storage("fast", "pve1"), storage("fast", "pve2")];
        let (cands, _) = candidates(&load(), &storages, &res, &needs(None));
        let pve1 = &cands[0];
        assert_eq!(
            (pve1.configured_memory, pve1.configured_cpus, pve1.group_members),
            (4 * G, 2, 1)
        );
        let pve2 = &cands[1];
        assert_eq!(
            (pve2.configured_memory, pve2.configured_cpus, pve2.group_members),
            (10 * G, 2, 2)
        );
    }

    #[test]
    fn storages_come_from_drives_efi_tpm_cloud_init_and_the_storage_option() {
        let config: Vec<(String, String)> = vec![
            ("scsi0".into(), "fast:32,discard=on".into()),
            ("efidisk0".into(), "nvme:1,efitype=4m".into()),
            ("tpmstate0".into(), "nvme:1,version=v2.0".into()),
            ("ide2".into(), "ci:cloudinit,media=cdrom".into()),
            ("ide0".into(), "isos:iso/debian.iso,media=cdrom".into()),
            ("net0".into(), "virtio,bridge=vmbr0".into()),
        ];
        let got = storages_named(config.iter().map(|(k, v)| (k, v)), Some("bulk"));
        let ids: Vec<&str> = got.iter().map(|(s, _)| s.as_str()).collect();
        assert_eq!(ids, ["fast", "nvme", "ci", "isos", "bulk"]);
    }
}
