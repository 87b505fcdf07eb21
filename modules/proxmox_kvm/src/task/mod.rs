//! The task: every option of `proxmox_kvm` read once, at the start, into typed values.
//!
//! This is the only place that reads a parameter by name. Types and defaults come from
//! the declaration ([`crate::options`]) through [`Reader`], which holds each read to
//! it; the declaration test below shows every declared option is read here.

pub(crate) mod choices;
pub(crate) mod config;
pub(crate) mod placement;
#[cfg(test)]
pub(crate) mod testing;

use std::time::Duration;

use ferrox_ansible::check_mode_assume::Assume;
use ferrox_ansible::options::{Opt, Params, Reader};
use ferrox_cluster::guest_net::Family;
use ferrox_run::connection::ConnectionParams;
use serde_json::Value;

pub(crate) use choices::{ApplyPending, State, UpdatePassword};
pub(crate) use config::Config;

/// What the run does, in 1.6's order: a `clone` goes first, then `delete`, `revert`,
/// `migrate` (each ends the run), else the state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Operation {
    Clone,
    DeleteKeys(Vec<String>),
    RevertKeys(Vec<String>),
    Migrate,
    State(State),
}

/// `clone` and the options of PVE's clone call.
#[derive(Debug, Clone, Default)]
pub(crate) struct CloneTask {
    /// The source's name (`clone`; any text when `vmid` names the source).
    pub(crate) source: String,
    pub(crate) newid: Option<u32>,
    pub(crate) full: bool,
    /// `None` also for `unspecified` (the storage's default).
    pub(crate) format: Option<String>,
    pub(crate) snapname: Option<String>,
    /// The node the clone is to end on.
    pub(crate) target: Option<String>,
}

/// A restore from `archive` (the create call's restore parameters).
#[derive(Debug, Clone, Default)]
pub(crate) struct Restore {
    pub(crate) archive: Option<String>,
    pub(crate) unique: Option<bool>,
    pub(crate) live_restore: Option<bool>,
    pub(crate) import_working_storage: Option<String>,
}

/// `migrate: true`'s call parameters besides the target node.
#[derive(Debug, Clone, Default)]
pub(crate) struct Migration {
    pub(crate) with_local_disks: bool,
    pub(crate) targetstorage: Option<String>,
    pub(crate) with_conntrack_state: Option<bool>,
    pub(crate) migration_network: Option<String>,
    pub(crate) migration_type: Option<String>,
}

/// `state: absent`'s extras.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Removal {
    pub(crate) purge: bool,
    pub(crate) destroy_unreferenced_disks: bool,
}

/// What `state: started`/`restarted` waits for in the guest.
#[derive(Debug, Clone)]
pub(crate) struct GuestWait {
    /// The option that asked for it, for messages (`wait_for_ip`, `wait_for_agent`).
    pub(crate) option: &'static str,
    /// `Some(family)`: a usable address of that family, not just an answering agent.
    pub(crate) address: Option<Family>,
    pub(crate) timeout: Duration,
}

/// `efidisk0`'s certificate sub-options, for the checks of a new EFI disk.
#[derive(Debug, Clone, Default)]
pub(crate) struct EfiCerts {
    pub(crate) ms_cert: Option<String>,
    pub(crate) pre_enrolled_keys: Option<bool>,
}

/// One `proxmox_kvm` task, typed.
#[derive(Debug, Clone)]
pub(crate) struct KvmTask {
    pub(crate) operation: Operation,
    /// `vmid` (0 and unset alike: not given). When cloning, the source.
    pub(crate) vmid: Option<u32>,
    /// `name` as given (lookups by name take it as it is).
    pub(crate) name: Option<String>,
    pub(crate) node: Option<String>,
    /// `placement`: how to choose the node of a VM created without `node`.
    pub(crate) placement: Option<placement::Placement>,
    pub(crate) pool: Option<String>,
    pub(crate) update: bool,
    pub(crate) apply_pending: ApplyPending,
    pub(crate) update_password: UpdatePassword,
    pub(crate) digest: Option<String>,
    pub(crate) skiplock: bool,
    pub(crate) force: bool,
    pub(crate) ha_managed: bool,
    /// Each PVE task's wait (at least 1 s: the declared bound).
    pub(crate) timeout: Duration,
    /// `vmid_range`, checked: `(first, last)`.
    pub(crate) vmid_range: Option<(u32, u32)>,
    /// The target storage of a clone, restore or (`targetstorage` aside) clone move.
    pub(crate) storage: Option<String>,
    pub(crate) bwlimit: Option<i64>,
    pub(crate) bios: Option<String>,
    pub(crate) efi: Option<EfiCerts>,
    pub(crate) clone: CloneTask,
    pub(crate) restore: Restore,
    pub(crate) migration: Migration,
    pub(crate) removal: Removal,
    pub(crate) wait: Option<GuestWait>,
    pub(crate) ip_family: Family,
    /// The VM config keys the task asks for.
    pub(crate) config: Config,
    /// The config keys (and sub-keys) only the node that parses them decides: unknown to
    /// the schema, or brought by a later release; sent, and a node's refusal of them
    /// explained ([`ferrox_pve_rules::propstring::versions`]).
    pub(crate) newer_keys: Vec<ferrox_pve_rules::propstring::versions::Versioned>,
    /// What a check run may take as existing (`check_mode_assume`).
    pub(crate) assume: Assume,
    /// A check run (`--check`): everything is read and decided, nothing written.
    pub(crate) check_mode: bool,
}

impl KvmTask {
    /// Reads validated parameters as `opts` declares them (the module's options); `conn`
    /// is the connection part, read by `common`.
    pub(crate) fn read(
        params: Params,
        opts: &[Opt],
        conn: &ConnectionParams,
        check_mode: bool,
    ) -> Result<KvmTask, String> {
        let r = Reader::new(params, opts);
        let task = Self::from_reader(&r, check_mode)?;
        check_root_only(&r, conn)?;
        Ok(task)
    }

    fn from_reader(r: &Reader, check_mode: bool) -> Result<KvmTask, String> {
        let state = r.choice::<State>("state");
        let clone = CloneTask {
            source: r.str("clone").unwrap_or_default().to_string(),
            newid: r.vmid("newid")?,
            full: r.bool_or_default("full"),
            format: r.non_empty("format").filter(|f| f != "unspecified"),
            snapname: r.non_empty("snapname"),
            target: r.non_empty("target"),
        };
        let delete = r.non_empty("delete");
        let revert = r.non_empty("revert");
        let migrate = r.bool_or_default("migrate");
        let operation = if !clone.source.is_empty() {
            Operation::Clone
        } else if let Some(keys) = delete {
            Operation::DeleteKeys(keys_of(&keys))
        } else if let Some(keys) = revert {
            Operation::RevertKeys(keys_of(&keys))
        } else if migrate {
            Operation::Migrate
        } else {
            Operation::State(state)
        };
        let ip_family = r.choice::<Family>("ip_family");
        let wait_timeout = Duration::from_secs(r.int_or_default("wait_timeout").max(1) as u64);
        let wait = if r.bool_or_default("wait_for_ip") {
            Some(GuestWait {
                option: "wait_for_ip",
                address: Some(ip_family),
                timeout: wait_timeout,
            })
        } else if r.bool_or_default("wait_for_agent") {
            Some(GuestWait {
                option: "wait_for_agent",
                address: None,
                timeout: wait_timeout,
            })
        } else {
            None
        };
        let (config, newer_keys) = config::config(r)?;
        Ok(KvmTask {
            operation,
            vmid: r.vmid("vmid")?,
            name: r.str("name").map(str::to_string),
            node: r.non_empty("node"),
            placement: placement::Placement::read(r)?,
            pool: r.non_empty("pool"),
            update: r.bool_or_default("update"),
            apply_pending: r.choice("apply_pending"),
            update_password: r.choice("update_password"),
            digest: r.str("digest").map(str::to_string),
            skiplock: r.bool("skiplock").unwrap_or(false),
            force: r.bool("force").unwrap_or(false),
            ha_managed: r.bool("ha_managed").unwrap_or(false),
            timeout: Duration::from_secs(r.int_or_default("timeout").max(1) as u64),
            vmid_range: vmid_range(r.list("vmid_range"))?,
            storage: r.non_empty("storage"),
            bwlimit: r.int("bwlimit"),
            bios: r.str("bios").map(str::to_string),
            efi: r.sub("efidisk0").map(|efi| EfiCerts {
                ms_cert: efi.str("ms_cert").map(str::to_string),
                pre_enrolled_keys: efi.bool("pre_enrolled_keys"),
            }),
            clone,
            restore: Restore {
                archive: r.non_empty("archive"),
                unique: r.bool("unique"),
                live_restore: r.bool("live_restore"),
                import_working_storage: r.non_empty("import_working_storage"),
            },
            migration: Migration {
                with_local_disks: r.bool_or_default("with_local_disks"),
                targetstorage: r.non_empty("targetstorage"),
                with_conntrack_state: r.bool("with_conntrack_state"),
                migration_network: r.non_empty("migration_network"),
                migration_type: r.non_empty("migration_type"),
            },
            removal: Removal {
                purge: r.bool_or_default("purge"),
                destroy_unreferenced_disks: r.bool_or_default("destroy_unreferenced_disks"),
            },
            wait,
            ip_family,
            config,
            newer_keys,
            assume: Assume::from_params(r.params(), check_mode),
            check_mode,
        })
    }

    /// `name` when it is not empty (1.6 tests it for truth where it names a new VM).
    pub(crate) fn given_name(&self) -> Option<&str> {
        self.name.as_deref().filter(|n| !n.is_empty())
    }

    pub(crate) fn reboots_for_pending(&self) -> bool {
        self.apply_pending == ApplyPending::Reboot
    }

    /// Whether the task may create a VM on a node it does not name, so `placement`
    /// chooses one (the binary decides whether it actually creates one once it has
    /// looked).
    pub(crate) fn chooses_node(&self) -> bool {
        let creates = matches!(self.operation, Operation::State(State::Present))
            || (self.operation == Operation::Clone && self.clone.target.is_none());
        creates && self.node.is_none() && self.placement.is_some()
    }
}

/// `delete` (config keys removed) or `revert` (pending changes dropped).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KeyEdit {
    Delete,
    Revert,
}

impl KeyEdit {
    /// What 1.6's messages say was done (`Settings has deleted on ...`).
    pub(crate) fn done(self) -> &'static str {
        match self {
            KeyEdit::Delete => "deleted",
            KeyEdit::Revert => "reverted",
        }
    }

    /// The start of 1.6's failures (`Unable to delete settings on VM`).
    pub(crate) fn unable(self) -> &'static str {
        match self {
            KeyEdit::Delete => "Unable to delete settings on VM",
            KeyEdit::Revert => "Unable to revert settings on VM",
        }
    }
}

/// `delete`/`revert`: config keys separated by commas, semicolons or spaces.
fn keys_of(list: &str) -> Vec<String> {
    list.split([',', ';', ' '])
        .filter(|k| !k.is_empty())
        .map(str::to_string)
        .collect()
}

/// `vmid_range` as `(first, last)`, refused unless `100 <= first <= last`.
fn vmid_range(range: Option<&Vec<Value>>) -> Result<Option<(u32, u32)>, String> {
    let Some(range) = range else { return Ok(None) };
    let bounds: Vec<u32> = range
        .iter()
        .filter_map(Value::as_u64)
        .filter_map(|n| u32::try_from(n).ok())
        .collect();
    let [first, last] = bounds[..] else {
        return Err(format!(
            "vmid_range must be two vmids [first, last], got: {}",
            Value::Array(range.clone())
        ));
    };
    if first < 100 || first > last {
        return Err(format!(
            "vmid_range must satisfy 100 <= first <= last, got: [{first}, {last}]"
        ));
    }
    Ok(Some((first, last)))
}

/// Fails like 1.6 when `args`/`skiplock` are used without `root@pam` and a password.
fn check_root_only(r: &Reader, conn: &ConnectionParams) -> Result<(), String> {
    let root_by_password = conn.user == "root@pam" && conn.password.is_some();
    for option in ["args", "skiplock"] {
        if r.is_set(option) && !root_by_password {
            return Err(format!("{option} parameter require root@pam user. "));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferrox_ansible::options::coerce::Dialect;
    use ferrox_ansible::options::validate::validate;
    use ferrox_ansible::options::{Choice, Opt};
    use serde_json::{json, Map};

    /// Options accepted for compatibility that change nothing: only their warning (in the
    /// declaration) looks at them.
    const ACCEPTED_ONLY: &[&str] = &["update_unsafe"];

    /// The options read by `common`'s own typed constructors rather than here.
    fn read_in_common() -> Vec<Opt> {
        let mut opts = ferrox_run::connection::options();
        opts.push(ferrox_ansible::check_mode_assume::option());
        opts
    }

    fn validated(args: Value) -> Params {
        let spec = crate::docs::spec();
        let args = args.as_object().unwrap().clone();
        let v = validate(spec.name, &spec.options, &spec.rules, args, false, Dialect::default()).unwrap();
        Params::new(v.params)
    }

    /// A valid value for every option: its default, else its first choice, else one of
    /// its type.
    fn every_option_set() -> Map<String, Value> {
        let mut args = Map::new();
        for opt in crate::options::all() {
            if read_in_common().iter().any(|o| o.name == opt.name) {
                continue;
            }
            let value = match (&opt.default, opt.choices.first(), opt.kind) {
                (Some(d), _, _) => d.clone(),
                (None, Some(c), _) => c.clone(),
                (None, None, ferrox_ansible::options::Kind::Bool) => json!(true),
                (None, None, ferrox_ansible::options::Kind::Int) => json!(opt.bounds.0.unwrap_or(0).max(1)),
                (None, None, ferrox_ansible::options::Kind::List) => json!([]),
                (None, None, ferrox_ansible::options::Kind::Dict) => json!({}),
                _ => json!(""),
            };
            args.insert(opt.name.to_string(), value);
        }
        args
    }

    /// Every declared option is read here with a getter of its declared type, and each
    /// option with a default is read as defaulted (the getters panic otherwise).
    #[test]
    fn the_typed_task_reads_every_declared_option_as_declared() {
        let mut args = every_option_set();
        args.insert("api_host".into(), json!("pve"));
        args.insert("api_user".into(), json!("root@pam"));
        args.insert("api_password".into(), json!("pw"));
        // Mutually exclusive with each other (and read whether set or not).
        for exclusive in ["delete", "revert", "clone", "update"] {
            args.remove(exclusive);
        }
        // Values of their own where "one of the type" would not be valid.
        args.insert("vmid_range".into(), json!([100, 200]));
        args.insert("vmid".into(), json!(100));
        args.insert("newid".into(), json!(101));
        args.insert(
            "efidisk0".into(),
            json!({"storage": "local-lvm", "pre_enrolled_keys": true, "ms_cert": "2023k"}),
        );
        args.insert("tpmstate0".into(), json!({"storage": "local-lvm"}));
        let opts = crate::options::all();
        let r = Reader::new(validated(Value::Object(args)), &opts);
        let task = KvmTask::from_reader(&r, true).unwrap();
        let in_common: Vec<&str> = read_in_common().iter().map(|o| o.name).collect();
        let unread: Vec<&str> = r
            .unread()
            .into_iter()
            .filter(|n| !in_common.contains(n) && !ACCEPTED_ONLY.contains(n))
            .collect();
        assert_eq!(
            unread,
            Vec::<&str>::new(),
            "declared options the typed task does not read"
        );
        assert_eq!(task.vmid_range, Some((100, 200)));
    }

    #[test]
    fn unset_options_take_the_declared_defaults() {
        let task = KvmTask::from_reader(
            &Reader::new(
                validated(json!({"api_host": "pve", "api_user": "u@pve", "api_password": "pw", "name": "web"})),
                &crate::options::all(),
            ),
            false,
        )
        .unwrap();
        let declared = |name: &str| {
            crate::options::all()
                .into_iter()
                .find(|o| o.name == name)
                .unwrap()
                .default
                .unwrap()
        };
        assert_eq!(task.operation, Operation::State(State::Present));
        assert_eq!(json!(task.timeout.as_secs()), declared("timeout"));
        assert_eq!(json!(task.clone.full), declared("full"));
        assert_eq!(json!(task.ip_family.name()), declared("ip_family"));
        assert_eq!(json!(task.apply_pending.name()), declared("apply_pending"));
        assert_eq!(json!(task.update_password.name()), declared("update_password"));
        assert_eq!(json!(task.update), declared("update"));
        assert!(task.wait.is_none());
    }

    #[test]
    fn the_operation_follows_1_6s_order() {
        let read = |extra: Value| {
            let mut args = json!({"api_host": "pve", "api_user": "u@pve", "api_password": "pw", "name": "web"});
            args.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
            let opts = crate::options::all();
            KvmTask::from_reader(&Reader::new(validated(args), &opts), false)
                .unwrap()
                .operation
        };
        assert_eq!(read(json!({"clone": "base", "migrate": true})), Operation::Clone);
        assert_eq!(
            read(json!({"delete": "net1, ide2", "migrate": true})),
            Operation::DeleteKeys(vec!["net1".into(), "ide2".into()])
        );
        assert_eq!(
            read(json!({"revert": "memory", "state": "started"})),
            Operation::RevertKeys(vec!["memory".into()])
        );
        assert_eq!(read(json!({"migrate": true, "state": "stopped"})), Operation::Migrate);
        assert_eq!(
            read(json!({"state": "hibernated"})),
            Operation::State(State::Hibernated)
        );
    }

    #[test]
    fn bad_vmids_and_ranges_name_the_option() {
        let fails = |extra: Value| {
            let mut args = json!({"api_host": "pve", "api_user": "u@pve", "api_password": "pw", "name": "web"});
            args.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
            let opts = crate::options::all();
            KvmTask::from_reader(&Reader::new(validated(args), &opts), false).unwrap_err()
        };
        assert_eq!(
            fails(json!({"vmid": 99})),
            "vmid must be a VMID between 100 and 999999999, got: 99"
        );
        assert_eq!(
            fails(json!({"newid": 5, "clone": "x"})),
            "newid must be a VMID between 100 and 999999999, got: 5"
        );
        assert_eq!(
            fails(json!({"vmid_range": [300, 200]})),
            "vmid_range must satisfy 100 <= first <= last, got: [300, 200]"
        );
        assert_eq!(
            fails(json!({"vmid_range": [300]})),
            "vmid_range must be two vmids [first, last], got: [300]"
        );
    }

    #[test]
    fn root_only_options() {
        let conn = |user: &str, password: Option<&str>| ConnectionParams {
            user: user.into(),
            password: password.map(str::to_string),
            ..ConnectionParams::default()
        };
        let opts = crate::options::all();
        let r = Reader::new(
            validated(
                json!({"api_host": "pve", "api_user": "u@pve", "api_token_id": "t", "api_token_secret": "s", "name": "x", "args": "-x"}),
            ),
            &opts,
        );
        assert_eq!(
            check_root_only(&r, &conn("ansible@pve", None)).unwrap_err(),
            "args parameter require root@pam user. "
        );
        assert!(check_root_only(&r, &conn("root@pam", Some("pw"))).is_ok());
    }

    /// Outside this module, no file of proxmox_kvm reads parameters: none names `Params`
    /// or `Reader` (options.rs declares them, and its `warn_when` rules read them).
    #[test]
    fn no_other_file_reads_parameters() {
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut offenders = Vec::new();
        let mut dirs = vec![src.clone()];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    if path != src.join("task") {
                        dirs.push(path);
                    }
                } else if path != src.join("options.rs") {
                    let text = std::fs::read_to_string(&path).unwrap().replace("ConnectionParams", "");
                    if text.contains("Params") || text.contains("Reader") {
                        offenders.push(path.strip_prefix(&src).unwrap().display().to_string());
                    }
                }
            }
        }
        offenders.sort();
        assert_eq!(
            offenders,
            Vec::<String>::new(),
            "files reading parameters outside the typed task"
        );
    }
}
