//! Where the API lives (`api_host`, `api_port`) and how requests are spelled on the
//! wire: URLs, query strings and form bodies.

/// PVE's API port when neither `api_port` nor `api_host` names one.
pub const DEFAULT_PORT: u16 = 8006;

/// The API's host and port, resolved from `api_host` and `api_port` as 1.6 did:
/// `api_port` if set, else a port written in `api_host`, else 8006.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// Host name or IP address, IPv6 without brackets.
    pub host: String,
    /// The port (8006 unless set).
    pub port: u16,
}

impl Endpoint {
    /// Parses `api_host` (`pve1`, `pve1:8443`, `10.0.0.1`, `[2001:db8::1]:8006`, `2001:db8::1`).
    pub fn parse(api_host: &str, api_port: Option<u16>) -> Result<Endpoint, String> {
        let text = api_host.trim();
        if text.contains("://") || text.contains('/') {
            return Err(format!(
                "api_host must be a host name or IP address, optionally with :port (like pve1 or pve1:8006), not a URL; got: {api_host}"
            ));
        }
        let (host, port_in_host) = split_host_port(text)?;
        if host.is_empty() {
            return Err(format!(
                "api_host must name a host (a name or an IP address), got: {api_host:?}"
            ));
        }
        if host.chars().any(|c| c.is_whitespace() || "?#@".contains(c)) {
            return Err(format!(
                "api_host must be a host name or IP address, optionally with :port (like pve1 or pve1:8006), not a URL; got: {api_host}"
            ));
        }
        Ok(Endpoint {
            host: host.to_string(),
            port: api_port.or(port_in_host).unwrap_or(DEFAULT_PORT),
        })
    }

    fn is_ipv6(&self) -> bool {
        self.host.contains(':')
    }

    /// `host:port`, with brackets around an IPv6 address.
    pub fn authority(&self) -> String {
        if self.is_ipv6() {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }

    /// `https://host:port`: how messages name the server.
    pub fn origin(&self) -> String {
        format!("https://{}", self.authority())
    }

    /// `https://host:port/api2/json`: every path is relative to this.
    pub fn base_url(&self) -> String {
        format!("{}/api2/json", self.origin())
    }
}

/// Splits a port off `api_host`; an address with several colons and no brackets is a
/// bare IPv6 literal, which cannot carry a port.
fn split_host_port(text: &str) -> Result<(&str, Option<u16>), String> {
    if let Some(rest) = text.strip_prefix('[') {
        let (host, after) = rest
            .split_once(']')
            .ok_or_else(|| format!("api_host has an opening [ but no closing ]: {text}"))?;
        return match after {
            "" => Ok((host, None)),
            _ => match after.strip_prefix(':') {
                Some(port) => Ok((host, Some(parse_port(port, text)?))),
                None => Err(format!(
                    "api_host: unexpected text after ] in {text}; write [address]:port"
                )),
            },
        };
    }
    match text.matches(':').count() {
        0 => Ok((text, None)),
        1 => {
            let (host, port) = text.split_once(':').unwrap_or((text, ""));
            Ok((host, Some(parse_port(port, text)?)))
        }
        _ => Ok((text, None)),
    }
}

fn parse_port(port: &str, whole: &str) -> Result<u16, String> {
    match port.parse::<u16>() {
        Ok(p) if p > 0 => Ok(p),
        _ => Err(format!(
            "api_host: the port in {whole} must be a number between 1 and 65535"
        )),
    }
}

/// Percent-encodes everything but RFC 3986's unreserved characters, so that `+2G`
/// arrives as `+2G` (a bare `+` would decode to a space) and `,`/`=` of property
/// strings survive any decoder.
pub fn encode_component(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => out.push(byte as char),
            _ => out.push_str(&format!("%{byte:02X}")),
        }
    }
    out
}

/// `a=1&b=x%2By`: a query string or an `application/x-www-form-urlencoded` body.
/// A repeated name is sent repeatedly (PVE joins it into a list).
pub fn encode_fields(fields: &[(&str, String)]) -> String {
    fields
        .iter()
        .map(|(k, v)| format!("{}={}", encode_component(k), encode_component(v)))
        .collect::<Vec<_>>()
        .join("&")
}

/// Percent-encodes the bytes a URI path may not hold as they are (RFC 3986 `pchar`
/// plus `/`), keeping PVE's usual `:`, `@`, `!` readable. A UPID of a disk reassign
/// (`qmmove:100-scsi1>101-scsi3`) holds `>`, which an HTTP client refuses unencoded.
pub fn encode_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for byte in path.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => out.push(byte as char),
            b'!' | b'$' | b'&' | b'\'' | b'(' | b')' | b'*' | b'+' | b',' | b';' | b'=' | b':' | b'@' | b'/' | b'%' => {
                out.push(byte as char)
            }
            _ => out.push_str(&format!("%{byte:02X}")),
        }
    }
    out
}

/// The full URL of an API path (`/nodes/pve1/qemu`) with its query string.
pub fn request_url(base: &str, path: &str, query: &[(&str, String)]) -> String {
    let mut url = String::with_capacity(base.len() + path.len() + 32);
    url.push_str(base);
    if !path.starts_with('/') {
        url.push('/');
    }
    url.push_str(&encode_path(path));
    if !query.is_empty() {
        url.push('?');
        url.push_str(&encode_fields(query));
    }
    url
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ep(host: &str, port: Option<u16>) -> Endpoint {
        Endpoint::parse(host, port).unwrap()
    }

    #[test]
    fn port_precedence_is_api_port_then_host_then_default() {
        assert_eq!(ep("pve1", None).base_url(), "https://pve1:8006/api2/json");
        assert_eq!(ep("pve1:8443", None).port, 8443);
        assert_eq!(ep("pve1:8443", Some(9000)).port, 9000);
        assert_eq!(ep("10.0.0.5", Some(8007)).authority(), "10.0.0.5:8007");
    }

    #[test]
    fn ipv6_with_and_without_brackets() {
        let bare = ep("2001:db8::1", None);
        assert_eq!(bare.host, "2001:db8::1");
        assert_eq!(bare.base_url(), "https://[2001:db8::1]:8006/api2/json");
        let bracketed = ep("[2001:db8::1]:8443", None);
        assert_eq!((bracketed.host.as_str(), bracketed.port), ("2001:db8::1", 8443));
        assert_eq!(ep("[::1]", Some(9)).origin(), "https://[::1]:9");
    }

    #[test]
    fn bad_hosts_name_api_host() {
        for bad in [
            "pve1:abc",
            "pve1:0",
            "[::1",
            "[::1]x",
            "",
            "https://pve1",
            "pve1/api2/json",
            "pve 1",
        ] {
            let err = Endpoint::parse(bad, None).unwrap_err();
            assert!(err.contains("api_host"), "{bad}: {err}");
        }
        assert!(Endpoint::parse("https://pve1:8006", None)
            .unwrap_err()
            .contains("not a URL"));
    }

    #[test]
    fn paths_keep_pve_characters_and_encode_the_rest() {
        let upid = "/nodes/pve1/tasks/UPID:pve1:0001:02:03:qmmove:100-scsi1>101-scsi3:ansible@pve!automation:/status";
        assert_eq!(
            request_url("https://h:8006/api2/json", upid, &[]),
            "https://h:8006/api2/json/nodes/pve1/tasks/UPID:pve1:0001:02:03:qmmove:100-scsi1%3E101-scsi3:ansible@pve!automation:/status"
        );
        assert_eq!(encode_path("/a b/{c}"), "/a%20b/%7Bc%7D");
    }

    #[test]
    fn form_values_are_percent_encoded() {
        let body = encode_fields(&[
            ("size", "+2G".into()),
            ("net0", "virtio,bridge=vmbr0".into()),
            ("d", "a b".into()),
        ]);
        assert_eq!(body, "size=%2B2G&net0=virtio%2Cbridge%3Dvmbr0&d=a%20b");
        assert_eq!(encode_component("ü"), "%C3%BC");
    }

    #[test]
    fn urls_join_path_and_query() {
        let base = "https://pve1:8006/api2/json";
        assert_eq!(
            request_url(base, "/version", &[]),
            "https://pve1:8006/api2/json/version"
        );
        assert_eq!(
            request_url(base, "cluster/resources", &[("type", "vm".into())]),
            "https://pve1:8006/api2/json/cluster/resources?type=vm"
        );
    }
}
