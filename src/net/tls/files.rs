//! The PEM files of `--cacert`, `--cert` and `--key`, read and checked when the
//! configuration is built (so a bad file is a usage error naming its flag), and the
//! system's roots when no `--cacert` is given.

use std::path::Path;

use rustls::RootCertStore;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};

use super::error::TlsError;

/// The CAs to trust: `--cacert`'s, else the system's; and `--cacert`'s certificates as
/// given.
pub(super) fn roots(
    cacert: Option<&Path>,
) -> Result<(RootCertStore, Vec<CertificateDer<'static>>), TlsError> {
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

fn read(flag: &'static str, path: &Path) -> Result<Vec<u8>, TlsError> {
    std::fs::read(path).map_err(|source| TlsError::Read {
        flag,
        path: path.to_path_buf(),
        source,
    })
}

/// Every certificate of a PEM file, in order; at least one.
pub(super) fn read_certs(
    flag: &'static str,
    path: &Path,
) -> Result<Vec<CertificateDer<'static>>, TlsError> {
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
pub(super) fn read_key(path: &Path) -> Result<PrivateKeyDer<'static>, TlsError> {
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
