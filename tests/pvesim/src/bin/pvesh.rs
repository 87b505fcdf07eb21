//! pvesim's `pvesh`: Proxmox VE's API command line, speaking to a running pvesim as
//! `root@pam` (see `pvesim::pvesh` for what it reads and prints, and the environment
//! variables it needs: `PVESIM_URL`, `PVESIM_CA`, `PVESIM_ROOT_PASSWORD`).

// A command line: what it prints is its output, its exit status its verdict.
#![allow(clippy::print_stdout, clippy::print_stderr, clippy::exit)]

use std::io::Write;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let code = match pvesim::pvesh::run(&args) {
        Ok((stdout, stderr)) => {
            print!("{stdout}");
            eprint!("{stderr}");
            0
        }
        Err(exit) => {
            eprint!("{}", exit.stderr);
            exit.code
        }
    };
    let _ = std::io::stdout().flush();
    std::process::exit(code);
}
