//! `check_mode_assume`: what a check run may take as existing because an earlier task of
//! another collection makes it, one that cannot run in check mode (community.proxmox's
//! `proxmox_template` uploading an ISO, a `proxmox_pool` task) and so is skipped by
//! `--check`. Declared once here; honoured only in check mode (a real run checks every
//! reference as always), and every assumption used is reported as a warning.

use std::cell::RefCell;

use crate::options::{Kind, Opt, Params};

/// The option's name.
pub const OPTION: &str = "check_mode_assume";

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

/// The assumptions of one task (none outside check mode), and which were used.
#[derive(Debug, Default, Clone)]
pub struct Assume {
    check_mode: bool,
    volumes: Vec<String>,
    pools: Vec<String>,
    used: RefCell<Vec<String>>,
}

impl Assume {
    /// The task's assumptions from its validated options; none outside check mode.
    pub fn from_params(p: &Params, check_mode: bool) -> Assume {
        let Some(sub) = p.sub(OPTION).filter(|_| check_mode) else {
            return Assume {
                check_mode,
                ..Assume::default()
            };
        };
        Assume {
            check_mode,
            volumes: sub.strings("volumes").unwrap_or_default(),
            pools: sub.strings("pools").unwrap_or_default(),
            used: RefCell::default(),
        }
    }

    /// Whether the volume `volid` is to be taken as existing (recorded when it is).
    pub fn volume(&self, volid: &str) -> bool {
        self.take(&self.volumes, volid, "volume")
    }

    /// Whether the pool `pool` is to be taken as existing (recorded when it is).
    pub fn pool(&self, pool: &str) -> bool {
        self.take(&self.pools, pool, "pool")
    }

    fn take(&self, list: &[String], name: &str, what: &str) -> bool {
        let hit = list.iter().any(|x| x == name);
        if hit {
            self.used.borrow_mut().push(format!("{what} {name}"));
        }
        hit
    }

    /// The end of a check run's message for a missing reference (`list`: `volumes` or
    /// `pools`): how to let an earlier task of another collection make it.
    pub fn hint(&self, list: &str, name: &str) -> String {
        if !self.check_mode {
            return String::new();
        }
        format!(". If an earlier task that cannot run in check mode creates it, let the check run assume it: {OPTION}: {{{list}: [{name}]}}")
    }

    /// One warning per assumption used.
    pub fn warnings(&self) -> Vec<String> {
        self.used
            .borrow()
            .iter()
            .map(|u| format!("check mode assumed {u} exists ({OPTION}); the real run checks it"))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn params(v: serde_json::Value) -> Params {
        Params::new(v.as_object().unwrap().clone())
    }

    #[test]
    fn only_check_mode_assumes_and_each_use_is_named() {
        let p = params(json!({"check_mode_assume": {"volumes": ["isos:iso/new.iso"], "pools": ["lab"]}}));
        let real = Assume::from_params(&p, false);
        assert!(!real.volume("isos:iso/new.iso") && !real.pool("lab"));
        let check = Assume::from_params(&p, true);
        assert!(check.volume("isos:iso/new.iso") && !check.volume("isos:iso/other.iso"));
        assert_eq!(
            check.warnings(),
            ["check mode assumed volume isos:iso/new.iso exists (check_mode_assume); the real run checks it"]
        );
        assert_eq!(real.hint("pools", "lab"), "");
        assert!(check
            .hint("pools", "lab")
            .ends_with("check_mode_assume: {pools: [lab]}"));
    }
}
