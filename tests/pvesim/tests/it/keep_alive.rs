//! One connection's life as pveproxy gives it: an answer >= 400 closes it, and so does
//! the answer that spends its keep-alive count; requests pipelined after either are
//! never answered, so a client must send them again on a new connection.

use crate::common::*;

fn get(path: &str) -> String {
    format!("GET /api2/json{path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: {TOKEN}\r\n\r\n")
}

/// The status lines of the answers in a raw exchange, and whether each said `Connection: close`.
fn answers(raw: &str) -> Vec<(String, bool)> {
    raw.split("HTTP/1.1 ")
        .skip(1)
        .map(|answer| {
            let head = answer.split("\r\n\r\n").next().unwrap_or("");
            let status = head.lines().next().unwrap_or("").to_string();
            let close = head.lines().any(|l| l.eq_ignore_ascii_case("connection: close"));
            (status, close)
        })
        .collect()
}

#[test]
fn an_error_answer_closes_the_connection_and_what_followed_is_not_answered() {
    let api = Api::start(quick());
    let pipelined = [get("/version"), get("/nodes/pve1/qemu/4242/config"), get("/version")].concat();

    let (raw, closed) = raw_tls_until_close(&api.sim, pipelined.as_bytes());
    let got = answers(&raw);

    assert!(closed, "the connection is closed, not left open: {got:?}");
    assert_eq!(got.len(), 2, "the request after the error is not answered: {got:?}");
    assert_eq!(got[0], ("200 OK".to_string(), false));
    assert!(got[1].0.starts_with("500 "), "{got:?}");
    assert!(got[1].1, "the error answer says Connection: close: {got:?}");
}

#[test]
fn a_connection_serves_one_hundred_requests_and_the_hundredth_closes_it() {
    let api = Api::start(quick());
    // pve-manager PVE/Service/pveproxy.pm: `keep_alive => 100`.
    let limit = 100;
    let pipelined = get("/version").repeat(limit + 1);

    let (raw, closed) = raw_tls_until_close(&api.sim, pipelined.as_bytes());
    let got = answers(&raw);

    assert!(closed, "the connection is closed, not left open");
    assert_eq!(got.len(), limit, "one hundred answers, then the close");
    assert!(got.iter().all(|(status, _)| status == "200 OK"), "{got:?}");
    let closing: Vec<usize> = (0..got.len()).filter(|&i| got[i].1).collect();
    assert_eq!(closing, vec![limit - 1], "only the hundredth says Connection: close");
}

#[test]
fn the_control_api_keeps_its_connection() {
    let api = Api::start(quick());
    let control = "GET /_pvesim/nope HTTP/1.1\r\nHost: localhost\r\n\r\n";
    let last = format!(
        "GET /api2/json/version HTTP/1.1\r\nHost: localhost\r\nAuthorization: {TOKEN}\r\nConnection: close\r\n\r\n"
    );
    let pipelined = [control, control, &last].concat();

    let (raw, _) = raw_tls_until_close(&api.sim, pipelined.as_bytes());
    let got = answers(&raw);

    assert_eq!(got.len(), 3, "{got:?}");
    assert!(got[0].0.starts_with("404") && !got[0].1 && !got[1].1, "{got:?}");
}
