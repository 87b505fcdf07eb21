//! One TOTP code for a whole `ansible-playbook` run: PVE 8/9 accepts a code once per
//! cluster (the last accepted step is `tfa.cfg`'s, shared by every node) and counts a
//! reused one as a failure (8 lock the user's TOTP). So the run logs in once per cluster,
//! whatever the forks, the `api_host` spellings of the cluster, or the case of `api_user`
//! in a case-insensitive realm; a code PVE refused is not sent again.
//!
//! The forks' concurrency is made to happen, not hoped for: pvesim holds the first
//! login's answer until every fork of the first task is either waiting in pvesim or
//! blocked on the run's login lock (read from `/proc/locks`), so all five tasks are
//! under way at once before the login can end. The outcome is then read from pvesim's
//! counters: codes accepted, refused, failures, logins.

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::anchor::support;
use serde_json::{json, Value};

const RENEW_AFTER: &str = "FERROX_TICKET_RENEW_AFTER";
const MFA_SECRET: &str = "JBSWY3DPEHPK3PXP";
const FIVE: [&str; 5] = ["h1", "h2", "h3", "h4", "h5"];

/// A TOTP code logs in once on PVE 8/9 (a reused one is refused and counted towards
/// locking the user's TOTP), and a run lasts longer than its window. Five hosts, five
/// forks: the first task runs on all of them at once with one `api_otp` code, and only
/// one of them logs in (the others wait for its ticket); a second task, then a third after
/// the code's window has passed, run on that ticket too.
#[test]
fn one_totp_code_logs_in_once_for_five_forks_and_the_whole_play() {
    let run = OtpPlay {
        hosts: &FIVE,
        wait: true,
        step: SHORT_STEP,
        hold_first_login: true,
        ..OtpPlay::default()
    }
    .run();
    run.all_succeeded(15);
    assert!(
        run.all_forks_waited_at_once,
        "the five first tasks were under way at once: {}",
        run.transcript
    );
    assert!(
        run.tasks
            .iter()
            .filter(|t| t.name == "info 3")
            .all(|t| t.start > run.window_end as f64),
        "the third task runs after the code's window"
    );
    run.one_code_one_login();
}

/// Two `api_host` spellings of one cluster (`127.0.0.1` for three hosts, `localhost` for
/// two), one user with `api_otp`, five forks at once: the first login's ticket is tried
/// at the other spelling and PVE accepts it there, so the code goes out once.
#[test]
fn two_spellings_of_one_cluster_share_one_totp_login() {
    let run = OtpPlay {
        hosts: &FIVE,
        api_host: "{{ '127.0.0.1' if inventory_hostname in ['h1', 'h2', 'h3'] else 'localhost' }}",
        hold_first_login: true,
        ..OtpPlay::default()
    }
    .run();
    run.all_succeeded(15);
    assert!(run.all_forks_waited_at_once, "{}", run.transcript);
    run.one_code_one_login();
    let refused = run.requests["log"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["status"] == json!(401))
        .count();
    assert_eq!(
        refused, 0,
        "the ticket was accepted at the other spelling: {}",
        run.requests["counts"]
    );
}

/// An AD realm set `case-sensitive: 0` and `api_user: Totp@ad` for the user `totp@ad`:
/// PVE logs in `totp@ad` and its ticket says so; the run uses it for every later task.
#[test]
fn a_case_insensitive_realm_logs_in_once_whatever_the_case_of_api_user() {
    let run = OtpPlay {
        hosts: &FIVE,
        user: "Totp@ad",
        password: "ad-pass",
        scenario: Some(with_ad_realm()),
        hold_first_login: true,
        ..OtpPlay::default()
    }
    .run();
    run.all_succeeded(15);
    assert!(run.all_forks_waited_at_once, "{}", run.transcript);
    run.one_code_one_login();
}

/// With reuse off every task would log in, and the code's second login would be refused
/// (and counted towards the lockout): the task is refused before any login, saying why.
#[test]
fn api_otp_with_reuse_off_is_refused_before_any_login() {
    let run = OtpPlay {
        env: &[(RENEW_AFTER, "0")],
        ..OtpPlay::default()
    }
    .run();
    for t in &run.tasks {
        assert!(t.failed, "{}: {}", t.name, t.result);
        let msg = t.msg();
        assert!(
            msg.starts_with("api_otp cannot be used with FERROX_TICKET_RENEW_AFTER=0: a TOTP code logs in once"),
            "{msg}"
        );
        assert!(msg.contains("use an API token"), "{msg}");
    }
    let r = &run.requests;
    assert_eq!(
        r["counts"]["POST /api2/json/access/ticket"],
        Value::Null,
        "no login: {}",
        r["counts"]
    );
    assert_eq!(r["totp_failures"], json!(0));
}

/// A code PVE refuses, given to five forks at once: the first login sends it and gets no
/// ticket; the four forks that waited for that login, and every later task, are refused
/// before sending it, so PVE counts one TOTP failure, not one per fork (8 lock the user).
#[test]
fn a_refused_totp_code_is_sent_once_whatever_the_forks() {
    let run = OtpPlay {
        hosts: &FIVE,
        code: Code::Wrong,
        hold_first_login: true,
        ..OtpPlay::default()
    }
    .run();
    assert_eq!(run.tasks.len(), 15, "{}", run.transcript);
    assert!(run.tasks.iter().all(|t| t.failed), "{}", run.transcript);
    assert!(run.all_forks_waited_at_once, "{}", run.transcript);
    let spent: Vec<_> = run
        .tasks
        .iter()
        .filter(|t| {
            t.msg()
                .starts_with("api_otp: an earlier task of this run logged in as mfa@pve with this code")
        })
        .collect();
    assert_eq!(
        spent.len(),
        14,
        "all but the first login are refused before sending: {}",
        run.transcript
    );
    let r = &run.requests;
    assert_eq!(
        [&r["totp_failures"], &r["totp_accepted"]],
        [&json!(1), &json!(0)],
        "one refused code: {}",
        r["counts"]
    );
}

/// pvesim's TOTP step where the play must outlive the code's window (`wait`): short, so
/// it takes seconds; else PVE's 30 s, so a loaded machine's slow start never outlives it.
const SHORT_STEP: u64 = 10;

/// The default scenario with an AD realm set `case-sensitive: 0` and its user `totp@ad`
/// (password `ad-pass`, mfa@pve's TOTP secret), an auditor of the cluster.
fn with_ad_realm() -> pvesim::Scenario {
    let mut scenario = pvesim::Scenario::default_cluster();
    scenario.realms.push(pvesim::state::RealmDef {
        realm: "ad".into(),
        kind: "ad".into(),
        case_sensitive: false,
    });
    scenario.users.push(pvesim::state::UserDef {
        userid: "totp@ad".into(),
        password: Some("ad-pass".into()),
        enable: true,
        totp_secret: Some(MFA_SECRET.into()),
        tokens: vec![],
    });
    scenario.acls.push(pvesim::state::AclDef {
        path: "/".into(),
        ugid: "totp@ad".into(),
        roles: vec!["PVEAuditor".into()],
        propagate: true,
    });
    scenario
}

/// The code the tasks give.
#[derive(Clone, Copy)]
enum Code {
    /// The next step's: accepted from now (one step early) to the end of the step after it.
    Valid,
    /// One PVE refuses: a step's code an hour from now.
    Wrong,
}

/// Three `proxmox_vm_info` tasks with one TOTP code on `hosts` (localhost without),
/// `--forks 5`, the third after a pause past the code's window (`wait`).
struct OtpPlay<'a> {
    /// pvesim's TOTP step in seconds.
    step: u64,
    hosts: &'a [&'a str],
    /// The tasks' `api_host` (a Jinja expression may choose per host); port: pvesim's.
    api_host: &'a str,
    user: &'a str,
    password: &'a str,
    code: Code,
    wait: bool,
    env: &'a [(&'a str, &'a str)],
    scenario: Option<pvesim::Scenario>,
    /// pvesim holds every `POST /access/ticket` until all the first task's forks are
    /// under way: waiting in pvesim, or blocked on the run's login lock.
    hold_first_login: bool,
}

impl Default for OtpPlay<'_> {
    fn default() -> Self {
        OtpPlay {
            step: 30,
            hosts: &[],
            api_host: "127.0.0.1",
            user: "mfa@pve",
            password: "mfa-pass",
            code: Code::Valid,
            wait: false,
            env: &[],
            scenario: None,
            hold_first_login: false,
        }
    }
}

struct OtpRun {
    /// The `info` tasks' outcomes, per host.
    tasks: Vec<support::Outcome>,
    /// When the code given stopped being accepted (Unix time).
    window_end: u64,
    /// `GET /_pvesim/requests` after the play.
    requests: Value,
    /// The held login was let go because every fork was under way (not at the hold's bound).
    all_forks_waited_at_once: bool,
    transcript: String,
}

impl OtpRun {
    fn all_succeeded(&self, tasks: usize) {
        assert_eq!(self.tasks.len(), tasks, "{}", self.transcript);
        for t in &self.tasks {
            assert!(!t.failed, "{} on {}: {}\n{}", t.name, t.host, t.result, self.transcript);
            assert!(t.result.get("_ferrox_ticket").is_none(), "{}", t.result);
        }
    }

    fn one_code_one_login(&self) {
        let r = &self.requests;
        assert_eq!(
            [
                &r["totp_accepted"],
                &r["codes_refused"],
                &r["totp_failures"],
                &r["logins"]
            ],
            [&json!(1), &json!(0), &json!(0), &json!(1)],
            "one code accepted, none refused, one full login: {}",
            r["counts"]
        );
    }
}

impl OtpPlay<'_> {
    fn run(self) -> OtpRun {
        let anchor = support::Anchor::start_with(pvesim::SimConfig {
            totp_step_secs: self.step,
            scenario: self.scenario.clone().unwrap_or_else(pvesim::Scenario::default_cluster),
            ..Default::default()
        });
        let now = unix_now();
        let at = match self.code {
            Code::Valid => now + self.step,
            Code::Wrong => now + 3600,
        };
        let code = pvesim::auth::totp_with_step(MFA_SECRET, at, self.step).unwrap();
        let window_end = (now / self.step + 3) * self.step;
        let file = anchor.dir().join("otp.yml");
        std::fs::write(&file, self.playbook(&code, &anchor.ca_path())).unwrap();
        let opts = support::RunOpts {
            hosts: self.hosts.iter().map(|h| h.to_string()).collect(),
            forks: Some(5),
            env: self.env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            ..Default::default()
        };
        let forks = self.hosts.len().max(1);
        let (run, all_forks_waited_at_once) = if self.hold_first_login {
            let control = Control::of(&anchor);
            control.call(
                "POST",
                "/_pvesim/hold",
                Some(json!({"path_regex": "^/api2/json/access/ticket$", "method": "POST", "max_ms": 300_000})),
            );
            std::thread::scope(|s| {
                let play = s.spawn(|| anchor.run_file(&file, &opts));
                let all = wait_until_under_way(&control, anchor.dir(), forks, || play.is_finished());
                control.call("DELETE", "/_pvesim/hold", None);
                (play.join().expect("the play's thread"), all)
            })
        } else {
            (anchor.run_file(&file, &opts), false)
        };
        let tasks: Vec<support::Outcome> = run
            .results
            .iter()
            .filter(|t| t.name.starts_with("info"))
            .cloned()
            .collect();
        OtpRun {
            tasks,
            window_end,
            requests: anchor.requests(),
            all_forks_waited_at_once,
            transcript: run.transcript(),
        }
    }

    fn playbook(&self, code: &str, ca: &Path) -> String {
        let task = |name: &str| {
            format!(
                "    - name: {name}\n      ferrox.proxmox.proxmox_vm_info:\n        api_host: \"{}\"\n        api_port: \"{{{{ anchor_api_port }}}}\"\n        api_user: \"{}\"\n        api_password: \"{}\"\n        api_otp: \"{code}\"\n        validate_certs: true\n        ca_path: {}\n        vmid: 100\n      ignore_errors: true\n",
                self.api_host,
                self.user,
                self.password,
                ca.display()
            )
        };
        let pause = match self.wait {
            true => format!(
                "    - name: pause\n      ansible.builtin.pause: {{seconds: {}}}\n",
                3 * self.step + 1
            ),
            false => String::new(),
        };
        let target = if self.hosts.is_empty() {
            "localhost".to_string()
        } else {
            self.hosts.join(",")
        };
        format!(
            "- hosts: {target}\n  gather_facts: false\n  tasks:\n{}{}{pause}{}",
            task("info 1"),
            task("info 2"),
            task("info 3")
        )
    }
}

/// Polls until `forks` of the first task are under way at once (held in pvesim, or
/// blocked on the run's login lock), or the play ended, or a bound far past any run
/// passed; whether all were.
fn wait_until_under_way(control: &Control, dir: &Path, forks: usize, ended: impl Fn() -> bool) -> bool {
    let bound = Instant::now() + Duration::from_secs(240);
    while Instant::now() < bound && !ended() {
        let held = control.call("GET", "/_pvesim/hold", None)["waiting"]
            .as_u64()
            .unwrap_or(0) as usize;
        if held > 0 && held + blocked_on_login_locks(dir) >= forks {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

/// How many processes wait for one of the run's login locks (`ferrox-login-*.lock` in
/// ansible's per-run temp dir under the anchor's `ansible-tmp/local`): the lines of
/// `/proc/locks` marked `->` (blocked) on those files' inodes.
fn blocked_on_login_locks(dir: &Path) -> usize {
    let mut inodes = Vec::new();
    for run_dir in std::fs::read_dir(dir.join("ansible-tmp/local"))
        .into_iter()
        .flatten()
        .flatten()
    {
        for file in std::fs::read_dir(run_dir.path()).into_iter().flatten().flatten() {
            let login_lock = file.file_name().to_string_lossy().starts_with("ferrox-login-");
            if let (true, Ok(meta)) = (login_lock, file.metadata()) {
                inodes.push(meta.ino());
            }
        }
    }
    let table = std::fs::read_to_string("/proc/locks").unwrap_or_default();
    table
        .lines()
        .filter(|line| line.contains("->"))
        .filter_map(|line| line.split_whitespace().find(|f| f.matches(':').count() == 2))
        .filter_map(|id| id.rsplit(':').next()?.parse::<u64>().ok())
        .filter(|ino| inodes.contains(ino))
        .count()
}

/// pvesim's control API with a JSON body (the anchor's own sends none).
struct Control {
    agent: ureq::Agent,
    base: String,
}

impl Control {
    fn of(anchor: &support::Anchor) -> Control {
        use ureq::tls::{Certificate, RootCerts, TlsConfig};
        let ca = Certificate::from_pem(anchor.sim().ca_pem().as_bytes())
            .unwrap()
            .to_owned();
        let tls = TlsConfig::builder()
            .root_certs(RootCerts::Specific(std::sync::Arc::new(vec![ca])))
            .build();
        Control {
            agent: ureq::Agent::config_builder()
                .tls_config(tls)
                .timeout_global(Some(Duration::from_secs(30)))
                .build()
                .new_agent(),
            base: format!("https://127.0.0.1:{}", anchor.sim().port()),
        }
    }

    fn call(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let url = format!("{}{path}", self.base);
        let answer = match (method, body) {
            ("GET", _) => self.agent.get(&url).call(),
            ("DELETE", _) => self.agent.delete(&url).call(),
            (_, Some(body)) => self
                .agent
                .post(&url)
                .header("Content-Type", "application/json")
                .send(body.to_string()),
            (_, None) => self.agent.post(&url).send_empty(),
        };
        let text = answer
            .unwrap_or_else(|e| panic!("{method} {path}: {e}"))
            .body_mut()
            .read_to_string()
            .unwrap_or_default();
        serde_json::from_str(&text).unwrap_or(Value::Null)
    }
}

fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}
