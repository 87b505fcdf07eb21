//! Small bounded load test against an in-process simulator on 127.0.0.1:
//! 16 client threads with keep-alive connections for a fixed time, a read-heavy mix
//! like module runs produce. Prints start-up time and requests/second.
//!
//! `cargo run -p pvesim --example load [-- SECONDS [CLIENTS]]`

// A measurement tool: its report goes to stdout.
#![allow(clippy::print_stdout)]

use pvesim::{SimConfig, Simulator};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn main() {
    let mut args = std::env::args().skip(1);
    let secs: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(5).min(60);
    let clients: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(16).min(64);
    let t0 = Instant::now();
    let sim = Simulator::start(SimConfig::default()).expect("start");
    let startup = t0.elapsed();
    let cert = ureq::tls::Certificate::from_pem(sim.ca_pem().as_bytes()).unwrap();
    let tls = ureq::tls::TlsConfig::builder()
        .root_certs(ureq::tls::RootCerts::Specific(Arc::new(vec![cert])))
        .build();
    let base = format!("https://localhost:{}/api2/json", sim.port());
    let auth = "PVEAPIToken=ansible@pve!automation=5f1c9e0a-7d3b-4c2e-9a61-0b8d4e2f7a13";
    let done = Arc::new(AtomicU64::new(0));
    let errors = Arc::new(AtomicU64::new(0));
    let deadline = Instant::now() + Duration::from_secs(secs);
    let paths = [
        "/version",
        "/nodes/pve1/qemu/100/config",
        "/cluster/resources?type=vm",
        "/nodes/pve1/qemu/100/status/current",
    ];
    std::thread::scope(|s| {
        for c in 0..clients {
            let agent: ureq::Agent = ureq::Agent::config_builder()
                .tls_config(tls.clone())
                .http_status_as_error(false)
                .build()
                .new_agent();
            let (done, errors, base) = (done.clone(), errors.clone(), base.clone());
            s.spawn(move || {
                let mut i = c;
                while Instant::now() < deadline {
                    let url = format!("{base}{}", paths[i % paths.len()]);
                    i += 1;
                    match agent.get(&url).header("Authorization", auth).call() {
                        Ok(mut r) if r.status() == 200 => {
                            let _ = r.body_mut().read_to_vec();
                            done.fetch_add(1, Ordering::Relaxed);
                        }
                        _ => {
                            errors.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                }
            });
        }
    });
    let n = done.load(Ordering::Relaxed);
    println!(
        "startup_ms={:.1} clients={clients} seconds={secs} requests={n} errors={} rps={:.0}",
        startup.as_secs_f64() * 1000.0,
        errors.load(Ordering::Relaxed),
        n as f64 / secs as f64
    );
    sim.shutdown();
}
