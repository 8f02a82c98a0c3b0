//! Two small probes that tell a port's protocol apart, for the message when a client
//! speaks the wrong one: [`speaks_tls`] for a plain connection closed at once, and
//! [`answers_plain_resp`] for a `--tls` handshake with no answer.

use std::io;
use std::sync::Arc;
use std::time::Duration;

use rustls::ClientConfig;
use rustls_pki_types::ServerName;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::verify::AcceptAnyCertificate;

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
