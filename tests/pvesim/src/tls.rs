//! Certificates: a generated CA signing the server certificate (default, so clients can
//! test `ca_path`), or a plain self-signed one; SANs localhost, 127.0.0.1, ::1.

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose};
use sha2::{Digest, Sha256};
use std::sync::Arc;

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum TlsMode {
    SelfSigned,
    Ca,
}

pub struct TlsMaterial {
    /// PEM of the CA, or of the self-signed server certificate.
    pub ca_pem: String,
    pub cert_der: Vec<u8>,
    pub key_der: Vec<u8>,
    /// SHA-256 of the server certificate DER, `AB:CD:...`.
    pub fingerprint: String,
}

fn sans() -> Vec<String> {
    vec!["localhost".into(), "127.0.0.1".into(), "::1".into()]
}

pub fn generate(mode: TlsMode) -> anyhow::Result<TlsMaterial> {
    let server_key = KeyPair::generate()?;
    let mut params = CertificateParams::new(sans())?;
    params.distinguished_name.push(DnType::CommonName, "pvesim");
    params
        .distinguished_name
        .push(DnType::OrganizationName, "PVE Cluster Node");
    let (cert, ca_pem) = match mode {
        TlsMode::SelfSigned => {
            let c = params.self_signed(&server_key)?;
            let pem = c.pem();
            (c, pem)
        }
        TlsMode::Ca => {
            let ca_key = KeyPair::generate()?;
            let mut ca = CertificateParams::new(Vec::<String>::new())?;
            ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
            ca.key_usages = vec![
                KeyUsagePurpose::KeyCertSign,
                KeyUsagePurpose::CrlSign,
                KeyUsagePurpose::DigitalSignature,
            ];
            ca.distinguished_name
                .push(DnType::CommonName, "pvesim Proxmox Virtual Environment CA");
            let ca_cert = ca.self_signed(&ca_key)?;
            let issuer = Issuer::new(ca, ca_key);
            let c = params.signed_by(&server_key, &issuer)?;
            (c, ca_cert.pem())
        }
    };
    let cert_der = cert.der().to_vec();
    Ok(TlsMaterial {
        ca_pem,
        fingerprint: fingerprint(&cert_der),
        key_der: server_key.serialize_der(),
        cert_der,
    })
}

pub fn fingerprint(der: &[u8]) -> String {
    Sha256::digest(der)
        .iter()
        .map(|b| format!("{b:02X}"))
        .collect::<Vec<_>>()
        .join(":")
}

pub fn server_config(m: &TlsMaterial) -> anyhow::Result<Arc<rustls::ServerConfig>> {
    use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut cfg = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_single_cert(
            vec![CertificateDer::from(m.cert_der.clone())],
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(m.key_der.clone())),
        )?;
    cfg.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(cfg))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprint_format() {
        let f = fingerprint(b"x");
        assert_eq!(f.len(), 32 * 3 - 1);
        assert!(f
            .chars()
            .all(|c| c == ':' || c.is_ascii_hexdigit() && !c.is_ascii_lowercase()));
    }

    #[test]
    fn generates_both_modes() {
        let ca = generate(TlsMode::Ca).unwrap();
        assert!(ca.ca_pem.starts_with("-----BEGIN CERTIFICATE-----"));
        assert_eq!(ca.fingerprint, fingerprint(&ca.cert_der));
        let ss = generate(TlsMode::SelfSigned).unwrap();
        assert!(server_config(&ss).is_ok());
    }
}
