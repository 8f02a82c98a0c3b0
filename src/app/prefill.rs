//! `--prefill`, sent: the workload's [`Prefill`] `SET`s, pipelined on the probe's one
//! connection before the first test, every reply checked. Not measured: it only makes
//! the reads that follow find their keys.

use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::config::RunConfig;
use crate::net::Connection;
use crate::workload::Prefill;

/// `SET`s written before their replies are read: enough to keep a local server busy
/// between two reads, few enough that a refusal is seen before much more is sent.
const PIPELINE: u64 = 1024;

/// Writes every key the workload reads; returns how many and how long it took. A
/// refusal (`OOM`, a read-only replica, `NOPERM`) is fatal, naming the key and reply:
/// the reads after a half-done prefill would measure a mix of hits and misses.
pub(super) async fn prefill(config: &RunConfig, conn: &mut Connection) -> Result<(u64, Duration)> {
    let plan = Prefill::of(&config.plan.workload).context("--prefill")?;
    let started = Instant::now();
    let total = plan.len();
    let mut next = 0;
    while next < total {
        let batch = next..(next + PIPELINE).min(total);
        for i in batch.clone() {
            let Some(argv) = plan.command(i) else {
                break;
            };
            let refs: [&[u8]; 3] = [&argv[0], &argv[1], &argv[2]];
            crate::resp::encode_command(conn.write_buf(), &refs);
        }
        let replies = async {
            conn.flush().await?;
            let mut replies = Vec::with_capacity(batch.clone().count());
            for _ in batch.clone() {
                replies.push(conn.read_reply().await?);
            }
            Ok::<_, crate::net::NetError>(replies)
        };
        let replies = tokio::time::timeout(config.plan.connect_timeout, replies)
            .await
            .with_context(|| {
                format!(
                    "--prefill: {} did not answer {} SETs within {:?} (--connect-timeout)",
                    config.plan.endpoint,
                    batch.clone().count(),
                    config.plan.connect_timeout
                )
            })??;
        for (i, reply) in batch.clone().zip(&replies) {
            if reply.is_error() {
                let key = plan.command(i).map(|[_, k, _]| k).unwrap_or_default();
                bail!(
                    "--prefill: SET {} was refused after {i} of {total} keys: {reply}",
                    crate::text::printable(&String::from_utf8_lossy(&key))
                );
            }
        }
        next = batch.end;
    }
    Ok((total, started.elapsed()))
}
