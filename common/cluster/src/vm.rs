//! Finding a guest: by vmid, or by name over QEMU VMs only (an LXC container with the
//! same name is not a match), and the node that owns it, from one
//! `GET /cluster/resources` ([`read`], as a [`ListingQuery`] asks). Unfiltered, that one
//! call also lists the nodes and each node's storages ([`ListingQuery::whole_cluster`]),
//! so a module needs no `/nodes` or storage listing.

use std::borrow::Cow;
use std::rc::Rc;
use std::time::{Duration, Instant};

use serde::de::{self, Deserializer, IgnoredAny, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;

use crate::flat_json;
use crate::listing_probe::{LookupTargets, OtherGuest};
use crate::load::Load;
use ferrox_pve_client::client::{ApiError, ApiErrorKind, Client};

/// What kind of guest a listing entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GuestType {
    /// A QEMU VM.
    Qemu,
    /// An LXC container.
    Lxc,
}

/// One guest as `/cluster/resources` lists it: only the fields the modules use.
#[derive(Debug, Clone)]
pub struct Guest {
    /// Its vmid.
    pub vmid: u32,
    /// Shared by the guests of a node (a listing of thousands names a few nodes).
    pub node: Rc<str>,
    /// QEMU VM or LXC container.
    pub kind: GuestType,
    /// Absent for a freshly created VM until the node's next status broadcast.
    pub name: Option<String>,
    /// Its power status (`running`, `stopped`), shared like the node's name.
    pub status: Option<Rc<str>>,
    /// Whether it is a template.
    pub template: bool,
    /// The config lock (`backup`, `migrate`, ...), if any.
    pub lock: Option<String>,
    /// The resource pool it is in (listed only to those who may audit the pool).
    pub pool: Option<String>,
    /// The state of its HA resource (`hastate`): listed for every guest with an HA
    /// resource entry, `ignored` included (the HA manager's state, else the configured
    /// one), so in a listing its absence means no entry. (A guest the run's name index
    /// confirms by its status alone has none: a removal always lists.)
    pub hastate: Option<String>,
}

/// A node as `/cluster/resources` lists it (listed whatever the caller's rights).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, Deserialize)]
pub struct Node {
    /// The node's name.
    pub name: String,
    /// `online`, `offline` or `unknown`.
    pub status: String,
}

/// One storage on one node, as `/cluster/resources` lists it: only storages enabled on
/// that node, and only those the caller may audit (`Datastore.Audit`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, Deserialize)]
pub struct Storage {
    /// The storage's id.
    pub storage: String,
    /// The node it is on.
    pub node: String,
    /// Content types (`images`, `iso`, `rootdir`, ...).
    pub content: Vec<String>,
    /// Shared by the nodes (NFS, Ceph, ...): a clone to another node needs one.
    pub shared: bool,
    /// Whether the node reports it active: pve-manager lists a storage the node could
    /// not activate (an NFS server it cannot reach) with `status: unknown` and no sizes
    /// (`extract_storage_stats`), and a disk allocated there fails `storage '<id>' is
    /// not online`. So is every storage of an offline node.
    #[serde(default = "active_by_default")]
    pub active: bool,
}

fn active_by_default() -> bool {
    true
}

impl Storage {
    /// Whether it holds VM disk images (content `images`).
    pub fn holds_images(&self) -> bool {
        self.content.iter().any(|c| c == "images")
    }
}

/// Guests, nodes and storages of the whole cluster.
#[derive(Debug, Clone, Default)]
pub struct Cluster {
    /// The guests listed.
    pub guests: Vec<Guest>,
    /// The nodes listed.
    pub nodes: Vec<Node>,
    /// The storages listed, one entry per node.
    pub storages: Vec<Storage>,
    /// With [`ListingQuery::with_others_thin`]: the guests not sought, by what their
    /// entries state.
    pub unsought: Vec<OtherGuest>,
    texts: Shared,
}

/// The node names and statuses the guests of a listing share: one allocation per
/// distinct text, not one per guest. Bounded: past a few dozen texts, new ones are not
/// kept (a listing's nodes and statuses are few).
#[derive(Clone, Default)]
struct Shared(Vec<Rc<str>>);

impl Shared {
    const KEPT: usize = 64;

    fn text(&mut self, text: &str) -> Rc<str> {
        if let Some(kept) = self.0.iter().find(|t| ***t == *text) {
            return kept.clone();
        }
        let new: Rc<str> = Rc::from(text);
        if self.0.len() < Self::KEPT {
            self.0.push(new.clone());
        }
        new
    }
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("..")
    }
}

impl Cluster {
    /// The names of the cluster's nodes, as listed.
    pub fn node_names(&self) -> Vec<String> {
        self.nodes.iter().map(|n| n.name.clone()).collect()
    }

    /// The storages the caller can see on `node`.
    pub fn storages_on<'a>(&'a self, node: &'a str) -> impl Iterator<Item = &'a Storage> + 'a {
        self.storages.iter().filter(move |s| s.node == node)
    }

    /// One entry of the listing, as JSON text: only the fields used are decoded, by
    /// [`flat_json`] when the entry has PVE's flat shape (thousands of entries per task
    /// on a large cluster), else by serde.
    pub(crate) fn add_json(&mut self, json: &[u8]) -> Result<(), serde_json::Error> {
        match Entry::from_flat(json) {
            Some(entry) => self.add(entry),
            None => self.add(serde_json::from_slice(json)?),
        }
        Ok(())
    }

    fn add(&mut self, entry: Entry<'_>) {
        match entry.kind.as_str() {
            Some("qemu" | "lxc") => self.guests.extend(entry.into_guest(&mut self.texts)),
            Some("node") => {
                if let Some(name) = entry.node.text() {
                    self.nodes.push(Node {
                        name,
                        status: entry.status.text().unwrap_or_default(),
                    });
                }
            }
            Some("storage") => {
                if let (Some(storage), Some(node)) = (entry.storage.text(), entry.node.text()) {
                    let content = entry.content.text().unwrap_or_default();
                    let content = content
                        .split(',')
                        .filter(|c| !c.is_empty())
                        .map(str::to_string)
                        .collect();
                    let shared = matches!(entry.shared, LooseScalar::Int(1) | LooseScalar::Bool(true))
                        || entry.shared.as_str() == Some("1");
                    self.storages.push(Storage {
                        storage,
                        node,
                        content,
                        shared,
                        active: entry.status.as_str() != Some("unknown"),
                    });
                }
            }
            _ => {}
        }
    }
}

/// What one `GET /cluster/resources` is asked for and what is kept of it: the one way
/// this crate lists the cluster ([`read`]). Start from a named case ([`ListingQuery::guests`],
/// [`ListingQuery::whole_cluster`], [`ListingQuery::lookup`]) and narrow it with the
/// builder methods.
#[derive(Clone, Copy)]
pub struct ListingQuery<'a> {
    guests: Guests<'a>,
    nodes_and_storages: bool,
    others: Others,
    name_unbroadcast: bool,
    name_alone: Option<&'a str>,
    load: bool,
}

/// Which guests a listing decodes.
#[derive(Clone, Copy)]
enum Guests<'a> {
    /// Every guest.
    All,
    /// Only those the targets may need; the others as [`Others`] says.
    Only(&'a LookupTargets),
}

/// What a listing keeps of the guests its targets rule out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Others {
    /// Nothing: skipped unread.
    Skipped,
    /// Their vmid, name and lock, in [`Cluster::unsought`].
    Thin,
    /// As `Thin`, with their node, pool and type.
    ThinWithPlace,
}

impl<'a> ListingQuery<'a> {
    /// Every guest, and nothing else: `GET /cluster/resources?type=vm`.
    pub fn guests() -> ListingQuery<'a> {
        ListingQuery {
            guests: Guests::All,
            nodes_and_storages: false,
            others: Others::Skipped,
            name_unbroadcast: false,
            name_alone: None,
            load: false,
        }
    }

    /// Every guest, node and storage: `GET /cluster/resources`, unfiltered.
    pub fn whole_cluster() -> ListingQuery<'a> {
        ListingQuery {
            nodes_and_storages: true,
            ..ListingQuery::guests()
        }
    }

    /// The lookup of one VM by `vmid`, else by `name` (and whatever else `sought` adds):
    /// every node and storage, only the guests `sought` may need. Looked up by name alone,
    /// the guests PVE has not named yet are named from their configs ([`name_unbroadcast`]),
    /// so a VM made moments ago is found; when `sought` seeks that one name and nothing
    /// else, the name is the query's [`ListingQuery::name_alone`].
    pub fn lookup(vmid: Option<u32>, name: Option<&'a str>, sought: &'a LookupTargets) -> ListingQuery<'a> {
        ListingQuery::whole_cluster()
            .only(sought)
            .with_name_unbroadcast(vmid.is_none() && name.is_some())
            .with_name_alone(name.filter(|_| sought.only_one_name()))
    }

    /// Decodes only the guests `sought` may need; the others are ruled out as text,
    /// unread (unless kept thin: [`ListingQuery::with_others_thin`]).
    pub fn only(self, sought: &'a LookupTargets) -> ListingQuery<'a> {
        ListingQuery {
            guests: Guests::Only(sought),
            ..self
        }
    }

    /// With [`ListingQuery::only`]: the vmid, name and lock of every other guest in
    /// [`Cluster::unsought`] (read from the entry's text, unless only decoding can tell:
    /// then the guest is decoded whole, into `guests`).
    pub fn with_others_thin(self) -> ListingQuery<'a> {
        ListingQuery {
            others: Others::Thin,
            ..self
        }
    }

    /// As [`ListingQuery::with_others_thin`], with each other guest's node, pool and type
    /// too (what an index of names needs).
    pub fn with_others_placed(self) -> ListingQuery<'a> {
        ListingQuery {
            others: Others::ThinWithPlace,
            ..self
        }
    }

    /// With `on`, the QEMU guests listed without a name on an online node are named from
    /// their configs after the listing ([`name_unbroadcast`]: one config read each).
    pub fn with_name_unbroadcast(self, on: bool) -> ListingQuery<'a> {
        ListingQuery {
            name_unbroadcast: on,
            ..self
        }
    }

    /// The name this lookup seeks alone (no vmid, no other name), if any: see
    /// [`ListingQuery::name_alone`].
    pub fn with_name_alone(self, name: Option<&'a str>) -> ListingQuery<'a> {
        ListingQuery {
            name_alone: name,
            ..self
        }
    }

    /// Also the [`Load`] of every entry of the same listing, decoded or not (placement).
    pub fn with_load(self) -> ListingQuery<'a> {
        ListingQuery { load: true, ..self }
    }

    /// The name this lookup seeks alone, which an index of names kept across tasks (the
    /// run layer's) may confirm instead of listing; [`read`] itself does not use it.
    pub fn name_alone(&self) -> Option<&'a str> {
        self.name_alone
    }

    /// One entry of the listing, as JSON text, into `listing` as the query keeps it.
    fn add(&self, listing: &mut Listing, json: &[u8]) -> Result<(), serde_json::Error> {
        if let Some(load) = &mut listing.load {
            load.add_json(json);
        }
        let c = &mut listing.cluster;
        let Guests::Only(sought) = self.guests else {
            return c.add_json(json);
        };
        if sought.may_need(json, !self.nodes_and_storages) {
            return c.add_json(json);
        }
        let placed = match self.others {
            Others::Skipped => return Ok(()),
            Others::Thin => false,
            Others::ThinWithPlace => true,
        };
        match sought.unsought(json, placed) {
            Some(thin) => {
                c.unsought.push(thin);
                Ok(())
            }
            None => c.add_json(json),
        }
    }
}

/// What [`read`] gives: the cluster as the query keeps it, and the load when asked.
#[derive(Debug, Clone, Default)]
pub struct Listing {
    /// The guests, nodes and storages kept (and the unsought guests, when kept thin).
    pub cluster: Cluster,
    /// With [`ListingQuery::with_load`]: every node's capacity and guest's size.
    pub load: Option<Load>,
}

/// The cluster as `query` asks: one `GET /cluster/resources` (`?type=vm` unless the
/// query wants nodes and storages), decoded as the answer arrives, keeping only the
/// fields [`Cluster`] holds and the guests the query keeps; then, when the query names
/// unbroadcast guests, one config read per QEMU guest listed without a name on an online
/// node ([`name_unbroadcast`]).
pub fn read(client: &Client, query: &ListingQuery) -> Result<Listing, ApiError> {
    let filter = if query.nodes_and_storages {
        Vec::new()
    } else {
        vec![("type", "vm".to_string())]
    };
    let start = || Listing {
        cluster: Cluster::default(),
        load: query.load.then(Load::default),
    };
    let add = |listing: &mut Listing, json: &[u8]| query.add(listing, json);
    let mut listing = client.get_list("/cluster/resources", &filter, &start, &add)?;
    if query.name_unbroadcast {
        let c = &mut listing.cluster;
        name_unbroadcast(client, &mut c.guests, &c.nodes);
    }
    Ok(listing)
}

/// The guests, nodes and storages in a `/cluster/resources` answer (other types skipped).
pub fn parse_cluster(data: &Value) -> Result<Cluster, ApiError> {
    Cluster::deserialize(data).map_err(|e| {
        ApiError::other(
            ApiErrorKind::Other,
            format!("/cluster/resources did not answer with a list ({e}): {data}"),
        )
    })
}

/// The guests in a `/cluster/resources` answer; entries of other types are skipped.
pub fn parse_resources(data: &Value) -> Result<Vec<Guest>, ApiError> {
    Ok(parse_cluster(data)?.guests)
}

/// A `/cluster/resources` list decoded one entry at a time: each entry is reduced to
/// what [`Cluster`] keeps before the next is read, so no tree of the whole list exists.
impl<'de> Deserialize<'de> for Cluster {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Cluster, D::Error> {
        struct Entries;
        impl<'de> Visitor<'de> for Entries {
            type Value = Cluster;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a list of cluster resources")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Cluster, A::Error> {
                let mut cluster = Cluster::default();
                while let Some(entry) = seq.next_element::<Entry<'de>>()? {
                    cluster.add(entry);
                }
                Ok(cluster)
            }
        }
        d.deserialize_seq(Entries)
    }
}

/// The fields of one `/cluster/resources` entry the modules use; the rest is skipped
/// unread. `vmid` may be a number or a string, `template` 0/1, `name` may be missing (a
/// VM created moments ago is listed before its node's next status broadcast). Strings
/// borrow from the entry's text where JSON did not escape them (nearly always).
#[derive(Deserialize, Default)]
#[serde(default)]
struct Entry<'a> {
    #[serde(rename = "type", borrow)]
    kind: LooseScalar<'a>,
    #[serde(borrow)]
    vmid: LooseScalar<'a>,
    #[serde(borrow)]
    node: LooseScalar<'a>,
    #[serde(borrow)]
    name: LooseScalar<'a>,
    #[serde(borrow)]
    status: LooseScalar<'a>,
    #[serde(borrow)]
    template: LooseScalar<'a>,
    #[serde(borrow)]
    lock: LooseScalar<'a>,
    #[serde(borrow)]
    pool: LooseScalar<'a>,
    #[serde(borrow)]
    hastate: LooseScalar<'a>,
    #[serde(borrow)]
    storage: LooseScalar<'a>,
    #[serde(borrow)]
    content: LooseScalar<'a>,
    #[serde(borrow)]
    shared: LooseScalar<'a>,
}

impl<'a> Entry<'a> {
    /// The entry as [`flat_json`] reads it; `None` when serde must decide (nesting,
    /// escapes, a value that is no JSON scalar, text that is not UTF-8).
    fn from_flat(json: &'a [u8]) -> Option<Entry<'a>> {
        let mut entry = Entry::default();
        let mut readable = true;
        flat_json::each_field(json, |key, value| {
            let slot = match key {
                b"type" => &mut entry.kind,
                b"vmid" => &mut entry.vmid,
                b"node" => &mut entry.node,
                b"name" => &mut entry.name,
                b"status" => &mut entry.status,
                b"template" => &mut entry.template,
                b"lock" => &mut entry.lock,
                b"pool" => &mut entry.pool,
                b"hastate" => &mut entry.hastate,
                b"storage" => &mut entry.storage,
                b"content" => &mut entry.content,
                b"shared" => &mut entry.shared,
                _ => return,
            };
            match LooseScalar::from_scalar(value) {
                Some(loose) => *slot = loose,
                None => readable = false,
            }
        })?;
        readable.then_some(entry)
    }

    fn into_guest(self, texts: &mut Shared) -> Option<Guest> {
        let kind = match self.kind.as_str()? {
            "qemu" => GuestType::Qemu,
            "lxc" => GuestType::Lxc,
            _ => return None,
        };
        let vmid = match self.vmid {
            LooseScalar::Int(n) => u32::try_from(n).ok()?,
            LooseScalar::Text(s) => s.trim().parse().ok()?,
            _ => return None,
        };
        let template = match self.template {
            LooseScalar::Int(n) => n == 1,
            LooseScalar::Bool(b) => b,
            LooseScalar::Text(s) => s == "1",
            LooseScalar::Other => false,
        };
        Some(Guest {
            vmid,
            node: texts.text(self.node.as_str()?),
            kind,
            name: self.name.text().filter(|n| !n.is_empty()),
            status: self.status.as_str().map(|s| texts.text(s)),
            template,
            lock: self.lock.text().filter(|l| !l.is_empty()),
            pool: self.pool.text().filter(|p| !p.is_empty()),
            hastate: self.hastate.text().filter(|s| !s.is_empty()),
        })
    }
}

/// A scalar PVE sends as a number, a string or a boolean depending on version and path.
#[derive(Default)]
enum LooseScalar<'a> {
    Int(i64),
    Text(Cow<'a, str>),
    Bool(bool),
    #[default]
    Other,
}

impl<'a> LooseScalar<'a> {
    /// The value as serde would decode it from the same text; `None` for text that is
    /// not valid JSON (serde then reports it).
    fn from_scalar(value: flat_json::Scalar<'a>) -> Option<LooseScalar<'a>> {
        let raw = match value {
            flat_json::Scalar::Str(text) => {
                return std::str::from_utf8(text)
                    .ok()
                    .map(|t| LooseScalar::Text(Cow::Borrowed(t)))
            }
            flat_json::Scalar::Raw(raw) => std::str::from_utf8(raw).ok()?,
        };
        let number =
            |t: &str| t.bytes().all(|b| b.is_ascii_digit() || b"+-.eE".contains(&b)) && t.parse::<f64>().is_ok();
        match raw {
            "true" => Some(LooseScalar::Bool(true)),
            "false" => Some(LooseScalar::Bool(false)),
            "null" => Some(LooseScalar::Other),
            // Beyond i64, or a fraction: serde gives u64/f64, which count as absent.
            n if number(n) => Some(n.parse::<i64>().map_or(LooseScalar::Other, LooseScalar::Int)),
            _ => None,
        }
    }

    fn as_str(&self) -> Option<&str> {
        match self {
            LooseScalar::Text(s) => Some(s),
            _ => None,
        }
    }
    /// The string, if PVE sent one (as before: anything else counts as absent).
    fn text(self) -> Option<String> {
        match self {
            LooseScalar::Text(s) => Some(s.into_owned()),
            _ => None,
        }
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for LooseScalar<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<LooseScalar<'a>, D::Error> {
        struct Scalar<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for Scalar<'a> {
            type Value = LooseScalar<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a number, string or boolean")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<LooseScalar<'a>, E> {
                Ok(LooseScalar::Int(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<LooseScalar<'a>, E> {
                Ok(i64::try_from(v).map_or(LooseScalar::Other, LooseScalar::Int))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<LooseScalar<'a>, E> {
                Ok(LooseScalar::Other)
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<LooseScalar<'a>, E> {
                Ok(LooseScalar::Text(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<LooseScalar<'a>, E> {
                Ok(LooseScalar::Text(Cow::Owned(v.to_string())))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<LooseScalar<'a>, E> {
                Ok(LooseScalar::Bool(v))
            }
            fn visit_unit<E: de::Error>(self) -> Result<LooseScalar<'a>, E> {
                Ok(LooseScalar::Other)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<LooseScalar<'a>, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(LooseScalar::Other)
            }
            fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<LooseScalar<'a>, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(LooseScalar::Other)
            }
        }
        d.deserialize_any(Scalar(std::marker::PhantomData))
    }
}

/// PVE lists a guest's name from its node's status broadcast (pve-manager's
/// `extract_vm_stats` reads the status data, not the config), so a VM made moments ago is
/// listed by vmid at once but without a name, status `unknown`, for up to a broadcast
/// interval. A lookup by name is exact at once all the same: the config of each such QEMU
/// guest on an online node is read for its name (one read per VM made in those seconds,
/// none on a settled cluster). Best effort: a read that fails leaves the guest unnamed.
pub fn name_unbroadcast(client: &Client, guests: &mut [Guest], nodes: &[Node]) {
    let online = |node: &str| nodes.iter().any(|n| n.name == node && n.status == "online");
    for g in guests
        .iter_mut()
        .filter(|g| g.kind == GuestType::Qemu && g.name.is_none() && online(&g.node))
    {
        if let Ok(config) = client.get(&format!("/nodes/{}/qemu/{}/config", g.node, g.vmid), &[]) {
            g.name = config
                .get("name")
                .and_then(Value::as_str)
                .filter(|n| !n.is_empty())
                .map(str::to_string);
        }
    }
}

/// Waits until `vmid` is listed in `/cluster/resources` (the cluster-wide VM list, which
/// lists a new VM at once, its name only later: see [`name_unbroadcast`]), so a module
/// returns only when any node would find the VM. Returns that listing (guests, nodes,
/// storages), which a caller may read further instead of listing again. Polls with
/// pauses from 100 ms up to 1 s.
pub fn wait_listed(client: &Client, vmid: u32, timeout: Duration) -> Result<Cluster, ApiError> {
    let started = Instant::now();
    let mut pause = Duration::from_millis(100);
    loop {
        let listing = read(client, &ListingQuery::whole_cluster())?.cluster;
        if by_vmid(&listing.guests, vmid).is_some() {
            return Ok(listing);
        }
        let waited = started.elapsed();
        if waited >= timeout {
            return Err(ApiError::other(
                ApiErrorKind::Timeout,
                format!(
                    "VM {vmid} is not listed in /cluster/resources after {}s; the cluster file system may be slow or the node out of quorum",
                    waited.as_secs()
                ),
            ));
        }
        std::thread::sleep(pause.min(timeout - waited));
        pause = (pause * 2).min(Duration::from_secs(1));
    }
}

/// The guest with this vmid, of either type.
pub fn by_vmid(guests: &[Guest], vmid: u32) -> Option<&Guest> {
    guests.iter().find(|g| g.vmid == vmid)
}

/// The QEMU VM with this exact name; an error listing the vmids when several match.
pub fn qemu_by_name<'a>(guests: &'a [Guest], name: &str) -> Result<Option<&'a Guest>, String> {
    let matches: Vec<&Guest> = guests
        .iter()
        .filter(|g| g.kind == GuestType::Qemu && g.name.as_deref() == Some(name))
        .collect();
    match matches.as_slice() {
        [] => Ok(None),
        [one] => Ok(Some(one)),
        many => {
            let ids: Vec<String> = many.iter().map(|g| g.vmid.to_string()).collect();
            Err(format!(
                "Multiple VMs with name {name} found (vmids {}), provide vmid instead",
                ids.join(", ")
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sample() -> Vec<Guest> {
        parse_resources(&json!([
            {"id": "qemu/100", "type": "qemu", "vmid": 100, "node": "pve1", "name": "web", "status": "stopped", "template": 0},
            {"id": "qemu/9000", "type": "qemu", "vmid": "9000", "node": "pve1", "name": "base-debian13", "template": 1},
            {"id": "lxc/200", "type": "lxc", "vmid": 200, "node": "pve2", "name": "web", "status": "running"},
            {"id": "qemu/101", "type": "qemu", "vmid": 101, "node": "pve2", "status": "unknown"},
            {"id": "storage/pve1/local", "type": "storage", "node": "pve1"},
        ]))
        .unwrap()
    }

    #[test]
    fn parses_numbers_strings_and_missing_names() {
        let guests = sample();
        assert_eq!(guests.len(), 4, "the storage entry is skipped");
        let template = by_vmid(&guests, 9000).unwrap();
        assert!(template.template);
        assert_eq!(template.kind, GuestType::Qemu);
        let fresh = by_vmid(&guests, 101).unwrap();
        assert_eq!((fresh.name.as_deref(), &*fresh.node), (None, "pve2"));
        assert_eq!(by_vmid(&guests, 200).unwrap().kind, GuestType::Lxc);
        assert!(by_vmid(&guests, 999).is_none());
    }

    #[test]
    fn name_lookup_is_qemu_only() {
        let guests = sample();
        assert_eq!(qemu_by_name(&guests, "web").unwrap().unwrap().vmid, 100);
        assert!(qemu_by_name(&guests, "Web").unwrap().is_none(), "case-sensitive");
    }

    #[test]
    fn duplicate_names_list_the_vmids() {
        let mut guests = sample();
        let mut twin = guests[0].clone();
        twin.vmid = 105;
        guests.push(twin);
        assert_eq!(
            qemu_by_name(&guests, "web").unwrap_err(),
            "Multiple VMs with name web found (vmids 100, 105), provide vmid instead"
        );
    }

    #[test]
    fn one_unfiltered_listing_gives_guests_nodes_and_storages() {
        let c = parse_cluster(&json!([
            {"id": "qemu/100", "type": "qemu", "vmid": 100, "node": "pve1", "name": "web"},
            {"id": "node/pve1", "type": "node", "node": "pve1", "status": "online"},
            {"id": "node/pve2", "type": "node", "node": "pve2", "status": "offline"},
            {"id": "storage/pve1/local-lvm", "type": "storage", "storage": "local-lvm", "node": "pve1", "content": "images,rootdir", "status": "available"},
            {"id": "storage/pve1/local", "type": "storage", "storage": "local", "node": "pve1", "content": "iso,vztmpl,backup", "shared": 0},
            {"id": "storage/pve1/vmdata", "type": "storage", "storage": "vmdata", "node": "pve1", "content": "images", "shared": 1, "status": "unknown"},
            {"id": "sdn/pve1/localnetwork", "type": "sdn", "sdn": "localnetwork", "node": "pve1"},
        ]))
        .unwrap();
        assert_eq!(c.guests.len(), 1);
        assert_eq!(c.node_names(), vec!["pve1", "pve2"]);
        assert_eq!(c.nodes[1].status, "offline");
        let on_pve1: Vec<(&str, bool)> = c
            .storages_on("pve1")
            .map(|s| (s.storage.as_str(), s.holds_images()))
            .collect();
        assert_eq!(on_pve1, vec![("local-lvm", true), ("local", false), ("vmdata", true)]);
        let shared: Vec<bool> = c.storages.iter().map(|s| s.shared).collect();
        assert_eq!(shared, vec![false, false, true], "absent counts as not shared");
        let active: Vec<bool> = c.storages.iter().map(|s| s.active).collect();
        assert_eq!(
            active,
            vec![true, true, false],
            "status unknown: not active (no status: active)"
        );
        assert_eq!(c.storages_on("pve2").count(), 0);
    }

    #[test]
    fn only_the_used_fields_are_kept_and_odd_types_are_absent() {
        let c = parse_cluster(&json!([
            {"id": "qemu/100", "type": "qemu", "vmid": 100, "node": "pve1", "name": "web", "lock": "backup",
             "maxmem": 2147483648u64, "tags": ["odd"], "hastate": {"x": 1}, "cpu": 0.5},
            {"id": "qemu/101", "type": "qemu", "vmid": 101, "node": "pve1", "name": 7, "lock": "", "hastate": "ignored"},
        ]))
        .unwrap();
        assert_eq!(c.guests[0].lock.as_deref(), Some("backup"));
        assert_eq!((c.guests[1].name.as_deref(), c.guests[1].lock.as_deref()), (None, None));
        assert_eq!(
            (c.guests[0].hastate.as_deref(), c.guests[1].hastate.as_deref()),
            (None, Some("ignored"))
        );
    }

    #[test]
    fn a_query_keeps_what_it_asks_for_of_each_entry() {
        let entries = [
            r#"{"id":"qemu/100","type":"qemu","vmid":100,"node":"pve1","name":"web","status":"running"}"#,
            r#"{"id":"qemu/101","type":"qemu","vmid":101,"node":"pve1","name":"db","maxmem":1024}"#,
            r#"{"id":"lxc/200","type":"lxc","vmid":200,"node":"pve2","name":"ct"}"#,
            r#"{"id":"node/pve1","type":"node","node":"pve1","status":"online"}"#,
            r#"{"id":"storage/pve1/local","type":"storage","storage":"local","node":"pve1","content":"images"}"#,
        ];
        let fold = |query: &ListingQuery| {
            let mut listing = Listing {
                cluster: Cluster::default(),
                load: query.load.then(Load::default),
            };
            for e in entries {
                query.add(&mut listing, e.as_bytes()).unwrap();
            }
            listing
        };
        let vmids = |l: &Listing| l.cluster.guests.iter().map(|g| g.vmid).collect::<Vec<_>>();
        let all = fold(&ListingQuery::whole_cluster());
        assert_eq!(vmids(&all), vec![100, 101, 200]);
        assert_eq!((all.cluster.nodes.len(), all.cluster.storages.len()), (1, 1));
        assert!(all.load.is_none() && all.cluster.unsought.is_empty());

        let sought = LookupTargets::lookup(Some(101), None);
        let of = fold(&ListingQuery::whole_cluster().only(&sought));
        assert_eq!(vmids(&of), vec![101]);
        assert_eq!((of.cluster.nodes.len(), of.cluster.unsought.len()), (1, 0));
        assert_eq!(vmids(&fold(&ListingQuery::guests().only(&sought))), vec![101]);

        let thin = fold(&ListingQuery::whole_cluster().only(&sought).with_others_thin());
        let unsought: Vec<(u32, bool)> = thin
            .cluster
            .unsought
            .iter()
            .map(|u| (u.vmid, u.place.is_some()))
            .collect();
        assert_eq!(unsought, vec![(100, false), (200, false)]);
        let placed = fold(
            &ListingQuery::whole_cluster()
                .only(&sought)
                .with_others_placed()
                .with_load(),
        );
        let unsought: Vec<(u32, bool)> = placed
            .cluster
            .unsought
            .iter()
            .map(|u| (u.vmid, u.place.is_some()))
            .collect();
        assert_eq!(unsought, vec![(100, true), (200, true)]);
        let load = placed.load.unwrap();
        assert_eq!((load.guests.len(), load.nodes.len()), (3, 1), "every entry is tallied");

        let by_name = LookupTargets::lookup(None, Some("web"));
        let lookup = ListingQuery::lookup(None, Some("web"), &by_name);
        assert_eq!((lookup.name_alone(), lookup.name_unbroadcast), (Some("web"), true));
        let by_id = LookupTargets::lookup(Some(100), Some("web"));
        let lookup = ListingQuery::lookup(Some(100), Some("web"), &by_id);
        assert_eq!((lookup.name_alone(), lookup.name_unbroadcast), (None, false));
    }

    #[test]
    fn a_non_list_answer_is_an_error() {
        assert!(parse_resources(&json!({"data": 1})).is_err());
    }

    #[test]
    fn the_flat_reader_and_serde_decode_every_entry_alike() {
        let entries = [
            r#"{"id":"qemu/100","type":"qemu","vmid":100,"node":"pve1","name":"web","status":"running","template":0,"maxmem":2147483648,"cpu":0.031}"#,
            r#"{"type":"qemu","vmid":"9000","node":"pve1","name":"base","template":1,"lock":"backup"}"#,
            r#"{"type":"qemu","vmid":101,"node":"pve2","name":"","template":true,"lock":""}"#,
            r#"{"type":"lxc","vmid":200,"node":"pve2","name":"ct","tags":"a;b","status":null}"#,
            r#"{"type":"qemu","vmid":18446744073709551615,"node":"pve1"}"#,
            r#"{"type":"qemu","vmid":1.5e2,"node":"pve1"}"#,
            r#"{"type":"storage","storage":"local","node":"pve1","content":"iso,images","shared":1}"#,
            r#"{"type":"storage","storage":"nfs","node":"pve2","content":"images","shared":"1"}"#,
            r#"{"type":"node","node":"pve1","status":"online","level":""}"#,
            r#"{"type":"sdn","sdn":"localnetwork","node":"pve1"}"#,
        ];
        for json in entries {
            assert!(Entry::from_flat(json.as_bytes()).is_some(), "read flat: {json}");
            let mut flat = Cluster::default();
            flat.add_json(json.as_bytes()).unwrap();
            let mut serde = Cluster::default();
            serde.add(serde_json::from_str(json).unwrap());
            assert_eq!(format!("{flat:?}"), format!("{serde:?}"), "{json}");
        }
        // The shapes the flat reader leaves to serde still decode.
        let mut c = Cluster::default();
        c.add_json(br#"{"type":"qemu","vmid":102,"node":"pve1","name":"a\u0062"}"#)
            .unwrap();
        c.add_json(br#"{"type":"qemu","vmid":103,"node":"pve1","ha":{"managed":0}}"#)
            .unwrap();
        assert_eq!(
            c.guests.iter().map(|g| (g.vmid, g.name.clone())).collect::<Vec<_>>(),
            vec![(102, Some("ab".into())), (103, None)]
        );
        assert!(
            c.add_json(br#"{"type":"qemu","vmid":1x}"#).is_err(),
            "text that is not JSON is an error, as before"
        );
    }
}
