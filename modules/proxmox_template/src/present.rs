//! `state: present`: the file checked, found or planned, then transferred.

use ferrox_ansible::options::read::Choice;
use ferrox_ansible::protocol::{Failure, Output};
use ferrox_pve_rules::privileges::Write;
use ferrox_run::driver::{Cx, Decided, Guard, Outcome, Prediction, Subject, Task};

use crate::api::{self, Stored, UrlMetadata};
use crate::task::{valid_name, Content, Source, TemplateTask};
use crate::{absent, checks, transfer, Context};

/// `state: present` of one file.
pub(crate) struct Present<'t> {
    task: &'t TemplateTask,
    source: Source,
    subject: String,
}

/// What the source tells before anything is written.
pub(crate) struct Known {
    name: String,
    /// Bytes, when the source says (the file's length, the URL's `Content-Length`).
    size: Option<u64>,
    /// Why the node's `query-url-metadata` (a HEAD request) told nothing. download-url
    /// fetches with GET, so a URL that refuses HEAD (405, a link signed for GET) is still
    /// downloaded; the name then comes from `template` or the URL's path.
    head_failed: Option<String>,
}

/// What was read: the storage, the source, the file on the storage if it is there.
pub(crate) struct Seen {
    /// The storage is shared (every node then sees the file).
    shared: bool,
    known: Known,
    volid: String,
    existing: Option<Stored>,
}

/// The decision.
pub(crate) enum Plan {
    /// The file is on the storage and is kept (`force` not set).
    Keep {
        volid: String,
        size: Option<u64>,
        unqueried: Option<String>,
    },
    /// The file is put on the storage (replacing the one there when `replaced`; a
    /// download removes it first, an upload copies over it).
    Put {
        volid: String,
        size: Option<u64>,
        remove_first: bool,
        replaced: bool,
    },
}

impl Decided for Plan {
    fn changes(&self) -> bool {
        matches!(self, Plan::Put { .. })
    }

    fn warnings(&self) -> Vec<String> {
        match self {
            Plan::Keep {
                volid,
                unqueried: Some(why),
                ..
            } => vec![format!(
                "the node could not query url ({why}); {volid} is on the storage already and is kept"
            )],
            _ => Vec::new(),
        }
    }
}

/// What a transfer learned.
pub(crate) struct Done {
    transfer: transfer::Done,
    /// The size the storage lists after the transfer.
    stored_size: Option<u64>,
}

impl<'t> Present<'t> {
    pub(crate) fn of(task: &'t TemplateTask) -> Result<Self, Failure> {
        let source = task
            .source
            .clone()
            .ok_or_else(|| Failure::new("state present has no source"))?;
        Ok(Present {
            task,
            source,
            subject: task.subject(),
        })
    }

    fn ctx<'c>(&'c self, cx: &Cx<'c>) -> Context<'c> {
        Context {
            client: cx.client,
            task: self.task,
        }
    }

    /// community.proxmox 1.6's result of a file put on the storage.
    fn put_output(&self, cx: &Cx<'_>, volid: &str, size: Option<u64>, replaced: bool) -> Output {
        let out = self
            .ctx(cx)
            .output(true, done_message(self.task, &self.source, volid), volid)
            .with("size", size);
        match replaced {
            true => out.with("replaced", true),
            false => out,
        }
    }

    /// A URL's file with a checksum, already on the storage: PVE's `download-url`
    /// computes the existing file's checksum on the node and downloads nothing when it
    /// matches (its content listing reports no checksum). A check run cannot start that
    /// task: it says the real run verifies it.
    fn verify_existing(
        &self,
        cx: &mut Cx<'_>,
        url: &str,
        name: &str,
        volid: &str,
        out: Output,
    ) -> Result<Output, Failure> {
        if cx.check_mode() {
            cx.warn(format!("{volid} exists with the size the URL reports; the node verifies its checksum in a real run (a check run starts no task)"));
            return Ok(out);
        }
        match transfer::verify_existing(&self.ctx(cx), url, name) {
            Ok(warnings) => {
                for w in warnings {
                    cx.warn(w);
                }
                Ok(out.with("checksum_verified", true))
            }
            Err(e) => Err(Failure::new(format!(
                "{volid} already exists on {} and is another file: {e}. Set force: true to replace it, or set template to another name",
                self.subject
            ))
            .with("volid", volid)),
        }
    }
}

impl Task for Present<'_> {
    type Seen = Seen;
    type Plan = Plan;
    type Done = Done;

    /// query-url-metadata demands what download-url demands of the node: a refusal there
    /// is a missing privilege, not an unreachable URL.
    fn read_guard(&self) -> Option<Guard<'_>> {
        matches!(self.source, Source::Download(_)).then(|| Guard {
            subject: Subject::Named(&self.subject),
            lock: None,
            writes: vec![write_of(self.task, &self.source)],
        })
    }

    fn observe(&self, cx: &mut Cx<'_>) -> Result<Seen, Failure> {
        let task = self.task;
        let ctx = self.ctx(cx);
        let shared = check_storage(&ctx)?;
        let known = know(&ctx, &self.source)?;
        if !matches!(self.source, Source::Appliance) {
            checks::extension_fits(task.content, &known.name).map_err(Failure::new)?;
        }
        if task.content == Content::Import {
            import_version_fits(&ctx, &known.name)?;
        }
        let volid = task.volid(&known.name);
        let existing = api::listing(cx.client, &task.node, &task.storage, task.content)
            .map_err(|e| Failure::new(format!("Failed to retrieve template '{volid}': {e}")))?
            .into_iter()
            .find(|s| s.volid == volid);
        Ok(Seen {
            shared,
            known,
            volid,
            existing,
        })
    }

    fn plan(&self, seen: &Seen) -> Result<Plan, Failure> {
        let volid = seen.volid.clone();
        if let Some(found) = seen.existing.as_ref().filter(|_| !self.task.force) {
            refuse_differing(self.task, found, seen.known.size)?;
            return Ok(Plan::Keep {
                volid,
                size: found.size,
                unqueried: seen.known.head_failed.clone(),
            });
        }
        Ok(Plan::Put {
            volid,
            size: seen.known.size,
            // An upload overwrites a file of its name (pve-storage's upload copies over
            // it); download-url refuses to, so an existing file is removed first.
            remove_first: seen.existing.is_some() && !matches!(self.source, Source::Upload(_)),
            replaced: seen.existing.is_some(),
        })
    }

    fn guard<'s>(&'s self, _: &'s Seen, plan: &Plan) -> Guard<'s> {
        let remove_first = matches!(plan, Plan::Put { remove_first: true, .. });
        let remove = remove_first.then(|| Write::RemoveFile {
            storage: self.task.storage.clone(),
        });
        Guard {
            subject: Subject::Named(&self.subject),
            lock: None,
            writes: remove.into_iter().chain([write_of(self.task, &self.source)]).collect(),
        }
    }

    /// The file to upload can be read (check mode too).
    fn check(&self, _: &mut Cx<'_>, _: &Seen, _: &Plan) -> Result<(), Failure> {
        match &self.source {
            Source::Upload(path) => checks::open_src(path).map(drop).map_err(Failure::new),
            _ => Ok(()),
        }
    }

    fn predict(&mut self, cx: &mut Cx<'_>, seen: &Seen, plan: &Plan) -> Result<Prediction, Failure> {
        let Plan::Put { volid, size, .. } = plan else {
            return Ok(Prediction::default());
        };
        Ok(Prediction {
            effects: vec![self.ctx(cx).effect(volid, *size, seen.shared, false)],
            warnings: seen
                .known
                .head_failed
                .iter()
                .map(|why| unlearned_warning(self.task, why, &seen.known.name))
                .collect(),
        })
    }

    fn execute(&self, cx: &mut Cx<'_>, seen: &Seen, plan: &Plan) -> Result<Done, Failure> {
        let Plan::Put {
            volid, remove_first, ..
        } = plan
        else {
            unreachable!("the driver carries out only a plan that changes the storage")
        };
        let ctx = self.ctx(cx);
        let removed_warnings = match remove_first {
            true => absent::remove(&ctx, volid)?,
            false => Vec::new(),
        };
        let opened = match &self.source {
            Source::Upload(path) => Some(checks::open_src(path).map_err(Failure::new)?),
            _ => None,
        };
        let transferred =
            transfer::run(&ctx, &self.source, &seen.known.name, opened).map_err(|f| match &seen.known.head_failed {
                Some(why) => Failure::new(format!(
                    "{} (before it, the node's HEAD request of the url failed too: {why})",
                    f.msg
                )),
                None => f,
            })?;
        let task = self.task;
        let stored = api::listing(cx.client, &task.node, &task.storage, task.content)
            .map_err(|e| {
                Failure::new(format!(
                    "{volid} was transferred, but reading the storage back failed: {e}"
                ))
            })?
            .into_iter()
            .find(|s| &s.volid == volid);
        for w in removed_warnings.into_iter().chain(transferred.warnings.iter().cloned()) {
            cx.warn(w);
        }
        Ok(Done {
            transfer: transferred,
            stored_size: stored.and_then(|s| s.size),
        })
    }

    fn report(self, cx: &mut Cx<'_>, seen: &Seen, plan: &Plan, outcome: Outcome<Done>) -> Result<Output, Failure> {
        match (plan, outcome) {
            (Plan::Keep { volid, size, .. }, _) => {
                let out = self
                    .ctx(cx)
                    .output(false, format!("template with volid={volid} already exists"), volid)
                    .with("size", *size);
                match (&self.source, &self.task.checksum) {
                    (Source::Download(url), Some(_)) => self.verify_existing(cx, url, &seen.known.name, volid, out),
                    _ => Ok(out),
                }
            }
            (
                Plan::Put {
                    volid, size, replaced, ..
                },
                Outcome::Done(mut done),
            ) => {
                done.transfer.progress.bytes = done.transfer.progress.bytes.or(done.stored_size);
                Ok(self
                    .put_output(cx, volid, done.stored_size.or(*size), *replaced)
                    .with("transfer", &done.transfer.progress))
            }
            (
                Plan::Put {
                    volid, size, replaced, ..
                },
                _,
            ) => {
                let mut out = self.put_output(cx, volid, *size, *replaced);
                if seen.known.head_failed.is_some() {
                    out.set(ferrox_pve_rules::unknown::RESULT_KEY, ["size"]);
                }
                Ok(out)
            }
        }
    }
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
fn unlearned_warning(task: &TemplateTask, why: &str, name: &str) -> String {
    let node = &task.node;
    let named = if task.name.is_some() {
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

/// With a checksum, an existing file that cannot have it is refused (force replaces it).
/// PVE's API reports no checksum of a stored file (its content listing has volid,
/// format, size, ctime): a size that differs from the source's proves the checksum
/// differs; an equal size is taken as the same file.
fn refuse_differing(task: &TemplateTask, found: &Stored, source_size: Option<u64>) -> Result<(), Failure> {
    let Some(sum) = &task.checksum else { return Ok(()) };
    let (Some(have), Some(want)) = (found.size, source_size) else {
        return Ok(());
    };
    if have == want {
        return Ok(());
    }
    Err(Failure::new(format!(
        "{} already exists on {} with another content: it is {have} bytes and the source is {want} bytes, so its {} checksum is not the one given ({}; Proxmox VE does not report a stored file's checksum, only its size). Set force: true to replace it, or set template to another name",
        found.volid,
        task.subject(),
        sum.algorithm.name(),
        sum.value
    ))
    .with("volid", &found.volid))
}

fn write_of(task: &TemplateTask, source: &Source) -> Write {
    let storage = task.storage.clone();
    match source {
        Source::Upload(_) => Write::UploadFile { storage },
        Source::Download(_) => Write::DownloadUrl {
            node: task.node.clone(),
            storage,
        },
        Source::Appliance => Write::Appliance { storage },
    }
}

/// community.proxmox 1.6's message for a file put on the storage.
fn done_message(task: &TemplateTask, source: &Source, volid: &str) -> String {
    match source {
        Source::Appliance => format!("template with volid={volid} downloaded"),
        Source::Download(_) if task.checksum.is_some() => {
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
