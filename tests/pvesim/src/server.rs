//! HTTPS front end: TLS (rustls), HTTP/1.1 (hyper), body limits, faults, the request
//! log, PVE reason phrases; hands `/api2/json` to `api` and `/_pvesim` to `control`.

use crate::api;
use crate::control::{self, LogEntry};
use crate::error::ApiError;
use crate::sim::SimInner;
use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::header::{HeaderValue, CONTENT_TYPE};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{Map, Value};
use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio_rustls::TlsAcceptor;

pub const MAX_BODY: usize = 512 * 1024;

type Resp = Response<Full<Bytes>>;

/// Accept loop; ends when `shutdown` flips to true.
pub async fn serve(
    listener: TcpListener,
    acceptor: TlsAcceptor,
    sim: Arc<SimInner>,
    mut shutdown: watch::Receiver<bool>,
) {
    loop {
        tokio::select! {
            _ = shutdown.changed() => break,
            acc = listener.accept() => {
                let Ok((tcp, _)) = acc else { continue };
                if sim.faults().take_connection_fault() {
                    drop(tcp);
                    continue;
                }
                let _ = tcp.set_nodelay(true);
                let acceptor = acceptor.clone();
                let sim = sim.clone();
                let mut sd = shutdown.clone();
                tokio::spawn(async move {
                    let mut first = [0u8; 1];
                    let plain = matches!(tokio::time::timeout(Duration::from_secs(10), tcp.peek(&mut first)).await, Ok(Ok(1)) if first[0] != 0x16);
                    if plain {
                        let svc = hyper::service::service_fn(|req: Request<Incoming>| async move { Ok::<_, std::io::Error>(redirect(&req)) });
                        let _ = hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(tcp), svc).await;
                        return;
                    }
                    let Ok(Ok(tls)) = tokio::time::timeout(Duration::from_secs(10), acceptor.accept(tcp)).await else { return };
                    let kept = Arc::new(KeepAlive::default());
                    let svc = hyper::service::service_fn(move |req| answer_in_connection(sim.clone(), kept.clone(), req));
                    let conn = hyper::server::conn::http1::Builder::new()
                        .timer(hyper_util::rt::TokioTimer::new())
                        .keep_alive(true)
                        .header_read_timeout(Duration::from_secs(30))
                        .serve_connection(TokioIo::new(tls), svc);
                    tokio::pin!(conn);
                    tokio::select! {
                        r = conn.as_mut() => { if let Err(e) = r { debug_connection_error(&e) } }
                        _ = sd.changed() => { conn.as_mut().graceful_shutdown(); let _ = conn.await; }
                    }
                });
            }
        }
    }
}

/// pveproxy's keep-alive (pve-manager `PVE/Service/pveproxy.pm`, `keep_alive => 100`): a
/// connection serves at most this many requests.
const KEEP_ALIVE_REQUESTS: u32 = 100;

/// One connection's count of API requests, as pve-http-server's `$reqstate->{keep_alive}`.
#[derive(Default)]
struct KeepAlive {
    requests: std::sync::atomic::AtomicU32,
}

/// An API answer as pve-http-server's `response` ends it: an answer >= 400, or the one
/// that spends the connection's keep-alive count, says `Connection: close`, and the
/// connection is closed once it is written (`finish_response` → `client_do_disconnect`),
/// so requests a client sent after it on that connection are never answered (an upload
/// refused before its body is read is closed the same way, the body unread). The control
/// API is pvesim's own and keeps its connection.
async fn answer_in_connection(
    sim: Arc<SimInner>,
    kept: Arc<KeepAlive>,
    req: Request<Incoming>,
) -> Result<Resp, std::io::Error> {
    if is_control(req.uri().path()) {
        return handle(sim, req).await;
    }
    let served = kept.requests.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
    let mut answer = handle(sim, req).await?;
    if answer.status().as_u16() >= 400 || served >= KEEP_ALIVE_REQUESTS {
        answer
            .headers_mut()
            .insert(hyper::header::CONNECTION, HeaderValue::from_static("close"));
    }
    Ok(answer)
}

fn is_control(path: &str) -> bool {
    path == "/_pvesim" || path.starts_with("/_pvesim/")
}

/// Plain HTTP on the TLS port: redirect to https (301 for GET/HEAD, else 308).
fn redirect(req: &Request<Incoming>) -> Resp {
    let host = req
        .headers()
        .get("host")
        .and_then(|h| h.to_str().ok())
        .unwrap_or("localhost:8006");
    let loc = format!(
        "https://{host}{}",
        req.uri().path_and_query().map(|p| p.as_str()).unwrap_or("/")
    );
    let code = if req.method() == "GET" || req.method() == "HEAD" {
        301
    } else {
        308
    };
    let mut r = Response::new(Full::new(Bytes::new()));
    *r.status_mut() = StatusCode::from_u16(code).unwrap_or(StatusCode::MOVED_PERMANENTLY);
    if let Ok(v) = HeaderValue::from_str(&loc) {
        r.headers_mut().insert("location", v);
    }
    r
}

fn json_response(status: u16, reason: Option<&str>, body: Option<Vec<u8>>, gzip_ok: bool) -> Resp {
    let mut body = body.unwrap_or_default();
    let mut gz = false;
    if gzip_ok && body.len() > 1024 {
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        if enc.write_all(&body).is_ok() {
            if let Ok(b) = enc.finish() {
                body = b;
                gz = true;
            }
        }
    }
    let empty = body.is_empty();
    let mut r = Response::new(Full::new(Bytes::from(body)));
    *r.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let h = r.headers_mut();
    h.insert("server", HeaderValue::from_static("pve-api-daemon/3.0"));
    h.insert("cache-control", HeaderValue::from_static("max-age=0"));
    h.insert("pragma", HeaderValue::from_static("no-cache"));
    if !empty {
        h.insert(CONTENT_TYPE, HeaderValue::from_static("application/json;charset=UTF-8"));
    }
    if gz {
        h.insert("content-encoding", HeaderValue::from_static("gzip"));
    }
    if let Some(reason) = reason {
        if let Ok(rp) = hyper::ext::ReasonPhrase::try_from(reason.as_bytes().to_vec()) {
            r.extensions_mut().insert(rp);
        }
    }
    r
}

/// pveproxy's `error()` outside the API: the message as a plain body, no Content-Type.
fn plain_response(a: &crate::content::upload::PlainAnswer) -> Resp {
    let mut r = Response::new(Full::new(Bytes::from(a.body.clone())));
    *r.status_mut() = StatusCode::from_u16(a.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let h = r.headers_mut();
    h.insert("server", HeaderValue::from_static("pve-api-daemon/3.0"));
    if let Ok(rp) = hyper::ext::ReasonPhrase::try_from(a.reason.as_bytes().to_vec()) {
        r.extensions_mut().insert(rp);
    }
    r
}

fn error_response(e: &ApiError, gzip_ok: bool) -> Resp {
    let body = e.body().map(|b| serde_json::to_vec(&b).unwrap_or_default());
    json_response(e.status, Some(&e.reason()), body, gzip_ok)
}

async fn handle(sim: Arc<SimInner>, req: Request<Incoming>) -> Result<Resp, std::io::Error> {
    let started = Instant::now();
    let method = req.method().as_str().to_string();
    let path = req.uri().path().to_string();
    let query = req.uri().query().map(str::to_string);
    let gzip_ok = req
        .headers()
        .get("accept-encoding")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("gzip"));
    let headers = req.headers().clone();

    if is_control(&path) {
        return Ok(control_request(&sim, req, method, path, gzip_ok).await);
    }

    let finish = |status: u16, sim: &SimInner| {
        let ms = started.elapsed().as_secs_f64() * 1000.0;
        let mut l = sim.log.lock().unwrap_or_else(|e| e.into_inner());
        l.record(LogEntry {
            method: method.clone(),
            path: path.clone(),
            query: query.clone().unwrap_or_default(),
            status,
            ms: (ms * 1000.0).round() / 1000.0,
        });
    };

    let api_rel = path
        .strip_prefix("/api2/json")
        .or_else(|| path.strip_prefix("/api2/extjs"))
        .unwrap_or("");
    let received = match crate::content::upload::upload_storage(&method, api_rel) {
        Some(sid) => receive_upload(&sim, &sid, query.as_deref(), headers, req.into_body(), &finish, gzip_ok).await,
        None => match read_body(req, &headers, &sim, &finish, gzip_ok).await {
            Ok(body) => Ok((body, headers, query.clone(), None)),
            Err(answer) => Err(Ok(answer)),
        },
    };
    let (body, headers, api_query, upload_tmp) = match received {
        Ok(received) => received,
        Err(answer) => return answer,
    };

    sim.hold.wait(&method, &path).await;
    let action = sim.faults().match_http(&method, &path);
    let mut after = None;
    if let Some(a) = action {
        if a.after {
            after = Some(a);
        } else if let Some(lost) = apply_fault(&a, &sim, &finish, gzip_ok).await {
            return lost;
        }
    }

    // `/api2/extjs` is the same API in the web UI's envelope (always 200 but for 401s).
    let extjs = path.starts_with("/api2/extjs");
    let prefix = if extjs { "/api2/extjs" } else { "/api2/json" };
    let Some(api_path) = path.strip_prefix(prefix).filter(|p| p.is_empty() || p.starts_with('/')) else {
        let e = ApiError::not_implemented(&method, &path);
        finish(e.status, &sim);
        return Ok(error_response(&e, gzip_ok));
    };
    let api_path = if api_path.is_empty() {
        "/".to_string()
    } else {
        api_path.to_string()
    };
    let upload = upload_tmp.is_some();
    let reply = call_api(&sim, method.clone(), api_path, api_query, headers, body, upload).await;
    if let Some(tmp) = &upload_tmp {
        // pve-http-server removes the temporary file once the call is answered.
        sim.uploads().remove(tmp);
    }

    let mut result = reply.result;
    if let (Ok(_), Some((upid, delay))) = (&result, reply.wait_task) {
        result = wait_for_task(&sim, &upid, delay).await;
    }
    // The request took effect; now its answer is lost, late or replaced.
    if let Some(a) = after {
        if let Some(lost) = apply_fault(&a, &sim, &finish, gzip_ok).await {
            return lost;
        }
    }
    if extjs && !matches!(&result, Err(e) if e.status == 401) {
        let obj = extjs_envelope(result, reply.extra);
        finish(200, &sim);
        return Ok(json_response(
            200,
            None,
            Some(serde_json::to_vec(&Value::Object(obj)).unwrap_or_default()),
            gzip_ok,
        ));
    }
    Ok(json_answer(result, reply.extra, &sim, &finish, gzip_ok).await)
}

/// `/_pvesim`: the simulator's control API, outside the request log and the faults.
async fn control_request(
    sim: &Arc<SimInner>,
    req: Request<Incoming>,
    method: String,
    path: String,
    gzip_ok: bool,
) -> Resp {
    let body = match Limited::new(req.into_body(), 64 << 20).collect().await {
        Ok(b) => b.to_bytes(),
        Err(_) => Bytes::new(),
    };
    let sim2 = sim.clone();
    let (status, v) = tokio::task::spawn_blocking(move || control::handle(&sim2, &method, &path, &body))
        .await
        .unwrap_or((500, Value::Null));
    json_response(status, None, Some(serde_json::to_vec(&v).unwrap_or_default()), gzip_ok)
}

/// A request's body, headers, query and upload temporary file as the API call gets them.
type Received = (Bytes, hyper::HeaderMap, Option<String>, Option<String>);

/// An upload: pve-http-server checks the credentials first, then streams the
/// multipart body into a temporary file; the API call gets the form's fields.
async fn receive_upload(
    sim: &Arc<SimInner>,
    sid: &str,
    query: Option<&str>,
    headers: hyper::HeaderMap,
    body: Incoming,
    finish: &impl Fn(u16, &SimInner),
    gzip_ok: bool,
) -> Result<Received, Result<Resp, std::io::Error>> {
    match crate::content::upload::receive(sim, sid, query, &headers, body).await {
        Ok((form, tmp)) => {
            let mut headers = headers;
            headers.insert(
                CONTENT_TYPE,
                HeaderValue::from_static("application/x-www-form-urlencoded"),
            );
            Ok((Bytes::from(form), headers, None, Some(tmp)))
        }
        Err(crate::content::upload::Refused::Answer(e)) => {
            finish(e.status, sim);
            Err(Ok(error_response(&e, gzip_ok)))
        }
        Err(crate::content::upload::Refused::Plain(a)) => {
            finish(a.status, sim);
            Err(Ok(plain_response(&a)))
        }
        Err(crate::content::upload::Refused::NoAnswer) => {
            finish(0, sim);
            Err(Err(std::io::Error::new(
                std::io::ErrorKind::ConnectionAborted,
                "upload refused without an answer",
            )))
        }
    }
}

/// The API call proper, on a blocking thread (it takes the cluster lock).
async fn call_api(
    sim: &Arc<SimInner>,
    method: String,
    api_path: String,
    query: Option<String>,
    headers: hyper::HeaderMap,
    body: Bytes,
    upload: bool,
) -> api::Reply {
    let sim2 = sim.clone();
    tokio::task::spawn_blocking(move || {
        let req = api::Request {
            method: &method,
            path: &api_path,
            query: query.as_deref(),
            headers: &headers,
            body: &body,
            upload,
        };
        api::handle(&sim2, &req)
    })
    .await
    .unwrap_or_else(|_| api::Reply {
        result: Err(ApiError::internal("internal simulator error")),
        extra: Map::new(),
        wait_task: None,
    })
}

/// `/api2/extjs`: the result in the web UI's envelope (`success`, `message`, `errors`).
fn extjs_envelope(result: Result<Value, ApiError>, extra: Map<String, Value>) -> Map<String, Value> {
    let mut obj = Map::new();
    match result {
        Ok(data) => {
            obj.insert("data".into(), data);
            obj.extend(extra);
            obj.insert("success".into(), Value::from(1));
        }
        Err(e) => {
            obj.insert("data".into(), Value::Null);
            obj.insert("success".into(), Value::from(0));
            obj.insert("status".into(), Value::from(e.status));
            obj.insert(
                "message".into(),
                Value::from(
                    e.body()
                        .and_then(|b| b["message"].as_str().map(str::to_string))
                        .unwrap_or_default(),
                ),
            );
            if let Some(errs) = &e.errors {
                obj.insert("errors".into(), serde_json::to_value(errs).unwrap_or_default());
            }
        }
    }
    obj
}

/// A `/api2/json` answer: the data with its extra keys, or the error (a 401 after the
/// configured delay).
async fn json_answer(
    result: Result<Value, ApiError>,
    extra: Map<String, Value>,
    sim: &SimInner,
    finish: &impl Fn(u16, &SimInner),
    gzip_ok: bool,
) -> Resp {
    match result {
        Ok(data) => {
            let mut obj = Map::new();
            obj.insert("data".into(), data);
            obj.extend(extra);
            finish(200, sim);
            json_response(
                200,
                None,
                Some(serde_json::to_vec(&Value::Object(obj)).unwrap_or_default()),
                gzip_ok,
            )
        }
        Err(e) => {
            if e.status == 401 && sim.cfg.auth_fail_delay_ms > 0 {
                tokio::time::sleep(Duration::from_millis(sim.cfg.auth_fail_delay_ms)).await;
            }
            finish(e.status, sim);
            error_response(&e, gzip_ok)
        }
    }
}

/// What an HTTP fault does to the answer: latency, then a dropped connection or a
/// replacement answer (`None`: the real answer follows).
async fn apply_fault(
    a: &control::HttpAction,
    sim: &SimInner,
    finish: &impl Fn(u16, &SimInner),
    gzip_ok: bool,
) -> Option<Result<Resp, std::io::Error>> {
    if a.latency_ms > 0 {
        tokio::time::sleep(Duration::from_millis(a.latency_ms)).await;
    }
    if a.drop_connection {
        finish(0, sim);
        return Some(Err(std::io::Error::new(
            std::io::ErrorKind::ConnectionAborted,
            "fault: drop connection",
        )));
    }
    let (status, msg) = a.reply.clone()?;
    // 595-599 are pveproxy relaying its HTTP client's own failure: reason only, no body.
    let e = if (595..=599).contains(&status) {
        ApiError::proxy_failure(status, msg)
    } else {
        ApiError::with_status(status, msg)
    };
    finish(status, sim);
    Some(Ok(error_response(&e, gzip_ok)))
}

/// `background_delay`: OK -> null, error -> 500 `failed to update VM`, running -> UPID.
async fn wait_for_task(sim: &SimInner, upid: &str, delay_s: u64) -> Result<Value, ApiError> {
    let deadline = Instant::now() + Duration::from_secs(delay_s);
    loop {
        let (running, exit, id, kind) = {
            let c = sim.cluster();
            match c.tasks.get(upid) {
                Some(t) => (t.running, t.exitstatus.clone(), t.id.clone(), t.kind.clone()),
                None => return Ok(Value::String(upid.to_string())),
            }
        };
        if !running {
            return match exit.as_deref() {
                Some("OK") => Ok(Value::Null),
                Some(e) if e.starts_with("WARNINGS") => Ok(Value::Null),
                // The content's `delete` dies with the task's status itself.
                Some(e) if kind == "imgdel" => Err(ApiError::internal(e)),
                Some(e) => Err(ApiError::internal(format!("failed to update VM {id}: {e}"))),
                None => Ok(Value::Null),
            };
        }
        if Instant::now() >= deadline {
            return Ok(Value::String(upid.to_string()));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A request's body as pve-http-server takes it: chunked and oversized bodies are
/// refused with its answers.
async fn read_body(
    req: Request<Incoming>,
    headers: &hyper::HeaderMap,
    sim: &SimInner,
    finish: &impl Fn(u16, &SimInner),
    gzip_ok: bool,
) -> Result<Bytes, Resp> {
    // Body: chunked and oversized bodies are refused like pve-http-server does.
    let chunked = headers
        .get("transfer-encoding")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.to_ascii_lowercase().contains("chunked"));
    let too_large = headers
        .get("content-length")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
        .is_some_and(|n| n > MAX_BODY as u64);
    let pre_error = if chunked {
        Some(ApiError::status501("chunked transfer encoding not supported"))
    } else if too_large {
        Some(ApiError::status501("for data too large"))
    } else {
        None
    };
    if let Some(e) = pre_error {
        // Drain (bounded) what the client is sending, so closing the connection does not
        // reset it before the client has read the answer.
        let mut body = req.into_body();
        let mut seen = 0usize;
        while seen < (16 << 20) {
            match body.frame().await {
                Some(Ok(f)) => seen += f.data_ref().map(|d| d.len()).unwrap_or(0),
                _ => break,
            }
        }
        finish(e.status, sim);
        return Err(error_response(&e, gzip_ok));
    }
    let body = match Limited::new(req.into_body(), MAX_BODY).collect().await {
        Ok(b) => b.to_bytes(),
        Err(_) => {
            let e = ApiError::status501("for data too large");
            finish(e.status, sim);
            return Err(error_response(&e, gzip_ok));
        }
    };
    Ok(body)
}

/// A connection that ended in an error, told on stderr only when `PVESIM_DEBUG` is set
/// (clients that hang up mid-request are normal in tests).
fn debug_connection_error(e: &hyper::Error) {
    if std::env::var_os("PVESIM_DEBUG").is_some() {
        #[allow(clippy::print_stderr)]
        {
            eprintln!("pvesim: connection error: {e}");
        }
    }
}
