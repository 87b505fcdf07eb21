//! `placement`, read once (what it does: [`crate::placement`]).

use ferrox_ansible::options::{Choice, Reader};

/// `placement.strategy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Strategy {
    MostFree,
    Spread,
}

impl Choice for Strategy {
    const ALL: &'static [(&'static str, Strategy)] = &[("most_free", Strategy::MostFree), ("spread", Strategy::Spread)];
}

/// `placement`, read once.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Placement {
    pub(crate) nodes: Option<Vec<String>>,
    pub(crate) strategy: Strategy,
    pub(crate) group: Option<String>,
    pub(crate) max_memory_ratio: Option<f64>,
}

impl Placement {
    pub(crate) fn read(r: &Reader) -> Result<Option<Placement>, String> {
        let Some(p) = r.sub("placement") else { return Ok(None) };
        let ratio = p.float("max_memory_ratio");
        if let Some(bad) = ratio.filter(|x| !(*x > 0.0 && x.is_finite())) {
            return Err(format!(
                "placement.max_memory_ratio must be a number above 0 (1.0: configured memory up to the node's memory), got {bad}"
            ));
        }
        Ok(Some(Placement {
            nodes: p.strings("nodes").filter(|n| !n.is_empty()),
            strategy: p.choice("strategy"),
            group: p.non_empty("group"),
            max_memory_ratio: ratio,
        }))
    }
}
