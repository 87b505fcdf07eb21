//! The `disk` option: a config key `{bus}{n}` with the bus ranges of qemu-server.

use ferrox_pve_rules::propstring::{formats, max_index, split_indexed, Format};

/// A validated disk key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DiskKey {
    /// As given: `scsi1`, `efidisk0`.
    pub key: String,
    pub bus: Bus,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Bus {
    Ide,
    Sata,
    Scsi,
    Virtio,
    Unused,
    EfiDisk,
    TpmState,
}

impl Bus {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Bus::Ide => "ide",
            Bus::Sata => "sata",
            Bus::Scsi => "scsi",
            Bus::Virtio => "virtio",
            Bus::Unused => "unused",
            Bus::EfiDisk => "efidisk",
            Bus::TpmState => "tpmstate",
        }
    }

    /// Drives that hold a disk, a CD-ROM or a passthrough device (not unused/efi/tpm).
    pub(crate) fn is_drive(self) -> bool {
        matches!(self, Bus::Ide | Bus::Sata | Bus::Scsi | Bus::Virtio)
    }
}

const BUSES: &[(&str, Bus)] = &[
    ("ide", Bus::Ide),
    ("sata", Bus::Sata),
    ("scsi", Bus::Scsi),
    ("virtio", Bus::Virtio),
    ("unused", Bus::Unused),
    ("efidisk", Bus::EfiDisk),
    ("tpmstate", Bus::TpmState),
];

impl DiskKey {
    /// Reads `scsi1`; messages as community.proxmox words them.
    pub(crate) fn parse(text: &str) -> Result<DiskKey, String> {
        let (prefix, index) = split_indexed(text);
        let Some(index) = index.filter(|_| prefix.chars().all(|c| c.is_ascii_lowercase())) else {
            return Err(format!(
                "Unsupported disk key {text}: expected a bus name and a number, like scsi1, ide2, virtio0, efidisk0 or tpmstate0"
            ));
        };
        let bus = BUSES
            .iter()
            .find(|(name, _)| *name == prefix)
            .map(|(_, b)| *b)
            .ok_or_else(|| format!("Unsupported disk bus: {prefix}"))?;
        let last = match bus {
            Bus::EfiDisk | Bus::TpmState => 0,
            _ => max_index(prefix).unwrap_or(0),
        };
        if index > last {
            return Err(format!("Disk {text} number not in range 0..{last} "));
        }
        Ok(DiskKey {
            key: text.to_string(),
            bus,
        })
    }

    /// The property-string format of this key.
    pub(crate) fn format(&self) -> &'static Format {
        formats::for_config_key(&self.key).expect("every valid disk key has a format")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_keys() {
        assert_eq!(DiskKey::parse("scsi30").unwrap().bus, Bus::Scsi);
        assert_eq!(DiskKey::parse("efidisk0").unwrap().bus, Bus::EfiDisk);
        assert_eq!(DiskKey::parse("tpmstate0").unwrap().format().name, "tpmstate0");
        assert_eq!(DiskKey::parse("unused255").unwrap().format().name, "unused[n]");
        assert_eq!(DiskKey::parse("ide3").unwrap().format().name, "ide[n]");
    }

    #[test]
    fn invalid_keys_fail_like_1_6() {
        assert_eq!(
            DiskKey::parse("scsi31").unwrap_err(),
            "Disk scsi31 number not in range 0..30 "
        );
        assert_eq!(
            DiskKey::parse("efidisk1").unwrap_err(),
            "Disk efidisk1 number not in range 0..0 "
        );
        assert_eq!(DiskKey::parse("nvme0").unwrap_err(), "Unsupported disk bus: nvme");
        assert!(DiskKey::parse("scsi")
            .unwrap_err()
            .contains("expected a bus name and a number"));
        assert!(DiskKey::parse("0").unwrap_err().contains("expected a bus name"));
    }
}
