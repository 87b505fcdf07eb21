//! How requests are authenticated: an API token header on every request, or a ticket
//! from `POST /access/ticket` sent as cookie (plus the CSRF header on writes).

use serde_json::Value;

/// The credentials attached to each request.
#[derive(Clone)]
pub(super) enum Credentials {
    /// While logging in: nothing to attach.
    None,
    /// `Authorization: PVEAPIToken=user!id=secret`.
    Token { header: String, token: String },
    /// Cookie `PVEAuthCookie` on every request, header `CSRFPreventionToken` on writes.
    Ticket { cookie: String, csrf: String, user: String },
    /// Local mode: pvesh runs as `root@pam` on the node, nothing is attached.
    Local,
}

/// Who pvesh runs as (`PVE::RPCEnvironment::init_request` in the CLI: `root@pam`).
pub(super) const LOCAL_USER: &str = "root@pam";

impl Credentials {
    /// `token_id` is the token's name; the full id `user!name` of `api_user` is accepted too.
    pub(super) fn token(user: &str, token_id: &str, secret: &str) -> Result<Credentials, String> {
        let name = match token_id.split_once('!') {
            None => token_id,
            Some((owner, name)) if owner == user => name,
            Some((owner, _)) => {
                return Err(format!(
                    "api_token_id {token_id} belongs to {owner}, but api_user is {user}: set api_token_id to the token name only and api_user to the user owning it"
                ))
            }
        };
        Ok(Credentials::Token {
            header: format!("PVEAPIToken={user}!{name}={secret}"),
            token: format!("{user}!{name}"),
        })
    }

    /// Headers for one request (`write`: POST/PUT/DELETE).
    pub(super) fn headers(&self, write: bool) -> Vec<(&'static str, String)> {
        match self {
            Credentials::None | Credentials::Local => vec![],
            Credentials::Token { header, .. } => vec![("Authorization", header.clone())],
            Credentials::Ticket { cookie, csrf, .. } => {
                let mut h = vec![("Cookie", format!("PVEAuthCookie={cookie}"))];
                if write {
                    h.push(("CSRFPreventionToken", csrf.clone()));
                }
                h
            }
        }
    }

    /// Who the requests run as, for messages (never the secret).
    pub(super) fn who(&self) -> String {
        match self {
            Credentials::None => "nobody".into(),
            Credentials::Token { token, .. } => format!("API token {token}"),
            Credentials::Ticket { user, .. } => format!("user {user}"),
            Credentials::Local => format!("user {LOCAL_USER} (pvesh on this node)"),
        }
    }

    /// The `user` and `tokenid` PVE records on tasks started with these credentials.
    pub(super) fn task_owner(&self) -> (String, Option<String>) {
        match self {
            Credentials::None => (String::new(), None),
            Credentials::Token { token, .. } => match token.split_once('!') {
                Some((user, name)) => (user.to_string(), Some(name.to_string())),
                None => (token.clone(), None),
            },
            Credentials::Ticket { user, .. } => (user.clone(), None),
            Credentials::Local => (LOCAL_USER.to_string(), None),
        }
    }

    /// What to check after a 401.
    pub(super) fn unauthorized_hint(&self) -> String {
        match self {
            Credentials::Token { token, .. } => format!(
                "check api_user, api_token_id and api_token_secret (or api_password): the API token {token} was not accepted"
            ),
            Credentials::Ticket { user, .. } => {
                format!("the ticket of {user} was not accepted (expired or revoked); check api_user and api_password")
            }
            Credentials::None => "check api_user, api_token_id and api_token_secret (or api_password)".into(),
            Credentials::Local => "pvesh on this node was refused; run the task as root on a Proxmox VE node, or give api_host and credentials".into(),
        }
    }
}

/// What the ticket endpoint answered.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Login {
    Ticket {
        ticket: String,
        csrf: String,
    },
    /// The user has a second factor: answer the challenge (a half ticket).
    NeedTfa {
        challenge: String,
    },
    /// `data` was null or lacked a ticket.
    Rejected,
}

/// Reads the `data` of `POST /access/ticket`.
pub(super) fn parse_login(data: &Value) -> Login {
    let text = |k: &str| data.get(k).and_then(Value::as_str).map(str::to_string);
    let need_tfa = match data.get("NeedTFA") {
        Some(Value::Number(n)) => n.as_i64() != Some(0),
        Some(Value::Bool(b)) => *b,
        Some(Value::String(s)) => s != "0",
        _ => false,
    };
    match (text("ticket"), text("CSRFPreventionToken")) {
        (Some(challenge), _) if need_tfa => Login::NeedTfa { challenge },
        (Some(ticket), Some(csrf)) => Login::Ticket { ticket, csrf },
        _ => Login::Rejected,
    }
}

/// The second factor as the TFA challenge expects it: `type:value`, TOTP by default.
pub(super) fn tfa_response(otp: &str) -> String {
    if otp.contains(':') {
        otp.to_string()
    } else {
        format!("totp:{otp}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn token_header_and_no_csrf() {
        let c = Credentials::token("ansible@pve", "automation", "s3cr3t").unwrap();
        assert_eq!(
            c.headers(true),
            vec![("Authorization", "PVEAPIToken=ansible@pve!automation=s3cr3t".to_string())]
        );
        assert_eq!(c.who(), "API token ansible@pve!automation");
        assert!(!c.unauthorized_hint().contains("s3cr3t"));
    }

    #[test]
    fn a_full_token_id_of_the_same_user_is_accepted() {
        let full = Credentials::token("ansible@pve", "ansible@pve!automation", "s").unwrap();
        assert_eq!(full.who(), "API token ansible@pve!automation");
        let other = Credentials::token("ansible@pve", "root@pam!automation", "s")
            .err()
            .unwrap();
        assert!(
            other.starts_with("api_token_id root@pam!automation belongs to root@pam, but api_user is ansible@pve"),
            "{other}"
        );
    }

    #[test]
    fn ticket_cookie_always_csrf_on_writes_only() {
        let c = Credentials::Ticket {
            cookie: "PVE:root@pam:1::sig".into(),
            csrf: "1:abc".into(),
            user: "root@pam".into(),
        };
        assert_eq!(c.headers(false).len(), 1);
        assert_eq!(c.headers(true)[1], ("CSRFPreventionToken", "1:abc".to_string()));
    }

    #[test]
    fn login_answers() {
        assert_eq!(
            parse_login(&json!({"ticket": "T", "CSRFPreventionToken": "C", "username": "root@pam"})),
            Login::Ticket {
                ticket: "T".into(),
                csrf: "C".into()
            }
        );
        assert_eq!(
            parse_login(&json!({"ticket": "PVE:!tfa!x", "NeedTFA": 1, "username": "u@pve"})),
            Login::NeedTfa {
                challenge: "PVE:!tfa!x".into()
            }
        );
        assert_eq!(parse_login(&Value::Null), Login::Rejected);
    }

    #[test]
    fn tfa_response_defaults_to_totp() {
        assert_eq!(tfa_response("123456"), "totp:123456");
        assert_eq!(tfa_response("recovery:abcd"), "recovery:abcd");
    }
}
