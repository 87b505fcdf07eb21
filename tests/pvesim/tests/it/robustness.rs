//! Bounded randomized robustness test: the property-string grammar, the schema
//! validator, the request-parameter parser and the HTTP front end get random input and
//! must answer (never panic, never hang). Iterations scale with PVESIM_FUZZ_ITERS;
//! the seed (PVESIM_FUZZ_SEED) is printed so a failure can be replayed.

use crate::common::*;
use pvesim::schema::{validate, Schema};
use serde_json::Value;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// xorshift64*: small, deterministic, good enough for input generation.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

const KEYS: &[&str] = &[
    "model",
    "macaddr",
    "bridge",
    "tag",
    "firewall",
    "virtio",
    "e1000",
    "file",
    "volume",
    "size",
    "media",
    "cache",
    "discard",
    "iothread",
    "ssd",
    "import-from",
    "format",
    "queues",
    "mtu",
    "rate",
    "trunks",
    "link_down",
    "mbps_rd",
    "iops_max_length",
    "serial",
    "wwn",
    "",
    "bogus",
    "x=y",
];
const VALUES: &[&str] = &[
    "virtio",
    "vmbr0",
    "1",
    "0",
    "on",
    "off",
    "true",
    "yes",
    "abc",
    "-1",
    "99999999999999999999",
    "BC:24:11:00:00:01",
    "01:00:5e:00:00:01",
    "local-lvm:32",
    "local-lvm:0",
    "none",
    "cdrom",
    "cdrom,media",
    "1.5",
    "+2G",
    "%41",
    "\u{00e9}",
    "",
    "=",
    ",",
    "a;b",
    "2-10;20",
    "0x1234567890abcdef",
    "vmdata:9000/base-9000-disk-0.qcow2",
];

fn random_propstring(rng: &mut Rng) -> String {
    let parts = rng.below(6);
    let mut out = Vec::new();
    for _ in 0..parts {
        match rng.below(4) {
            0 => out.push(rng.pick(VALUES).to_string()),
            1 => out.push(format!("{}={}", rng.pick(KEYS), rng.pick(VALUES))),
            2 => out.push(String::new()),
            _ => {
                let len = rng.below(12);
                out.push((0..len).map(|_| char::from(32 + rng.below(95) as u8)).collect());
            }
        }
    }
    out.join(",")
}

fn seed() -> u64 {
    std::env::var("PVESIM_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
                | 1
        })
}

fn iters(default: usize) -> usize {
    std::env::var("PVESIM_FUZZ_ITERS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

#[test]
fn property_strings_and_validation_never_panic() {
    let seed = seed();
    eprintln!("robustness seed: {seed}");
    let mut rng = Rng(seed);
    let schema = Schema::embedded();
    let create = schema.method("/nodes/{node}/qemu", "POST").unwrap()["parameters"].clone();
    let props = create["properties"].as_object().unwrap().clone();
    let keys: Vec<&String> = props.keys().collect();
    let started = Instant::now();
    let n = iters(5_000);
    for i in 0..n {
        // One random parameter set per iteration: indexed keys, property strings, junk.
        let mut params: BTreeMap<String, Value> = BTreeMap::new();
        params.insert("node".into(), Value::from("pve1"));
        params.insert(
            "vmid".into(),
            Value::from(if i % 7 == 0 {
                rng.pick(VALUES).to_string()
            } else {
                "100".into()
            }),
        );
        for _ in 0..rng.below(4) {
            let base = keys[rng.below(keys.len())].replace("[n]", &rng.below(40).to_string());
            let v = if rng.below(3) == 0 {
                Value::from(rng.pick(VALUES))
            } else {
                Value::from(random_propstring(&mut rng))
            };
            params.insert(base, v);
        }
        match validate::validate(&params, &create) {
            Ok(out) => assert!(out.contains_key("vmid")),
            Err(errors) => {
                for (k, msg) in &errors {
                    assert!(!msg.is_empty(), "empty error for {k}");
                    if msg.starts_with("invalid format - ") {
                        assert!(msg.ends_with('\n'), "format errors end with a newline: {msg:?}");
                    }
                }
            }
        }
        // The grammar alone, against the net and scsi formats.
        for key in ["net0", "scsi0", "efidisk0", "agent"] {
            let fmt = pvesim::qemu::disks::key_format(&schema, key).unwrap();
            let s = random_propstring(&mut rng);
            if let Err(e) = pvesim::propstring::parse(&fmt, &s) {
                assert!(e.ends_with('\n'), "{e:?}");
            }
        }
        // The parameter parser with random bodies.
        let body: Vec<u8> = (0..rng.below(64)).map(|_| rng.next() as u8).collect();
        let ct = rng.pick(&[
            "application/json",
            "application/x-www-form-urlencoded",
            "text/plain",
            "",
        ]);
        let _ = pvesim::params::parse("POST", Some(&random_propstring(&mut rng)), Some(ct), &body);
    }
    eprintln!("robustness: {n} parser/validator iterations in {:?}", started.elapsed());
}

#[test]
fn http_front_end_answers_random_requests() {
    let seed = seed();
    eprintln!("robustness seed: {seed}");
    let mut rng = Rng(seed);
    let api = Api::start(quick());
    let started = Instant::now();
    let n = iters(5_000) / 20;
    let methods = ["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "G\u{0}T", "post"];
    let paths = [
        "/api2/json/version",
        "/api2/json/nodes/pve1/qemu",
        "/api2/json/nodes/pve1/qemu/100/config",
        "/api2/json/nodes/pve1/qemu/100/resize",
        "/api2/json/nodes/pve1/qemu/abc/config",
        "/api2/json/nodes/pve1/tasks/UPID:x/status",
        "/api2/json/cluster/resources",
        "/api2/json/nodes/pve1/qemu/100/status/start",
        "/api2/json/../../etc/passwd",
        "/",
        "/api2/json/nodes/%ff/qemu",
        "/_pvesim/nope",
    ];
    for _ in 0..n {
        let method = rng.pick(&methods);
        let mut path = rng.pick(&paths).to_string();
        if rng.below(3) == 0 {
            path.push_str(&format!(
                "?{}={}",
                rng.pick(KEYS),
                form_urlencoded::byte_serialize(random_propstring(&mut rng).as_bytes()).collect::<String>()
            ));
        }
        let body = match rng.below(4) {
            0 => String::new(),
            1 => format!(
                "{}={}",
                rng.pick(KEYS),
                form_urlencoded::byte_serialize(random_propstring(&mut rng).as_bytes()).collect::<String>()
            ),
            2 => format!(
                "{{\"{}\":{}}}",
                rng.pick(KEYS),
                rng.pick(&["1", "true", "\"x\"", "[1,2]", "{}", "null", "-"])
            ),
            _ => (0..rng.below(200)).map(|_| char::from(rng.below(128) as u8)).collect(),
        };
        let ct = rng.pick(&[
            "application/x-www-form-urlencoded",
            "application/json",
            "multipart/form-data",
            "text/plain",
        ]);
        let auth = rng.pick(&[TOKEN, READONLY, "PVEAPIToken=x", "garbage", ""]);
        let req = format!(
            "{method} {path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: {auth}\r\nContent-Type: {ct}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        let t = Instant::now();
        let resp = raw_tls(&api.sim, req.as_bytes());
        assert!(t.elapsed() < Duration::from_secs(4), "request hung: {req:?}");
        if !resp.is_empty() {
            let line = status_line(&resp);
            assert!(line.starts_with("HTTP/1.1 "), "{line}");
            let code: u16 = line[9..12].parse().unwrap();
            assert!(
                code != 500 || resp.contains("\"message\""),
                "500 without a message: {resp}"
            );
        }
    }
    assert_eq!(api.get("/version").status, 200, "still serving");
    eprintln!("robustness: {n} random HTTP requests in {:?}", started.elapsed());
}
