//! What a built module binary must be before it counts, read from the file itself (no
//! `file`, `ldd` or `otool`, which a cross-building Linux host lacks for Mach-O):
//!
//! - Linux: an ELF executable for the platform's machine, statically linked (no
//!   interpreter, no needed library): ansible copies it to hosts with any libc or none.
//! - macOS: a Mach-O executable for the platform's CPU, linking only libraries macOS
//!   ships (`/usr/lib/`, `/System/`), loadable from the platform's oldest macOS, and on
//!   Apple silicon carrying a code signature whose page hashes match the file (an ad-hoc
//!   one suffices; the kernel kills unsigned or altered arm64 code; see [`codesign`]).

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use anyhow::{bail, Context, Result};
use object::elf;
use object::macho;
use object::read::elf::{Dyn as _, FileHeader, ProgramHeader};
use object::read::macho::{LoadCommandVariant, MachHeader};
use object::{Endianness, FileKind};

use crate::codesign;
use crate::platform::{Expect, Platform};

/// Checks `path` against `platform`; returns a one-line description for the build table.
pub(crate) fn binary(path: &Path, platform: Platform) -> Result<String> {
    let data = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    let mode = std::fs::metadata(path)?.permissions().mode();
    if mode & 0o111 != 0o111 {
        bail!("{}: not executable by everyone (mode {mode:o})", platform.name);
    }
    let checked = match platform.expect {
        Expect::Elf { machine } => elf_static(&data, machine),
        Expect::MachO {
            cpu_type,
            min_macos,
            signed,
        } => macho_system_only(&data, cpu_type, min_macos, signed),
    };
    checked.map_err(|why| anyhow::anyhow!("{}: {} is {why}", platform.name, path.display()))
}

/// `Err` says what the file is instead.
fn elf_static(data: &[u8], machine: u16) -> Result<String, String> {
    if FileKind::parse(data) != Ok(FileKind::Elf64) {
        return Err(format!("not a 64-bit ELF file ({})", kind_of(data)));
    }
    let header = elf::FileHeader64::<Endianness>::parse(data).map_err(|e| format!("not a readable ELF file: {e}"))?;
    let endian = header.endian().map_err(|e| e.to_string())?;
    let found = header.e_machine(endian);
    if found != machine {
        return Err(format!(
            "for ELF machine {} ({found}), not {} ({machine})",
            machine_name(found),
            machine_name(machine)
        ));
    }
    let kind = header.e_type(endian);
    if kind != elf::ET_EXEC && kind != elf::ET_DYN {
        return Err(format!("not an executable (ELF type {kind})"));
    }
    let mut pie = false;
    for segment in header.program_headers(endian, data).map_err(|e| e.to_string())? {
        match segment.p_type(endian) {
            elf::PT_INTERP => {
                let interp = segment.data(endian, data).unwrap_or_default();
                let interp = String::from_utf8_lossy(interp).trim_end_matches('\0').to_string();
                return Err(format!("dynamically linked (interpreter {interp})"));
            }
            elf::PT_DYNAMIC => {
                pie = true;
                let entries = segment
                    .data_as_array::<elf::Dyn64<Endianness>, _>(endian, data)
                    .map_err(|_| "an ELF file with an unreadable dynamic section".to_string())?;
                if entries.iter().any(|d| d.d_tag(endian) == u64::from(elf::DT_NEEDED)) {
                    return Err("dynamically linked (it needs shared libraries)".into());
                }
            }
            _ => {}
        }
    }
    Ok(if pie { "static-pie".into() } else { "static".into() })
}

fn macho_system_only(data: &[u8], cpu_type: u32, min_macos: (u16, u8), signed: bool) -> Result<String, String> {
    if FileKind::parse(data) != Ok(FileKind::MachO64) {
        return Err(format!("not a 64-bit Mach-O file ({})", kind_of(data)));
    }
    let header =
        macho::MachHeader64::<Endianness>::parse(data, 0).map_err(|e| format!("not a readable Mach-O file: {e}"))?;
    let endian = header.endian().map_err(|e| e.to_string())?;
    let found = header.cputype(endian);
    if found != cpu_type {
        return Err(format!(
            "for Mach-O CPU type {} ({found:#x}), not {} ({cpu_type:#x})",
            cpu_name(found),
            cpu_name(cpu_type)
        ));
    }
    if header.filetype(endian) != macho::MH_EXECUTE {
        return Err(format!(
            "not an executable (Mach-O file type {})",
            header.filetype(endian)
        ));
    }
    let mut libraries = Vec::new();
    let mut signature = None;
    let mut minimum = None;
    let mut commands = header.load_commands(endian, data, 0).map_err(|e| e.to_string())?;
    while let Some(command) = commands.next().map_err(|e| e.to_string())? {
        match command.variant().map_err(|e| e.to_string())? {
            LoadCommandVariant::Dylib(dylib) => {
                let name = command.string(endian, dylib.dylib.name).map_err(|e| e.to_string())?;
                libraries.push(String::from_utf8_lossy(name).into_owned());
            }
            LoadCommandVariant::LinkeditData(linkedit) if linkedit.cmd.get(endian) == macho::LC_CODE_SIGNATURE => {
                let (offset, size) = (
                    linkedit.dataoff.get(endian) as usize,
                    linkedit.datasize.get(endian) as usize,
                );
                if size > 0 {
                    signature = Some(codesign::check(data, offset, size)?);
                }
            }
            LoadCommandVariant::BuildVersion(build) => minimum = Some(build.minos.get(endian)),
            LoadCommandVariant::VersionMin(version) if version.cmd.get(endian) == macho::LC_VERSION_MIN_MACOSX => {
                minimum = Some(version.version.get(endian))
            }
            _ => {}
        }
    }
    let foreign: Vec<&String> = libraries
        .iter()
        .filter(|l| !(l.starts_with("/usr/lib/") || l.starts_with("/System/")))
        .collect();
    if !foreign.is_empty() {
        return Err(format!("linked to libraries macOS does not ship: {}", join(&foreign)));
    }
    if signed && signature.is_none() {
        return Err("without a code signature (Apple silicon kills unsigned binaries)".into());
    }
    let Some(minimum) = minimum else {
        return Err("without a minimum macOS version (no LC_BUILD_VERSION or LC_VERSION_MIN_MACOSX)".into());
    };
    let (major, minor) = ((minimum >> 16) as u16, ((minimum >> 8) & 0xff) as u8);
    if (major, minor) > min_macos {
        return Err(format!(
            "for macOS {major}.{minor} and later, not {}.{} (set MACOSX_DEPLOYMENT_TARGET)",
            min_macos.0, min_macos.1
        ));
    }
    Ok(format!(
        "macOS {major}.{minor}+, {}links {}",
        match signature {
            Some(facts) => format!("signed (all {} page hashes match), ", facts.pages),
            None => String::new(),
        },
        join(&libraries.iter().collect::<Vec<_>>())
    ))
}

fn join(items: &[&String]) -> String {
    items.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
}

fn kind_of(data: &[u8]) -> String {
    match FileKind::parse(data) {
        Ok(kind) => format!("{kind:?}"),
        Err(_) => "an unknown format".into(),
    }
}

fn machine_name(machine: u16) -> &'static str {
    match machine {
        elf::EM_X86_64 => "x86_64",
        elf::EM_AARCH64 => "aarch64",
        _ => "other",
    }
}

fn cpu_name(cpu: u32) -> &'static str {
    match cpu {
        macho::CPU_TYPE_X86_64 => "x86_64",
        macho::CPU_TYPE_ARM64 => "arm64",
        _ => "other",
    }
}

/// The shipped binaries as `cargo collection test` leaves them (`build --all-platforms`,
/// then the host's own replaced by a debug build): no Mac runs here, so the Mach-O files
/// are checked for what macOS needs to load them; the checks themselves are shown to
/// catch each fault on a copy with that fault.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::{by_name, PLATFORMS};
    use crate::repo::bin_root;

    fn shipped(name: &str) -> std::path::PathBuf {
        let path = bin_root().join(name).join(crate::modules::BINARY);
        assert!(
            path.is_file(),
            "{} is missing: run `cargo collection setup --cross && cargo collection build --all-platforms` (`cargo collection test` does)",
            path.display()
        );
        path
    }

    fn host_name() -> &'static str {
        crate::platform::host().expect("a supported host").name
    }

    #[test]
    fn every_cross_built_platform_passes_its_check() {
        for p in PLATFORMS.iter().filter(|p| p.name != host_name()) {
            let described = binary(&shipped(p.name), *p).unwrap_or_else(|e| panic!("{e:#}"));
            match p.expect {
                Expect::Elf { .. } => assert!(described.starts_with("static"), "{}: {described}", p.name),
                Expect::MachO { .. } => {
                    assert!(
                        described.contains("links /usr/lib/libSystem.B.dylib"),
                        "{}: {described}",
                        p.name
                    )
                }
            }
        }
    }

    #[test]
    fn macos_binaries_load_on_the_oldest_supported_macos_and_arm64_is_signed() {
        let arm = binary(&shipped("darwin_arm64"), by_name("darwin_arm64").unwrap()).unwrap();
        assert!(
            arm.starts_with("macOS 11.0+, signed (all ") && arm.contains(" page hashes match), "),
            "{arm}"
        );
        let intel = binary(&shipped("darwin_x86_64"), by_name("darwin_x86_64").unwrap()).unwrap();
        assert!(intel.starts_with("macOS 10.13+"), "{intel}");
        for described in [&arm, &intel] {
            let libraries = described.split("links ").nth(1).unwrap();
            assert!(libraries.split(", ").all(|l| l.starts_with("/usr/lib/")), "{described}");
        }
    }

    #[test]
    fn a_binary_for_another_cpu_or_format_is_refused_naming_what_it_is() {
        let arm = shipped("darwin_arm64");
        let err = binary(&arm, by_name("darwin_x86_64").unwrap()).unwrap_err().to_string();
        assert!(
            err.contains("darwin_x86_64: ") && err.contains("for Mach-O CPU type arm64"),
            "{err}"
        );
        let err = binary(&shipped("linux_aarch64"), by_name("linux_x86_64").unwrap())
            .unwrap_err()
            .to_string();
        assert!(err.contains("for ELF machine aarch64 (183), not x86_64 (62)"), "{err}");
        let err = binary(&shipped("linux_aarch64"), by_name("darwin_arm64").unwrap())
            .unwrap_err()
            .to_string();
        assert!(err.contains("not a 64-bit Mach-O file (Elf64)"), "{err}");
        let err = binary(&arm, by_name("linux_aarch64").unwrap()).unwrap_err().to_string();
        assert!(err.contains("not a 64-bit ELF file (MachO64)"), "{err}");
    }

    #[test]
    fn a_dynamically_linked_linux_binary_is_refused() {
        // The test suite's own host build is a debug build, linked dynamically.
        let host = by_name(host_name()).unwrap();
        if matches!(host.expect, Expect::MachO { .. }) {
            return;
        }
        let err = binary(&shipped(host.name), host).unwrap_err().to_string();
        assert!(err.contains("dynamically linked (interpreter /lib"), "{err}");
    }

    #[test]
    fn an_unsigned_or_too_new_arm64_binary_is_refused() {
        let data = std::fs::read(shipped("darwin_arm64")).unwrap();
        let Expect::MachO {
            cpu_type,
            min_macos,
            signed,
        } = by_name("darwin_arm64").unwrap().expect
        else {
            unreachable!()
        };
        assert!(macho_system_only(&data, cpu_type, min_macos, signed).is_ok());
        let err = macho_system_only(&data, cpu_type, (10, 15), signed).unwrap_err();
        assert_eq!(
            err,
            "for macOS 11.0 and later, not 10.15 (set MACOSX_DEPLOYMENT_TARGET)"
        );
        let err = macho_system_only(&without_signature(data.clone()), cpu_type, min_macos, signed).unwrap_err();
        assert_eq!(err, "without a code signature (Apple silicon kills unsigned binaries)");
        // One byte of code changed after signing, as a strip that does not re-sign leaves it.
        let mut altered = data;
        let middle = altered.len() / 2;
        altered[middle] ^= 0xff;
        let err = macho_system_only(&altered, cpu_type, min_macos, signed).unwrap_err();
        assert!(
            err.contains("does not match its hash") && err.contains("macOS would kill it"),
            "{err}"
        );
    }

    /// The file with its LC_CODE_SIGNATURE load command's data size set to 0.
    fn without_signature(mut data: Vec<u8>) -> Vec<u8> {
        let word = |d: &[u8], at: usize| u32::from_le_bytes(d[at..at + 4].try_into().unwrap());
        let commands = word(&data, 16) as usize;
        let mut at = 32; // mach_header_64
        for _ in 0..commands {
            let (cmd, size) = (word(&data, at), word(&data, at + 4) as usize);
            if cmd == macho::LC_CODE_SIGNATURE {
                data[at + 12..at + 16].copy_from_slice(&0u32.to_le_bytes());
                return data;
            }
            at += size;
        }
        panic!("no LC_CODE_SIGNATURE in the darwin_arm64 binary");
    }
}
