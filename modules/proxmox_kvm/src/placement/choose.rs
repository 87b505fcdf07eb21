//! The choice itself, from numbers alone (no API): the candidates that passed the checks,
//! each with its capacity and what is configured on it, ranked by the strategy; a node
//! the new VM would fill past `max_memory_ratio` times its memory is excluded with the
//! numbers that say so.
//!
//! Without `max_memory_ratio` the limit is the node's memory itself
//! ([`DEFAULT_MAX_MEMORY_RATIO`]): placement never configures a node past its `maxmem`
//! unless the user asks for overcommit. PVE itself refuses nothing here (it checks no
//! memory on create), so a node past its memory fails only later, at the start of its
//! last guest, or swaps; a fleet placed by a play should not build that in silently.
//!
//! With a group, nodes without a member come first (one per node); after that the
//! members go where the strategy says (most free memory for `most_free`, the name's
//! node for `spread`), not to the node with the fewest members: counting members
//! would fill a small node as fast as a large one.

use serde::Serialize;

use super::rendezvous;
use super::Strategy;

const GIB: f64 = (1u64 << 30) as f64;

/// The memory limit without `max_memory_ratio`: configured memory up to the node's own.
pub(crate) const DEFAULT_MAX_MEMORY_RATIO: f64 = 1.0;

/// A node still in the race, with what it has and what is configured on it (its guests,
/// running or not, and the VMs this run placed there).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct Candidate {
    pub(crate) node: String,
    /// Bytes.
    pub(crate) maxmem: u64,
    pub(crate) maxcpu: u64,
    /// Configured memory of its guests and of this run's placements there, bytes.
    pub(crate) configured_memory: u64,
    pub(crate) configured_cpus: u64,
    /// Members of the task's group on it (0 without a group).
    pub(crate) group_members: usize,
}

impl Candidate {
    /// Memory not configured for any guest (negative when overcommitted).
    pub(crate) fn free_memory(&self) -> i128 {
        i128::from(self.maxmem) - i128::from(self.configured_memory)
    }

    pub(crate) fn free_cpus(&self) -> i128 {
        i128::from(self.maxcpu) - i128::from(self.configured_cpus)
    }
}

/// What the new VM takes and how to choose.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Want<'a> {
    pub(crate) name: &'a str,
    /// Bytes.
    pub(crate) memory: u64,
    pub(crate) cpus: u64,
    pub(crate) strategy: Strategy,
    /// Spread the VMs of a group over the nodes (anti-affinity).
    pub(crate) grouped: bool,
    /// `max_memory_ratio` as the task gives it (`None`: [`DEFAULT_MAX_MEMORY_RATIO`]).
    pub(crate) max_memory_ratio: Option<f64>,
}

/// A node left out, and why (kept for the result and for the failure).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Exclusion {
    pub(crate) node: String,
    pub(crate) reason: String,
}

/// The candidates in order of preference, and those excluded as full.
pub(crate) fn rank(candidates: Vec<Candidate>, want: &Want) -> (Vec<Candidate>, Vec<Exclusion>) {
    let (mut fit, full): (Vec<Candidate>, Vec<Candidate>) =
        candidates.into_iter().partition(|c| full_reason(c, want).is_none());
    let excluded = full
        .iter()
        .filter_map(|c| {
            full_reason(c, want).map(|reason| Exclusion {
                node: c.node.clone(),
                reason,
            })
        })
        .collect();
    fit.sort_by(|a, b| {
        // One per node first; past that, members do not count (the strategy decides).
        let group = if want.grouped {
            a.group_members.min(1).cmp(&b.group_members.min(1))
        } else {
            std::cmp::Ordering::Equal
        };
        let by_strategy = match want.strategy {
            Strategy::MostFree => b
                .free_memory()
                .cmp(&a.free_memory())
                .then_with(|| b.free_cpus().cmp(&a.free_cpus())),
            Strategy::Spread => rendezvous::weight(want.name, &b.node).cmp(&rendezvous::weight(want.name, &a.node)),
        };
        group.then(by_strategy).then_with(|| a.node.cmp(&b.node))
    });
    (fit, excluded)
}

/// Why the memory limit rules the node out, if it does: `max_memory_ratio` times its
/// memory, else its memory.
fn full_reason(c: &Candidate, want: &Want) -> Option<String> {
    let ratio = want.max_memory_ratio.unwrap_or(DEFAULT_MAX_MEMORY_RATIO);
    let limit = ratio * c.maxmem as f64;
    let after = c.configured_memory as f64 + want.memory as f64;
    let (configured, vm, maxmem) = (
        c.configured_memory as f64 / GIB,
        want.memory as f64 / GIB,
        c.maxmem as f64 / GIB,
    );
    (after > limit).then(|| match want.max_memory_ratio {
        Some(ratio) => format!(
            "full: {configured:.1} GiB configured + {vm:.1} GiB for this VM > max_memory_ratio {ratio} x {maxmem:.1} GiB"
        ),
        None => format!(
            "full: {configured:.1} GiB configured + {vm:.1} GiB for this VM > its memory {maxmem:.1} GiB (placement.max_memory_ratio above 1 allows overcommit)"
        ),
    })
}

/// The failure when no node is left: every node with its reason.
pub(crate) fn none_left(what: &str, excluded: &[Exclusion]) -> String {
    let reasons: Vec<String> = excluded.iter().map(|e| format!("{}: {}", e.node, e.reason)).collect();
    format!(
        "placement: no node can take {what}; nothing was created. {}. Fix: free or add capacity, make the missing storage or bridge available on a node, widen placement.nodes, or name the node with node",
        if reasons.is_empty() {
            "The cluster lists no node".to_string()
        } else {
            reasons.join("; ")
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const G: u64 = 1 << 30;

    fn node(name: &str, maxmem_gib: u64, used_gib: u64, members: usize) -> Candidate {
        Candidate {
            node: name.into(),
            maxmem: maxmem_gib * G,
            maxcpu: 16,
            configured_memory: used_gib * G,
            configured_cpus: 4,
            group_members: members,
        }
    }

    fn want(strategy: Strategy, grouped: bool, ratio: Option<f64>) -> Want<'static> {
        Want {
            name: "web01",
            memory: 2 * G,
            cpus: 2,
            strategy,
            grouped,
            max_memory_ratio: ratio,
        }
    }

    fn order(c: &[Candidate]) -> Vec<&str> {
        c.iter().map(|c| c.node.as_str()).collect()
    }

    #[test]
    fn most_free_ranks_by_unconfigured_memory_then_cpu_then_name() {
        let mut b = node("b", 64, 10, 0);
        b.configured_cpus = 2;
        let cands = vec![node("a", 64, 10, 0), b, node("c", 128, 80, 0), node("d", 32, 0, 0)];
        let (ranked, full) = rank(cands, &want(Strategy::MostFree, false, None));
        // a and b both have 54 GiB free: b has more CPUs free.
        assert_eq!(order(&ranked), ["b", "a", "c", "d"]);
        assert!(full.is_empty());
    }

    #[test]
    fn most_free_counts_what_the_run_already_placed() {
        // The same nodes, after this run placed 3 VMs of 8 GiB on a.
        let table = [(0u64, "a"), (3 * 8, "b")];
        for (placed_on_a, first) in table {
            let cands = vec![node("a", 64, 10 + placed_on_a, 0), node("b", 64, 20, 0)];
            let (ranked, _) = rank(cands, &want(Strategy::MostFree, false, None));
            assert_eq!(ranked[0].node, first, "with {placed_on_a} GiB placed on a");
        }
    }

    #[test]
    fn a_group_takes_one_node_each_first_then_follows_the_strategy() {
        // (nodes as (name, maxmem GiB, configured GiB, members), strategy, order).
        type Row<'a> = (&'a [(&'a str, u64, u64, usize)], Strategy, &'a [&'a str]);
        let table: [Row; 4] = [
            // Nodes without a member first, each part by free memory.
            (
                &[("big", 256, 0, 1), ("mid", 64, 0, 0), ("small", 32, 0, 0)],
                Strategy::MostFree,
                &["mid", "small", "big"],
            ),
            // Every node has one: most free, whatever the counts (big has 3, small 1).
            (
                &[("big", 256, 12, 3), ("mid", 64, 8, 2), ("small", 32, 4, 1)],
                Strategy::MostFree,
                &["big", "mid", "small"],
            ),
            // The small node has fewer members but less free memory: it does not win.
            (
                &[("pve1", 24, 8, 1), ("pve3", 96, 28, 6)],
                Strategy::MostFree,
                &["pve3", "pve1"],
            ),
            // A node without a member still comes first, however full.
            (
                &[("pve1", 24, 20, 0), ("pve3", 96, 28, 6)],
                Strategy::MostFree,
                &["pve1", "pve3"],
            ),
        ];
        for (nodes, strategy, expected) in table {
            let cands = nodes.iter().map(|(n, mem, used, m)| node(n, *mem, *used, *m)).collect();
            let (ranked, _) = rank(cands, &want(strategy, true, None));
            assert_eq!(order(&ranked), expected, "{nodes:?}");
        }
        let (ranked, _) = rank(
            vec![node("big", 256, 0, 1), node("mid", 64, 0, 0)],
            &want(Strategy::MostFree, false, None),
        );
        assert_eq!(order(&ranked), ["big", "mid"], "without a group, members do not count");
    }

    #[test]
    fn a_group_with_spread_takes_one_node_each_then_the_names_node() {
        let all_taken = vec![node("pve1", 64, 0, 2), node("pve2", 64, 0, 1), node("pve3", 64, 0, 1)];
        let (ranked, _) = rank(all_taken, &want(Strategy::Spread, true, None));
        assert_eq!(
            ranked[0].node,
            rendezvous::winner("web01", ["pve1", "pve2", "pve3"]).unwrap()
        );
        let one_free = vec![node("pve1", 64, 0, 2), node("pve2", 64, 0, 0), node("pve3", 64, 0, 1)];
        let (ranked, _) = rank(one_free, &want(Strategy::Spread, true, None));
        assert_eq!(ranked[0].node, "pve2");
    }

    /// Twenty VMs of 4 GiB in one group, placed one after the other on 24 GiB (4 GiB
    /// configured), 48 GiB and 96 GiB nodes: one each, then by free memory, never past
    /// a node's memory.
    #[test]
    fn a_group_fills_by_free_memory_and_no_node_past_its_memory() {
        let mut nodes = vec![node("pve1", 24, 4, 0), node("pve2", 48, 0, 0), node("pve3", 96, 0, 0)];
        let mut w = want(Strategy::MostFree, true, None);
        w.memory = 4 * G;
        let mut order_placed = Vec::new();
        for _ in 0..20 {
            let (ranked, _) = rank(nodes.clone(), &w);
            let chosen = ranked[0].node.clone();
            let c = nodes.iter_mut().find(|c| c.node == chosen).unwrap();
            c.configured_memory += w.memory;
            c.group_members += 1;
            order_placed.push(chosen);
        }
        assert_eq!(order_placed[..3], ["pve3", "pve2", "pve1"], "one per node first");
        let counts: Vec<(&str, usize, u64)> = nodes
            .iter()
            .map(|c| (c.node.as_str(), c.group_members, c.configured_memory / G))
            .collect();
        // After one each (16, 44, 92 GiB free), pve3 takes VMs until it has as much free
        // as pve2 (44 GiB), then the two alternate; pve1 keeps its 16 GiB free.
        assert_eq!(counts, [("pve1", 1, 8), ("pve2", 4, 16), ("pve3", 15, 60)]);
        assert!(nodes.iter().all(|c| c.configured_memory <= c.maxmem));
    }

    #[test]
    fn without_max_memory_ratio_a_node_is_full_at_its_memory() {
        // (maxmem, configured, ratio, fits): the VM takes 2 GiB.
        let table = [
            (24, 22, None, true),
            (24, 23, None, false),
            (24, 23, Some(1.5), true),
            (24, 22, Some(0.9), false),
        ];
        for (maxmem, used, ratio, fits) in table {
            let (ranked, full) = rank(vec![node("a", maxmem, used, 0)], &want(Strategy::Spread, false, ratio));
            assert_eq!(ranked.len() == 1, fits, "{maxmem} {used} {ratio:?}");
            assert_eq!(full.is_empty(), fits);
        }
        let (_, full) = rank(vec![node("a", 24, 23, 0)], &want(Strategy::MostFree, false, None));
        assert_eq!(
            full[0].reason,
            "full: 23.0 GiB configured + 2.0 GiB for this VM > its memory 24.0 GiB (placement.max_memory_ratio above 1 allows overcommit)"
        );
    }

    #[test]
    fn max_memory_ratio_excludes_full_nodes_with_the_numbers() {
        let cands = vec![node("a", 32, 30, 0), node("b", 32, 20, 0), node("c", 32, 29, 0)];
        let (ranked, full) = rank(cands, &want(Strategy::MostFree, false, Some(0.95)));
        // c: 29 + 2 = 31 > 30.4; a: 32 > 30.4.
        assert_eq!(order(&ranked), ["b"]);
        assert_eq!(
            full,
            vec![
                Exclusion {
                    node: "a".into(),
                    reason: "full: 30.0 GiB configured + 2.0 GiB for this VM > max_memory_ratio 0.95 x 32.0 GiB".into()
                },
                Exclusion {
                    node: "c".into(),
                    reason: "full: 29.0 GiB configured + 2.0 GiB for this VM > max_memory_ratio 0.95 x 32.0 GiB".into()
                },
            ]
        );
        let (ranked, _) = rank(vec![node("a", 32, 30, 0)], &want(Strategy::MostFree, false, Some(1.0)));
        assert_eq!(order(&ranked), ["a"], "exactly full still fits");
    }

    #[test]
    fn spread_ignores_load_and_follows_the_name() {
        let cands = vec![node("pve1", 64, 60, 0), node("pve2", 64, 0, 0), node("pve3", 64, 0, 0)];
        let (ranked, _) = rank(cands, &want(Strategy::Spread, false, None));
        assert_eq!(
            ranked[0].node,
            rendezvous::winner("web01", ["pve1", "pve2", "pve3"]).unwrap()
        );
    }

    #[test]
    fn no_node_left_names_every_node_and_its_reason() {
        let msg = none_left(
            "VM web01",
            &[
                Exclusion {
                    node: "pve1".into(),
                    reason: "offline".into(),
                },
                Exclusion {
                    node: "pve2".into(),
                    reason: "lacks bridge vmbr7 (net0)".into(),
                },
            ],
        );
        assert!(
            msg.starts_with("placement: no node can take VM web01; nothing was created. pve1: offline; pve2: lacks bridge vmbr7 (net0). Fix:"),
            "{msg}"
        );
        assert!(none_left("VM x", &[]).contains("The cluster lists no node"));
    }
}
