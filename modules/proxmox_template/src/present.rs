//! `state: present`: the file checked, found or planned, then transferred.

use ferrox_ansible::options::read::Choice;
use ferrox_ansible::protocol::{Failure, Module, Output};
use ferrox_pve_rules::privileges::Write;
use ferrox_run::SharedRunState;

use crate::api::{self, Stored, UrlMetadata};
use crate::task::{valid_name, Content, Source};
use crate::{absent, checks, transfer, Context};

/// What the source tells before anything is written.
struct Known {
    name: String,
    /// Bytes, when the source says (the file's length, the URL's `Content-Length`).
    size: Option<u64>,
    /// Why the node's `query-url-metadata` (a HEAD request) told nothing. download-url
    /// fetches with GET, so a URL that refuses HEAD (405, a link signed for GET) is still
    /// downloaded; the name then comes from `template` or the URL's path.
    head_failed: Option<String>,
}

pub(crate) fn run(m: &mut Module, ctx: &Context<'_>) -> Result<Output, Failure> {
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
    if task.content == Content::Import {
        import_version_fits(ctx, &known.name)?;
    }
    let volid = task.volid(&known.name);
    let existing = api::listing(ctx.client, &task.node, &task.storage, task.content)
        .map_err(|e| Failure::new(format!("Failed to retrieve template '{volid}': {e}")))?
        .into_iter()
        .find(|s| s.volid == volid);
    if let Some(found) = existing.as_ref().filter(|_| !task.force) {
        if let Some(why) = &known.head_failed {
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
    // An upload overwrites a file of its name (pve-storage's upload copies over it);
    // download-url refuses to, so an existing file is removed first.
    let remove_first = existing.is_some() && !matches!(source, Source::Upload(_));
    let mut writes = vec![write_of(ctx, &source)];
    if remove_first {
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
        let mut out = ctx.output(true, msg, &volid).with("size", size);
        if let Some(why) = &known.head_failed {
            m.warn(unlearned_warning(ctx, why, &known.name));
            out.set(ferrox_pve_rules::unknown::RESULT_KEY, ["size"]);
        }
        return Ok(if existing.is_some() {
            out.with("replaced", true)
        } else {
            out
        });
    }
    if remove_first {
        absent::remove(ctx, &volid)?;
    }
    let mut done = transfer::run(ctx, &source, &known.name, opened).map_err(|f| match &known.head_failed {
        Some(why) => Failure::new(format!(
            "{} (before it, the node's HEAD request of the url failed too: {why})",
            f.msg
        )),
        None => f,
    })?;
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

/// The storage takes the content type; whether it is shared (every node then sees the
/// file).
fn check_storage(ctx: &Context<'_>) -> Result<bool, Failure> {
    let task = ctx.task;
    let storages = api::storages(ctx.client, &task.node).map_err(|e| {
        Failure::new(format!(
            "Failed to read the storages of node {} (GET /nodes/{}/storage): {e}",
            task.node, task.node
        ))
    })?;
    checks::storage_takes(&storages, &task.node, &task.storage, task.content).map_err(Failure::new)?;
    let entry = storages
        .as_array()
        .into_iter()
        .flatten()
        .find(|s| s["storage"] == task.storage.as_str());
    Ok(entry.is_some_and(|s| s["shared"] == 1 || s["shared"] == true))
}

/// `import` takes `.ova` from PVE 8.3 and disk images from 8.4: checked against the
/// node's version once the file's name is known.
fn import_version_fits(ctx: &Context<'_>, name: &str) -> Result<(), Failure> {
    let node = &ctx.task.node;
    let version = api::version(ctx.client, node).map_err(|e| {
        let (major, minor) = checks::import_since(name);
        Failure::new(format!(
            "Failed to read the version of node {node} (content_type import of {name} needs {major}.{minor}): {e}"
        ))
    })?;
    checks::import_supported(&version, node, name).map_err(Failure::new)
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
            head_failed: None,
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
                head_failed: None,
            })
        }
        Err(e) => {
            let name = task
                .name
                .clone()
                .unwrap_or_else(|| crate::task::normalized(&name_from(&UrlMetadata::default(), url)));
            valid_name("the file name from url", &name).map_err(Failure::new)?;
            if name.is_empty() {
                return Err(Failure::new(format!(
                    "url {url} cannot be queried by node {} ({e}) and its path names no file (it ends in '/'): set template to the file name it gets on the storage; check that the URL is right and that node {} can reach it (proxy, DNS, firewall)",
                    task.node, task.node
                )));
            }
            Ok(Known {
                name,
                size: None,
                head_failed: Some(e.message.clone()),
            })
        }
    }
}

/// A check run's word on a URL the node could not query: what stays unknown until the
/// download, and why a real run downloads all the same.
fn unlearned_warning(ctx: &Context<'_>, why: &str, name: &str) -> String {
    let node = &ctx.task.node;
    let named = if ctx.task.name.is_some() {
        "template"
    } else {
        "the url's path"
    };
    format!(
        "node {node} could not query the url ({why}): its size is not known before the download, and the file name {name} comes from {named}. A real run downloads it all the same (download-url fetches with GET; servers and signed links that refuse HEAD are common); if the url is wrong or node {node} cannot reach it (proxy, DNS, firewall), that download fails"
    )
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
