//! The PVE simulator in-process for the client's and the cluster reads' tests: started
//! with its default scenario, reached with a token that trusts its CA, and steered
//! through its control endpoints (injected faults, request counts).

use pvesim::{SimConfig, Simulator};
use serde_json::Value;

use ferrox_pve_client::connection::ConnectionParams;

/// The secret of the token [`token`] connects with: no output may show it.
pub const AUTOMATION_SECRET: &str = "5f1c9e0a-7d3b-4c2e-9a61-0b8d4e2f7a13";
/// The secret of `ansible@pve!readonly`.
pub const READONLY_SECRET: &str = "0a6b2d4c-3e8f-4a1b-9c7d-5e2f1a0b3c4d";
/// The password of `root@pam`.
pub const ROOT_PASSWORD: &str = "pvesim-root";

/// A simulator of the default scenario.
pub fn start() -> Simulator {
    Simulator::start(SimConfig::default()).expect("simulator starts")
}

/// Token auth as `ansible@pve!automation`, trusting the simulator's CA.
pub fn token(sim: &Simulator) -> ConnectionParams {
    let ca = std::env::temp_dir().join(format!("ferrox-pvesim-ca-{}-{}.pem", std::process::id(), sim.port()));
    sim.write_ca(&ca).unwrap();
    ConnectionParams {
        host: "127.0.0.1".into(),
        port: Some(sim.port()),
        user: "ansible@pve".into(),
        token_id: Some("automation".into()),
        token_secret: Some(AUTOMATION_SECRET.into()),
        validate_certs: true,
        ca_path: Some(ca),
        timeout_secs: 5,
        ..Default::default()
    }
}

/// The simulator's control endpoints (`/_pvesim/...`), outside the API client on purpose.
pub struct Control {
    agent: ureq::Agent,
    base: String,
}

impl Control {
    pub fn of(sim: &Simulator) -> Control {
        let tls = ureq::tls::TlsConfig::builder().disable_verification(true).build();
        let agent = ureq::Agent::config_builder().tls_config(tls).build().new_agent();
        Control {
            agent,
            base: format!("https://127.0.0.1:{}/_pvesim", sim.port()),
        }
    }
    pub fn fault(&self, fault: Value) {
        self.agent
            .post(&format!("{}/faults", self.base))
            .header("Content-Type", "application/json")
            .send(fault.to_string())
            .expect("fault accepted");
    }
    /// How many times `METHOD /api2/json/path` was served.
    pub fn count(&self, key: &str) -> u64 {
        let body = self
            .agent
            .get(&format!("{}/requests", self.base))
            .call()
            .unwrap()
            .body_mut()
            .read_to_string()
            .unwrap();
        let log: Value = serde_json::from_str(&body).unwrap();
        log["counts"][key].as_u64().unwrap_or(0)
    }
}
