//! HA-managed VMs: qemu-server hands their start and stop to the HA stack. The API
//! answers with a `hastart`/`hastop` task that only records the request
//! (`ha-manager set vm:<id> --state started`, `ha-manager crm-command stop vm:<id>
//! <timeout>`) and ends at once; the HA manager then starts or stops the VM in its
//! own `qmstart`/`qmstop`/`qmshutdown` task (run as root@pam) a little later. So the
//! request's task ends before the VM's state changes.

use super::power;
use crate::api::Ctx;
use crate::auth::Identity;
use crate::error::ApiResult;
use crate::state::Cluster;
use crate::tasks;
use serde_json::{json, Value};

/// `vm_is_ha_managed`: the VM has an HA resource.
pub fn managed(c: &Cluster, vmid: u32) -> bool {
    c.ha_resource(vmid).is_some()
}

fn set_state(c: &mut Cluster, vmid: u32, state: &str) {
    if let Some(r) = c.ha_resources.iter_mut().find(|r| r.vmid() == Some(vmid)) {
        r.state = state.to_string();
    }
}

fn ha_user() -> Identity {
    Identity { userid: "root@pam".into(), tokenid: None }
}

/// `POST …/status/start` on an HA-managed VM.
pub fn start(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    let (node, vmid) = (ctx.node(), ctx.vmid());
    let sim = ctx.sim.clone();
    let upid = tasks::spawn(ctx.sim, ctx.c, &node, "hastart", &vmid.to_string(), ctx.who, vec![], Box::new(move |c, t| {
        t.log.push(format!("Requesting HA start for VM {vmid}"));
        t.check_fault()?;
        set_state(c, vmid, "started");
        let running = c.guests.get(&vmid).is_some_and(|g| g.running);
        if !running {
            let node = c.guests.get(&vmid).map(|g| g.node.clone()).unwrap_or_default();
            power::spawn_start(&sim, c, &node, vmid, &ha_user(), false);
        }
        Ok(())
    }));
    Ok(Value::String(upid))
}

/// `POST …/status/stop` (timeout 0: hard stop) or `…/shutdown` (the given timeout,
/// default 60) on an HA-managed VM.
pub fn stop(ctx: &mut Ctx<'_>, shutdown: bool) -> ApiResult<Value> {
    let (node, vmid) = (ctx.node(), ctx.vmid());
    let sim = ctx.sim.clone();
    let upid = tasks::spawn(ctx.sim, ctx.c, &node, "hastop", &vmid.to_string(), ctx.who, vec![], Box::new(move |c, t| {
        t.log.push(format!("Requesting HA stop for VM {vmid}"));
        t.check_fault()?;
        set_state(c, vmid, "stopped");
        let running = c.guests.get(&vmid).is_some_and(|g| g.running);
        if running {
            let node = c.guests.get(&vmid).map(|g| g.node.clone()).unwrap_or_default();
            let kind = if shutdown { "qmshutdown" } else { "qmstop" };
            tasks::spawn(&sim, c, &node, kind, &vmid.to_string(), &ha_user(), vec![], Box::new(move |c, t| {
                t.check_fault()?;
                power::stop_now(c, vmid);
                Ok(())
            }));
        }
        Ok(())
    }));
    Ok(Value::String(upid))
}

/// `ha` of `status/current` (`PVE::HA::Config::get_service_status`).
pub fn service_status(c: &Cluster, vmid: u32) -> Value {
    match c.ha_resource(vmid) {
        Some(r) => json!({"managed": 1, "state": r.state, "request_state": r.state}),
        None => json!({"managed": 0}),
    }
}
