//! Power actions: each returns a UPID; the PVE split between synchronous refusals and
//! task errors is kept (see pve-api.md §5.11).

use super::{check_lock, is_template, missing_conf, update, vm};
use crate::api::Ctx;
use crate::auth::Identity;
use crate::error::{ApiError, ApiResult};
use crate::sim::SimInner;
use crate::state::{Cluster, GuestKind};
use crate::tasks;
use crate::util::now_ms;
use serde_json::Value;
use std::sync::Arc;

fn no_conf_file(node: &str, vmid: u32) -> String {
    format!("unable to find configuration file for VM {vmid} on node '{node}'")
}

fn exists(c: &Cluster, node: &str, vmid: u32) -> bool {
    c.guests
        .get(&vmid)
        .is_some_and(|g| g.node == node && g.kind == GuestKind::Qemu)
}

/// Start a `qmstart` task (also used by create's `start=1`).
pub fn spawn_start(
    sim: &Arc<SimInner>,
    c: &mut Cluster,
    node: &str,
    vmid: u32,
    who: &Identity,
    skiplock: bool,
) -> String {
    let node2 = node.to_string();
    tasks::spawn(
        sim,
        c,
        node,
        "qmstart",
        &vmid.to_string(),
        who,
        vec![],
        Box::new(move |c, t| {
            let g = vm(c, &node2, vmid).map_err(|e| e.message)?;
            if g.running {
                return Err(format!("VM {vmid} already running"));
            }
            // A VM suspended to disk starts from its saved state despite its lock.
            if !is_suspended_to_disk(g) {
                check_lock(g, skiplock)?;
            }
            if is_template(g) {
                return Err("you can't start a vm if it's a template".into());
            }
            check_bridges(c, &node2, vmid)?;
            t.check_fault()?;
            let suspended = is_suspended_to_disk(g);
            update::apply_all_pending(c, vmid);
            let g = c.guests.get_mut(&vmid).ok_or("vanished")?;
            if suspended {
                g.conf.current.remove("lock");
            }
            boot(g);
            Ok(())
        }),
    )
}

/// `vm_start` called inside another task (a rollback to a snapshot with RAM): the
/// VM's bridges must exist, pending changes apply, QEMU starts.
pub fn start_in_task(c: &mut Cluster, node: &str, vmid: u32) -> Result<(), String> {
    check_bridges(c, node, vmid)?;
    update::apply_all_pending(c, vmid);
    let g = c.guests.get_mut(&vmid).ok_or("vanished")?;
    boot(g);
    Ok(())
}

/// `start failed: bridge '<b>' does not exist` for a NIC on a bridge the node lacks.
fn check_bridges(c: &Cluster, node: &str, vmid: u32) -> Result<(), String> {
    let g = vm(c, node, vmid).map_err(|e| e.message)?;
    let bridges = c.node(node).map(|n| n.bridges.clone()).unwrap_or_default();
    for (k, v) in super::config::merged(&g.conf) {
        if super::disks::is_net_key(&k) {
            if let Some(b) = super::disks::Drive::parse_stored(&v).opts.get("bridge") {
                if !bridges.contains(b) {
                    return Err(format!("start failed: bridge '{b}' does not exist"));
                }
            }
        }
    }
    Ok(())
}

/// QEMU starts: the cloud-init drive is generated from the config as it is now.
fn boot(g: &mut crate::state::Guest) {
    g.set_running(true, now_ms());
    g.paused = false;
    g.started_ms = Some(now_ms());
    super::cloudinit::regenerate(g);
}

/// `lock: suspended`: hibernated (`suspend todisk=1`), resumed by start or resume.
fn is_suspended_to_disk(g: &crate::state::Guest) -> bool {
    !g.running && g.conf.current.get("lock").is_some_and(|l| l == "suspended")
}

pub fn start(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    let (node, vmid) = (ctx.node(), ctx.vmid());
    if super::ha::managed(ctx.c, vmid) && exists(ctx.c, &node, vmid) {
        return super::ha::start(ctx);
    }
    let skiplock = ctx.flag("skiplock");
    Ok(Value::String(spawn_start(
        ctx.sim, ctx.c, &node, vmid, ctx.who, skiplock,
    )))
}

/// `stop` and `shutdown`: a stopped VM is a no-op; pending changes apply on exit.
pub fn stop(ctx: &mut Ctx<'_>, kind: &str) -> ApiResult<Value> {
    let (node, vmid) = (ctx.node(), ctx.vmid());
    if kind == "qmshutdown" {
        if let Ok(g) = vm(ctx.c, &node, vmid) {
            if g.paused && !ctx.flag("forceStop") {
                return Err(ApiError::internal("VM is paused - cannot shutdown"));
            }
        }
    }
    if super::ha::managed(ctx.c, vmid) && exists(ctx.c, &node, vmid) {
        if kind == "qmstop" && ctx.flag("overrule-shutdown") {
            return Err(ApiError::param("overrule-shutdown", "Not applicable for HA resources."));
        }
        return super::ha::stop(ctx, kind == "qmshutdown");
    }
    let skiplock = ctx.flag("skiplock");
    let node2 = node.clone();
    let upid = tasks::spawn(
        ctx.sim,
        ctx.c,
        &node,
        kind,
        &vmid.to_string(),
        ctx.who,
        vec![],
        Box::new(move |c, t| {
            if !exists(c, &node2, vmid) {
                return Err(no_conf_file(&node2, vmid));
            }
            check_lock(vm(c, &node2, vmid).map_err(|e| e.message)?, skiplock)?;
            t.check_fault()?;
            stop_now(c, vmid);
            Ok(())
        }),
    );
    Ok(Value::String(upid))
}

/// QEMU exited: pending changes are applied.
pub fn stop_now(c: &mut Cluster, vmid: u32) {
    if let Some(g) = c.guests.get_mut(&vmid) {
        g.set_running(false, now_ms());
        g.paused = false;
        g.started_ms = None;
    }
    update::apply_all_pending(c, vmid);
}

fn require_running(ctx: &Ctx<'_>, node: &str, vmid: u32) -> ApiResult<()> {
    if !exists(ctx.c, node, vmid) {
        return Err(ApiError::internal(no_conf_file(node, vmid)));
    }
    if !vm(ctx.c, node, vmid)?.running {
        return Err(ApiError::internal(format!("VM {vmid} not running")));
    }
    Ok(())
}

pub fn reboot(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    let (node, vmid) = (ctx.node(), ctx.vmid());
    require_running(ctx, &node, vmid)?;
    if vm(ctx.c, &node, vmid)?.paused {
        return Err(ApiError::internal("VM is paused - cannot shutdown"));
    }
    let node2 = node.clone();
    let sim = ctx.sim.clone();
    let upid = tasks::spawn(
        ctx.sim,
        ctx.c,
        &node,
        "qmreboot",
        &vmid.to_string(),
        ctx.who,
        vec![],
        Box::new(move |c, t| {
            check_lock(vm(c, &node2, vmid).map_err(|e| e.message)?, false)?;
            t.check_fault()?;
            // qemu-server's reboot is a shutdown with a reboot request: the task ends once
            // QEMU has exited. qmeventd then runs `qm cleanup`, which starts the VM again in a
            // qmstart task of its own (as root@pam): for that while the VM is stopped.
            stop_now(c, vmid);
            spawn_start(
                &sim,
                c,
                &node2,
                vmid,
                &Identity {
                    userid: "root@pam".into(),
                    tokenid: None,
                },
                false,
            );
            Ok(())
        }),
    );
    Ok(Value::String(upid))
}

/// reset, suspend (`qmpause`), resume.
pub fn simple(ctx: &mut Ctx<'_>, kind: &str) -> ApiResult<Value> {
    let (node, vmid) = (ctx.node(), ctx.vmid());
    if kind == "qmresume" && !exists(ctx.c, &node, vmid) {
        return Err(missing_conf(&node, vmid));
    }
    if kind == "qmresume" && is_suspended_to_disk(vm(ctx.c, &node, vmid)?) {
        // PVE's resume starts a VM suspended to disk from its saved state.
        let node2 = node.clone();
        let upid = tasks::spawn(
            ctx.sim,
            ctx.c,
            &node,
            "qmresume",
            &vmid.to_string(),
            ctx.who,
            vec![],
            Box::new(move |c, t| {
                vm(c, &node2, vmid).map_err(|e| e.message)?;
                t.check_fault()?;
                let g = c.guests.get_mut(&vmid).ok_or("vanished")?;
                g.conf.current.remove("lock");
                boot(g);
                Ok(())
            }),
        );
        return Ok(Value::String(upid));
    }
    require_running(ctx, &node, vmid)?;
    if kind == "qmpause" && ctx.flag("todisk") && super::ha::managed(ctx.c, vmid) {
        return Err(ApiError::internal("Cannot suspend HA managed VM to disk"));
    }
    let kind = if kind == "qmpause" && ctx.flag("todisk") {
        "qmsuspend"
    } else {
        kind
    };
    let skiplock = ctx.flag("skiplock");
    let node2 = node.clone();
    let k2 = kind.to_string();
    let upid = tasks::spawn(
        ctx.sim,
        ctx.c,
        &node,
        kind,
        &vmid.to_string(),
        ctx.who,
        vec![],
        Box::new(move |c, t| {
            check_lock(vm(c, &node2, vmid).map_err(|e| e.message)?, skiplock)?;
            t.check_fault()?;
            if k2 == "qmsuspend" {
                stop_now(c, vmid);
                if let Some(g) = c.guests.get_mut(&vmid) {
                    g.conf.current.insert("lock".into(), "suspended".into());
                }
                return Ok(());
            }
            let g = c.guests.get_mut(&vmid).ok_or("vanished")?;
            match k2.as_str() {
                "qmpause" => g.paused = true,
                "qmresume" => g.paused = false,
                _ => g.started_ms = Some(now_ms()),
            }
            Ok(())
        }),
    );
    Ok(Value::String(upid))
}
