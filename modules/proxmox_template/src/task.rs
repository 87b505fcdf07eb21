//! The task's options read once, through [`Reader`], into a typed task; the checks
//! that need no cluster (a file name with `/`, what a present task fetches from).

use std::path::{Path, PathBuf};
use std::time::Duration;

use ferrox_ansible::options::read::{Choice, Reader};
use ferrox_ansible::options::Params;

pub(crate) use crate::choices::{Algorithm, Content, State};
use crate::options;

/// Where a present file comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Source {
    /// A local file streamed to `POST .../upload`.
    Upload(PathBuf),
    /// A URL the node fetches (`POST .../download-url`).
    Download(String),
    /// An appliance template from PVE's own index (`POST /nodes/{node}/aplinfo`).
    Appliance,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Checksum {
    pub algorithm: Algorithm,
    /// Lower case, as PVE compares it.
    pub value: String,
}

#[derive(Debug, Clone)]
pub(crate) struct TemplateTask {
    pub node: String,
    pub storage: String,
    pub content: Content,
    pub state: State,
    /// `None` for an absent task.
    pub source: Option<Source>,
    /// The file name the task gives (`template`, or the base name of `src`); `None`
    /// for a download named by the URL (query-url-metadata says).
    pub name: Option<String>,
    pub checksum: Option<Checksum>,
    pub force: bool,
    pub timeout: Duration,
}

impl TemplateTask {
    pub(crate) fn from_params(params: &Params) -> Result<TemplateTask, String> {
        let opts = options::options();
        let r = Reader::new(params.clone(), &opts);
        Self::read(&r)
    }

    fn read(r: &Reader<'_>) -> Result<TemplateTask, String> {
        let state = r.choice::<State>("state");
        let content = r.choice::<Content>("content_type");
        let template = r.non_empty("template");
        let src = r.non_empty("src");
        let url = r.non_empty("url");
        let force = r.bool_or_default("force");
        let timeout = Duration::from_secs(r.int_or_default("timeout").max(1) as u64);
        let storage = r.str_or_default("storage");
        let node = r
            .non_empty("node")
            .ok_or("node is required: name the Proxmox VE node whose storage holds the file (node: pve1)")?;
        let checksum = match (
            r.non_empty("checksum"),
            r.str("checksum_algorithm").and_then(Algorithm::parse),
        ) {
            (Some(value), Some(algorithm)) => Some(Checksum {
                algorithm,
                value: value.trim().to_ascii_lowercase(),
            }),
            _ => None,
        };
        if let Some(name) = &template {
            valid_name("template", name)?;
        }
        let template = template.map(|n| normalized(&n));
        let (source, name) = match (state, src, url) {
            (State::Absent, _, _) => (None, template),
            (State::Present, Some(src), _) => {
                let path = PathBuf::from(&src);
                let name = file_name(&path)
                    .ok_or_else(|| format!("src {src:?} names no file: give the path of the file to upload"))?;
                (Some(Source::Upload(path)), Some(normalized(&name)))
            }
            (State::Present, None, Some(url)) => (Some(Source::Download(url)), template),
            (State::Present, None, None) if content == Content::Vztmpl => {
                let name = template.ok_or("template param for downloading appliance template is mandatory")?;
                (Some(Source::Appliance), Some(name))
            }
            (State::Present, None, None) => {
                return Err("src or url param for uploading template file is mandatory".into())
            }
        };
        Ok(TemplateTask {
            node,
            storage,
            content,
            state,
            source,
            name,
            checksum,
            force,
            timeout,
        })
    }

    /// `storage:content/name`, PVE's volume id of the file.
    pub(crate) fn volid(&self, name: &str) -> String {
        format!("{}:{}/{name}", self.storage, self.content.name())
    }
}

/// PVE stores the file under its name in the storage's directory for the content type:
/// a `/` would name another directory, so it is refused before anything is written.
pub(crate) fn valid_name(option: &str, name: &str) -> Result<(), String> {
    if name.contains('/') {
        return Err(format!(
            "{option} {name:?} contains '/': it is the file's name on the storage, not a path; give only the name (for example {:?})",
            name.rsplit('/').next().unwrap_or_default()
        ));
    }
    Ok(())
}

/// The name PVE gives an uploaded or downloaded file (pve-storage's
/// `normalize_content_filename`): every character but `a-zA-Z0-9_.-` becomes `_`. The
/// file is looked for under that name, so a name with a space is found again.
pub(crate) fn normalized(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn file_name(path: &Path) -> Option<String> {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .filter(|n| !n.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn read(args: Value) -> (Result<TemplateTask, String>, Vec<&'static str>) {
        let opts = options::options();
        let mut args = args;
        if args.get("node").is_none() {
            args["node"] = json!("pve1");
        }
        let r = Reader::new(Params::with_defaults(&opts, &args), &opts);
        let task = TemplateTask::read(&r);
        (task, r.unread())
    }

    #[test]
    fn every_declared_option_of_the_module_is_read() {
        let (task, unread) = read(json!({"url": "http://x/a.iso"}));
        assert!(task.is_ok());
        let unread = ferrox_run::connection::task_options_unread(unread);
        assert!(unread.is_empty(), "options without a reader: {unread:?}");
    }

    #[test]
    fn the_source_decides_the_name() {
        let (task, _) = read(json!({"src": "/tmp/dir/debian.iso", "content_type": "iso"}));
        let task = task.unwrap();
        assert_eq!(task.source, Some(Source::Upload("/tmp/dir/debian.iso".into())));
        assert_eq!(task.volid(task.name.as_deref().unwrap()), "local:iso/debian.iso");
        let (task, _) = read(json!({"url": "http://x/y/debian.qcow2", "content_type": "import"}));
        assert_eq!(task.unwrap().name, None);
        let (task, _) = read(json!({"template": "ubuntu.tar.zst"}));
        assert_eq!(task.unwrap().source, Some(Source::Appliance));
    }

    #[test]
    fn a_name_with_a_slash_is_refused_naming_the_option() {
        let (task, _) = read(json!({"url": "http://x/a.iso", "template": "sub/a.iso"}));
        assert_eq!(
            task.unwrap_err(),
            "template \"sub/a.iso\" contains '/': it is the file's name on the storage, not a path; give only the name (for example \"a.iso\")"
        );
    }

    #[test]
    fn a_present_task_needs_a_source_as_in_1_6() {
        let (task, _) = read(json!({"content_type": "iso"}));
        assert_eq!(
            task.unwrap_err(),
            "src or url param for uploading template file is mandatory"
        );
        let (task, _) = read(json!({}));
        assert_eq!(
            task.unwrap_err(),
            "template param for downloading appliance template is mandatory"
        );
    }

    #[test]
    fn names_are_looked_for_as_pve_stores_them() {
        let (task, _) = read(json!({"src": "/isos/Debian 13 (netinst).iso", "content_type": "iso"}));
        assert_eq!(task.unwrap().name.as_deref(), Some("Debian_13__netinst_.iso"));
        assert_eq!(normalized("ä-1.2_x.iso"), "_-1.2_x.iso");
    }

    #[test]
    fn checksums_are_compared_in_lower_case() {
        let (task, _) = read(json!({"url": "http://x/a.iso", "checksum": " ABC ", "checksum_algorithm": "sha256"}));
        assert_eq!(
            task.unwrap().checksum,
            Some(Checksum {
                algorithm: Algorithm::Sha256,
                value: "abc".into()
            })
        );
    }
}
