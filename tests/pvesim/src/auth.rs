//! Authentication (tickets, CSRF tokens, API tokens, TOTP codes) and privilege checks
//! (ACL paths with propagation, roles, privilege separation of tokens).

use crate::error::ApiError;
use crate::state::Cluster;
use base64::Engine;
use serde_json::Value;
use sha1::Sha1;
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};

/// Who is calling.
#[derive(Debug, Clone, PartialEq)]
pub struct Identity {
    pub userid: String,
    pub tokenid: Option<String>,
}

impl Identity {
    /// `root@pam` with a ticket bypasses all permission checks.
    pub fn is_root(&self) -> bool {
        self.userid == "root@pam" && self.tokenid.is_none()
    }
    /// Who the caller is to PVE (`$rpcenv->get_user()`, set by pve-manager's
    /// `auth_handler`): the user of a ticket, the full token id `user@realm!name` of a
    /// token (never its owner). UPIDs carry it too.
    pub fn authuser(&self) -> String {
        match &self.tokenid {
            Some(t) => format!("{}!{}", self.userid, t),
            None => self.userid.clone(),
        }
    }
}

/// PVE::AccessControl's `$ticket_lifetime`: a ticket (and its CSRF token) is valid for
/// two hours after it was made, and from 5 minutes before (clock drift between nodes).
pub const TICKET_LIFETIME: u64 = 7200;
const CLOCK_DRIFT: u64 = 300;
/// RFC 6238's and PVE's TOTP time step.
pub const TOTP_STEP: u64 = 30;

/// Signs tickets and CSRF tokens with a per-run secret; [`Keys::rotate`] replaces it,
/// as a regenerated auth key pair without `authkey.pub.old` would (PVE's daily rotation
/// keeps the old public key for the tickets made before it): every ticket signed before
/// is refused.
pub struct Keys {
    secret: std::sync::Mutex<[u8; 32]>,
    lifetime: u64,
}

fn b64(data: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(data)
}

impl Keys {
    pub fn new() -> Keys {
        Keys::with_lifetime(TICKET_LIFETIME)
    }

    /// Tickets valid for `lifetime` seconds instead of PVE's two hours.
    pub fn with_lifetime(lifetime: u64) -> Keys {
        Keys {
            secret: std::sync::Mutex::new(rand::random()),
            lifetime,
        }
    }

    /// A new signing secret: tickets and CSRF tokens made before are no longer valid.
    pub fn rotate(&self) {
        *self.secret.lock().unwrap_or_else(|e| e.into_inner()) = rand::random();
    }

    fn sign(&self, data: &str) -> Vec<u8> {
        let secret = *self.secret.lock().unwrap_or_else(|e| e.into_inner());
        let mut h = Sha256::new();
        h.update(secret);
        h.update(data.as_bytes());
        h.finalize().to_vec()
    }

    /// `PVE:<userid>:<HEX>::<signature>`; `tfa` marks a half-authenticated ticket.
    pub fn ticket(&self, userid: &str, now: u64, tfa: bool) -> String {
        let prefix = if tfa { "PVE:!tfa!" } else { "PVE:" };
        let data = format!("{prefix}{}:{now:08X}", userid.replace(':', "%3A"));
        let mut sig = self.sign(&data);
        sig.extend(self.sign(&format!("{data}#2")));
        sig.extend(self.sign(&format!("{data}#3")));
        sig.extend(self.sign(&format!("{data}#4")));
        format!("{data}::{}", b64(&sig))
    }

    /// Returns the userid of a valid, unexpired ticket.
    pub fn verify_ticket(&self, ticket: &str, now: u64, tfa: bool) -> Option<String> {
        let (data, sig) = ticket.split_once("::")?;
        let prefix = if tfa { "PVE:!tfa!" } else { "PVE:" };
        let rest = data.strip_prefix(prefix)?;
        if !tfa && rest.starts_with("!tfa!") {
            return None;
        }
        let (user, hex) = rest.rsplit_once(':')?;
        let ts = u64::from_str_radix(hex, 16).ok()?;
        if ts > now + CLOCK_DRIFT || now > ts + self.lifetime {
            return None;
        }
        if self.ticket(&user.replace("%3A", ":"), ts, tfa).split_once("::")?.1 != sig {
            return None;
        }
        Some(user.replace("%3A", ":"))
    }

    /// `<HEX>:<43 chars of base64>` bound to the user.
    pub fn csrf(&self, userid: &str, now: u64) -> String {
        let hex = format!("{now:08X}");
        let sig = b64(&self.sign(&format!("{hex}:{userid}")));
        format!("{hex}:{}", &sig[..43])
    }

    pub fn verify_csrf(&self, token: &str, userid: &str, now: u64) -> bool {
        let Some((hex, _)) = token.split_once(':') else {
            return false;
        };
        let Ok(ts) = u64::from_str_radix(hex, 16) else {
            return false;
        };
        if ts > now + CLOCK_DRIFT || now > ts + self.lifetime {
            return false;
        }
        self.csrf(userid, ts) == token
    }
}

impl Default for Keys {
    fn default() -> Self {
        Keys::new()
    }
}

/// Check `user@realm!token=secret` against the cluster's tokens.
pub fn verify_token(cluster: &Cluster, value: &str) -> Option<Identity> {
    // `^(.*)=(.*)$`: the token id runs to the last `=`.
    let (full, secret) = value.rsplit_once('=')?;
    let (userid, tokenid) = full.split_once('!')?;
    let user = cluster.user(userid)?;
    if !user.enable {
        return None;
    }
    let tok = user.tokens.iter().find(|t| t.id == tokenid)?;
    (tok.secret == secret).then(|| Identity {
        userid: userid.into(),
        tokenid: Some(tokenid.into()),
    })
}

/// RFC 6238 TOTP (SHA-1, 30 s, 6 digits) for `unix_time`.
pub fn totp(secret_b32: &str, unix_time: u64) -> Option<String> {
    totp_with_step(secret_b32, unix_time, TOTP_STEP)
}

/// TOTP with a time step of `step` seconds instead of 30.
pub fn totp_with_step(secret_b32: &str, unix_time: u64, step: u64) -> Option<String> {
    let key = base32_decode(secret_b32)?;
    let counter = (unix_time / step.max(1)).to_be_bytes();
    let mac = hmac_sha1(&key, &counter);
    let off = (mac[19] & 0x0f) as usize;
    let code = u32::from_be_bytes([mac[off] & 0x7f, mac[off + 1], mac[off + 2], mac[off + 3]]) % 1_000_000;
    Some(format!("{code:06}"))
}

/// proxmox-tfa's `Totp::verify` with the window `-1..=1`: the counter of the step before,
/// at or after `now` whose code is exactly `code` (no trimming), tried in that order.
pub fn totp_counter(secret: &str, code: &str, now: u64, step: u64) -> Option<u64> {
    let current = now / step.max(1);
    [current.saturating_sub(1), current, current + 1]
        .into_iter()
        .find(|counter| totp_with_step(secret, counter * step.max(1), step).as_deref() == Some(code))
}

/// Whether `code` is within the window (not whether it was used before: [`crate::tfa`]).
pub fn verify_totp(secret: &str, code: &str, now: u64, step: u64) -> bool {
    totp_counter(secret, code, now, step).is_some()
}

fn hmac_sha1(key: &[u8], msg: &[u8]) -> [u8; 20] {
    let mut k = [0u8; 64];
    if key.len() > 64 {
        k[..20].copy_from_slice(&Sha1::digest(key));
    } else {
        k[..key.len()].copy_from_slice(key);
    }
    let mut inner = Sha1::new();
    inner.update(k.map(|b| b ^ 0x36));
    inner.update(msg);
    let mut outer = Sha1::new();
    outer.update(k.map(|b| b ^ 0x5c));
    outer.update(inner.finalize());
    outer.finalize().into()
}

fn base32_decode(s: &str) -> Option<Vec<u8>> {
    let mut bits = 0u64;
    let mut n = 0;
    let mut out = Vec::new();
    for c in s.chars().filter(|c| *c != '=' && !c.is_whitespace()) {
        let v = match c.to_ascii_uppercase() {
            c @ 'A'..='Z' => c as u64 - 'A' as u64,
            c @ '2'..='7' => c as u64 - '2' as u64 + 26,
            _ => return None,
        };
        bits = (bits << 5) | v;
        n += 5;
        if n >= 8 {
            n -= 8;
            out.push((bits >> n) as u8);
        }
    }
    Some(out)
}

/// Effective privileges of the caller on `path` (see [`crate::acl::permissions`]).
pub fn privs(cluster: &Cluster, who: &Identity, path: &str) -> BTreeSet<String> {
    crate::acl::permissions(cluster, who, path).into_keys().collect()
}

pub fn has(cluster: &Cluster, who: &Identity, path: &str, privilege: &str) -> bool {
    who.is_root() || privs(cluster, who, path).contains(privilege)
}

/// Handler-level check with PVE's 403 text.
pub fn require(cluster: &Cluster, who: &Identity, path: &str, privilege: &str) -> Result<(), ApiError> {
    if has(cluster, who, path, privilege) {
        Ok(())
    } else {
        Err(ApiError::forbidden(path, privilege))
    }
}

/// Evaluate a schema `permissions.check` expression.
pub fn check_expr(
    cluster: &Cluster,
    who: &Identity,
    expr: &Value,
    params: &BTreeMap<String, String>,
) -> Result<(), ApiError> {
    if who.is_root() {
        return Ok(());
    }
    let Some(arr) = expr.as_array() else { return Ok(()) };
    match arr.first().and_then(Value::as_str) {
        Some("perm") => {
            let raw = arr.get(1).and_then(Value::as_str).unwrap_or("/");
            let path = substitute(raw, params);
            let privs_list: Vec<&str> = arr
                .get(2)
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let mut any = false;
            let mut i = 3;
            while i + 1 < arr.len() {
                match arr[i].as_str() {
                    Some("any") => any = propstring_truthy(&arr[i + 1]),
                    Some("require_param") => {
                        if let Some(p) = arr[i + 1].as_str() {
                            if !params.contains_key(p) {
                                return Err(ApiError::forbidden_plain());
                            }
                        }
                    }
                    _ => {}
                }
                i += 2;
            }
            let have = privs(cluster, who, &path);
            let ok = if any {
                privs_list.iter().any(|p| have.contains(*p))
            } else {
                privs_list.iter().all(|p| have.contains(*p))
            };
            if ok {
                Ok(())
            } else if any {
                Err(ApiError::forbidden(&path, &privs_list.join("|")))
            } else {
                let missing = privs_list.iter().find(|p| !have.contains(**p)).copied().unwrap_or("");
                Err(ApiError::forbidden(&path, missing))
            }
        }
        Some("and") => {
            for sub in &arr[1..] {
                check_expr(cluster, who, sub, params)?;
            }
            Ok(())
        }
        // `check_perm_modify` on the templated, normalised path (a path that does not
        // normalise passes here: the handler refuses it).
        Some("perm-modify") => {
            let raw = arr.get(1).and_then(Value::as_str).unwrap_or("");
            let Some(path) = crate::acl_tree::normalize_path(&substitute(raw, params)) else {
                return Ok(());
            };
            let privs = crate::acl_tree::perm_modify_privs(&path);
            if privs.iter().any(|p| has(cluster, who, &path, p)) {
                Ok(())
            } else {
                Err(ApiError::forbidden(&path, &privs.join("|")))
            }
        }
        // An existing user's `userid-group` test (the `groups_param` forms of user
        // creation and update are not served).
        Some("userid-group") => {
            let privs: Vec<&str> = arr
                .get(1)
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let userid = params.get("userid").map(String::as_str).unwrap_or("");
            crate::users::check_userid_group(cluster, who, userid, &privs)
        }
        // `exec_api2_perm_check`: the alternatives are tried quietly; when none holds, the
        // refusal names no path.
        Some("or") => {
            if arr[1..].iter().any(|sub| check_expr(cluster, who, sub, params).is_ok()) {
                Ok(())
            } else {
                Err(ApiError::forbidden_plain())
            }
        }
        _ => Ok(()),
    }
}

fn propstring_truthy(v: &Value) -> bool {
    crate::propstring::truthy(Some(v))
}

fn substitute(raw: &str, params: &BTreeMap<String, String>) -> String {
    let mut out = raw.to_string();
    for (k, v) in params {
        out = out.replace(&format!("{{{k}}}"), v);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Scenario;

    #[test]
    fn ticket_roundtrip_and_expiry() {
        let k = Keys::new();
        let t = k.ticket("root@pam", 1_700_000_000, false);
        assert!(t.starts_with("PVE:root@pam:6553F100::"));
        assert_eq!(k.verify_ticket(&t, 1_700_000_100, false).as_deref(), Some("root@pam"));
        assert!(k.verify_ticket(&t, 1_700_000_000 + 8000, false).is_none());
        assert!(k
            .verify_ticket(&t.replace("root", "r00t"), 1_700_000_100, false)
            .is_none());
        let half = k.ticket("mfa@pve", 1_700_000_000, true);
        assert!(
            k.verify_ticket(&half, 1_700_000_000, false).is_none(),
            "half ticket is no login"
        );
        assert!(
            k.verify_ticket(&t, 1_700_000_000 + 7200, false).is_some(),
            "valid for two hours"
        );
        assert!(k.verify_ticket(&t, 1_700_000_000 + 7201, false).is_none());
        let short = Keys::with_lifetime(5);
        let s = short.ticket("root@pam", 1_700_000_000, false);
        assert!(
            short.verify_ticket(&s, 1_700_000_005, false).is_some()
                && short.verify_ticket(&s, 1_700_000_006, false).is_none()
        );
        short.rotate();
        assert!(
            short.verify_ticket(&s, 1_700_000_001, false).is_none(),
            "a new authkey refuses the old tickets"
        );
        let c = k.csrf("root@pam", 1_700_000_000);
        assert_eq!(c.len(), 8 + 1 + 43);
        assert!(k.verify_csrf(&c, "root@pam", 1_700_000_050));
        assert!(!k.verify_csrf(&c, "ansible@pve", 1_700_000_050));
    }

    #[test]
    fn totp_rfc6238_vector() {
        // RFC 6238 SHA-1 secret "12345678901234567890" at T=59 -> 94287082 (8 digits) -> 287082.
        let secret = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ";
        assert_eq!(totp(secret, 59).unwrap(), "287082");
        assert!(verify_totp(secret, "287082", 59, TOTP_STEP));
        assert!(verify_totp(secret, "287082", 59 + 30, TOTP_STEP), "one step late");
        assert!(!verify_totp(secret, "287082", 59 + 60, TOTP_STEP), "two steps late");
        let short = totp_with_step(secret, 100, 5).unwrap();
        assert!(verify_totp(secret, &short, 105, 5) && !verify_totp(secret, &short, 111, 5));
    }

    #[test]
    fn privsep_and_acl_paths() {
        let c = Scenario::default_cluster().to_cluster().unwrap();
        let auto = Identity {
            userid: "ansible@pve".into(),
            tokenid: Some("automation".into()),
        };
        let ro = Identity {
            userid: "ansible@pve".into(),
            tokenid: Some("readonly".into()),
        };
        assert!(has(&c, &auto, "/vms/100", "VM.Allocate"));
        assert!(has(&c, &ro, "/vms/100", "VM.Audit"));
        assert!(!has(&c, &ro, "/vms/100", "VM.PowerMgmt"));
        let rootok = Identity {
            userid: "root@pam".into(),
            tokenid: None,
        };
        assert!(has(&c, &rootok, "/anything", "Sys.Modify"));
        let mut c2 = c.clone();
        c2.acls.push(crate::state::AclDef {
            path: "/vms/100".into(),
            ugid: "ansible@pve!automation".into(),
            roles: vec!["NoAccess".into()],
            propagate: true,
        });
        assert!(!has(&c2, &auto, "/vms/100", "VM.Audit"), "deeper ACL overrides");
        assert!(has(&c2, &auto, "/vms/101", "VM.Audit"));
    }
}
