//! A running VM's cloud-init drive as PVE lists it (`GET .../cloudinit`), read into
//! what [`ferrox_pve_rules::cloudinit`] compares.

use ferrox_pve_client::client::{ApiError, Client};
use ferrox_pve_rules::cloudinit::{parse, DriveState};

/// What the VM's cloud-init drive lacks, and what it holds in sync with the config.
pub fn read(client: &Client, node: &str, vmid: u32) -> Result<DriveState, ApiError> {
    Ok(parse(
        &client.get(&format!("/nodes/{node}/qemu/{vmid}/cloudinit"), &[])?,
    ))
}
