//! A throwaway Redis Cluster for the tests: `redis-server --cluster-enabled yes` nodes
//! on free loopback ports (the bus on another free port, `--cluster-port`), joined with
//! `redis-cli --cluster create` (masters only, or with replicas and a short node
//! timeout so that a killed master's replica takes over in a second or two), slot
//! moves with `redis-cli --cluster reshard`, failovers, and nodes added with
//! `--cluster add-node`. Every node is a [`RedisServer`], killed on drop.

use std::collections::BTreeMap;
use std::process::Command;
use std::time::{Duration, Instant};

use super::{RedisServer, find_in_path, free_port, run_with_timeout};

/// How long the cluster may take to agree on its layout after `--cluster create`.
const SETTLE_TIMEOUT: Duration = Duration::from_secs(30);

/// A running cluster.
pub struct RedisCluster {
    /// Its nodes, in start order (masters first when it was created with replicas,
    /// then any added with [`RedisCluster::add_node`]).
    pub nodes: Vec<RedisServer>,
    /// Nodes started in cluster mode but not joined, for [`RedisCluster::add_node`].
    pub spare: Vec<RedisServer>,
}

/// One cluster-mode node: `node_timeout_ms` is how long a silent peer takes to be
/// declared failed; replicas sync at once (no diskless delay), so a replica can take
/// over soon after the cluster is created.
fn cluster_node(node_timeout_ms: u64) -> RedisServer {
    RedisServer::builder()
        .arg("--cluster-enabled", "yes")
        .arg("--cluster-port", &free_port().to_string())
        .arg("--cluster-config-file", "nodes.conf")
        .arg("--cluster-node-timeout", &node_timeout_ms.to_string())
        .arg("--repl-diskless-sync-delay", "0")
        .start()
}

/// `redis-cli`, from PATH or Debian's place.
pub fn redis_cli_bin() -> std::path::PathBuf {
    find_in_path("redis-cli").unwrap_or_else(|| "/usr/bin/redis-cli".into())
}

impl RedisCluster {
    /// Starts `masters` nodes, joins them with every slot assigned, and waits until
    /// every node says `cluster_state:ok` and knows all the others.
    pub fn start(masters: usize) -> RedisCluster {
        Self::start_with(masters, 0, 0, 5000)
    }

    /// Starts `masters` masters with `replicas` replicas each and `spare` nodes left out
    /// of it, every node with `--cluster-node-timeout node_timeout_ms`; waits until the
    /// cluster agrees and every replica is in sync with its master.
    pub fn start_with(
        masters: usize,
        replicas: usize,
        spare: usize,
        node_timeout_ms: u64,
    ) -> RedisCluster {
        let nodes: Vec<RedisServer> = (0..masters * (1 + replicas))
            .map(|_| cluster_node(node_timeout_ms))
            .collect();
        let spare = (0..spare).map(|_| cluster_node(node_timeout_ms)).collect();
        let mut cli = Command::new(redis_cli_bin());
        cli.args(["--cluster", "create"])
            .args(nodes.iter().map(RedisServer::addr))
            .args(["--cluster-replicas", &replicas.to_string(), "--cluster-yes"]);
        let out = run_with_timeout(cli, Duration::from_secs(60));
        assert!(
            out.status.success(),
            "redis-cli --cluster create failed:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let cluster = RedisCluster { nodes, spare };
        cluster.wait_settled();
        cluster.wait_replicas_synced();
        cluster
    }

    /// Waits until every replica's link to its master is up (a replica that never
    /// synced cannot take over).
    pub fn wait_replicas_synced(&self) {
        let deadline = Instant::now() + SETTLE_TIMEOUT;
        while !self.nodes.iter().all(|n| {
            let info = n.info("replication");
            !info.contains("role:slave") || info.contains("master_link_status:up")
        }) {
            assert!(
                Instant::now() < deadline,
                "the replicas did not sync within {SETTLE_TIMEOUT:?}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Whether node `i` is running and says it is a master.
    pub fn is_master(&mut self, i: usize) -> bool {
        self.nodes[i].is_running() && self.nodes[i].info("replication").contains("role:master")
    }

    /// The node that replicates master `master`, if one does: as the master's `CLUSTER
    /// NODES` lists it, or else as a replica's own `INFO replication` says. The master
    /// learns of a replica by gossip, which a loaded host can hold back past the start's
    /// wait for the replicas' links (the replica knows its master from the start).
    pub fn replica_of(&self, master: usize) -> Option<usize> {
        let id = self.id(master);
        let nodes = self.nodes[master].cmd(&["CLUSTER", "NODES"]);
        let listed = nodes
            .lines()
            .find(|l| l.split_whitespace().nth(3) == Some(id.as_str()))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|a| a.split('@').next())
            .and_then(|addr| self.nodes.iter().position(|n| n.addr() == addr));
        let port = format!("master_port:{}", self.nodes[master].port());
        listed.or_else(|| {
            self.nodes.iter().enumerate().position(|(i, n)| {
                i != master && n.child_running() && {
                    let info = n.info("replication");
                    info.contains("role:slave") && info.lines().any(|l| l.trim() == port)
                }
            })
        })
    }

    /// Waits up to `limit` for node `i` to be a master; how long it took, or `None`.
    pub fn wait_master(&mut self, i: usize, limit: Duration) -> Option<Duration> {
        let started = Instant::now();
        while started.elapsed() < limit {
            if self.is_master(i) {
                return Some(started.elapsed());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }

    /// Adds spare node `spare` (see [`RedisCluster::start_with`]) as a master with no
    /// slots, through node `via`, and waits until every node knows it; returns its
    /// index in `nodes`.
    pub fn add_node(&mut self, spare: usize, via: usize) -> usize {
        let node = self.spare.remove(spare);
        let mut cli = Command::new(redis_cli_bin());
        cli.args([
            "--cluster",
            "add-node",
            &node.addr(),
            &self.nodes[via].addr(),
        ]);
        let out = run_with_timeout(cli, Duration::from_secs(60));
        assert!(
            out.status.success(),
            "redis-cli --cluster add-node failed:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        self.nodes.push(node);
        self.wait_settled();
        self.nodes.len() - 1
    }

    /// Waits until every node reports `cluster_state:ok` and sees every master.
    pub fn wait_settled(&self) {
        let deadline = Instant::now() + SETTLE_TIMEOUT;
        loop {
            // A killed node is no longer asked (it cannot answer).
            let ok = self.nodes.iter().filter(|n| n.child_running()).all(|n| {
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
