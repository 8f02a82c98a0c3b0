//! Redis Cluster: which master owns which hash slot, read from `CLUSTER SHARDS` (or
//! `CLUSTER SLOTS` before Redis 7) at the start and again whenever the driver asks, the
//! key-to-slot function with `{hash tag}`s,
//! and the `MOVED`/`ASK` redirects a node answers with when a slot lives elsewhere.
//!
//! Pure data and parsing: discovery sends two commands over a [`Connection`] the caller
//! opened; routing each request and following redirects is the driver's.

use std::fmt;

use super::connection::Connection;
use super::endpoint::Endpoint;
use super::error::NetError;
use crate::resp::Reply;

/// Hash slots of a Redis Cluster.
pub const SLOTS: usize = 16384;

/// What can go wrong learning a cluster's layout.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    /// The node answered, but not as a cluster node.
    #[error("--cluster: {endpoint} is not in cluster mode ({why})")]
    NotCluster {
        /// The node asked.
        endpoint: String,
        /// What it said.
        why: String,
    },
    /// `CLUSTER SHARDS` and `CLUSTER SLOTS` both failed or made no sense.
    #[error("{endpoint}: could not read the cluster layout: {why}")]
    Layout {
        /// The node asked.
        endpoint: String,
        /// What was wrong.
        why: String,
    },
    /// The node could not be asked.
    #[error(transparent)]
    Net(#[from] NetError),
}

/// A master node: where it listens.
#[derive(
    Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct NodeAddr {
    /// Address as the cluster announces it.
    pub host: String,
    /// Port (the TLS port when the cluster runs TLS).
    pub port: u16,
}

impl fmt::Display for NodeAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.host.contains(':') {
            write!(f, "[{}]:{}", self.host, self.port)
        } else {
            write!(f, "{}:{}", self.host, self.port)
        }
    }
}

/// The masters of a cluster and the owner of every slot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterMap {
    /// Masters, sorted by address, so every thread and run numbers them alike.
    pub nodes: Vec<NodeAddr>,
    /// `owner[slot]` is an index into `nodes`; [`UNOWNED`] for a slot the layout gives no
    /// master.
    pub owner: Vec<u16>,
    /// Ranges whose first slot came after their last, read as the slots between the two.
    pub reversed: usize,
    /// Ranges that lie wholly past the last slot, and were left out.
    pub out_of_range: usize,
    /// The command the layout came from (`CLUSTER SHARDS`, `CLUSTER SLOTS`).
    pub source: &'static str,
}

/// `owner` of a slot that no master serves.
pub const UNOWNED: u16 = u16::MAX;

impl ClusterMap {
    /// The map from `(first slot, last slot, master)` ranges. A range given backwards
    /// (first after last) means the slots between its two ends; one that runs past the
    /// last slot is cut there, and one wholly past it is left out; each is counted.
    pub fn from_ranges(ranges: &[(u16, u16, NodeAddr)]) -> Self {
        let mut nodes: Vec<NodeAddr> = ranges.iter().map(|(_, _, n)| n.clone()).collect();
        nodes.sort();
        nodes.dedup();
        let mut owner = vec![UNOWNED; SLOTS];
        let (mut reversed, mut out_of_range) = (0, 0);
        for (first, last, node) in ranges {
            let index = nodes.binary_search(node).unwrap_or(0) as u16;
            let (mut first, mut last) = (usize::from(*first), usize::from(*last));
            if first > last {
                reversed += 1;
                std::mem::swap(&mut first, &mut last);
            }
            if first >= SLOTS {
                out_of_range += 1;
                continue;
            }
            owner[first..=last.min(SLOTS - 1)].fill(index);
        }
        ClusterMap {
            nodes,
            owner,
            reversed,
            out_of_range,
            source: "the cluster",
        }
    }

    /// The index of the master at `host:port`, if it is one of ours.
    pub fn node_index(&self, host: &str, port: u16) -> Option<usize> {
        self.nodes
            .iter()
            .position(|n| n.port == port && n.host == host)
    }

    /// Slots with no owner.
    pub fn unowned(&self) -> usize {
        self.owner.iter().filter(|&&o| o == UNOWNED).count()
    }

    /// The endpoint of master `node`, reached the way `seed` was (plain TCP or the same TLS
    /// settings).
    pub fn endpoint(&self, node: usize, seed: &Endpoint) -> Endpoint {
        let NodeAddr { host, port } = self.nodes[node].clone();
        match seed {
            Endpoint::Tls { tls, .. } => Endpoint::Tls {
                host,
                port,
                tls: tls.clone(),
            },
            Endpoint::Tcp { .. } | Endpoint::Unix(_) => Endpoint::Tcp { host, port },
        }
    }
}

/// Asks the node behind `conn` whether it runs in cluster mode and, if so, for the
/// layout: `Ok(None)` for a standalone server, an error for a node that says it is a
/// cluster node but gives no usable layout.
pub async fn discover(conn: &mut Connection) -> Result<Option<ClusterMap>, ClusterError> {
    let info = conn.call(&[b"INFO", b"cluster"]).await?;
    let enabled = info
        .as_str()
        .and_then(|text| {
            text.lines()
                .find_map(|l| l.strip_prefix("cluster_enabled:"))
        })
        .map(str::trim);
    if enabled != Some("1") {
        return Ok(None);
    }
    let (ranges, source) = read_layout(conn).await?;
    Ok(Some(ClusterMap {
        source,
        ..ClusterMap::from_ranges(&ranges)
    }))
}

/// Reads the layout from the cluster node behind `conn`: `CLUSTER SHARDS`, or `CLUSTER
/// SLOTS` when it does not answer that (before Redis 7); the ranges with their masters
/// and the command they came from. Used at the start and again whenever the layout may
/// have changed during a run.
pub async fn read_layout(
    conn: &mut Connection,
) -> Result<(Vec<(u16, u16, NodeAddr)>, &'static str), ClusterError> {
    let endpoint = conn.endpoint().to_string();
    let shards = conn.call(&[b"CLUSTER", b"SHARDS"]).await?;
    let (ranges, source) = match parse_shards(&shards) {
        Some(ranges) if !ranges.is_empty() => (ranges, "CLUSTER SHARDS"),
        // Before Redis 7 (or a proxy that only knows the older command).
        _ => {
            let slots = conn.call(&[b"CLUSTER", b"SLOTS"]).await?;
            if let Some(message) = slots.error_message() {
                return Err(ClusterError::Layout {
                    endpoint,
                    why: format!("CLUSTER SLOTS answered {}", crate::text::printable(message)),
                });
            }
            let ranges = parse_slots(&slots).ok_or_else(|| ClusterError::Layout {
                endpoint: endpoint.clone(),
                why: "unexpected CLUSTER SLOTS reply".into(),
            })?;
            (ranges, "CLUSTER SLOTS")
        }
    };
    if ranges.is_empty() {
        return Err(ClusterError::Layout {
            endpoint,
            why: "no slot is assigned to any master".into(),
        });
    }
    Ok((ranges, source))
}

/// The node at `endpoint` is not a cluster node but `--cluster` asked for one.
pub fn not_cluster(endpoint: &str) -> ClusterError {
    ClusterError::NotCluster {
        endpoint: endpoint.to_string(),
        why: "INFO cluster says cluster_enabled:0".into(),
    }
}

/// Pairs of a flat RESP2 array (`[k1, v1, k2, v2]`) or the entries of a RESP3 map.
fn pairs(reply: &Reply) -> Vec<(&Reply, &Reply)> {
    match reply {
        Reply::Map(entries) => entries.iter().map(|(k, v)| (k, v)).collect(),
        Reply::Array(items) => items.chunks_exact(2).map(|kv| (&kv[0], &kv[1])).collect(),
        _ => Vec::new(),
    }
}

fn field<'a>(reply: &'a Reply, name: &str) -> Option<&'a Reply> {
    pairs(reply)
        .into_iter()
        .find(|(k, _)| k.as_str() == Some(name))
        .map(|(_, v)| v)
}

fn int_of(reply: &Reply) -> Option<i64> {
    reply
        .as_int()
        .or_else(|| reply.as_str().and_then(|s| s.parse().ok()))
}

/// `CLUSTER SHARDS`: each shard's slot ranges and its master (`role master`, `health online`);
/// `None` for a reply that is not such a layout.
pub fn parse_shards(reply: &Reply) -> Option<Vec<(u16, u16, NodeAddr)>> {
    let Reply::Array(shards) = reply else {
        return None;
    };
    let mut out = Vec::new();
    for shard in shards {
        // Pairs of slot numbers: one item that is not a number, or a lone last one, would
        // pair every later number wrongly, so such a reply is not read at all.
        let slots: Vec<i64> = match field(shard, "slots")? {
            Reply::Array(items) if items.len() % 2 == 0 => {
                items.iter().map(int_of).collect::<Option<_>>()?
            }
            _ => return None,
        };
        let Reply::Array(nodes) = field(shard, "nodes")? else {
            return None;
        };
        let master = nodes
            .iter()
            .find(|n| field(n, "role").and_then(Reply::as_str) == Some("master"));
        let Some(master) = master else { continue };
        if field(master, "health")
            .and_then(Reply::as_str)
            .is_some_and(|h| h != "online")
        {
            continue;
        }
        let host = ["endpoint", "ip"]
            .iter()
            .filter_map(|k| field(master, k).and_then(Reply::as_str))
            .find(|h| !h.is_empty() && *h != "?")?
            .to_string();
        let port = field(master, "port")
            .or_else(|| field(master, "tls-port"))
            .and_then(int_of)?;
        let node = NodeAddr {
            host,
            port: u16::try_from(port).ok()?,
        };
        for range in slots.chunks_exact(2) {
            out.push((
                u16::try_from(range[0]).ok()?,
                u16::try_from(range[1]).ok()?,
                node.clone(),
            ));
        }
    }
    Some(out)
}

/// `CLUSTER SLOTS`: `[first, last, [host, port, id, ...], replicas...]` per range.
pub fn parse_slots(reply: &Reply) -> Option<Vec<(u16, u16, NodeAddr)>> {
    let Reply::Array(ranges) = reply else {
        return None;
    };
    let mut out = Vec::new();
    for range in ranges {
        let Reply::Array(items) = range else {
            return None;
        };
        let (first, last) = (int_of(items.first()?)?, int_of(items.get(1)?)?);
        let Reply::Array(master) = items.get(2)? else {
            return None;
        };
        let host = master.first()?.as_str()?.to_string();
        let port = int_of(master.get(1)?)?;
        out.push((
            u16::try_from(first).ok()?,
            u16::try_from(last).ok()?,
            NodeAddr {
                host,
                port: u16::try_from(port).ok()?,
            },
        ));
    }
    Some(out)
}

/// A `MOVED` or `ASK` error reply: the slot is served by another node, for good (`MOVED`)
/// or for this one request while the slot migrates (`ASK`, sent after `ASKING`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    /// `ASK` rather than `MOVED`.
    pub ask: bool,
    /// The key's slot.
    pub slot: u16,
    /// Where to go.
    pub to: NodeAddr,
}

impl Redirect {
    /// Reads `MOVED 3999 127.0.0.1:6381` or `ASK 3999 127.0.0.1:6381`; `None` for any other
    /// message.
    pub fn parse(message: &str) -> Option<Redirect> {
        let mut words = message.split_ascii_whitespace();
        let ask = match words.next()? {
            "MOVED" => false,
            "ASK" => true,
            _ => return None,
        };
        let slot: u16 = words
            .next()?
            .parse()
            .ok()
            .filter(|&s| usize::from(s) < SLOTS)?;
        let addr = words.next()?;
        let (host, port) = addr.rsplit_once(':')?;
        let host = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_string();
        Some(Redirect {
            ask,
            slot,
            to: NodeAddr {
                host,
                port: port.parse().ok()?,
            },
        })
    }
}

/// The hash slot of `key`: CRC16 of the key, or of the text between the first `{` and
/// the next `}` when that is not empty (a hash tag), modulo 16384.
#[inline]
pub fn key_slot(key: &[u8]) -> u16 {
    let hashed = match key.iter().position(|&b| b == b'{') {
        Some(open) => match key[open + 1..].iter().position(|&b| b == b'}') {
            Some(len) if len > 0 => &key[open + 1..open + 1 + len],
            _ => key,
        },
        None => key,
    };
    crc16(hashed) % SLOTS as u16
}

/// CRC16-CCITT (XMODEM: polynomial 0x1021, initial 0), the cluster's key hash.
/// Hand-written: a 512-byte table and a loop, once per routed request; a crate for it
/// would be larger than the function.
fn crc16(bytes: &[u8]) -> u16 {
    const TABLE: [u16; 256] = {
        let mut table = [0u16; 256];
        let mut i = 0;
        while i < 256 {
            let mut crc = (i as u16) << 8;
            let mut bit = 0;
            while bit < 8 {
                crc = if crc & 0x8000 != 0 {
                    (crc << 1) ^ 0x1021
                } else {
                    crc << 1
                };
                bit += 1;
            }
            table[i] = crc;
            i += 1;
        }
        table
    };
    bytes.iter().fold(0u16, |crc, &b| {
        (crc << 8) ^ TABLE[usize::from(((crc >> 8) as u8) ^ b)]
    })
}

#[cfg(test)]
mod tests;
