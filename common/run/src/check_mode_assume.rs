//! `check_mode_assume`: the option, declared once here, and read into the cluster layer's
//! [`Assume`] (what a check run may take as existing because an earlier task that cannot
//! run in check mode makes it).

use ferrox_ansible::options::{Kind, Opt, Params};
use ferrox_cluster::assume::{Assume, OPTION};

/// The option, for the specs of the modules that check references before writing.
pub fn option() -> Opt {
    Opt::dict_of(
        OPTION,
        vec![
            Opt::list("volumes", Kind::Str).desc("Volumes (C(storage:iso/name.iso), C(storage:import/name.qcow2)) to take as existing."),
            Opt::list("pools", Kind::Str).desc("Resource pools to take as existing."),
        ],
    )
    .added("0.2.0")
    .desc("Only in check mode: references the task may take as existing because an earlier task of another collection, one that cannot run in check mode (so C(--check) skips it), creates them. Without it such a check run fails, as the real run would if the earlier task had not made them.")
    .desc("Ignored in real runs, which check every reference. Each assumption used is named in a warning.")
}

/// The task's assumptions from its validated options; none outside check mode.
pub fn read(p: &Params, check_mode: bool) -> Assume {
    let sub = p.sub(OPTION);
    let list = |key: &str| sub.as_ref().and_then(|s| s.strings(key)).unwrap_or_default();
    Assume::new(check_mode, list("volumes"), list("pools"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_option_is_read_in_check_mode_only() {
        let p = Params::new(
            json!({"check_mode_assume": {"volumes": ["isos:iso/new.iso"], "pools": ["lab"]}})
                .as_object()
                .cloned()
                .unwrap_or_default(),
        );
        assert!(read(&p, true).volume("isos:iso/new.iso") && read(&p, true).pool("lab"));
        assert!(!read(&p, false).volume("isos:iso/new.iso"));
        let unset = Params::new(
            json!({"check_mode_assume": null})
                .as_object()
                .cloned()
                .unwrap_or_default(),
        );
        assert!(!read(&unset, true).pool("lab"));
    }
}
