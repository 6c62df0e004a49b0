//! TLS settings: rustls's server configuration (ring provider), built from
//! the `tls-*` options at start-up and rebuilt by CONFIG SET, as Redis's
//! tlsConfigure does. The connection that uses it is connection/tls.rs;
//! the replica's side (`tls-replication`) uses [`client_config`].
//!
//! A build reads the certificate, key and CA files (small files, and a rare
//! event): CONFIG SET does it through `tokio::task::block_in_place`, so the
//! network thread's other clients move to another worker meanwhile.
//! Connections take the configuration in force when they are accepted;
//! those already open keep theirs.
//!
//! What OpenSSL does and rustls cannot (docs/compatibility.md, "TLS"):
//! no TLS 1.0/1.1, no finite-field DHE (`tls-dh-params-file` is ignored
//! with a warning), no encrypted private keys (`tls-key-file-pass` with an
//! encrypted key is refused), and cipher lists only name the AEAD suites
//! rustls has.

mod sessions;

use parking_lot::RwLock;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::ring::cipher_suite as suites;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::server::{NoServerSessionStorage, WebPkiClientVerifier};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, ServerConfig,
    SignatureScheme, SupportedCipherSuite,
};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use crate::config::{TlsAuthClients, TlsOptions};

/// CONFIG SET's reason when a TLS option cannot be applied (Redis's text;
/// the log says why).
pub const UPDATE_FAILED: &str = "Unable to update TLS configuration. Check server logs.";

/// How long a TLS handshake may take, whatever `timeout` says (Redis has
/// no bound while `timeout` is 0: a stalled handshake would hold its
/// connection slot for ever).
pub const HANDSHAKE_DEADLINE: Duration = Duration::from_secs(10);

/// CONFIG SET's reason when the new `tls-port` cannot be bound (Redis's
/// text).
pub const LISTEN_FAILED: &str = "Unable to listen on this port. Check server logs.";

/// Where CONFIG SET tls-port sends the listeners it bound (start-up's
/// supervisor runs them and closes the old ones).
pub type ListenerSink = tokio::sync::mpsc::UnboundedSender<Vec<std::net::TcpListener>>;

/// The TLS configuration in force for new connections.
#[derive(Default)]
pub struct TlsContext {
    server: RwLock<Option<Arc<ServerConfig>>>,
    client: RwLock<Option<Arc<ClientConfig>>>,
    listeners: parking_lot::Mutex<Option<ListenerSink>>,
}

impl TlsContext {
    /// The server configuration a connection accepted now uses.
    pub fn server_config(&self) -> Option<Arc<ServerConfig>> {
        self.server.read().clone()
    }

    /// The configuration a replica connects to its primary with.
    pub fn client_config(&self) -> Option<Arc<ClientConfig>> {
        self.client.read().clone()
    }

    /// Start-up: where new TLS listeners go.
    pub fn set_listener_sink(&self, sink: ListenerSink) {
        *self.listeners.lock() = Some(sink);
    }

    fn install(&self, built: Built) {
        *self.server.write() = Some(Arc::new(built.server));
        *self.client.write() = built.client.map(Arc::new);
    }
}

/// Both sides' configurations from one set of options (the client's when
/// there is a CA to verify a primary with).
pub struct Built {
    server: ServerConfig,
    client: Option<ClientConfig>,
}

/// Start-up: builds and installs the configuration when TLS is in use. An
/// error names the file or option at fault.
pub fn configure(context: &TlsContext, options: &TlsOptions) -> Result<(), String> {
    if !options.enabled() {
        return Ok(());
    }
    let built = build(options).map_err(|e| format!("Failed to configure TLS: {e}"))?;
    context.install(built);
    Ok(())
}

/// CONFIG SET: rebuilds when a TLS option changed and TLS is in use, and
/// moves the TLS listeners to a new `tls-port` (on the `bind` addresses);
/// on failure logs why and returns Redis's error text, keeping what is in
/// force (the new port is bound before anything is installed).
pub fn reload(
    context: &TlsContext,
    old: &TlsOptions,
    new: &TlsOptions,
    (binds, backlog): (&[String], u32),
) -> Result<(), String> {
    if old == new {
        return Ok(());
    }
    let built = if new.enabled() {
        let options = new.clone();
        let built = match tokio::runtime::Handle::try_current() {
            Ok(handle) if handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
                tokio::task::block_in_place(move || build(&options))
            }
            _ => build(&options),
        };
        match built {
            Ok(built) => Some(built),
            Err(e) => {
                tracing::warn!(
                    "Failed applying the new TLS configuration, keeping the previous one: {e}"
                );
                return Err(UPDATE_FAILED.to_string());
            }
        }
    } else {
        None
    };
    let listeners = match new.port {
        port if port == old.port => None,
        0 => Some(Vec::new()),
        port => match crate::listen::bind_all(binds, port, backlog) {
            Ok(listeners) => Some(listeners),
            Err(e) => {
                tracing::warn!("Failed binding the new tls-port, keeping the previous one: {e}");
                return Err(LISTEN_FAILED.to_string());
            }
        },
    };
    if let Some(built) = built {
        context.install(built);
        tracing::info!("TLS configuration reloaded; new connections use it");
    }
    if let Some(listeners) = listeners {
        match context.listeners.lock().as_ref() {
            Some(sink) if sink.send(listeners).is_ok() => {}
            _ => return Err(LISTEN_FAILED.to_string()),
        }
    }
    Ok(())
}

/// Reads the files and builds both configurations (blocking).
pub fn build(options: &TlsOptions) -> Result<Built, String> {
    for warning in warnings(options) {
        tracing::warn!("{warning}");
    }
    if options.cert_file.is_empty() {
        return Err("No tls-cert-file configured".into());
    }
    if options.key_file.is_empty() {
        return Err("No tls-key-file configured".into());
    }
    let needs_ca = options.auth_clients != TlsAuthClients::No || options.replication;
    if needs_ca && options.ca_cert_file.is_empty() && options.ca_cert_dir.is_empty() {
        return Err("Either tls-ca-cert-file or tls-ca-cert-dir must be specified when tls-replication or tls-auth-clients are enabled".into());
    }
    let versions = protocol_versions(&options.protocols)?;
    let provider = Arc::new(CryptoProvider {
        cipher_suites: cipher_suites(&options.ciphers, &options.ciphersuites)?,
        ..rustls::crypto::ring::default_provider()
    });
    let roots = if options.ca_cert_file.is_empty() && options.ca_cert_dir.is_empty() {
        None
    } else {
        Some(Arc::new(load_roots(
            &options.ca_cert_file,
            &options.ca_cert_dir,
        )?))
    };

    let builder = ServerConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&versions)
        .map_err(|e| format!("Failed to configure ciphers: {e}"))?;
    let builder = match (options.auth_clients, &roots) {
        (TlsAuthClients::No, _) | (_, None) => builder.with_no_client_auth(),
        (auth, Some(roots)) => {
            let mut verifier =
                WebPkiClientVerifier::builder_with_provider(roots.clone(), provider.clone());
            if auth == TlsAuthClients::Optional {
                verifier = verifier.allow_unauthenticated();
            }
            let verifier = verifier
                .build()
                .map_err(|e| format!("Failed to configure CA certificate(s): {e}"))?;
            builder.with_client_cert_verifier(verifier)
        }
    };
    let certs = load_certs(&options.cert_file)?;
    let key = load_key(
        &options.key_file,
        &options.key_file_pass,
        "tls-key-file-pass",
    )?;
    let mut server = builder
        .with_single_cert(certs, key)
        .map_err(|e| format!("Private key does not match the certificate: {e}"))?;
    server.ignore_client_order = options.prefer_server_ciphers;
    if options.session_caching {
        server.session_storage = Arc::new(sessions::SessionCache::new(
            options.session_cache_size,
            Duration::from_secs(options.session_cache_timeout_secs),
        ));
    } else {
        server.session_storage = Arc::new(NoServerSessionStorage {});
        server.send_tls13_tickets = 0;
    }

    let client = match roots {
        Some(roots) => Some(client_config_from(options, provider, &versions, roots)?),
        None => None,
    };
    Ok(Built { server, client })
}

/// The replica's side: the primary's certificate verified against the CA
/// options (its chain, not its name, as Redis verifies it);
/// `tls-client-cert-file`/`-key-file` shown, else the server's.
fn client_config_from(
    options: &TlsOptions,
    provider: Arc<CryptoProvider>,
    versions: &[&'static rustls::SupportedProtocolVersion],
    roots: Arc<RootCertStore>,
) -> Result<ClientConfig, String> {
    let verifier = WebPkiServerVerifier::builder_with_provider(roots, provider.clone())
        .build()
        .map_err(|e| format!("Failed to configure CA certificate(s): {e}"))?;
    let builder = ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(versions)
        .map_err(|e| format!("Failed to configure ciphers: {e}"))?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(ChainOnly(verifier)));
    let (cert_file, key_file, pass, pass_option) = if options.client_cert_file.is_empty() {
        (
            &options.cert_file,
            &options.key_file,
            &options.key_file_pass,
            "tls-key-file-pass",
        )
    } else {
        (
            &options.client_cert_file,
            &options.client_key_file,
            &options.client_key_file_pass,
            "tls-client-key-file-pass",
        )
    };
    let certs = load_certs(cert_file)?;
    let key = load_key(key_file, pass, pass_option)?;
    builder
        .with_client_auth_cert(certs, key)
        .map_err(|e| format!("Private key does not match the client certificate: {e}"))
}

/// A primary's certificate is checked as Redis checks it: its chain
/// against the CAs, signatures and validity, but not the host name it was
/// reached by (Redis sets no host to verify).
#[derive(Debug)]
struct ChainOnly(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for ChainOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

/// What a set of options asks that rustls cannot do, as start-up and
/// reload warnings.
pub fn warnings(options: &TlsOptions) -> Vec<String> {
    let mut out = Vec::new();
    if !options.dh_params_file.is_empty() {
        out.push(format!(
            "tls-dh-params-file {} is ignored: rustls has no finite-field Diffie-Hellman; key exchange is ECDHE only",
            options.dh_params_file
        ));
    }
    let old: Vec<&str> = options
        .protocols
        .split_whitespace()
        .filter(|p| p.eq_ignore_ascii_case("tlsv1") || p.eq_ignore_ascii_case("tlsv1.1"))
        .collect();
    if !old.is_empty() {
        out.push(format!(
            "tls-protocols: {} ignored, rustls has no TLS before 1.2",
            old.join(" ")
        ));
    }
    out
}

/// The server name a replica expects in its primary's certificate: the
/// host it was told, or an IP address.
pub fn server_name(host: &str) -> Result<ServerName<'static>, String> {
    ServerName::try_from(host.to_string())
        .map_err(|e| format!("invalid TLS server name {host}: {e}"))
}

/// `tls-protocols`: "TLSv1.2 TLSv1.3" or a subset (empty: both).
fn protocol_versions(text: &str) -> Result<Vec<&'static rustls::SupportedProtocolVersion>, String> {
    const INVALID: &str = "Invalid tls-protocols specified. Use a combination of 'TLSv1', 'TLSv1.1', 'TLSv1.2' and 'TLSv1.3'.";
    if text.trim().is_empty() {
        return Ok(vec![&rustls::version::TLS13, &rustls::version::TLS12]);
    }
    let mut versions = Vec::new();
    for word in text.split_whitespace() {
        match word.to_ascii_lowercase().as_str() {
            "tlsv1" | "tlsv1.1" => {}
            "tlsv1.2" => versions.push(&rustls::version::TLS12),
            "tlsv1.3" => versions.push(&rustls::version::TLS13),
            _ => return Err(INVALID.into()),
        }
    }
    if versions.is_empty() {
        return Err("tls-protocols names no protocol rustls supports (TLSv1.2, TLSv1.3)".into());
    }
    Ok(versions)
}

/// OpenSSL's names of the TLS 1.2 suites rustls (ring) has.
const TLS12_NAMES: &[(&str, SupportedCipherSuite)] = &[
    (
        "ECDHE-ECDSA-AES256-GCM-SHA384",
        suites::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
    ),
    (
        "ECDHE-ECDSA-AES128-GCM-SHA256",
        suites::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
    ),
    (
        "ECDHE-ECDSA-CHACHA20-POLY1305",
        suites::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
    ),
    (
        "ECDHE-RSA-AES256-GCM-SHA384",
        suites::TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
    ),
    (
        "ECDHE-RSA-AES128-GCM-SHA256",
        suites::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
    ),
    (
        "ECDHE-RSA-CHACHA20-POLY1305",
        suites::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
    ),
];

/// The TLS 1.3 suites rustls (ring) has, by their standard names.
const TLS13_NAMES: &[(&str, SupportedCipherSuite)] = &[
    ("TLS_AES_256_GCM_SHA384", suites::TLS13_AES_256_GCM_SHA384),
    ("TLS_AES_128_GCM_SHA256", suites::TLS13_AES_128_GCM_SHA256),
    (
        "TLS_CHACHA20_POLY1305_SHA256",
        suites::TLS13_CHACHA20_POLY1305_SHA256,
    ),
];

/// The suites offered: `tls-ciphersuites` (TLS 1.3) then `tls-ciphers`
/// (TLS 1.2), each in its list's order; an empty option keeps every suite
/// of its version. Unknown names are skipped, as OpenSSL skips them; a
/// list with nothing usable is an error, as OpenSSL refuses it.
fn cipher_suites(ciphers: &str, ciphersuites: &str) -> Result<Vec<SupportedCipherSuite>, String> {
    let mut out = Vec::new();
    if ciphersuites.is_empty() {
        out.extend(TLS13_NAMES.iter().map(|(_, s)| *s));
    } else {
        let before = out.len();
        for name in ciphersuites.split(':') {
            if let Some((_, suite)) = TLS13_NAMES
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(name))
            {
                if !out.contains(suite) {
                    out.push(*suite);
                }
            }
        }
        if out.len() == before {
            return Err(format!("Failed to configure ciphersuites: {ciphersuites}"));
        }
    }
    if ciphers.is_empty() {
        out.extend(TLS12_NAMES.iter().map(|(_, s)| *s));
    } else {
        let before = out.len();
        for term in ciphers
            .split([':', ',', ' ', ';'])
            .filter(|t| !t.is_empty())
        {
            let all = ["DEFAULT", "ALL", "HIGH", "ECDHE", "EECDH", "AESGCM"];
            let picked: Vec<SupportedCipherSuite> =
                if all.iter().any(|a| a.eq_ignore_ascii_case(term)) {
                    TLS12_NAMES.iter().map(|(_, s)| *s).collect()
                } else {
                    TLS12_NAMES
                        .iter()
                        .filter(|(n, _)| n.eq_ignore_ascii_case(term))
                        .map(|(_, s)| *s)
                        .collect()
                };
            for suite in picked {
                if !out.contains(&suite) {
                    out.push(suite);
                }
            }
        }
        if out.len() == before {
            return Err(format!("Failed to configure ciphers: {ciphers}"));
        }
    }
    Ok(out)
}

/// Reads a PEM file, with OpenSSL's wording for a file that cannot be.
fn read_file(path: &str, what: &str) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("Failed to load {what}: {path}: {}", os_error(&e)))
}

fn os_error(e: &std::io::Error) -> String {
    let text = e.to_string();
    match text.find(" (os error ") {
        Some(cut) => text[..cut].to_string(),
        None => text,
    }
}

fn load_certs(path: &str) -> Result<Vec<CertificateDer<'static>>, String> {
    let pem = read_file(path, "certificate")?;
    let certs = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("Failed to load certificate: {path}: {e}"))?;
    if certs.is_empty() {
        return Err(format!(
            "Failed to load certificate: {path}: no certificate in the file"
        ));
    }
    Ok(certs)
}

/// A private key; an encrypted one is refused (rustls cannot decrypt it).
fn load_key(path: &str, pass: &str, pass_option: &str) -> Result<PrivateKeyDer<'static>, String> {
    let pem = read_file(path, "private key")?;
    if std::str::from_utf8(&pem).is_ok_and(|t| {
        t.contains("-----BEGIN ENCRYPTED PRIVATE KEY-----") || t.contains("Proc-Type: 4,ENCRYPTED")
    }) {
        return Err(format!(
            "Failed to load private key: {path}: the key is encrypted, and rustls reads no encrypted keys \
             ({pass_option} cannot be honoured); decrypt it: openssl pkey -in {path} -out <plain.pem>"
        ));
    }
    if !pass.is_empty() {
        tracing::warn!("{pass_option} is ignored: {path} is not encrypted");
    }
    PrivateKeyDer::from_pem_slice(&pem)
        .map_err(|e| format!("Failed to load private key: {path}: {e}"))
}

/// The CA certificates of `tls-ca-cert-file` and every file of
/// `tls-ca-cert-dir`.
fn load_roots(file: &str, dir: &str) -> Result<RootCertStore, String> {
    let mut roots = RootCertStore::empty();
    let mut add = |pem: &[u8], path: &str| -> Result<usize, String> {
        let mut added = 0;
        for cert in CertificateDer::pem_slice_iter(pem) {
            let cert = cert.map_err(|e| {
                format!("Failed to configure CA certificate(s) file/directory: {path}: {e}")
            })?;
            roots.add(cert).map_err(|e| {
                format!("Failed to configure CA certificate(s) file/directory: {path}: {e}")
            })?;
            added += 1;
        }
        Ok(added)
    };
    if !file.is_empty() {
        let pem = read_file(file, "CA certificate(s) file")?;
        if add(&pem, file)? == 0 {
            return Err(format!("Failed to configure CA certificate(s) file/directory: {file}: no certificate in the file"));
        }
    }
    if !dir.is_empty() {
        let entries = std::fs::read_dir(Path::new(dir)).map_err(|e| {
            format!(
                "Failed to configure CA certificate(s) file/directory: {dir}: {}",
                os_error(&e)
            )
        })?;
        for entry in entries.flatten() {
            let path = entry.path();
            if !path.is_file() {
                continue;
            }
            // A file that is no certificate is skipped, as OpenSSL's
            // lookup by hashed name never opens it.
            if let Ok(pem) = std::fs::read(&path) {
                let _ = add(&pem, &path.display().to_string());
            }
        }
    }
    Ok(roots)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protocols_parse_as_redis() {
        assert_eq!(protocol_versions("").unwrap().len(), 2);
        assert_eq!(
            protocol_versions("TLSv1.2").unwrap(),
            vec![&rustls::version::TLS12]
        );
        assert_eq!(
            protocol_versions("tlsv1.3 TLSv1").unwrap(),
            vec![&rustls::version::TLS13]
        );
        assert!(protocol_versions("TLSv1.4")
            .unwrap_err()
            .starts_with("Invalid tls-protocols"));
        assert!(protocol_versions("TLSv1 TLSv1.1").is_err());
    }

    #[test]
    fn cipher_lists_skip_unknown_names_and_refuse_nothing_usable() {
        let all = cipher_suites("", "").unwrap();
        assert_eq!(all.len(), 9);
        let one13 = cipher_suites("", "TLS_AES_256_GCM_SHA384:bogus").unwrap();
        assert_eq!(one13[0], suites::TLS13_AES_256_GCM_SHA384);
        assert_eq!(one13.len(), 7);
        assert!(cipher_suites("", "bogus").is_err());
        let one12 = cipher_suites("bogus:ECDHE-RSA-AES256-GCM-SHA384:!aNULL", "").unwrap();
        assert_eq!(one12.len(), 4);
        assert_eq!(one12[3], suites::TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384);
        assert!(cipher_suites("bogus", "").is_err());
        assert_eq!(cipher_suites("HIGH:!aNULL", "").unwrap().len(), 9);
    }
}
