//! A throwaway three-master Redis Cluster for the tests: `redis-server
//! --cluster-enabled yes` nodes on free loopback ports (the bus on another free port,
//! `--cluster-port`), joined with `redis-cli --cluster create`, and slot moves with
//! `redis-cli --cluster reshard`. Every node is a [`RedisServer`], killed on drop.

use std::collections::BTreeMap;
use std::process::Command;
use std::time::{Duration, Instant};

use super::{RedisServer, find_in_path, free_port, run_with_timeout};

/// How long the cluster may take to agree on its layout after `--cluster create`.
const SETTLE_TIMEOUT: Duration = Duration::from_secs(30);

/// A running cluster of masters (no replicas).
pub struct RedisCluster {
    /// The masters, in start order.
    pub nodes: Vec<RedisServer>,
}

/// `redis-cli`, from PATH or Debian's place.
pub fn redis_cli_bin() -> std::path::PathBuf {
    find_in_path("redis-cli").unwrap_or_else(|| "/usr/bin/redis-cli".into())
}

impl RedisCluster {
    /// Starts `masters` nodes, joins them with every slot assigned, and waits until
    /// every node says `cluster_state:ok` and knows all the others.
    pub fn start(masters: usize) -> RedisCluster {
        let nodes: Vec<RedisServer> = (0..masters)
            .map(|_| {
                RedisServer::builder()
                    .arg("--cluster-enabled", "yes")
                    .arg("--cluster-port", &free_port().to_string())
                    .arg("--cluster-config-file", "nodes.conf")
                    .arg("--cluster-node-timeout", "5000")
                    .start()
            })
            .collect();
        let mut cli = Command::new(redis_cli_bin());
        cli.args(["--cluster", "create"])
            .args(nodes.iter().map(RedisServer::addr))
            .args(["--cluster-replicas", "0", "--cluster-yes"]);
        let out = run_with_timeout(cli, Duration::from_secs(60));
        assert!(
            out.status.success(),
            "redis-cli --cluster create failed:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let cluster = RedisCluster { nodes };
        cluster.wait_settled();
        cluster
    }

    /// Waits until every node reports `cluster_state:ok` and sees every master.
    pub fn wait_settled(&self) {
        let deadline = Instant::now() + SETTLE_TIMEOUT;
        loop {
            let ok = self.nodes.iter().all(|n| {
                let info = n.cmd(&["CLUSTER", "INFO"]);
                info.contains("cluster_state:ok")
                    && info.contains(&format!("cluster_known_nodes:{}", self.nodes.len()))
            });
            if ok {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "the cluster did not settle within {SETTLE_TIMEOUT:?}: {:?}",
                self.nodes
                    .iter()
                    .map(|n| n.cmd(&["CLUSTER", "INFO"]))
                    .collect::<Vec<_>>()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The node id of master `i`.
    pub fn id(&self, i: usize) -> String {
        self.nodes[i].cmd(&["CLUSTER", "MYID"])
    }

    /// Slots master `i` serves, by its own view.
    pub fn slots_of(&self, i: usize) -> usize {
        let id = self.id(i);
        let nodes = self.nodes[i].cmd(&["CLUSTER", "NODES"]);
        let line = nodes
            .lines()
            .find(|l| l.starts_with(&id))
            .unwrap_or_default();
        line.split_whitespace()
            .skip(8)
            .filter(|r| !r.starts_with('['))
            .map(|r| match r.split_once('-') {
                Some((a, b)) => {
                    b.parse::<usize>().unwrap_or(0) - a.parse::<usize>().unwrap_or(0) + 1
                }
                None => 1,
            })
            .sum()
    }

    /// Moves `slots` slots, with their keys, from master `from` to master `to`
    /// (`redis-cli --cluster reshard`); blocks until done.
    pub fn reshard(&self, from: usize, to: usize, slots: usize) -> String {
        let mut cli = Command::new(redis_cli_bin());
        cli.args(["--cluster", "reshard", &self.nodes[from].addr()])
            .args([
                "--cluster-from",
                &self.id(from),
                "--cluster-to",
                &self.id(to),
            ])
            .args([
                "--cluster-slots",
                &slots.to_string(),
                "--cluster-yes",
                "--cluster-pipeline",
                "10",
            ]);
        let out = run_with_timeout(cli, Duration::from_secs(120));
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            out.status.success(),
            "redis-cli --cluster reshard failed:\n{text}"
        );
        text
    }

    /// `INFO commandstats` calls of every node, by node.
    pub fn commandstats(&self) -> Vec<BTreeMap<String, u64>> {
        self.nodes.iter().map(RedisServer::commandstats).collect()
    }

    /// Clears every node's statistics.
    pub fn reset_stats(&self) {
        for n in &self.nodes {
            n.reset_stats();
        }
    }
}
