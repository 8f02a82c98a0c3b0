//! Where to connect and what to say first: endpoints, `redis://`, `rediss://` and
//! `unix://` URIs, and the handshake settings (AUTH, SELECT, HELLO 3, CLIENT TRACKING).
//! The TLS configuration of an endpoint is built by [`super::tls`].

use std::fmt;
use std::path::PathBuf;

use super::tls::TlsSettings;

/// A server address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    /// TCP host and port.
    Tcp {
        /// Host name or address.
        host: String,
        /// Port.
        port: u16,
    },
    /// Unix domain socket.
    Unix(PathBuf),
    /// TCP host and port, then TLS (`--tls`, `rediss://`).
    Tls {
        /// Host name or address.
        host: String,
        /// Port.
        port: u16,
        /// The run's client configuration, shared by every connection.
        tls: TlsSettings,
    },
}

impl Endpoint {
    /// The TLS settings, when the endpoint is TLS.
    pub fn tls(&self) -> Option<&TlsSettings> {
        match self {
            Endpoint::Tls { tls, .. } => Some(tls),
            Endpoint::Tcp { .. } | Endpoint::Unix(_) => None,
        }
    }
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Endpoint::Tcp { host, port } if host.contains(':') => write!(f, "[{host}]:{port}"),
            Endpoint::Tcp { host, port } => write!(f, "{host}:{port}"),
            Endpoint::Unix(path) => write!(f, "unix:{}", path.display()),
            Endpoint::Tls { host, port, .. } if host.contains(':') => {
                write!(f, "tls:[{host}]:{port}")
            }
            Endpoint::Tls { host, port, .. } => write!(f, "tls:{host}:{port}"),
        }
    }
}

/// What a connection sends before the workload. The password never leaves this
/// struct except inside an AUTH command (its `Debug` hides it).
#[derive(Clone, Default)]
pub struct Handshake {
    /// ACL user.
    pub user: Option<String>,
    /// Password.
    pub password: Option<String>,
    /// Database to SELECT when not 0.
    pub db: u32,
    /// Send HELLO 3.
    pub resp3: bool,
    /// Send CLIENT TRACKING on.
    pub tracking: bool,
}

impl fmt::Debug for Handshake {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Handshake")
            .field("user", &self.user)
            .field("password", &self.password.as_ref().map(|_| "<hidden>"))
            .field("db", &self.db)
            .field("resp3", &self.resp3)
            .field("tracking", &self.tracking)
            .finish()
    }
}

/// The parts of a `redis://`, `rediss://` or `unix://` URI.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedUri {
    /// Address (TCP for `rediss://` too: see `tls`).
    pub endpoint: Endpoint,
    /// `rediss://`: connect with TLS.
    pub tls: bool,
    /// User, when given.
    pub user: Option<String>,
    /// Password, when given.
    pub password: Option<String>,
    /// Database, when given.
    pub db: Option<u32>,
}

/// Parses `redis://[user[:pass]@]host[:port][/db]`, the same with `rediss://` (TLS),
/// or `unix:///path`. Errors never repeat the URI (it may hold a password).
pub fn parse_uri(uri: &str) -> Result<ParsedUri, String> {
    if let Some(path) = uri.strip_prefix("unix://") {
        if path.is_empty() {
            return Err("unix:// needs a socket path".into());
        }
        return Ok(ParsedUri {
            endpoint: Endpoint::Unix(path.into()),
            tls: false,
            user: None,
            password: None,
            db: None,
        });
    }
    let (rest, tls) = if let Some(rest) = uri.strip_prefix("redis://") {
        (rest, false)
    } else if let Some(rest) = uri.strip_prefix("rediss://") {
        (rest, true)
    } else {
        return Err(
            "expected redis://[user:password@]host[:port][/db], rediss://... (TLS) or unix:///path"
                .into(),
        );
    };
    let (auth, hostpart) = match rest.rsplit_once('@') {
        Some((auth, host)) => (Some(auth), host),
        None => (None, rest),
    };
    let (user, password) = match auth {
        None => (None, None),
        Some(auth) => match auth.split_once(':') {
            Some((u, p)) => (
                if u.is_empty() {
                    None
                } else {
                    Some(percent_decode(u)?)
                },
                Some(percent_decode(p)?),
            ),
            None => (None, Some(percent_decode(auth)?)),
        },
    };
    let (hostport, db) = match hostpart.split_once('/') {
        Some((hp, db)) if !db.is_empty() => (
            hp,
            Some(
                db.parse::<u32>()
                    .map_err(|_| "the database after '/' must be a number".to_string())?,
            ),
        ),
        Some((hp, _)) => (hp, None),
        None => (hostpart, None),
    };
    let (host, port) = if let Some(bracketed) = hostport.strip_prefix('[') {
        let (h, after) = bracketed
            .split_once(']')
            .ok_or("unclosed '[' in the host")?;
        let port = match after.strip_prefix(':') {
            Some(p) => p
                .parse::<u16>()
                .map_err(|_| "the port must be a number from 1 to 65535".to_string())?,
            None => 6379,
        };
        (h.to_string(), port)
    } else {
        match hostport.rsplit_once(':') {
            Some((h, p)) => (
                h.to_string(),
                p.parse::<u16>()
                    .map_err(|_| "the port must be a number from 1 to 65535".to_string())?,
            ),
            None => (hostport.to_string(), 6379),
        }
    };
    let host = if host.is_empty() {
        "127.0.0.1".to_string()
    } else {
        host
    };
    Ok(ParsedUri {
        endpoint: Endpoint::Tcp { host, port },
        tls,
        user,
        password,
        db,
    })
}

fn percent_decode(text: &str) -> Result<String, String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes
                .get(i + 1..i + 3)
                .ok_or("a '%' escape in the URI is cut short")?;
            let hex = std::str::from_utf8(hex).map_err(|_| "bad '%' escape in the URI")?;
            out.push(u8::from_str_radix(hex, 16).map_err(|_| "bad '%' escape in the URI")?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| "the URI's credentials are not UTF-8".to_string())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn uri_with_everything() {
        let p = parse_uri("redis://alice:p%40ss@localhost:6380/2").unwrap();
        assert_eq!(
            p.endpoint,
            Endpoint::Tcp {
                host: "localhost".into(),
                port: 6380
            }
        );
        assert_eq!(p.user.as_deref(), Some("alice"));
        assert_eq!(p.password.as_deref(), Some("p@ss"));
        assert_eq!(p.db, Some(2));
    }

    #[test]
    fn uri_with_password_only_and_default_port() {
        let p = parse_uri("redis://:secret@127.0.0.1").unwrap();
        assert_eq!(
            p.endpoint,
            Endpoint::Tcp {
                host: "127.0.0.1".into(),
                port: 6379
            }
        );
        assert_eq!(p.user, None);
        assert_eq!(p.password.as_deref(), Some("secret"));
    }

    #[test]
    fn rediss_is_redis_with_tls() {
        let p = parse_uri("rediss://:secret@cache.example:6380/1").unwrap();
        assert_eq!(
            p.endpoint,
            Endpoint::Tcp {
                host: "cache.example".into(),
                port: 6380
            }
        );
        assert!(p.tls);
        assert_eq!((p.password.as_deref(), p.db), (Some("secret"), Some(1)));
        assert!(!parse_uri("redis://h").unwrap().tls);
        assert!(!parse_uri("unix:///tmp/s").unwrap().tls);
    }

    #[test]
    fn bad_uris_do_not_echo_the_password() {
        let err = parse_uri("redis://u:hunter2@host:notaport").unwrap_err();
        assert!(!err.contains("hunter2"), "{err}");
        assert!(parse_uri("http://x").is_err());
    }

    #[test]
    fn debug_hides_the_password() {
        let h = Handshake {
            password: Some("hunter2".into()),
            ..Default::default()
        };
        assert!(!format!("{h:?}").contains("hunter2"));
    }
}
