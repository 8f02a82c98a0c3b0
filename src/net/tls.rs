//! TLS for [`Endpoint::Tls`](super::Endpoint::Tls): the rustls client configuration,
//! built once per run from `--tls`, `--cacert`, `--cert`/`--key`, `--sni` and
//! `--insecure`, and the handshake on a connected socket.
//!
//! Every file is read and checked here when the config is built, so a bad file is a
//! usage error before anything connects, and connecting never touches the disk: each
//! connection shares one `Arc<ClientConfig>` (and its session-resumption cache).
//! Which flags may go together is `config.rs`'s business; reading and writing the
//! encrypted stream is `connection.rs`'s.
//!
//! A refused handshake is explained in words where rustls gives only webpki's code (a
//! server certificate given as `--cacert`, one marked as a CA), and two small probes
//! tell a port's protocol apart for the messages when a client speaks the wrong one:
//! [`speaks_tls`] (a plain connection closed at once) and [`answers_plain_resp`] (a
//! `--tls` handshake with no answer).

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use std::time::Duration;

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, OtherError, RootCertStore,
    SignatureScheme,
};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use tokio::io::{AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;

/// Bytes read from the socket at once under TLS. rustls asks its transport for 4 KiB
/// at a time; this buffer turns a large reply into one `read` of up to two full TLS
/// records instead of one per 4 KiB.
const SOCKET_READ_BUFFER: usize = 32 * 1024;

/// An encrypted client stream, as [`Connection`](super::Connection) holds it.
pub type TlsStream = tokio_rustls::client::TlsStream<BufReader<TcpStream>>;

/// The TLS flags as typed, checked against each other by `config.rs`.
#[derive(Debug, Clone, Copy, Default)]
pub struct TlsOptions<'a> {
    /// `--cacert`: PEM file of the CAs to trust instead of the system's roots.
    pub cacert: Option<&'a Path>,
    /// `--cert`: PEM client certificate chain, end entity first.
    pub cert: Option<&'a Path>,
    /// `--key`: PEM private key of `--cert`.
    pub key: Option<&'a Path>,
    /// `--sni`: the name to send and to check the certificate against.
    pub sni: Option<&'a str>,
    /// `--insecure`: accept any certificate.
    pub insecure: bool,
}

/// A TLS file or setting that cannot be used. Each message is one line naming the
/// flag and the file, and says what to do.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// Cause: the file does not exist or is not readable. Fix: give the right path.
    #[error("{flag} {}: cannot read it: {source}", path.display())]
    Read {
        /// The flag that named the file.
        flag: &'static str,
        /// The file.
        path: PathBuf,
        /// The OS's reason.
        source: io::Error,
    },
    /// Cause: a PEM section is broken (bad base64, no END line).
    #[error("{flag} {}: not valid PEM: {source}", path.display())]
    Pem {
        /// The flag that named the file.
        flag: &'static str,
        /// The file.
        path: PathBuf,
        /// What is broken.
        source: rustls_pki_types::pem::Error,
    },
    /// Cause: the file has no section of the kind the flag needs (a DER file, or a
    /// key given as a certificate). Fix: give a PEM file of that kind.
    #[error("{flag} {}: no {what} in it (a PEM file is expected)", path.display())]
    Missing {
        /// The flag that named the file.
        flag: &'static str,
        /// The file.
        path: PathBuf,
        /// The PEM section expected, e.g. `"CERTIFICATE" section`.
        what: &'static str,
    },
    /// Cause: rustls refuses what the file holds (a CA that does not parse, a key
    /// type it cannot sign with).
    #[error("{flag} {}: {source}", path.display())]
    Rejected {
        /// The flag that named the file.
        flag: &'static str,
        /// The file.
        path: PathBuf,
        /// rustls's reason.
        source: rustls::Error,
    },
    /// Cause: `--key` is not the private key of `--cert`'s first certificate.
    #[error("--cert {} and --key {} do not belong together: {source}", cert.display(), key.display())]
    Mismatch {
        /// The certificate file.
        cert: PathBuf,
        /// The key file.
        key: PathBuf,
        /// rustls's reason.
        source: rustls::Error,
    },
    /// Cause: no `--cacert`, and the system has no trusted roots (no `ca-certificates`).
    /// Fix: give the server's CA with `--cacert`.
    #[error(
        "--tls: no trusted root certificates found on this system ({why}); give the server's CA with --cacert FILE"
    )]
    NoSystemRoots {
        /// What loading the system's roots reported.
        why: String,
    },
    /// Cause: the name is neither a DNS name nor an IP address.
    #[error("{flag} {name}: not a DNS name or an IP address that a certificate can name")]
    ServerName {
        /// `--sni`, or "the host" (from -h or the URI) when there is no --sni.
        flag: &'static str,
        /// The name.
        name: String,
    },
    /// Cause: the crypto provider cannot make a configuration (a build problem).
    #[error("--tls: cannot set up TLS: {0}")]
    Setup(rustls::Error),
}

/// The TLS side of an endpoint: one client configuration for the whole run, and the
/// name the server's certificate is checked against. Cloning shares the configuration.
#[derive(Clone)]
pub struct TlsSettings {
    config: Arc<ClientConfig>,
    server_name: ServerName<'static>,
    insecure: bool,
    client_cert: bool,
}

impl TlsSettings {
    /// Reads and checks the files of `opts` and builds the client configuration for a
    /// server at `host` (`--sni` replaces `host` as the name to check).
    pub fn build(opts: &TlsOptions<'_>, host: &str) -> Result<Self, TlsError> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let (flag, name) = match opts.sni {
            Some(sni) => ("--sni", sni),
            None => ("the host", host),
        };
        let server_name =
            ServerName::try_from(name.to_string()).map_err(|_| TlsError::ServerName {
                flag,
                name: name.to_string(),
            })?;

        let builder = ClientConfig::builder_with_provider(Arc::clone(&provider))
            .with_safe_default_protocol_versions()
            .map_err(TlsError::Setup)?;
        let builder = if opts.insecure {
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(AcceptAnyCertificate(Arc::clone(
                    &provider,
                ))))
        } else {
            let (roots, given) = roots(opts.cacert)?;
            let webpki =
                WebPkiServerVerifier::builder_with_provider(Arc::new(roots), Arc::clone(&provider))
                    .build()
                    .map_err(|e| TlsError::Setup(rustls::Error::General(e.to_string())))?;
            match opts.cacert {
                Some(path) => builder
                    .dangerous()
                    .with_custom_certificate_verifier(Arc::new(CaFileVerifier {
                        webpki,
                        given,
                        path: path.to_path_buf(),
                    })),
                None => builder.with_webpki_verifier(webpki),
            }
        };
        let config = match (opts.cert, opts.key) {
            (Some(cert), Some(key)) => {
                let chain = read_certs("--cert", cert)?;
                let key_der = read_key(key)?;
                // Load the key alone first, so that a key rustls cannot use is blamed on --key.
                provider
                    .key_provider
                    .load_private_key(key_der.clone_key())
                    .map_err(|source| TlsError::Rejected {
                        flag: "--key",
                        path: key.to_path_buf(),
                        source,
                    })?;
                builder
                    .with_client_auth_cert(chain, key_der)
                    .map_err(|source| TlsError::Mismatch {
                        cert: cert.to_path_buf(),
                        key: key.to_path_buf(),
                        source,
                    })?
            }
            // config.rs refuses one without the other.
            _ => builder.with_no_client_auth(),
        };
        Ok(TlsSettings {
            config: Arc::new(config),
            server_name,
            insecure: opts.insecure,
            client_cert: opts.cert.is_some(),
        })
    }

    /// Whether the server's certificate goes unchecked (`--insecure`).
    pub fn is_insecure(&self) -> bool {
        self.insecure
    }

    /// Runs the TLS handshake on a connected socket. A refusal is an error whose
    /// message starts "TLS handshake failed: " and goes on with the reason: rustls's,
    /// or in words where rustls names only a code (see [`explain`]).
    pub(crate) async fn connect(&self, tcp: TcpStream) -> io::Result<TlsStream> {
        let io = BufReader::with_capacity(SOCKET_READ_BUFFER, tcp);
        TlsConnector::from(Arc::clone(&self.config))
            .connect(self.server_name.clone(), io)
            .await
            .map_err(|e| io::Error::new(e.kind(), format!("TLS handshake failed: {}", explain(&e))))
    }
}

/// A refused handshake's reason. rustls shows a certificate refusal that webpki names
/// only by a code as that code (`Other(OtherError(CaUsedAsEndEntity))`): those known
/// here are said in words.
fn explain(e: &io::Error) -> String {
    let Some(rustls::Error::InvalidCertificate(CertificateError::Other(OtherError(cause)))) = e
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>())
    else {
        return e.to_string();
    };
    if let Some(own) = cause.downcast_ref::<ServerCertAsCa>() {
        return own.to_string();
    }
    match in_words(cause.as_ref()) {
        Some(words) => format!(
            "invalid peer certificate: the server's certificate {words}; the server needs a \
             certificate signed by a CA (or use --insecure, for tests)"
        ),
        None => e.to_string(),
    }
}

/// What webpki's code for a refused certificate means, as what the certificate is, for the
/// codes rustls shows only as a code.
fn in_words(cause: &(dyn std::error::Error + Send + Sync)) -> Option<&'static str> {
    match format!("{cause:?}").as_str() {
        "CaUsedAsEndEntity" => Some(
            "is marked as a CA: basicConstraints CA:TRUE, which `openssl req -x509` sets by \
             default, and a CA certificate may not serve as a server's own",
        ),
        _ => None,
    }
}

/// Whether the server at `host:port` answers a TLS ClientHello with a TLS record (a
/// ServerHello or an alert) within `timeout`: for the message when a plain connection
/// is closed at its first command, as a TLS port closes one that speaks plain RESP.
pub async fn speaks_tls(host: &str, port: u16, timeout: Duration) -> bool {
    let hello = || -> Option<Vec<u8>> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = ClientConfig::builder_with_provider(Arc::clone(&provider))
            .with_safe_default_protocol_versions()
            .ok()?
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AcceptAnyCertificate(provider)))
            .with_no_client_auth();
        let name = ServerName::try_from(host.to_string())
            .or_else(|_| ServerName::try_from("localhost"))
            .ok()?;
        let mut client = rustls::ClientConnection::new(Arc::new(config), name).ok()?;
        let mut bytes = Vec::new();
        client.write_tls(&mut bytes).ok()?;
        Some(bytes)
    };
    let Some(hello) = hello() else {
        return false;
    };
    let answer = async {
        let mut tcp = TcpStream::connect((host, port)).await?;
        tcp.write_all(&hello).await?;
        let mut head = [0u8; 3];
        tcp.read_exact(&mut head).await?;
        io::Result::Ok(head)
    };
    // A TLS record: handshake (22) or alert (21), then a major version of 3.
    matches!(
        tokio::time::timeout(timeout, answer).await,
        Ok(Ok([21 | 22, 3, _]))
    )
}

/// Whether the server at `host:port` answers a plain `PING` with a RESP reply (`+PONG`,
/// or an error such as `-NOAUTH`) within `timeout`: for a `--tls` handshake that gets
/// no answer, as a plain port gives none (Redis waits for the end of a line).
pub async fn answers_plain_resp(host: &str, port: u16, timeout: Duration) -> bool {
    let answer = async {
        let mut tcp = TcpStream::connect((host, port)).await?;
        tcp.write_all(b"*1\r\n$4\r\nPING\r\n").await?;
        let mut first = [0u8; 1];
        tcp.read_exact(&mut first).await?;
        io::Result::Ok(first[0])
    };
    matches!(
        tokio::time::timeout(timeout, answer).await,
        Ok(Ok(b'+' | b'-'))
    )
}

impl fmt::Debug for TlsSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsSettings")
            .field("server_name", &self.server_name)
            .field("insecure", &self.insecure)
            .field("client_cert", &self.client_cert)
            .finish_non_exhaustive()
    }
}

/// Two settings are equal when they are the same build (clones of one run's settings).
impl PartialEq for TlsSettings {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.config, &other.config) && self.server_name == other.server_name
    }
}

impl Eq for TlsSettings {}

/// The CAs to trust: `--cacert`'s, else the system's; and `--cacert`'s certificates as
/// given.
fn roots(cacert: Option<&Path>) -> Result<(RootCertStore, Vec<CertificateDer<'static>>), TlsError> {
    let mut roots = RootCertStore::empty();
    let mut given = Vec::new();
    match cacert {
        Some(path) => {
            given = read_certs("--cacert", path)?;
            for cert in &given {
                roots
                    .add(cert.clone())
                    .map_err(|source| TlsError::Rejected {
                        flag: "--cacert",
                        path: path.to_path_buf(),
                        source,
                    })?;
            }
        }
        None => {
            // Like redis-cli, which uses OpenSSL's default paths: certificates added to
            // the system's store (a private CA) are trusted.
            let found = rustls_native_certs::load_native_certs();
            let (added, _ignored) = roots.add_parsable_certificates(found.certs);
            if added == 0 {
                let why = match found.errors.first() {
                    Some(e) => e.to_string(),
                    None => "the system's certificate store is empty".to_string(),
                };
                return Err(TlsError::NoSystemRoots { why });
            }
        }
    }
    Ok((roots, given))
}

/// `--cacert`: webpki's verification, and a refusal in words when the certificate the
/// server presents is one of `--cacert`'s own (the server's certificate given as its CA).
#[derive(Debug)]
struct CaFileVerifier {
    webpki: Arc<WebPkiServerVerifier>,
    given: Vec<CertificateDer<'static>>,
    path: PathBuf,
}

/// The refusal of a server certificate that `--cacert` holds itself.
#[derive(Debug, thiserror::Error)]
#[error(
    "--cacert {} is the server's own certificate, not the CA that signed it (it {reason}); \
     give --cacert the certificate of the CA that signed the server's, or use --insecure \
     for tests",
    path.display()
)]
struct ServerCertAsCa {
    path: PathBuf,
    /// rustls's reason, as it gives it.
    reason: String,
}

impl ServerCertVerifier for CaFileVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        self.webpki
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
            .map_err(|e| {
                if !self.given.iter().any(|c| c.as_ref() == end_entity.as_ref()) {
                    return e;
                }
                let reason = match &e {
                    rustls::Error::InvalidCertificate(CertificateError::Other(OtherError(
                        cause,
                    ))) => in_words(cause.as_ref())
                        .map_or_else(|| format!("is refused: {cause:?}"), str::to_string),
                    other => format!("is refused: {other}"),
                };
                rustls::Error::InvalidCertificate(CertificateError::Other(OtherError(Arc::new(
                    ServerCertAsCa {
                        path: self.path.clone(),
                        reason,
                    },
                ))))
            })
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.webpki.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.webpki.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.webpki.supported_verify_schemes()
    }

    fn root_hint_subjects(&self) -> Option<&[rustls::DistinguishedName]> {
        self.webpki.root_hint_subjects()
    }
}

fn read(flag: &'static str, path: &Path) -> Result<Vec<u8>, TlsError> {
    std::fs::read(path).map_err(|source| TlsError::Read {
        flag,
        path: path.to_path_buf(),
        source,
    })
}

/// Every certificate of a PEM file, in order; at least one.
fn read_certs(flag: &'static str, path: &Path) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let pem = read(flag, path)?;
    let certs = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|source| TlsError::Pem {
            flag,
            path: path.to_path_buf(),
            source,
        })?;
    if certs.is_empty() {
        return Err(TlsError::Missing {
            flag,
            path: path.to_path_buf(),
            what: "\"CERTIFICATE\" section",
        });
    }
    Ok(certs)
}

/// The first private key (PKCS#8, PKCS#1 or SEC1) of a PEM file.
fn read_key(path: &Path) -> Result<PrivateKeyDer<'static>, TlsError> {
    let pem = read("--key", path)?;
    PrivateKeyDer::from_pem_slice(&pem).map_err(|e| match e {
        rustls_pki_types::pem::Error::NoItemsFound => TlsError::Missing {
            flag: "--key",
            path: path.to_path_buf(),
            what: "\"PRIVATE KEY\" section (PKCS#8, RSA or EC)",
        },
        source => TlsError::Pem {
            flag: "--key",
            path: path.to_path_buf(),
            source,
        },
    })
}

/// `--insecure`: any certificate for any name is accepted. The handshake's signatures
/// are still checked, so the session is encrypted, just not authenticated.
#[derive(Debug)]
struct AcceptAnyCertificate(Arc<CryptoProvider>);

impl ServerCertVerifier for AcceptAnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    /// A self-signed certificate and its key, as PEM files in a temporary directory.
    fn pem_files() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let signed = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
        let (cert, key) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
        std::fs::write(&cert, signed.cert.pem()).unwrap();
        std::fs::write(&key, signed.signing_key.serialize_pem()).unwrap();
        (dir, cert, key)
    }

    fn error(opts: TlsOptions<'_>) -> String {
        let err = TlsSettings::build(&opts, "localhost")
            .map(|_| ())
            .unwrap_err()
            .to_string();
        assert_eq!(err.lines().count(), 1, "{err}");
        err
    }

    #[test]
    fn good_files_build_one_shared_configuration() {
        let (_dir, cert, key) = pem_files();
        let opts = TlsOptions {
            cacert: Some(&cert),
            cert: Some(&cert),
            key: Some(&key),
            ..Default::default()
        };
        let tls = TlsSettings::build(&opts, "127.0.0.1").unwrap();
        assert!(!tls.is_insecure());
        assert_eq!(tls.clone(), tls, "clones share the configuration");
        assert_ne!(
            TlsSettings::build(&opts, "127.0.0.1").unwrap(),
            tls,
            "another build is another configuration"
        );
    }

    #[test]
    fn bad_files_are_refused_naming_the_flag_and_the_file() {
        let (dir, cert, key) = pem_files();
        let missing = dir.path().join("nosuch.pem");
        let err = error(TlsOptions {
            cacert: Some(&missing),
            ..Default::default()
        });
        assert!(
            err.starts_with("--cacert ")
                && err.contains("nosuch.pem")
                && err.contains("cannot read"),
            "{err}"
        );

        let err = error(TlsOptions {
            cacert: Some(&key),
            ..Default::default()
        });
        assert!(
            err.starts_with("--cacert ")
                && err.contains("key.pem")
                && err.contains("no \"CERTIFICATE\""),
            "{err}"
        );

        let err = error(TlsOptions {
            cacert: Some(&cert),
            cert: Some(&cert),
            key: Some(&cert),
            ..Default::default()
        });
        assert!(
            err.starts_with("--key ") && err.contains("cert.pem") && err.contains("PRIVATE KEY"),
            "{err}"
        );

        let broken = dir.path().join("broken.pem");
        std::fs::write(
            &broken,
            "-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n",
        )
        .unwrap();
        let err = error(TlsOptions {
            cacert: Some(&broken),
            ..Default::default()
        });
        assert!(
            err.starts_with("--cacert ") && err.contains("broken.pem"),
            "{err}"
        );

        let (_other_dir, _, other_key) = pem_files();
        let err = error(TlsOptions {
            cacert: Some(&cert),
            cert: Some(&cert),
            key: Some(&other_key),
            ..Default::default()
        });
        assert!(
            err.contains("--cert")
                && err.contains("--key")
                && err.contains("do not belong together"),
            "{err}"
        );
    }

    #[test]
    fn a_name_that_cannot_be_checked_is_refused() {
        let err = error(TlsOptions {
            sni: Some("not a name"),
            insecure: true,
            ..Default::default()
        });
        assert!(err.starts_with("--sni not a name:"), "{err}");
    }
}
