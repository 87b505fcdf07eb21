//! What a check run may take as existing because an earlier task of another collection
//! makes it, one that cannot run in check mode (community.proxmox's `proxmox_template`
//! uploading an ISO, a `proxmox_pool` task) and so is skipped by `--check`: the
//! `check_mode_assume` option's meaning, as the reference checks ([`crate::references`])
//! use it. The option is declared and read in the run layer; honoured only in check mode,
//! and every assumption used is reported as a warning.

use std::cell::RefCell;

/// The option's name, as messages cite it.
pub const OPTION: &str = "check_mode_assume";

/// The assumptions of one task (none outside check mode), and which were used.
#[derive(Debug, Default, Clone)]
pub struct Assume {
    check_mode: bool,
    volumes: Vec<String>,
    pools: Vec<String>,
    used: RefCell<Vec<String>>,
}

impl Assume {
    /// The assumptions of a task: `volumes` and `pools` taken as existing, in check
    /// mode only (a real run assumes nothing).
    pub fn new(check_mode: bool, volumes: Vec<String>, pools: Vec<String>) -> Assume {
        let (volumes, pools) = if check_mode {
            (volumes, pools)
        } else {
            Default::default()
        };
        Assume {
            check_mode,
            volumes,
            pools,
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

    #[test]
    fn only_check_mode_assumes_and_each_use_is_named() {
        let given = || (vec!["isos:iso/new.iso".to_string()], vec!["lab".to_string()]);
        let (volumes, pools) = given();
        let real = Assume::new(false, volumes, pools);
        assert!(!real.volume("isos:iso/new.iso") && !real.pool("lab"));
        let (volumes, pools) = given();
        let check = Assume::new(true, volumes, pools);
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
