//! TLS against redis-server's own TLS port: closed and open loop over rustls, mutual
//! TLS, refused certificates, `--insecure`, and bad files. The test makes its
//! certificates with rcgen; each server listens on a plain port (for the harness's
//! own queries, such as INFO commandstats) and on a TLS port (for tailrate).

use std::path::{Path, PathBuf};
use std::process::Output;

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use serde_json::Value;

use super::harness::{
    RedisServer, assert_success, assert_usage_error, free_port, run_tailrate, run_tailrate_json,
};

/// Certificates and keys as PEM files in a temporary directory: a CA with a server
/// certificate (for localhost and 127.0.0.1) and a client certificate, a second CA
/// that signed nothing here, and a self-signed server certificate.
struct Pki {
    dir: tempfile::TempDir,
}

impl Pki {
    fn new() -> Pki {
        let dir = tempfile::Builder::new()
            .prefix("tailrate-tls-")
            .tempdir()
            .unwrap();
        let pki = Pki { dir };
        let ca = pki.ca("ca", "tailrate test CA");
        pki.leaf(
            "server",
            &["localhost", "127.0.0.1"],
            ExtendedKeyUsagePurpose::ServerAuth,
            Some(&ca),
        );
        pki.leaf(
            "client",
            &["tailrate-client"],
            ExtendedKeyUsagePurpose::ClientAuth,
            Some(&ca),
        );
        pki.ca("other-ca", "another CA");
        pki.leaf(
            "self-signed",
            &["localhost", "127.0.0.1"],
            ExtendedKeyUsagePurpose::ServerAuth,
            None,
        );
        // Server certificates marked as a CA, as `openssl req -x509` makes them: one
        // self-signed, one signed by the test CA.
        pki.marked_ca("self-signed-ca", None);
        pki.marked_ca("server-marked-ca", Some(&ca));
        pki
    }

    /// A server certificate for localhost and 127.0.0.1 with basicConstraints CA:TRUE.
    fn marked_ca(&self, name: &str, ca: Option<&Issuer<'static, KeyPair>>) {
        let mut params =
            CertificateParams::new(vec!["localhost".to_string(), "127.0.0.1".to_string()]).unwrap();
        params
            .distinguished_name
            .push(DnType::CommonName, "localhost");
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![
            KeyUsagePurpose::DigitalSignature,
            KeyUsagePurpose::KeyEncipherment,
            KeyUsagePurpose::KeyCertSign,
        ];
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        let key = KeyPair::generate().unwrap();
        let cert = match ca {
            Some(issuer) => params.signed_by(&key, issuer).unwrap(),
            None => params.self_signed(&key).unwrap(),
        };
        self.write(name, &cert, &key);
    }

    /// `NAME.pem` (the certificate) or `NAME.key` inside the directory.
    fn path(&self, file: &str) -> PathBuf {
        self.dir.path().join(file)
    }

    fn arg(&self, file: &str) -> String {
        self.path(file).to_str().unwrap().to_string()
    }

    fn write(&self, name: &str, cert: &rcgen::Certificate, key: &KeyPair) {
        std::fs::write(self.path(&format!("{name}.pem")), cert.pem()).unwrap();
        std::fs::write(self.path(&format!("{name}.key")), key.serialize_pem()).unwrap();
    }

    fn ca(&self, name: &str, common_name: &str) -> Issuer<'static, KeyPair> {
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(DnType::CommonName, common_name);
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let key = KeyPair::generate().unwrap();
        let cert = params.self_signed(&key).unwrap();
        self.write(name, &cert, &key);
        Issuer::new(params, key)
    }

    fn leaf(
        &self,
        name: &str,
        names: &[&str],
        usage: ExtendedKeyUsagePurpose,
        ca: Option<&Issuer<'static, KeyPair>>,
    ) {
        let mut params =
            CertificateParams::new(names.iter().map(|n| n.to_string()).collect::<Vec<_>>())
                .unwrap();
        params.distinguished_name.push(DnType::CommonName, names[0]);
        params.key_usages = vec![
            KeyUsagePurpose::DigitalSignature,
            KeyUsagePurpose::KeyEncipherment,
        ];
        params.extended_key_usages = vec![usage];
        let key = KeyPair::generate().unwrap();
        let cert = match ca {
            Some(issuer) => params.signed_by(&key, issuer).unwrap(),
            None => params.self_signed(&key).unwrap(),
        };
        self.write(name, &cert, &key);
    }
}

/// A redis-server with a plain port (the harness's) and a TLS port (the second value)
/// serving `cert` (a name of [`Pki`]), trusting the test CA for client certificates.
fn tls_server(pki: &Pki, cert: &str, auth_clients: &str) -> (RedisServer, String) {
    let tls_port = free_port().to_string();
    let server = RedisServer::builder()
        .arg("--tls-port", &tls_port)
        .arg("--tls-cert-file", &pki.arg(&format!("{cert}.pem")))
        .arg("--tls-key-file", &pki.arg(&format!("{cert}.key")))
        .arg("--tls-ca-cert-file", &pki.arg("ca.pem"))
        .arg("--tls-auth-clients", auth_clients)
        .start();
    (server, tls_port)
}

fn stderr(out: &Output) -> String {
    super::harness::stderr_of(out)
}

/// Runs tailrate with `--json` and returns the report of its first test.
fn run_json(args: &[&str]) -> Value {
    run_tailrate_json(args).1["tests"][0].clone()
}

fn count(test: &Value, field: &str) -> u64 {
    test["counts"][field]
        .as_u64()
        .unwrap_or_else(|| panic!("counts.{field} missing in {test}"))
}

/// Exit 1 (a failed run, not bad usage) with every needle on stderr.
fn assert_run_fails(args: &[&str], needles: &[&str]) {
    let out = run_tailrate(args);
    let text = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{args:?}: {text}");
    for needle in needles {
        assert!(
            text.contains(needle),
            "{args:?}: {needle:?} missing in {text}"
        );
    }
}

#[test]
fn a_closed_loop_run_over_tls_sends_exactly_n_commands() {
    let pki = Pki::new();
    let (server, port) = tls_server(&pki, "server", "no");
    let ca = pki.arg("ca.pem");
    let tls = ["-h", "127.0.0.1", "-p", &port, "--tls", "--cacert", &ca];

    let run = |extra: &[&str]| {
        server.reset_stats();
        let mut args = tls.to_vec();
        args.extend_from_slice(extra);
        assert_success(&run_tailrate(&args))
    };
    let out = run(&["-t", "set,get", "-n", "2000", "-r", "1000", "-c", "4", "-q"]);
    assert!(out.contains("SET: ") && out.contains("GET: "), "{out}");
    let stats = server.commandstats();
    assert_eq!(
        (stats.get("set"), stats.get("get")),
        (Some(&2000), Some(&2000)),
        "{stats:?}"
    );

    // Pipelined, over two threads sharing the configuration.
    run(&[
        "-t",
        "incr",
        "-n",
        "10000",
        "-P",
        "16",
        "-c",
        "8",
        "--threads",
        "2",
        "-q",
    ]);
    assert_eq!(server.commandstats().get("incr"), Some(&10_000));

    // Values larger than a TLS record (16 KiB): replies arrive over many records and reads.
    run(&[
        "-t", "set,get", "-n", "200", "-d", "100000", "-c", "2", "-q",
    ]);
    let stats = server.commandstats();
    assert_eq!(
        (stats.get("set"), stats.get("get")),
        (Some(&200), Some(&200)),
        "{stats:?}"
    );

    // A new connection (and handshake) for every request.
    run(&["-t", "ping_mbulk", "-n", "300", "-c", "3", "-k", "0", "-q"]);
    assert_eq!(server.commandstats().get("ping"), Some(&300));

    // A rediss:// URI implies --tls; --sni names the certificate's other name.
    server.reset_stats();
    let uri = format!("rediss://127.0.0.1:{port}");
    assert_success(&run_tailrate(&[
        "-u",
        &uri,
        "--cacert",
        &ca,
        "--sni",
        "localhost",
        "-t",
        "get",
        "-n",
        "500",
        "-q",
    ]));
    assert_eq!(server.commandstats().get("get"), Some(&500));
}

#[test]
fn an_open_loop_run_over_tls_completes_every_request() {
    let pki = Pki::new();
    let (server, port) = tls_server(&pki, "server", "no");
    let ca = pki.arg("ca.pem");
    let test = run_json(&[
        "-p",
        &port,
        "--tls",
        "--cacert",
        &ca,
        "--rate",
        "1000",
        "--seed",
        "1",
        "--duration",
        "1s",
        "-t",
        "get",
        "-c",
        "4",
    ]);
    let (intended, completed) = (count(&test, "intended"), count(&test, "completed"));
    assert!((900..=1100).contains(&intended), "intended {intended}");
    assert_eq!(
        (
            count(&test, "errors"),
            count(&test, "timeouts"),
            count(&test, "not_sent")
        ),
        (0, 0, 0),
        "{}",
        test["counts"]
    );
    assert_eq!(
        intended,
        completed + count(&test, "in_flight_at_end"),
        "{}",
        test["counts"]
    );
    let served = server.commandstats().get("get").copied().unwrap_or(0);
    assert!(
        served >= completed && served <= count(&test, "sent"),
        "server saw {served} GETs, tailrate completed {completed}"
    );
}

#[test]
fn mutual_tls_works_with_a_client_certificate_and_fails_without_one() {
    let pki = Pki::new();
    let (server, port) = tls_server(&pki, "server", "yes");
    let (ca, cert, key) = (
        pki.arg("ca.pem"),
        pki.arg("client.pem"),
        pki.arg("client.key"),
    );
    let tls = ["-p", &port, "--tls", "--cacert", &ca];

    let mut args = tls.to_vec();
    args.extend_from_slice(&[
        "--cert", &cert, "--key", &key, "-t", "set", "-n", "1000", "-q",
    ]);
    assert_success(&run_tailrate(&args));
    assert_eq!(server.commandstats().get("set"), Some(&1000));

    // The server asks for a certificate and gets none: it ends the session with an
    // alert, which rustls reports.
    let mut args = tls.to_vec();
    args.extend_from_slice(&["-t", "set", "-n", "1000", "-q"]);
    assert_run_fails(
        &args,
        &[&format!("127.0.0.1:{port}"), "CertificateRequired"],
    );

    // A certificate the server's CA did not sign.
    let (other, other_key) = (pki.arg("self-signed.pem"), pki.arg("self-signed.key"));
    let mut args = tls.to_vec();
    args.extend_from_slice(&[
        "--cert", &other, "--key", &other_key, "-t", "set", "-n", "1000", "-q",
    ]);
    assert_run_fails(&args, &[&format!("127.0.0.1:{port}")]);
    assert_eq!(
        server.commandstats().get("set"),
        Some(&1000),
        "refused clients sent nothing"
    );
}

#[test]
fn a_certificate_the_client_cannot_verify_is_refused_with_rustls_reason() {
    let pki = Pki::new();
    let (server, port) = tls_server(&pki, "server", "no");
    let other_ca = pki.arg("other-ca.pem");
    assert_run_fails(
        &[
            "-p", &port, "--tls", "--cacert", &other_ca, "-n", "100", "-t", "get",
        ],
        &[
            "TLS handshake failed",
            "invalid peer certificate",
            "UnknownIssuer",
        ],
    );
    // The right CA, but a name the certificate does not hold.
    let ca = pki.arg("ca.pem");
    assert_run_fails(
        &[
            "-p",
            &port,
            "--tls",
            "--cacert",
            &ca,
            "--sni",
            "elsewhere.example",
            "-n",
            "100",
            "-t",
            "get",
        ],
        &[
            "invalid peer certificate",
            "not valid for name \"elsewhere.example\"",
        ],
    );
    assert_eq!(server.commandstats().get("get"), None);
}

#[test]
fn a_plain_client_at_a_tls_port_is_told_to_add_tls() {
    let pki = Pki::new();
    let (server, port) = tls_server(&pki, "server", "no");
    // The TLS port resets a connection that speaks plain RESP, as twemproxy closes one
    // whose command it refuses: the port is asked which it is. Without a handshake (the
    // first command is the probe's CONFIG GET) and with one (AUTH), closed and open loop.
    for extra in [
        &["-n", "100"][..],
        &["-a", "secret", "-n", "100"][..],
        &["--rate", "100", "--duration", "1s"][..],
    ] {
        let mut args = vec!["-p", port.as_str(), "-t", "get", "-q"];
        args.extend_from_slice(extra);
        assert_run_fails(&args, &["this port speaks TLS: add --tls"]);
        let out = run_tailrate(&args);
        assert!(!stderr(&out).contains("twemproxy"), "{}", stderr(&out));
    }
    assert_eq!(server.commandstats().get("get"), None);
}

#[test]
fn tls_at_a_plain_port_is_told_at_once_that_the_port_does_not_speak_tls() {
    let pki = Pki::new();
    let (server, _) = tls_server(&pki, "server", "no");
    // redis-server reads the ClientHello as the start of an inline command and waits for
    // its end: the handshake gets no answer, and a plain PING on a second connection does.
    let plain = server.port().to_string();
    let ca = pki.arg("ca.pem");
    let started = std::time::Instant::now();
    assert_run_fails(
        &[
            "-p",
            &plain,
            "--tls",
            "--cacert",
            &ca,
            "--connect-timeout",
            "20s",
            "-n",
            "100",
            "-t",
            "get",
        ],
        &["this port does not speak TLS", "drop --tls"],
    );
    assert!(
        started.elapsed() < std::time::Duration::from_secs(5),
        "told within seconds, not after --connect-timeout: {:?}",
        started.elapsed()
    );
    assert_eq!(server.commandstats().get("get"), None);
}

#[test]
fn a_server_certificate_marked_as_a_ca_is_explained_in_words() {
    let pki = Pki::new();
    // The server's own self-signed certificate given as --cacert.
    let (_server, port) = tls_server(&pki, "self-signed-ca", "no");
    let own = pki.arg("self-signed-ca.pem");
    let args = [
        "-p", &port, "--tls", "--cacert", &own, "-n", "10", "-t", "get",
    ];
    assert_run_fails(
        &args,
        &[
            "--cacert",
            "self-signed-ca.pem is the server's own certificate, not the CA that signed it",
            "CA:TRUE",
            "--insecure",
        ],
    );
    let text = stderr(&run_tailrate(&args));
    assert!(!text.contains("OtherError"), "{text}");
    // A CA signed it, and the server uses it though it is marked as a CA.
    let (_server, port) = tls_server(&pki, "server-marked-ca", "no");
    let ca = pki.arg("ca.pem");
    let args = [
        "-p", &port, "--tls", "--cacert", &ca, "-n", "10", "-t", "get",
    ];
    assert_run_fails(
        &args,
        &["the server's certificate is marked as a CA", "CA:TRUE"],
    );
    let text = stderr(&run_tailrate(&args));
    assert!(!text.contains("OtherError"), "{text}");
}

#[test]
fn insecure_connects_to_a_self_signed_server_and_warns_every_time() {
    let pki = Pki::new();
    let (server, port) = tls_server(&pki, "self-signed", "no");
    let warning = "WARNING: --insecure: the server's certificate is not verified";
    for _ in 0..2 {
        let out = run_tailrate(&[
            "-p",
            &port,
            "--tls",
            "--insecure",
            "-t",
            "get",
            "-n",
            "500",
            "-q",
        ]);
        assert_success(&out);
        assert!(stderr(&out).contains(warning), "{}", stderr(&out));
    }
    assert_eq!(server.commandstats().get("get"), Some(&1000));
    // The warning comes even when the run fails, and a verified run has none.
    let out = run_tailrate(&[
        "-p",
        &server.port().to_string(),
        "--tls",
        "--insecure",
        "--connect-timeout",
        "1s",
        "-n",
        "10",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains(warning), "{}", stderr(&out));
    let ca = pki.arg("ca.pem");
    let out = run_tailrate(&[
        "-p", &port, "--tls", "--cacert", &ca, "-n", "10", "-t", "get",
    ]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "a self-signed certificate is refused without --insecure"
    );
    assert!(!stderr(&out).contains("WARNING"), "{}", stderr(&out));
}

#[test]
fn bad_tls_files_are_usage_errors_naming_the_flag_and_the_file() {
    let pki = Pki::new();
    let (ca, key, cert) = (
        pki.arg("ca.pem"),
        pki.arg("client.key"),
        pki.arg("client.pem"),
    );
    let missing = pki.arg("nosuch.pem");
    let garbage = pki.path("garbage.pem");
    std::fs::write(&garbage, "this is not PEM\n").unwrap();
    let garbage = garbage.to_str().unwrap();
    let name = |p: &str| {
        Path::new(p)
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .to_string()
    };

    assert_usage_error(
        &["--tls", "--cacert", &missing],
        &["--cacert", &name(&missing), "cannot read"],
    );
    assert_usage_error(
        &["--tls", "--cacert", garbage],
        &["--cacert", "garbage.pem", "CERTIFICATE"],
    );
    assert_usage_error(&["--tls", "--cacert", &key], &["--cacert", "client.key"]);
    assert_usage_error(
        &["--tls", "--cacert", &ca, "--cert", &cert, "--key", &missing],
        &["--key", &name(&missing)],
    );
    assert_usage_error(
        &["--tls", "--cacert", &ca, "--cert", &cert, "--key", garbage],
        &["--key", "garbage.pem", "PRIVATE KEY"],
    );
    assert_usage_error(
        &["--tls", "--cacert", &ca, "--cert", &key, "--key", &key],
        &["--cert", "client.key"],
    );
    assert_usage_error(
        &[
            "--tls",
            "--cacert",
            &ca,
            "--cert",
            &cert,
            "--key",
            &pki.arg("server.key"),
        ],
        &["--cert", "--key", "server.key"],
    );
    assert_usage_error(&["--tls", "--cert", &cert], &["--cert", "--key"]);
    assert_usage_error(&["--cacert", &ca], &["--cacert", "--tls"]);
    assert_usage_error(&["--tls", "-s", "/tmp/redis.sock"], &["--tls", "-s"]);
}
