//! The `pvesim` binary: one ready line with URL, CA path and fingerprint; state file.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Instant;

#[test]
fn binary_prints_one_ready_line_and_serves() {
    let dir = std::env::temp_dir().join(format!("pvesim-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ca = dir.join("ca.pem");
    let state = dir.join("state.json");
    let started = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_pvesim"))
        .args(["--listen", "127.0.0.1:0", "--ca-out"])
        .arg(&ca)
        .arg("--state")
        .arg(&state)
        .args(["--task-ms", "10", "--tls", "ca"])
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn pvesim");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let ready = started.elapsed();
    eprintln!("binary ready after {ready:?}: {line}");
    let re = regex::Regex::new(
        r"^pvesim listening on https://127\.0\.0\.1:(\d+) ca=(\S+) fingerprint=((?:[0-9A-F]{2}:){31}[0-9A-F]{2})\n$",
    )
    .unwrap();
    let caps = re.captures(&line).unwrap_or_else(|| panic!("ready line: {line:?}"));
    assert_eq!(&caps[2], ca.to_str().unwrap());
    assert!(std::fs::read_to_string(&ca)
        .unwrap()
        .starts_with("-----BEGIN CERTIFICATE-----"));
    assert!(state.exists(), "state file written at start");
    let state_json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&state).unwrap()).unwrap();
    assert_eq!(state_json["nodes"][0]["name"], "pve1");
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn binary_rejects_unknown_flags() {
    let out = Command::new(env!("CARGO_BIN_EXE_pvesim"))
        .arg("--bogus")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown argument --bogus"));
}
