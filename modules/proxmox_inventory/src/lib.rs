//! The API side of the `ferrox.proxmox.proxmox` inventory plugin (`plugins/inventory/proxmox.py`).
//!
//! `ferrox inventory -` reads the plugin's options as JSON on stdin (never argv: they
//! hold secrets) and prints the inventory as JSON lines, as it is read:
//! `{"node": {...}}` per node, `{"guest": {...}}` per guest (its host variables as
//! community.proxmox 1.6 names and values them, see [`vars`]), `{"pool": {...}}` per pool,
//! `{"warning": "..."}`, then `{"done": {...}}` — or `{"error": "..."}` and exit code 1.
//!
//! Templates are guests like the others (community.proxmox 2.x), with `template: true`,
//! or left out with `exclude_templates` (1.6). `exclude_vms` lists the nodes only.
//!
//! Reads: `/nodes`, one `/cluster/resources?type=vm` (instead of two lists per node),
//! `/pools`; `/cluster/status` only for the hostname templates' node variables; with facts,
//! per guest `config` and `snapshot`, `status/current` for running VMs (their `qmpstatus`),
//! and the agent's or the container's interfaces, on `concurrency` worker threads, each with
//! its own connection ([`Client::fork`]). Guests are printed in listing order as they complete:
//! memory holds the listing and the guests finished ahead of the oldest still being read.

mod config;
mod vars;

use std::collections::{BTreeMap, HashMap};
use std::io::{Read, Write};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;

use ferrox_pve_client::client::{ApiError, Client};
use serde::Deserialize;
use serde_json::{json, Map, Value};

use config::{in_plugin_terms, Config};
use vars::Item;

/// `ferrox inventory CONFIG` (`-`: stdin). Returns the exit code.
pub fn main(args: &[String]) -> i32 {
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let result = match args {
        [path] => read_config(path).and_then(|cfg| run(&cfg, &mut out)),
        _ => Err("usage: ferrox inventory CONFIG_FILE (or - for stdin): the ferrox.proxmox.proxmox inventory plugin runs this; use it through ansible-inventory".into()),
    };
    let code = match result {
        Ok(()) => 0,
        Err(msg) => {
            let _ = writeln!(out, "{}", json!({"error": msg}));
            1
        }
    };
    let _ = out.flush();
    code
}

fn read_config(path: &str) -> Result<Config, String> {
    let mut text = String::new();
    let read = if path == "-" {
        std::io::stdin().read_to_string(&mut text)
    } else {
        std::fs::File::open(path).and_then(|mut f| f.read_to_string(&mut text))
    };
    read.map_err(|e| format!("cannot read the inventory configuration {path}: {e}"))?;
    // serde's message names the field, never echoes a value.
    serde_json::from_str(&text).map_err(|e| format!("the inventory configuration is not what this binary expects ({e}): the plugin and binary come from different builds of the collection"))
}

fn api_err(e: ApiError) -> String {
    in_plugin_terms(&e.to_string())
}

#[derive(Deserialize)]
struct NodeRow {
    node: Option<String>,
    #[serde(rename = "type")]
    kind: Option<String>,
    status: Option<String>,
}

#[derive(Deserialize)]
struct ResourceRow {
    vmid: Option<u64>,
    name: Option<String>,
    node: Option<String>,
    #[serde(rename = "type")]
    kind: Option<String>,
    status: Option<String>,
    tags: Option<String>,
    template: Option<Value>,
    pool: Option<String>,
}

fn line(out: &mut dyn Write, value: Value) -> Result<(), String> {
    writeln!(out, "{value}").map_err(|e| format!("cannot write the inventory: {e}"))
}

/// The whole run: listing, per-guest facts, pools.
pub(crate) fn run(cfg: &Config, out: &mut dyn Write) -> Result<(), String> {
    let params = cfg.connection()?;
    let client = Client::connect(&params).map_err(api_err)?;
    let prefix = cfg.facts_prefix.as_str();

    let online = node_lines(cfg, &client, out)?;
    if cfg.exclude_vms {
        return line(out, json!({"done": {"guests": 0, "requests": client.requests_sent()}}));
    }
    let Guests {
        items,
        members,
        resources,
    } = guests(cfg, &client, &online)?;

    let with_facts = cfg.want_facts || cfg.facts_for.is_some();
    let concurrency = cfg.concurrency()?;
    let mut requests = client.requests_sent() as usize;
    if with_facts {
        requests += gather(cfg, &client, &items, &resources, concurrency, out)?;
    } else {
        for item in &items {
            line(out, guest_line(item, vars::base(prefix, item), &resources))?;
        }
    }
    requests += pool_lines(&client, &members, out)?;
    line(out, json!({"done": {"guests": items.len(), "requests": requests}}))
}

/// One line per node, as community reads them: every entry with a name is a host. Returns
/// the online nodes in their order (only their guests are listed).
fn node_lines(cfg: &Config, client: &Client, out: &mut dyn Write) -> Result<HashMap<String, usize>, String> {
    let nodes: Vec<NodeRow> = serde_json::from_value(client.get("/nodes", &[]).map_err(api_err)?)
        .map_err(|e| format!("GET /nodes: unexpected answer: {e}"))?;
    // community.proxmox main's hostname template sees a node's `/cluster/status` row.
    let mut status_rows: HashMap<String, Value> = HashMap::new();
    if cfg.want_resources && !cfg.exclude_nodes {
        let status = client.get("/cluster/status", &[]).map_err(api_err)?;
        for row in status.as_array().into_iter().flatten() {
            if row.get("type").and_then(Value::as_str) == Some("node") {
                if let Some(name) = row.get("name").and_then(Value::as_str) {
                    status_rows.insert(name.to_string(), row.clone());
                }
            }
        }
    }
    let mut online: HashMap<String, usize> = HashMap::new();
    for row in &nodes {
        let Some(name) = row.node.as_deref().filter(|n| !n.is_empty()) else {
            continue;
        };
        let is_online = row.status.as_deref() != Some("offline");
        let mut node = json!({"name": name, "type": row.kind, "online": is_online});
        if is_online {
            online.insert(name.to_string(), online.len());
            if cfg.want_proxmox_nodes_ansible_host && !cfg.exclude_nodes {
                let network = client.get(&format!("/nodes/{name}/network"), &[]).map_err(api_err)?;
                node["ansible_host"] = vars::node_address(&network);
            }
        }
        if let Some(row) = status_rows.get(name) {
            node["resource"] = row.clone();
        }
        line(out, json!({ "node": node }))?;
    }
    Ok(online)
}

/// The guests to list, in community's order, with each pool's members and (with
/// `want_resources`) each guest's `/cluster/resources` row.
struct Guests {
    items: Vec<Item>,
    members: BTreeMap<String, Vec<String>>,
    resources: HashMap<u64, Value>,
}

/// The guests of the online nodes from one `/cluster/resources` listing.
fn guests(cfg: &Config, client: &Client, online: &HashMap<String, usize>) -> Result<Guests, String> {
    let rows = client
        .get_list(
            "/cluster/resources",
            &[("type", "vm".to_string())],
            &Vec::new,
            &|acc: &mut Vec<(ResourceRow, Option<Value>)>, e| {
                let raw: Value = serde_json::from_slice(e)?;
                let row = ResourceRow::deserialize(&raw)?;
                acc.push((row, cfg.want_resources.then_some(raw)));
                Ok(())
            },
        )
        .map_err(api_err)?;
    let mut members: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut items: Vec<(usize, Item)> = Vec::new();
    let mut resources: HashMap<u64, Value> = HashMap::new();
    for (row, raw) in rows {
        let (Some(vmid), Some(node), Some(kind)) = (row.vmid, row.node, row.kind) else {
            continue;
        };
        if kind != "qemu" && kind != "lxc" {
            continue;
        }
        let name = row.name.unwrap_or_else(|| {
            if kind == "qemu" {
                format!("VM {vmid}")
            } else {
                format!("CT{vmid}")
            }
        });
        if let Some(pool) = &row.pool {
            members.entry(pool.clone()).or_default().push(name.clone());
        }
        let template = row
            .template
            .as_ref()
            .is_some_and(|t| t.as_u64() == Some(1) || t.as_bool() == Some(true) || t.as_str() == Some("1"));
        let Some(&order) = online.get(&node) else { continue };
        if template && cfg.exclude_templates {
            continue;
        }
        if let Some(raw) = raw {
            resources.insert(vmid, raw);
        }
        if cfg.facts_for.as_ref().is_some_and(|only| !only.contains(&vmid)) {
            continue;
        }
        let status = row.status.unwrap_or_else(|| "unknown".into());
        items.push((
            order,
            Item {
                vmid,
                name,
                node,
                kind,
                status,
                tags: row.tags,
                template,
                pool: row.pool,
                template_fact: !cfg.exclude_templates,
            },
        ));
    }
    // community's order: node by node, containers before VMs.
    items.sort_by(|(a, x), (b, y)| (a, x.kind != "lxc", x.vmid).cmp(&(b, y.kind != "lxc", y.vmid)));
    let items: Vec<Item> = items.into_iter().map(|(_, i)| i).collect();
    Ok(Guests {
        items,
        members,
        resources,
    })
}

/// One line per pool with its members; returns the requests it made.
fn pool_lines(client: &Client, members: &BTreeMap<String, Vec<String>>, out: &mut dyn Write) -> Result<usize, String> {
    let pools = client.get("/pools", &[]).map_err(api_err)?;
    for pool in pools.as_array().into_iter().flatten() {
        let Some(id) = pool.get("poolid").and_then(Value::as_str).filter(|p| !p.is_empty()) else {
            continue;
        };
        line(
            out,
            json!({"pool": {"id": id, "members": members.get(id).cloned().unwrap_or_default()}}),
        )?;
    }
    Ok(1)
}

fn guest_line(item: &Item, vars: Map<String, Value>, resources: &HashMap<u64, Value>) -> Value {
    let mut guest = json!({"name": item.name, "node": item.node, "type": item.kind, "status": item.status,
        "template": item.template, "vars": vars});
    if let Some(row) = resources.get(&item.vmid) {
        guest["resource"] = row.clone();
    }
    json!({ "guest": guest })
}

/// The per-guest reads on `concurrency` threads; lines printed in listing order.
/// Returns the number of requests sent.
fn gather(
    cfg: &Config,
    client: &Client,
    items: &[Item],
    resources: &HashMap<u64, Value>,
    concurrency: u64,
    out: &mut dyn Write,
) -> Result<usize, String> {
    let workers = (concurrency as usize).clamp(1, items.len().max(1));
    let next = AtomicUsize::new(0);
    let sent = AtomicUsize::new(0);
    let (tx, rx) = mpsc::channel::<(usize, Result<Vec<Value>, String>)>();
    std::thread::scope(|scope| -> Result<(), String> {
        for _ in 0..workers {
            let tx = tx.clone();
            let (next, sent) = (&next, &sent);
            let forked = client.fork();
            scope.spawn(move || {
                let worker = match forked {
                    Ok(c) => c,
                    Err(e) => {
                        let _ = tx.send((usize::MAX, Err(api_err(e))));
                        return;
                    }
                };
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(item) = items.get(i) else { break };
                    let lines = facts(cfg, &worker, item, resources);
                    if tx.send((i, lines)).is_err() {
                        break;
                    }
                }
                sent.fetch_add(worker.requests_sent() as usize, Ordering::Relaxed);
            });
        }
        drop(tx);
        let mut pending: BTreeMap<usize, Vec<Value>> = BTreeMap::new();
        let mut printed = 0;
        for (i, lines) in rx {
            match lines {
                Ok(lines) => {
                    pending.insert(i, lines);
                }
                Err(msg) => {
                    // Stop the other workers: a fatal error ends the inventory.
                    next.store(usize::MAX / 2, Ordering::Relaxed);
                    return Err(msg);
                }
            }
            while let Some(lines) = pending.remove(&printed) {
                for l in lines {
                    line(out, l)?;
                }
                printed += 1;
            }
        }
        Ok(())
    })?;
    Ok(sent.load(Ordering::Relaxed))
}

/// One guest's lines: warnings, then the guest with its facts. `Err` only for what
/// ends the inventory (credentials no longer accepted).
fn facts(cfg: &Config, client: &Client, item: &Item, resources: &HashMap<u64, Value>) -> Result<Vec<Value>, String> {
    let prefix = cfg.facts_prefix.as_str();
    let base = format!("/nodes/{}/{}/{}", item.node, item.kind, item.vmid);
    let who = format!(
        "{} {} (vmid {} on {})",
        if item.kind == "lxc" { "container" } else { "VM" },
        item.name,
        item.vmid,
        item.node
    );
    let mut v = vars::base(prefix, item);
    let mut lines = Vec::new();
    let mut warn =
        |what: &str, e: &ApiError| lines.push(json!({"warning": format!("{who}: {what}: {}", api_err(e.clone()))}));
    let fatal = |e: &ApiError| e.is_status(401);

    let read = |path: String| client.get(&path, &[]);
    // status/current adds only a running VM's qmpstatus (paused, prelaunch, ...); for the
    // others it repeats the listing's status (a stopped VM's qmpstatus is its status).
    let current = match vars::needs_status_read(item) {
        false => json!({"status": item.status, "qmpstatus": item.status}),
        true => match read(format!("{base}/status/current")) {
            Ok(c) => c,
            Err(e) if fatal(&e) => return Err(api_err(e)),
            Err(e) => {
                warn("its facts could not be read (status/current)", &e);
                lines.push(guest_line(item, v, resources));
                return Ok(lines);
            }
        },
    };
    vars::add_status(prefix, &item.kind, &current, &mut v);
    let running = current.get("status").and_then(Value::as_str) == Some("running");

    let config = match read(format!("{base}/config")) {
        Ok(Value::Object(c)) => c,
        Ok(_) => Map::new(),
        Err(e) if fatal(&e) => return Err(api_err(e)),
        Err(e) => {
            warn("its configuration could not be read; its config facts are missing", &e);
            Map::new()
        }
    };
    let mut interfaces: Option<Value> = None;
    let mut agent = None;
    if item.kind == "qemu" && running && config.get("agent").is_some_and(vars::agent_enabled) {
        match read(format!("{base}/agent/network-get-interfaces")) {
            Ok(answer) => {
                let result = answer.get("result").cloned().unwrap_or(Value::Null);
                agent = Some(vars::agent_interfaces(&result));
                interfaces = Some(result);
            }
            Err(e) if fatal(&e) => return Err(api_err(e)),
            Err(e) if e.is_status(403) => warn(
                "its guest agent's interfaces cannot be read without the VM.GuestAgent.Audit privilege (PVE 9; VM.Monitor before); no proxmox_agent_interfaces or addresses",
                &e,
            ),
            Err(e) => warn("its QEMU guest agent did not answer; no proxmox_agent_interfaces or addresses", &e),
        }
    }
    vars::add_config(prefix, &config, agent, &mut v);

    match read(format!("{base}/snapshot")) {
        Ok(list) => {
            v.insert(vars::fact(prefix, "snapshots"), Value::Array(vars::snapshots(&list)));
        }
        Err(e) if fatal(&e) => return Err(api_err(e)),
        Err(e) => warn("its snapshots could not be read", &e),
    }

    if item.kind == "lxc" && running {
        match read(format!("{base}/interfaces")) {
            Ok(list) => {
                let ifaces = vars::lxc_interfaces(&list);
                if !ifaces.is_empty() {
                    v.insert(vars::fact(prefix, "lxc_interfaces"), Value::Array(ifaces));
                }
                interfaces = Some(vars::lxc_as_agent(&list));
            }
            Err(e) if e.is_status(501) => {}
            Err(e) if fatal(&e) => return Err(api_err(e)),
            Err(e) => warn(
                "its interfaces could not be read; no proxmox_lxc_interfaces or addresses",
                &e,
            ),
        }
    }
    if let Some(interfaces) = interfaces {
        vars::add_addresses(prefix, &config, &interfaces, &mut v);
    }
    lines.push(guest_line(item, v, resources));
    Ok(lines)
}
