//! Property-string formats of QEMU config keys, generated from PVE's API schema by
//! `UPDATE_FORMATS=1 cargo test -p ferrox-common formats_table`. Do not edit by hand.

pub use super::format::for_config_key;

use super::format::{alias, key, key_alias, Format, Kind};

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

pub const UNUSED: Format = Format {
    name: "unused[n]",
    keys: &[
        key("file", Kind::Str, None, true),
        alias("volume", "file"),
    ],
};

pub const IPCONFIG: Format = Format {
    name: "ipconfig[n]",
    keys: &[
        key("gw", Kind::Str, None, false),
        key("gw6", Kind::Str, None, false),
        key("ip", Kind::Str, None, false),
        key("ip6", Kind::Str, None, false),
    ],
};

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

pub const BOOT: Format = Format {
    name: "boot",
    keys: &[
        key("legacy", Kind::Str, None, true),
        key("order", Kind::List, None, false),
    ],
};

pub const MEMORY: Format = Format {
    name: "memory",
    keys: &[
        key("current", Kind::Int, Some("512"), true),
    ],
};

pub const CPU: Format = Format {
    name: "cpu",
    keys: &[
        key("cputype", Kind::Str, None, true),
        key("flags", Kind::List, None, false),
        key("guest-phys-bits", Kind::Int, None, false),
        key("hidden", Kind::Bool, None, false),
        key("hv-vendor-id", Kind::Str, None, false),
        key("phys-bits", Kind::Str, None, false),
        key("reported-model", Kind::Str, None, false),
    ],
};

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

pub const STARTUP: Format = Format {
    name: "startup",
    keys: &[
        key("down", Kind::Int, None, false),
        key("order", Kind::Int, None, true),
        key("up", Kind::Int, None, false),
    ],
};

pub const RNG0: Format = Format {
    name: "rng0",
    keys: &[
        key("max_bytes", Kind::Int, None, false),
        key("period", Kind::Int, None, false),
        key("source", Kind::Enum(&["/dev/urandom", "/dev/random", "/dev/hwrng"]), None, true),
    ],
};

pub const VGA: Format = Format {
    name: "vga",
    keys: &[
        key("clipboard", Kind::Enum(&["vnc"]), None, false),
        key("memory", Kind::Int, None, false),
        key("type", Kind::Enum(&["cirrus", "qxl", "qxl2", "qxl3", "qxl4", "none", "serial0", "serial1", "serial2", "serial3", "std", "virtio", "virtio-gl", "vmware"]), Some("std"), true),
    ],
};

pub const NUMA: Format = Format {
    name: "numa[n]",
    keys: &[
        key("cpus", Kind::List, None, false),
        key("hostnodes", Kind::List, None, false),
        key("memory", Kind::Number, None, false),
        key("policy", Kind::Enum(&["preferred", "bind", "interleave"]), None, false),
    ],
};

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

pub const USB: Format = Format {
    name: "usb[n]",
    keys: &[
        key("host", Kind::Str, None, true),
        key("mapping", Kind::Str, None, false),
        key("usb3", Kind::Bool, Some("0"), false),
    ],
};

pub const AUDIO0: Format = Format {
    name: "audio0",
    keys: &[
        key("device", Kind::Enum(&["ich9-intel-hda", "intel-hda", "AC97"]), None, false),
        key("driver", Kind::Enum(&["spice", "none"]), Some("spice"), false),
    ],
};

pub const SPICE_ENHANCEMENTS: Format = Format {
    name: "spice_enhancements",
    keys: &[
        key("foldersharing", Kind::Bool, Some("0"), false),
        key("videostreaming", Kind::Enum(&["off", "all", "filter"]), Some("off"), false),
    ],
};

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

/// Every format above.
pub const ALL: &[&Format] = &[&NET, &IDE, &SATA, &SCSI, &VIRTIO, &EFIDISK0, &TPMSTATE0, &UNUSED, &IPCONFIG, &AGENT, &BOOT, &MEMORY, &CPU, &SMBIOS1, &STARTUP, &RNG0, &VGA, &NUMA, &HOSTPCI, &USB, &AUDIO0, &SPICE_ENHANCEMENTS, &VIRTIOFS];
