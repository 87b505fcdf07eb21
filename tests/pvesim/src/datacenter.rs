//! datacenter.cfg: the options of `GET`/`PUT /cluster/options`, and `tag-style`, which
//! decides how PVE de-duplicates and sorts a guest's tags (pve-guest-common's
//! `get_unique_tags`, run on every create and tag update).

use crate::api::Ctx;
use crate::auth;
use crate::error::{ApiError, ApiResult};
use crate::schema::formats::split_list;
use crate::state::Cluster;
use serde_json::{json, Map, Value};

/// The parts of `tag-style` that change stored tags (`shape` and `color-map` are for
/// the web UI only).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct TagStyle {
    /// `case-sensitive=1`: tags are kept as given and `Web` and `web` are two tags;
    /// otherwise every tag is stored lower case.
    pub case_sensitive: bool,
    /// `ordering=config`: tags stay in the order given; otherwise sorted.
    pub keep_order: bool,
}

impl TagStyle {
    /// A `tag-style` property string, checked as PVE's format does.
    pub fn parse(value: &str) -> Result<TagStyle, String> {
        let mut style = TagStyle::default();
        for part in value.split(',').filter(|p| !p.is_empty()) {
            let (k, v) = part
                .split_once('=')
                .ok_or_else(|| format!("value without key, but schema does not define a default key: {part}"))?;
            match k {
                "case-sensitive" => {
                    style.case_sensitive = crate::propstring::parse_bool(v)
                        .ok_or_else(|| format!("case-sensitive: type check ('boolean') failed - got '{v}'"))?
                        == "1"
                }
                "ordering" => match v {
                    "config" => style.keep_order = true,
                    "alphabetical" => style.keep_order = false,
                    _ => {
                        return Err(format!(
                            "ordering: value '{v}' does not have a value in the enumeration 'config, alphabetical'"
                        ))
                    }
                },
                "shape" | "color-map" => {}
                _ => return Err(format!("invalid key in comma-separated list property: {k}")),
            }
        }
        Ok(style)
    }

    pub fn of(c: &Cluster) -> TagStyle {
        c.tag_style
            .as_deref()
            .and_then(|s| TagStyle::parse(s).ok())
            .unwrap_or_default()
    }

    /// `get_unique_tags`: split like `split_list`, sorted unless `ordering=config`
    /// (case-insensitively unless case-sensitive), lower-cased unless case-sensitive,
    /// the first of each tag kept, joined with `;`.
    pub fn unique(self, value: &str) -> String {
        let mut tags = split_list(value);
        if !self.keep_order {
            if self.case_sensitive {
                tags.sort();
            } else {
                tags.sort_by_key(|t| t.to_lowercase());
            }
        }
        let mut seen = std::collections::BTreeSet::new();
        let mut out = Vec::new();
        for tag in tags {
            let tag = if self.case_sensitive { tag } else { tag.to_lowercase() };
            if seen.insert(tag.clone()) {
                out.push(tag);
            }
        }
        out.join(";")
    }
}

/// `GET /cluster/options`: open to every user (`user => 'all'`); the whole datacenter
/// config needs `Sys.Audit` on `/`, without it only `console` and `tag-style`. Always
/// with `allowed-tags`.
pub fn get(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    let mut all = Map::new();
    if let Some(p) = &ctx.c.mac_prefix {
        all.insert("mac_prefix".into(), json!(p));
    }
    for (k, v) in &ctx.c.datacenter {
        all.insert(k.clone(), parsed(ctx, k, v));
    }
    if let Some(s) = &ctx.c.tag_style {
        all.insert("tag-style".into(), parsed(ctx, "tag-style", s));
    }
    let mut out = if auth::has(ctx.c, ctx.who, "/", "Sys.Audit") {
        all
    } else {
        all.into_iter()
            .filter(|(k, _)| k == "console" || k == "tag-style")
            .collect()
    };
    out.insert(
        "allowed-tags".into(),
        json!(crate::tag_access::allowed_tags(ctx.c, ctx.who).0),
    );
    Ok(Value::Object(out))
}

/// `PUT /cluster/options` (`Sys.Modify` on `/`, checked from the schema): each option
/// given replaces the stored one, then those in `delete` go.
pub fn put(ctx: &mut Ctx<'_>) -> ApiResult<Value> {
    let params = ctx.p.clone();
    for (k, v) in &params {
        match k.as_str() {
            "delete" => {}
            "mac_prefix" => ctx.c.mac_prefix = Some(v.clone()),
            "tag-style" => {
                TagStyle::parse(v).map_err(|e| ApiError::param("tag-style", format!("invalid format - {e}\n")))?;
                ctx.c.tag_style = Some(v.clone());
            }
            _ => {
                ctx.c.datacenter.insert(k.clone(), v.clone());
            }
        }
    }
    for k in split_list(params.get("delete").map(String::as_str).unwrap_or("")) {
        match k.as_str() {
            "mac_prefix" => ctx.c.mac_prefix = None,
            "tag-style" => ctx.c.tag_style = None,
            _ => {
                ctx.c.datacenter.remove(&k);
            }
        }
    }
    Ok(Value::Null)
}

/// An option as `parse_datacenter_config` hands it out: a property string with a
/// format becomes an object (booleans and integers as numbers), anything else as stored.
fn parsed(ctx: &Ctx<'_>, key: &str, value: &str) -> Value {
    let format = ctx
        .sim
        .schema
        .route("/cluster/options")
        .and_then(|r| r.endpoint.info.get("PUT").cloned())
        .and_then(|put| {
            put.pointer(&format!("/parameters/properties/{}/format", key.replace('/', "~1")))
                .cloned()
        });
    let Some(Value::Object(format)) = format else {
        return json!(value);
    };
    let Ok(props) = crate::propstring::parse(&format, value) else {
        return json!(value);
    };
    let typed = props.into_iter().map(|(k, v)| {
        let ty = format
            .get(&k)
            .and_then(|s| s.get("type"))
            .and_then(Value::as_str)
            .unwrap_or("string");
        let v = match ty {
            "boolean" => crate::propstring::parse_bool(&v)
                .map(|b| json!(b.parse::<u8>().unwrap_or(0)))
                .unwrap_or(json!(v)),
            "integer" => v.parse::<i64>().map(|n| json!(n)).unwrap_or(json!(v)),
            _ => json!(v),
        };
        (k, v)
    });
    Value::Object(typed.collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn style(s: &str) -> TagStyle {
        TagStyle::parse(s).unwrap()
    }

    #[test]
    fn by_default_tags_are_lower_cased_sorted_and_unique() {
        assert_eq!(TagStyle::default().unique("Web,prod;web B"), "b;prod;web");
    }

    #[test]
    fn case_sensitive_tags_keep_their_case_and_sort_bytewise() {
        let s = style("case-sensitive=1");
        assert_eq!(s.unique("prod;Web;web;Web"), "Web;prod;web");
    }

    #[test]
    fn config_ordering_keeps_the_order_given() {
        assert_eq!(style("ordering=config").unique("Web;b;WEB;a"), "web;b;a");
        assert_eq!(
            style("ordering=config,case-sensitive=true").unique("Web;b;WEB;Web"),
            "Web;b;WEB"
        );
    }

    #[test]
    fn the_ui_keys_change_nothing_and_bad_values_are_refused() {
        assert_eq!(style("shape=dense,color-map=web:ff0000"), TagStyle::default());
        assert!(TagStyle::parse("case-sensitive=maybe").is_err());
        assert!(TagStyle::parse("ordering=random").is_err());
        assert!(TagStyle::parse("colour=red").is_err());
    }
}
