//! Checking the server's certificate: `--cacert`'s verifier, which says in words when
//! the certificate given as the CA is the server's own, `--insecure`'s, which accepts
//! any, and the words for a refusal that rustls gives only as webpki's code.

use std::io;
use std::path::PathBuf;
use std::sync::Arc;

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::{CertificateError, DigitallySignedStruct, OtherError, SignatureScheme};
use rustls_pki_types::{CertificateDer, ServerName, UnixTime};

/// A refused handshake's reason. rustls shows a certificate refusal that webpki names
/// only by a code as that code (`Other(OtherError(CaUsedAsEndEntity))`): those known
/// here are said in words.
pub(super) fn explain(e: &io::Error) -> String {
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

/// `--cacert`: webpki's verification, and a refusal in words when the certificate the
/// server presents is one of `--cacert`'s own (the server's certificate given as its CA).
#[derive(Debug)]
pub(super) struct CaFileVerifier {
    pub(super) webpki: Arc<WebPkiServerVerifier>,
    pub(super) given: Vec<CertificateDer<'static>>,
    pub(super) path: PathBuf,
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

/// `--insecure`: any certificate for any name is accepted. The handshake's signatures
/// are still checked, so the session is encrypted, just not authenticated.
#[derive(Debug)]
pub(super) struct AcceptAnyCertificate(pub(super) Arc<CryptoProvider>);

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
