//! Taking the server's readings around a test: one connection per node, opened before
//! the test and apart from its traffic, asked `INFO commandstats`, `INFO cpu` and
//! `LATENCY HISTOGRAM <commands>` just before the test starts and just after it ends.
//!
//! The readings cost three round trips per node at each end, outside the measured
//! window (a shard's first reading one more: `INFO server`, for the server's `run_id`);
//! the connection stays idle in between. A node that refuses a command (an
//! error reply, or closing the connection as twemproxy does) loses that fact, said in
//! the reading's `missing`; the test runs either way. What the readings mean is
//! `report::server`'s.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use crate::config::RunConfig;
use crate::drive::Cancel;
use crate::net::Connection;
use crate::net::cluster::ClusterMap;
use crate::report::server::{self, Reading};
use crate::resp::Reply;

/// The longest wait for one answer of a reading: a server answers INFO in well under a
/// millisecond, even under load (the readings' connection waits its turn in the event
/// loop beside the test's), so a longer silence is a server that will not answer it,
/// and the test's end must not wait on it for `--connect-timeout`.
const READING_TIMEOUT: Duration = Duration::from_secs(1);

/// The readings' connection's name in `CLIENT LIST`.
pub const READINGS_NAME: &str = "tailrate-readings";

/// Connections to every node a test's requests reach, for its readings.
pub struct Observer {
    runtime: tokio::runtime::Runtime,
    /// Per node: its name for messages, and its connection while it answers.
    nodes: Vec<(String, Option<Connection>)>,
    /// Facts lost before any reading (a node that could not be reached).
    missing: Vec<String>,
    timeout: Duration,
    /// The commands asked about, as the server names them.
    commands: Vec<String>,
    /// Whether the first reading keeps each node's `run_id` (a shard's does).
    identify: bool,
    /// The nodes' addresses, in the order of `nodes`.
    endpoints: Vec<crate::net::Endpoint>,
    taken: Option<Instant>,
}

impl Observer {
    /// Opens one connection per node (the endpoint, or each master of `cluster`);
    /// `None` when no reading is wanted (`--no-server-stats`). Ctrl+C (`cancel`) ends a
    /// connect that waits: the run that follows then ends at once, and says so.
    pub fn open(
        config: &RunConfig,
        cluster: Option<&ClusterMap>,
        commands: &[String],
        cancel: &Cancel,
    ) -> Option<Observer> {
        if !config.output.server_stats {
            return None;
        }
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .ok()?;
        let plan = &config.plan;
        let endpoints = match cluster {
            Some(map) => (0..map.nodes.len())
                .map(|n| map.endpoint(n, &plan.endpoint))
                .collect(),
            None => vec![plan.endpoint.clone()],
        };
        // The readings' connection authenticates and selects as the test's do, but takes
        // no part in the test's protocol: RESP2, no tracking (whose invalidations would
        // be pushed to it), and a name that tells it apart in CLIENT LIST.
        let handshake = crate::net::Handshake {
            resp3: false,
            tracking: false,
            ..plan.handshake.clone()
        };
        let mut missing = Vec::new();
        let addresses = endpoints.clone();
        let nodes = endpoints
            .into_iter()
            .map(|endpoint| {
                let name = endpoint.to_string();
                let conn = runtime.block_on(cancel.or_cancelled(async {
                    tokio::time::timeout(
                        plan.connect_timeout,
                        Connection::open(&endpoint, &handshake, plan.connect_timeout, plan.limits),
                    )
                    .await
                }));
                let Some(conn) = conn else {
                    missing.push(format!(
                        "{name}: no connection for its readings (interrupted)"
                    ));
                    return (name, None);
                };
                let conn = match conn {
                    Ok(Ok(mut conn)) => {
                        // Best effort: a server without CLIENT SETNAME (a proxy) still
                        // gives its readings, or says it will not. One that does not
                        // answer at all gives none, and its late reply would be taken
                        // for the next question's: the connection is not kept.
                        let named = runtime.block_on(async {
                            tokio::time::timeout(
                                READING_TIMEOUT,
                                conn.call(&[b"CLIENT", b"SETNAME", READINGS_NAME.as_bytes()]),
                            )
                            .await
                        });
                        if named.is_err() {
                            missing.push(format!(
                                "{name}: no answer to CLIENT SETNAME within {READING_TIMEOUT:?}: no readings"
                            ));
                            None
                        } else {
                            Some(conn)
                        }
                    }
                    Ok(Err(e)) => {
                        missing.push(format!("{name}: no connection for its readings ({e})"));
                        None
                    }
                    Err(_) => {
                        missing.push(format!(
                            "{name}: no connection for its readings (timed out)"
                        ));
                        None
                    }
                };
                (name, conn)
            })
            .collect();
        let mut commands: Vec<String> = commands.iter().map(|c| server::server_name(c)).collect();
        commands.sort();
        commands.dedup();
        Some(Observer {
            runtime,
            nodes,
            missing,
            timeout: plan.connect_timeout.min(READING_TIMEOUT),
            commands,
            identify: plan.shard.is_split(),
            endpoints: addresses,
            taken: None,
        })
    }

    /// Reads every node and adds the readings up (a cluster's counters and histograms
    /// add across its masters; a fact is kept only if every node gave it).
    pub fn read(&mut self) -> Reading {
        let mut total = Reading {
            commands: Some(BTreeMap::new()),
            cpu_secs: Some(0.0),
            latency: Some(BTreeMap::new()),
            missing: self.missing.clone(),
            run_ids: Vec::new(),
            process_ids: Vec::new(),
        };
        let (runtime, timeout, commands) = (&self.runtime, self.timeout, &self.commands);
        let several = self.nodes.len() > 1;
        let before = self.taken.is_none();
        let identify = before && self.identify;
        for (name, conn) in &mut self.nodes {
            let reading = runtime.block_on(read_node(conn, timeout, commands, before, identify));
            add(&mut total, reading, several.then_some(name.as_str()));
        }
        self.taken = Some(Instant::now());
        total
    }

    /// The server's process on this machine, from the first reading's `process_id`,
    /// checked to hold the endpoint's listening socket; else why it is not known.
    pub fn server_process(&self, first: &Reading) -> Result<u32, String> {
        match (self.endpoints.as_slice(), first.process_ids.as_slice()) {
            ([endpoint], [pid]) => crate::host::server_process(endpoint, *pid),
            ([_], _) => Err("the server did not give its process_id (INFO server)".into()),
            (many, _) => Err(format!(
                "a cluster of {} masters: the host's figures follow one server process only",
                many.len()
            )),
        }
    }

    /// One command to the server, outside the readings (its events): the reply, or why
    /// there is none in words. A cluster's nodes are not asked (their events are not
    /// read).
    pub fn call(&mut self, argv: &[&[u8]]) -> Result<Reply, String> {
        let [(_, conn)] = self.nodes.as_mut_slice() else {
            return Err(format!("a cluster of {} masters", self.nodes.len()));
        };
        let c = conn
            .as_mut()
            .ok_or("the connection for readings was closed")?;
        // A connection that failed or fell silent is not asked again (a late reply would
        // be taken for the next question's).
        match self
            .runtime
            .block_on(async { tokio::time::timeout(self.timeout, c.call(argv)).await })
        {
            Ok(Ok(reply)) if reply.is_error() => Err(format!(
                "the server replied {}",
                crate::text::printable(reply.error_message().unwrap_or_default())
            )),
            Ok(Ok(reply)) => Ok(reply),
            Ok(Err(e)) => {
                *conn = None;
                Err(e.to_string())
            }
            Err(_) => {
                *conn = None;
                Err(format!("no answer within {:?}", self.timeout))
            }
        }
    }

    /// When the last reading was taken.
    pub fn taken(&self) -> Option<Instant> {
        self.taken
    }
}

/// One node's reading; a refusal or a closed connection drops the connection's later
/// questions (`conn` becomes `None`) and names the fact missing.
///
/// `INFO commandstats` is asked last `before` the test and first after it, so that none
/// of the readings' own commands falls between the two counts (a benchmark of `INFO`
/// counts exactly its own calls). `identify` asks `INFO server` first.
async fn read_node(
    conn: &mut Option<Connection>,
    timeout: Duration,
    commands: &[String],
    before: bool,
    identify: bool,
) -> Reading {
    let mut reading = Reading::default();
    let ask = async |conn: &mut Option<Connection>,
                     argv: &[&[u8]],
                     what: &str,
                     missing: &mut Vec<String>| {
        let Some(c) = conn.as_mut() else {
            missing.push(format!(
                "{what}: the connection for readings was closed earlier"
            ));
            return None;
        };
        match tokio::time::timeout(timeout, c.call(argv)).await {
            Ok(Ok(reply)) if reply.is_error() => {
                let text = reply.error_message().unwrap_or_default();
                missing.push(format!(
                    "{what}: the server replied {}",
                    crate::text::printable(text)
                ));
                None
            }
            Ok(Ok(reply)) => Some(reply),
            Ok(Err(e)) => {
                missing.push(format!("{what}: {e}"));
                *conn = None;
                None
            }
            Err(_) => {
                missing.push(format!("{what}: no answer within {timeout:?}"));
                *conn = None;
                None
            }
        }
    };
    let text = |reply: &Reply| reply.as_str().map(str::to_string);
    let mut missing = Vec::new();
    let order: &[Fact] = if before {
        &[Fact::Server, Fact::Cpu, Fact::Latency, Fact::Commands]
    } else {
        &[Fact::Commands, Fact::Cpu, Fact::Latency]
    };
    for &fact in order {
        match fact {
            Fact::Server => {
                let info = ask(conn, &[b"INFO", b"server"], "INFO server", &mut missing)
                    .await
                    .and_then(|r| text(&r));
                let info = info.as_deref().unwrap_or_default();
                reading.process_ids = server::parse_process_id(info).into_iter().collect();
                if identify {
                    reading.run_ids = server::parse_run_id(info).into_iter().collect();
                }
            }
            Fact::Commands => {
                let reply = ask(
                    conn,
                    &[b"INFO", b"commandstats"],
                    "INFO commandstats",
                    &mut missing,
                )
                .await;
                // A reply that is not the section (not text, or text without it) is a
                // fact missing, not a count of zero.
                reading.commands = match reply.as_ref().map(text) {
                    Some(Some(t)) if t.contains("cmdstat_") || t.contains("# Commandstats") => {
                        Some(server::parse_commandstats(&t))
                    }
                    Some(Some(_)) => {
                        missing.push("INFO commandstats: a reply without the section".into());
                        None
                    }
                    Some(None) => {
                        missing.push("INFO commandstats: a reply that is not text".into());
                        None
                    }
                    None => None,
                };
            }
            Fact::Cpu => {
                let reply = ask(conn, &[b"INFO", b"cpu"], "INFO cpu", &mut missing).await;
                reading.cpu_secs = reply
                    .as_ref()
                    .and_then(text)
                    .and_then(|t| server::parse_cpu_secs(&t));
                if reply.is_some() && reading.cpu_secs.is_none() {
                    missing.push(
                        "INFO cpu: no plausible used_cpu_sys and used_cpu_user in the reply".into(),
                    );
                }
            }
            Fact::Latency => {
                let mut argv: Vec<&[u8]> = vec![b"LATENCY", b"HISTOGRAM"];
                argv.extend(commands.iter().map(|c| c.as_bytes()));
                reading.latency = match ask(conn, &argv, "LATENCY HISTOGRAM", &mut missing).await {
                    Some(reply) => {
                        let parsed = server::parse_latency_histogram(&reply);
                        if parsed.is_none() {
                            missing.push("LATENCY HISTOGRAM: a reply of a shape not known".into());
                        }
                        parsed
                    }
                    None => None,
                };
            }
        }
    }
    reading.missing = missing;
    reading
}

/// The facts a reading asks for, one command each.
#[derive(Clone, Copy)]
enum Fact {
    /// `INFO server`, for `run_id` and `process_id`.
    Server,
    /// `INFO commandstats`.
    Commands,
    /// `INFO cpu`.
    Cpu,
    /// `LATENCY HISTOGRAM <commands>`.
    Latency,
}

/// Adds `node`'s reading into `total`; a fact one node lacks is lacking in the total.
fn add(total: &mut Reading, node: Reading, name: Option<&str>) {
    for m in node.missing {
        let m = match name {
            Some(name) => format!("{name}: {m}"),
            None => m,
        };
        if !total.missing.contains(&m) {
            total.missing.push(m);
        }
    }
    total.commands = match (total.commands.take(), node.commands) {
        (Some(mut t), Some(n)) => {
            for (k, c) in n {
                let e = t.entry(k).or_default();
                e.calls += c.calls;
                e.usec += c.usec;
                e.rejected_calls += c.rejected_calls;
            }
            Some(t)
        }
        _ => None,
    };
    total.cpu_secs = total.cpu_secs.zip(node.cpu_secs).map(|(a, b)| a + b);
    total.run_ids.extend(node.run_ids);
    total.process_ids.extend(node.process_ids);
    total.latency = match (total.latency.take(), node.latency) {
        (Some(mut t), Some(n)) => {
            for (k, buckets) in n {
                let e = t.entry(k).or_default();
                *e = server::add_cumulative(e, &buckets);
            }
            Some(t)
        }
        _ => None,
    };
}
