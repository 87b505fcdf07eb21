//! Property-string formats and the config keys of QEMU VMs, generated from PVE's API
//! schema by `UPDATE_FORMATS=1 cargo test -p ferrox-pve-rules formats_table`. Do not edit
//! by hand.

use super::format_spec::{alias, format_among, key, key_alias, Format, Kind};
use super::schema_entry::{Accepts, ConfigKey, Introduced};

/// The property string of the `agent` config key, as the schema declares it.
pub const AGENT: Format = Format {
    name: "agent",
    keys: &[
        key("enabled", Kind::Bool, Some("0"), true),
        key("freeze-fs", Kind::Bool, Some("1"), false),
        alias("freeze-fs-on-backup", "freeze-fs"),
        key("fstrim_cloned_disks", Kind::Bool, Some("0"), false),
        alias("guest-fsfreeze", "freeze-fs"),
        key("type", Kind::Enum(&["virtio", "isa"]), Some("virtio"), false),
    ],
};

/// The property string of the `amd-sev` config key, as the schema declares it.
pub const AMD_SEV: Format = Format {
    name: "amd-sev",
    keys: &[
        key("allow-smt", Kind::Bool, None, false),
        key("kernel-hashes", Kind::Bool, None, false),
        key("no-debug", Kind::Bool, None, false),
        key("no-key-sharing", Kind::Bool, None, false),
        key("type", Kind::Str, None, true),
    ],
};

/// The property string of the `audio0` config key, as the schema declares it.
pub const AUDIO0: Format = Format {
    name: "audio0",
    keys: &[
        key("device", Kind::Enum(&["ich9-intel-hda", "intel-hda", "AC97"]), None, false),
        key("driver", Kind::Enum(&["spice", "none"]), Some("spice"), false),
    ],
};

/// The property string of the `boot` config key, as the schema declares it.
pub const BOOT: Format = Format {
    name: "boot",
    keys: &[
        key("legacy", Kind::Str, None, true),
        key("order", Kind::List, None, false),
    ],
};

/// The property string of the `cicustom` config key, as the schema declares it.
pub const CICUSTOM: Format = Format {
    name: "cicustom",
    keys: &[
        key("meta", Kind::Str, None, false),
        key("network", Kind::Str, None, false),
        key("user", Kind::Str, None, false),
        key("vendor", Kind::Str, None, false),
    ],
};

/// The property string of the `cpu` config key, as the schema declares it.
pub const CPU: Format = Format {
    name: "cpu",
    keys: &[
        key("cputype", Kind::Str, None, true),
        key("flags", Kind::List, None, false),
        key("guest-phys-bits", Kind::Int, None, false),
        key("hidden", Kind::Bool, None, false),
        key("hv-vendor-id", Kind::Str, None, false),
        key("level", Kind::Int, None, false),
        key("phys-bits", Kind::Str, None, false),
        key("reported-model", Kind::Str, None, false),
    ],
};

/// The property string of the `efidisk0` config key, as the schema declares it.
pub const EFIDISK0: Format = Format {
    name: "efidisk0",
    keys: &[
        key("efitype", Kind::Enum(&["2m", "4m"]), Some("2m"), false),
        key("file", Kind::Str, None, true),
        key("format", Kind::Enum(&["raw", "qcow", "qed", "qcow2", "vmdk", "cloop"]), None, false),
        key("import-from", Kind::Str, None, false),
        key("ms-cert", Kind::Enum(&["2011", "2023", "2023w", "2023k"]), Some("2011"), false),
        key("pre-enrolled-keys", Kind::Bool, Some("0"), false),
        key("size", Kind::Size, None, false),
        alias("volume", "file"),
    ],
};

/// The property string of the `hostpci[n]` config key, as the schema declares it.
pub const HOSTPCI: Format = Format {
    name: "hostpci[n]",
    keys: &[
        key("device-id", Kind::Str, None, false),
        key("driver", Kind::Enum(&["vfio", "keep"]), None, false),
        key("host", Kind::List, None, true),
        key("legacy-igd", Kind::Bool, None, false),
        key("mapping", Kind::Str, None, false),
        key("mdev", Kind::Str, None, false),
        key("pcie", Kind::Bool, None, false),
        key("rombar", Kind::Bool, None, false),
        key("romfile", Kind::Str, None, false),
        key("sub-device-id", Kind::Str, None, false),
        key("sub-vendor-id", Kind::Str, None, false),
        key("vendor-id", Kind::Str, None, false),
        key("x-vga", Kind::Bool, None, false),
    ],
};

/// The property string of the `ide[n]` config key, as the schema declares it.
pub const IDE: Format = Format {
    name: "ide[n]",
    keys: &[
        key("aio", Kind::Enum(&["native", "threads", "io_uring"]), None, false),
        key("backup", Kind::Bool, None, false),
        key("bps", Kind::Int, None, false),
        key("bps_max_length", Kind::Int, None, false),
        key("bps_rd", Kind::Int, None, false),
        alias("bps_rd_length", "bps_rd_max_length"),
        key("bps_rd_max_length", Kind::Int, None, false),
        key("bps_wr", Kind::Int, None, false),
        alias("bps_wr_length", "bps_wr_max_length"),
        key("bps_wr_max_length", Kind::Int, None, false),
        key("cache", Kind::Enum(&["none", "writethrough", "writeback", "unsafe", "directsync"]), None, false),
        key("detect_zeroes", Kind::Bool, None, false),
        key("discard", Kind::Enum(&["ignore", "on"]), None, false),
        key("file", Kind::Str, None, true),
        key("format", Kind::Enum(&["raw", "qcow", "qed", "qcow2", "vmdk", "cloop"]), None, false),
        key("import-from", Kind::Str, None, false),
        key("iops", Kind::Int, None, false),
        key("iops_max", Kind::Int, None, false),
        key("iops_max_length", Kind::Int, None, false),
        key("iops_rd", Kind::Int, None, false),
        alias("iops_rd_length", "iops_rd_max_length"),
        key("iops_rd_max", Kind::Int, None, false),
        key("iops_rd_max_length", Kind::Int, None, false),
        key("iops_wr", Kind::Int, None, false),
        alias("iops_wr_length", "iops_wr_max_length"),
        key("iops_wr_max", Kind::Int, None, false),
        key("iops_wr_max_length", Kind::Int, None, false),
        key("mbps", Kind::Number, None, false),
        key("mbps_max", Kind::Number, None, false),
        key("mbps_rd", Kind::Number, None, false),
        key("mbps_rd_max", Kind::Number, None, false),
        key("mbps_wr", Kind::Number, None, false),
        key("mbps_wr_max", Kind::Number, None, false),
        key("media", Kind::Enum(&["cdrom", "disk"]), Some("disk"), false),
        key("model", Kind::Str, None, false),
        key("replicate", Kind::Bool, Some("1"), false),
        key("rerror", Kind::Enum(&["ignore", "report", "stop"]), None, false),
        key("serial", Kind::Str, None, false),
        key("shared", Kind::Bool, Some("0"), false),
        key("size", Kind::Size, None, false),
        key("snapshot", Kind::Bool, None, false),
        key("ssd", Kind::Bool, None, false),
        alias("volume", "file"),
        key("werror", Kind::Enum(&["enospc", "ignore", "report", "stop"]), None, false),
        key("wwn", Kind::Str, None, false),
    ],
};

/// The property string of the `intel-tdx` config key, as the schema declares it.
pub const INTEL_TDX: Format = Format {
    name: "intel-tdx",
    keys: &[
        key("attestation", Kind::Bool, None, false),
        key("type", Kind::Str, None, true),
        key("vsock-cid", Kind::Int, None, false),
        key("vsock-port", Kind::Int, None, false),
    ],
};

/// The property string of the `ipconfig[n]` config key, as the schema declares it.
pub const IPCONFIG: Format = Format {
    name: "ipconfig[n]",
    keys: &[
        key("gw", Kind::Str, None, false),
        key("gw6", Kind::Str, None, false),
        key("ip", Kind::Str, None, false),
        key("ip6", Kind::Str, None, false),
    ],
};

/// The property string of the `ivshmem` config key, as the schema declares it.
pub const IVSHMEM: Format = Format {
    name: "ivshmem",
    keys: &[
        key("name", Kind::Str, None, false),
        key("size", Kind::Int, None, false),
    ],
};

/// The property string of the `machine` config key, as the schema declares it.
pub const MACHINE: Format = Format {
    name: "machine",
    keys: &[
        key("aw-bits", Kind::Number, None, false),
        key("enable-s3", Kind::Bool, None, false),
        key("enable-s4", Kind::Bool, None, false),
        key("type", Kind::Str, None, true),
        key("viommu", Kind::Enum(&["intel", "virtio"]), None, false),
    ],
};

/// The property string of the `memory` config key, as the schema declares it.
pub const MEMORY: Format = Format {
    name: "memory",
    keys: &[
        key("current", Kind::Int, Some("512"), true),
    ],
};

/// The property string of the `net[n]` config key, as the schema declares it.
pub const NET: Format = Format {
    name: "net[n]",
    keys: &[
        key("bridge", Kind::Str, None, false),
        key_alias("e1000", "macaddr", "model"),
        key_alias("e1000-82540em", "macaddr", "model"),
        key_alias("e1000-82544gc", "macaddr", "model"),
        key_alias("e1000-82545em", "macaddr", "model"),
        key_alias("e1000e", "macaddr", "model"),
        key("firewall", Kind::Bool, None, false),
        key("host-tunnel", Kind::Bool, None, false),
        key_alias("i82551", "macaddr", "model"),
        key_alias("i82557b", "macaddr", "model"),
        key_alias("i82559er", "macaddr", "model"),
        key("link_down", Kind::Bool, None, false),
        key("macaddr", Kind::Mac, None, false),
        key("model", Kind::Enum(&["e1000", "e1000-82540em", "e1000-82544gc", "e1000-82545em", "e1000e", "i82551", "i82557b", "i82559er", "ne2k_isa", "ne2k_pci", "pcnet", "rtl8139", "virtio", "vmxnet3"]), None, true),
        key("mtu", Kind::Int, None, false),
        key_alias("ne2k_isa", "macaddr", "model"),
        key_alias("ne2k_pci", "macaddr", "model"),
        key_alias("pcnet", "macaddr", "model"),
        key("queues", Kind::Int, None, false),
        key("rate", Kind::Number, None, false),
        key_alias("rtl8139", "macaddr", "model"),
        key("tag", Kind::Int, None, false),
        key("trunks", Kind::List, None, false),
        key_alias("virtio", "macaddr", "model"),
        key_alias("vmxnet3", "macaddr", "model"),
    ],
};

/// The property string of the `numa[n]` config key, as the schema declares it.
pub const NUMA: Format = Format {
    name: "numa[n]",
    keys: &[
        key("cpus", Kind::List, None, false),
        key("hostnodes", Kind::List, None, false),
        key("memory", Kind::Number, None, false),
        key("policy", Kind::Enum(&["preferred", "bind", "interleave"]), None, false),
    ],
};

/// The property string of the `rng0` config key, as the schema declares it.
pub const RNG0: Format = Format {
    name: "rng0",
    keys: &[
        key("max_bytes", Kind::Int, None, false),
        key("period", Kind::Int, None, false),
        key("source", Kind::Enum(&["/dev/urandom", "/dev/random", "/dev/hwrng"]), None, true),
    ],
};

/// The property string of the `sata[n]` config key, as the schema declares it.
pub const SATA: Format = Format {
    name: "sata[n]",
    keys: &[
        key("aio", Kind::Enum(&["native", "threads", "io_uring"]), None, false),
        key("backup", Kind::Bool, None, false),
        key("bps", Kind::Int, None, false),
        key("bps_max_length", Kind::Int, None, false),
        key("bps_rd", Kind::Int, None, false),
        alias("bps_rd_length", "bps_rd_max_length"),
        key("bps_rd_max_length", Kind::Int, None, false),
        key("bps_wr", Kind::Int, None, false),
        alias("bps_wr_length", "bps_wr_max_length"),
        key("bps_wr_max_length", Kind::Int, None, false),
        key("cache", Kind::Enum(&["none", "writethrough", "writeback", "unsafe", "directsync"]), None, false),
        key("detect_zeroes", Kind::Bool, None, false),
        key("discard", Kind::Enum(&["ignore", "on"]), None, false),
        key("file", Kind::Str, None, true),
        key("format", Kind::Enum(&["raw", "qcow", "qed", "qcow2", "vmdk", "cloop"]), None, false),
        key("import-from", Kind::Str, None, false),
        key("iops", Kind::Int, None, false),
        key("iops_max", Kind::Int, None, false),
        key("iops_max_length", Kind::Int, None, false),
        key("iops_rd", Kind::Int, None, false),
        alias("iops_rd_length", "iops_rd_max_length"),
        key("iops_rd_max", Kind::Int, None, false),
        key("iops_rd_max_length", Kind::Int, None, false),
        key("iops_wr", Kind::Int, None, false),
        alias("iops_wr_length", "iops_wr_max_length"),
        key("iops_wr_max", Kind::Int, None, false),
        key("iops_wr_max_length", Kind::Int, None, false),
        key("mbps", Kind::Number, None, false),
        key("mbps_max", Kind::Number, None, false),
        key("mbps_rd", Kind::Number, None, false),
        key("mbps_rd_max", Kind::Number, None, false),
        key("mbps_wr", Kind::Number, None, false),
        key("mbps_wr_max", Kind::Number, None, false),
        key("media", Kind::Enum(&["cdrom", "disk"]), Some("disk"), false),
        key("replicate", Kind::Bool, Some("1"), false),
        key("rerror", Kind::Enum(&["ignore", "report", "stop"]), None, false),
        key("serial", Kind::Str, None, false),
        key("shared", Kind::Bool, Some("0"), false),
        key("size", Kind::Size, None, false),
        key("snapshot", Kind::Bool, None, false),
        key("ssd", Kind::Bool, None, false),
        alias("volume", "file"),
        key("werror", Kind::Enum(&["enospc", "ignore", "report", "stop"]), None, false),
        key("wwn", Kind::Str, None, false),
    ],
};

/// The property string of the `scsi[n]` config key, as the schema declares it.
pub const SCSI: Format = Format {
    name: "scsi[n]",
    keys: &[
        key("aio", Kind::Enum(&["native", "threads", "io_uring"]), None, false),
        key("backup", Kind::Bool, None, false),
        key("bps", Kind::Int, None, false),
        key("bps_max_length", Kind::Int, None, false),
        key("bps_rd", Kind::Int, None, false),
        alias("bps_rd_length", "bps_rd_max_length"),
        key("bps_rd_max_length", Kind::Int, None, false),
        key("bps_wr", Kind::Int, None, false),
        alias("bps_wr_length", "bps_wr_max_length"),
        key("bps_wr_max_length", Kind::Int, None, false),
        key("cache", Kind::Enum(&["none", "writethrough", "writeback", "unsafe", "directsync"]), None, false),
        key("detect_zeroes", Kind::Bool, None, false),
        key("discard", Kind::Enum(&["ignore", "on"]), None, false),
        key("file", Kind::Str, None, true),
        key("format", Kind::Enum(&["raw", "qcow", "qed", "qcow2", "vmdk", "cloop"]), None, false),
        key("import-from", Kind::Str, None, false),
        key("iops", Kind::Int, None, false),
        key("iops_max", Kind::Int, None, false),
        key("iops_max_length", Kind::Int, None, false),
        key("iops_rd", Kind::Int, None, false),
        alias("iops_rd_length", "iops_rd_max_length"),
        key("iops_rd_max", Kind::Int, None, false),
        key("iops_rd_max_length", Kind::Int, None, false),
        key("iops_wr", Kind::Int, None, false),
        alias("iops_wr_length", "iops_wr_max_length"),
        key("iops_wr_max", Kind::Int, None, false),
        key("iops_wr_max_length", Kind::Int, None, false),
        key("iothread", Kind::Bool, None, false),
        key("mbps", Kind::Number, None, false),
        key("mbps_max", Kind::Number, None, false),
        key("mbps_rd", Kind::Number, None, false),
        key("mbps_rd_max", Kind::Number, None, false),
        key("mbps_wr", Kind::Number, None, false),
        key("mbps_wr_max", Kind::Number, None, false),
        key("media", Kind::Enum(&["cdrom", "disk"]), Some("disk"), false),
        key("product", Kind::Str, None, false),
        key("queues", Kind::Int, None, false),
        key("replicate", Kind::Bool, Some("1"), false),
        key("rerror", Kind::Enum(&["ignore", "report", "stop"]), None, false),
        key("ro", Kind::Bool, None, false),
        key("scsiblock", Kind::Bool, Some("0"), false),
        key("serial", Kind::Str, None, false),
        key("shared", Kind::Bool, Some("0"), false),
        key("size", Kind::Size, None, false),
        key("snapshot", Kind::Bool, None, false),
        key("ssd", Kind::Bool, None, false),
        key("vendor", Kind::Str, None, false),
        alias("volume", "file"),
        key("werror", Kind::Enum(&["enospc", "ignore", "report", "stop"]), None, false),
        key("wwn", Kind::Str, None, false),
    ],
};

/// The property string of the `smbios1` config key, as the schema declares it.
pub const SMBIOS1: Format = Format {
    name: "smbios1",
    keys: &[
        key("base64", Kind::Bool, None, false),
        key("family", Kind::Str, None, false),
        key("manufacturer", Kind::Str, None, false),
        key("product", Kind::Str, None, false),
        key("serial", Kind::Str, None, false),
        key("sku", Kind::Str, None, false),
        key("uuid", Kind::Str, None, false),
        key("version", Kind::Str, None, false),
    ],
};

/// The property string of the `spice_enhancements` config key, as the schema declares it.
pub const SPICE_ENHANCEMENTS: Format = Format {
    name: "spice_enhancements",
    keys: &[
        key("foldersharing", Kind::Bool, Some("0"), false),
        key("videostreaming", Kind::Enum(&["off", "all", "filter"]), Some("off"), false),
    ],
};

/// The property string of the `startup` config key, as the schema declares it.
pub const STARTUP: Format = Format {
    name: "startup",
    keys: &[
        key("down", Kind::Int, None, false),
        key("order", Kind::Int, None, true),
        key("up", Kind::Int, None, false),
    ],
};

/// The property string of the `tpmstate0` config key, as the schema declares it.
pub const TPMSTATE0: Format = Format {
    name: "tpmstate0",
    keys: &[
        key("file", Kind::Str, None, true),
        key("format", Kind::Enum(&["raw", "qcow2", "vmdk"]), None, false),
        key("import-from", Kind::Str, None, false),
        key("size", Kind::Size, None, false),
        key("version", Kind::Enum(&["v1.2", "v2.0"]), Some("v1.2"), false),
        alias("volume", "file"),
    ],
};

/// The property string of the `unused[n]` config key, as the schema declares it.
pub const UNUSED: Format = Format {
    name: "unused[n]",
    keys: &[
        key("file", Kind::Str, None, true),
        alias("volume", "file"),
    ],
};

/// The property string of the `usb[n]` config key, as the schema declares it.
pub const USB: Format = Format {
    name: "usb[n]",
    keys: &[
        key("host", Kind::Str, None, true),
        key("mapping", Kind::Str, None, false),
        key("usb3", Kind::Bool, Some("0"), false),
    ],
};

/// The property string of the `vga` config key, as the schema declares it.
pub const VGA: Format = Format {
    name: "vga",
    keys: &[
        key("clipboard", Kind::Enum(&["vnc"]), None, false),
        key("memory", Kind::Int, None, false),
        key("type", Kind::Enum(&["cirrus", "qxl", "qxl2", "qxl3", "qxl4", "none", "serial0", "serial1", "serial2", "serial3", "std", "virtio", "virtio-gl", "vmware"]), Some("std"), true),
    ],
};

/// The property string of the `virtio[n]` config key, as the schema declares it.
pub const VIRTIO: Format = Format {
    name: "virtio[n]",
    keys: &[
        key("aio", Kind::Enum(&["native", "threads", "io_uring"]), None, false),
        key("backup", Kind::Bool, None, false),
        key("bps", Kind::Int, None, false),
        key("bps_max_length", Kind::Int, None, false),
        key("bps_rd", Kind::Int, None, false),
        alias("bps_rd_length", "bps_rd_max_length"),
        key("bps_rd_max_length", Kind::Int, None, false),
        key("bps_wr", Kind::Int, None, false),
        alias("bps_wr_length", "bps_wr_max_length"),
        key("bps_wr_max_length", Kind::Int, None, false),
        key("cache", Kind::Enum(&["none", "writethrough", "writeback", "unsafe", "directsync"]), None, false),
        key("detect_zeroes", Kind::Bool, None, false),
        key("discard", Kind::Enum(&["ignore", "on"]), None, false),
        key("file", Kind::Str, None, true),
        key("format", Kind::Enum(&["raw", "qcow", "qed", "qcow2", "vmdk", "cloop"]), None, false),
        key("import-from", Kind::Str, None, false),
        key("iops", Kind::Int, None, false),
        key("iops_max", Kind::Int, None, false),
        key("iops_max_length", Kind::Int, None, false),
        key("iops_rd", Kind::Int, None, false),
        alias("iops_rd_length", "iops_rd_max_length"),
        key("iops_rd_max", Kind::Int, None, false),
        key("iops_rd_max_length", Kind::Int, None, false),
        key("iops_wr", Kind::Int, None, false),
        alias("iops_wr_length", "iops_wr_max_length"),
        key("iops_wr_max", Kind::Int, None, false),
        key("iops_wr_max_length", Kind::Int, None, false),
        key("iothread", Kind::Bool, None, false),
        key("mbps", Kind::Number, None, false),
        key("mbps_max", Kind::Number, None, false),
        key("mbps_rd", Kind::Number, None, false),
        key("mbps_rd_max", Kind::Number, None, false),
        key("mbps_wr", Kind::Number, None, false),
        key("mbps_wr_max", Kind::Number, None, false),
        key("media", Kind::Enum(&["cdrom", "disk"]), Some("disk"), false),
        key("replicate", Kind::Bool, Some("1"), false),
        key("rerror", Kind::Enum(&["ignore", "report", "stop"]), None, false),
        key("ro", Kind::Bool, None, false),
        key("serial", Kind::Str, None, false),
        key("shared", Kind::Bool, Some("0"), false),
        key("size", Kind::Size, None, false),
        key("snapshot", Kind::Bool, None, false),
        alias("volume", "file"),
        key("werror", Kind::Enum(&["enospc", "ignore", "report", "stop"]), None, false),
    ],
};

/// The property string of the `virtiofs[n]` config key, as the schema declares it.
pub const VIRTIOFS: Format = Format {
    name: "virtiofs[n]",
    keys: &[
        key("cache", Kind::Enum(&["auto", "always", "metadata", "never"]), Some("auto"), false),
        key("direct-io", Kind::Bool, Some("0"), false),
        key("dirid", Kind::Str, None, true),
        key("expose-acl", Kind::Bool, Some("0"), false),
        key("expose-xattr", Kind::Bool, Some("0"), false),
    ],
};

/// The property string of the `watchdog` config key, as the schema declares it.
pub const WATCHDOG: Format = Format {
    name: "watchdog",
    keys: &[
        key("action", Kind::Str, None, false),
        key("model", Kind::Enum(&["i6300esb", "ib700"]), None, true),
    ],
};

/// Every format above.
pub const ALL: &[&Format] = &[&AGENT, &AMD_SEV, &AUDIO0, &BOOT, &CICUSTOM, &CPU, &EFIDISK0, &HOSTPCI, &IDE, &INTEL_TDX, &IPCONFIG, &IVSHMEM, &MACHINE, &MEMORY, &NET, &NUMA, &RNG0, &SATA, &SCSI, &SMBIOS1, &SPICE_ENHANCEMENTS, &STARTUP, &TPMSTATE0, &UNUSED, &USB, &VGA, &VIRTIO, &VIRTIOFS, &WATCHDOG];

/// The format of a VM config key: `net3` -> `net[n]`, `scsi0` -> `scsi[n]`, `efidisk0`.
/// `None` for keys that are not property strings or indexes out of range.
pub fn for_config_key(key: &str) -> Option<&'static Format> {
    format_among(ALL, key)
}

/// Every key of a VM config PVE lets a client set, with what it accepts.
pub const CONFIG_KEYS: &[ConfigKey] = &[
    ConfigKey { name: "acpi", accepts: Accepts::Bool, typetext: "<boolean>" },
    ConfigKey { name: "affinity", accepts: Accepts::Text { format: Some("pve-cpuset"), pattern: None }, typetext: "<string>" },
    ConfigKey { name: "agent", accepts: Accepts::PropString(&AGENT), typetext: "[enabled=]<1|0> [,freeze-fs=<1|0>] [,fstrim_cloned_disks=<1|0>] [,type=<virtio|isa>]" },
    ConfigKey { name: "allow-ksm", accepts: Accepts::Bool, typetext: "<boolean>" },
    ConfigKey { name: "amd-sev", accepts: Accepts::PropString(&AMD_SEV), typetext: "[type=]<sev-type> [,allow-smt=<1|0>] [,kernel-hashes=<1|0>] [,no-debug=<1|0>] [,no-key-sharing=<1|0>]" },
    ConfigKey { name: "arch", accepts: Accepts::Enum(&["x86_64", "aarch64"]), typetext: "<x86_64 | aarch64>" },
    ConfigKey { name: "args", accepts: Accepts::Text { format: None, pattern: None }, typetext: "<string>" },
    ConfigKey { name: "audio0", accepts: Accepts::PropString(&AUDIO0), typetext: "device=<ich9-intel-hda|intel-hda|AC97> [,driver=<spice|none>]" },
    ConfigKey { name: "autostart", accepts: Accepts::Bool, typetext: "<boolean>" },
    ConfigKey { name: "balloon", accepts: Accepts::Int { min: Some(0), max: None }, typetext: "<integer> (0 - N)" },
    ConfigKey { name: "bios", accepts: Accepts::Enum(&["seabios", "ovmf"]), typetext: "<seabios | ovmf>" },
    ConfigKey { name: "boot", accepts: Accepts::PropString(&BOOT), typetext: "[[legacy=]<[acdn]{1,4}>] [,order=<device[;device...]>]" },
    ConfigKey { name: "bootdisk", accepts: Accepts::Text { format: Some("pve-qm-bootdisk"), pattern: Some("(ide|sata|scsi|virtio)\\d+") }, typetext: "<string>" },
    ConfigKey { name: "cdrom", accepts: Accepts::Text { format: Some("pve-qm-ide"), pattern: None }, typetext: "<volume>" },
    ConfigKey { name: "cicustom", accepts: Accepts::PropString(&CICUSTOM), typetext: "[meta=<volume>] [,network=<volume>] [,user=<volume>] [,vendor=<volume>]" },
    ConfigKey { name: "cipassword", accepts: Accepts::Text { format: None, pattern: None }, typetext: "<string>" },
    ConfigKey { name: "citype", accepts: Accepts::Enum(&["configdrive2", "nocloud", "opennebula"]), typetext: "<configdrive2 | nocloud | opennebula>" },
    ConfigKey { name: "ciupgrade", accepts: Accepts::Bool, typetext: "<boolean>" },
    ConfigKey { name: "ciuser", accepts: Accepts::Text { format: None, pattern: None }, typetext: "<string>" },
    ConfigKey { name: "cores", accepts: Accepts::Int { min: Some(1), max: None }, typetext: "<integer> (1 - N)" },
    ConfigKey { name: "cpu", accepts: Accepts::PropString(&CPU), typetext: "[[cputype=]<string>] [,flags=<+FLAG[;-FLAG...]>] [,guest-phys-bits=<integer>] [,hidden=<1|0>] [,hv-vendor-id=<vendor-id>] [,phys-bits=<8-64|host>] [,reported-model=<enum>]" },
    ConfigKey { name: "cpulimit", accepts: Accepts::Number { min: Some(0.0), max: Some(128.0) }, typetext: "<number> (0 - 128)" },
    ConfigKey { name: "cpuunits", accepts: Accepts::Int { min: Some(1), max: Some(262144) }, typetext: "<integer> (1 - 262144)" },
    ConfigKey { name: "description", accepts: Accepts::Text { format: None, pattern: None }, typetext: "<string>" },
    ConfigKey { name: "efidisk0", accepts: Accepts::PropString(&EFIDISK0), typetext: "[file=]<volume> [,efitype=<2m|4m>] [,format=<enum>] [,import-from=<source volume>] [,ms-cert=<enum>] [,pre-enrolled-keys=<1|0>] [,size=<DiskSize>]" },
    ConfigKey { name: "freeze", accepts: Accepts::Bool, typetext: "<boolean>" },
    ConfigKey { name: "hookscript", accepts: Accepts::Text { format: Some("pve-volume-id"), pattern: None }, typetext: "<string>" },
    ConfigKey { name: "hostpci[n]", accepts: Accepts::PropString(&HOSTPCI), typetext: "[[host=]<HOSTPCIID[;HOSTPCIID2...]>] [,device-id=<hex id>] [,driver=<vfio|keep>] [,legacy-igd=<1|0>] [,mapping=<mapping-id>] [,mdev=<string>] [,pcie=<1|0>] [,rombar=<1|0>] [,romfile=<string>] [,sub-device-id=<hex id>] [,sub-vendor-id=<hex id>] [,vendor-id=<hex id>] [,x-vga=<1|0>]" },
    ConfigKey { name: "hotplug", accepts: Accepts::Text { format: Some("pve-hotplug-features"), pattern: None }, typetext: "<string>" },
    ConfigKey { name: "hugepages", accepts: Accepts::Enum(&["any", "2", "1024"]), typetext: "<any | 2 | 1024>" },
    ConfigKey { name: "ide[n]", accepts: Accepts::PropString(&IDE), typetext: "[file=]<volume> [,aio=<native|threads|io_uring>] [,backup=<1|0>] [,bps=<bps>] [,bps_max_length=<seconds>] [,bps_rd=<bps>] [,bps_rd_max_length=<seconds>] [,bps_wr=<bps>] [,bps_wr_max_length=<seconds>] [,cache=<enum>] [,detect_zeroes=<1|0>] [,discard=<ignore|on>] [,format=<enum>] [,import-from=<source volume>] [,iops=<iops>] [,iops_max=<iops>] [,iops_max_length=<seconds>] [,iops_rd=<iops>] [,iops_rd_max=<iops>] [,iops_rd_max_length=<seconds>] [,iops_wr=<iops>] [,iops_wr_max=<iops>] [,iops_wr_max_length=<seconds>] [,mbps=<mbps>] [,mbps_max=<mbps>] [,mbps_rd=<mbps>] [,mbps_rd_max=<mbps>] [,mbps_wr=<mbps>] [,mbps_wr_max=<mbps>] [,media=<cdrom|disk>] [,model=<model>] [,replicate=<1|0>] [,rerror=<ignore|report|stop>] [,serial=<serial>] [,shared=<1|0>] [,size=<DiskSize>] [,snapshot=<1|0>] [,ssd=<1|0>] [,werror=<enum>] [,wwn=<wwn>]" },
    ConfigKey { name: "intel-tdx", accepts: Accepts::PropString(&INTEL_TDX), typetext: "[type=]<tdx-type> ,attestation=<1|0> [,vsock-cid=<integer>] [,vsock-port=<integer>]" },
    ConfigKey { name: "ipconfig[n]", accepts: Accepts::PropString(&IPCONFIG), typetext: "[gw=<GatewayIPv4>] [,gw6=<GatewayIPv6>] [,ip=<IPv4Format/CIDR>] [,ip6=<IPv6Format/CIDR>]" },
    ConfigKey { name: "ivshmem", accepts: Accepts::PropString(&IVSHMEM), typetext: "size=<integer> [,name=<string>]" },
    ConfigKey { name: "keephugepages", accepts: Accepts::Bool, typetext: "<boolean>" },
    ConfigKey { name: "keyboard", accepts: Accepts::Enum(&["de", "de-ch", "da", "en-gb", "en-us", "es", "fi", "fr", "fr-be", "fr-ca", "fr-ch", "hu", "is", "it", "ja", "lt", "mk", "nl", "no", "pl", "pt", "pt-br", "sv", "sl", "tr"]), typetext: "<de | de-ch | da | en-gb | en-us | es | fi | fr | fr-be | fr-ca | fr-ch | hu | is | it | ja | lt | mk | nl | no | pl | pt | pt-br | sv | sl | tr>" },
    ConfigKey { name: "kvm", accepts: Accepts::Bool, typetext: "<boolean>" },
    ConfigKey { name: "localtime", accepts: Accepts::Bool, typetext: "<boolean>" },
    ConfigKey { name: "lock", accepts: Accepts::Enum(&["backup", "clone", "create", "migrate", "rollback", "snapshot", "snapshot-delete", "suspending", "suspended"]), typetext: "<backup | clone | create | migrate | rollback | snapshot | snapshot-delete | suspending | suspended>" },
    ConfigKey { name: "machine", accepts: Accepts::PropString(&MACHINE), typetext: "[[type=]<machine type>] [,aw-bits=<number>] [,enable-s3=<1|0>] [,enable-s4=<1|0>] [,viommu=<intel|virtio>]" },
    ConfigKey { name: "memory", accepts: Accepts::PropString(&MEMORY), typetext: "[current=]<integer>" },
    ConfigKey { name: "migrate_downtime", accepts: Accepts::Number { min: Some(0.0), max: None }, typetext: "<number> (0 - N)" },
    ConfigKey { name: "migrate_speed", accepts: Accepts::Int { min: Some(0), max: None }, typetext: "<integer> (0 - N)" },
    ConfigKey { name: "name", accepts: Accepts::Text { format: Some("dns-name"), pattern: None }, typetext: "<string>" },
    ConfigKey { name: "nameserver", accepts: Accepts::Text { format: Some("address-list"), pattern: None }, typetext: "<string>" },
    ConfigKey { name: "net[n]", accepts: Accepts::PropString(&NET), typetext: "[model=]<enum> [,bridge=<bridge>] [,firewall=<1|0>] [,link_down=<1|0>] [,macaddr=<XX:XX:XX:XX:XX:XX>] [,mtu=<integer>] [,queues=<integer>] [,rate=<number>] [,tag=<integer>] [,trunks=<vlanid[;vlanid...]>] [,<model>=<macaddr>]" },
    ConfigKey { name: "numa", accepts: Accepts::Bool, typetext: "<boolean>" },
    ConfigKey { name: "numa[n]", accepts: Accepts::PropString(&NUMA), typetext: "cpus=<id[-id];...> [,hostnodes=<id[-id];...>] [,memory=<number>] [,policy=<preferred|bind|interleave>]" },
    ConfigKey { name: "onboot", accepts: Accepts::Bool, typetext: "<boolean>" },
    ConfigKey { name: "ostype", accepts: Accepts::Enum(&["other", "wxp", "w2k", "w2k3", "w2k8", "wvista", "win7", "win8", "win10", "win11", "l24", "l26", "solaris"]), typetext: "<other | wxp | w2k | w2k3 | w2k8 | wvista | win7 | win8 | win10 | win11 | l24 | l26 | solaris>" },
    ConfigKey { name: "parallel[n]", accepts: Accepts::Text { format: None, pattern: Some("/dev/parport\\d+|/dev/usb/lp\\d+") }, typetext: "<string>" },
    ConfigKey { name: "protection", accepts: Accepts::Bool, typetext: "<boolean>" },
    ConfigKey { name: "reboot", accepts: Accepts::Bool, typetext: "<boolean>" },
    ConfigKey { name: "rng0", accepts: Accepts::PropString(&RNG0), typetext: "[source=]</dev/urandom|/dev/random|/dev/hwrng> [,max_bytes=<integer>] [,period=<integer>]" },
    ConfigKey { name: "sata[n]", accepts: Accepts::PropString(&SATA), typetext: "[file=]<volume> [,aio=<native|threads|io_uring>] [,backup=<1|0>] [,bps=<bps>] [,bps_max_length=<seconds>] [,bps_rd=<bps>] [,bps_rd_max_length=<seconds>] [,bps_wr=<bps>] [,bps_wr_max_length=<seconds>] [,cache=<enum>] [,detect_zeroes=<1|0>] [,discard=<ignore|on>] [,format=<enum>] [,import-from=<source volume>] [,iops=<iops>] [,iops_max=<iops>] [,iops_max_length=<seconds>] [,iops_rd=<iops>] [,iops_rd_max=<iops>] [,iops_rd_max_length=<seconds>] [,iops_wr=<iops>] [,iops_wr_max=<iops>] [,iops_wr_max_length=<seconds>] [,mbps=<mbps>] [,mbps_max=<mbps>] [,mbps_rd=<mbps>] [,mbps_rd_max=<mbps>] [,mbps_wr=<mbps>] [,mbps_wr_max=<mbps>] [,media=<cdrom|disk>] [,replicate=<1|0>] [,rerror=<ignore|report|stop>] [,serial=<serial>] [,shared=<1|0>] [,size=<DiskSize>] [,snapshot=<1|0>] [,ssd=<1|0>] [,werror=<enum>] [,wwn=<wwn>]" },
    ConfigKey { name: "scsi[n]", accepts: Accepts::PropString(&SCSI), typetext: "[file=]<volume> [,aio=<native|threads|io_uring>] [,backup=<1|0>] [,bps=<bps>] [,bps_max_length=<seconds>] [,bps_rd=<bps>] [,bps_rd_max_length=<seconds>] [,bps_wr=<bps>] [,bps_wr_max_length=<seconds>] [,cache=<enum>] [,detect_zeroes=<1|0>] [,discard=<ignore|on>] [,format=<enum>] [,import-from=<source volume>] [,iops=<iops>] [,iops_max=<iops>] [,iops_max_length=<seconds>] [,iops_rd=<iops>] [,iops_rd_max=<iops>] [,iops_rd_max_length=<seconds>] [,iops_wr=<iops>] [,iops_wr_max=<iops>] [,iops_wr_max_length=<seconds>] [,iothread=<1|0>] [,mbps=<mbps>] [,mbps_max=<mbps>] [,mbps_rd=<mbps>] [,mbps_rd_max=<mbps>] [,mbps_wr=<mbps>] [,mbps_wr_max=<mbps>] [,media=<cdrom|disk>] [,product=<product>] [,queues=<integer>] [,replicate=<1|0>] [,rerror=<ignore|report|stop>] [,ro=<1|0>] [,scsiblock=<1|0>] [,serial=<serial>] [,shared=<1|0>] [,size=<DiskSize>] [,snapshot=<1|0>] [,ssd=<1|0>] [,vendor=<vendor>] [,werror=<enum>] [,wwn=<wwn>]" },
    ConfigKey { name: "scsihw", accepts: Accepts::Enum(&["lsi", "lsi53c810", "virtio-scsi-pci", "virtio-scsi-single", "megasas", "pvscsi"]), typetext: "<lsi | lsi53c810 | virtio-scsi-pci | virtio-scsi-single | megasas | pvscsi>" },
    ConfigKey { name: "searchdomain", accepts: Accepts::Text { format: None, pattern: None }, typetext: "<string>" },
    ConfigKey { name: "serial[n]", accepts: Accepts::Text { format: None, pattern: Some("(/dev/.+|socket)") }, typetext: "<string>" },
    ConfigKey { name: "shares", accepts: Accepts::Int { min: Some(0), max: Some(50000) }, typetext: "<integer> (0 - 50000)" },
    ConfigKey { name: "smbios1", accepts: Accepts::PropString(&SMBIOS1), typetext: "[base64=<1|0>] [,family=<Base64 encoded string>] [,manufacturer=<Base64 encoded string>] [,product=<Base64 encoded string>] [,serial=<Base64 encoded string>] [,sku=<Base64 encoded string>] [,uuid=<UUID>] [,version=<Base64 encoded string>]" },
    ConfigKey { name: "smp", accepts: Accepts::Int { min: Some(1), max: None }, typetext: "<integer> (1 - N)" },
    ConfigKey { name: "sockets", accepts: Accepts::Int { min: Some(1), max: None }, typetext: "<integer> (1 - N)" },
    ConfigKey { name: "spice_enhancements", accepts: Accepts::PropString(&SPICE_ENHANCEMENTS), typetext: "[foldersharing=<1|0>] [,videostreaming=<off|all|filter>]" },
    ConfigKey { name: "sshkeys", accepts: Accepts::Text { format: Some("urlencoded"), pattern: None }, typetext: "<string>" },
    ConfigKey { name: "startdate", accepts: Accepts::Text { format: None, pattern: Some("(now|\\d{4}-\\d{1,2}-\\d{1,2}(T\\d{1,2}:\\d{1,2}:\\d{1,2})?)") }, typetext: "(now | YYYY-MM-DD | YYYY-MM-DDTHH:MM:SS)" },
    ConfigKey { name: "startup", accepts: Accepts::PropString(&STARTUP), typetext: "[[order=]\\d+] [,up=\\d+] [,down=\\d+]" },
    ConfigKey { name: "tablet", accepts: Accepts::Bool, typetext: "<boolean>" },
    ConfigKey { name: "tags", accepts: Accepts::Text { format: Some("pve-tag-list"), pattern: None }, typetext: "<string>" },
    ConfigKey { name: "tdf", accepts: Accepts::Bool, typetext: "<boolean>" },
    ConfigKey { name: "template", accepts: Accepts::Bool, typetext: "<boolean>" },
    ConfigKey { name: "tpmstate0", accepts: Accepts::PropString(&TPMSTATE0), typetext: "[file=]<volume> [,format=<raw|qcow2|vmdk>] [,import-from=<source volume>] [,size=<DiskSize>] [,version=<v1.2|v2.0>]" },
    ConfigKey { name: "unused[n]", accepts: Accepts::PropString(&UNUSED), typetext: "[file=]<volume>" },
    ConfigKey { name: "usb[n]", accepts: Accepts::PropString(&USB), typetext: "[[host=]<HOSTUSBDEVICE|spice>] [,mapping=<mapping-id>] [,usb3=<1|0>]" },
    ConfigKey { name: "vcpus", accepts: Accepts::Int { min: Some(1), max: None }, typetext: "<integer> (1 - N)" },
    ConfigKey { name: "vga", accepts: Accepts::PropString(&VGA), typetext: "[[type=]<enum>] [,clipboard=<vnc>] [,memory=<integer>]" },
    ConfigKey { name: "virtio[n]", accepts: Accepts::PropString(&VIRTIO), typetext: "[file=]<volume> [,aio=<native|threads|io_uring>] [,backup=<1|0>] [,bps=<bps>] [,bps_max_length=<seconds>] [,bps_rd=<bps>] [,bps_rd_max_length=<seconds>] [,bps_wr=<bps>] [,bps_wr_max_length=<seconds>] [,cache=<enum>] [,detect_zeroes=<1|0>] [,discard=<ignore|on>] [,format=<enum>] [,import-from=<source volume>] [,iops=<iops>] [,iops_max=<iops>] [,iops_max_length=<seconds>] [,iops_rd=<iops>] [,iops_rd_max=<iops>] [,iops_rd_max_length=<seconds>] [,iops_wr=<iops>] [,iops_wr_max=<iops>] [,iops_wr_max_length=<seconds>] [,iothread=<1|0>] [,mbps=<mbps>] [,mbps_max=<mbps>] [,mbps_rd=<mbps>] [,mbps_rd_max=<mbps>] [,mbps_wr=<mbps>] [,mbps_wr_max=<mbps>] [,media=<cdrom|disk>] [,replicate=<1|0>] [,rerror=<ignore|report|stop>] [,ro=<1|0>] [,serial=<serial>] [,shared=<1|0>] [,size=<DiskSize>] [,snapshot=<1|0>] [,werror=<enum>]" },
    ConfigKey { name: "virtiofs[n]", accepts: Accepts::PropString(&VIRTIOFS), typetext: "[dirid=]<mapping-id> [,cache=<enum>] [,direct-io=<1|0>] [,expose-acl=<1|0>] [,expose-xattr=<1|0>]" },
    ConfigKey { name: "vmgenid", accepts: Accepts::Text { format: None, pattern: Some("(?:[a-fA-F0-9]{8}(?:-[a-fA-F0-9]{4}){3}-[a-fA-F0-9]{12}|[01])") }, typetext: "<UUID>" },
    ConfigKey { name: "vmstatestorage", accepts: Accepts::Text { format: Some("pve-storage-id"), pattern: None }, typetext: "<storage ID>" },
    ConfigKey { name: "watchdog", accepts: Accepts::PropString(&WATCHDOG), typetext: "[[model=]<i6300esb|ib700>] [,action=<enum>]" },
];

/// Parameters of the create and config calls that are not config keys.
pub const REQUEST_PARAMS: &[&str] = &["archive", "background_delay", "bwlimit", "delete", "digest", "force", "ha-managed", "import-working-storage", "live-restore", "node", "pool", "revert", "skiplock", "start", "storage", "unique", "vmid"];

/// The pve-manager release the schema above describes (newer-keys.json says why).
pub const SCHEMA_PVE: &str = "9.1.9";

/// Sub-keys a PVE release has and an older one lacks, from newer-keys.json.
pub const INTRODUCED: &[Introduced] = &[
    Introduced { config_key: "agent", key: "guest-fsfreeze", pve: "9.1.7", qemu_server: "9.1.5" },
    Introduced { config_key: "agent", key: "freeze-fs", pve: "9.1.7", qemu_server: "9.1.6" },
    Introduced { config_key: "cpu", key: "level", pve: "9.1.16", qemu_server: "9.1.14" },
    Introduced { config_key: "net[n]", key: "host-tunnel", pve: "9.2.4", qemu_server: "9.1.18" },
];
