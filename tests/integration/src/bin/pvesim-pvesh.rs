//! pvesim's `pvesh` (`pvesim::pvesh`), built with the integration tests so that they
//! find it (`CARGO_BIN_EXE_pvesim-pvesh`) and put it on PATH as `pvesh` for the modules'
//! local mode. Named apart from pvesim's own `pvesh` binary: two binaries of one name
//! in a workspace overwrite each other in `target/`.

// A command line: its exit status is its verdict.
#![allow(clippy::exit)]

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    std::process::exit(pvesim::pvesh::cli(&args));
}
