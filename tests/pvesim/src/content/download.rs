//! `POST /nodes/{node}/storage/{storage}/download-url`: pve-storage's checks, then a
//! `download` task that fetches the URL as the node's `wget` does
//! (`PVE::Tools::download_file_from_url`), logging as wget and PVE log, verifying the
//! checksum and the image, and leaving no file when anything fails.

use super::fetch::{self, NoAnswer};
use super::names;
use super::transfer::{self, Received, Sink};
use crate::api::Ctx;
use crate::error::{ApiError, ApiResult};
use crate::sim::SimInner;
use crate::state::StorageDef;
use crate::tasks;
use crate::util::{now_ms, now_secs, stamp};
use serde_json::Value;
use std::io::Read;
use std::sync::Arc;

/// wget's `--progress=dot:giga`: a log line per 32 MiB.
const LINE_BYTES: u64 = 32 << 20;

/// What the task needs to know, fixed when the call is accepted.
struct Job {
    sim: Arc<SimInner>,
    upid: String,
    node: String,
    sd: StorageDef,
    volname: String,
    format: Option<String>,
    content: String,
    url: String,
    dest: String,
    tmp: String,
    checksum: Option<(String, String)>,
    verify: bool,
    compression: Option<String>,
    hash_required: bool,
    fail: Option<String>,
    warnings: u32,
}

/// The call: PVE's checks in PVE's order, then the task (worker id: the file name).
pub fn download_url(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    let node = ctx.node();
    let content = ctx.get("content").unwrap_or("").to_string();
    let sid = ctx.get("storage").unwrap_or("").to_string();
    let sd = super::file_storage(ctx, &content, &sid, &node, ", not a file based storage!")?;
    if !sd.has_content(&content) {
        return Err(ApiError::internal(format!(
            "storage '{sid}' is not configured for content-type '{content}'"
        )));
    }
    let filename = names::normalize(ctx.get("filename").unwrap_or(""));
    let (volname, format) = names::volume_for(&content, &filename, !ctx.c.pve_at_least(8, 4))?;
    let checksum = match (ctx.get("checksum"), ctx.get("checksum-algorithm")) {
        (Some(sum), Some(alg)) if !sum.is_empty() => Some((alg.to_string(), sum.to_string())),
        _ => None,
    };
    let wanted = Wanted {
        sd,
        volname,
        format,
        content,
        url: ctx.get("url").unwrap_or("").to_string(),
        checksum,
        verify: ctx.get("verify-certificates") != Some("0"),
        compression: ctx.get("compression").map(str::to_string),
        hash_required: false,
    };
    start(ctx, &filename, wanted).map(Value::String)
}

/// A file to fetch onto a storage.
pub struct Wanted {
    pub sd: StorageDef,
    pub volname: String,
    /// An `import` image's format (checked like an untrusted image).
    pub format: Option<String>,
    pub content: String,
    pub url: String,
    /// (algorithm, expected digest).
    pub checksum: Option<(String, String)>,
    pub verify: bool,
    pub compression: Option<String>,
    /// The appliance index's downloads must be verified (`hash_required`).
    pub hash_required: bool,
}

/// Start a `download` task (worker id `task_id`) fetching `wanted`; returns its UPID.
pub fn start(ctx: &mut Ctx<'_>, task_id: &str, wanted: Wanted) -> ApiResult<String> {
    let node = ctx.node();
    let (upid, fault) = tasks::register(ctx.sim, ctx.c, &node, "download", task_id, ctx.who);
    let pid = tasks::parse_upid(&upid).map(|p| p.pid).unwrap_or(0);
    let dest = super::file_path(&wanted.sd, &wanted.volname);
    let job = Job {
        sim: ctx.sim.clone(),
        upid: upid.clone(),
        node,
        sd: wanted.sd,
        volname: wanted.volname,
        format: wanted.format,
        content: wanted.content,
        url: wanted.url,
        tmp: format!("{dest}.tmp_dwnl.{pid}"),
        dest,
        checksum: wanted.checksum,
        verify: wanted.verify,
        compression: wanted.compression,
        hash_required: wanted.hash_required,
        fail: fault.fail,
        warnings: fault.warnings,
    };
    std::thread::Builder::new()
        .name("pvesim-download".into())
        .spawn(move || job.run())
        .map_err(|e| ApiError::internal(format!("fork failed: {e}")))?;
    Ok(upid)
}

/// `1.0M`, `627M`, `12K`: wget's sizes.
fn human(bytes: u64) -> String {
    let mut v = bytes as f64;
    for unit in ["", "K", "M", "G", "T"] {
        if v < 1024.0 || unit == "T" {
            return if unit.is_empty() {
                format!("{bytes}")
            } else if v < 10.0 {
                format!("{v:.1}{unit}")
            } else {
                format!("{v:.0}{unit}")
            };
        }
        v /= 1024.0;
    }
    unreachable!()
}

/// `105 MB/s`: wget's rates.
fn rate(bytes: u64, ms: u64) -> String {
    let per_s = bytes as f64 * 1000.0 / ms.max(1) as f64;
    let (v, unit) = match per_s {
        r if r >= (1u64 << 30) as f64 => (r / (1u64 << 30) as f64, "GB/s"),
        r if r >= (1u64 << 20) as f64 => (r / (1u64 << 20) as f64, "MB/s"),
        r if r >= 1024.0 => (r / 1024.0, "KB/s"),
        r => (r, "B/s"),
    };
    if v < 10.0 {
        format!("{v:.2} {unit}")
    } else {
        format!("{v:.0} {unit}")
    }
}

impl Job {
    /// Append to the task's log; false once the task is gone (state reset).
    fn log(&self, line: impl Into<String>) -> bool {
        let mut c = self.sim.cluster();
        match c.tasks.get_mut(&self.upid) {
            Some(t) => {
                t.log.push(line.into());
                true
            }
            None => false,
        }
    }

    fn run(self) {
        let res = self.work();
        let mut c = self.sim.cluster();
        let warnings = if res.is_ok() { self.warnings } else { 0 };
        if let Some(t) = c.tasks.get_mut(&self.upid) {
            for i in 0..warnings {
                t.log.push(format!("WARN: simulated warning {}", i + 1));
            }
        }
        tasks::finish(&mut c, &self.upid, res, warnings);
        self.sim.persist(&c);
    }

    fn work(&self) -> Result<(), String> {
        if let Some(comp) = &self.compression {
            if self.content != "iso" {
                return Err(format!("decompression not supported for {}", self.content));
            }
            if !["gz", "lzo", "zst", "bz2"].contains(&comp.as_str()) {
                return Err("no decompression method found".into());
            }
        }
        if self.hash_required && self.checksum.is_none() {
            return Err("checksum required but not specified".into());
        }
        self.log(format!("downloading {} to {}", self.url, self.dest));
        if self.existing()? {
            return Ok(());
        }
        let received = self.fetch()?;
        if let Some((alg, expected)) = &self.checksum {
            let got = &received.checksums[alg.as_str()];
            if transfer::check_checksum(got, expected).is_ok() {
                self.log("calculating checksum...OK, checksum verified");
            } else {
                self.log("calculating checksum...");
                return Err(format!("checksum mismatch: got '{got}' != expect '{expected}'"));
            }
        }
        let mut checked = self.tmp.clone();
        if self.compression.is_some() {
            checked = self.tmp.replace(".tmp_dwnl.", ".tmp_dcom.");
            self.log(format!("decompressing {} to {checked}", self.tmp));
        }
        let virtual_size = transfer::check_image(self.format.as_deref(), &received, &checked)
            .map_err(|e| format!("failed to verify file: {e}"))?;
        if let Some(f) = &self.fail {
            return Err(f.clone());
        }
        {
            let mut c = self.sim.cluster();
            if !c.tasks.contains_key(&self.upid) {
                return Err("got interrupted by signal".into());
            }
            transfer::place(&mut c, &self.sd, &self.node, &self.volname, &received, virtual_size);
        }
        self.log(format!("download of '{}' to '{}' finished", self.url, self.dest));
        Ok(())
    }

    /// A file of that name already there: with a checksum, kept if it matches (the task
    /// is done), else refused; without one, refused.
    fn existing(&self) -> Result<bool, String> {
        let found = {
            let c = self.sim.cluster();
            c.find_volume(&format!("{}:{}", self.sd.id, self.volname), &self.node)
                .cloned()
        };
        let Some(v) = found else { return Ok(false) };
        let Some((alg, expected)) = &self.checksum else {
            return Err(format!("refusing to override existing file '{}'", self.dest));
        };
        let got = transfer::existing_digest(&v, alg);
        if transfer::check_checksum(&got, expected).is_ok() {
            self.log("calculating checksum of existing file...OK, got correct file already, no need to download");
            return Ok(true);
        }
        self.log("calculating checksum of existing file...");
        Err(format!(
            "checksum mismatch: got '{got}' != expect '{expected}', aborting"
        ))
    }

    /// wget: connect, request, stream the body into a [`Sink`], logging as wget does;
    /// its last line is the error when it fails.
    fn fetch(&self) -> Result<Received, String> {
        let failed = |line: String| -> Result<Received, String> {
            self.log(line.clone());
            Err(format!("download failed: {line}"))
        };
        self.log(format!("--{}--  {}", stamp(now_secs()), self.url));
        let (host, port) = fetch::host_port(&self.url);
        let literal = host.parse::<std::net::IpAddr>().is_ok();
        let target = if literal {
            format!("{host}:{port}")
        } else {
            format!("{host} ({host})|{host}|:{port}")
        };
        let (head, mut body) = match fetch::get(&self.url, self.verify) {
            Ok(answer) => answer,
            Err(NoAnswer::Unresolved) => {
                self.log(format!(
                    "Resolving {host} ({host})... failed: Name or service not known."
                ));
                return failed(format!("wget: unable to resolve host address '{host}'"));
            }
            Err(NoAnswer::Connect(why)) if why == "certificate verify failed" => {
                self.log(format!("Connecting to {target}... connected."));
                self.log(format!("ERROR: cannot verify {host}'s certificate:"));
                self.log("  Unable to locally verify the issuer's authority.");
                return failed(format!(
                    "To connect to {host} insecurely, use `--no-check-certificate'."
                ));
            }
            Err(NoAnswer::Connect(why)) => return failed(format!("Connecting to {target}... failed: {why}.")),
            Err(NoAnswer::Broken(why)) => {
                self.log(format!("Connecting to {target}... connected."));
                return failed(format!("{} ERROR: {why}.", stamp(now_secs())));
            }
        };
        self.log(format!("Connecting to {target}... connected."));
        self.log(format!(
            "HTTP request sent, awaiting response... {} {}",
            head.status, head.reason
        ));
        if !(200..300).contains(&head.status) {
            return failed(format!("{} ERROR {}: {}.", stamp(now_secs()), head.status, head.reason));
        }
        let ctype = head.content_type.clone().unwrap_or_else(|| "text/plain".into());
        match head.content_length {
            Some(n) => self.log(format!("Length: {n} ({}) [{ctype}]", human(n))),
            None => self.log(format!("Length: unspecified [{ctype}]")),
        };
        self.log(format!("Saving to: '{}'", self.tmp));
        let started = now_ms();
        let mut sink = Sink::default();
        let mut buf = vec![0u8; 256 << 10];
        let mut next_line = LINE_BYTES;
        loop {
            let n = match body.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) => {
                    return failed(format!(
                        "{} ({}) - Read error at byte {} ({e}). Giving up.",
                        stamp(now_secs()),
                        rate(sink.size(), now_ms() - started),
                        sink.size()
                    ))
                }
            };
            sink.write(&buf[..n]);
            if sink.size() >= next_line {
                let pct = head
                    .content_length
                    .map(|t| format!("{:>3}%", sink.size() * 100 / t.max(1)))
                    .unwrap_or_default();
                let line = format!(
                    "{:>6}K ........ ........ ........ ........ {pct} {}",
                    (next_line - LINE_BYTES) >> 10,
                    human(sink.size() * 1000 / (now_ms() - started).max(1))
                );
                if !self.log(line) {
                    return Err("got interrupted by signal".into());
                }
                next_line += LINE_BYTES;
            }
        }
        let size = sink.size();
        if head.content_length.is_some_and(|t| t != size) {
            let total = head.content_length.unwrap_or(0);
            return failed(format!(
                "{} ({}) - Connection closed at byte {size}/{total}. Giving up.",
                stamp(now_secs()),
                rate(size, now_ms() - started)
            ));
        }
        let of = head
            .content_length
            .map(|t| format!("{size}/{t}"))
            .unwrap_or_else(|| size.to_string());
        self.log(format!(
            "{} ({}) - '{}' saved [{of}]",
            stamp(now_secs()),
            rate(size, now_ms() - started),
            self.tmp
        ));
        Ok(sink.finish())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wget_units() {
        assert_eq!(human(500), "500");
        assert_eq!(human(1 << 20), "1.0M");
        assert_eq!(human(657_457_152), "627M");
        assert_eq!(rate(10 << 20, 1000), "10 MB/s");
        assert_eq!(rate(1536, 1000), "1.50 KB/s");
    }
}
