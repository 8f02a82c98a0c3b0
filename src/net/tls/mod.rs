//! TLS for [`Endpoint::Tls`](super::Endpoint::Tls): the rustls client configuration,
//! built once per run from `--tls`, `--cacert`, `--cert`/`--key`, `--sni` and
//! `--insecure`, and the handshake on a connected socket.
//!
//! Every file is read and checked here when the config is built, so a bad file is a
//! usage error before anything connects, and connecting never touches the disk: each
//! connection shares one `Arc<ClientConfig>` (and its session-resumption cache).
//! Which flags may go together is `config.rs`'s business; reading and writing the
//! encrypted stream is `connection/`'s.
//!
//! A refused handshake is explained in words where rustls gives only webpki's code (a
//! server certificate given as `--cacert`, one marked as a CA), and two small probes
//! tell a port's protocol apart for the messages when a client speaks the wrong one:
//! [`speaks_tls`] (a plain connection closed at once) and [`answers_plain_resp`] (a
//! `--tls` handshake with no answer).
//!
//! The files are read in `files` (what is wrong with one is a [`TlsError`]), the server's certificate is checked (or, with
//! `--insecure`, not) in `verify`, and the probes are in `probe`.

mod error;
mod files;
mod probe;
mod verify;

use std::fmt;
use std::io;
use std::path::Path;
use std::sync::Arc;

use rustls::ClientConfig;
use rustls::client::WebPkiServerVerifier;
use rustls_pki_types::ServerName;
use tokio::io::BufReader;
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;

use self::files::{read_certs, read_key, roots};
use self::verify::{AcceptAnyCertificate, CaFileVerifier, explain};

pub use self::error::TlsError;
pub use self::probe::{answers_plain_resp, speaks_tls};

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

#[cfg(test)]
mod tests;
