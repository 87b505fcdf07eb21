//! What proxmox_vm_info reads, in as few calls as the request allows:
//! `/nodes` only when `node` is given, one `/cluster/resources?type=vm` (unfiltered when
//! the lookup by name seeds the run's name index: the same guests, with the nodes and
//! storages the index keeps), then per node
//! that holds kept guests either the one guest's `status/current` (a node holding a
//! single kept guest: the answer does not grow with the node) or the node's guest
//! listing, and per-guest calls only for `config` and `network`. Listings are decoded
//! as they arrive, keeping only the entries of kept guests.

use ferrox_ansible::options::Params;
use ferrox_ansible::protocol::Failure;
use ferrox_cluster::listing_probe::NameProbe;
use ferrox_pve_client::client::{ApiError, ApiErrorKind, Client};
use ferrox_run::name_index::Seed;
use serde_json::{Map, Value};
use std::time::Instant;

/// The two guest types, in the order 1.6 lists them for `type: all`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GuestKind {
    Qemu,
    Lxc,
}

impl GuestKind {
    /// From the listing's `type` field.
    pub(crate) fn from_type(kind: &str) -> Option<GuestKind> {
        match kind {
            "qemu" => Some(GuestKind::Qemu),
            "lxc" => Some(GuestKind::Lxc),
            _ => None,
        }
    }

    /// The path segment and the `type` field (`qemu`, `lxc`).
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            GuestKind::Qemu => "qemu",
            GuestKind::Lxc => "lxc",
        }
    }
    /// As 1.6 names it in error messages.
    fn label(self) -> &'static str {
        match self {
            GuestKind::Qemu => "QEMU",
            GuestKind::Lxc => "LXC",
        }
    }
    fn noun(self) -> &'static str {
        match self {
            GuestKind::Qemu => "VM",
            GuestKind::Lxc => "container",
        }
    }
}

/// Which configuration to attach.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ConfigView {
    None,
    /// `current=1`: the configuration in effect.
    Current,
    /// `current=0`: pending changes applied.
    Pending,
}

/// The task's filters and extras, typed.
#[derive(Debug, Clone)]
pub(crate) struct Filters {
    pub node: Option<String>,
    pub kinds: Vec<GuestKind>,
    /// `None` for no filter (also when the task says 0, as 1.6).
    pub vmid: Option<i64>,
    pub name: Option<String>,
    pub config: ConfigView,
    pub network: bool,
}

impl Filters {
    pub(crate) fn from_params(p: &Params) -> Result<Filters, Failure> {
        let kinds = match p.str("type").unwrap_or("all") {
            "qemu" => vec![GuestKind::Qemu],
            "lxc" => vec![GuestKind::Lxc],
            _ => vec![GuestKind::Qemu, GuestKind::Lxc],
        };
        let config = match p.str("config").unwrap_or("none") {
            "current" => ConfigView::Current,
            "pending" => ConfigView::Pending,
            _ => ConfigView::None,
        };
        Ok(Filters {
            node: p.str("node").map(str::to_string),
            kinds,
            vmid: p.int("vmid").filter(|v| *v != 0),
            name: p.str("name").map(str::to_string),
            config,
            network: p.flag("network"),
        })
    }

    fn keeps(&self, kind: GuestKind, entry: &Map<String, Value>) -> bool {
        entry.get("type").and_then(Value::as_str) == Some(kind.as_str())
            && self
                .node
                .as_deref()
                .is_none_or(|n| entry.get("node").and_then(Value::as_str) == Some(n))
            && self.vmid.is_none_or(|v| vmid_of(entry) == Some(v))
            && self
                .name
                .as_deref()
                .is_none_or(|n| match entry.get("name").and_then(Value::as_str) {
                    Some(name) => name == n,
                    // Listed before its node's status broadcast named it: the node's own
                    // listing, read next, names it ([`Filters::named`]).
                    None => true,
                })
    }

    /// The name filter on a guest whose node's listing was merged in.
    fn named(&self, guest: &Map<String, Value>) -> bool {
        self.name
            .as_deref()
            .is_none_or(|n| guest.get("name").and_then(Value::as_str) == Some(n))
    }
}

/// The guests found, sorted by vmid, and what could not be read.
#[derive(Debug, Default)]
pub(crate) struct Found {
    pub guests: Vec<Value>,
    pub warnings: Vec<String>,
    /// With `seeding`, the index the listing gave ([`Seed::index`]) and when it was
    /// read; none when the index told the guests.
    pub seeded: Option<(Value, Instant)>,
}

/// The listing's entries the task keeps, and with `seeding` the index it gives.
struct Listed {
    kept: Vec<Map<String, Value>>,
    seed: Option<Seed>,
}

/// Fails, in 1.6's words, when the task names a node the cluster does not have.
pub(crate) fn check_node(client: &Client, f: &Filters) -> Result<(), Failure> {
    if let Some(node) = &f.node {
        let nodes = client
            .get("/nodes", &[])
            .map_err(|e| Failure::new(format!("Unable to retrieve Proxmox VE node: {e}")))?;
        let exists = nodes
            .as_array()
            .is_some_and(|list| list.iter().any(|n| n["node"].as_str() == Some(node)));
        if !exists {
            return Err(Failure::new(format!("Node {node} doesn't exist in PVE cluster")));
        }
    }
    Ok(())
}

/// The guests the task asks for, from the cluster's listing. `seeding`: the run keeps an
/// index (the key of this cluster's): the listing refreshes it.
pub(crate) fn listed(client: &Client, f: &Filters, seeding: Option<&str>) -> Result<Found, Failure> {
    // An entry that cannot carry the name is skipped unread; of the others the filter
    // fields are decoded first, and the whole entry only when it is kept.
    let probe = NameProbe::new(f.name.as_deref());
    let add = |listed: &mut Listed, json: &[u8]| -> Result<(), serde_json::Error> {
        if let Some(seed) = &mut listed.seed {
            seed.add(json)?;
        }
        if !probe.may_match(json) {
            return Ok(());
        }
        let head: Map<String, Value> = serde_json::from_slice::<Head>(json)?.into_map();
        if f.kinds.iter().any(|&k| f.keeps(k, &head)) {
            listed.kept.push(serde_json::from_slice(json)?);
        }
        Ok(())
    };
    let start = || Listed {
        kept: Vec::new(),
        seed: seeding.map(|_| Seed::default()),
    };
    // Unfiltered, the listing holds the same guests, in the same order.
    let vm_only = [("type", "vm".to_string())];
    let query = if seeding.is_some() { &[][..] } else { &vm_only[..] };
    let listed_at = Instant::now();
    let listed = client
        .get_list("/cluster/resources", query, &start, &add)
        .map_err(|e| {
            Failure::new(format!(
                "Failed to retrieve VMs information from cluster resources: {e}"
            ))
        })?;
    let resources = listed.kept;

    let mut found = Found {
        seeded: seeding.zip(listed.seed).map(|(key, seed)| (seed.index(key), listed_at)),
        ..Found::default()
    };
    for &kind in &f.kinds {
        let kept: Vec<&Map<String, Value>> = resources.iter().filter(|e| f.keeps(kind, e)).collect();
        for node in distinct_nodes(&kept) {
            let on_node: Vec<&Map<String, Value>> = kept
                .iter()
                .copied()
                .filter(|e| e.get("node").and_then(Value::as_str) == Some(node.as_str()))
                .collect();
            let mut reader = NodeReader::new(client, kind, &node, &mut found.warnings);
            let vmids: Vec<i64> = on_node.iter().filter_map(|e| vmid_of(e)).collect();
            let listing = match vmids.as_slice() {
                [one] => reader.one_status(*one)?.into_iter().collect(),
                _ => reader.listing(&vmids)?,
            };
            for entry in on_node {
                let mut guest = entry.clone();
                if let Some(listed) = listing.iter().find(|l| vmid_of(l) == vmid_of(&guest)) {
                    guest.extend(listed.clone());
                }
                if !f.named(&guest) {
                    continue;
                }
                normalise(&mut guest);
                reader.extras(&mut guest, f)?;
                found.guests.push(Value::Object(guest));
            }
        }
    }
    found.guests.sort_by_key(|g| g["vmid"].as_i64().unwrap_or(i64::MAX));
    Ok(found)
}

/// What `status/current` adds to a guest's entry of its node's listing: the answers of
/// `vmstatus` with `full` (QEMU monitor queries) and of the status call itself. Left
/// out, the one-guest answer gives the keys the listing gives, as 1.6 returned them.
pub(crate) fn status_only_keys(kind: GuestKind) -> &'static [&'static str] {
    match kind {
        GuestKind::Qemu => &[
            "ha",
            "agent",
            "spice",
            "clipboard",
            "qmpstatus",
            "running-machine",
            "running-qemu",
            "proxmox-support",
            "blockstat",
            "nics",
            "balloon",
            "freemem",
            "ballooninfo",
        ],
        GuestKind::Lxc => &["ha"],
    }
}

/// Calls about the guests of one node; once the node proves unreachable, no more
/// calls go to it and one warning says so.
pub(crate) struct NodeReader<'a> {
    client: &'a Client,
    kind: GuestKind,
    node: &'a str,
    reachable: bool,
    warnings: &'a mut Vec<String>,
}

impl<'a> NodeReader<'a> {
    pub(crate) fn new(
        client: &'a Client,
        kind: GuestKind,
        node: &'a str,
        warnings: &'a mut Vec<String>,
    ) -> NodeReader<'a> {
        NodeReader {
            client,
            kind,
            node,
            reachable: true,
            warnings,
        }
    }

    /// The entries of `vmids` in the node's guest listing (`GET /nodes/{node}/{type}`);
    /// empty when unreachable.
    fn listing(&mut self, vmids: &[i64]) -> Result<Vec<Map<String, Value>>, Failure> {
        let add = |kept: &mut Vec<Map<String, Value>>, json: &[u8]| -> Result<(), serde_json::Error> {
            if vmid_of(&serde_json::from_slice::<Head>(json)?.into_map()).is_some_and(|v| vmids.contains(&v)) {
                kept.push(serde_json::from_slice(json)?);
            }
            Ok(())
        };
        match self.client.get_list(
            &format!("/nodes/{}/{}", self.node, self.kind.as_str()),
            &[],
            &Vec::new,
            &add,
        ) {
            Ok(kept) => Ok(kept),
            Err(e) => {
                self.unreachable_or_fail(e)?;
                Ok(Vec::new())
            }
        }
    }

    /// One guest's entry as its node's listing gives it, from `status/current`; none when
    /// the node is unreachable or the guest went away since the cluster listing (as it
    /// would then be missing from the node's listing).
    fn one_status(&mut self, vmid: i64) -> Result<Option<Map<String, Value>>, Failure> {
        let path = format!("/nodes/{}/{}/{vmid}/status/current", self.node, self.kind.as_str());
        match self.client.get(&path, &[]) {
            Ok(Value::Object(mut status)) => {
                for key in status_only_keys(self.kind) {
                    status.remove(*key);
                }
                status.insert("vmid".into(), Value::from(vmid));
                Ok(Some(status))
            }
            Ok(_) => Ok(None),
            Err(e) if e.status == Some(500) && e.message.contains("does not exist") => Ok(None),
            Err(e) => {
                self.unreachable_or_fail(e)?;
                Ok(None)
            }
        }
    }

    /// `config` and `network` of one guest, as asked.
    pub(crate) fn extras(&mut self, guest: &mut Map<String, Value>, f: &Filters) -> Result<(), Failure> {
        let Some(vmid) = vmid_of(guest) else { return Ok(()) };
        let base = format!("/nodes/{}/{}/{vmid}", self.node, self.kind.as_str());
        if f.config != ConfigView::None && self.reachable {
            let current = if f.config == ConfigView::Current { "1" } else { "0" };
            match self
                .client
                .get(&format!("{base}/config"), &[("current", current.to_string())])
            {
                Ok(config) => {
                    if f.config == ConfigView::Current {
                        self.cloud_init_pending(guest, &config, vmid)?;
                    }
                    guest.insert("config".into(), config);
                }
                Err(e) => self.unreachable_or_fail(e)?,
            }
        }
        if f.network && self.reachable {
            self.network(guest, &base, vmid)?;
        }
        Ok(())
    }

    /// A running VM's cloud-init changes its drive lacks (`GET .../cloudinit`): in
    /// effect in the config, not yet in the guest.
    fn cloud_init_pending(&mut self, guest: &mut Map<String, Value>, config: &Value, vmid: i64) -> Result<(), Failure> {
        use ferrox_pve_rules::cloudinit;
        let running = guest.get("status").and_then(Value::as_str) == Some("running");
        let Some(config) = config
            .as_object()
            .filter(|c| self.kind == GuestKind::Qemu && running && cloudinit::config_has_drive(c))
        else {
            return Ok(());
        };
        let hotplug = config.get("hotplug").and_then(Value::as_str);
        if cloudinit::regenerated_at_once(hotplug) {
            return Ok(());
        }
        match ferrox_cluster::cloudinit::read(self.client, self.node, vmid as u32) {
            Ok(state) if !state.waiting.is_empty() => {
                guest.insert("cloudinit_pending".into(), Value::Object(state.waiting));
                Ok(())
            }
            Ok(_) => Ok(()),
            Err(e) => self.unreachable_or_fail(e),
        }
    }

    fn network(&mut self, guest: &mut Map<String, Value>, base: &str, vmid: i64) -> Result<(), Failure> {
        let who = format!("{} {vmid}", self.kind.noun());
        if guest.get(ferrox_dryrun::overlay::PLANNED_KEY) == Some(&Value::Bool(true)) {
            self.warnings.push(format!(
                "No network information for {who}: it exists only in the plan of this check-mode run."
            ));
            return Ok(());
        }
        let status = guest.get("status").and_then(Value::as_str).unwrap_or("unknown");
        if status != "running" {
            self.warnings.push(format!(
                "No network information for {who}: it is not running (status {status})."
            ));
            return Ok(());
        }
        let path = match self.kind {
            GuestKind::Qemu => format!("{base}/agent/network-get-interfaces"),
            GuestKind::Lxc => format!("{base}/interfaces"),
        };
        match self.client.get(&path, &[]) {
            Ok(answer) => {
                let network = match self.kind {
                    GuestKind::Qemu => answer.get("result").cloned().unwrap_or(Value::Null),
                    GuestKind::Lxc => answer,
                };
                if self.kind == GuestKind::Qemu {
                    self.addresses_per_nic(guest, base, &network)?;
                }
                guest.insert("network".into(), network);
                Ok(())
            }
            Err(e) if is_guest_not_answering(&e) => {
                self.warnings.push(format!(
                    "No network information for {who}: {}.",
                    e.message.trim_end_matches('.')
                ));
                Ok(())
            }
            Err(e) if e.status == Some(403) => {
                self.warnings.push(format!(
                    "No network information for {who}: {}.",
                    refused(&e.message, self.kind)
                ));
                Ok(())
            }
            Err(e) => self.unreachable_or_fail(e),
        }
    }

    /// `ip_addresses`: the agent's usable addresses per `netN`, by MAC; the config read
    /// for `config` when there is one, else the config in effect.
    fn addresses_per_nic(
        &mut self,
        guest: &mut Map<String, Value>,
        base: &str,
        network: &Value,
    ) -> Result<(), Failure> {
        let config = match guest.get("config").and_then(Value::as_object) {
            Some(c) => c.clone(),
            None => match self
                .client
                .get(&format!("{base}/config"), &[("current", "1".to_string())])
            {
                Ok(c) => c.as_object().cloned().unwrap_or_default(),
                Err(e) => return self.unreachable_or_fail(e),
            },
        };
        let addresses = ferrox_cluster::guest_net::Addresses::read(&config, network);
        guest.insert("ip_addresses".into(), addresses.to_value());
        Ok(())
    }

    /// An unreachable node becomes a warning (once); anything else fails as in 1.6.
    fn unreachable_or_fail(&mut self, e: ApiError) -> Result<(), Failure> {
        if !is_unreachable(&e) {
            return Err(Failure::new(format!(
                "Failed to retrieve {} VMs information: {e}",
                self.kind.label()
            )));
        }
        if self.reachable {
            self.reachable = false;
            self.warnings.push(format!(
                "Node {} is unreachable ({e}): its {} guests are listed with the cluster's last known status only.",
                self.node,
                self.kind.label()
            ));
        }
        Ok(())
    }
}

/// PVE's answers for a node it cannot reach (595 connection, 596 TLS), or our own
/// connection failing mid-run.
fn is_unreachable(e: &ApiError) -> bool {
    matches!(
        e.kind,
        ApiErrorKind::Connect | ApiErrorKind::Timeout | ApiErrorKind::Dropped
    ) || matches!(e.status, Some(595 | 596))
}

/// Why PVE refused the agent read, from its own answer, so the privilege named follows the
/// PVE version (9.0: `VM.GuestAgent.Audit`; 8: `VM.Monitor`): `API token x lacks
/// VM.GuestAgent.Audit or VM.GuestAgent.Unrestricted on /vms/101, which Proxmox VE requires
/// to read the guest agent`.
fn refused(message: &str, kind: GuestKind) -> String {
    let read = match kind {
        GuestKind::Qemu => "read the guest agent",
        GuestKind::Lxc => "read the container's interfaces",
    };
    let named = message.strip_prefix("Permission check failed (").and_then(|rest| {
        let (inside, after) = rest.split_once(')')?;
        let (path, privs) = inside.split_once(", ")?;
        let who = after
            .strip_prefix(" - ")
            .and_then(|w| w.strip_suffix(" lacks this privilege"))
            .unwrap_or("the caller");
        Some(format!(
            "{who} lacks {} on {path}, which Proxmox VE requires to {read}",
            privs.replace('|', " or ")
        ))
    });
    named.unwrap_or_else(|| format!("Proxmox VE refused to {read} ({})", message.trim_end_matches('.')))
}

/// The guest cannot answer: no agent configured, agent not running, guest stopped.
fn is_guest_not_answering(e: &ApiError) -> bool {
    e.status == Some(500) && {
        let m = e.message.to_ascii_lowercase();
        m.contains("agent") || m.contains("not running")
    }
}

fn distinct_nodes(entries: &[&Map<String, Value>]) -> Vec<String> {
    let mut nodes: Vec<String> = Vec::new();
    for e in entries {
        if let Some(n) = e.get("node").and_then(Value::as_str) {
            if !nodes.iter().any(|x| x == n) {
                nodes.push(n.to_string());
            }
        }
    }
    nodes
}

/// The fields a listing entry is filtered on, decoded before (and without) the rest.
#[derive(serde::Deserialize)]
struct Head {
    #[serde(rename = "type", default)]
    kind: Value,
    #[serde(default)]
    node: Value,
    #[serde(default)]
    vmid: Value,
    #[serde(default)]
    name: Value,
}

impl Head {
    fn into_map(self) -> Map<String, Value> {
        [
            ("type", self.kind),
            ("node", self.node),
            ("vmid", self.vmid),
            ("name", self.name),
        ]
        .into_iter()
        .filter(|(_, v)| !v.is_null())
        .map(|(k, v)| (k.to_string(), v))
        .collect()
    }
}

/// The vmid as an integer, whether PVE sent a number or a string.
fn vmid_of(entry: &Map<String, Value>) -> Option<i64> {
    match entry.get("vmid")? {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// `vmid` as an integer and `template` as a boolean, for every guest.
pub(crate) fn normalise(guest: &mut Map<String, Value>) {
    if let Some(v) = vmid_of(guest) {
        guest.insert("vmid".into(), Value::from(v));
    }
    let template = match guest.get("template") {
        Some(Value::Number(n)) => n.as_i64() == Some(1),
        Some(Value::String(s)) => s == "1",
        Some(Value::Bool(b)) => *b,
        _ => false,
    };
    guest.insert("template".into(), Value::Bool(template));
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    fn filters() -> Filters {
        Filters {
            node: None,
            kinds: vec![GuestKind::Qemu, GuestKind::Lxc],
            vmid: None,
            name: None,
            config: ConfigView::None,
            network: false,
        }
    }

    #[test]
    fn filters_match_type_node_vmid_and_exact_name() {
        let vm = obj(json!({"type": "qemu", "vmid": 100, "node": "pve1", "name": "web"}));
        let mut f = filters();
        assert!(f.keeps(GuestKind::Qemu, &vm));
        assert!(!f.keeps(GuestKind::Lxc, &vm));
        f.vmid = Some(100);
        f.node = Some("pve1".into());
        f.name = Some("web".into());
        assert!(f.keeps(GuestKind::Qemu, &vm));
        f.name = Some("Web".into());
        assert!(!f.keeps(GuestKind::Qemu, &vm));
        f.name = Some(String::new());
        assert!(
            !f.keeps(GuestKind::Qemu, &vm),
            "an empty name filter matches only empty names"
        );
        f.name = None;
        f.vmid = Some(101);
        assert!(!f.keeps(GuestKind::Qemu, &vm));
    }

    #[test]
    fn vmid_from_string_and_template_as_bool() {
        let mut g = obj(json!({"vmid": "9000", "template": 1}));
        normalise(&mut g);
        assert_eq!(g["vmid"], json!(9000));
        assert_eq!(g["template"], json!(true));
        let mut g = obj(json!({"vmid": 100}));
        normalise(&mut g);
        assert_eq!(g["template"], json!(false));
    }

    #[test]
    fn unreachable_means_595_596_or_transport() {
        let e = |kind, status| ApiError {
            kind,
            status,
            message: "x".into(),
            errors: None,
        };
        assert!(is_unreachable(&e(ApiErrorKind::Http, Some(595))));
        assert!(is_unreachable(&e(ApiErrorKind::Http, Some(596))));
        assert!(is_unreachable(&e(ApiErrorKind::Connect, None)));
        assert!(!is_unreachable(&e(ApiErrorKind::Http, Some(500))));
        assert!(!is_unreachable(&e(ApiErrorKind::Http, Some(403))));
    }

    #[test]
    fn an_agent_read_refused_names_the_privilege_pve_asked_for() {
        let pve9 = "Permission check failed (/vms/101, VM.GuestAgent.Audit|VM.GuestAgent.Unrestricted) - API token ops@pve!t lacks this privilege";
        assert_eq!(
            refused(pve9, GuestKind::Qemu),
            "API token ops@pve!t lacks VM.GuestAgent.Audit or VM.GuestAgent.Unrestricted on /vms/101, which Proxmox VE requires to read the guest agent"
        );
        assert!(
            refused("Permission check failed (/vms/101, VM.Monitor)", GuestKind::Qemu)
                .starts_with("the caller lacks VM.Monitor on /vms/101")
        );
        assert_eq!(
            refused("Permission check failed", GuestKind::Qemu),
            "Proxmox VE refused to read the guest agent (Permission check failed)"
        );
    }

    #[test]
    fn agent_errors_are_recognised() {
        let e = |m: &str| ApiError {
            kind: ApiErrorKind::Http,
            status: Some(500),
            message: m.into(),
            errors: None,
        };
        assert!(is_guest_not_answering(&e("QEMU guest agent is not running")));
        assert!(is_guest_not_answering(&e("No QEMU guest agent configured")));
        assert!(is_guest_not_answering(&e("VM 100 is not running")));
        assert!(!is_guest_not_answering(&e("Configuration file does not exist")));
    }
}
