//! The module's result: the plan's message and changes, plus the disk as it is after
//! the run (read back from PVE) or would be (check mode, predicted).

use ferrox_ansible::protocol::Output;
use ferrox_pve_rules::propstring::{self, formats};
use ferrox_pve_rules::size;
use ferrox_pve_rules::unknown;

use crate::current::VmConfig;
use crate::plan::{diff_of, Location, Plan};

/// The result of a run that wrote nothing (check mode, or nothing to change).
pub(crate) fn predicted(plan: &Plan, vm: &VmConfig) -> Output {
    build(plan, vm.vmid, plan.after.as_ref(), plan.kept_as.as_ref()).with_diff(plan.diff.clone())
}

/// The result after the actions ran: `after_vm` is the VM read back (the target VM
/// of a move to another VM, else the disk's own VM).
pub(crate) fn actual(plan: &Plan, before: &VmConfig, after_vm: &VmConfig, disk: &str) -> Output {
    let after = plan
        .after
        .as_ref()
        .map(|(loc, _)| loc.clone())
        .and_then(|loc| after_vm.text(&loc.key).map(|text| (loc, text)));
    let kept = plan.kept_as.as_ref().map(|(predicted, volume)| {
        (
            after_vm.unused_holding(volume).unwrap_or_else(|| predicted.clone()),
            volume.clone(),
        )
    });
    let pending = after
        .as_ref()
        .is_some_and(|(loc, _)| after_vm.pending.contains(&loc.key))
        || kept
            .as_ref()
            .is_some_and(|(unused, _)| after_vm.pending.contains(unused))
        || (after.is_none() && after_vm.pending.iter().any(|k| k == disk));
    let before_text = before.text(disk);
    let diff = diff_of(before.vmid, disk, before_text.as_deref(), after.as_ref(), kept.as_ref());
    build(plan, before.vmid, after.as_ref(), kept.as_ref())
        .with_diff(diff)
        .with("pending", pending)
}

fn build(plan: &Plan, vmid: u32, after: Option<&(Location, String)>, kept: Option<&(String, String)>) -> Output {
    let mut out = Output::new(plan.changed(), plan.msg.clone())
        .with("vmid", vmid)
        .with("changes", &plan.changes);
    match after {
        Some((loc, text)) => {
            let parsed = formats::for_config_key(&loc.key).and_then(|f| propstring::parse(text, f).ok());
            let file = parsed.as_ref().and_then(|p| p.get("file")).map(str::to_string);
            let storage = file
                .as_deref()
                .filter(|f| !f.starts_with('/') && f.contains(':'))
                .map(|f| f.split(':').next().unwrap_or_default().to_string());
            // A dry run knows the size asked for, not the volume PVE will name.
            let mut later = Vec::new();
            let file = match file {
                Some(f) if unknown::is_unknown(&f) => {
                    later.push("volume");
                    None
                }
                other => other,
            };
            let size_text = match parsed.as_ref().and_then(|p| p.get("size")) {
                Some(s) if unknown::is_unknown(s) => {
                    later.extend(["size", "size_bytes"]);
                    None
                }
                other => other.map(str::to_string),
            };
            if !later.is_empty() {
                out.set(unknown::RESULT_KEY, later);
            }
            out.set("disk", &loc.key);
            out.set("disk_vmid", loc.vmid);
            out.set("disk_config", text);
            out.set("volume", file);
            out.set("storage", storage);
            out.set("size_bytes", size_text.as_deref().and_then(|s| size::parse(s).ok()));
            out.set("size", size_text);
        }
        None => {
            out.set("disk_config", serde_json::Value::Null);
        }
    }
    if let Some((unused, volume)) = kept {
        out.set("unused", unused);
        out.set("unused_volume", volume);
    }
    out
}
