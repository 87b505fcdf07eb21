use super::formats::{self, for_config_key, AGENT, BOOT, EFIDISK0, NET, SCSI, TPMSTATE0, UNUSED, VIRTIO};
use super::*;

fn p(text: &str, f: &Format) -> PropString {
    parse(text, f).unwrap_or_else(|e| panic!("{text}: {e}"))
}

#[test]
fn config_keys_find_their_format_and_ranges_are_enforced() {
    assert_eq!(for_config_key("net0"), Some(&NET));
    assert_eq!(for_config_key("net31"), Some(&NET));
    assert_eq!(for_config_key("net32"), None);
    assert_eq!(for_config_key("scsi30"), Some(&SCSI));
    assert_eq!(for_config_key("scsi31"), None);
    assert_eq!(for_config_key("virtio15").map(|f| f.name), Some("virtio[n]"));
    assert_eq!(for_config_key("ide3").map(|f| f.name), Some("ide[n]"));
    assert_eq!(for_config_key("ide4"), None);
    assert_eq!(for_config_key("sata5").map(|f| f.name), Some("sata[n]"));
    assert_eq!(for_config_key("unused255"), Some(&UNUSED));
    assert_eq!(for_config_key("efidisk0"), Some(&EFIDISK0));
    assert_eq!(for_config_key("tpmstate0"), Some(&TPMSTATE0));
    assert_eq!(for_config_key("efidisk1"), None);
    assert_eq!(for_config_key("boot"), Some(&BOOT));
    assert_eq!(for_config_key("ipconfig2").map(|f| f.name), Some("ipconfig[n]"));
    assert_eq!(for_config_key("cores"), None);
    assert_eq!(for_config_key("scsi"), None);
    for name in [
        "agent",
        "memory",
        "cpu",
        "smbios1",
        "startup",
        "rng0",
        "vga",
        "numa0",
        "hostpci0",
        "usb0",
        "audio0",
        "spice_enhancements",
        "virtiofs0",
    ] {
        assert!(for_config_key(name).is_some(), "{name}");
    }
}

#[test]
fn net_model_keyalias_and_default_key() {
    let a = p("virtio=BC:24:11:00:00:01,bridge=vmbr0,firewall=1", &NET);
    assert_eq!(a.get("model"), Some("virtio"));
    assert_eq!(a.get("macaddr"), Some("BC:24:11:00:00:01"));
    assert_eq!(a.get("firewall"), Some("1"));
    let b = p("model=virtio,macaddr=bc:24:11:00:00:01,bridge=vmbr0,firewall=yes", &NET);
    assert!(differing_keys(&a, &b, &NET).is_empty());
    assert_eq!(b.to_canonical(&NET), "virtio=bc:24:11:00:00:01,bridge=vmbr0,firewall=1");
    let bare = p("e1000,bridge=vmbr1", &NET);
    assert_eq!(bare.get("model"), Some("e1000"));
    assert_eq!(bare.to_canonical(&NET), "e1000,bridge=vmbr1");
}

#[test]
fn canonical_order_is_default_key_then_sorted() {
    let n = p("tag=20,bridge=vmbr0,virtio=BC:24:11:5E:7A:01,firewall=on", &NET);
    assert_eq!(
        n.to_canonical(&NET),
        "virtio=BC:24:11:5E:7A:01,bridge=vmbr0,firewall=1,tag=20"
    );
    let d = p(
        "ssd=1,iothread=1,volume=local-lvm:vm-100-disk-0,discard=on,size=32G",
        &SCSI,
    );
    assert_eq!(
        d.to_canonical(&SCSI),
        "local-lvm:vm-100-disk-0,discard=on,iothread=1,size=32G,ssd=1"
    );
}

#[test]
fn aliases_resolve_to_canonical_keys() {
    let d = p("file=local:iso/x.iso,media=cdrom,bps_rd_length=5", &formats::IDE);
    assert_eq!(d.get("file"), Some("local:iso/x.iso"));
    assert_eq!(d.get("bps_rd_max_length"), Some("5"));
    assert!(d.get("bps_rd_length").is_none());
    let v = p("volume=local-lvm:vm-1-disk-0", &SCSI);
    assert_eq!(v.get("file"), Some("local-lvm:vm-1-disk-0"));
    let a = p("1,freeze-fs-on-backup=0", &AGENT);
    assert_eq!(a.get("enabled"), Some("1"));
    assert_eq!(a.get("freeze-fs"), Some("0"));
}

#[test]
fn semicolon_lists_stay_one_value() {
    let n = p("virtio,bridge=vmbr0,trunks=10;20;30", &NET);
    assert_eq!(n.get("trunks"), Some("10;20;30"));
    let b = p("order=scsi0;ide2;net0", &BOOT);
    assert_eq!(b.get("order"), Some("scsi0;ide2;net0"));
    assert!(same_value(&BOOT, "order", Some("scsi0;net0"), Some("scsi0; net0")));
    assert!(!same_value(&BOOT, "order", Some("scsi0;net0"), Some("net0;scsi0")));
}

#[test]
fn comparison_normalises_booleans_numbers_sizes_macs() {
    for (key, a, b) in [
        ("firewall", "1", "true"),
        ("firewall", "off", "0"),
        ("rate", "10", "10.0"),
        ("rate", "2.50", "2.5"),
        ("macaddr", "bc:24:11:aa:bb:cc", "BC:24:11:AA:BB:CC"),
        ("tag", "010", "10"),
    ] {
        assert!(same_value(&NET, key, Some(a), Some(b)), "{key}: {a} vs {b}");
    }
    assert!(same_value(&SCSI, "size", Some("32G"), Some("32768M")));
    assert!(!same_value(&SCSI, "size", Some("32G"), Some("33G")));
    assert!(!same_value(&NET, "rate", Some("10"), Some("10.5")));
}

#[test]
fn absent_keys_equal_their_defaults() {
    assert!(same_value(&NET, "firewall", None, Some("0")));
    assert!(same_value(&NET, "link_down", Some("false"), None));
    assert!(!same_value(&NET, "firewall", None, Some("1")));
    assert!(same_value(&SCSI, "backup", None, Some("1")));
    assert!(same_value(&SCSI, "replicate", None, Some("1")));
    assert!(!same_value(&SCSI, "backup", None, Some("0")));
    assert!(same_value(&SCSI, "media", None, Some("disk")));
    assert!(same_value(&EFIDISK0, "efitype", None, Some("2m")));
    assert!(same_value(&TPMSTATE0, "version", Some("v1.2"), None));
    // No stated default: absent differs from any value.
    assert!(!same_value(&NET, "tag", None, Some("10")));
    assert!(!same_value(&SCSI, "detect_zeroes", None, Some("0")));
}

#[test]
fn differing_keys_only_looks_at_wanted_keys() {
    let cur = p(
        "local-lvm:vm-100-disk-0,cache=writeback,iothread=1,size=32G,ssd=1",
        &SCSI,
    );
    let want = p("local-lvm:vm-100-disk-0,cache=none,ssd=on,backup=1", &SCSI);
    assert_eq!(differing_keys(&cur, &want, &SCSI), vec!["cache"]);
    let want = p("local-lvm:vm-100-disk-0,discard=on,replicate=0", &SCSI);
    assert_eq!(differing_keys(&cur, &want, &SCSI), vec!["discard", "replicate"]);
}

#[test]
fn bad_input_names_the_key() {
    let e = parse("virtio,bridge=vmbr0,colour=blue", &NET).unwrap_err();
    assert!(e.contains("unknown key 'colour'") && e.contains("bridge"), "{e}");
    let e = parse("virtio,tag=ten", &NET).unwrap_err();
    assert_eq!(e, "invalid value 'ten' for key 'tag': expected an integer");
    let e = parse("virtio,firewall=maybe", &NET).unwrap_err();
    assert!(e.contains("'firewall'") && e.contains("boolean"), "{e}");
    let e = parse("virtio,bridge=vmbr0,bridge=vmbr1", &NET).unwrap_err();
    assert_eq!(e, "duplicate key 'bridge'");
    let e = parse("virtio=zz:zz,bridge=vmbr0", &NET).unwrap_err();
    assert!(e.contains("'macaddr'") && e.contains("MAC"), "{e}");
    let e = parse("cache=fast", &SCSI).unwrap_err();
    assert!(e.contains("'cache'") && e.contains("writeback"), "{e}");
    let e = parse("local:1,size=big", &SCSI).unwrap_err();
    assert!(e.contains("'size'"), "{e}");
    let e = parse("ip=dhcp,10.0.0.1", &formats::IPCONFIG).unwrap_err();
    assert!(e.contains("no default key"), "{e}");
    let e = parse_config_value("net40", "virtio").unwrap_err();
    assert!(e.contains("net40"), "{e}");
}

#[test]
fn per_bus_keys_differ() {
    assert!(parse("local-lvm:vm-1-disk-0,iothread=1", &SCSI).is_ok());
    assert!(parse("local-lvm:vm-1-disk-0,iothread=1", &formats::IDE).is_err());
    assert!(parse("local-lvm:vm-1-disk-0,ssd=1", &VIRTIO).is_err());
    assert!(parse("local-lvm:vm-1-disk-0,scsiblock=1", &formats::SATA).is_err());
}

#[test]
fn set_get_remove_keep_positions() {
    let mut n = p("virtio=BC:24:11:00:00:01,bridge=vmbr0,tag=5", &NET);
    n.set("tag", "7");
    n.set("mtu", "1");
    assert_eq!(
        n.keys().collect::<Vec<_>>(),
        vec!["model", "macaddr", "bridge", "tag", "mtu"]
    );
    assert_eq!(n.remove("tag"), Some("7".into()));
    assert_eq!(n.remove("tag"), None);
    assert_eq!(n.to_canonical(&NET), "virtio=BC:24:11:00:00:01,bridge=vmbr0,mtu=1");
}

#[test]
fn special_volumes_parse() {
    assert_eq!(p("none,media=cdrom", &formats::IDE).get("file"), Some("none"));
    assert_eq!(p("cdrom,media=cdrom", &formats::IDE).get("file"), Some("cdrom"));
    let pass = p("/dev/disk/by-id/ata-WDC_1234,backup=0", &formats::SATA);
    assert_eq!(pass.get("file"), Some("/dev/disk/by-id/ata-WDC_1234"));
    let efi = p(
        "local-lvm:vm-100-disk-1,efitype=4m,pre-enrolled-keys=1,size=4M",
        &EFIDISK0,
    );
    assert_eq!(efi.get("efitype"), Some("4m"));
    assert_eq!(
        p("local:100/vm-100-disk-0.qcow2", &UNUSED).get("file"),
        Some("local:100/vm-100-disk-0.qcow2")
    );
}
