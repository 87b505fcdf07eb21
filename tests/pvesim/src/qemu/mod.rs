//! QEMU guests: config normalisation, pending/hotplug, tasks and endpoints.

pub mod agent;
pub mod backup;
pub mod cloudinit;
pub mod config;
pub mod create;
pub mod diskops;
pub mod disks;
pub mod ha;
pub mod info;
pub mod lifecycle;
pub mod normalize;
pub mod perms;
pub mod power;
pub mod rollback;
pub mod snapshot;
pub mod update;
pub mod versions;

use crate::error::{ApiError, ApiResult};
use crate::state::{Cluster, Guest, GuestKind};

pub fn missing_conf(node: &str, vmid: u32) -> ApiError {
    ApiError::internal(format!(
        "Configuration file 'nodes/{node}/qemu-server/{vmid}.conf' does not exist"
    ))
}

/// The VM whose config lives on `node`.
pub fn vm<'a>(c: &'a Cluster, node: &str, vmid: u32) -> ApiResult<&'a Guest> {
    c.guests
        .get(&vmid)
        .filter(|g| g.node == node && g.kind == GuestKind::Qemu)
        .ok_or_else(|| missing_conf(node, vmid))
}

pub fn vm_mut<'a>(c: &'a mut Cluster, node: &str, vmid: u32) -> ApiResult<&'a mut Guest> {
    c.guests
        .get_mut(&vmid)
        .filter(|g| g.node == node && g.kind == GuestKind::Qemu)
        .ok_or_else(|| missing_conf(node, vmid))
}

/// Config lock check (`VM is locked (create)`), bypassed by `skiplock`.
pub fn check_lock(g: &Guest, skiplock: bool) -> Result<(), String> {
    match g.conf.current.get("lock") {
        Some(l) if !skiplock => Err(format!("VM is locked ({l})")),
        _ => Ok(()),
    }
}

pub fn is_template(g: &Guest) -> bool {
    g.conf.current.get("template").is_some_and(|t| t == "1")
}

/// Lowest free `unusedN` across current and pending values.
pub fn free_unused_key(g: &Guest) -> String {
    (0..256)
        .map(|n| format!("unused{n}"))
        .find(|k| !g.conf.current.contains_key(k) && !g.conf.pending.contains_key(k))
        .unwrap_or_else(|| "unused255".into())
}

/// Whether a volume is referenced by any key of the config (current or pending).
pub fn volume_referenced(g: &Guest, volid: &str) -> bool {
    g.conf
        .current
        .iter()
        .chain(g.conf.pending.iter())
        .any(|(k, v)| (disks::is_disk_key(k) || disks::is_unused_key(k)) && v.split(',').next() == Some(volid))
}
