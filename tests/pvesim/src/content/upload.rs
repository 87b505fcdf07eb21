//! `POST /nodes/{node}/storage/{storage}/upload`: pve-http-server receives the multipart
//! body into a temporary file (here: size, digests and first bytes only, streamed), then
//! pve-storage's `upload` checks it and copies it in an `imgcopy` task.

use super::multipart::{self, Multipart};
use super::names;
use super::transfer::{self, Received, Sink};
use crate::api::Ctx;
use crate::error::{ApiError, ApiResult};
use crate::sim::SimInner;
use crate::tasks;
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::HeaderMap;
use serde_json::Value;
use std::sync::Arc;

/// The storage of an upload path (`/nodes/{node}/storage/{storage}/upload` below the API root).
pub fn upload_storage(method: &str, api_path: &str) -> Option<String> {
    let rest = api_path.strip_prefix("/nodes/")?;
    let mut segs = rest.split('/');
    let (_node, lit, sid, up) = (segs.next()?, segs.next()?, segs.next()?, segs.next()?);
    (method == "POST" && lit == "storage" && up == "upload" && segs.next().is_none() && !sid.is_empty())
        .then(|| sid.to_string())
}

/// How receiving an upload ended before the API call proper.
pub enum Refused {
    /// An answer of the API (authentication, permission).
    Answer(ApiError),
    /// A `die` of pveproxy's multipart reader, answered by its `error` (no JSON).
    Plain(PlainAnswer),
    /// pve-http-server dies without answering (no multipart type or length, a
    /// `tmpfilename` in the query): the connection is closed.
    NoAnswer,
}

/// Receive the body as pve-http-server does; returns the API call's parameters as a
/// form (the fields, `filename` and the temporary file's name) and that name.
pub async fn receive(
    sim: &Arc<SimInner>,
    storage: &str,
    query: Option<&str>,
    headers: &HeaderMap,
    mut body: Incoming,
) -> Result<(Vec<u8>, String), Refused> {
    let sim2 = sim.clone();
    let (h2, sid) = (headers.clone(), storage.to_string());
    let gate = tokio::task::spawn_blocking(move || crate::api::upload_gate(&sim2, &h2, &sid))
        .await
        .unwrap_or_else(|_| Err(ApiError::internal("internal simulator error")));
    if let Err(e) = gate {
        // pve-http-server answers a refusal of `auth_handler` (after its delay, 401 and 403
        // alike) with `Connection: close` and closes the connection without reading the
        // body: a client still sending the file sees a reset.
        if sim.cfg.auth_fail_delay_ms > 0 {
            tokio::time::sleep(std::time::Duration::from_millis(sim.cfg.auth_fail_delay_ms)).await;
        }
        drop(body);
        return Err(Refused::Answer(e));
    }
    let ctype = headers.get("content-type").and_then(|v| v.to_str().ok()).unwrap_or("");
    let length = headers
        .get("content-length")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(0);
    let Some(boundary) = multipart::boundary(ctype).filter(|_| length > 0) else {
        return Err(Refused::NoAnswer);
    };
    let query_params: Vec<(String, String)> = form_urlencoded::parse(query.unwrap_or("").as_bytes())
        .into_owned()
        .collect();
    if query_params.iter().any(|(k, _)| k == "tmpfilename") {
        return Err(Refused::NoAnswer);
    }
    let mut parser = Multipart::new(&boundary);
    let mut sink = Sink::default();
    while let Some(frame) = body.frame().await {
        let Ok(frame) = frame else {
            return Err(Refused::NoAnswer);
        };
        if let Some(data) = frame.data_ref() {
            parser
                .feed(data, &mut sink)
                .map_err(|e| Refused::Plain(PlainAnswer::of_die(&e)))?;
        }
    }
    if !parser.done() {
        return Err(Refused::Plain(PlainAnswer::of_die("upload failed")));
    }
    let tmpfilename = format!("/var/tmp/pveupload-{:032x}", rand::random::<u128>());
    sim.uploads().insert(tmpfilename.clone(), sink.finish());
    let mut form = form_urlencoded::Serializer::new(String::new());
    for (k, v) in query_params.iter().map(|(k, v)| (k, v)).chain(parser.params.iter()) {
        form.append_pair(k, v);
    }
    form.append_pair("tmpfilename", &tmpfilename);
    Ok((form.finish().into_bytes(), tmpfilename))
}

/// What pveproxy sends for a `die` while it reads an upload: `error()` makes a 500 whose
/// reason phrase is the message and whose body is the message as plain text (no
/// Content-Type); `response()` keeps the reason's first line, and a first line with a
/// carriage return (a capture that spans CRLF-delimited parts) turns the answer into
/// `400 Bad Request` with an empty body.
#[derive(Debug, Clone, PartialEq)]
pub struct PlainAnswer {
    pub status: u16,
    pub reason: String,
    pub body: String,
}

impl PlainAnswer {
    pub fn of_die(message: &str) -> PlainAnswer {
        let first_line = message.split('\n').next().unwrap_or("");
        if first_line.contains('\r') {
            return PlainAnswer {
                status: 400,
                reason: "Bad Request".into(),
                body: String::new(),
            };
        }
        PlainAnswer {
            status: 500,
            reason: first_line.to_string(),
            body: message.to_string(),
        }
    }
}

/// The API call: pve-storage's checks in its order, then the `imgcopy` task.
pub fn upload(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    let node = ctx.node();
    let content = ctx.get("content").unwrap_or("").to_string();
    let sid = ctx.get("storage").unwrap_or("").to_string();
    let sd = super::file_storage(ctx, &content, &sid, &node, "")?;
    let Some(tmp) = ctx.get("tmpfilename").map(str::to_string) else {
        return Err(ApiError::internal("missing temporary file name"));
    };
    let Some(received) = ctx.sim.uploads().remove(&tmp) else {
        return Err(ApiError::internal(format!("temporary file '{tmp}' does not exist")));
    };
    let filename = names::normalize(ctx.get("filename").unwrap_or(""));
    let (volname, format) = names::volume_for(&content, &filename, !ctx.c.pve_at_least(8, 4))?;
    if !sd.has_content(&content) {
        return Err(ApiError::internal(format!(
            "storage '{sid}' does not support '{content}' content"
        )));
    }
    let dest = super::file_path(&sd, &volname);
    let checksum = match (ctx.get("checksum"), ctx.get("checksum-algorithm")) {
        (Some(sum), Some(alg)) => Some((alg.to_string(), sum.to_string())),
        _ => None,
    };
    // `upload` has no `proxyto`: the API call and its worker run where pveproxy received
    // the file (the answering node), which copies it to another target node over scp.
    let receiving = crate::cluster::answering_node(ctx.c);
    let command = if node == receiving {
        format!("cp -- {tmp} {dest}")
    } else {
        let ip = crate::cluster::node_ip(ctx.c, &node).unwrap_or_else(|| node.clone());
        format!(
            "/usr/bin/scp -o BatchMode=yes -o HostKeyAlias={node} -o UserKnownHostsFile=/etc/pve/nodes/{node}/ssh_known_hosts -o GlobalKnownHostsFile=none -p -- {tmp} [{ip}]:{dest}"
        )
    };
    let node2 = node.clone();
    let work = Box::new(move |c: &mut crate::state::Cluster, t: &mut tasks::TaskCtx| {
        t.log.push(format!("starting file import from: {tmp}"));
        check(&received, checksum.as_ref(), format.as_deref(), &tmp, t)?;
        t.log.push(format!("target node: {node2}"));
        t.log.push(format!("target file: {dest}"));
        t.log.push(format!("file size is: {}", received.size));
        t.log.push(format!("command: {command}"));
        t.check_fault()?;
        transfer::place(
            c,
            &sd,
            &node2,
            &volname,
            &received,
            transfer::check_image(format.as_deref(), &received, &dest)
                .ok()
                .flatten(),
        );
        t.log.push("finished file import successfully".to_string());
        Ok(())
    });
    Ok(Value::String(tasks::spawn(
        ctx.sim,
        ctx.c,
        &receiving,
        "imgcopy",
        "",
        ctx.who,
        vec![],
        work,
    )))
}

/// The worker's checks of the received file: checksum, then the image.
fn check(
    received: &Received,
    checksum: Option<&(String, String)>,
    format: Option<&str>,
    tmp: &str,
    t: &mut tasks::TaskCtx,
) -> Result<(), String> {
    if let Some((alg, expected)) = checksum {
        let got = &received.checksums[alg.as_str()];
        if transfer::check_checksum(got, expected).is_ok() {
            t.log.push("calculating checksum...OK, checksum verified".into());
        } else {
            t.log.push("calculating checksum...".into());
            return Err(format!("checksum mismatch: got '{got}' != expect '{expected}'"));
        }
    }
    transfer::check_image(format, received, tmp).map(|_| ())
}
