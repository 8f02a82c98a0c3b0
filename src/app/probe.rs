//! What the server says about itself before a run: its version and persistence
//! settings, whether it wants a password, whether it is a cluster node (and its layout),
//! and the workload's setup commands. A proxy that refuses these (twemproxy) is noted,
//! not fatal.

use std::sync::Arc;

use anyhow::Result;

use super::Probed;
use crate::config::RunConfig;
use crate::drive::Cancel;
use crate::net::cluster::ClusterMap;
use crate::net::{Connection, NetError};
use crate::report::ServerFacts;

/// Connects once to learn the server's version and persistence settings; a server that
/// refuses CONFIG or INFO (a proxy) is noted, not fatal. An unreachable server is fatal.
/// Also returns a cluster node's layout, which requests are routed by. `None` when
/// `cancel` ended the asking: every wait here is bounded by `--connect-timeout`, and
/// Ctrl+C must not wait that out.
pub fn server_facts(config: &RunConfig, cancel: &Cancel) -> Result<Option<Probed>> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime
        .block_on(cancel.or_cancelled(async {
            let mut conn = open(config).await?;
            let mut facts = ServerFacts {
                endpoint: config.plan.endpoint.to_string(),
                ..Default::default()
            };
            ask_persistence(config, &mut conn, &mut facts).await?;
            ask_version(config, &mut conn, &mut facts).await?;
            // A cluster node gives the layout requests are routed by. Proxies (which answered
            // no INFO) are not asked unless --cluster says to.
            let cluster = if config.cluster || facts.version.is_some() {
                ask_cluster(config, &mut conn, &mut facts).await?
            } else {
                None
            };
            run_setup(config, &mut conn).await?;
            if config.prefill {
                if cluster.as_ref().is_some_and(|c| c.nodes.len() > 1) {
                    anyhow::bail!(
                        "--prefill writes on one connection, and a cluster's keys live on many nodes: fill them with a -t set run over the same -r first"
                    );
                }
                let (keys, took) = super::prefill::prefill(config, &mut conn).await?;
                facts.prefilled_keys = Some(keys);
                facts.notes.push(format!(
                    "--prefill: {keys} keys SET to {}-byte values in {:.2} s, before the first test",
                    config.plan.workload.data_size,
                    took.as_secs_f64()
                ));
            }
            Ok((facts, cluster))
        }))
        .transpose()
}

/// One connection to the server, as the run's are made.
async fn open(config: &RunConfig) -> Result<Connection> {
    Ok(Connection::open(
        &config.plan.endpoint,
        &config.plan.handshake,
        config.plan.connect_timeout,
        config.plan.limits,
    )
    .await?)
}

/// `CONFIG GET save` and `appendonly` into `facts`; a refusal is noted (`conn` is opened
/// again when the refusal closed it), a request for a password is fatal.
async fn ask_persistence(
    config: &RunConfig,
    conn: &mut Connection,
    facts: &mut ServerFacts,
) -> Result<()> {
    for key in ["save", "appendonly"] {
        let reply = tokio::time::timeout(
            config.plan.connect_timeout,
            conn.call(&[b"CONFIG", b"GET", key.as_bytes()]),
        )
        .await;
        match reply {
            Ok(Ok(reply)) if !reply.is_error() => {
                let value = match &reply {
                    crate::resp::Reply::Array(items) => {
                        items.get(1).and_then(|v| v.as_str()).map(str::to_string)
                    }
                    crate::resp::Reply::Map(pairs) => pairs
                        .first()
                        .and_then(|(_, v)| v.as_str())
                        .map(str::to_string),
                    _ => None,
                };
                match key {
                    "save" => facts.save = value,
                    _ => facts.appendonly = value,
                }
            }
            Ok(Ok(reply))
                if reply
                    .error_message()
                    .is_some_and(|m| m.starts_with("NOAUTH")) =>
            {
                anyhow::bail!(
                    "{} requires a password: {reply} (give -a, --user or REDISCLI_AUTH)",
                    config.plan.endpoint
                );
            }
            Ok(Ok(reply)) => {
                facts.notes.push(format!("the server refused CONFIG GET {key} ({reply}); its persistence settings are not reported"));
                break;
            }
            Ok(Err(e)) if closed_by_peer(&e) => {
                // A TLS port closes a plain connection just as twemproxy closes one
                // whose command it refuses: ask the port which it is.
                if let e @ NetError::SpeaksTls { .. } =
                    crate::net::closed_or_tls(&config.plan.endpoint, e, config.plan.connect_timeout)
                        .await
                {
                    return Err(e.into());
                }
                facts.notes.push(format!(
                    "the server refused CONFIG GET {key} (it closed the connection, as twemproxy does); its persistence settings are not reported"
                ));
                *conn = open(config).await?;
                break;
            }
            Ok(Err(e)) => return Err(e.into()),
            Err(_) => {
                // Silence, not a refusal: a server that does not answer cannot be benchmarked.
                anyhow::bail!(
                    "{} did not answer CONFIG GET {key} within {:?} (--connect-timeout)",
                    config.plan.endpoint,
                    config.plan.connect_timeout
                );
            }
        }
    }
    Ok(())
}

/// `INFO server`'s version into `facts`; a refusal is noted (`conn` is opened again when
/// the refusal closed it).
async fn ask_version(
    config: &RunConfig,
    conn: &mut Connection,
    facts: &mut ServerFacts,
) -> Result<()> {
    match tokio::time::timeout(
        config.plan.connect_timeout,
        conn.call(&[b"INFO", b"server"]),
    )
    .await
    {
        Ok(Ok(reply)) if !reply.is_error() => {
            let text = reply.as_str().unwrap_or_default();
            facts.version = text
                .lines()
                .find_map(|l| l.strip_prefix("redis_version:"))
                .map(|v| v.trim().to_string());
        }
        Ok(Ok(_)) | Err(_) => facts
            .notes
            .push("the server did not answer INFO server; its version is not reported".into()),
        Ok(Err(e)) if closed_by_peer(&e) => {
            if let e @ NetError::SpeaksTls { .. } =
                crate::net::closed_or_tls(&config.plan.endpoint, e, config.plan.connect_timeout)
                    .await
            {
                return Err(e.into());
            }
            facts.notes.push("the server refused INFO server (it closed the connection, as twemproxy does); its version is not reported".into());
            *conn = open(config).await?;
        }
        Ok(Err(e)) => return Err(e.into()),
    }
    Ok(())
}

/// A cluster node's layout (its masters go into `facts`, with notes on the layout);
/// `None` for one server, an error when `--cluster` expected a cluster or `--workers`
/// cannot route over one.
async fn ask_cluster(
    config: &RunConfig,
    conn: &mut Connection,
    facts: &mut ServerFacts,
) -> Result<Option<Arc<ClusterMap>>> {
    let found = tokio::time::timeout(
        config.plan.connect_timeout,
        crate::net::cluster::discover(conn),
    )
    .await;
    match found {
        Ok(Ok(Some(_))) if config.plan.mode.workers().is_some() => {
            anyhow::bail!(
                "--workers: {} is a Redis Cluster node, and --workers does not route over a cluster (use -c and -P)",
                config.plan.endpoint
            );
        }
        Ok(Ok(Some(map))) => {
            facts.cluster_nodes = map.nodes.iter().map(ToString::to_string).collect();
            for note in layout_notes(&map) {
                facts.notes.push(note);
            }
            Ok(Some(Arc::new(map)))
        }
        Ok(Ok(None)) | Ok(Err(crate::net::cluster::ClusterError::Net(NetError::Closed { .. })))
            if config.cluster =>
        {
            Err(crate::net::cluster::not_cluster(&config.plan.endpoint.to_string()).into())
        }
        Ok(Ok(None)) => Ok(None),
        Ok(Err(e)) => Err(e.into()),
        Err(_) => anyhow::bail!(
            "{} did not answer INFO cluster within {:?} (--connect-timeout)",
            config.plan.endpoint,
            config.plan.connect_timeout
        ),
    }
}

/// The workload's setup (SCRIPT LOAD for --script-load), once before any test: a
/// refusal is fatal, since every EVALSHA of the run would fail.
async fn run_setup(config: &RunConfig, conn: &mut Connection) -> Result<()> {
    for argv in &config.plan.workload.setup {
        let refs: Vec<&[u8]> = argv.iter().map(Vec::as_slice).collect();
        let what = String::from_utf8_lossy(&argv[..argv.len().min(2)].join(&b' ')).into_owned();
        match tokio::time::timeout(config.plan.connect_timeout, conn.call(&refs)).await {
            Ok(Ok(reply)) if !reply.is_error() => {}
            Ok(Ok(reply)) => anyhow::bail!("{what} (--script-load) was refused: {reply}"),
            Ok(Err(e)) => return Err(e.into()),
            Err(_) => {
                anyhow::bail!(
                    "{} did not answer {what} within {:?} (--connect-timeout)",
                    config.plan.endpoint,
                    config.plan.connect_timeout
                )
            }
        }
    }
    Ok(())
}

/// What the notes say about a cluster's layout: ranges read other than as given, and the
/// slots it gives no master, with where their requests go (the first master, whose
/// redirects are followed: the layout may only be incomplete, or the slot truly served
/// by no one, and the run's per-node results tell which).
fn layout_notes(map: &crate::net::cluster::ClusterMap) -> Vec<String> {
    let mut notes = Vec::new();
    if map.reversed > 0 {
        notes.push(format!(
            "{} of the slot ranges {} gave ran backwards (the first slot after the last); each was read as the slots between its two ends",
            map.reversed, map.source
        ));
    }
    if map.out_of_range > 0 {
        notes.push(format!(
            "{} of the slot ranges {} gave lie past slot 16383 and were left out",
            map.out_of_range, map.source
        ));
    }
    let unowned = map.unowned();
    if let Some(first) = map.nodes.first().filter(|_| unowned > 0) {
        notes.push(format!(
            "{unowned} of the cluster's 16384 slots have no master in the layout {} gave; their requests are sent to {first}, and its redirects followed (see the per-node results)",
            map.source
        ));
    }
    notes
}

/// Whether `e` is how a proxy refuses a command it does not support: twemproxy answers
/// CONFIG, INFO, SELECT and HELLO by closing the connection, not with an error reply.
/// Reopening tells that apart from a server that went away.
fn closed_by_peer(e: &NetError) -> bool {
    match e {
        NetError::Closed { .. } => true,
        NetError::Io { cause, .. } => cause.kind() == std::io::ErrorKind::ConnectionReset,
        _ => false,
    }
}
