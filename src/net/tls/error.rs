//! [`TlsError`]: a TLS file or setting that cannot be used, each message one line that
//! names the flag and the file and says what to do.

use std::io;
use std::path::PathBuf;

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
