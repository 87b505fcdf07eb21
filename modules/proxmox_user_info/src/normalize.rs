//! A user as community.proxmox 1.6 returns it (`ProxmoxUser`): `enable` as the boolean
//! `enabled`, the user id split into `user` and `domain`, `groups` and `tokens` always
//! lists (a token's `privsep` a boolean, its id as `tokenid`), every other key as PVE
//! gave it. Both answers are normalised alike: the listing's (groups a comma list,
//! tokens a list) and one user's (groups a list, tokens an object by id or null).

use serde_json::{Map, Value};

fn as_bool(v: &Value) -> Value {
    Value::Bool(match v {
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_i64() != Some(0),
        Value::String(s) => !matches!(s.as_str(), "" | "0"),
        _ => false,
    })
}

fn token(mut t: Map<String, Value>) -> Value {
    if let Some(p) = t.get("privsep").cloned() {
        t.insert("privsep".into(), as_bool(&p));
    }
    Value::Object(t)
}

/// One user of PVE's answer (`userid` added for a single user's read) in 1.6's shape.
pub(crate) fn user(data: &Map<String, Value>) -> Value {
    let mut out = Map::new();
    for (k, v) in data {
        match (k.as_str(), v) {
            ("enable", v) => {
                out.insert("enabled".into(), as_bool(v));
            }
            ("userid", Value::String(id)) => {
                let (user, domain) = id.split_once('@').unwrap_or((id, ""));
                out.insert("user".into(), Value::String(user.into()));
                out.insert("domain".into(), Value::String(domain.into()));
                out.insert("userid".into(), v.clone());
            }
            ("groups" | "tokens", Value::Null) => {
                out.insert(k.clone(), Value::Array(vec![]));
            }
            ("groups" | "tokens", Value::String(s)) if s.is_empty() => {
                out.insert(k.clone(), Value::Array(vec![]));
            }
            ("groups", Value::String(s)) => {
                let groups = s.split(',').map(|g| Value::String(g.into())).collect();
                out.insert(k.clone(), Value::Array(groups));
            }
            ("tokens", Value::Array(list)) => {
                let tokens = list
                    .iter()
                    .map(|t| token(t.as_object().cloned().unwrap_or_default()))
                    .collect();
                out.insert(k.clone(), Value::Array(tokens));
            }
            ("tokens", Value::Object(by_id)) => {
                let tokens = by_id
                    .iter()
                    .map(|(id, t)| {
                        let mut t = t.as_object().cloned().unwrap_or_default();
                        t.insert("tokenid".into(), Value::String(id.clone()));
                        token(t)
                    })
                    .collect();
                out.insert(k.clone(), Value::Array(tokens));
            }
            _ => {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn norm(v: Value) -> Value {
        user(v.as_object().unwrap())
    }

    #[test]
    fn a_listed_user_as_1_6_returns_it() {
        let listed = json!({"enable": 1, "expire": 0, "groups": "admins,ops", "realm-type": "ad",
            "tokens": [{"tokenid": "ci", "privsep": 0, "expire": 0}], "userid": "jdoe@ad"});
        assert_eq!(
            norm(listed),
            json!({"enabled": true, "expire": 0, "groups": ["admins", "ops"], "realm-type": "ad",
                "tokens": [{"tokenid": "ci", "privsep": false, "expire": 0}],
                "user": "jdoe", "domain": "ad", "userid": "jdoe@ad"})
        );
    }

    #[test]
    fn one_users_read_as_1_6_returns_it() {
        let read = json!({"enable": 0, "expire": 0, "groups": [], "tokens": {"ci": {"privsep": 1}}, "userid": "a@pve"});
        assert_eq!(
            norm(read),
            json!({"enabled": false, "expire": 0, "groups": [], "tokens": [{"privsep": true, "tokenid": "ci"}],
                "user": "a", "domain": "pve", "userid": "a@pve"})
        );
        let no_tokens = json!({"enable": 1, "groups": "", "tokens": null, "userid": "a@pve"});
        assert_eq!(norm(no_tokens)["tokens"], json!([]));
    }
}
