//! The task's options in typed form, checked against what the disk's bus accepts.

use std::time::Duration;

use ferrox_ansible::options::read::vmid_in_range;
use ferrox_ansible::options::{Kind, Params};
use ferrox_pve_rules::propstring::{self, formats, number_text, PropString};

use crate::disk_key::DiskKey;
use crate::options::DRIVE_OPTIONS;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum State {
    Present,
    Resized,
    Detached,
    Moved,
    Absent,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Create {
    Disabled,
    Regular,
    Forced,
}

/// Where `state: moved` sends the disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum MoveTarget {
    Storage(String),
    Vm { vmid: u32, disk: String },
}

#[derive(Debug, Clone)]
pub(crate) struct DiskTask {
    pub disk: DiskKey,
    pub vmid: Option<u32>,
    pub name: Option<String>,
    pub state: State,
    pub create: Create,
    pub storage: Option<String>,
    /// As written; its meaning depends on the state (see `plan`).
    pub size: Option<String>,
    /// Drive options the task sets, by PVE key (without `format` and `import-from`).
    pub options: PropString,
    pub format: Option<String>,
    pub import_from: Option<String>,
    pub iso_image: Option<String>,
    pub target: Option<MoveTarget>,
    pub delete_moved: bool,
    pub bwlimit: Option<i64>,
    pub timeout: Duration,
}

impl DiskTask {
    pub(crate) fn from_params(p: &Params) -> Result<DiskTask, String> {
        let disk = DiskKey::parse(p.str("disk").unwrap_or_default())?;
        let vmid = match p.int("vmid") {
            Some(id) => Some(vmid_in_range("vmid", id)?),
            None => None,
        };
        let state = match p.str("state").unwrap_or("present") {
            "resized" => State::Resized,
            "detached" => State::Detached,
            "moved" => State::Moved,
            "absent" => State::Absent,
            _ => State::Present,
        };
        let create = match p.str("create").unwrap_or("regular") {
            "disabled" => Create::Disabled,
            "forced" => Create::Forced,
            _ => Create::Regular,
        };
        // At least 1: the option's declared bound, checked with the other arguments.
        let timeout = p.int("timeout").unwrap_or(600);
        let target = match (p.non_empty("target_storage"), p.int("target_vmid")) {
            (Some(storage), _) => Some(MoveTarget::Storage(storage.to_string())),
            (None, Some(id)) => {
                let target_disk = match p.non_empty("target_disk") {
                    Some(key) => DiskKey::parse(key).map_err(|e| format!("target_disk: {e}"))?.key,
                    None => disk.key.clone(),
                };
                Some(MoveTarget::Vm {
                    vmid: vmid_in_range("target_vmid", id)?,
                    disk: target_disk,
                })
            }
            (None, None) => None,
        };
        let (options, format, import_from) = drive_options(p, &disk)?;
        Ok(DiskTask {
            vmid,
            name: p.non_empty("name").map(str::to_string),
            state,
            create,
            storage: p.non_empty("storage").map(str::to_string),
            size: p.non_empty("size").map(str::to_string),
            options,
            format,
            import_from,
            iso_image: p.non_empty("iso_image").map(str::to_string),
            target,
            delete_moved: p.flag("delete_moved"),
            bwlimit: p.int("bwlimit"),
            timeout: Duration::from_secs(timeout as u64),
            disk,
        })
    }
}

/// The drive options of the task as PVE keys and values, each checked against the bus.
fn drive_options(p: &Params, disk: &DiskKey) -> Result<(PropString, Option<String>, Option<String>), String> {
    let format = disk.format();
    let mut options = PropString::new();
    let mut volume_format = None;
    let mut import_from = None;
    for d in DRIVE_OPTIONS {
        let Some(value) = p.get(d.name) else { continue };
        let text = match d.kind {
            Kind::Bool => if value.as_bool() == Some(true) { "1" } else { "0" }.to_string(),
            Kind::Float => value.as_f64().map(number_text).unwrap_or_else(|| value.to_string()),
            _ => value.as_str().map(str::to_string).unwrap_or_else(|| value.to_string()),
        };
        let Some(key) = format.key(d.pve_key) else {
            return Err(unsupported_on_bus(d.name, d.pve_key, disk));
        };
        propstring::normalise(key.kind, &text)
            .map_err(|why| format!("{} {text:?} is not valid for {}: {why}", d.name, disk.key))?;
        match d.pve_key {
            "format" => volume_format = Some(text),
            "import-from" => import_from = Some(text),
            _ => options.set(d.pve_key, text),
        }
    }
    Ok((options, volume_format, import_from))
}

fn unsupported_on_bus(option: &str, pve_key: &str, disk: &DiskKey) -> String {
    let drive_formats = [
        ("ide", &formats::IDE),
        ("sata", &formats::SATA),
        ("scsi", &formats::SCSI),
        ("virtio", &formats::VIRTIO),
        ("efidisk0", &formats::EFIDISK0),
        ("tpmstate0", &formats::TPMSTATE0),
    ];
    let on: Vec<&str> = drive_formats
        .iter()
        .filter(|(_, f)| f.raw_key(pve_key).is_some())
        .map(|(n, _)| *n)
        .collect();
    if on.is_empty() {
        format!("Option {option} is not accepted by Proxmox VE 9 for any disk; remove it from the task")
    } else {
        format!(
            "Option {option} is not supported for {} disks ({}); Proxmox VE accepts it on: {}",
            disk.bus.name(),
            disk.key,
            on.join(", ")
        )
    }
}
