//! HA-managed VMs: qemu-server hands their start and stop to the HA stack. The API
//! answers with a `hastart`/`hastop` task that only records the request
//! (`ha-manager set vm:<id> --state started`, `ha-manager crm-command stop vm:<id>
//! <timeout>`) and ends at once; the HA manager then starts or stops the VM in its
//! own `qmstart`/`qmstop`/`qmshutdown` task (run as root@pam) a little later. So the
//! request's task ends before the VM's state changes. A migration is the same: a
//! `hamigrate` task records `ha-manager migrate vm:<id> <target>` and ends; the HA
//! manager then runs the `qmigrate` task on the VM's node.
//!
//! Only a managed VM goes this way ([`managed`]): one whose resource is `ignored`, or
//! any while the cluster is disarmed with mode `ignore`, is started and stopped by
//! qemu-server's own tasks, and its resource keeps its state. While the cluster is
//! disarmed with mode `freeze`, a request is recorded but the HA manager does not act.

use super::power;
use crate::api::Ctx;
use crate::auth::Identity;
use crate::error::ApiResult;
use crate::state::Cluster;
use crate::tasks;
use serde_json::{json, Value};

/// `vm_is_ha_managed` (pve-ha-manager `Config.pm`, `$service_check_ha_state` without a
/// state): the VM has an HA resource that is not `ignored`, and the cluster is not
/// disarmed with mode `ignore`. Otherwise qemu-server starts and stops it itself
/// (`qmstart`/`qmstop`) and leaves the resource as it is; removing it still needs
/// `purge` while the entry exists (`lifecycle::destroy`).
pub fn managed(c: &Cluster, vmid: u32) -> bool {
    let disarmed_ignore = c.ha_disarm.as_ref().is_some_and(|d| d.mode == "ignore");
    c.ha_resource(vmid).is_some_and(|r| r.state != "ignored") && !disarmed_ignore
}

fn set_state(c: &mut Cluster, vmid: u32, state: &str) {
    if let Some(r) = c.ha_resources.iter_mut().find(|r| r.vmid() == Some(vmid)) {
        r.state = state.to_string();
    }
}

/// Disarmed with mode `freeze`: the HA manager applies no request until re-armed.
fn frozen(c: &Cluster) -> bool {
    c.ha_disarm.as_ref().is_some_and(|d| d.mode == "freeze")
}

fn ha_user() -> Identity {
    Identity {
        userid: "root@pam".into(),
        tokenid: None,
    }
}

/// `POST …/status/start` on an HA-managed VM.
pub fn start(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    let (node, vmid) = (ctx.node(), ctx.vmid());
    let sim = ctx.sim.clone();
    let upid = tasks::spawn(
        ctx.sim,
        ctx.c,
        &node,
        "hastart",
        &vmid.to_string(),
        ctx.who,
        vec![],
        Box::new(move |c, t| {
            t.log.push(format!("Requesting HA start for VM {vmid}"));
            t.check_fault()?;
            set_state(c, vmid, "started");
            let running = c.guests.get(&vmid).is_some_and(|g| g.running);
            if !running && !frozen(c) {
                let node = c.guests.get(&vmid).map(|g| g.node.clone()).unwrap_or_default();
                power::spawn_start(&sim, c, &node, vmid, &ha_user(), false);
            }
            Ok(())
        }),
    );
    Ok(Value::String(upid))
}

/// `POST …/status/stop` (timeout 0: hard stop) or `…/shutdown` (the given timeout,
/// default 60) on an HA-managed VM.
pub fn stop(ctx: &mut Ctx<'_>, shutdown: bool) -> ApiResult<Value> {
    let (node, vmid) = (ctx.node(), ctx.vmid());
    let sim = ctx.sim.clone();
    let upid = tasks::spawn(
        ctx.sim,
        ctx.c,
        &node,
        "hastop",
        &vmid.to_string(),
        ctx.who,
        vec![],
        Box::new(move |c, t| {
            t.log.push(format!("Requesting HA stop for VM {vmid}"));
            t.check_fault()?;
            set_state(c, vmid, "stopped");
            let running = c.guests.get(&vmid).is_some_and(|g| g.running);
            if running && !frozen(c) {
                let node = c.guests.get(&vmid).map(|g| g.node.clone()).unwrap_or_default();
                let kind = if shutdown { "qmshutdown" } else { "qmstop" };
                tasks::spawn(
                    &sim,
                    c,
                    &node,
                    kind,
                    &vmid.to_string(),
                    &ha_user(),
                    vec![],
                    Box::new(move |c, t| {
                        t.check_fault()?;
                        power::stop_now(c, vmid);
                        Ok(())
                    }),
                );
            }
            Ok(())
        }),
    );
    Ok(Value::String(upid))
}

/// `POST …/migrate` of an HA-managed VM, after migrate_vm's own checks.
pub fn migrate(ctx: &mut Ctx<'_>, target: &str) -> ApiResult<Value> {
    let vmid = ctx.vmid();
    let sim = ctx.sim.clone();
    let target = target.to_string();
    let node = ctx.node();
    let upid = tasks::spawn(
        ctx.sim,
        ctx.c,
        &node,
        "hamigrate",
        &vmid.to_string(),
        ctx.who,
        vec![],
        Box::new(move |c, t| {
            t.log
                .push(format!("Requesting HA migration for VM {vmid} to node {target}"));
            t.check_fault()?;
            // The CRM's migrate: online (a stopped VM moves offline), no storage mapping.
            if let Some(g) = c.guests.get(&vmid) {
                let (from, running) = (g.node.clone(), g.running);
                super::lifecycle::spawn_migration(&sim, c, &from, vmid, &target, &ha_user(), running, None, false);
            }
            Ok(())
        }),
    );
    Ok(Value::String(upid))
}

/// `ha-manager add vm:<id> --state <state>`, as the create task runs it for `ha-managed`.
pub fn add(c: &mut Cluster, vmid: u32, state: &str) {
    if c.ha_resource(vmid).is_none() {
        c.ha_resources.push(crate::state::HaResource {
            sid: format!("vm:{vmid}"),
            state: state.to_string(),
            comment: None,
        });
    }
}

/// `ha` of `status/current` (`PVE::HA::Config::get_service_status`): `managed` as
/// [`managed`] decides, and for a managed resource the HA manager's state of it.
pub fn service_status(c: &Cluster, vmid: u32) -> Value {
    match c.ha_resource(vmid).filter(|_| managed(c, vmid)) {
        Some(r) => match crate::ha::manager_state(c, r) {
            Some(state) => json!({"managed": 1, "state": state}),
            None => json!({"managed": 1}),
        },
        None => json!({"managed": 0}),
    }
}
