//! The appliance index (`GET /nodes/{node}/aplinfo`) and downloading one of its
//! templates (`POST`, pve-manager's `apl_download`): a `download` task that must verify
//! the index's checksum (`sha512sum`, else `md5sum`).

use super::download::{self, Wanted};
use crate::api::Ctx;
use crate::error::{ApiError, ApiResult};
use serde_json::{json, Value};

/// Every appliance, as `read_aplinfo` records them.
pub fn list(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    let out = ctx
        .c
        .appliances
        .iter()
        .map(|a| {
            let source = a
                .location
                .rsplit_once('/')
                .map(|(s, _)| s.to_string())
                .unwrap_or_default();
            let mut v = json!({
                "package": a.package, "version": a.version, "type": a.kind, "os": a.os, "section": a.section,
                "architecture": a.architecture, "location": a.location, "infopage": a.infopage,
                "headline": a.headline, "description": "", "maintainer": "Proxmox Support Team <support@proxmox.com>",
                "source": source, "template": a.template(),
            });
            if let Some(s) = &a.sha512sum {
                v["sha512sum"] = json!(s);
            }
            if let Some(s) = &a.md5sum {
                v["md5sum"] = json!(s);
            }
            v
        })
        .collect();
    Ok(Value::Array(out))
}

/// `POST /nodes/{node}/aplinfo`: the template by name, onto a storage that holds templates.
pub fn download(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    let node = ctx.node();
    let template = ctx.get("template").unwrap_or("").to_string();
    let Some(appliance) = ctx.c.appliances.iter().find(|a| a.template() == template).cloned() else {
        return Err(ApiError::param("template", "no such template"));
    };
    let sid = ctx.get("storage").unwrap_or("").to_string();
    let sd = super::storage_on_node(ctx.c, &sid, &node)?;
    if appliance.kind != "lxc" && appliance.kind != "openvz" {
        return Err(ApiError::internal(format!(
            "unknown template type '{}'",
            appliance.kind
        )));
    }
    if !sd.has_content("vztmpl") {
        return Err(ApiError::internal(format!(
            "storage '{sid}' does not support templates"
        )));
    }
    let checksum = match (&appliance.sha512sum, &appliance.md5sum) {
        (Some(s), _) => Some(("sha512".to_string(), s.clone())),
        (None, Some(m)) => Some(("md5".to_string(), m.clone())),
        (None, None) => None,
    };
    let wanted = Wanted {
        sd,
        volname: format!("vztmpl/{template}"),
        format: None,
        content: "vztmpl".into(),
        url: appliance.location.clone(),
        checksum,
        verify: true,
        compression: None,
        hash_required: true,
    };
    download::start(ctx, &template, wanted).map(Value::String)
}
