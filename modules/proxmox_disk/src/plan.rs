//! The plan: from the VM's live config and the task, what would change. Check mode
//! reports it; a real run executes exactly its actions ([`crate::apply`]), so the two
//! cannot disagree. Pure: no I/O here.

use serde_json::json;

use ferrox_ansible::diff::Diff;
use ferrox_pve_rules::propstring::{differing_keys, PropString};
use ferrox_pve_rules::size::{self, Resize};
use ferrox_pve_rules::unknown;

use crate::current::{Drive, VmConfig};
use crate::disk_key::Bus;
use crate::task::{Create, DiskTask, MoveTarget, State};

/// One write to PVE.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Action {
    /// `POST .../config` with `{key}={value}` (create, replace, or change options).
    SetDrive { key: String, value: String },
    /// `PUT .../resize` with `size` (`40G` or `+5G`).
    Resize { key: String, size: String },
    /// `POST .../move_disk`.
    Move {
        key: String,
        target: MoveTarget,
        format: Option<String>,
        delete: bool,
        bwlimit: Option<i64>,
    },
    /// `PUT .../unlink`; `force` deletes the volume.
    Unlink { key: String, force: bool },
}

/// Where the disk is after the plan: the VM and key to report on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Location {
    pub vmid: u32,
    pub key: String,
}

#[derive(Debug, Clone)]
pub(crate) struct Plan {
    pub msg: String,
    pub actions: Vec<Action>,
    /// One line per change, for people (`cache: writeback -> none`).
    pub changes: Vec<String>,
    /// The disk's entry after the plan (predicted), and where it is.
    pub after: Option<(Location, String)>,
    /// The `unusedN` key (predicted) and volume that a replaced, detached or moved
    /// volume is kept as.
    pub kept_as: Option<(String, String)>,
    pub warnings: Vec<String>,
    pub diff: Diff,
    /// A storage the plan allocates a volume on (checked before anything is written).
    pub allocates_on: Option<String>,
}

impl Plan {
    pub(crate) fn changed(&self) -> bool {
        !self.actions.is_empty()
    }

    fn unchanged(msg: String, vm: &VmConfig, task: &DiskTask) -> Plan {
        let after = vm.text(&task.disk.key).map(|text| {
            (
                Location {
                    vmid: vm.vmid,
                    key: task.disk.key.clone(),
                },
                text,
            )
        });
        Plan {
            msg,
            actions: Vec::new(),
            changes: Vec::new(),
            after,
            kept_as: None,
            warnings: Vec::new(),
            diff: Diff::new(format!("VM {}", vm.vmid)),
            allocates_on: None,
        }
    }
}

/// A planned failure: the message (1.6 wording where 1.6 had one).
pub(crate) type PlanError = String;

/// Plans the task against `vm` (and, for a move to another VM, the target's config).
pub(crate) fn plan(task: &DiskTask, vm: &VmConfig, target_vm: Option<&VmConfig>) -> Result<Plan, PlanError> {
    let drive = vm.drive(&task.disk.key, task.disk.format())?;
    let mut plan = match task.state {
        State::Present => present(task, vm, drive.as_ref())?,
        State::Resized => resized(task, vm, drive.as_ref())?,
        State::Moved => moved(task, vm, drive.as_ref(), target_vm)?,
        State::Detached => detached(task, vm, drive.as_ref()),
        State::Absent => absent(task, vm, drive.as_ref()),
    };
    if plan.changed() {
        let before = drive.as_ref().map(|d| d.text.as_str());
        plan.diff = diff_of(
            vm.vmid,
            &task.disk.key,
            before,
            plan.after.as_ref(),
            plan.kept_as.as_ref(),
        );
    }
    Ok(plan)
}

/// The before/after of the drive entry (and of a kept `unusedN`) for `--diff`.
pub(crate) fn diff_of(
    vmid: u32,
    disk: &str,
    before: Option<&str>,
    after: Option<&(Location, String)>,
    kept_as: Option<&(String, String)>,
) -> Diff {
    let mut diff = Diff::new(format!("VM {vmid}"));
    let before = before.map(|b| json!(b));
    match after {
        Some((loc, text)) if loc.vmid == vmid && loc.key == disk => diff.change(disk, before, Some(json!(text))),
        Some((loc, text)) => {
            diff.change(disk, before, None);
            let label = if loc.vmid == vmid {
                loc.key.clone()
            } else {
                format!("VM {} {}", loc.vmid, loc.key)
            };
            diff.change(&label, None, Some(json!(text)));
        }
        None => diff.change(disk, before, None),
    }
    if let Some((unused, volume)) = kept_as {
        diff.change(unused, None, Some(json!(volume)));
    }
    diff
}

fn present(task: &DiskTask, vm: &VmConfig, drive: Option<&Drive>) -> Result<Plan, PlanError> {
    let (disk, vmid) = (&task.disk.key, vm.vmid);
    if task.disk.bus == Bus::Unused {
        return match drive {
            Some(_) => Ok(Plan::unchanged(format!("Disk {disk} is up to date in VM {vmid}"), vm, task)),
            None => Err(format!(
                "Disk {disk} not found in VM {vmid}: unusedN entries come from detaching a disk (state: detached) and cannot be created"
            )),
        };
    }
    match (drive, task.create) {
        (None, Create::Disabled) => Ok(Plan::unchanged(
            format!("Disk {disk} not found in VM {vmid} and creation was disabled in parameters."),
            vm,
            task,
        )),
        (None, _) | (Some(_), Create::Forced) => create(task, vm, drive),
        (Some(d), _) => converge(task, vm, d),
    }
}

/// The value of a new drive, and the message and change line for it.
fn create(task: &DiskTask, vm: &VmConfig, old: Option<&Drive>) -> Result<Plan, PlanError> {
    let (disk, vmid) = (&task.disk.key, vm.vmid);
    let format = task.disk.format();
    let mut props = PropString::new();
    let (msg, change) = if let Some(source) = &task.import_from {
        let storage = task
            .storage
            .as_deref()
            .ok_or("storage is required with import_from: it names the storage the imported copy is written to")?;
        props.set("file", format!("{storage}:0"));
        props.set("import-from", source.clone());
        (
            format!("Disk {disk} imported into VM {vmid}"),
            format!("import {source} as {disk} on {storage}"),
        )
    } else if let Some(iso) = &task.iso_image {
        props.set("file", iso.clone());
        (
            format!("CD-ROM was created on {disk} bus in VM {vmid}"),
            format!("create CD-ROM {disk} with {iso}"),
        )
    } else if task.options.get("media") == Some("cdrom") {
        props.set("file", "none");
        (
            format!("CD-ROM was created on {disk} bus in VM {vmid}"),
            format!("create empty CD-ROM {disk}"),
        )
    } else {
        let storage = task.storage.as_deref().ok_or("The storage option must be specified.")?;
        let bytes = match (&task.size, task.disk.bus) {
            (Some(s), _) => size::parse_gib_default(s).map_err(|e| format!("size: {e}"))?,
            // PVE sizes EFI vars and TPM state itself; the number is ignored.
            (None, Bus::EfiDisk | Bus::TpmState) => size::GIB,
            (None, _) => {
                return Err(format!(
                "size is required to create disk {disk}: a number of GiB (size: 32) or a size with a unit (size: 512M)"
            ))
            }
        };
        if bytes == 0 {
            return Err(format!("size must be more than 0 to create disk {disk}"));
        }
        props.set("file", format!("{storage}:{}", size::gib_for_allocation(bytes)));
        let shown = if matches!(task.disk.bus, Bus::EfiDisk | Bus::TpmState) {
            String::new()
        } else {
            format!(" ({})", size::format(bytes))
        };
        (
            format!("Disk {disk} created in VM {vmid}"),
            format!("create {disk} on {storage}{shown}"),
        )
    };
    if let Some(f) = &task.format {
        props.set("format", f.clone());
    }
    for (k, v) in task.options.iter() {
        props.set(k, v);
    }
    let value = props.to_canonical(format);
    let is_media =
        task.import_from.is_none() && (task.iso_image.is_some() || task.options.get("media") == Some("cdrom"));
    let mut changes = vec![change];
    let kept_as = match old {
        Some(d) if d.keeps_volume_when_detached() => {
            let unused = vm.free_unused().ok_or(format!(
                "VM {vmid} has no free unusedN key to keep the old volume of {disk}"
            ))?;
            changes.push(format!("keep the old volume {} as {unused}", d.file()));
            Some((unused, d.file().to_string()))
        }
        _ => None,
    };
    // The entry as PVE will store it: the volume it allocates is known after apply.
    let after = unknown::after_write(disk, &value);
    Ok(Plan {
        msg,
        actions: vec![Action::SetDrive {
            key: disk.clone(),
            value: value.clone(),
        }],
        changes,
        after: Some((
            Location {
                vmid,
                key: disk.clone(),
            },
            after,
        )),
        kept_as,
        warnings: Vec::new(),
        diff: Diff::default(),
        allocates_on: if task.import_from.is_some() || !is_media {
            task.storage.clone()
        } else {
            None
        },
    })
}

/// Options, media and size of an existing drive brought to what the task says.
fn converge(task: &DiskTask, vm: &VmConfig, d: &Drive) -> Result<Plan, PlanError> {
    let (disk, vmid) = (&task.disk.key, vm.vmid);
    let format = task.disk.format();
    let mut warnings = Vec::new();
    let mut changes = Vec::new();
    let mut actions = Vec::new();
    let mut props = d.props.clone();

    if task.import_from.is_some() {
        warnings.push(format!(
            "import_from is only used when a disk is created; {disk} exists and was kept (create: forced imports into a new volume and keeps the old one as unusedN)"
        ));
    }
    if let (Some(wanted), Some(current)) = (task.storage.as_deref(), d.storage()) {
        if wanted != current {
            warnings.push(format!(
                "Disk {disk} is on storage {current}, not {wanted}; state: present does not move disks: use state: moved with target_storage: {wanted}"
            ));
        }
    }
    if let (Some(wanted), Some(current)) = (task.format.as_deref(), d.volume_format()) {
        if wanted != current {
            return Err(format!(
                "Disk {disk} of VM {vmid} is in {current} format; the format of an existing disk cannot change in place. Convert it with state: moved, target_storage and format: {wanted}"
            ));
        }
    }

    if let Some(iso) = &task.iso_image {
        if !d.is_cdrom() {
            return Err(format!(
                "Disk {disk} of VM {vmid} holds the disk volume {}, not a CD-ROM: iso_image would replace it. Detach it first (state: detached keeps the volume as unusedN) or put the CD-ROM on a free key",
                d.file()
            ));
        }
        if d.file() != iso {
            changes.push(format!("media: {} -> {iso}", d.file()));
            props.set("file", iso.clone());
            props.remove("size");
        }
    }
    for key in differing_keys(&d.props, &task.options, format) {
        let wanted = task.options.get(&key).unwrap_or_default();
        if key == "media" {
            return Err(format!(
                "Disk {disk} of VM {vmid} is a {} drive; media cannot change in place. Detach it (state: detached keeps a disk's volume) and create the drive again",
                if d.is_cdrom() { "cdrom" } else { "disk" }
            ));
        }
        changes.push(format!("{key}: {} -> {wanted}", d.props.get(&key).unwrap_or("unset")));
        props.set(&key, wanted);
    }
    if !changes.is_empty() {
        actions.push(Action::SetDrive {
            key: disk.clone(),
            value: props.to_canonical(format),
        });
    }

    let sized = !d.is_cdrom() && task.disk.bus.is_drive();
    if let (Some(text), true) = (&task.size, sized) {
        let wanted = size::parse_gib_default(text).map_err(|e| format!("size: {e}"))?;
        match d.size_bytes() {
            Some(current) if wanted < current => {
                return Err(shrink_refused(disk, vmid, current, text));
            }
            Some(current) if wanted > current => {
                changes.push(format!("size: {} -> {}", size::format(current), size::format(wanted)));
                actions.push(Action::Resize {
                    key: disk.clone(),
                    size: size::format(wanted),
                });
                props.set("size", size::format(wanted));
            }
            Some(_) => {}
            None => warnings.push(format!("Disk {disk} reports no size; size {text} was not applied")),
        }
    }

    let msg = if actions.is_empty() {
        format!("Disk {disk} is up to date in VM {vmid}")
    } else {
        format!("Disk {disk} updated in VM {vmid}")
    };
    Ok(Plan {
        msg,
        actions,
        changes,
        after: Some((
            Location {
                vmid,
                key: disk.clone(),
            },
            props.to_canonical(format),
        )),
        kept_as: None,
        warnings,
        diff: Diff::default(),
        allocates_on: None,
    })
}

fn shrink_refused(disk: &str, vmid: u32, current: u64, asked: &str) -> String {
    format!(
        "Disk {disk} of VM {vmid} is {}; size {asked} would shrink it, which Proxmox VE refuses (data would be lost). Give a size of at least {}, or create a new smaller disk and copy the data",
        size::format(current),
        size::format(current)
    )
}

fn missing(task: &DiskTask, vm: &VmConfig) -> String {
    format!("Unable to process missing disk {} in VM {}", task.disk.key, vm.vmid)
}

fn resized(task: &DiskTask, vm: &VmConfig, drive: Option<&Drive>) -> Result<Plan, PlanError> {
    let (disk, vmid) = (&task.disk.key, vm.vmid);
    let d = drive.ok_or_else(|| missing(task, vm))?;
    if !task.disk.bus.is_drive() && task.disk.bus != Bus::EfiDisk {
        return Err(format!(
            "Disk {disk} cannot be resized: only ide, sata, scsi and virtio disks have a size to change"
        ));
    }
    if d.is_cdrom() {
        return Err(format!(
            "Disk {disk} of VM {vmid} is a CD-ROM drive; only disks can be resized"
        ));
    }
    let text = task.size.as_deref().unwrap_or_default();
    let request =
        size::parse_resize(text).map_err(|e| format!("Unrecognized size pattern for disk {disk}: {text}. {e}"))?;
    let current = d.size_bytes();
    let (new_size, sent) = match (request, current) {
        (Resize::To(bytes), Some(cur)) if bytes == cur => {
            return Ok(Plan::unchanged(format!("Disk {disk} is already {text} size"), vm, task));
        }
        (Resize::To(bytes), Some(cur)) if bytes < cur => return Err(shrink_refused(disk, vmid, cur, text)),
        (Resize::To(bytes), _) => (Some(bytes), size::format(bytes)),
        (Resize::By(0), _) => {
            return Ok(Plan::unchanged(
                format!("Disk {disk} is already {} size", size_text(current)),
                vm,
                task,
            ));
        }
        (Resize::By(bytes), cur) => {
            let grown = match cur {
                Some(c) => Some(c.checked_add(bytes).ok_or_else(|| {
                    format!("size {text} would grow disk {disk} of VM {vmid} past the largest size there is; give a smaller growth")
                })?),
                None => None,
            };
            (grown, format!("+{}", size::format(bytes)))
        }
    };
    let mut props = d.props.clone();
    if let Some(b) = new_size {
        props.set("size", size::format(b));
    }
    Ok(Plan {
        msg: format!("Disk {disk} resized in VM {vmid}"),
        actions: vec![Action::Resize {
            key: disk.clone(),
            size: sent,
        }],
        changes: vec![format!(
            "size: {} -> {}",
            size_text(current),
            new_size.map(size::format).unwrap_or_else(|| text.to_string())
        )],
        after: Some((
            Location {
                vmid,
                key: disk.clone(),
            },
            props.to_canonical(task.disk.format()),
        )),
        kept_as: None,
        warnings: Vec::new(),
        diff: Diff::default(),
        allocates_on: None,
    })
}

fn size_text(bytes: Option<u64>) -> String {
    bytes.map(size::format).unwrap_or_else(|| "unknown".into())
}

fn moved(
    task: &DiskTask,
    vm: &VmConfig,
    drive: Option<&Drive>,
    target_vm: Option<&VmConfig>,
) -> Result<Plan, PlanError> {
    let (disk, vmid) = (&task.disk.key, vm.vmid);
    let target = task
        .target
        .clone()
        .ok_or("state=moved needs target_storage (another storage of the same VM) or target_vmid (another VM)")?;
    if let MoveTarget::Vm { vmid: t, .. } = &target {
        if *t == vmid {
            return Err(format!(
                "target_vmid {t} is the disk's own VM: to move the disk to another storage, use target_storage"
            ));
        }
    }
    let Some(d) = drive else {
        if let (MoveTarget::Vm { vmid: t, disk: tdisk }, Some(tvm)) = (&target, target_vm) {
            if tvm.has(tdisk) {
                let mut plan = Plan::unchanged(format!("Disk {disk} is already moved to VM {t} as {tdisk}"), vm, task);
                plan.after = tvm.text(tdisk).map(|text| {
                    (
                        Location {
                            vmid: *t,
                            key: tdisk.clone(),
                        },
                        text,
                    )
                });
                return Ok(plan);
            }
        }
        return Err(missing(task, vm));
    };
    if !d.is_volume() || d.is_cdrom() {
        return Err(format!(
            "Disk {disk} of VM {vmid} is {}: only disk volumes can be moved",
            describe(d)
        ));
    }
    let source = d.storage().unwrap_or_default().to_string();
    let format = task.disk.format();
    let mut props = d.props.clone();
    let (after, kept_as, change) = match &target {
        MoveTarget::Storage(storage) => {
            let converts = task
                .format
                .as_ref()
                .is_some_and(|f| d.volume_format().as_ref() != Some(f));
            if *storage == source && !converts {
                return Ok(Plan::unchanged(
                    format!("Disk {disk} already at {storage} storage"),
                    vm,
                    task,
                ));
            }
            props.set("file", format!("{storage}:{}", unknown::UNKNOWN));
            if let Some(f) = &task.format {
                props.set("format", f.clone());
            }
            let kept = if task.delete_moved {
                None
            } else {
                let unused = vm.free_unused().ok_or(format!(
                    "VM {vmid} has no free unusedN key to keep the source volume of {disk}"
                ))?;
                Some((unused, d.file().to_string()))
            };
            (
                Location {
                    vmid,
                    key: disk.clone(),
                },
                kept,
                format!("move {disk} from storage {source} to {storage}"),
            )
        }
        MoveTarget::Vm { vmid: t, disk: tdisk } => {
            if let Some(existing) = target_vm.and_then(|tvm| tvm.text(tdisk)) {
                return Err(format!(
                    "VM {t} already has {tdisk} ({existing}); choose a free target_disk, or detach that disk first"
                ));
            }
            (
                Location {
                    vmid: *t,
                    key: tdisk.clone(),
                },
                None,
                format!("move {disk} of VM {vmid} to VM {t} as {tdisk}"),
            )
        }
    };
    let mut changes = vec![change];
    if let Some((unused, volume)) = &kept_as {
        changes.push(format!("keep the source volume {volume} as {unused}"));
    }
    let allocates_on = match &target {
        MoveTarget::Storage(storage) => Some(storage.clone()),
        MoveTarget::Vm { .. } => None,
    };
    Ok(Plan {
        msg: format!("Disk {disk} moved from VM {vmid} storage {source}"),
        actions: vec![Action::Move {
            key: disk.clone(),
            target,
            format: task.format.clone(),
            delete: task.delete_moved,
            bwlimit: task.bwlimit,
        }],
        changes,
        allocates_on,
        after: Some((after, props.to_canonical(format))),
        kept_as,
        warnings: Vec::new(),
        diff: Diff::default(),
    })
}

fn describe(d: &Drive) -> String {
    match d.file() {
        "none" => "an empty CD-ROM drive".into(),
        "cdrom" => "the host's CD-ROM drive".into(),
        f if f.starts_with('/') => format!("the passed-through device {f}"),
        f => format!("the CD-ROM {f}"),
    }
}

fn detached(task: &DiskTask, vm: &VmConfig, drive: Option<&Drive>) -> Plan {
    let (disk, vmid) = (&task.disk.key, vm.vmid);
    if task.disk.bus == Bus::Unused {
        return Plan::unchanged(format!("Disk {disk} already detached in VM {vmid}"), vm, task);
    }
    let Some(d) = drive else {
        return Plan::unchanged(format!("Disk {disk} not present in VM {vmid} config"), vm, task);
    };
    let kept_as = d
        .keeps_volume_when_detached()
        .then(|| vm.free_unused().map(|u| (u, d.file().to_string())))
        .flatten();
    let mut changes = vec![format!("detach {disk}")];
    if let Some((unused, volume)) = &kept_as {
        changes.push(format!("keep the volume {volume} as {unused}"));
    }
    Plan {
        msg: format!("Disk {disk} detached from VM {vmid}"),
        actions: vec![Action::Unlink {
            key: disk.clone(),
            force: false,
        }],
        changes,
        after: None,
        kept_as,
        warnings: Vec::new(),
        diff: Diff::default(),
        allocates_on: None,
    }
}

fn absent(task: &DiskTask, vm: &VmConfig, drive: Option<&Drive>) -> Plan {
    let (disk, vmid) = (&task.disk.key, vm.vmid);
    let Some(d) = drive else {
        return Plan::unchanged(format!("Disk {disk} is already absent in VM {vmid}"), vm, task);
    };
    let change = if d.keeps_volume_when_detached() || task.disk.bus == Bus::Unused {
        format!("remove {disk} and delete its volume {}", d.file())
    } else {
        format!("remove {disk}")
    };
    Plan {
        msg: format!("Disk {disk} removed from VM {vmid}"),
        actions: vec![Action::Unlink {
            key: disk.clone(),
            force: true,
        }],
        changes: vec![change],
        after: None,
        kept_as: None,
        warnings: Vec::new(),
        diff: Diff::default(),
        allocates_on: None,
    }
}

#[cfg(test)]
#[path = "plan_tests.rs"]
mod tests;
