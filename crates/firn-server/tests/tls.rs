//! TLS: Firn's `tls-port` served to real clients (redis-cli `--tls`,
//! redis-py `ssl=True` on Debian's `/usr/bin/python3`, and a rustls client
//! of the test's own), next to redis-server 7.0.15 given the same
//! certificates where Redis's behaviour is the reference.
//!
//! The certificates are made at test time (rcgen): a CA, two server
//! certificates it signed (the second for CONFIG SET's reload), a client
//! certificate it signed and one signed by another CA.
//!
//! Every server runs on free loopback ports in a temporary directory and
//! is killed on drop; every client process is killed past its deadline.

use firn_testkit::server::free_port;
use firn_testkit::{info, wait_until, Conn, Server, R};
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair,
    KeyUsagePurpose, SanType, SerialNumber,
};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

const PYTHON: &str = "/usr/bin/python3";
const REDIS_CLI: &str = "/usr/bin/redis-cli";
/// How long a client process may run.
const CLIENT_DEADLINE: Duration = Duration::from_secs(30);

/// The certificates of one test, in its own directory.
struct Certs {
    _dir: tempfile::TempDir,
    ca: PathBuf,
    server_cert: PathBuf,
    server_key: PathBuf,
    /// Another certificate for `localhost` from the same CA (reloads).
    server2_cert: PathBuf,
    server2_key: PathBuf,
    client_cert: PathBuf,
    client_key: PathBuf,
    /// A client certificate from a CA the servers do not trust.
    stranger_cert: PathBuf,
    stranger_key: PathBuf,
}

fn ca(name: &str) -> (rcgen::Certificate, KeyPair) {
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.distinguished_name.push(DnType::CommonName, name);
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let key = KeyPair::generate().unwrap();
    let cert = params.self_signed(&key).unwrap();
    (cert, key)
}

fn leaf(
    name: &str,
    serial: u64,
    issuer: &(rcgen::Certificate, KeyPair),
    dir: &Path,
    file: &str,
) -> (PathBuf, PathBuf) {
    let mut params = CertificateParams::new(vec!["localhost".to_string()]).unwrap();
    params
        .subject_alt_names
        .push(SanType::IpAddress("127.0.0.1".parse().unwrap()));
    params.distinguished_name.push(DnType::CommonName, name);
    params.serial_number = Some(SerialNumber::from(serial));
    params.extended_key_usages = vec![
        ExtendedKeyUsagePurpose::ServerAuth,
        ExtendedKeyUsagePurpose::ClientAuth,
    ];
    let key = KeyPair::generate().unwrap();
    let cert = params.signed_by(&key, &issuer.0, &issuer.1).unwrap();
    let (cert_path, key_path) = (
        dir.join(format!("{file}.crt")),
        dir.join(format!("{file}.key")),
    );
    std::fs::write(&cert_path, cert.pem()).unwrap();
    std::fs::write(&key_path, key.serialize_pem()).unwrap();
    (cert_path, key_path)
}

fn certs() -> Certs {
    let dir = tempfile::Builder::new()
        .prefix("firn-tls-")
        .tempdir()
        .unwrap();
    let root = ca("Firn Test CA");
    let other = ca("Stranger CA");
    let ca_path = dir.path().join("ca.crt");
    std::fs::write(&ca_path, root.0.pem()).unwrap();
    let (server_cert, server_key) = leaf("firn-server-one", 1001, &root, dir.path(), "server");
    let (server2_cert, server2_key) = leaf("firn-server-two", 2002, &root, dir.path(), "server2");
    let (client_cert, client_key) = leaf("firn-client", 3003, &root, dir.path(), "client");
    let (stranger_cert, stranger_key) = leaf("stranger", 4004, &other, dir.path(), "stranger");
    Certs {
        _dir: dir,
        ca: ca_path,
        server_cert,
        server_key,
        server2_cert,
        server2_key,
        client_cert,
        client_key,
        stranger_cert,
        stranger_key,
    }
}

fn s(p: &Path) -> String {
    p.display().to_string()
}

/// The TLS flags both servers get.
fn tls_args(certs: &Certs, tls_port: u16, extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = [
        "--tls-port",
        &tls_port.to_string(),
        "--tls-cert-file",
        &s(&certs.server_cert),
        "--tls-key-file",
        &s(&certs.server_key),
        "--tls-ca-cert-file",
        &s(&certs.ca),
    ]
    .iter()
    .map(|a| a.to_string())
    .collect();
    args.extend(extra.iter().map(|a| a.to_string()));
    args
}

/// Firn with a TLS port beside its plain one; returns the TLS port.
fn firn_tls(certs: &Certs, extra: &[&str]) -> (Server, u16) {
    let port = free_port();
    let args = tls_args(certs, port, extra);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    (Server::firn_with(&args), port)
}

/// redis-server with the same TLS flags.
fn redis_tls(certs: &Certs, extra: &[&str]) -> (Server, u16) {
    let port = free_port();
    let args = tls_args(certs, port, extra);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    (Server::redis_with(&args), port)
}

/// Runs a client process, killed past [`CLIENT_DEADLINE`]: whether it
/// exited 0, and its output (stdout then stderr).
fn run(cmd: &mut Command) -> (bool, String) {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    let deadline = Instant::now() + CLIENT_DEADLINE;
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            _ => {
                let _ = child.kill();
                break;
            }
        }
    }
    let out = child.wait_with_output().expect("wait for client");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// redis-cli --tls with the CA and, if given, a client certificate.
fn redis_cli(
    port: u16,
    certs: &Certs,
    client: Option<(&Path, &Path)>,
    args: &[&str],
) -> (bool, String) {
    let mut cmd = Command::new(REDIS_CLI);
    cmd.args([
        "-h",
        "127.0.0.1",
        "-p",
        &port.to_string(),
        "--tls",
        "--cacert",
    ])
    .arg(&certs.ca);
    if let Some((cert, key)) = client {
        cmd.arg("--cert").arg(cert).arg("--key").arg(key);
    }
    cmd.args(args);
    run(&mut cmd)
}

/// redis-py's `ssl=True` client: SET then GET; prints the value or the
/// exception.
const REDIS_PY: &str = r#"
import sys, redis
port, ca, cert, key = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
kw = dict(host="127.0.0.1", port=port, ssl=True, ssl_ca_certs=ca,
          socket_timeout=10, socket_connect_timeout=10)
if cert:
    kw.update(ssl_certfile=cert, ssl_keyfile=key)
try:
    r = redis.Redis(**kw)
    r.set("py", "over tls")
    print("GOT", r.get("py").decode())
except Exception as e:
    print("FAILED", type(e).__name__, e)
"#;

fn redis_py(port: u16, certs: &Certs, client: Option<(&Path, &Path)>) -> String {
    let (cert, key) = client.map_or((String::new(), String::new()), |(c, k)| (s(c), s(k)));
    let (_, out) = run(Command::new(PYTHON).args([
        "-c",
        REDIS_PY,
        &port.to_string(),
        &s(&certs.ca),
        &cert,
        &key,
    ]));
    out.trim().to_string()
}

/// A TLS client of the test's own (rustls, ring): PING and the like, and
/// the certificate the server showed.
struct TlsClient {
    stream: rustls::StreamOwned<rustls::ClientConnection, TcpStream>,
}

impl TlsClient {
    fn connect(
        port: u16,
        certs: &Certs,
        client: Option<(&Path, &Path)>,
        versions: &[&'static rustls::SupportedProtocolVersion],
    ) -> Result<TlsClient, String> {
        TlsClient::connect_with(port, client_config(certs, client, versions))
    }

    /// A connection with `config`, whose session cache resumes sessions
    /// across connections.
    fn connect_with(port: u16, config: Arc<rustls::ClientConfig>) -> Result<TlsClient, String> {
        let name = ServerName::try_from("localhost").unwrap();
        let session = rustls::ClientConnection::new(config, name).map_err(|e| e.to_string())?;
        let tcp = TcpStream::connect(("127.0.0.1", port)).map_err(|e| e.to_string())?;
        tcp.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut client = TlsClient {
            stream: rustls::StreamOwned::new(session, tcp),
        };
        // The handshake, and (TLS 1.3) the server's verdict on a client
        // certificate, which comes after the client's side is done.
        client.cmd(&["PING"])?;
        Ok(client)
    }

    /// Sends a command and reads a one-line reply (or a bulk string).
    fn cmd(&mut self, args: &[&str]) -> Result<String, String> {
        let args: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        self.stream
            .write_all(&firn_testkit::encode_request(&args))
            .map_err(|e| e.to_string())?;
        let line = self.line()?;
        if let Some(len) = line.strip_prefix('$') {
            if len == "-1" {
                return Ok("(nil)".into());
            }
            return self.line();
        }
        Ok(line)
    }

    fn line(&mut self) -> Result<String, String> {
        let mut out = Vec::new();
        let mut byte = [0u8; 1];
        while !out.ends_with(b"\r\n") {
            match self.stream.read(&mut byte) {
                Ok(0) => return Err("closed".into()),
                Ok(_) => out.push(byte[0]),
                Err(e) => return Err(e.to_string()),
            }
        }
        out.truncate(out.len() - 2);
        Ok(String::from_utf8_lossy(&out).into_owned())
    }

    fn version(&self) -> Option<rustls::ProtocolVersion> {
        self.stream.conn.protocol_version()
    }

    /// The DER of the server's certificate.
    fn server_cert(&self) -> Vec<u8> {
        self.stream.conn.peer_certificates().unwrap()[0].to_vec()
    }
}

/// The test's rustls client configuration: the test CA, and a client
/// certificate if given.
fn client_config(
    certs: &Certs,
    client: Option<(&Path, &Path)>,
    versions: &[&'static rustls::SupportedProtocolVersion],
) -> Arc<rustls::ClientConfig> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_file_iter(&certs.ca).unwrap() {
        roots.add(cert.unwrap()).unwrap();
    }
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(versions)
        .unwrap()
        .with_root_certificates(roots);
    let config = match client {
        Some((cert, key)) => {
            let chain = CertificateDer::pem_file_iter(cert)
                .unwrap()
                .collect::<Result<Vec<_>, _>>()
                .unwrap();
            builder
                .with_client_auth_cert(chain, PrivateKeyDer::from_pem_file(key).unwrap())
                .unwrap()
        }
        None => builder.with_no_client_auth(),
    };
    Arc::new(config)
}

const BOTH_VERSIONS: &[&rustls::SupportedProtocolVersion] =
    &[&rustls::version::TLS13, &rustls::version::TLS12];

fn der_of(pem: &Path) -> Vec<u8> {
    CertificateDer::from_pem_file(pem).unwrap().to_vec()
}

#[test]
fn redis_cli_over_tls() {
    let certs = certs();
    let (server, port) = firn_tls(&certs, &[]);
    let client = Some((certs.client_cert.as_path(), certs.client_key.as_path()));
    assert_eq!(
        redis_cli(port, &certs, client, &["PING"]),
        (true, "PONG\n".into())
    );
    assert_eq!(
        redis_cli(port, &certs, client, &["SET", "k", "v"]),
        (true, "OK\n".into())
    );
    assert_eq!(
        redis_cli(port, &certs, client, &["GET", "k"]),
        (true, "v\n".into())
    );
    // A bigger value, and a pipeline, through the same session.
    // (An argument stays under the kernel's 128 KiB per argument.)
    let big = "x".repeat(100_000);
    assert!(redis_cli(port, &certs, client, &["SET", "big", &big]).1 == "OK\n");
    assert_eq!(
        redis_cli(port, &certs, client, &["STRLEN", "big"]).1,
        "100000\n"
    );
    // The plain port serves the same data at once.
    assert_eq!(
        server.conn().cmd(&["GET", "k"]),
        R::Bulk(Some(b"v".to_vec()))
    );
}

#[test]
fn tls_only_with_port_zero() {
    let certs = certs();
    let tls_port = free_port();
    let data = tempfile::tempdir().unwrap();
    let mut child = Command::new(firn_testkit::server::firn_binary())
        .args(tls_args(&certs, tls_port, &["--tls-auth-clients", "no"]))
        .args(["--port", "0", "--bind", "127.0.0.1", "--dir"])
        .arg(data.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn firn");
    struct Kill<'a>(&'a mut std::process::Child);
    impl Drop for Kill<'_> {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let _kill = Kill(&mut child);
    let mut pong = None;
    wait_until("firn to serve TLS only", Duration::from_secs(30), || {
        pong = TlsClient::connect(tls_port, &certs, None, BOTH_VERSIONS).ok();
        pong.is_some()
    });
    let mut client = pong.unwrap();
    assert_eq!(client.cmd(&["SET", "a", "1"]).unwrap(), "+OK");
    assert_eq!(client.cmd(&["CONFIG", "GET", "port"]).unwrap(), "*2");
}

#[test]
fn redis_py_with_and_without_a_client_certificate() {
    let certs = certs();
    let client = Some((certs.client_cert.as_path(), certs.client_key.as_path()));
    let stranger = Some((certs.stranger_cert.as_path(), certs.stranger_key.as_path()));
    // yes (the default): a certificate is required and verified.
    let (_yes, port) = firn_tls(&certs, &[]);
    assert_eq!(redis_py(port, &certs, client), "GOT over tls");
    assert!(redis_py(port, &certs, None).starts_with("FAILED"));
    assert!(redis_py(port, &certs, stranger).starts_with("FAILED"));
    // optional: verified when shown.
    let (_optional, port) = firn_tls(&certs, &["--tls-auth-clients", "optional"]);
    assert_eq!(redis_py(port, &certs, client), "GOT over tls");
    assert_eq!(redis_py(port, &certs, None), "GOT over tls");
    assert!(redis_py(port, &certs, stranger).starts_with("FAILED"));
    // no: none is asked for.
    let (_no, port) = firn_tls(&certs, &["--tls-auth-clients", "no"]);
    assert_eq!(redis_py(port, &certs, None), "GOT over tls");
    assert_eq!(redis_py(port, &certs, client), "GOT over tls");
}

/// tls-auth-clients yes/optional/no against both servers: the same
/// clients are served or refused.
#[test]
fn client_certificates_as_redis_checks_them() {
    let certs = certs();
    let client = Some((certs.client_cert.as_path(), certs.client_key.as_path()));
    let stranger = Some((certs.stranger_cert.as_path(), certs.stranger_key.as_path()));
    for mode in ["yes", "optional", "no"] {
        let (_firn, firn_port) = firn_tls(&certs, &["--tls-auth-clients", mode]);
        let (_redis, redis_port) = redis_tls(&certs, &["--tls-auth-clients", mode]);
        for (who, cert) in [("own CA", client), ("none", None), ("stranger", stranger)] {
            let served = |port| {
                TlsClient::connect(port, &certs, cert, BOTH_VERSIONS)
                    .and_then(|mut c| c.cmd(&["PING"]))
                    .is_ok()
            };
            assert_eq!(
                served(firn_port),
                served(redis_port),
                "tls-auth-clients {mode}, client certificate: {who}"
            );
        }
    }
}

#[test]
fn plain_and_tls_ports_at_once() {
    let certs = certs();
    let (server, port) = firn_tls(&certs, &["--tls-auth-clients", "no"]);
    let mut plain = server.conn();
    let mut tls = TlsClient::connect(port, &certs, None, BOTH_VERSIONS).unwrap();
    for i in 0..100 {
        let key = format!("k{i}");
        assert_eq!(tls.cmd(&["SET", &key, &i.to_string()]).unwrap(), "+OK");
        assert_eq!(
            plain.cmd(&["GET", &key]),
            R::Bulk(Some(i.to_string().into_bytes()))
        );
        assert_eq!(plain.cmd(&["INCR", &key]), R::Int(i + 1));
        assert_eq!(tls.cmd(&["GET", &key]).unwrap(), (i + 1).to_string());
    }
    // Both count as clients (the start-up's probes gone).
    wait_for_clients(&mut plain, 2);
}

#[test]
fn config_set_reloads_the_certificate_for_new_connections() {
    let certs = certs();
    let (server, port) = firn_tls(&certs, &["--tls-auth-clients", "no"]);
    let mut before = TlsClient::connect(port, &certs, None, BOTH_VERSIONS).unwrap();
    assert_eq!(before.server_cert(), der_of(&certs.server_cert));
    let mut admin = server.conn();
    assert_eq!(
        admin.cmd(&[
            "CONFIG",
            "SET",
            "tls-cert-file",
            &s(&certs.server2_cert),
            "tls-key-file",
            &s(&certs.server2_key),
        ]),
        R::Simple("OK".into())
    );
    let after = TlsClient::connect(port, &certs, None, BOTH_VERSIONS).unwrap();
    assert_eq!(after.server_cert(), der_of(&certs.server2_cert));
    // The connection opened before goes on with its session.
    assert_eq!(before.cmd(&["PING"]).unwrap(), "+PONG");
    assert_eq!(
        admin.cmd(&["CONFIG", "GET", "tls-cert-file"]),
        R::Array(Some(vec![
            R::Bulk(Some(b"tls-cert-file".to_vec())),
            R::Bulk(Some(s(&certs.server2_cert).into_bytes())),
        ]))
    );
    // A key that does not match the certificate: refused, nothing changes.
    let refused = admin.cmd(&["CONFIG", "SET", "tls-cert-file", &s(&certs.server_cert)]);
    assert!(
        matches!(&refused, R::Error(e) if e.contains("Unable to update TLS configuration")),
        "{refused:?}"
    );
    let still = TlsClient::connect(port, &certs, None, BOTH_VERSIONS).unwrap();
    assert_eq!(still.server_cert(), der_of(&certs.server2_cert));
}

/// CONFIG SET of a missing file, and CONFIG GET tls-*, as redis-server
/// replies them.
#[test]
fn config_replies_match_redis() {
    let certs = certs();
    let (firn, _) = firn_tls(&certs, &[]);
    let (redis, _) = redis_tls(&certs, &[]);
    let mut conns = [redis.conn(), firn.conn()];
    let replies = |conns: &mut [Conn; 2], args: &[&str]| -> Vec<R> {
        conns.iter_mut().map(|c| c.cmd(args)).collect()
    };
    for args in [
        &["CONFIG", "SET", "tls-cert-file", "/nonexistent/cert.pem"][..],
        &["CONFIG", "SET", "tls-key-file", "/nonexistent/key.pem"],
        &["CONFIG", "SET", "tls-ca-cert-file", "/nonexistent/ca.pem"],
        &["CONFIG", "SET", "tls-protocols", "TLSv1.4"],
        &["CONFIG", "SET", "tls-ciphersuites", "bogus"],
        &["CONFIG", "SET", "tls-ciphers", "bogus"],
        &[
            "CONFIG",
            "SET",
            "tls-ciphersuites",
            "TLS_AES_256_GCM_SHA384:bogus",
        ],
        &[
            "CONFIG",
            "SET",
            "tls-ciphers",
            "bogus:ECDHE-RSA-AES256-GCM-SHA384",
        ],
        &["CONFIG", "SET", "tls-protocols", "TLSv1.2 TLSv1.3"],
        &["CONFIG", "SET", "tls-auth-clients", "maybe"],
        &["CONFIG", "SET", "tls-session-cache-size", "-1"],
        &["CONFIG", "SET", "tls-session-caching", "no"],
        &["CONFIG", "SET", "tls-prefer-server-ciphers", "yes"],
    ] {
        let got = replies(&mut conns, args);
        assert_eq!(got[0], got[1], "{args:?}");
    }
    // Every tls-* option, with the same values (the ports aside).
    let sorted = |r: R| -> Vec<(String, String)> {
        let R::Array(Some(items)) = r else {
            panic!("{r:?}")
        };
        let mut pairs: Vec<(String, String)> = items
            .chunks(2)
            .map(|p| (p[0].text(), p[1].text()))
            .filter(|(name, _)| name != "tls-port")
            .collect();
        pairs.sort();
        pairs
    };
    let got = replies(&mut conns, &["CONFIG", "GET", "tls-*"]);
    assert_eq!(sorted(got[0].clone()), sorted(got[1].clone()));
}

#[test]
fn starting_with_a_bad_certificate_fails_clearly() {
    let certs = certs();
    let data = tempfile::tempdir().unwrap();
    let port = free_port();
    let (ok, out) = start_with_tls(
        data.path(),
        port,
        &["/nonexistent/cert.pem", &s(&certs.server_key)],
        &[],
    );
    assert!(!ok, "{out}");
    assert!(
        out.contains("Failed to configure TLS") && out.contains("/nonexistent/cert.pem"),
        "{out}"
    );
    // An encrypted key is refused, naming why.
    let encrypted = data.path().join("encrypted.key");
    std::fs::write(
        &encrypted,
        "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIB\n-----END ENCRYPTED PRIVATE KEY-----\n",
    )
    .unwrap();
    let (ok, out) = start_with_tls(
        data.path(),
        port,
        &[&s(&certs.server_cert), &s(&encrypted)],
        &["--tls-key-file-pass", "secret"],
    );
    assert!(!ok, "{out}");
    assert!(out.contains("encrypted"), "{out}");
}

/// Starts firn with a TLS port, `[cert, key]` and `more` flags, no client
/// certificates; waits for it to exit: (success, its output).
fn start_with_tls(
    dir: &std::path::Path,
    tls_port: u16,
    [cert, key]: &[&str; 2],
    more: &[&str],
) -> (bool, String) {
    let (port, tls_port) = (free_port().to_string(), tls_port.to_string());
    run(Command::new(firn_testkit::server::firn_binary())
        .args(["--port", &port, "--bind", "127.0.0.1", "--dir"])
        .arg(dir)
        .args(["--tls-port", &tls_port, "--tls-cert-file", cert])
        .args(["--tls-key-file", key, "--tls-auth-clients", "no"])
        .args(more))
}

/// Raw TCP connections to the TLS port that never start a handshake.
fn stalled(port: u16, n: usize) -> Vec<TcpStream> {
    (0..n)
        .map(|_| {
            let s = TcpStream::connect(("127.0.0.1", port)).unwrap();
            s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
            s
        })
        .collect()
}

/// Whether the server closed `stream` (EOF or reset) within its read timeout.
fn closed_by_server(stream: &mut TcpStream) -> bool {
    let mut buf = [0u8; 4096];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return false
            }
            Err(_) => return true,
        }
    }
}

fn wait_for_clients(conn: &mut Conn, n: i64) {
    wait_until(
        "connected_clients to settle",
        Duration::from_secs(20),
        || info::field(conn, "clients", "connected_clients") == n,
    );
}

/// A handshake that never comes holds its slot until the fixed deadline
/// (10 s, `timeout` 0): maxclients counts it meanwhile, and not after.
#[test]
fn stalled_handshakes_are_closed_by_the_deadline() {
    let certs = certs();
    let (server, port) = firn_tls(&certs, &["--maxclients", "4"]);
    let mut admin = server.conn();
    wait_for_clients(&mut admin, 1);
    let started = Instant::now();
    let mut stalls = stalled(port, 3);
    wait_for_clients(&mut admin, 4);
    // The slots are taken: a fifth client is refused.
    let mut refused = server.conn();
    assert_eq!(
        refused.cmd(&["PING"]),
        R::Error("ERR max number of clients reached".into())
    );
    for stall in &mut stalls {
        assert!(
            closed_by_server(stall),
            "a stalled handshake was never closed"
        );
    }
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_secs(8) && waited < Duration::from_secs(25),
        "closed after {waited:?}"
    );
    wait_for_clients(&mut admin, 1);
    assert_eq!(server.conn().cmd(&["PING"]), R::Simple("PONG".into()));
}

/// With `timeout` shorter than the deadline, a stalled handshake goes then.
#[test]
fn stalled_handshake_obeys_a_shorter_timeout() {
    let certs = certs();
    let (server, port) = firn_tls(&certs, &["--timeout", "1"]);
    let started = Instant::now();
    let mut stall = stalled(port, 1).pop().unwrap();
    assert!(closed_by_server(&mut stall));
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "{:?}",
        started.elapsed()
    );
    let mut admin = server.conn();
    wait_for_clients(&mut admin, 1);
}

/// Plain RESP and random bytes sent to the TLS port: closed at once by
/// both servers, which go on serving.
#[test]
fn garbage_on_the_tls_port_is_closed() {
    let certs = certs();
    let (firn, firn_port) = firn_tls(&certs, &["--tls-auth-clients", "no"]);
    let (_redis, redis_port) = redis_tls(&certs, &["--tls-auth-clients", "no"]);
    let mut noise = vec![0u8; 8192];
    let mut x: u32 = 12345;
    for b in noise.iter_mut() {
        x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
        *b = (x >> 16) as u8;
    }
    for port in [firn_port, redis_port] {
        for garbage in [
            &b"*1\r\n$4\r\nPING\r\n"[..],
            &noise[..],
            &b"\x16\x03\x01\xff\xff"[..],
        ] {
            let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
            stream
                .set_read_timeout(Some(Duration::from_secs(15)))
                .unwrap();
            let _ = stream.write_all(garbage);
            let started = Instant::now();
            assert!(
                closed_by_server(&mut stream),
                "port {port} kept a garbage connection"
            );
            assert!(started.elapsed() < Duration::from_secs(12));
        }
    }
    let mut client = TlsClient::connect(firn_port, &certs, None, BOTH_VERSIONS).unwrap();
    assert_eq!(client.cmd(&["PING"]).unwrap(), "+PONG");
    let mut admin = firn.conn();
    wait_for_clients(&mut admin, 2);
}

#[test]
fn tls_protocols_restrict_the_versions() {
    let certs = certs();
    for (mode, ours) in [
        ("TLSv1.2", rustls::ProtocolVersion::TLSv1_2),
        ("TLSv1.3", rustls::ProtocolVersion::TLSv1_3),
    ] {
        let extra = ["--tls-auth-clients", "no", "--tls-protocols", mode];
        let (_firn, firn_port) = firn_tls(&certs, &extra);
        let (_redis, redis_port) = redis_tls(&certs, &extra);
        for port in [firn_port, redis_port] {
            let both = TlsClient::connect(port, &certs, None, BOTH_VERSIONS).unwrap();
            assert_eq!(both.version(), Some(ours), "{mode} on port {port}");
            let other = if mode == "TLSv1.2" {
                &rustls::version::TLS13
            } else {
                &rustls::version::TLS12
            };
            assert!(
                TlsClient::connect(port, &certs, None, &[other]).is_err(),
                "{mode} on port {port} let a client of the other version in"
            );
        }
    }
    // Python's OpenSSL, 1.3 only, against TLSv1.2 only.
    let (_firn, port) = firn_tls(
        &certs,
        &["--tls-auth-clients", "no", "--tls-protocols", "TLSv1.2"],
    );
    let script = r#"
import sys, ssl, socket
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
ctx.load_verify_locations(sys.argv[2])
ctx.minimum_version = getattr(ssl.TLSVersion, sys.argv[3])
try:
    with socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10) as raw:
        with ctx.wrap_socket(raw, server_hostname="localhost") as tls:
            tls.sendall(b"PING\r\n")
            print(tls.version(), tls.recv(64))
except Exception as e:
    print("FAILED", type(e).__name__)
"#;
    let py = |min: &str| {
        run(Command::new(PYTHON).args(["-c", script, &port.to_string(), &s(&certs.ca), min])).1
    };
    assert!(py("TLSv1_3").starts_with("FAILED"));
    assert_eq!(py("TLSv1_2").trim(), "TLSv1.2 b'+PONG\\r\\n'");
}

#[test]
fn cipher_options_pick_the_suite() {
    let certs = certs();
    let (_firn, port) = firn_tls(
        &certs,
        &[
            "--tls-auth-clients",
            "no",
            "--tls-ciphersuites",
            "TLS_CHACHA20_POLY1305_SHA256",
            "--tls-ciphers",
            "ECDHE-ECDSA-AES128-GCM-SHA256",
        ],
    );
    let tls13 = TlsClient::connect(port, &certs, None, &[&rustls::version::TLS13]).unwrap();
    assert_eq!(
        tls13
            .stream
            .conn
            .negotiated_cipher_suite()
            .map(|s| s.suite()),
        Some(rustls::CipherSuite::TLS13_CHACHA20_POLY1305_SHA256)
    );
    let tls12 = TlsClient::connect(port, &certs, None, &[&rustls::version::TLS12]).unwrap();
    assert_eq!(
        tls12
            .stream
            .conn
            .negotiated_cipher_suite()
            .map(|s| s.suite()),
        Some(rustls::CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256)
    );
}

/// MONITOR over TLS streams the feed and still answers its own requests.
#[test]
fn monitor_over_tls() {
    let certs = certs();
    let (server, port) = firn_tls(&certs, &["--tls-auth-clients", "no"]);
    let mut monitor = TlsClient::connect(port, &certs, None, BOTH_VERSIONS).unwrap();
    assert_eq!(monitor.cmd(&["MONITOR"]).unwrap(), "+OK");
    server.conn().cmd(&["SET", "watched", "1"]);
    let line = monitor.line().unwrap();
    assert!(line.contains("\"SET\" \"watched\" \"1\""), "{line}");
    assert_eq!(monitor.cmd(&["PING"]).unwrap(), "+PONG");
}

/// A replica's PSYNC over TLS is fed over TLS: a client continuing from
/// the primary's current offset gets +CONTINUE, then the stream.
#[test]
fn psync_over_tls_feeds_the_stream() {
    let certs = certs();
    let (server, port) = firn_tls(&certs, &["--tls-auth-clients", "no"]);
    let mut admin = server.conn();
    admin.cmd(&["SET", "before", "1"]);
    let replication = info::Info::read(&mut admin, "replication");
    let replid = replication.get("master_replid").unwrap().to_string();
    let offset = replication.field("master_repl_offset");
    let mut replica = TlsClient::connect(port, &certs, None, BOTH_VERSIONS).unwrap();
    let reply = replica
        .cmd(&["PSYNC", &replid, &(offset + 1).to_string()])
        .unwrap();
    assert!(reply.starts_with("+CONTINUE"), "{reply}");
    admin.cmd(&["SET", "streamed", "over tls"]);
    let mut seen = Vec::new();
    while !seen.iter().any(|l: &String| l == "over tls") {
        seen.push(replica.line().unwrap());
        assert!(seen.len() < 50, "{seen:?}");
    }
}

/// `tls-replication yes`: a Firn replica follows a Firn primary and a
/// redis-server primary on their TLS ports, showing its client
/// certificate (both primaries require one).
#[test]
fn replica_follows_its_primary_over_tls() {
    let certs = certs();
    let (firn_primary, firn_tls_port) = firn_tls(&certs, &[]);
    let (redis_primary, redis_tls_port) = redis_tls(&certs, &[]);
    for (primary, tls_port) in [
        (&firn_primary, firn_tls_port),
        (&redis_primary, redis_tls_port),
    ] {
        let replica = Server::firn_with(&[
            "--tls-replication",
            "yes",
            "--tls-cert-file",
            &s(&certs.server_cert),
            "--tls-key-file",
            &s(&certs.server_key),
            "--tls-ca-cert-file",
            &s(&certs.ca),
            "--tls-client-cert-file",
            &s(&certs.client_cert),
            "--tls-client-key-file",
            &s(&certs.client_key),
        ]);
        let mut on_primary = primary.conn();
        on_primary.cmd(&["SET", "before", "synced"]);
        let mut on_replica = replica.conn();
        assert_eq!(
            on_replica.cmd(&["REPLICAOF", "127.0.0.1", &tls_port.to_string()]),
            R::Simple("OK".into())
        );
        let has = |conn: &mut Conn, key: &str, value: &str| {
            conn.cmd(&["GET", key]) == R::Bulk(Some(value.as_bytes().to_vec()))
        };
        wait_until("the full sync over TLS", Duration::from_secs(30), || {
            has(&mut on_replica, "before", "synced")
        });
        on_primary.cmd(&["SET", "after", "streamed"]);
        wait_until("the stream over TLS", Duration::from_secs(30), || {
            has(&mut on_replica, "after", "streamed")
        });
        let replication = info::Info::read(&mut on_replica, "replication");
        assert_eq!(replication.get("master_link_status"), Some("up"));
    }
}

/// CONFIG SET tls-port moves the TLS listeners (open connections stay);
/// a port in use is refused with redis-server's reply; 0 closes them.
#[test]
fn config_set_tls_port_moves_the_listeners() {
    let certs = certs();
    let (firn, old_port) = firn_tls(&certs, &["--tls-auth-clients", "no"]);
    let (redis, _) = redis_tls(&certs, &["--tls-auth-clients", "no"]);
    let mut before = TlsClient::connect(old_port, &certs, None, BOTH_VERSIONS).unwrap();
    let mut admin = firn.conn();
    let new_port = free_port();
    assert_eq!(
        admin.cmd(&["CONFIG", "SET", "tls-port", &new_port.to_string()]),
        R::Simple("OK".into())
    );
    let mut after = None;
    wait_until("the new TLS port", Duration::from_secs(10), || {
        after = TlsClient::connect(new_port, &certs, None, BOTH_VERSIONS).ok();
        after.is_some()
    });
    wait_until("the old TLS port to close", Duration::from_secs(10), || {
        TcpStream::connect(("127.0.0.1", old_port)).is_err()
    });
    assert_eq!(before.cmd(&["PING"]).unwrap(), "+PONG");
    assert_eq!(after.unwrap().cmd(&["PING"]).unwrap(), "+PONG");
    // A port another server holds: both refuse it alike and keep theirs.
    let firn_reply = admin.cmd(&["CONFIG", "SET", "tls-port", &redis.port().to_string()]);
    let redis_reply = redis
        .conn()
        .cmd(&["CONFIG", "SET", "tls-port", &firn.port().to_string()]);
    assert_eq!(firn_reply, redis_reply);
    assert!(
        matches!(&firn_reply, R::Error(e) if e.contains("Unable to listen on this port")),
        "{firn_reply:?}"
    );
    assert_eq!(
        admin.cmd(&["CONFIG", "GET", "tls-port"]),
        R::Array(Some(vec![
            R::Bulk(Some(b"tls-port".to_vec())),
            R::Bulk(Some(new_port.to_string().into_bytes())),
        ]))
    );
    assert!(TlsClient::connect(new_port, &certs, None, BOTH_VERSIONS).is_ok());
    assert_eq!(
        admin.cmd(&["CONFIG", "SET", "tls-port", "0"]),
        R::Simple("OK".into())
    );
    wait_until("the TLS port to close", Duration::from_secs(10), || {
        TcpStream::connect(("127.0.0.1", new_port)).is_err()
    });
    assert_eq!(before.cmd(&["PING"]).unwrap(), "+PONG");
}

/// tls-session-caching: a second connection resumes the first one's
/// session (TLS 1.2 and 1.3) while it is cached, and never with `no`.
#[test]
fn sessions_resume_while_cached() {
    use rustls::HandshakeKind::{Full, Resumed};
    let certs = certs();
    let kind = |port: u16, config: &Arc<rustls::ClientConfig>| {
        TlsClient::connect_with(port, config.clone())
            .unwrap()
            .stream
            .conn
            .handshake_kind()
    };
    let (_cached, port) = firn_tls(
        &certs,
        &[
            "--tls-auth-clients",
            "no",
            "--tls-session-cache-timeout",
            "2",
        ],
    );
    let (_uncached, uncached_port) = firn_tls(
        &certs,
        &["--tls-auth-clients", "no", "--tls-session-caching", "no"],
    );
    for version in [&rustls::version::TLS13, &rustls::version::TLS12] {
        let config = client_config(&certs, None, &[version]);
        assert_eq!(kind(port, &config), Some(Full));
        assert_eq!(kind(port, &config), Some(Resumed), "{version:?}");
        let config = client_config(&certs, None, &[version]);
        assert_eq!(kind(uncached_port, &config), Some(Full));
        assert_eq!(kind(uncached_port, &config), Some(Full), "{version:?}");
    }
    // Past tls-session-cache-timeout a session is not resumed.
    let config = client_config(&certs, None, BOTH_VERSIONS);
    assert_eq!(kind(port, &config), Some(Full));
    std::thread::sleep(Duration::from_millis(2500));
    assert_eq!(kind(port, &config), Some(Full));
}
