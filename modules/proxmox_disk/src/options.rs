//! The options of proxmox_disk, declared once. The drive options (`cache`, `ssd`, ...)
//! come from one table, [`DRIVE_OPTIONS`], which also says how each is written into the
//! drive's property string.

use ferrox_ansible::options::{Kind, Opt, Rules};
use ferrox_run::connection;

/// A drive option: module option name, PVE key, type, choices, description.
pub(crate) struct DriveOption {
    pub name: &'static str,
    pub pve_key: &'static str,
    pub kind: Kind,
    pub choices: &'static [&'static str],
    pub desc: &'static str,
}

const fn opt(name: &'static str, kind: Kind, choices: &'static [&'static str], desc: &'static str) -> DriveOption {
    DriveOption {
        name,
        pve_key: name,
        kind,
        choices,
        desc,
    }
}

/// Every drive option of community.proxmox 1.6, in its order.
pub(crate) const DRIVE_OPTIONS: &[DriveOption] = &[
    opt("aio", Kind::Str, &["native", "threads", "io_uring"], "AIO type to use."),
    opt("backup", Kind::Bool, &[], "Whether the drive is included in backups (Proxmox VE's default when unset: V(true))."),
    opt("bps_max_length", Kind::Int, &[], "Maximum length of total I/O bursts in seconds."),
    opt("bps_rd_max_length", Kind::Int, &[], "Maximum length of read I/O bursts in seconds."),
    opt("bps_wr_max_length", Kind::Int, &[], "Maximum length of write I/O bursts in seconds."),
    opt("cache", Kind::Str, &["none", "writethrough", "writeback", "unsafe", "directsync"], "The drive's cache mode."),
    opt("cyls", Kind::Int, &[], "Force the drive's physical geometry to have a specific cylinder count. Not accepted by Proxmox VE 9; kept for option compatibility."),
    opt("detect_zeroes", Kind::Bool, &[], "Whether to detect and try to optimize writing zeroes."),
    opt("discard", Kind::Str, &["ignore", "on"], "Whether to pass discard/trim requests to the underlying storage."),
    opt("format", Kind::Str, &["raw", "cow", "qcow", "qed", "qcow2", "vmdk", "cloop"], "The drive's backing file's data format. For O(state=moved), the format of the moved copy. The format of an existing disk cannot change in place: a different value fails and names O(state=moved) with O(format)."),
    opt("heads", Kind::Int, &[], "Force the drive's physical geometry to have a specific head count. Not accepted by Proxmox VE 9; kept for option compatibility."),
    DriveOption {
        name: "import_from",
        pve_key: "import-from",
        kind: Kind::Str,
        choices: &[],
        desc: "Import an existing volume as the new disk: C(STORAGE:VMID/FILE), C(STORAGE:import/FILE) (Proxmox VE 9) or an absolute path (root only). Used only when the disk is created; O(storage) is where the copy goes. Mutually exclusive with O(size).",
    },
    opt("iops", Kind::Int, &[], "Maximum r/w I/O in operations per second."),
    opt("iops_max", Kind::Int, &[], "Maximum unthrottled r/w I/O pool in operations per second."),
    opt("iops_max_length", Kind::Int, &[], "Maximum length of I/O bursts in seconds."),
    opt("iops_rd", Kind::Int, &[], "Maximum read I/O in operations per second."),
    opt("iops_rd_max", Kind::Int, &[], "Maximum unthrottled read I/O pool in operations per second."),
    opt("iops_rd_max_length", Kind::Int, &[], "Maximum length of read I/O bursts in seconds."),
    opt("iops_wr", Kind::Int, &[], "Maximum write I/O in operations per second."),
    opt("iops_wr_max", Kind::Int, &[], "Maximum unthrottled write I/O pool in operations per second."),
    opt("iops_wr_max_length", Kind::Int, &[], "Maximum length of write I/O bursts in seconds."),
    opt("iothread", Kind::Bool, &[], "Whether to use iothreads for this drive (only for SCSI and VirtIO)."),
    opt("mbps", Kind::Float, &[], "Maximum total r/w speed in megabytes per second."),
    opt("mbps_max", Kind::Float, &[], "Maximum unthrottled total r/w pool in megabytes per second."),
    opt("mbps_rd", Kind::Float, &[], "Maximum read speed in megabytes per second."),
    opt("mbps_rd_max", Kind::Float, &[], "Maximum unthrottled read pool in megabytes per second."),
    opt("mbps_wr", Kind::Float, &[], "Maximum write speed in megabytes per second."),
    opt("mbps_wr_max", Kind::Float, &[], "Maximum unthrottled write pool in megabytes per second."),
    opt("media", Kind::Str, &["cdrom", "disk"], "The drive's media type."),
    opt("queues", Kind::Int, &[], "Number of queues (SCSI only, at least 2)."),
    opt("replicate", Kind::Bool, &[], "Whether the drive is considered for replication jobs (Proxmox VE's default when unset: V(true))."),
    opt("rerror", Kind::Str, &["ignore", "report", "stop"], "Read error action."),
    opt("ro", Kind::Bool, &[], "Whether the drive is read-only (SCSI and VirtIO)."),
    opt("scsiblock", Kind::Bool, &[], "Whether to use scsi-block for full passthrough of a host block device (SCSI only)."),
    opt("secs", Kind::Int, &[], "Force the drive's physical geometry to have a specific sector count. Not accepted by Proxmox VE 9; kept for option compatibility."),
    opt("serial", Kind::Str, &[], "The drive's reported serial number, url-encoded, up to 20 bytes long."),
    opt("shared", Kind::Bool, &[], "Mark this locally-managed volume as available on all nodes (does not share the volume)."),
    opt("snapshot", Kind::Bool, &[], "Whether the drive is a temporary snapshot drive (changes are discarded when the VM stops)."),
    opt("ssd", Kind::Bool, &[], "Whether to expose this drive as an SSD rather than a rotational disk (not on VirtIO)."),
    opt("trans", Kind::Str, &["auto", "lba", "none"], "Force the disk geometry BIOS translation mode. Not accepted by Proxmox VE 9; kept for option compatibility."),
    opt("werror", Kind::Str, &["enospc", "ignore", "report", "stop"], "Write error action."),
    opt("wwn", Kind::Str, &[], "The drive's worldwide name, encoded as 16 bytes hex string, prefixed by C(0x)."),
];

/// Every option of the module: connection options, then the module's own.
pub(crate) fn options() -> Vec<Opt> {
    let mut opts = connection::options();
    opts.extend([
        Opt::str("name").desc("The name of the VM. Used only when O(vmid) is not given; must match exactly one QEMU VM."),
        Opt::vmid("vmid").desc("The VMID of the VM. Takes precedence over O(name)."),
        Opt::str("disk")
            .required()
            .desc("The disk's config key: C(ide0)-C(ide3), C(sata0)-C(sata5), C(scsi0)-C(scsi30), C(virtio0)-C(virtio15), C(unused0)-C(unused255), C(efidisk0) or C(tpmstate0)."),
        Opt::str("state")
            .default("present")
            .choices(&["present", "resized", "detached", "moved", "absent"])
            .desc("V(present): create the disk or converge its options (and grow it when O(size) is larger). Options the task does not mention are kept.")
            .desc("V(resized): grow the disk to an absolute O(size) (V(500G)), or by a relative one (V(+100G)).")
            .desc("V(detached): detach the disk; its volume is kept as an C(unusedN) entry, named by RV(unused).")
            .desc("V(moved): move the disk to another storage (O(target_storage)) or another VM (O(target_vmid)).")
            .desc("V(absent): detach the disk and delete its volume. The only state that deletes data."),
        Opt::str("create")
            .default("regular")
            .choices(&["disabled", "regular", "forced"])
            .desc("With O(state=present): V(regular) creates the disk when the key is free and converges it otherwise; V(disabled) never creates, only converges an existing disk; V(forced) always creates a new volume, and an existing one is kept as C(unusedN) (named by RV(unused)), never deleted."),
        Opt::str("storage").desc("The storage a new disk is allocated on (O(state=present)). Required to create a disk (except a CD-ROM) and with O(create=forced)."),
        Opt::str("size")
            .desc("With O(state=present): the size of a new disk, in GiB when a bare number (V(32)), or with a unit V(K), V(M), V(G), V(T) (V(512M)). For an existing disk a larger size grows it; a smaller one fails (disks never shrink).")
            .desc("With O(state=resized): an absolute size with a unit (V(500G): no change when the disk already has it; a smaller size fails) or a relative one (V(+100G)). A relative size grows the disk on B(every) run, as in community.proxmox: prefer an absolute size for idempotent playbooks. A bare number is rejected, because Proxmox VE would read it as bytes."),
        Opt::int("bwlimit").desc("Override the I/O bandwidth limit of O(state=moved), in KiB/s."),
        Opt::bool("delete_moved").desc("With O(state=moved) to another storage: delete the source volume after the copy. When false or unset the source volume is kept as C(unusedN), named by RV(unused)."),
        Opt::str("target_disk").desc("With O(state=moved) and O(target_vmid): the disk key on the target VM. Defaults to O(disk)."),
        Opt::str("target_storage").desc("With O(state=moved): the storage to move the disk to (same VM). Already there: no change."),
        Opt::vmid("target_vmid").desc("With O(state=moved): the VM to move the disk to (the volume is reassigned, not copied). When the disk is already on the target VM (and gone from the source), the task succeeds without change."),
        Opt::int("timeout")
            .default(600)
            .at_least(1)
            .desc("Seconds to wait for the Proxmox VE task of a create, import, resize or move. When it runs longer the module fails, says the task is still running, and a rerun converges once it finished."),
        Opt::str("iso_image").desc("The CD-ROM media: C(STORAGE:iso/NAME), V(cdrom) (the host's drive) or V(none) (empty). Requires O(media=cdrom)."),
    ]);
    opts.extend(DRIVE_OPTIONS.iter().map(|d| {
        let o = match d.kind {
            Kind::Bool => Opt::bool(d.name),
            Kind::Int => Opt::int(d.name),
            Kind::Float => Opt::float(d.name),
            _ => Opt::str(d.name),
        };
        let o = if d.choices.is_empty() { o } else { o.choices(d.choices) };
        o.desc(d.desc)
    }));
    opts.push(ferrox_ansible::check_mode_assume::option());
    opts
}

/// The constraints of community.proxmox 1.6.
pub(crate) fn rules() -> Rules {
    let mut r = Rules::default()
        .required_one_of(&["name", "vmid"])
        .merge(connection::rules())
        .required_if("create", "forced", &["storage"])
        .required_if("state", "resized", &["size"])
        .required_by("target_disk", &["target_vmid"]);
    for (key, needs) in [
        ("mbps_max", "mbps"),
        ("mbps_rd_max", "mbps_rd"),
        ("mbps_wr_max", "mbps_wr"),
        ("bps_max_length", "mbps_max"),
        ("bps_rd_max_length", "mbps_rd_max"),
        ("bps_wr_max_length", "mbps_wr_max"),
        ("iops_max", "iops"),
        ("iops_rd_max", "iops_rd"),
        ("iops_wr_max", "iops_wr"),
        ("iops_max_length", "iops_max"),
        ("iops_rd_max_length", "iops_rd_max"),
        ("iops_wr_max_length", "iops_wr_max"),
        ("iso_image", "media"),
    ] {
        r.required_by.push((key, vec![needs]));
    }
    for pair in [
        ["target_vmid", "target_storage"],
        ["mbps", "mbps_rd"],
        ["mbps", "mbps_wr"],
        ["iops", "iops_rd"],
        ["iops", "iops_wr"],
        ["import_from", "size"],
    ] {
        r = r.mutually_exclusive(&pair);
    }
    r
}
