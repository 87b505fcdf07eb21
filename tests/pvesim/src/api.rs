//! The `/api2/json` pipeline in PVE's order: method check, authentication, parameters,
//! routing, URI merge, permission check, node proxy check, schema validation, handler.

use crate::auth::{self, Identity};
use crate::error::{ApiError, ApiResult};
use crate::params::{self, RawParams};
use crate::sim::SimInner;
use crate::state::Cluster;
use crate::util::now_secs;
use hyper::HeaderMap;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Options only `root@pam` may pass.
const ROOT_ONLY: &[&str] = &[
    "skiplock",
    "keepActive",
    "migratedfrom",
    "stateuri",
    "nocheck",
    "migration_network",
    "migration_type",
    "force-cpu",
];

pub struct Request<'a> {
    pub method: &'a str,
    /// Path below `/api2/json`, e.g. `/nodes/pve1/qemu`.
    pub path: &'a str,
    pub query: Option<&'a str>,
    pub headers: &'a HeaderMap,
    pub body: &'a [u8],
    /// A received file upload (pve-manager skips the CSRF check for those).
    pub upload: bool,
}

pub struct Reply {
    pub result: ApiResult<Value>,
    /// Extra top-level keys (e.g. `total` of a task log).
    pub extra: Map<String, Value>,
    /// POST config with `background_delay`: wait for this task up to N seconds.
    pub wait_task: Option<(String, u64)>,
}

impl Reply {
    fn err(e: ApiError) -> Reply {
        Reply {
            result: Err(e),
            extra: Map::new(),
            wait_task: None,
        }
    }
}

/// What a handler gets.
pub struct Ctx<'a> {
    pub sim: &'a Arc<SimInner>,
    pub c: &'a mut Cluster,
    pub who: &'a Identity,
    pub p: BTreeMap<String, String>,
    pub extra: Map<String, Value>,
    pub wait_task: Option<(String, u64)>,
}

impl Ctx<'_> {
    pub fn get(&self, k: &str) -> Option<&str> {
        self.p.get(k).map(String::as_str)
    }
    pub fn flag(&self, k: &str) -> bool {
        self.get(k) == Some("1")
    }
    pub fn node(&self) -> String {
        self.p.get("node").cloned().unwrap_or_default()
    }
    pub fn vmid(&self) -> u32 {
        self.get("vmid").and_then(|v| v.parse().ok()).unwrap_or(0)
    }
    pub fn require(&self, path: &str, privilege: &str) -> ApiResult<()> {
        auth::require(self.c, self.who, path, privilege)
    }
}

fn header<'a>(h: &'a HeaderMap, name: &str) -> Option<&'a str> {
    h.get(name).and_then(|v| v.to_str().ok())
}

/// A header's value as pve-http-server reads it: several lines of one header joined by
/// `, ` (HTTP::Headers in scalar context).
fn joined(h: &HeaderMap, name: &str) -> Option<String> {
    let parts: Vec<&str> = h.get_all(name).iter().filter_map(|v| v.to_str().ok()).collect();
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// pve-http-server's `extract_auth_value`: the first `KEY=` (or `KEY `) at the start of
/// the header or after white space, its value up to the next `;`, percent-decoded.
pub fn extract_auth_value(header: &str, key: &str) -> Option<String> {
    let mut from = 0;
    while let Some(at) = header[from..].find(key).map(|i| from + i) {
        from = at + key.len();
        let anchored = header[..at].chars().next_back().is_none_or(char::is_whitespace);
        let rest = &header[from..];
        if anchored && (rest.starts_with('=') || rest.starts_with(' ')) {
            let value = rest[1..].split(';').next().unwrap_or("");
            return Some(crate::schema::percent_decode(value));
        }
    }
    None
}

/// Perl truth of a header value: absent, empty and `0` are false.
fn perl_true(v: Option<String>) -> Option<String> {
    v.filter(|s| !s.is_empty() && s != "0")
}

/// pve-http-server's choice of credentials, then pve-manager's `auth_handler`: a
/// `PVEAuthCookie` cookie first, else `PVEAuthCookie` in `Authorization`, and only when
/// neither gave a ticket the `PVEAPIToken` of `Authorization`. A ticket, even an expired
/// or forged one, therefore hides a valid token (401 `Authentication failed!`), and a
/// valid ticket beside a bad token authenticates as the ticket's user (the token is never
/// read). Writes with a ticket need its CSRF token; writes with an API token do not.
fn authenticate(sim: &SimInner, c: &Cluster, method: &str, headers: &HeaderMap) -> ApiResult<Identity> {
    let now = now_secs();
    let cookie = joined(headers, "cookie");
    let authz = joined(headers, "authorization");
    let ticket = perl_true(cookie.as_deref().and_then(|h| extract_auth_value(h, "PVEAuthCookie")))
        .or_else(|| perl_true(authz.as_deref().and_then(|h| extract_auth_value(h, "PVEAuthCookie"))));
    if ticket.is_none() {
        if let Some(tok) = perl_true(authz.as_deref().and_then(|h| extract_auth_value(h, "PVEAPIToken"))) {
            return auth::verify_token(c, &tok).ok_or_else(|| ApiError::unauthorized("Authentication failed!"));
        }
    }
    let Some(t) = ticket else {
        return Err(ApiError::unauthorized("No ticket"));
    };
    let user = sim
        .keys
        .verify_ticket(&t, now, false)
        .ok_or_else(|| ApiError::unauthorized("Authentication failed!"))?;
    if !c.user(&user).is_some_and(|u| u.enable) {
        return Err(ApiError::unauthorized("Authentication failed!"));
    }
    if method != "GET" {
        let ok = header(headers, "csrfpreventiontoken").is_some_and(|tok| sim.keys.verify_csrf(tok, &user, now));
        if !ok {
            return Err(ApiError::unauthorized("Permission denied - invalid csrf token"));
        }
    }
    Ok(Identity {
        userid: user,
        tokenid: None,
    })
}

/// pve-manager's `auth_handler` for an upload, before any of the body is read: the
/// credentials (no CSRF token needed) and Datastore.AllocateTemplate on the storage.
pub fn upload_gate(sim: &SimInner, headers: &HeaderMap, storage: &str) -> ApiResult<()> {
    let c = sim.cluster();
    let who = authenticate(sim, &c, "GET", headers)?;
    let check = serde_json::json!(["perm", format!("/storage/{storage}"), ["Datastore.AllocateTemplate"]]);
    auth::check_expr(&c, &who, &check, &BTreeMap::new())
}

pub fn handle(sim: &Arc<SimInner>, req: &Request<'_>) -> Reply {
    match handle_inner(sim, req) {
        Ok(r) => r,
        Err(e) => Reply::err(e),
    }
}

/// PVE's order, request by request: pve-http-server authenticates first (`auth_handler`,
/// before the body is looked at), then reads the body (`Unexpected content`, content
/// types) and the parameters; pve-manager's `rest_handler` finds the handler, merges URI
/// parameters, refuses tokens where `allowtoken` is off and checks the schema's
/// permissions (`check_api2_permissions`) on the parameters as sent; only then proxies to
/// the node, and the node's `RESTHandler::handle` validates the parameters against the
/// schema before the handler body runs (its own `$rpcenv->check…` calls and root-only
/// options come after validation).
fn handle_inner(sim: &Arc<SimInner>, req: &Request<'_>) -> ApiResult<Reply> {
    let method = req.method;
    if !matches!(method, "GET" | "POST" | "PUT" | "DELETE") {
        return Err(ApiError::status501(format!("method '{method}' not available")));
    }
    let who = {
        let c = sim.cluster();
        caller(sim, &c, req)?
    };
    let mut raw = params::parse(method, req.query, header(req.headers, "content-type"), req.body)?;
    // `move-disk` is the newer spelling of `move_disk`; both reach the same handler.
    let routed_path = match req.path.strip_suffix("/move-disk") {
        Some(base) => format!("{base}/move_disk"),
        None => req.path.to_string(),
    };
    let Some(route) = sim.schema.route(&routed_path) else {
        return Err(ApiError::not_implemented(method, req.path));
    };
    let Some(info) = route.endpoint.info.get(method) else {
        return Err(ApiError::not_implemented(method, req.path));
    };
    let template = route.endpoint.path.clone();
    params::merge_path(&mut raw, &route.path_params)?;
    let mut c = sim.cluster();
    crate::pools::gate_route(&c, method, &template)?;
    if let Some(who) = &who {
        check_api2_permissions(&c, who, info, req.path, &raw)?;
    }
    if let Some(node) = route.path_params.get("node") {
        proxy_to_node(sim, &c, node)?;
    }
    let empty = Value::Object(Map::new());
    let older = crate::pools::parameters_before_8_1(&c, method, &template);
    let pschema = older.as_ref().or(info.get("parameters")).unwrap_or(&empty);
    let p = crate::schema::validate::validate(&raw, pschema).map_err(ApiError::params)?;
    if let Some(who) = &who {
        refuse_root_only_options(who, &p)?;
    }
    let who = who.unwrap_or(Identity {
        userid: String::new(),
        tokenid: None,
    });
    if template == "/nodes/{node}/query-url-metadata" {
        // The node asks a remote server: not under the cluster lock.
        drop(c);
        return Ok(Reply {
            result: crate::content::metadata::query(&p),
            extra: Map::new(),
            wait_task: None,
        });
    }
    let mut ctx = Ctx {
        sim,
        c: &mut c,
        who: &who,
        p,
        extra: Map::new(),
        wait_task: None,
    };
    let result = dispatch(&mut ctx, method, &template, req.path);
    let (extra, wait_task) = (std::mem::take(&mut ctx.extra), ctx.wait_task.take());
    if method != "GET" && result.is_ok() {
        sim.persist(&c);
    }
    Ok(Reply {
        result,
        extra,
        wait_task,
    })
}

/// The calls pve-manager's `auth_handler` lets through without credentials (`None`);
/// every other request is authenticated before its body or path is looked at, so an
/// unknown path without credentials is a 401 as in PVE, not a 501.
fn caller(sim: &SimInner, c: &Cluster, req: &Request<'_>) -> ApiResult<Option<Identity>> {
    let open = matches!(
        (req.method, req.path),
        ("GET", "/access/domains")
            | ("GET" | "POST", "/access/ticket")
            | ("POST", "/access/vncticket")
            | ("POST", "/access/openid/login")
            | ("POST", "/access/openid/auth-url")
    );
    if open {
        return Ok(None);
    }
    let method = if req.upload { "GET" } else { req.method };
    authenticate(sim, c, method, req.headers).map(Some)
}

/// pve-manager's `rest_handler` before the handler runs: a token where the method does
/// not allow tokens, then pve-access-control's `check_api2_permissions` with the
/// parameters as sent (not yet validated: a caller without the privilege learns nothing
/// about its parameters). `user => 'all'` lets every authenticated user through (a
/// `check` beside it only documents what the handler filters by).
fn check_api2_permissions(c: &Cluster, who: &Identity, info: &Value, path: &str, raw: &RawParams) -> ApiResult<()> {
    if who.tokenid.is_some()
        && info
            .get("allowtoken")
            .is_some_and(|v| !crate::propstring::truthy(Some(v)))
    {
        return Err(ApiError::with_status(
            403,
            format!("Permission check failed (URI '{path}' not available with API token, need proper ticket.)"),
        ));
    }
    let perms = info.get("permissions");
    if perms.and_then(|p| p.get("user")).and_then(Value::as_str) == Some("all") {
        return Ok(());
    }
    match perms.and_then(|p| p.get("check")) {
        Some(check) => auth::check_expr(c, who, check, &as_sent(raw)),
        None if who.is_root() => Ok(()),
        None => Err(ApiError::with_status(403, "Permission check failed (user != root@pam)")),
    }
}

/// Parameters as the permission template sees them (`PVE::Tools::template_replace` on
/// the decoded request): strings as sent, JSON numbers and booleans as Perl prints them.
fn as_sent(raw: &RawParams) -> BTreeMap<String, String> {
    raw.iter()
        .filter_map(|(k, v)| {
            let text = match v {
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                Value::Bool(b) => if *b { "1" } else { "0" }.to_string(),
                Value::Null => return None,
                other => other.to_string(),
            };
            Some((k.clone(), text))
        })
        .collect()
}

/// `PVE::API2Tools::resolve_proxyto` and `remote_node_ip`: a node that does not exist is a
/// failed host name lookup, an unreachable one pveproxy's 595.
fn proxy_to_node(sim: &SimInner, c: &Cluster, node: &str) -> ApiResult<()> {
    if c.node(node).is_none() {
        return Err(ApiError::internal(format!(
            "hostname lookup '{node}' failed - failed to get address info for: {node}: Name or service not known"
        )));
    }
    if !sim.node_reachable(c, node) {
        return Err(ApiError::proxy_failure(595, "No route to host"));
    }
    Ok(())
}

/// qemu-server's handlers refuse these for anyone but `root@pam` with a parameter
/// exception, in their body: after validation.
fn refuse_root_only_options(who: &Identity, p: &BTreeMap<String, String>) -> ApiResult<()> {
    if who.is_root() {
        return Ok(());
    }
    let errors: BTreeMap<String, String> = ROOT_ONLY
        .iter()
        .filter(|k| p.contains_key(**k))
        .map(|k| (k.to_string(), "Only root may use this option.".to_string()))
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(ApiError::params(errors))
    }
}

fn dispatch(ctx: &mut Ctx<'_>, method: &str, template: &str, path: &str) -> ApiResult<Value> {
    use crate::{access, cluster, nodes, qemu};
    let rest = template.strip_prefix("/nodes/{node}/qemu/{vmid}").unwrap_or("");
    match (method, template) {
        ("GET", "/access/ticket") => Ok(Value::Null),
        ("POST", "/access/ticket") => access::login(ctx),
        ("GET", "/access/permissions") => access::permissions(ctx),
        ("GET", "/access/acl") => crate::acl_tree::read(ctx),
        ("PUT", "/access/acl") => crate::acl_tree::update(ctx),
        ("GET", "/access/users") => crate::users::index(ctx),
        ("GET", "/access/users/{userid}") => crate::users::read(ctx),
        ("GET", "/access/groups") => crate::users::groups(ctx),
        ("GET", "/access/roles") => crate::users::roles(ctx),
        ("PUT", "/access/users/{userid}/unlock-tfa") => access::unlock_tfa(ctx),
        ("GET", "/version") => cluster::version(ctx),
        ("GET", "/cluster/nextid") => cluster::nextid(ctx),
        ("GET", "/cluster/options") => crate::datacenter::get(ctx),
        ("PUT", "/cluster/options") => crate::datacenter::put(ctx),
        ("GET", "/cluster/resources") => cluster::resources(ctx),
        ("GET", "/cluster/status") => cluster::status(ctx),
        ("GET", "/storage") => crate::storage::index(ctx),
        ("GET", "/cluster/ha/resources") => crate::ha::index(ctx),
        ("POST", "/cluster/ha/resources") => crate::ha::create(ctx),
        ("POST", "/cluster/ha/status/disarm-ha") => crate::ha::disarm(ctx),
        ("POST", "/cluster/ha/status/arm-ha") => crate::ha::arm(ctx),
        ("GET", "/nodes") => cluster::nodes(ctx),
        ("GET", "/pools") => crate::pools::index(ctx),
        ("GET", "/pools/{poolid}") => crate::pools::read(ctx),
        ("PUT", "/pools") | ("PUT", "/pools/{poolid}") => crate::pools::update(ctx),
        ("POST", "/pools") => crate::pools::create(ctx),
        ("DELETE", "/pools") | ("DELETE", "/pools/{poolid}") => crate::pools::delete(ctx),
        ("GET", "/nodes/{node}/qemu") => qemu::info::list(ctx),
        ("POST", "/nodes/{node}/qemu") => qemu::create::create(ctx),
        ("GET", "/nodes/{node}/storage") => nodes::storage_list(ctx),
        ("POST", "/nodes/{node}/vzdump") => qemu::backup::vzdump(ctx),
        ("GET", "/nodes/{node}/network") => nodes::network_list(ctx),
        ("GET", "/nodes/{node}/storage/{storage}/content") => crate::content::list::index(ctx),
        ("GET", "/nodes/{node}/storage/{storage}/content/{volume}") => crate::content::list::info(ctx),
        ("DELETE", "/nodes/{node}/storage/{storage}/content/{volume}") => crate::content::list::delete(ctx),
        ("GET", "/nodes/{node}/version") => cluster::node_version(ctx),
        ("POST", "/nodes/{node}/storage/{storage}/download-url") => crate::content::download::download_url(ctx),
        ("POST", "/nodes/{node}/storage/{storage}/upload") => crate::content::upload::upload(ctx),
        ("GET", "/nodes/{node}/aplinfo") => crate::content::appliances::list(ctx),
        ("POST", "/nodes/{node}/aplinfo") => crate::content::appliances::download(ctx),
        ("GET", "/nodes/{node}/tasks") => nodes::task_list(ctx),
        ("GET", "/nodes/{node}/tasks/{upid}/status") => nodes::task_status(ctx),
        ("GET", "/nodes/{node}/tasks/{upid}/log") => nodes::task_log(ctx),
        ("GET", "/nodes/{node}/lxc") => crate::lxc::list(ctx),
        ("GET", "/nodes/{node}/lxc/{vmid}/config") => crate::lxc::config(ctx),
        ("GET", "/nodes/{node}/lxc/{vmid}/status/current") => crate::lxc::status(ctx),
        ("GET", "/nodes/{node}/lxc/{vmid}/interfaces") => crate::lxc::interfaces(ctx),
        ("GET", "/nodes/{node}/lxc/{vmid}/snapshot") => crate::lxc::snapshots(ctx),
        ("DELETE", "/nodes/{node}/qemu/{vmid}") => qemu::lifecycle::destroy(ctx),
        _ if template.starts_with("/nodes/{node}/qemu/{vmid}/") => match (method, rest) {
            ("GET", "/config") => qemu::info::config(ctx),
            ("POST", "/config") => qemu::update::post_config(ctx),
            ("PUT", "/config") => qemu::update::put_config(ctx),
            ("GET", "/pending") => qemu::info::pending(ctx),
            ("GET", "/cloudinit") => qemu::cloudinit::pending(ctx),
            ("PUT", "/cloudinit") => qemu::cloudinit::update(ctx),
            ("GET", "/status/current") => qemu::info::status_current(ctx),
            ("POST", "/status/start") => qemu::power::start(ctx),
            ("POST", "/status/stop") => qemu::power::stop(ctx, "qmstop"),
            ("POST", "/status/shutdown") => qemu::power::stop(ctx, "qmshutdown"),
            ("POST", "/status/reboot") => qemu::power::reboot(ctx),
            ("POST", "/status/reset") => qemu::power::simple(ctx, "qmreset"),
            ("POST", "/status/suspend") => qemu::power::simple(ctx, "qmpause"),
            ("POST", "/status/resume") => qemu::power::simple(ctx, "qmresume"),
            ("POST", "/clone") => qemu::lifecycle::clone(ctx),
            ("POST", "/template") => qemu::lifecycle::template(ctx),
            ("POST", "/migrate") => qemu::lifecycle::migrate(ctx),
            ("PUT", "/resize") => qemu::diskops::resize(ctx),
            ("POST", "/move_disk") => qemu::diskops::move_disk(ctx),
            ("PUT", "/unlink") => qemu::diskops::unlink(ctx),
            ("GET", "/agent/network-get-interfaces") => qemu::agent::network_get_interfaces(ctx),
            ("POST", "/agent/ping") => qemu::agent::ping(ctx),
            ("GET", "/snapshot") => qemu::snapshot::list(ctx),
            ("POST", "/snapshot") => qemu::snapshot::create(ctx),
            ("DELETE", "/snapshot/{snapname}") => qemu::snapshot::delete(ctx),
            ("POST", "/snapshot/{snapname}/rollback") => qemu::rollback::rollback(ctx),
            _ => Err(ApiError::not_implemented(method, path)),
        },
        _ => Err(ApiError::not_implemented(method, path)),
    }
}
