//! pvesim's `pvesh`: Proxmox VE's API command line, speaking to a running pvesim as
//! `root@pam` (see `pvesim::pvesh` for what it reads and prints, and the environment
//! variables it needs: `PVESIM_URL`, `PVESIM_CA`, `PVESIM_ROOT_PASSWORD`).

// A command line: its exit status is its verdict.
#![allow(clippy::exit)]

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    std::process::exit(pvesim::pvesh::cli(&args));
}
