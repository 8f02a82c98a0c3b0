//! Where to connect and how: `-h`/`-p`/`-s`/`-u`, authentication, and the TLS flags.

use super::ConfigError;
use crate::cli::RunArgs;
use crate::net::{Endpoint, Handshake, TlsOptions, TlsSettings};

/// Resolves -h/-p/-s/-u/-a/--user/--dbnum/-3 and the TLS flags into an endpoint and a
/// handshake. TLS files are read here, once per run.
pub(super) fn resolve_endpoint(args: &RunArgs) -> Result<(Endpoint, Handshake), ConfigError> {
    let mut handshake = Handshake {
        user: args.connection.link.user.clone(),
        password: args.connection.link.password.clone(),
        db: args.connection.dbnum,
        resp3: args.connection.session.resp3,
        tracking: args.connection.session.enable_tracking,
    };
    let mut endpoint = match &args.endpoint.socket {
        Some(path) => Endpoint::Unix(path.clone()),
        None => Endpoint::Tcp {
            host: args.endpoint.host.clone(),
            port: args.endpoint.port,
        },
    };
    let mut tls = args.connection.session.tls;
    if let Some(uri) = &args.endpoint.uri {
        let parsed = crate::net::parse_uri(uri).map_err(|why| ConfigError::invalid("-u", why))?;
        endpoint = parsed.endpoint;
        tls |= parsed.tls;
        if parsed.user.is_some() {
            handshake.user = parsed.user;
        }
        if parsed.password.is_some() {
            handshake.password = parsed.password;
        }
        if let Some(db) = parsed.db {
            handshake.db = db;
        }
    }
    let endpoint = with_tls(args, tls, endpoint)?;
    Ok((endpoint, handshake))
}

/// Checks the TLS flags against each other and the endpoint; with TLS on, builds the
/// run's client configuration (reading the files) and makes the endpoint a TLS one.
fn with_tls(args: &RunArgs, tls: bool, endpoint: Endpoint) -> Result<Endpoint, ConfigError> {
    let tls_only = [
        (args.connection.session.cacert.is_some(), "--cacert"),
        (args.connection.session.cert.is_some(), "--cert"),
        (args.connection.session.key.is_some(), "--key"),
        (args.connection.session.sni.is_some(), "--sni"),
        (args.connection.session.insecure, "--insecure"),
    ];
    if !tls {
        return match tls_only.into_iter().find(|(given, _)| *given) {
            Some((_, flag)) => Err(ConfigError::Conflict {
                a: flag,
                b: "a plain-text connection",
                why: "it configures TLS: add --tls, or give a rediss:// URI",
            }),
            None => Ok(endpoint),
        };
    }
    match (&args.connection.session.cert, &args.connection.session.key) {
        (Some(_), None) => {
            return Err(ConfigError::invalid(
                "--cert",
                "needs --key, the certificate's private key",
            ));
        }
        (None, Some(_)) => {
            return Err(ConfigError::invalid(
                "--key",
                "needs --cert, the certificate it is the key of",
            ));
        }
        _ => {}
    }
    if args.connection.session.insecure && args.connection.session.cacert.is_some() {
        return Err(ConfigError::Conflict {
            a: "--insecure",
            b: "--cacert",
            why: "--insecure verifies nothing, so the CA would not be used; drop one of them",
        });
    }
    let (host, port) = match endpoint {
        Endpoint::Tcp { host, port } => (host, port),
        Endpoint::Unix(_) => {
            let b = if args.endpoint.socket.is_some() {
                "-s"
            } else {
                "a unix:// URI"
            };
            return Err(ConfigError::Conflict {
                a: "--tls",
                b,
                why: "TLS runs over TCP: give -h and -p, or a rediss:// URI",
            });
        }
        tls @ Endpoint::Tls { .. } => return Ok(tls),
    };
    let options = TlsOptions {
        cacert: args.connection.session.cacert.as_deref(),
        cert: args.connection.session.cert.as_deref(),
        key: args.connection.session.key.as_deref(),
        sni: args.connection.session.sni.as_deref(),
        insecure: args.connection.session.insecure,
    };
    let tls = TlsSettings::build(&options, &host)?;
    Ok(Endpoint::Tls { host, port, tls })
}
