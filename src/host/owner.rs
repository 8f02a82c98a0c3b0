//! Which local process serves an endpoint. The server names its own process
//! (`process_id` in `INFO server`), but in its own PID namespace: a server in a
//! container, behind a proxy or on another host names a number that is not its process
//! here, or is another process. So the number is believed only when that process here
//! holds the endpoint's listening socket.

use crate::net::Endpoint;

/// `pid`, when it holds `endpoint`'s listening socket; else why it cannot be taken for
/// the server, in words.
pub fn server_process(endpoint: &Endpoint, pid: u32) -> Result<u32, String> {
    let inodes = match endpoint {
        Endpoint::Tcp { port, .. } | Endpoint::Tls { port, .. } => {
            let mut inodes = Vec::new();
            for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
                if let Ok(text) = std::fs::read_to_string(table) {
                    inodes.extend(listening_tcp(&text, *port));
                }
            }
            inodes
        }
        Endpoint::Unix(path) => std::fs::read_to_string("/proc/net/unix")
            .map(|text| listening_unix(&text, &path.to_string_lossy()))
            .unwrap_or_default(),
    };
    if inodes.is_empty() {
        return Err(format!(
            "no socket on this machine listens at {endpoint}: the server is elsewhere (another host, a proxy, a container's network)"
        ));
    }
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).map_err(|e| {
        format!(
            "the server's process_id {pid} is not a process whose sockets can be read here ({e})"
        )
    })?;
    let owns = fds.filter_map(Result::ok).any(|fd| {
        std::fs::read_link(fd.path()).is_ok_and(|link| {
            link.to_str()
                .and_then(|l| l.strip_prefix("socket:[")?.strip_suffix(']')?.parse().ok())
                .is_some_and(|inode: u64| inodes.contains(&inode))
        })
    });
    if owns {
        Ok(pid)
    } else {
        Err(format!(
            "process {pid} (the server's process_id) does not hold the socket listening at {endpoint}: the server runs in another PID namespace or behind a proxy"
        ))
    }
}

/// The inodes of the sockets listening on `port` in a `/proc/net/tcp` table.
fn listening_tcp(table: &str, port: u16) -> Vec<u64> {
    table
        .lines()
        .skip(1)
        .filter_map(|line| {
            let f: Vec<&str> = line.split_ascii_whitespace().collect();
            let local_port = u16::from_str_radix(f.get(1)?.rsplit(':').next()?, 16).ok()?;
            // State 0A is LISTEN.
            (local_port == port && *f.get(3)? == "0A").then(|| f.get(9)?.parse().ok())?
        })
        .collect()
}

/// The inodes of the sockets listening at `path` in `/proc/net/unix`.
fn listening_unix(table: &str, path: &str) -> Vec<u64> {
    table
        .lines()
        .skip(1)
        .filter_map(|line| {
            let f: Vec<&str> = line.split_ascii_whitespace().collect();
            // Flags 00010000 is __SO_ACCEPTCON: a listening socket.
            (f.get(7) == Some(&path) && *f.get(3)? == "00010000").then(|| f.get(6)?.parse().ok())?
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listening_sockets_are_found_by_port_and_by_path() {
        let tcp = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n   0: 0100007F:18EB 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 4242 1 0 100 0 0 10 0\n   1: 0100007F:18EB 0100007F:9C40 01 00000000:00000000 00:00000000 00000000  1000        0 4343 1 0 100 0 0 10 0\n";
        assert_eq!(listening_tcp(tcp, 6379), vec![4242]);
        assert!(listening_tcp(tcp, 6380).is_empty());
        let unix = "Num       RefCount Protocol Flags    Type St Inode Path\n0000: 00000002 00000000 00010000 0001 01 777 /tmp/redis.sock\n0000: 00000003 00000000 00000000 0001 03 778 /tmp/redis.sock\n";
        assert_eq!(listening_unix(unix, "/tmp/redis.sock"), vec![777]);
    }

    #[test]
    fn a_process_that_does_not_listen_is_not_taken_for_the_server() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("{e}"));
        let port = listener.local_addr().map_or(0, |a| a.port());
        let endpoint = Endpoint::Tcp {
            host: "127.0.0.1".into(),
            port,
        };
        assert_eq!(
            server_process(&endpoint, std::process::id()),
            Ok(std::process::id())
        );
        // pid 1 is not this test's process: it does not hold the socket (or cannot be read).
        assert!(server_process(&endpoint, 1).is_err());
        drop(listener);
        assert!(server_process(&endpoint, std::process::id()).is_err());
    }
}
