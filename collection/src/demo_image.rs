//! What `demo` gives playbooks/golden-image.yml: a cloud image on a loopback HTTP server
//! (a small qcow2 the nodes download, with its sha256), and a simulator scenario whose
//! automation token holds what the pipeline needs (the default one manages VMs only).

use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde_json::Value;

/// The image's file name: not the scenario's own cloud image, which the check of its
/// checksum would refuse as another file.
pub(crate) const IMAGE: &str = "golden-demo-genericcloud-amd64.qcow2";

/// Privileges the golden-image pipeline needs beyond the default token's role
/// (the guide docs/docsite/rst/guide_vms.rst, "ISO images, container templates and cloud images").
const PIPELINE_PRIVILEGES: [&str; 3] = ["Datastore.AllocateTemplate", "Datastore.Allocate", "Sys.AccessNetwork"];

/// A `python3 -m http.server` serving the image, stopped on drop.
pub(crate) struct ImageServer {
    child: Child,
    pub url: String,
    pub sha256: String,
}

impl ImageServer {
    pub(crate) fn start(dir: &Path, port: u16) -> Result<ImageServer> {
        std::fs::create_dir_all(dir)?;
        let image = dir.join(IMAGE);
        std::fs::write(&image, qcow2(2 << 30, 1 << 20))?;
        let out = Command::new("sha256sum")
            .arg(&image)
            .output()
            .context("running sha256sum")?;
        let sha256 = String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .next()
            .unwrap_or_default()
            .to_string();
        if !out.status.success() || sha256.len() != 64 {
            bail!("sha256sum {} failed", image.display());
        }
        let child = Command::new("python3")
            .args([
                "-m",
                "http.server",
                "--bind",
                "127.0.0.1",
                &port.to_string(),
                "--directory",
            ])
            .arg(dir)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .context("starting python3 -m http.server")?;
        let server = ImageServer {
            child,
            url: format!("http://127.0.0.1:{port}/{IMAGE}"),
            sha256,
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            if Instant::now() > deadline {
                bail!("the image server did not listen on 127.0.0.1:{port} within 20 s");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Ok(server)
    }
}

impl Drop for ImageServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A qcow2 v3 file without backing file: the header pve-storage reads, zeros after it.
fn qcow2(virtual_size: u64, file_size: usize) -> Vec<u8> {
    let mut bytes = b"QFI\xfb\0\0\0\x03".to_vec();
    bytes.extend(0u64.to_be_bytes());
    bytes.extend([0u8; 8]);
    bytes.extend(virtual_size.to_be_bytes());
    bytes.resize(file_size, 0);
    bytes
}

/// The default scenario with the pipeline's privileges added to the automation token's
/// role, written to `out` for `pvesim --scenario`.
pub(crate) fn scenario(pvesim: &Path, out: &Path) -> Result<()> {
    let printed = Command::new(pvesim)
        .arg("--print-scenario")
        .output()
        .context("pvesim --print-scenario")?;
    let mut scenario: Value = serde_json::from_slice(&printed.stdout).context("the default scenario")?;
    let Some(role) = scenario["roles"]["PVESimAutomation"].as_array_mut() else {
        bail!("the default scenario has no PVESimAutomation role");
    };
    for p in PIPELINE_PRIVILEGES {
        if !role.iter().any(|r| r == p) {
            role.push(Value::from(p));
        }
    }
    std::fs::write(out, serde_json::to_string_pretty(&scenario)?)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_image_is_a_qcow2_of_its_virtual_size() {
        let b = qcow2(2 << 30, 4096);
        assert_eq!((&b[..4], b.len()), (&b"QFI\xfb"[..], 4096));
        assert_eq!(u64::from_be_bytes(b[24..32].try_into().unwrap()), 2 << 30);
        assert_eq!(u64::from_be_bytes(b[8..16].try_into().unwrap()), 0, "no backing file");
    }
}
