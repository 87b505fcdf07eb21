//! Which vmid of `vmid_range` a new VM takes: derived from its name, so two runs that
//! create the same name at once ask PVE for the same vmid, and PVE (which creates a
//! given vmid only once, cluster-wide) lets only one of them have it.
//!
//! The rule, documented for users: the first id tried is
//! `first + FNV-1a-64(name as UTF-8) mod (last - first + 1)`; then each next id upward,
//! wrapping from `last` to `first`, until every id of the range was tried once. An id
//! is skipped while a VM with another name holds it. Without a name, the ids are tried
//! from `first` upward.
//!
//! This order is part of the interface: changing it would make a rerun pick another id
//! for a name not created yet (and so let two versions build one name twice). If it
//! ever must change, say so in the docs and the changelog.

/// FNV-1a, 64 bit: small, fixed by its specification, the same on every platform.
pub(crate) fn fnv1a64(bytes: &[u8]) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    bytes
        .iter()
        .fold(OFFSET, |h, b| (h ^ u64::from(*b)).wrapping_mul(PRIME))
}

/// The vmids of `[first, last]` in the order they are tried for `name` (see the module
/// docs); each id once. `first <= last` is checked where the option is read.
pub(crate) fn order(name: Option<&str>, first: u32, last: u32) -> impl Iterator<Item = u32> {
    let size = u64::from(last) - u64::from(first) + 1;
    let start = name.map_or(0, |n| fnv1a64(n.as_bytes()) % size);
    (0..size).map(move |k| {
        let offset = (start + k) % size;
        // offset < size <= u32::MAX - first + 1, so this fits.
        first + offset as u32
    })
}

/// Whether a vmid the cluster listing shows as `listed` (`None`: not listed;
/// `Some(None)`: listed before its name is broadcast) is ruled out for a VM named
/// `name`. A listed VM without a name may be another run's VM of this very name: it is
/// tried, and PVE's answer plus its config decide. Without a name of our own, any
/// listed VM rules the id out.
pub(crate) fn held_by_other(listed: Option<Option<&str>>, name: Option<&str>) -> bool {
    match (listed, name) {
        (None, _) => false,
        (Some(Some(theirs)), Some(ours)) => theirs != ours,
        (Some(None), Some(_)) => false,
        (Some(_), None) => true,
    }
}

/// The name a listed guest counts with for [`held_by_other`]: none while its create or
/// clone still runs, since PVE then lists the placeholder name `VM <vmid>` (its config
/// has no name yet) and that VM may be another run's of our very name.
pub(crate) fn listed_name<'a>(lock: Option<&str>, name: Option<&'a str>) -> Option<&'a str> {
    match lock {
        Some("create" | "clone") => None,
        _ => name,
    }
}

/// The first id of [`order`] not ruled out by `ruled_out`.
pub(crate) fn first_candidate(
    name: Option<&str>,
    first: u32,
    last: u32,
    ruled_out: impl Fn(u32) -> bool,
) -> Option<u32> {
    order(name, first, last).find(|id| !ruled_out(*id))
}

/// The failure when no id of the range is left for the name.
pub(crate) fn range_full(first: u32, last: u32) -> String {
    format!(
        "no free vmid left in vmid_range [{first}, {last}]: every id in it is held by a VM of another name; widen vmid_range or remove VMs in it"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a64_matches_its_published_test_vectors() {
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
    }

    /// Pinned: a change here means a rerun would pick other vmids for names not yet
    /// created. Do not update these numbers without a changelog entry saying so.
    #[test]
    fn the_first_ids_of_a_name_are_stable() {
        let first = |name: &str, a: u32, b: u32| order(Some(name), a, b).take(3).collect::<Vec<_>>();
        assert_eq!(first("dbl01", 5000, 5999), vec![5970, 5971, 5972]);
        assert_eq!(first("dbl02", 5000, 5999), vec![5759, 5760, 5761]);
        assert_eq!(
            first("app07", 9000, 9009),
            vec![9009, 9000, 9001],
            "wraps from last to first"
        );
        assert_eq!(
            first("web01", 100, 999_999_999),
            vec![899_065_898, 899_065_899, 899_065_900]
        );
    }

    #[test]
    fn probing_goes_upward_and_wraps_to_first() {
        let size = 10u64;
        let start = (fnv1a64(b"web01") % size) as u32;
        let ids: Vec<u32> = order(Some("web01"), 100, 109).collect();
        let expected: Vec<u32> = (0..10).map(|k| 100 + (start + k) % 10).collect();
        assert_eq!(ids, expected);
    }

    #[test]
    fn every_id_of_the_range_is_tried_once() {
        let mut ids: Vec<u32> = order(Some("db"), 7000, 7099).collect();
        ids.sort_unstable();
        assert_eq!(ids, (7000..=7099).collect::<Vec<_>>());
    }

    #[test]
    fn without_a_name_the_range_is_tried_from_first() {
        assert_eq!(order(None, 300, 303).collect::<Vec<_>>(), vec![300, 301, 302, 303]);
    }

    #[test]
    fn ids_of_other_names_are_skipped_and_unnamed_ones_tried() {
        assert!(held_by_other(Some(Some("web02")), Some("web01")));
        assert!(!held_by_other(Some(Some("web01")), Some("web01")));
        assert!(
            !held_by_other(Some(None), Some("web01")),
            "a VM not yet broadcast may be ours"
        );
        assert!(!held_by_other(None, Some("web01")));
        assert!(held_by_other(Some(None), None));
        assert!(held_by_other(Some(Some("x")), None));
        let taken = [9009u32, 9000];
        assert_eq!(
            first_candidate(Some("app07"), 9000, 9009, |id| taken.contains(&id)),
            Some(9001)
        );
        assert_eq!(first_candidate(Some("app07"), 9000, 9001, |_| true), None);
    }

    #[test]
    fn a_range_of_one_and_the_widest_range_work() {
        assert_eq!(order(Some("x"), 500, 500).collect::<Vec<_>>(), vec![500]);
        let mut wide = order(Some("x"), 100, u32::MAX);
        let id = wide.next().unwrap();
        assert!(id >= 100);
    }
}
