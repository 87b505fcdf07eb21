//! `state: present`: the file checked, found or planned, then transferred.

use ferrox_common::ansible::options::read::Choice;
use ferrox_common::ansible::protocol::{Failure, Module, Output};
use ferrox_common::pve::privileges::Write;
use ferrox_common::run::RunWide;

use crate::api::{self, Stored, UrlMetadata};
use crate::task::{valid_name, Content, Source};
use crate::{absent, checks, transfer, Context};

/// What the source tells before anything is written.
struct Known {
    name: String,
    /// Bytes, when the source says (the file's length, the URL's `Content-Length`).
    size: Option<u64>,
    /// The URL did not answer; kept to fail with once a transfer is due.
    unreachable: Option<String>,
}

pub fn run(m: &mut Module, ctx: &Context<'_>) -> Result<Output, Failure> {
    let task = ctx.task;
    let source = task
        .source
        .clone()
        .ok_or_else(|| Failure::new("state present has no source"))?;
    let shared = check_storage(ctx)?;
    if let Source::Download(_) = &source {
        // query-url-metadata demands what download-url demands of the node: a refusal
        // there is a missing privilege, not an unreachable URL.
        ctx.require(m, &[write_of(ctx, &source)])?;
    }
    let known = know(ctx, &source)?;
    if !matches!(source, Source::Appliance) {
        checks::extension_fits(task.content, &known.name).map_err(Failure::new)?;
    }
    let volid = task.volid(&known.name);
    let existing = api::listing(ctx.client, &task.node, &task.storage, task.content)
        .map_err(|e| Failure::new(format!("Failed to retrieve template '{volid}': {e}")))?
        .into_iter()
        .find(|s| s.volid == volid);
    if let Some(found) = existing.as_ref().filter(|_| !task.force) {
        if let Some(why) = &known.unreachable {
            m.warn(format!(
                "the node could not query url ({why}); {volid} is on the storage already and is kept"
            ));
        }
        refuse_differing(ctx, found, known.size)?;
        let out = ctx
            .output(false, format!("template with volid={volid} already exists"), &volid)
            .with("size", found.size);
        return match (&source, &task.checksum) {
            (Source::Download(url), Some(_)) => verify_existing(m, ctx, url, &known.name, &volid, out),
            _ => Ok(out),
        };
    }
    if let Some(why) = known.unreachable {
        return Err(Failure::new(why));
    }
    let mut writes = vec![write_of(ctx, &source)];
    if existing.is_some() {
        writes.insert(
            0,
            Write::RemoveFile {
                storage: task.storage.clone(),
            },
        );
    }
    ctx.require(m, &writes)?;
    let opened = match &source {
        Source::Upload(path) => Some(checks::open_src(path)?),
        _ => None,
    };
    let size = opened.as_ref().map(|(_, len)| *len).or(known.size);
    let msg = done_message(ctx, &source, &volid);
    if m.check_mode {
        m.plan_effect(ctx.effect(&volid, size, shared, false));
        let out = ctx.output(true, msg, &volid).with("size", size);
        return Ok(if existing.is_some() {
            out.with("replaced", true)
        } else {
            out
        });
    }
    if existing.is_some() {
        absent::remove(ctx, &volid)?;
    }
    let mut done = transfer::run(ctx, &source, &known.name, opened)?;
    let stored = api::listing(ctx.client, &task.node, &task.storage, task.content)
        .map_err(|e| {
            Failure::new(format!(
                "{volid} was transferred, but reading the storage back failed: {e}"
            ))
        })?
        .into_iter()
        .find(|s| s.volid == volid);
    for w in &done.warnings {
        m.warn(w.clone());
    }
    let stored_size = stored.and_then(|s| s.size);
    done.progress.bytes = done.progress.bytes.or(stored_size);
    let out = ctx
        .output(true, msg, &volid)
        .with("size", stored_size.or(size))
        .with("transfer", &done.progress);
    Ok(if existing.is_some() {
        out.with("replaced", true)
    } else {
        out
    })
}

/// The storage takes the content type (and `import` the node's version); whether it is
/// shared (every node then sees the file).
fn check_storage(ctx: &Context<'_>) -> Result<bool, Failure> {
    let task = ctx.task;
    let storages = api::storages(ctx.client, &task.node).map_err(|e| {
        Failure::new(format!(
            "Failed to read the storages of node {} (GET /nodes/{}/storage): {e}",
            task.node, task.node
        ))
    })?;
    checks::storage_takes(&storages, &task.node, &task.storage, task.content).map_err(Failure::new)?;
    if task.content == Content::Import {
        let version = api::version(ctx.client, &task.node).map_err(|e| {
            Failure::new(format!(
                "Failed to read the version of node {} (content_type import needs 8.4): {e}",
                task.node
            ))
        })?;
        checks::import_supported(&version, &task.node).map_err(Failure::new)?;
    }
    let entry = storages
        .as_array()
        .into_iter()
        .flatten()
        .find(|s| s["storage"] == task.storage.as_str());
    Ok(entry.is_some_and(|s| s["shared"] == 1 || s["shared"] == true))
}

/// The file's name and size: the task's, or for a URL the node's `query-url-metadata`.
fn know(ctx: &Context<'_>, source: &Source) -> Result<Known, Failure> {
    let task = ctx.task;
    let Source::Download(url) = source else {
        let name = task.name.clone().unwrap_or_default();
        let size = match source {
            Source::Upload(path) => std::fs::metadata(path).ok().map(|m| m.len()),
            _ => None,
        };
        return Ok(Known {
            name,
            size,
            unreachable: None,
        });
    };
    match api::url_metadata(ctx.client, &task.node, url) {
        Ok(meta) => {
            let name = task
                .name
                .clone()
                .unwrap_or_else(|| crate::task::normalized(&name_from(&meta, url)));
            valid_name("the file name from url", &name).map_err(Failure::new)?;
            if name.is_empty() {
                return Err(Failure::new(format!("url {url} names no file (its path ends in '/'): set template to the file name it gets on the storage")));
            }
            Ok(Known {
                name,
                size: meta.size,
                unreachable: None,
            })
        }
        Err(e) => {
            let why = format!(
                "url {url} cannot be fetched by node {}: {e}. Check that the URL is right and that node {} can reach it (proxy, DNS, firewall); the node downloads it, not the host the task runs on",
                task.node, task.node
            );
            match &task.name {
                Some(name) => Ok(Known {
                    name: name.clone(),
                    size: None,
                    unreachable: Some(why),
                }),
                None => Err(Failure::new(why)),
            }
        }
    }
}

/// The name `query-url-metadata` reports (Content-Disposition or the URL's last path
/// segment, as PVE derives it); the URL's last path segment if it reports none.
fn name_from(meta: &UrlMetadata, url: &str) -> String {
    meta.filename.clone().unwrap_or_else(|| {
        let path = url.split(['?', '#']).next().unwrap_or_default();
        let path = path.split_once("://").map(|(_, rest)| rest).unwrap_or(path);
        path.split_once('/')
            .map(|(_, p)| p.rsplit('/').next().unwrap_or_default())
            .unwrap_or_default()
            .to_string()
    })
}

/// A URL's file with a checksum, already on the storage: PVE's `download-url` computes
/// the existing file's checksum on the node and downloads nothing when it matches (its
/// content listing reports no checksum). A check run cannot start that task: it says
/// the real run verifies it.
fn verify_existing(
    m: &mut Module,
    ctx: &Context<'_>,
    url: &str,
    name: &str,
    volid: &str,
    out: Output,
) -> Result<Output, Failure> {
    ctx.require(m, &[write_of(ctx, &Source::Download(url.to_string()))])?;
    if m.check_mode {
        m.warn(format!("{volid} exists with the size the URL reports; the node verifies its checksum in a real run (a check run starts no task)"));
        return Ok(out);
    }
    match transfer::verify_existing(ctx, url, name) {
        Ok(()) => Ok(out.with("checksum_verified", true)),
        Err(e) => Err(Failure::new(format!(
            "{volid} already exists on {} and is another file: {e}. Set force: true to replace it, or set template to another name",
            ctx.subject()
        ))
        .with("volid", volid)),
    }
}

/// With a checksum, an existing file that cannot have it is refused (force replaces it).
/// PVE's API reports no checksum of a stored file (its content listing has volid,
/// format, size, ctime): a size that differs from the source's proves the checksum
/// differs; an equal size is taken as the same file.
fn refuse_differing(ctx: &Context<'_>, found: &Stored, source_size: Option<u64>) -> Result<(), Failure> {
    let Some(sum) = &ctx.task.checksum else { return Ok(()) };
    let (Some(have), Some(want)) = (found.size, source_size) else {
        return Ok(());
    };
    if have == want {
        return Ok(());
    }
    Err(Failure::new(format!(
        "{} already exists on {} with another content: it is {have} bytes and the source is {want} bytes, so its {} checksum is not the one given ({}; Proxmox VE does not report a stored file's checksum, only its size). Set force: true to replace it, or set template to another name",
        found.volid,
        ctx.subject(),
        sum.algorithm.name(),
        sum.value
    ))
    .with("volid", &found.volid))
}

fn write_of(ctx: &Context<'_>, source: &Source) -> Write {
    let storage = ctx.task.storage.clone();
    match source {
        Source::Upload(_) => Write::UploadFile { storage },
        Source::Download(_) => Write::DownloadUrl {
            node: ctx.task.node.clone(),
            storage,
        },
        Source::Appliance => Write::Appliance { storage },
    }
}

/// community.proxmox 1.6's message for a file put on the storage.
fn done_message(ctx: &Context<'_>, source: &Source, volid: &str) -> String {
    match source {
        Source::Appliance => format!("template with volid={volid} downloaded"),
        Source::Download(_) if ctx.task.checksum.is_some() => {
            format!("Checksum verified, template with volid={volid} uploaded")
        }
        _ => format!("template with volid={volid} uploaded"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_name_is_the_urls_last_path_segment_unless_pve_reports_one() {
        let none = UrlMetadata::default();
        assert_eq!(
            name_from(
                &none,
                "https://cloud.debian.org/images/debian-13-genericcloud-amd64.qcow2?x=1"
            ),
            "debian-13-genericcloud-amd64.qcow2"
        );
        assert_eq!(name_from(&none, "http://host/dir/"), "");
        let named = UrlMetadata {
            filename: Some("real.iso".into()),
            ..UrlMetadata::default()
        };
        assert_eq!(name_from(&named, "http://host/download?id=3"), "real.iso");
    }
}
