//! By-name lookups when the task gives a node. Clusters with local storage carry one
//! template per node under the same name (`base-debian13` on each), so a name alone is
//! ambiguous there while the name on the node the task works on is not.
//!
//! The rule: when several QEMU VMs have the name, the one on the task's node is meant;
//! the lookup fails only when that still leaves none or several (listing the candidates
//! per node). Without a node, or with at most one match, it is [`vm::qemu_by_name`]
//! unchanged (1.6's message on duplicates).

use std::collections::BTreeMap;

use crate::vm::{self, Guest, GuestType};

/// The QEMU VM named `name`, preferring the one on `node` when the name is ambiguous.
pub fn qemu_by_name_on<'a>(guests: &'a [Guest], name: &str, node: Option<&str>) -> Result<Option<&'a Guest>, String> {
    let matches: Vec<&Guest> = guests
        .iter()
        .filter(|g| g.kind == GuestType::Qemu && g.name.as_deref() == Some(name))
        .collect();
    let Some(node) = node.filter(|_| matches.len() > 1) else {
        return vm::qemu_by_name(guests, name);
    };
    let on_node: Vec<&Guest> = matches.iter().copied().filter(|g| *g.node == *node).collect();
    match on_node.as_slice() {
        [one] => Ok(Some(one)),
        [] => Err(format!(
            "Multiple VMs with name {name} found ({}), none of them on node {node}: provide vmid instead",
            candidates(&matches)
        )),
        _ => Err(format!(
            "Multiple VMs with name {name} found ({}), {} of them on node {node}: provide vmid instead",
            candidates(&matches),
            on_node.len()
        )),
    }
}

/// `pve1: 9000, 9001; pve2: 9002` — the vmids per node, nodes and vmids in order.
fn candidates(matches: &[&Guest]) -> String {
    let mut per_node: BTreeMap<&str, Vec<u32>> = BTreeMap::new();
    for g in matches {
        per_node.entry(&*g.node).or_default().push(g.vmid);
    }
    per_node
        .into_iter()
        .map(|(node, mut ids)| {
            ids.sort_unstable();
            let ids: Vec<String> = ids.iter().map(u32::to_string).collect();
            format!("{node}: {}", ids.join(", "))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cluster() -> Vec<Guest> {
        vm::parse_resources(&json!([
            {"type": "qemu", "vmid": 9000, "node": "pve1", "name": "base-debian13", "template": 1},
            {"type": "qemu", "vmid": 9001, "node": "pve2", "name": "base-debian13", "template": 1},
            {"type": "qemu", "vmid": 9002, "node": "pve2", "name": "base-alma", "template": 1},
            {"type": "qemu", "vmid": 9003, "node": "pve3", "name": "base-alma", "template": 1},
            {"type": "qemu", "vmid": 9004, "node": "pve3", "name": "base-alma", "template": 1},
            {"type": "lxc", "vmid": 200, "node": "pve1", "name": "web"},
            {"type": "qemu", "vmid": 100, "node": "pve2", "name": "web"},
        ]))
        .unwrap()
    }

    #[test]
    fn the_template_on_the_node_is_meant() {
        let g = cluster();
        assert_eq!(
            qemu_by_name_on(&g, "base-debian13", Some("pve1"))
                .unwrap()
                .unwrap()
                .vmid,
            9000
        );
        assert_eq!(
            qemu_by_name_on(&g, "base-debian13", Some("pve2"))
                .unwrap()
                .unwrap()
                .vmid,
            9001
        );
        assert_eq!(
            qemu_by_name_on(&g, "base-alma", Some("pve2")).unwrap().unwrap().vmid,
            9002
        );
    }

    #[test]
    fn a_single_match_is_found_on_any_node() {
        let g = cluster();
        assert_eq!(
            qemu_by_name_on(&g, "web", Some("pve1")).unwrap().unwrap().vmid,
            100,
            "containers do not count"
        );
        assert!(qemu_by_name_on(&g, "nope", Some("pve1")).unwrap().is_none());
    }

    #[test]
    fn still_ambiguous_or_absent_on_the_node_lists_the_candidates_per_node() {
        let g = cluster();
        assert_eq!(
            qemu_by_name_on(&g, "base-alma", Some("pve3")).unwrap_err(),
            "Multiple VMs with name base-alma found (pve2: 9002; pve3: 9003, 9004), 2 of them on node pve3: provide vmid instead"
        );
        assert_eq!(
            qemu_by_name_on(&g, "base-debian13", Some("pve9")).unwrap_err(),
            "Multiple VMs with name base-debian13 found (pve1: 9000; pve2: 9001), none of them on node pve9: provide vmid instead"
        );
    }

    #[test]
    fn without_a_node_the_usual_rule_holds() {
        let g = cluster();
        assert_eq!(
            qemu_by_name_on(&g, "base-debian13", None).unwrap_err(),
            vm::qemu_by_name(&g, "base-debian13").unwrap_err()
        );
    }
}
