//! The run's index of VM names: a task that names its VM by `name` finds it without
//! listing the whole cluster, when an earlier task of the same `ansible-playbook` run
//! listed it recently.
//!
//! The action plugin keeps the index in the run's temp dir (`plugin_utils/name_index.py`)
//! and hands a task only what it needs ([`NAMES_ARG`]): for each cluster it holds, the
//! index's age, the nodes and storages of that listing, and the guests it listed with the
//! task's name. A task whose VM is there once, on an online node, in an index younger
//! than its maximum age, confirms it with one read of that VM
//! (`GET /nodes/{node}/qemu/{vmid}/status/current`, which names it from its config and
//! gives its status, lock and template; proxmox_vm_info reads each guest of the name so).
//! Whatever does not confirm — the VM renamed, moved or removed, the name absent or held
//! by several VMs, the node offline, the index too old — is looked up in a fresh listing,
//! which the task returns ([`NAMES_KEY`]) to refresh the index.
//!
//! What stays as old as the index: the nodes and storages, and whether another VM took
//! the same name since (the duplicate check). Creates and clones never use the index; the
//! listing a create or clone waits on until it shows the new VM refreshes it.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{json, Value};

use crate::SharedRunState;
use ferrox_ansible::protocol::Module;
use ferrox_cluster::listing_probe::LookupTargets;
use ferrox_cluster::vm::{self, Cluster, Guest, GuestType, Listing, ListingQuery, Node, Storage};
use ferrox_pve_client::client::{ApiError, Client};
use ferrox_pve_client::connection::ConnectionParams;

/// The note of the docs of a module that looks a guest up through the index, by its
/// option `by` (`name`, or `hostname` in the snapshot modules).
pub fn doc_note(by: &str) -> String {
    format!("A guest looked up by O({by}) alone (no O(vmid)) that an earlier task of the same C(ansible-playbook) run listed is found through the run's name index: one C(GET /nodes/{{node}}/{{type}}/{{vmid}}/status/current) confirms it (its name, its node) instead of a C(GET /cluster/resources) of the whole cluster. A guest renamed, moved or removed since, a name the index lacks (or, for one VM, holds twice), and an index older than its maximum age ({DEFAULT_MAX_AGE_SECS} seconds; C({MAX_AGE_ENV}) in the controller's environment sets it, V(0) turns the index off) are looked up in a fresh listing; the listings of every module with this note refresh the index. Within that age a guest another tool gave the same name is not seen; creates, clones, migrations, removals and pool moves always list.")
}

/// The controller's environment variable that sets how long an index is trusted
/// (seconds; `0` turns it off), read by the action plugin (`plugins/plugin_utils/_wire.py`).
pub const MAX_AGE_ENV: &str = "FERROX_NAME_INDEX_MAX_AGE";
/// How long an index is trusted when [`MAX_AGE_ENV`] is not set.
pub const DEFAULT_MAX_AGE_SECS: u32 = 60;

/// The module argument the action plugin hands the index in.
pub const NAMES_ARG: &str = "_ferrox_names";
/// The result key a task returns a refreshed index in, with the listing's `age` in
/// seconds (removed by the action plugin).
pub const NAMES_KEY: &str = "_ferrox_names";

/// What the action plugin hands a task: the index is on, and what it holds for the name.
#[derive(Debug, Clone, Deserialize)]
pub struct HandedIndex {
    /// Seconds an index is trusted after its listing.
    pub max_age: f64,
    /// By cluster ([`cluster_key`]).
    #[serde(default)]
    pub clusters: BTreeMap<String, ClusterIndex>,
}

/// One cluster's index, narrowed to the task's name.
#[derive(Debug, Clone, Deserialize)]
pub struct ClusterIndex {
    /// Seconds since the listing.
    pub age: f64,
    /// The cluster's nodes, as that listing had them.
    pub nodes: Vec<Node>,
    /// The cluster's storages, as that listing had them.
    pub storages: Vec<Storage>,
    /// The guests of that listing with the task's name.
    pub guests: Vec<IndexedGuest>,
}

/// A guest as the index holds it: `[vmid, node, type, pool]` on the wire (compact: the
/// index of a large cluster is read by every task; [`refreshed`] writes it).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(from = "(u32, String, String, Option<String>)")]
pub struct IndexedGuest {
    /// Its vmid.
    pub vmid: u32,
    /// The node it was listed on (confirmed by the task's one status read).
    pub node: String,
    /// `qemu` or `lxc`, as the listing's `type`.
    pub kind: String,
    /// As listed to the caller (only with `Pool.Audit` on the pool).
    pub pool: Option<String>,
}

impl From<(u32, String, String, Option<String>)> for IndexedGuest {
    fn from((vmid, node, kind, pool): (u32, String, String, Option<String>)) -> IndexedGuest {
        IndexedGuest { vmid, node, kind, pool }
    }
}

/// Which index is a connection's: one per API endpoint and identity, since what a
/// listing shows depends on who asks; in local mode one per node the task runs on. Names no secret.
pub fn cluster_key(conn: &ConnectionParams) -> String {
    if conn.host.is_empty() {
        // Local mode: the node the task runs on (each may be a cluster of its own).
        return format!("{}@pvesh:{}", conn.user, crate::local_mode::node_name());
    }
    let port = conn.port.map(|p| format!(":{p}")).unwrap_or_default();
    let token = conn.token_id.as_deref().map(|t| format!("!{t}")).unwrap_or_default();
    format!("{}{token}@{}{port}", conn.user, conn.host)
}

impl HandedIndex {
    /// Reads [`NAMES_ARG`]; `None` when it is absent or unreadable (the index is only a
    /// shortcut: without it, the task lists the cluster as always).
    pub fn from_value(value: &Value) -> Option<HandedIndex> {
        serde_json::from_value(value.clone()).ok()
    }

    /// This cluster's index when it is younger than the maximum age.
    pub fn fresh(&self, key: &str) -> Option<&ClusterIndex> {
        self.clusters.get(key).filter(|c| c.age >= 0.0 && c.age <= self.max_age)
    }

    /// The QEMU VM named `name`, confirmed by one read of it: the cluster as a listing
    /// would give it for this lookup (that VM, the nodes and storages). `None`: not
    /// confirmed.
    pub fn confirmed(&self, client: &Client, key: &str, name: &str) -> Option<Cluster> {
        let indexed = self.fresh(key)?;
        let qemu: Vec<&IndexedGuest> = indexed.guests.iter().filter(|g| g.kind == "qemu").collect();
        let [vm] = qemu.as_slice() else {
            return None;
        };
        let status = indexed.confirm(client, vm, name)?;
        let text = |k: &str| {
            status
                .get(k)
                .and_then(Value::as_str)
                .filter(|t| !t.is_empty())
                .map(str::to_string)
        };
        let guest = Guest {
            vmid: vm.vmid,
            node: vm.node.as_str().into(),
            kind: GuestType::Qemu,
            name: Some(name.to_string()),
            status: text("status").map(|s| s.as_str().into()),
            template: matches!(status.get("template"), Some(t) if t == 1 || t == "1" || t == true),
            lock: text("lock"),
            pool: vm.pool.clone(),
            hastate: None,
        };
        let mut cluster = Cluster::default();
        cluster.guests.push(guest);
        cluster.nodes.clone_from(&indexed.nodes);
        cluster.storages.clone_from(&indexed.storages);
        Some(cluster)
    }
}

impl ClusterIndex {
    /// The guest's `status/current`, when it is there on the indexed node (online in the
    /// listing) and still carries `name` (PVE names it from its config); else `None`.
    pub fn confirm(&self, client: &Client, guest: &IndexedGuest, name: &str) -> Option<serde_json::Map<String, Value>> {
        if !self.nodes.iter().any(|n| n.name == guest.node && n.status == "online") {
            return None;
        }
        let path = format!("/nodes/{}/{}/{}/status/current", guest.node, guest.kind, guest.vmid);
        match client.get(&path, &[]).ok()? {
            Value::Object(status) if status.get("name").and_then(Value::as_str) == Some(name) => Some(status),
            _ => None,
        }
    }
}

/// The listing `query` asks for ([`vm::read`]), through the run's index: when the query
/// seeks a name alone ([`ListingQuery::name_alone`]) and the index confirms its VM, that
/// VM with the index's nodes and storages (one status read, no listing, no load); else
/// one listing, which refreshes the index when the run keeps one (the listing then keeps
/// every other guest's name and node, in [`Cluster::unsought`]:
/// [`ListingQuery::with_others_placed`]).
pub fn read(
    m: &mut Module,
    client: &Client,
    conn: &ConnectionParams,
    query: &ListingQuery,
) -> Result<Listing, ApiError> {
    let key = cluster_key(conn);
    let Some(index) = m.name_index() else {
        return vm::read(client, query);
    };
    if let Some(cluster) = query.name_alone().and_then(|name| index.confirmed(client, &key, name)) {
        return Ok(Listing { cluster, load: None });
    }
    let listed_at = std::time::Instant::now();
    let listing = vm::read(client, &query.with_others_placed())?;
    m.refresh_name_index(refreshed(&key, &listing.cluster), listed_at);
    Ok(listing)
}

/// The index a listing made for another purpose gives, built entry by entry as the
/// listing arrives ([`Seed::add`]): proxmox_vm_info's own listing, read unfiltered when
/// the run keeps an index, so that its nodes and storages come in the same request. Every
/// plain guest entry is read from its text (vmid, name, node, pool, type, as
/// [`vm::read`] reads the guests a query with
/// [`ListingQuery::with_others_placed`] does not seek); the rest (nodes, storages,
/// an entry only decoding can tell) is decoded.
pub struct Seed {
    plain: LookupTargets,
    cluster: Cluster,
}

impl Default for Seed {
    fn default() -> Seed {
        Seed {
            plain: LookupTargets::nothing(),
            cluster: Cluster::default(),
        }
    }
}

impl Seed {
    /// One entry of an unfiltered `/cluster/resources`, as JSON text.
    pub fn add(&mut self, json: &[u8]) -> Result<(), serde_json::Error> {
        if !self.plain.may_need(json, false) {
            if let Some(thin) = self.plain.unsought(json, true) {
                self.cluster.unsought.push(thin);
                return Ok(());
            }
        }
        // Few: the nodes and storages, and the rare guest entry not in PVE's flat shape.
        let entry: Value = serde_json::from_slice(json)?;
        let one = Cluster::deserialize(&Value::Array(vec![entry]))?;
        self.cluster.guests.extend(one.guests);
        self.cluster.nodes.extend(one.nodes);
        self.cluster.storages.extend(one.storages);
        Ok(())
    }

    /// The index, as [`refreshed`] gives it for this cluster ([`cluster_key`]).
    pub fn index(&self, key: &str) -> Value {
        refreshed(key, &self.cluster)
    }
}

/// The index a fresh listing gives, as the task returns it ([`NAMES_KEY`]): its nodes,
/// storages, and every named guest by name (from the decoded guests and the unsought ones).
pub fn refreshed(key: &str, cluster: &Cluster) -> Value {
    // Built as JSON directly: thousands of entries, each as IndexedGuest's wire form.
    let entry = |vmid: u32, node: &str, qemu: bool, pool: Option<&String>| {
        let kind = if qemu { "qemu" } else { "lxc" };
        Value::Array(vec![
            vmid.into(),
            node.into(),
            kind.into(),
            pool.map_or(Value::Null, |p| p.as_str().into()),
        ])
    };
    let mut names: BTreeMap<&str, Vec<Value>> = BTreeMap::new();
    for g in &cluster.guests {
        if let Some(name) = &g.name {
            names
                .entry(name)
                .or_default()
                .push(entry(g.vmid, &g.node, g.kind == GuestType::Qemu, g.pool.as_ref()));
        }
    }
    for u in &cluster.unsought {
        if let (Some(name), Some(at)) = (&u.name, &u.place) {
            names
                .entry(name)
                .or_default()
                .push(entry(u.vmid, &at.node, at.qemu, at.pool.as_ref()));
        }
    }
    let names: serde_json::Map<String, Value> = names
        .into_iter()
        .map(|(name, guests)| (name.to_string(), Value::Array(guests)))
        .collect();
    // `names` moved in, not serialised again as json! would.
    let mut index = json!({"cluster": key, "nodes": cluster.nodes, "storages": cluster.storages});
    index["names"] = Value::Object(names);
    index
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_doc_note_names_the_setting_and_its_default() {
        let note = super::doc_note("hostname");
        assert!(note.starts_with("A guest looked up by O(hostname) alone"), "{note}");
        assert!(note.contains(&format!("C({})", super::MAX_AGE_ENV)), "{note}");
        assert!(
            note.contains(&format!("({} seconds;", super::DEFAULT_MAX_AGE_SECS)),
            "{note}"
        );
    }

    use super::*;
    use ferrox_cluster::listing_probe::{OtherGuest, Place};

    fn conn(token: Option<&str>) -> ConnectionParams {
        ConnectionParams {
            host: "pve.example".into(),
            port: Some(8006),
            user: "ansible@pve".into(),
            token_id: token.map(str::to_string),
            ..Default::default()
        }
    }

    #[test]
    fn the_key_names_endpoint_and_identity_without_secrets() {
        let mut with_token = conn(Some("automation"));
        with_token.token_secret = Some("s3cret".into());
        assert_eq!(cluster_key(&with_token), "ansible@pve!automation@pve.example:8006");
        let mut with_password = conn(None);
        with_password.password = Some("s3cret".into());
        assert_eq!(cluster_key(&with_password), "ansible@pve@pve.example:8006");
        // Local mode: this node, as root@pam; never an HTTPS endpoint's key.
        let local = ConnectionParams {
            user: "root@pam".into(),
            ..ConnectionParams::default()
        };
        assert_eq!(
            cluster_key(&local),
            format!("root@pam@pvesh:{}", crate::local_mode::node_name())
        );
        assert!(!crate::local_mode::node_name().contains('.'));
    }

    #[test]
    fn the_given_index_is_read_and_anything_else_is_ignored() {
        let given = HandedIndex::from_value(
            &json!({"max_age": 60, "clusters": {"old": {"age": 61, "nodes": [], "storages": [], "guests": []}, "k": {
            "age": 3.5, "nodes": [{"name": "pve1", "status": "online"}],
            "storages": [{"storage": "local-lvm", "node": "pve1", "content": ["images"], "shared": false}],
            "guests": [[101, "pve1", "qemu", null]]}}}),
        )
        .unwrap();
        let web = IndexedGuest {
            vmid: 101,
            node: "pve1".into(),
            kind: "qemu".into(),
            pool: None,
        };
        assert_eq!(given.clusters["k"].guests, vec![web]);
        assert!(given.fresh("k").is_some(), "younger than the maximum age");
        assert!(given.fresh("old").is_none() && given.fresh("other").is_none());
        assert!(
            HandedIndex::from_value(&json!({"clusters": {}})).is_none(),
            "no max_age: not an index"
        );
        assert!(HandedIndex::from_value(&json!("x")).is_none());
    }

    #[test]
    fn a_seed_indexes_an_unfiltered_listing_as_a_decoded_one_would() {
        let entries = [
            r#"{"id":"qemu/101","type":"qemu","vmid":101,"node":"pve1","name":"web01","pool":"prod","status":"running"}"#,
            r#"{"id":"qemu/102","type":"qemu","vmid":102,"node":"pve2","status":"unknown"}"#,
            r#"{"id":"lxc/200","type":"lxc","vmid":200,"node":"pve2","name":"web01"}"#,
            r#"{"id": "qemu/103", "type": "qemu", "vmid": 103, "node": "pve2", "name": "db0"}"#,
            r#"{"id":"node/pve1","type":"node","node":"pve1","status":"online"}"#,
            r#"{"id":"storage/pve1/local-lvm","type":"storage","node":"pve1","storage":"local-lvm","content":"images,rootdir","shared":0}"#,
            r#"{"id":"pool/prod","type":"pool","pool":"prod"}"#,
        ];
        let mut seed = Seed::default();
        for e in entries {
            seed.add(e.as_bytes()).unwrap();
        }
        let all: Vec<Value> = entries.iter().map(|e| serde_json::from_str(e).unwrap()).collect();
        let decoded = ferrox_cluster::vm::parse_cluster(&Value::Array(all)).unwrap();
        let index = seed.index("k");
        assert_eq!(index, refreshed("k", &decoded));
        assert_eq!(
            index["names"],
            json!({
                "db0": [[103, "pve2", "qemu", null]],
                "web01": [[101, "pve1", "qemu", "prod"], [200, "pve2", "lxc", null]],
            })
        );
        assert_eq!(index["storages"][0]["content"], json!(["images", "rootdir"]));
    }

    #[test]
    fn a_listing_indexes_every_named_qemu_vm_with_its_node() {
        let mut cluster = ferrox_cluster::vm::parse_cluster(&json!([
            {"type": "qemu", "vmid": 101, "node": "pve1", "name": "web01", "pool": "prod"},
            {"type": "qemu", "vmid": 102, "node": "pve2"},
            {"type": "lxc", "vmid": 200, "node": "pve2", "name": "web01"},
            {"type": "node", "node": "pve1", "status": "online"},
        ]))
        .unwrap();
        let thin = |vmid, name: &str, node: &str, qemu| OtherGuest {
            vmid,
            name: Some(name.into()),
            lock: None,
            place: Some(Place {
                node: node.into(),
                pool: None,
                qemu,
            }),
        };
        cluster.unsought = vec![
            thin(103, "web01", "pve2", true),
            thin(104, "db", "pve1", true),
            thin(201, "ct", "pve1", false),
        ];
        let index = refreshed("k", &cluster);
        assert_eq!(index["cluster"], "k");
        assert_eq!(
            index["names"],
            json!({
                "ct": [[201, "pve1", "lxc", null]],
                "db": [[104, "pve1", "qemu", null]],
                "web01": [[101, "pve1", "qemu", "prod"], [200, "pve2", "lxc", null], [103, "pve2", "qemu", null]],
            })
        );
        assert_eq!(index["nodes"], json!([{"name": "pve1", "status": "online"}]));
    }
}
