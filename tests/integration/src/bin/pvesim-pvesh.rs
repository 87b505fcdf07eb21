//! pvesim's `pvesh` (`pvesim::pvesh`), built with the integration tests so that they
//! find it (`CARGO_BIN_EXE_pvesim-pvesh`) and put it on PATH as `pvesh` for the modules'
//! local mode. Named apart from pvesim's own `pvesh` binary: two binaries of one name
//! in a workspace overwrite each other in `target/`.

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
