//! `efidisk0` refused before any write where PVE would take it and fail half-way: only
//! with `bios: ovmf` (in the task or the VM), and the Microsoft 2023 certificates only
//! with pre-enrolled keys. Pure: a create's and an update's decision both hold to it.

use ferrox_ansible::protocol::Failure;
use serde_json::{Map, Value};

use crate::task::{Config, KvmTask};

/// A new EFI disk gets the Microsoft 2023 certificates from PVE only with pre-enrolled
/// keys; `ms_cert` cannot say otherwise (PVE would keep a marker that is not true).
fn new_efidisk_certs(task: &KvmTask) -> Result<(), Failure> {
    let Some(efi) = &task.efi else { return Ok(()) };
    match efi.ms_cert.as_deref() {
        Some(cert) if cert.starts_with("2023") && efi.pre_enrolled_keys != Some(true) => Err(Failure::new(format!(
            "efidisk0.ms_cert: {cert} needs efidisk0.pre_enrolled_keys: true (PVE enrolls the Microsoft 2023 certificates only into an EFI disk with pre-enrolled keys)"
        ))),
        _ => Ok(()),
    }
}

/// `efidisk0` is only created together with `bios: ovmf` (in the task or the VM). Pure.
pub(crate) fn check_efi_bios(
    task: &KvmTask,
    wanted: &Config,
    current: Option<&Map<String, Value>>,
) -> Result<(), Failure> {
    if !wanted.contains_key("efidisk0") || current.is_some_and(|c| c.contains_key("efidisk0")) {
        return Ok(());
    }
    let vm_bios = current.and_then(|c| c.get("bios")).and_then(Value::as_str);
    let bios = task.bios.as_deref();
    if bios == Some("ovmf") || (bios.is_none() && vm_bios == Some("ovmf")) {
        return new_efidisk_certs(task);
    }
    Err(Failure::new("efidisk0 cannot be used if bios is not set to ovmf. "))
}
