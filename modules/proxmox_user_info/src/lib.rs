//! The `ferrox.proxmox.proxmox_user_info` module: the users of the cluster, or one user.
//!
//! Option for option and result for result community.proxmox 1.6's, except where 1.6
//! hid a failure: a user read PVE refuses (403, 401, 5xx other than its "no such user")
//! fails naming the cause and the privilege, never "no such user"; O(user) without
//! O(domain) matches that login name in every realm instead of being ignored.
//!
//! It only reads: a [`driver::Read`] task, observed and reported.

mod docs;
mod normalize;

use ferrox_ansible::options::{ModuleSpec, Opt, Params, Reader, Rules, Support};
use ferrox_ansible::protocol::{Failure, Module, Output};
use ferrox_run::connection;
use ferrox_run::driver::{self, Cx, Read};
use serde_json::Value;

/// The module's options, declared once.
fn options() -> Vec<Opt> {
    let mut options = connection::options();
    options.extend([
        Opt::str("domain")
            .aliases(&["realm"])
            .desc("Restrict the results to users of this authentication realm (V(pam), V(pve), an LDAP or AD realm)."),
        Opt::str("user")
            .aliases(&["name"])
            .desc("Restrict the results to the user with this login name (the part before C(@)).")
            .desc("With O(domain), the one user O(user)C(@)O(domain) is read; without it, the users of that name in every realm are listed (community.proxmox 1.6 ignored O(user) then and returned every user)."),
        Opt::str("userid")
            .desc("Restrict the results to the user with this ID, C(name@realm).")
            .desc("A user that does not exist gives an empty RV(proxmox_users) (as in community.proxmox 1.6, so a playbook can test for it); a read Proxmox VE refuses fails, naming the cause."),
    ]);
    options
}

pub fn spec() -> ModuleSpec {
    ModuleSpec {
        name: "proxmox_user_info",
        short_description: "Retrieve information about one or more Proxmox VE users",
        description: docs::description(),
        version_added: "0.2.0",
        options: options(),
        rules: Rules::default()
            .mutually_exclusive(&["user", "userid"])
            .mutually_exclusive(&["domain", "userid"])
            .merge(connection::rules()),
        check_mode: (Support::Full, "The module only reads, so check mode runs it normally."),
        diff_mode: (
            Support::None,
            "The module changes nothing, so there is nothing to diff.",
        ),
        notes: docs::notes(),
        seealso: vec!["ferrox.proxmox.proxmox_access_acl"],
        examples: docs::EXAMPLES,
        returns: docs::RETURN,
    }
}

pub fn run(m: &mut Module) -> Result<Output, Failure> {
    let query = UserQuery::from_params(&m.params)?;
    driver::read(m, query)
}

/// What the task asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum UserQuery {
    /// One user by id (`userid`, or `user` and `domain`).
    One(String),
    /// Every user the caller may see, filtered by realm and login name.
    All {
        /// The realm, if given.
        domain: Option<String>,
        /// The login name, if given without a realm.
        user: Option<String>,
    },
}

impl UserQuery {
    /// The task's options, read once through [`Reader`].
    pub(crate) fn from_params(params: &Params) -> Result<UserQuery, Failure> {
        let opts = options();
        Self::read(&Reader::new(params.clone(), &opts))
    }

    /// The query from the task's options (1.6: `user@domain` when both are given).
    fn read(r: &Reader<'_>) -> Result<UserQuery, Failure> {
        let (domain, user, userid) = (r.non_empty("domain"), r.non_empty("user"), r.non_empty("userid"));
        if let (Some(user), Some(domain)) = (&user, &domain) {
            return Ok(UserQuery::One(format!("{user}@{domain}")));
        }
        if let Some(userid) = userid {
            if !userid.contains('@') {
                return Err(Failure::new(format!(
                    "userid '{userid}' is not a user ID: give it as name@realm (for example {userid}@pve), or give user: {userid} alone to match that login name in every realm"
                )));
            }
            return Ok(UserQuery::One(userid));
        }
        Ok(UserQuery::All { domain, user })
    }

    fn keeps(&self, user: &Value) -> bool {
        match self {
            UserQuery::One(_) => true,
            UserQuery::All { domain, user: name } => {
                domain.as_deref().is_none_or(|d| user["domain"] == d)
                    && name.as_deref().is_none_or(|n| user["user"] == n)
            }
        }
    }
}

/// PVE's refusal of a user id of the wrong form: `check_user_exist` runs
/// pve-access-control's `verify_username` before it looks the user up.
fn is_malformed_userid(e: &ferrox_pve_client::client::ApiError) -> bool {
    e.is_status(500)
        && (e.message.starts_with("user name '") || e.message.ends_with("does not look like a valid user name"))
}

/// PVE's refusal of a user that does not exist (`check_user_exist`), which 1.6 and this
/// module answer with an empty list.
fn is_no_such_user(e: &ferrox_pve_client::client::ApiError) -> bool {
    e.is_status(500) && e.message.starts_with("no such user")
}

impl Read for UserQuery {
    /// The users found, in 1.6's shape.
    type Seen = Vec<Value>;

    fn observe(&self, cx: &mut Cx<'_>) -> Result<Vec<Value>, Failure> {
        match self {
            UserQuery::One(userid) => {
                let path = format!("/access/users/{userid}");
                match cx.client.get(&path, &[]) {
                    Ok(Value::Object(mut data)) => {
                        data.insert("userid".into(), Value::String(userid.clone()));
                        Ok(vec![normalize::user(&data)])
                    }
                    Ok(other) => Err(Failure::new(format!(
                        "Getting specific user '{userid}' failed: unexpected answer {other}"
                    ))),
                    Err(e) if is_no_such_user(&e) => Ok(Vec::new()),
                    Err(e) if is_malformed_userid(&e) => Err(Failure::new(format!(
                        "userid '{userid}' is not a user ID Proxmox VE takes ({}): give it as name@realm, 3 to 64 characters, the name without white space, ':' or '/', the realm a letter then at least one letter, digit, '.', '-' or '_'",
                        e.message
                    ))),
                    Err(e) if e.is_status(403) => Err(Failure::new(format!(
                        "Getting specific user '{userid}' failed: {e}. The user exists, but Proxmox VE shows it only to callers with User.Modify or Sys.Audit on /access/groups (or on a group the user is in), which {} does not have: grant one of them (the role PVEAuditor has Sys.Audit) or use an API user that has it",
                        cx.gate.caller().id
                    ))),
                    Err(e) => Err(Failure::new(format!(
                        "Getting specific user '{userid}' failed: {e}. Whether the user exists is unknown"
                    ))),
                }
            }
            UserQuery::All { .. } => {
                let data = cx
                    .client
                    .get("/access/users", &[("full", "1".into())])
                    .map_err(|e| Failure::new(format!("Listing the users failed: {e}")))?;
                Ok(data
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_object)
                    .map(normalize::user)
                    .filter(|u| self.keeps(u))
                    .collect())
            }
        }
    }

    fn report(&self, users: Vec<Value>) -> Output {
        let n = users.len();
        Output::unchanged(format!("{n} user{} found", if n == 1 { "" } else { "s" })).with("proxmox_users", users)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The task's options, unset ones as validation leaves them (the declared default,
    /// else null), read; with the declared options no getter read.
    fn read(args: Value) -> (Result<UserQuery, Failure>, Vec<&'static str>) {
        let opts = options();
        let r = Reader::new(Params::with_defaults(&opts, &args), &opts);
        let query = UserQuery::read(&r);
        (query, r.unread())
    }

    fn query(args: Value) -> Result<UserQuery, Failure> {
        read(args).0
    }

    #[test]
    fn every_declared_option_of_the_module_is_read() {
        let (query, unread) = read(json!({"domain": "pve"}));
        assert!(query.is_ok());
        let unread = connection::task_options_unread(unread);
        assert!(unread.is_empty(), "options without a reader: {unread:?}");
    }

    #[test]
    fn the_query_follows_the_options() {
        assert_eq!(
            query(json!({"user": "jdoe", "domain": "ad"})).unwrap(),
            UserQuery::One("jdoe@ad".into())
        );
        assert_eq!(
            query(json!({"userid": "jdoe@ad"})).unwrap(),
            UserQuery::One("jdoe@ad".into())
        );
        assert_eq!(
            query(json!({"user": "jdoe"})).unwrap(),
            UserQuery::All {
                domain: None,
                user: Some("jdoe".into())
            }
        );
        let e = query(json!({"userid": "jdoe"})).unwrap_err();
        assert!(
            e.msg
                .starts_with("userid 'jdoe' is not a user ID: give it as name@realm"),
            "{}",
            e.msg
        );
    }

    #[test]
    fn user_alone_matches_the_login_name_in_every_realm() {
        let q = query(json!({"user": "jdoe"})).unwrap();
        assert!(q.keeps(&json!({"user": "jdoe", "domain": "ad"})));
        assert!(q.keeps(&json!({"user": "jdoe", "domain": "pve"})));
        assert!(!q.keeps(&json!({"user": "jdoe2", "domain": "ad"})));
        let q = query(json!({"domain": "pve"})).unwrap();
        assert!(!q.keeps(&json!({"user": "jdoe", "domain": "ad"})));
    }
}
