//! Which server certificates the client trusts, and messages that say how to fix a
//! rejected one.
//!
//! Every mode goes through one [`Verifier`], which also records the SHA-256
//! fingerprint of the certificate the server presented: a failure message can then
//! show the user the exact value to pin with `api_cert_fingerprint`.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::{CryptoProvider, WebPkiSupportedAlgorithms};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};

use super::error::{ApiError, ApiErrorKind};
use crate::connection::ConnectionParams;

/// Where the hint for a self-signed node certificate points.
const PVE_ROOT_CA: &str = "/etc/pve/pve-root-ca.pem";

/// The certificate policy chosen by the connection options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Trust {
    /// `validate_certs: true`: the bundled web PKI roots (webpki-roots).
    WebPki,
    /// `validate_certs: true` with `ca_path`: only the CA(s) in that PEM file.
    CaFile(PathBuf),
    /// `api_cert_fingerprint`: the end-entity certificate's SHA-256, whoever signed it
    /// (64 upper-case hex digits). An explicit pin wins over `validate_certs: false`.
    Pinned(String),
    /// `validate_certs: false`: any certificate (handshake signatures are still checked).
    Insecure,
}

impl Trust {
    /// The trust the connection parameters ask for: a pinned fingerprint wins, then `validate_certs: false`, then a CA file, else the web PKI.
    pub fn from_params(p: &ConnectionParams) -> Trust {
        match (&p.cert_fingerprint, p.validate_certs, &p.ca_path) {
            (Some(pin), _, _) => Trust::Pinned(pin.clone()),
            (None, false, _) => Trust::Insecure,
            (None, true, Some(ca)) => Trust::CaFile(ca.clone()),
            (None, true, None) => Trust::WebPki,
        }
    }
}

/// What the verifier saw during the latest handshake, and the first certificate it
/// accepted (the endpoint's, for the run's tickets: `ticket_reuse`).
#[derive(Debug, Default)]
pub struct Observed {
    inner: Mutex<Seen>,
    first_accepted: Mutex<Option<String>>,
}

/// What the verifier saw of one handshake: the certificate presented and why it was refused.
#[derive(Debug, Default, Clone)]
pub struct Seen {
    /// Colon-separated SHA-256 of the presented end-entity certificate.
    pub presented: Option<String>,
    /// Why the certificate was rejected, if it was.
    pub rejection: Option<rustls::Error>,
}

impl Observed {
    /// Forgets the last handshake, before a new one.
    pub fn clear(&self) {
        if let Ok(mut s) = self.inner.lock() {
            *s = Seen::default();
        }
    }
    /// A copy of what the latest handshake showed.
    pub fn snapshot(&self) -> Seen {
        self.inner.lock().map(|s| s.clone()).unwrap_or_default()
    }
    /// The SHA-256 fingerprint (`AB:CD:…`) of the first certificate this client accepted.
    pub fn first_accepted(&self) -> Option<String> {
        self.first_accepted.lock().ok()?.clone()
    }
    fn record(&self, presented: String, rejection: Option<rustls::Error>) {
        if rejection.is_none() {
            if let Ok(mut first) = self.first_accepted.lock() {
                first.get_or_insert_with(|| presented.clone());
            }
        }
        if let Ok(mut s) = self.inner.lock() {
            *s = Seen {
                presented: Some(presented),
                rejection,
            };
        }
    }
}

/// `AB:CD:...` SHA-256 of a DER certificate, as PVE's GUI shows it.
pub fn fingerprint(der: &[u8]) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, der);
    digest
        .as_ref()
        .iter()
        .map(|b| format!("{b:02X}"))
        .collect::<Vec<_>>()
        .join(":")
}

/// Whether a certificate matches a pin (64 hex digits, any case, colons allowed).
pub fn pin_matches(der: &[u8], pin: &str) -> bool {
    let pin: String = pin.chars().filter(|c| *c != ':').collect();
    fingerprint(der).replace(':', "").eq_ignore_ascii_case(&pin)
}

/// `ABCD...` (64 hex digits) to `AB:CD:...`.
fn with_colons(hex: &str) -> String {
    hex.as_bytes()
        .chunks(2)
        .map(|c| String::from_utf8_lossy(c).into_owned())
        .collect::<Vec<_>>()
        .join(":")
}

enum Check {
    Roots(Arc<WebPkiServerVerifier>),
    Pinned(String),
    Any,
}

/// The one certificate verifier: applies the [`Trust`] and records what it saw.
pub struct Verifier {
    check: Check,
    algorithms: WebPkiSupportedAlgorithms,
    observed: Arc<Observed>,
}

impl std::fmt::Debug for Verifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Verifier")
    }
}

impl ServerCertVerifier for Verifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let result = match &self.check {
            Check::Roots(v) => v.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now),
            Check::Pinned(pin) if pin_matches(end_entity, pin) => Ok(ServerCertVerified::assertion()),
            Check::Pinned(_) => Err(rustls::Error::InvalidCertificate(
                rustls::CertificateError::ApplicationVerificationFailure,
            )),
            Check::Any => Ok(ServerCertVerified::assertion()),
        };
        self.observed
            .record(fingerprint(end_entity), result.as_ref().err().cloned());
        result
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

/// The rustls client configuration for a trust policy (ring provider, TLS 1.2/1.3).
pub fn client_config(trust: &Trust, observed: Arc<Observed>) -> Result<Arc<ClientConfig>, ApiError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let check = match trust {
        Trust::WebPki => {
            let roots = RootCertStore {
                roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
            };
            Check::Roots(roots_verifier(roots, &provider)?)
        }
        Trust::CaFile(path) => Check::Roots(roots_verifier(load_ca_file(path)?, &provider)?),
        Trust::Pinned(pin) => Check::Pinned(pin.clone()),
        Trust::Insecure => Check::Any,
    };
    let verifier = Verifier {
        check,
        algorithms: provider.signature_verification_algorithms,
        observed,
    };
    let config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| ApiError::other(ApiErrorKind::Tls, format!("TLS setup failed: {e}")))?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier))
        .with_no_client_auth();
    Ok(Arc::new(config))
}

fn roots_verifier(roots: RootCertStore, provider: &Arc<CryptoProvider>) -> Result<Arc<WebPkiServerVerifier>, ApiError> {
    WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
        .build()
        .map_err(|e| ApiError::other(ApiErrorKind::Tls, format!("TLS setup failed: {e}")))
}

/// The CA certificates of a PEM file named by `ca_path`.
pub fn load_ca_file(path: &Path) -> Result<RootCertStore, ApiError> {
    let fail = |why: String| ApiError::other(ApiErrorKind::Tls, why);
    let pem = std::fs::read(path)
        .map_err(|e| fail(format!("ca_path {} could not be read: {e}. Point ca_path at a PEM file with the CA certificate (/etc/pve/pve-root-ca.pem on a node).", path.display())))?;
    let mut store = RootCertStore::empty();
    let mut found = 0;
    for cert in CertificateDer::pem_slice_iter(&pem) {
        let cert = cert.map_err(|e| fail(format!("ca_path {} is not a valid PEM file: {e}", path.display())))?;
        found += 1;
        store.add(cert).map_err(|e| {
            fail(format!(
                "ca_path {}: certificate {found} cannot be used as a CA: {e}",
                path.display()
            ))
        })?;
    }
    if found == 0 {
        return Err(fail(format!(
            "ca_path {} holds no PEM certificate (no -----BEGIN CERTIFICATE----- block). Point ca_path at the CA certificate in PEM form (/etc/pve/pve-root-ca.pem on a node).",
            path.display()
        )));
    }
    Ok(store)
}

/// The one message for a failed handshake: what happened and how to fix it.
/// `transport` is the low-level error text, used when the verifier rejected nothing.
pub fn failure_message(trust: &Trust, origin: &str, seen: &Seen, transport: &str) -> String {
    let presented = seen.presented.as_deref().unwrap_or("unknown");
    let Some(rejection) = &seen.rejection else {
        return format!(
            "TLS handshake with {origin} failed: {transport}. Check that api_host and api_port point at the Proxmox VE API (port 8006 by default)."
        );
    };
    match trust {
        Trust::Pinned(pin) => format!(
            "TLS certificate of {origin} does not match api_cert_fingerprint: expected {}, the server presented {presented}. If the node's certificate was renewed on purpose, set api_cert_fingerprint to the new fingerprint.",
            with_colons(pin)
        ),
        Trust::CaFile(path) => format!(
            "TLS certificate of {origin} could not be verified against ca_path {} ({rejection}). Set ca_path to the CA that signed it ({PVE_ROOT_CA} on a node), or api_cert_fingerprint to its SHA-256 fingerprint (the server presented {presented}), or validate_certs: false to skip verification.",
            path.display()
        ),
        Trust::WebPki | Trust::Insecure => format!(
            "TLS certificate of {origin} could not be verified ({rejection}). Proxmox VE uses a self-signed certificate by default: set api_cert_fingerprint to its SHA-256 fingerprint (the server presented {presented}), or ca_path to the CA that signed it ({PVE_ROOT_CA} on a node), or validate_certs: false to skip verification."
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprint_is_colon_separated_upper_hex_sha256() {
        // SHA-256 of the empty input.
        assert_eq!(
            fingerprint(b""),
            "E3:B0:C4:42:98:FC:1C:14:9A:FB:F4:C8:99:6F:B9:24:27:AE:41:E4:64:9B:93:4C:A4:95:99:1B:78:52:B8:55"
        );
    }

    #[test]
    fn pin_accepts_any_spelling_of_the_same_digest() {
        let fp = fingerprint(b"cert");
        assert!(pin_matches(b"cert", &fp));
        assert!(pin_matches(b"cert", &fp.replace(':', "").to_lowercase()));
        assert!(!pin_matches(b"other cert", &fp));
    }

    #[test]
    fn trust_follows_the_options() {
        let mut p = ConnectionParams {
            validate_certs: true,
            ..Default::default()
        };
        assert_eq!(Trust::from_params(&p), Trust::WebPki);
        p.ca_path = Some("/ca.pem".into());
        assert_eq!(Trust::from_params(&p), Trust::CaFile("/ca.pem".into()));
        p.validate_certs = false;
        assert_eq!(Trust::from_params(&p), Trust::Insecure);
        p.cert_fingerprint = Some("AB".repeat(32));
        assert_eq!(Trust::from_params(&p), Trust::Pinned("AB".repeat(32)));
    }

    #[test]
    fn unknown_issuer_message_names_every_fix_and_the_presented_fingerprint() {
        let seen = Seen {
            presented: Some("AA:BB".into()),
            rejection: Some(rustls::Error::InvalidCertificate(
                rustls::CertificateError::UnknownIssuer,
            )),
        };
        let msg = failure_message(&Trust::WebPki, "https://pve1:8006", &seen, "io");
        assert_eq!(
            msg,
            "TLS certificate of https://pve1:8006 could not be verified (invalid peer certificate: UnknownIssuer). Proxmox VE uses a self-signed certificate by default: set api_cert_fingerprint to its SHA-256 fingerprint (the server presented AA:BB), or ca_path to the CA that signed it (/etc/pve/pve-root-ca.pem on a node), or validate_certs: false to skip verification."
        );
    }

    #[test]
    fn pin_mismatch_message_shows_both_fingerprints() {
        let seen = Seen {
            presented: Some("CD:CD".into()),
            rejection: Some(rustls::Error::InvalidCertificate(
                rustls::CertificateError::ApplicationVerificationFailure,
            )),
        };
        let msg = failure_message(&Trust::Pinned("ABAB".into()), "https://pve1:8006", &seen, "io");
        assert!(msg.contains("expected AB:AB, the server presented CD:CD"), "{msg}");
    }

    #[test]
    fn handshake_failure_without_rejection_names_the_endpoint_options() {
        let msg = failure_message(
            &Trust::WebPki,
            "https://pve1:80",
            &Seen::default(),
            "received corrupt message",
        );
        assert!(
            msg.starts_with("TLS handshake with https://pve1:80 failed: received corrupt message."),
            "{msg}"
        );
        assert!(msg.contains("api_port"));
    }

    #[test]
    fn ca_file_errors_name_ca_path() {
        let missing = load_ca_file(Path::new("/nonexistent/ca.pem")).unwrap_err();
        assert!(
            missing
                .message
                .starts_with("ca_path /nonexistent/ca.pem could not be read"),
            "{}",
            missing.message
        );
        let dir = std::env::temp_dir().join(format!("ferrox-ca-test-{}", std::process::id()));
        std::fs::write(&dir, "not a certificate").unwrap();
        let not_pem = load_ca_file(&dir).unwrap_err();
        assert!(
            not_pem.message.contains("holds no PEM certificate"),
            "{}",
            not_pem.message
        );
        std::fs::remove_file(&dir).ok();
    }
}
