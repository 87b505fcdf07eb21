//! `strategy: spread`: rendezvous (highest-random-weight) hashing of the VM's name over
//! the candidate nodes. Each node gets a weight from the name and the node's name; the
//! heaviest wins. The same name picks the same node on every run and in two runs at once
//! with no coordination, names spread evenly, and a node added to the candidates takes
//! only the names it now outweighs (about 1/n of them): none moves between the others.
//! A node full for the new VM is not a candidate ([`super::choose`]): the name then goes
//! to its next-heaviest node.
//!
//! The weight is `mix(FNV-1a-64(name, 0x00, node))`: the FNV-1a of `vmid_range`, then
//! splitmix64's finalizer, because FNV-1a leaves the high bits of two inputs that differ
//! only in their last bytes (`pve1`, `pve2`) correlated, which would favour some nodes.
//! The rule is stable across versions, like `vmid_range`'s: should it change, the
//! changelog says so.

use crate::vmid_range::fnv1a64;

/// The weight of `node` for the VM `name`.
pub(crate) fn weight(name: &str, node: &str) -> u64 {
    let mut bytes = Vec::with_capacity(name.len() + 1 + node.len());
    bytes.extend_from_slice(name.as_bytes());
    bytes.push(0);
    bytes.extend_from_slice(node.as_bytes());
    mix(fnv1a64(&bytes))
}

/// splitmix64's finalizer: every input bit reaches every output bit.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The node of `nodes` with the highest weight for `name` (ties: the first name in order):
/// what the choice's ranking gives among equals, as the tests state it.
#[cfg(test)]
pub(crate) fn winner<'n>(name: &str, nodes: impl IntoIterator<Item = &'n str>) -> Option<&'n str> {
    nodes
        .into_iter()
        .map(|n| (weight(name, n), n))
        .max_by(|a, b| a.0.cmp(&b.0).then_with(|| b.1.cmp(a.1)))
        .map(|(_, n)| n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn names() -> Vec<String> {
        (0..1000).map(|i| format!("web-{i:04}")).collect()
    }

    #[test]
    fn the_rule_is_fixed() {
        // A change here moves VMs of every fleet that relies on spread: changelog it.
        assert_eq!(winner("web01", ["pve1", "pve2", "pve3"]), Some("pve1"));
        assert_eq!(weight("web01", "pve1"), weight("web01", "pve1"));
        assert_ne!(weight("web01", "pve1"), weight("web01", "pve2"));
    }

    #[test]
    fn names_spread_evenly() {
        let nodes = ["pve1", "pve2", "pve3", "pve4", "pve5"];
        let mut count: BTreeMap<&str, usize> = BTreeMap::new();
        for n in names() {
            *count.entry(winner(&n, nodes).unwrap()).or_default() += 1;
        }
        for (node, c) in &count {
            assert!((150..=250).contains(c), "{node} got {c} of 1000 names: {count:?}");
        }
    }

    #[test]
    fn an_added_node_takes_only_its_share_and_moves_nothing_else() {
        let before = ["pve1", "pve2", "pve3", "pve4"];
        let after = ["pve1", "pve2", "pve3", "pve4", "pve5"];
        let mut moved = 0;
        for n in names() {
            let (old, new) = (winner(&n, before).unwrap(), winner(&n, after).unwrap());
            if old != new {
                assert_eq!(new, "pve5", "{n} moved from {old} to {new}, not to the new node");
                moved += 1;
            }
        }
        assert!(
            (150..=250).contains(&moved),
            "the new node took {moved} of 1000 (expected about 200)"
        );
    }

    #[test]
    fn the_order_of_the_candidates_does_not_matter() {
        for n in names().iter().take(100) {
            assert_eq!(winner(n, ["a", "b", "c"]), winner(n, ["c", "a", "b"]));
        }
    }
}
