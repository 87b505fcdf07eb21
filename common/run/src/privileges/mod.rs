//! Whether the cluster will let a task do what it planned, known before its first write.
//!
//! [`needs`] maps each planned [`Write`] to the privileges PVE checks and where (one
//! mapping, also behind the least-privilege guide's table); [`check`] holds them against
//! the caller's privileges as PVE reports them. The driver holds a task's writes to the
//! [`Gate`] before its first write, in check mode and real runs alike, so a dry run
//! predicts the refusal a real run meets and a real run never half-applies its plan for lack of a privilege.
//!
//! Cost: one `GET /access/permissions` per task that writes; none for `root@pam` with a
//! password or in local mode (PVE checks nothing for it) or a task with nothing to write.
//! A task that adds or removes a tag, for a caller without `Sys.Modify` on `/`, also reads
//! the cluster's tag rules (`GET /cluster/options`, [`tags`]). When PVE does
//! not answer it, the task goes on as without the check, with a warning.

pub mod check;
pub mod tags;

pub use ferrox_pve_rules::privileges::{keys, needs, table};

use std::cell::{OnceCell, RefCell};

pub use check::{Caller, Privileges, Refusal};
pub use needs::{bridge_needs, Check, Need, Write};
pub use tags::TagRules;

use ferrox_ansible::protocol::{Failure, Module};
use ferrox_cluster::options::ClusterOptions;
use ferrox_dryrun::Effect;
use ferrox_pve_client::client::Client;
use ferrox_pve_client::connection::ConnectionParams;

/// The pre-write check of one task: the caller, and its privileges fetched once.
pub struct Gate<'a> {
    client: &'a Client,
    caller: Caller,
    privileges: OnceCell<Option<Privileges>>,
    options: ClusterOptions<'a>,
    tag_rules: OnceCell<Option<TagRules>>,
    warnings: RefCell<Vec<String>>,
}

/// The VM a task works on, as its messages name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target<'a> {
    /// Its vmid.
    pub vmid: u32,
    /// The node it is on.
    pub node: &'a str,
    /// Only the run's plan has it so far (check mode): `VM 101 (planned)`.
    pub planned: bool,
}

/// A task PVE would refuse: its failure, and the plan's record of it.
#[derive(Debug)]
pub struct Refused {
    /// The task's failure, naming the privilege and path missing.
    pub failure: Failure,
    /// The plan's record of it, so later tasks plan as if it had not run.
    pub effect: Effect,
}

impl<'a> Gate<'a> {
    /// The gate of a task run with `client` as the caller `conn` names; nothing is read until a check needs it.
    pub fn new(client: &'a Client, conn: &ConnectionParams) -> Gate<'a> {
        Gate {
            client,
            caller: Caller::of(conn),
            privileges: OnceCell::new(),
            options: ClusterOptions::of(client),
            tag_rules: OnceCell::new(),
            warnings: RefCell::new(Vec::new()),
        }
    }

    /// The task's read of `/cluster/options`, for the others that need datacenter.cfg
    /// (the tag comparison), so a task reads it once at most.
    pub fn cluster_options(&self) -> ClusterOptions<'a> {
        self.options.clone()
    }

    /// Who the API sees.
    pub fn caller(&self) -> &Caller {
        &self.caller
    }

    /// Warnings so far (the privileges could not be read), for the task's result.
    pub fn take_warnings(&self) -> Vec<String> {
        std::mem::take(&mut self.warnings.borrow_mut())
    }

    /// The caller's privileges (`None` for `root@pam`, or when PVE did not tell: then a
    /// warning says the check was skipped).
    pub fn privileges(&self) -> Option<&Privileges> {
        if self.caller.is_root() {
            return None;
        }
        self.privileges
            .get_or_init(|| match self.client.get("/access/permissions", &[]) {
                Ok(data) => Some(Privileges::from_answer(&data)),
                Err(e) => {
                    self.warnings.borrow_mut().push(format!(
                        "could not read the privileges of {} (GET /access/permissions: {e}); the task goes on without predicting what Proxmox VE will refuse",
                        self.caller.id
                    ));
                    None
                }
            })
            .as_ref()
    }

    /// datacenter.cfg's tag rules as the caller sees them (`GET /cluster/options`, read
    /// once, only when a write adds or removes a tag and the caller lacks `Sys.Modify`
    /// on `/`); `None`, with a warning, when PVE did not tell.
    fn tag_rules(&self, privileges: &Privileges) -> Option<&TagRules> {
        self.tag_rules
            .get_or_init(|| match self.options.get() {
                Ok(data) => Some(TagRules::from_options(data, privileges.has("/", "Sys.Audit"))),
                Err(e) => {
                    self.warnings.borrow_mut().push(format!(
                        "could not read the cluster's tag rules (GET /cluster/options: {e}); the task goes on without predicting whether Proxmox VE refuses its tags"
                    ));
                    None
                }
            })
            .as_ref()
    }

    /// `Ok` when PVE will allow every one of `writes` to `module`'s task; otherwise its
    /// failure, naming the operation, the privilege and the path, with the plan's record.
    pub fn check(&self, module: &str, target: &Target<'_>, writes: &[Write]) -> Result<(), Box<Refused>> {
        if writes.is_empty() || self.caller.is_root() {
            return Ok(());
        }
        let all: Vec<Need> = writes.iter().flat_map(needs::needs).collect();
        let Some(privileges) = self.privileges() else {
            return Ok(());
        };
        let tag_allowed = |tag: &str| self.tag_rules(privileges).is_none_or(|r| r.allows(tag));
        let Some(refusal) = privileges.first_refused_by(&self.caller, &all, &tag_allowed) else {
            return Ok(());
        };
        let planned = if target.planned { " (planned)" } else { "" };
        let task = format!("{module} {}", refusal.need.what);
        let msg = format!(
            "{task} on VM {}{planned}: {}",
            target.vmid,
            refusal.reason(&self.caller)
        );
        let effect = Effect::Refused {
            vmid: target.vmid,
            node: target.node.to_string(),
            task,
            privilege: refusal.privilege(),
            path: refusal.path.clone().unwrap_or_default(),
        };
        Err(Box::new(Refused {
            failure: Failure::new(msg).with("vmid", target.vmid),
            effect,
        }))
    }

    /// [`Gate::check`] for writes that concern no VM (a storage's files): the refusal
    /// names `subject` (`storage local on node pve1`). A refused check-mode task records
    /// no effect: the file stays unplanned, so later tasks that need it fail as well.
    pub fn require_for(&self, m: &mut Module, subject: &str, writes: &[Write]) -> Result<(), Failure> {
        let verdict = self.refusal_for(m.spec.name, subject, writes);
        for w in self.take_warnings() {
            m.warn(w);
        }
        verdict.map_or(Ok(()), |msg| Err(Failure::new(msg)))
    }

    fn refusal_for(&self, module: &str, subject: &str, writes: &[Write]) -> Option<String> {
        if writes.is_empty() || self.caller.is_root() {
            return None;
        }
        let all: Vec<Need> = writes.iter().flat_map(needs::needs).collect();
        let refusal = self.privileges()?.first_refused(&self.caller, &all)?;
        Some(format!(
            "{module} {} on {subject}: {}",
            refusal.need.what,
            refusal.reason(&self.caller)
        ))
    }

    /// Whether the caller may see `bridge` in the node's network listing (PVE hides
    /// bridges without `SDN.Audit` or `SDN.Use` on them); `None` when unknown.
    pub fn sees_bridge(&self, bridge: &str) -> Option<bool> {
        if self.caller.is_root() {
            return Some(true);
        }
        let p = self.privileges()?;
        let path = format!("/sdn/zones/localnetwork/{bridge}");
        Some(["SDN.Audit", "SDN.Use"].iter().any(|x| p.has(&path, x)))
    }

    /// Why a bridge the node does not list may be hidden, for the message: `None` when
    /// the caller sees every bridge (so it does not exist).
    pub fn hidden_bridge_reason(&self, bridge: &str) -> Option<String> {
        let id = &self.caller.id;
        match self.sees_bridge(bridge) {
            Some(true) => None,
            Some(false) => Some(format!(
                "{id} lacks SDN.Audit and SDN.Use on /sdn/zones/localnetwork/{bridge}"
            )),
            None => Some(format!(
                "{id} may lack SDN.Audit or SDN.Use on /sdn/zones/localnetwork/{bridge}"
            )),
        }
    }
}

/// The message for a bridge missing from the node's listing.
pub fn missing_bridge(bridge: &str, node: &str, listed: &[&str], hidden: Option<&str>) -> String {
    match hidden {
        Some(why) => format!(
            "bridge {bridge} is not among the bridges node {node} shows ({}): Proxmox VE hides a bridge from callers without an SDN privilege on it, and {why}",
            listed.join(", ")
        ),
        None => format!("bridge {bridge} does not exist on node {node} (bridges there: {})", listed.join(", ")),
    }
}
