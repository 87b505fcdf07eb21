//! `pvesim` command line: start a simulator and print one ready line.

// The simulator's command line: what it prints is its output.
#![allow(clippy::print_stdout, clippy::print_stderr, clippy::exit)]

use pvesim::{Scenario, SimConfig, Simulator, TlsMode};
use std::path::PathBuf;

const USAGE: &str = "usage: pvesim [--listen ADDR:PORT] [--schema PATH] [--scenario FILE] [--state FILE] [--reset]
              [--ca-out FILE] [--token-secret S] [--readonly-token-secret S] [--root-password P]
              [--tls self-signed|ca] [--task-ms N] [--resources-lag-ms N] [--status-lag-ms N] [--auth-fail-delay-ms N] [--ticket-lifetime-secs N] [--totp-step-secs N]
              [--agent-delay-ms N] [--address-delay-ms N]
       pvesim --extract-schema FULL_SCHEMA_JSON   (print the served subset)
       pvesim --print-scenario                    (print the default scenario)
       pvesim --print-scenario-schema             (print the JSON Schema of scenario files)
       pvesim import --url https://HOST:8006 --token-id USER@REALM!ID --token-secret S
                     [--fingerprint AB:CD:... | --ca FILE] [--insecure] [--name NAME] > twin.json
                                                  (read a real cluster into a scenario; read-only)";

fn main() {
    if let Err(e) = run() {
        eprintln!("pvesim: {e:#}");
        std::process::exit(2);
    }
}

fn run() -> anyhow::Result<()> {
    let mut cfg = SimConfig {
        listen: "127.0.0.1:8006".parse()?,
        ..SimConfig::default()
    };
    let mut ca_out: Option<PathBuf> = None;
    if std::env::args().nth(1).as_deref() == Some("import") {
        return import(std::env::args().skip(2).collect());
    }
    let mut args = std::env::args().skip(1);
    let next = |args: &mut dyn Iterator<Item = String>, flag: &str| {
        args.next()
            .ok_or_else(|| anyhow::anyhow!("{flag} needs a value\n{USAGE}"))
    };
    while let Some(a) = args.next() {
        match a.as_str() {
            "--listen" => cfg.listen = next(&mut args, &a)?.parse()?,
            "--schema" => cfg.schema_path = Some(next(&mut args, &a)?.into()),
            "--scenario" => cfg.scenario = Scenario::from_file(next(&mut args, &a)?.as_ref())?,
            "--state" => cfg.state_file = Some(next(&mut args, &a)?.into()),
            "--reset" => cfg.reset = true,
            "--ca-out" => ca_out = Some(next(&mut args, &a)?.into()),
            "--token-secret" => cfg.token_secret = next(&mut args, &a)?,
            "--readonly-token-secret" => cfg.readonly_token_secret = next(&mut args, &a)?,
            "--root-password" => cfg.root_password = next(&mut args, &a)?,
            "--tls" => {
                cfg.tls = match next(&mut args, &a)?.as_str() {
                    "self-signed" => TlsMode::SelfSigned,
                    "ca" => TlsMode::Ca,
                    other => anyhow::bail!("--tls must be self-signed or ca, not {other}"),
                }
            }
            "--task-ms" => cfg.task_ms = next(&mut args, &a)?.parse()?,
            "--resources-lag-ms" => cfg.resources_lag_ms = next(&mut args, &a)?.parse()?,
            "--status-lag-ms" => cfg.status_lag_ms = next(&mut args, &a)?.parse()?,
            "--auth-fail-delay-ms" => cfg.auth_fail_delay_ms = next(&mut args, &a)?.parse()?,
            "--ticket-lifetime-secs" => cfg.ticket_lifetime_secs = next(&mut args, &a)?.parse()?,
            "--totp-step-secs" => cfg.totp_step_secs = next(&mut args, &a)?.parse()?,
            "--agent-delay-ms" => cfg.agent_delay_ms = next(&mut args, &a)?.parse()?,
            "--address-delay-ms" => cfg.address_delay_ms = next(&mut args, &a)?.parse()?,
            "--extract-schema" => {
                let full = pvesim::schema::Schema::from_json(&std::fs::read_to_string(next(&mut args, &a)?)?)?;
                println!("{}", serde_json::to_string_pretty(&full.extract_subset()?)?);
                return Ok(());
            }
            "--print-scenario-schema" => {
                println!("{}", serde_json::to_string_pretty(&Scenario::json_schema())?);
                return Ok(());
            }
            "--print-scenario" => {
                println!("{}", serde_json::to_string_pretty(&Scenario::default_cluster())?);
                return Ok(());
            }
            "-h" | "--help" => {
                println!("{USAGE}");
                return Ok(());
            }
            other => anyhow::bail!("unknown argument {other}\n{USAGE}"),
        }
    }
    let sim = Simulator::start(cfg)?;
    let ca_path = match ca_out {
        Some(p) => p,
        None => std::env::temp_dir().join(format!("pvesim-ca-{}.pem", sim.port())),
    };
    sim.write_ca(&ca_path)?;
    println!(
        "pvesim listening on https://{} ca={} fingerprint={}",
        sim.addr(),
        ca_path.display(),
        sim.fingerprint()
    );
    use std::io::Write;
    std::io::stdout().flush()?;
    // Serve until killed.
    loop {
        std::thread::park();
    }
}

/// `pvesim import ...`: the scenario of a real cluster on stdout.
fn import(args: Vec<String>) -> anyhow::Result<()> {
    use pvesim::import::http::{Reader, Trust};
    let (mut url, mut token_id, mut secret, mut name) = (None, None, None, None);
    let mut trust = Trust::WebPki;
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        let mut value = || it.next().ok_or_else(|| anyhow::anyhow!("{a} needs a value\n{USAGE}"));
        match a.as_str() {
            "--url" => url = Some(value()?),
            "--token-id" => token_id = Some(value()?),
            "--token-secret" => secret = Some(value()?),
            "--fingerprint" => trust = Trust::Fingerprint(value()?),
            "--ca" => trust = Trust::Ca(value()?.into()),
            "--insecure" => trust = Trust::Insecure,
            "--name" => name = Some(value()?),
            other => anyhow::bail!("unknown import argument {other}\n{USAGE}"),
        }
    }
    let need = |v: Option<String>, flag: &str| v.ok_or_else(|| anyhow::anyhow!("import needs {flag}\n{USAGE}"));
    // The secret may come from the environment, to keep it out of shell history.
    let secret = secret.or_else(|| std::env::var("PVESIM_IMPORT_TOKEN_SECRET").ok());
    let reader = Reader::new(
        &need(url, "--url")?,
        &need(token_id, "--token-id")?,
        &need(secret, "--token-secret (or PVESIM_IMPORT_TOKEN_SECRET)")?,
        trust,
    )?;
    let scenario = pvesim::import::import(&reader, name)?;
    println!("{}", serde_json::to_string_pretty(&scenario)?);
    Ok(())
}
