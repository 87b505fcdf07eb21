//! The task's options in typed form, validated with messages that name the option.

use ferrox_ansible::options::read::vmid_in_range;
use ferrox_ansible::options::Params;
use ferrox_pve_rules::propstring::{self, number_text, split_indexed, Kind};

/// What the task says about one NIC option: leave it, set it, or remove it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Want {
    Set(String),
    Remove,
}

#[derive(Debug, Clone)]
pub(crate) struct NicTask {
    pub interface: String,
    pub vmid: Option<u32>,
    pub name: Option<String>,
    pub absent: bool,
    pub model: Option<String>,
    /// Upper case.
    pub mac: Option<String>,
    /// The other options the task gives, by PVE key, in PVE's key order.
    pub options: Vec<(&'static str, Want)>,
}

impl NicTask {
    pub(crate) fn from_params(p: &Params) -> Result<NicTask, String> {
        let interface = p.str("interface").unwrap_or_default().to_string();
        match split_indexed(&interface) {
            ("net", Some(n)) if n <= 31 => {}
            _ => return Err(format!("interface must be net0 to net31, got: {interface}")),
        }
        let vmid = p.int("vmid").map(|id| vmid_in_range("vmid", id)).transpose()?;
        let mac = match p.non_empty("mac") {
            Some(m) => Some(valid_mac(m)?),
            None => None,
        };
        let mut options = Vec::new();
        if let Some(b) = p.non_empty("bridge") {
            options.push(("bridge", Want::Set(b.to_string())));
        }
        if let Some(f) = p.bool("firewall") {
            options.push(("firewall", Want::Set(if f { "1" } else { "0" }.into())));
        }
        if let Some(l) = p.bool("link_down") {
            options.push(("link_down", Want::Set(if l { "1" } else { "0" }.into())));
        }
        if let Some(mtu) = p.int("mtu") {
            options.push(("mtu", int_or_remove("mtu", mtu, 1, 65520, "1 means the bridge's MTU")?));
        }
        if let Some(q) = p.int("queues") {
            options.push((
                "queues",
                int_or_remove("queues", q, 1, 64, "Proxmox VE accepts up to 64")?,
            ));
        }
        if let Some(rate) = p.float("rate") {
            let want = if rate == 0.0 {
                Want::Remove
            } else if rate > 0.0 && rate.is_finite() {
                Want::Set(number_text(rate))
            } else {
                return Err(format!(
                    "rate must be a positive number of MB/s (or 0 to remove the limit), got: {rate}"
                ));
            };
            options.push(("rate", want));
        }
        if let Some(tag) = p.int("tag") {
            options.push(("tag", int_or_remove("tag", tag, 1, 4094, "a VLAN id")?));
        }
        if let Some(trunks) = p.list("trunks") {
            let mut ids = Vec::new();
            for v in trunks {
                match v.as_i64() {
                    Some(id) if (1..=4094).contains(&id) => ids.push(id.to_string()),
                    _ => return Err(format!("trunks must be VLAN ids from 1 to 4094, got: {v}")),
                }
            }
            options.push((
                "trunks",
                if ids.is_empty() {
                    Want::Remove
                } else {
                    Want::Set(ids.join(";"))
                },
            ));
        }
        Ok(NicTask {
            interface,
            vmid,
            name: p.non_empty("name").map(str::to_string),
            absent: p.str("state") == Some("absent"),
            model: p.non_empty("model").map(str::to_string),
            mac,
            options,
        })
    }
}

fn int_or_remove(name: &str, value: i64, min: i64, max: i64, hint: &str) -> Result<Want, String> {
    match value {
        0 => Ok(Want::Remove),
        v if (min..=max).contains(&v) => Ok(Want::Set(v.to_string())),
        v => Err(format!(
            "{name} must be from {min} to {max} ({hint}), or 0 to remove it, got: {v}"
        )),
    }
}

fn valid_mac(text: &str) -> Result<String, String> {
    let mac = propstring::normalise(Kind::Mac, text).map_err(|why| format!("mac {text:?}: {why}"))?;
    let first = u8::from_str_radix(&mac[..2], 16).unwrap_or(0);
    if first & 1 == 1 {
        return Err(format!(
            "mac {text} is a multicast address (the lowest bit of the first byte is set); a NIC needs a unicast MAC such as BC:24:11:..."
        ));
    }
    Ok(mac)
}
