//! Redis Cluster: requests are routed by key slot to every master, redirects are
//! followed while slots migrate during a run (with no failed request), a master added,
//! a failover and a killed master are followed (`timing`), results come per node, and
//! `--cluster` against a standalone server is a clear error. Each test
//! starts its own cluster of real nodes (`redis-server --cluster-enabled yes`
//! joined by `redis-cli --cluster create`, ~2 s) and stops it when it ends: nextest
//! runs every test in a process of its own, and a cluster kept in a `static` would
//! never be dropped, so its servers would outlive the run.

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::harness::cluster::RedisCluster;
use crate::harness::{RedisServer, assert_success, run_tailrate, skip, stderr_of};

fn report(path: &std::path::Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// The per-node results of test `t`, by address.
fn nodes_of(test: &Value) -> Vec<(String, u64)> {
    test["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            (
                n["node"].as_str().unwrap().to_string(),
                n["sent"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn a_run_spreads_over_every_master_as_the_slots_say() {
    let cluster = RedisCluster::start(3);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    // No --cluster: a cluster node is detected and routed over.
    let port = cluster.nodes[0].port().to_string();
    let out = run_tailrate(&[
        "-p",
        &port,
        "-t",
        "set",
        "-n",
        "30000",
        "-r",
        "100000",
        "-c",
        "4",
        "-P",
        "4",
        "--json",
        json.to_str().unwrap(),
    ]);
    let text = assert_success(&out);
    assert!(text.contains("per cluster node"), "{text}");
    let r = report(&json);
    let test = &r["tests"][0];
    assert_eq!(test["counts"]["completed"], 30000);
    assert_eq!(test["counts"]["errors"], 0);
    assert_eq!(
        test["counts"]["redirects"], 0,
        "a settled cluster redirects nothing"
    );
    let nodes = nodes_of(test);
    assert_eq!(nodes.len(), 3);
    let stats = cluster.commandstats();
    for (i, server) in cluster.nodes.iter().enumerate() {
        let seen = stats[i].get("set").copied().unwrap_or(0);
        let (_, sent) = nodes
            .iter()
            .find(|(addr, _)| *addr == server.addr())
            .unwrap_or_else(|| panic!("{} not in {nodes:?}", server.addr()));
        assert_eq!(
            seen,
            *sent,
            "node {}: the server counted {seen} SETs, tailrate says it sent {sent}",
            server.addr()
        );
        // Uniform keys over slots split into thirds: each master's share is 1/3 give or
        // take the binomial spread (sd 0.3% here); 28-39% fails only on wrong routing.
        let share = seen as f64 / 30000.0;
        assert!(
            (0.28..0.39).contains(&share),
            "node {} took {:.1}% of the requests",
            server.addr(),
            share * 100.0
        );
    }
    // The server's view adds the three masters' counters: together they executed
    // every SET, and the count check passed.
    let set = &test["server"]["commands"][0];
    assert_eq!(
        (set["calls"].as_u64(), set["sent_by_tailrate"].as_u64()),
        (Some(30000), Some(30000)),
        "{set}"
    );
    let count = crate::harness::find_check(test, "server_count");
    assert_eq!(
        count.map(|c| c["verdict"].clone()),
        Some("pass".into()),
        "{}",
        test["checks"]
    );
    assert!(
        test["server"]["cpu_secs"].as_f64().unwrap() > 0.0,
        "{}",
        test["server"]
    );
    // --workers batches per connection and does not route: refused, with the reason.
    let out = run_tailrate(&[
        "-p",
        &port,
        "--workers",
        "8",
        "-c",
        "2",
        "-t",
        "get",
        "-n",
        "100",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr_of(&out));
    assert!(
        stderr_of(&out).contains("--workers") && stderr_of(&out).contains("cluster"),
        "{}",
        stderr_of(&out)
    );
}

#[test]
fn slots_migrated_during_a_run_are_followed_with_no_failed_request() {
    let cluster = RedisCluster::start(3);
    let dir = tempfile::tempdir().unwrap();
    let port = cluster.nodes[1].port().to_string();
    // Open loop, then closed loop, each while 500 slots (with their keys) move between
    // masters: every request must complete, the moves showing only as redirects.
    let runs: [(&str, &[&str], usize, usize); 2] = [
        (
            "open",
            &["--rate", "3000", "--duration", "8s", "--warmup", "1s"],
            0,
            1,
        ),
        ("closed", &["--duration", "8s", "-c", "4", "-P", "4"], 1, 0),
    ];
    for (name, flags, from, to) in runs {
        let json = dir.path().join(format!("{name}.json"));
        let mut args: Vec<String> = [
            "-p",
            &port,
            "-t",
            "set,get",
            "-r",
            "20000",
            "--cluster",
            "--json",
            json.to_str().unwrap(),
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        args.extend(flags.iter().map(|s| s.to_string()));
        let started = Instant::now();
        let run = std::thread::spawn(move || {
            let refs: Vec<&str> = args.iter().map(String::as_str).collect();
            let out = run_tailrate(&refs);
            (out, Instant::now())
        });
        std::thread::sleep(Duration::from_millis(2500));
        let before = cluster.slots_of(from);
        cluster.reshard(from, to, 500);
        let resharded = Instant::now();
        let (out, finished) = run.join().unwrap();
        assert_success(&out);
        assert_eq!(
            cluster.slots_of(from),
            before - 500,
            "{name}: the reshard moved the slots"
        );
        assert!(
            resharded < finished,
            "{name}: the reshard ({:?}) must end before the run ({:?})",
            resharded - started,
            finished - started
        );
        let r = report(&json);
        for test in r["tests"].as_array().unwrap() {
            let c = &test["counts"];
            let label = format!("{name} {}: {c}", test["name"]);
            assert_eq!(c["errors"], 0, "{label}");
            assert_eq!(c["timeouts"], 0, "{label}");
            assert_eq!(c["not_sent"], 0, "{label}");
            assert_eq!(c["in_flight_at_end"], 0, "{label}");
            assert_eq!(c["completed"], c["intended"], "{label}");
            assert!(c["completed"].as_u64().unwrap() > 1000, "{label}");
        }
        let redirects: u64 = r["tests"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["counts"]["redirects"].as_u64().unwrap())
            .sum();
        let moved_ask: Vec<(u64, u64)> = r["tests"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|t| {
                t["nodes"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|n| (n["moved"].as_u64().unwrap(), n["ask"].as_u64().unwrap()))
            })
            .collect();
        eprintln!("{name}: {redirects} redirects; (moved, ask) per test and node: {moved_ask:?}");
        assert!(
            redirects > 0,
            "{name}: requests to the moved slots were redirected at least once"
        );
        let per_node: u64 = r["tests"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|t| {
                t["nodes"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|n| n["moved"].as_u64().unwrap() + n["ask"].as_u64().unwrap())
            })
            .sum();
        assert_eq!(
            per_node, redirects,
            "{name}: every redirect is counted at the node that gave it"
        );
    }
}

/// A run keeps places for masters it may learn (replicas promoted, masters added: twice
/// the starting masters and four), and makes room for their connections in the
/// open-file limit before it starts, not only for the starting masters': else each
/// connect to a learned master fails with "too many open files". With 3 masters and
/// `-c 40`, a soft limit of 300 holds the starting connections (about 190 descriptors)
/// but not those of 10 masters (about 480), so it must be raised.
#[test]
fn a_cluster_run_makes_room_in_the_open_file_limit_for_masters_it_may_learn() {
    // "Max open files  SOFT  HARD  files", either of them perhaps "unlimited".
    let open_files = |limits: &str, column: usize| {
        let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
        match line.split_whitespace().nth(column)? {
            "unlimited" => Some(u64::MAX),
            n => n.parse::<u64>().ok(),
        }
    };
    let hard = open_files(&std::fs::read_to_string("/proc/self/limits").unwrap(), 4);
    if hard.is_some_and(|h| h < 1000) {
        skip(
            &crate::harness::this_test(),
            &format!("the hard open-file limit here is {hard:?}, too low to raise past 480"),
        );
        return;
    }
    let cluster = RedisCluster::start(3);
    let port = cluster.nodes[0].port().to_string();
    let bin = crate::harness::tailrate_bin();
    let child = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -Sn 300 && exec '{}' -p {port} -t get -c 40 --rate 1000 --duration 3s --no-progress -q",
            bin.display()
        ))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let limits = format!("/proc/{}/limits", child.id());
    // The limit is raised once the layout is read, before the test's connections open.
    let deadline = Instant::now() + Duration::from_secs(2);
    let mut soft = None;
    while Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
        soft = std::fs::read_to_string(&limits)
            .ok()
            .and_then(|t| open_files(&t, 3));
        if soft.is_some_and(|s| s > 480) {
            break;
        }
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert!(
        soft.is_some_and(|s| s > 480),
        "soft open-file limit {soft:?} during the run (started at 300)"
    );
}

#[test]
fn cluster_against_a_standalone_server_is_a_clear_error() {
    let server = RedisServer::start();
    let port = server.port().to_string();
    let out = run_tailrate(&["-p", &port, "--cluster", "-t", "get", "-n", "10"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr_of(&out));
    let err = stderr_of(&out);
    assert!(
        err.contains("--cluster") && err.contains("not in cluster mode"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    // Without --cluster the same server is simply benchmarked.
    let out = run_tailrate(&["-p", &port, "-t", "get", "-n", "10", "-q"]);
    assert!(!assert_success(&out).contains("per cluster node"));
}

/// A one-node fake cluster on 127.0.0.1 that serves every slot and answers every other
/// command `+OK`, but reports its layout as `shards` (a `CLUSTER SHARDS` slot list) and
/// `slots` (`CLUSTER SLOTS` ranges); `None` answers the command with an error, as Redis
/// before 7 does for `CLUSTER SHARDS`. Only a fake can give a layout that is not the
/// cluster's. Its threads end when the test process does; each connection's reads time
/// out after 30 s.
fn fake_cluster_node(shards: Option<Vec<i64>>, slots: Option<Vec<(i64, i64)>>) -> u16 {
    use std::io::{BufReader, Write};
    use std::net::TcpListener;

    use crate::harness::{Reply, read_reply};

    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let bulk = |s: &str| format!("${}\r\n{s}\r\n", s.len());
    let node = format!(
        "*6\r\n{}{}{}:{port}\r\n{}{}",
        bulk("ip"),
        bulk("127.0.0.1"),
        bulk("port"),
        bulk("role"),
        bulk("master")
    );
    let shards = shards.map(|list| {
        let items: String = list.iter().map(|s| format!(":{s}\r\n")).collect();
        format!(
            "*1\r\n*4\r\n{}*{}\r\n{items}{}*1\r\n{node}",
            bulk("slots"),
            list.len(),
            bulk("nodes")
        )
    });
    let slots = slots.map(|ranges| {
        let items: String = ranges
            .iter()
            .map(|(a, b)| {
                format!(
                    "*3\r\n:{a}\r\n:{b}\r\n*2\r\n{}:{port}\r\n",
                    bulk("127.0.0.1")
                )
            })
            .collect();
        format!("*{}\r\n{items}", ranges.len())
    });
    std::thread::spawn(move || {
        for stream in listener.incoming().take(64) {
            let Ok(stream) = stream else { continue };
            let (shards, slots) = (shards.clone(), slots.clone());
            std::thread::spawn(move || {
                let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
                let mut reader = BufReader::new(&stream);
                let mut out = &stream;
                while let Ok(Reply::Array(argv)) = read_reply(&mut reader) {
                    let words: Vec<String> = argv
                        .iter()
                        .map(|a| a.to_string().to_ascii_uppercase())
                        .collect();
                    let words: Vec<&str> = words.iter().map(String::as_str).collect();
                    let answer = match words.as_slice() {
                        ["INFO", "SERVER", ..] => bulk("redis_version:7.0.0\r\n"),
                        ["INFO", "CLUSTER", ..] => bulk("cluster_enabled:1\r\n"),
                        ["CONFIG", ..] => "*0\r\n".to_string(),
                        ["CLUSTER", "SHARDS"] => shards
                            .clone()
                            .unwrap_or_else(|| "-ERR unknown subcommand\r\n".into()),
                        ["CLUSTER", "SLOTS"] => slots
                            .clone()
                            .unwrap_or_else(|| "-ERR unknown subcommand\r\n".into()),
                        _ => "+OK\r\n".to_string(),
                    };
                    if out.write_all(answer.as_bytes()).is_err() {
                        break;
                    }
                }
            });
        }
    });
    port
}

/// Runs 2000 SETs against the fake node at `port`: every one completes, exit 0. Returns
/// stderr (the notes).
fn every_set_completes(port: u16) -> String {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let out = run_tailrate(&[
        "-p",
        &port.to_string(),
        "-t",
        "set",
        "-n",
        "2000",
        "-r",
        "100000",
        "-q",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_success(&out);
    let test = &report(&json)["tests"][0];
    assert_eq!(
        test["counts"]["completed"], 2000,
        "every request completes: {}",
        test["counts"]
    );
    stderr_of(&out)
}

#[test]
fn cluster_notes_tell_what_happens_with_backwards_and_partial_slot_ranges() {
    // A range given backwards is the slots between its ends: no slot lacks a master.
    for (shards, slots) in [(Some(vec![16383, 0]), None), (None, Some(vec![(16383, 0)]))] {
        let notes = every_set_completes(fake_cluster_node(shards, slots));
        assert!(!notes.contains("have no master"), "{notes}");
        assert!(notes.contains("ran backwards"), "{notes}");
    }
    // A layout that leaves slots out: their requests go to the node, which serves them.
    let port = fake_cluster_node(Some(vec![0, 99]), None);
    let notes = every_set_completes(port);
    assert!(
        notes.contains(
            "16284 of the cluster's 16384 slots have no master in the layout CLUSTER SHARDS gave"
        ) && notes.contains(&format!("sent to 127.0.0.1:{port}")),
        "{notes}"
    );
    assert!(!notes.contains("fail"), "no failure is foretold: {notes}");
}

/// Reads `sent`, `completed` of each node in a test's per-node results, by address.
fn node_counts(test: &Value) -> std::collections::BTreeMap<String, (u64, u64)> {
    test["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            (
                n["node"].as_str().unwrap().to_string(),
                (
                    n["sent"].as_u64().unwrap(),
                    n["completed"].as_u64().unwrap(),
                ),
            )
        })
        .collect()
}

/// Every intended request ended one way or another, or was still in flight.
fn assert_accounted(label: &str, c: &Value) {
    let n = |k: &str| c[k].as_u64().unwrap();
    assert_eq!(
        n("intended"),
        n("completed") + n("errors") + n("timeouts") + n("not_sent") + n("in_flight_at_end"),
        "{label}: {c}"
    );
}

/// The latest a slot move may end, from the spawn of the 12 s run, for the new master's
/// traffic to show.
const LATEST_MOVE: Duration = Duration::from_millis(10_500);

#[test]
fn a_master_added_during_a_run_receives_traffic() {
    let mut cluster = RedisCluster::start_with(3, 0, 1, 5000);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let port = cluster.nodes[0].port().to_string();
    let args: Vec<String> = [
        "-p",
        &port,
        "--cluster",
        "-t",
        "get",
        "-r",
        "100000",
        "--rate",
        "2000",
        "--duration",
        "12s",
        "--warmup",
        "0s",
        "-c",
        "2",
        "--json",
        json.to_str().unwrap(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let run = std::thread::spawn(move || {
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        run_tailrate(&refs)
    });
    let spawned = Instant::now();
    std::thread::sleep(Duration::from_millis(1500));
    let added = cluster.add_node(0, 0);
    // GETs of missing keys: the slots move with no keys, in a second or two (on a
    // loaded host add-node and reshard took up to 8 s).
    cluster.reshard(0, added, 50);
    let moved_at = spawned.elapsed();
    let out = run.join().unwrap();
    eprintln!("add-node and reshard done {moved_at:?} after the spawn");
    if moved_at > LATEST_MOVE {
        skip(
            "cluster::a_master_added_during_a_run_receives_traffic",
            &format!("add-node and reshard ended {moved_at:?} into the run, past {LATEST_MOVE:?}"),
        );
        return;
    }
    assert_success(&out);
    let r = report(&json);
    let test = &r["tests"][0];
    let c = &test["counts"];
    assert_accounted("add-node", c);
    assert_eq!(
        (c["errors"].as_u64(), c["not_sent"].as_u64()),
        (Some(0), Some(0)),
        "{c}"
    );
    let new_addr = cluster.nodes[added].addr();
    let nodes = node_counts(test);
    let (sent, completed) = nodes.get(&new_addr).copied().unwrap_or_default();
    assert!(
        sent > 0 && completed > 0,
        "the added master {new_addr} got no traffic: {nodes:?}"
    );
    let changes = test["layout_changes"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(
        changes.iter().any(|ch| ch["to"] == new_addr.as_str()),
        "the slots' move to {new_addr} is reported: {changes:?}"
    );
    // What the servers executed is what tailrate says completed, node by node.
    for server in &cluster.nodes {
        let calls = server.commandstats().get("get").copied().unwrap_or(0);
        let (_, completed) = nodes.get(&server.addr()).copied().unwrap_or_default();
        assert_eq!(
            calls,
            completed,
            "{}: server calls against tailrate's",
            server.addr()
        );
    }
}

mod timing {
    //! A failover and a killed master under an open and a closed loop: the run goes
    //! on, the redirects are followed, every slot reaches its new master, and the
    //! servers executed what tailrate says completed.

    use std::time::{Duration, Instant};

    use super::{assert_accounted, node_counts, report};
    use crate::harness::cluster::RedisCluster;
    use crate::harness::{assert_success, run_tailrate, skip};

    /// A closed loop's client claims each batch on its lead connection, its first one
    /// up: the lowest-addressed master's. Here that master dies just after the client's
    /// last reply came on another master (tailrate is stopped while it is killed, so
    /// the reply and the close come in one turn). The client must be woken on its next
    /// lead: when the close won the lead's wait, the wake-up was lost, and a client
    /// with nothing in flight sent nothing for the rest of the run. One client, so a
    /// stalled client is a stalled run. (Without the wake-up this failed in five runs
    /// in six here: the stop has to fall between two batches.)
    #[test]
    fn a_closed_loop_whose_lead_master_dies_between_two_batches_goes_on() {
        let name =
            "cluster::timing::a_closed_loop_whose_lead_master_dies_between_two_batches_goes_on";
        let mut cluster = RedisCluster::start_with(3, 1, 0, 1000);
        let masters: Vec<usize> = (0..cluster.nodes.len())
            .filter(|&i| cluster.is_master(i))
            .collect();
        let lead = *masters
            .iter()
            .min_by_key(|&&i| cluster.nodes[i].port())
            .expect("masters");
        let replica = cluster.replica_of(lead).expect("the lead master's replica");
        let seed = *masters
            .iter()
            .find(|&&i| i != lead)
            .expect("another master");
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("closed.json");
        let port = cluster.nodes[seed].port().to_string();
        let spawned = Instant::now();
        let child = std::process::Command::new(crate::harness::tailrate_bin())
            .args([
                "-p",
                &port,
                "--cluster",
                "-t",
                "get",
                "-r",
                "100000",
                "--duration",
                "6s",
                "-c",
                "1",
                "--lost-server-wait",
                "20s",
                "-q",
                "--json",
                json.to_str().unwrap(),
            ])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let pid = child.id().to_string();
        let signal = |sig: &str| {
            let status = std::process::Command::new("kill")
                .args([sig, &pid])
                .status()
                .unwrap();
            assert!(status.success(), "kill {sig} {pid}");
        };
        std::thread::sleep(Duration::from_millis(1500));
        signal("-STOP");
        cluster.nodes[lead].kill();
        std::thread::sleep(Duration::from_millis(50));
        signal("-CONT");
        let promoted = cluster.wait_master(replica, PROMOTION_LIMIT);
        let promoted_at = spawned.elapsed();
        let out = child.wait_with_output().unwrap();
        // A promotion that leaves under 1.5 s of the 6 s run cannot show the new
        // master's traffic.
        if promoted.is_none() || promoted_at > Duration::from_millis(4500) {
            skip(
                name,
                &format!("no promotion in time: {promoted:?}, {promoted_at:?} after the spawn"),
            );
            return;
        }
        assert_success(&out);
        let test = &report(&json)["tests"][0];
        let new_master = cluster.nodes[replica].addr();
        let (sent, completed) = node_counts(test)
            .get(&new_master)
            .copied()
            .unwrap_or_default();
        assert!(
            sent > 0 && completed > 0,
            "the client stalled: the new master {new_master} (promoted {promoted_at:?} after the spawn) got no traffic: {:?}\n{}",
            node_counts(test),
            test["counts"]
        );
    }

    /// How long a replica may take to take over from a killed master with a 1 s node
    /// timeout (about 2 s measured here); past this the test cannot check and skips.
    const PROMOTION_LIMIT: Duration = Duration::from_secs(8);
    /// How long after a promotion tailrate may take to report the new master: one
    /// layout read every 100 ms while a master is unreachable, plus a loaded host's
    /// stalls (measured under 0.5 s).
    const FOLLOW_LIMIT_SECS: f64 = 2.5;
    /// The latest promotion, from the run's spawn, that leaves the 9 s run time to send
    /// the new master traffic.
    const LATEST_PROMOTION: Duration = Duration::from_millis(7500);

    #[test]
    fn a_failover_then_a_killed_master_are_followed_by_the_open_and_the_closed_loop() {
        let name = "cluster::timing::a_failover_then_a_killed_master_are_followed_by_the_open_and_the_closed_loop";
        let mut cluster = RedisCluster::start_with(3, 1, 0, 1000);
        let dir = tempfile::tempdir().unwrap();
        let loops: [(&str, &[&str]); 2] = [
            ("open", &["--rate", "2000", "--warmup", "0s", "-c", "2"]),
            ("closed", &["-c", "2", "--lost-server-wait", "20s"]),
        ];
        for (mode, flags) in loops {
            // Two shards that still have a replica: one fails over, the other loses its
            // master.
            let masters: Vec<usize> = (0..cluster.nodes.len())
                .filter(|&i| cluster.is_master(i))
                .collect();
            let shards: Vec<(usize, usize)> = masters
                .into_iter()
                .filter_map(|m| Some((m, cluster.replica_of(m)?)))
                .collect();
            assert!(
                shards.len() >= 2,
                "{mode}: shards with replicas: {shards:?}"
            );
            let ((a_master, a_replica), (b_master, b_replica)) = (shards[0], shards[1]);
            for n in cluster.nodes.iter().filter(|n| n.child_running()) {
                n.reset_stats();
            }
            let json = dir.path().join(format!("{mode}.json"));
            let port = cluster.nodes[a_master].port().to_string();
            let mut args: Vec<String> = [
                "-p",
                &port,
                "--cluster",
                "-t",
                "get",
                "-r",
                "100000",
                "--duration",
                "9s",
                "--json",
                json.to_str().unwrap(),
            ]
            .iter()
            .map(|s| s.to_string())
            .collect();
            args.extend(flags.iter().map(|s| s.to_string()));
            let spawned = Instant::now();
            let run = std::thread::spawn(move || {
                let refs: Vec<&str> = args.iter().map(String::as_str).collect();
                run_tailrate(&refs)
            });
            std::thread::sleep(Duration::from_millis(1500));
            cluster.nodes[a_replica].cmd(&["CLUSTER", "FAILOVER"]);
            let failed_over = cluster.wait_master(a_replica, PROMOTION_LIMIT);
            std::thread::sleep(Duration::from_millis(3500).saturating_sub(spawned.elapsed()));
            // A killed master's last counts are read just before it dies; it answers a
            // few more requests after.
            let killed_addr = cluster.nodes[b_master].addr();
            let before_kill = cluster.nodes[b_master]
                .commandstats()
                .get("get")
                .copied()
                .unwrap_or(0);
            cluster.nodes[b_master].kill();
            let promoted = cluster.wait_master(b_replica, PROMOTION_LIMIT);
            let promoted_at = spawned.elapsed();
            let out = run.join().unwrap();
            // A promotion that leaves under 1.5 s of the 9 s run cannot show the new
            // master's traffic.
            let (Some(_), Some(_), true) = (failed_over, promoted, promoted_at < LATEST_PROMOTION)
            else {
                skip(
                    name,
                    &format!(
                        "{mode}: no promotion within {PROMOTION_LIMIT:?} (failover {failed_over:?}, after the kill {promoted:?})"
                    ),
                );
                return;
            };
            let text = assert_success(&out);
            let r = report(&json);
            let test = &r["tests"][0];
            let c = &test["counts"];
            let label = format!("{mode}: {c}");
            assert_accounted(&label, c);
            assert!(c["completed"].as_u64().unwrap() > 1000, "{label}");
            assert!(
                c["redirects"].as_u64().unwrap() > 0,
                "{label}: the failover redirected"
            );
            // While the cluster misses a master it answers CLUSTERDOWN, and requests in
            // flight on the killed master fail with their connection; redirects are
            // never errors.
            for (kind, _) in c["errors_by_kind"].as_object().unwrap() {
                assert!(
                    kind == "CLUSTERDOWN" || kind.starts_with("connection_"),
                    "{label}: error kind {kind}"
                );
            }
            if mode == "open" {
                assert_eq!(
                    c["not_sent"], 0,
                    "{label}: the killed master's arrivals moved on"
                );
            }
            let a = (
                cluster.nodes[a_master].addr(),
                cluster.nodes[a_replica].addr(),
            );
            let b = (killed_addr.clone(), cluster.nodes[b_replica].addr());
            let changes = test["layout_changes"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            let change_to = |(from, to): &(String, String)| {
                changes
                    .iter()
                    .find(|ch| ch["from"] == from.as_str() && ch["to"] == to.as_str())
                    .and_then(|ch| ch["at_secs"].as_f64())
            };
            let a_at = change_to(&a);
            let b_at = change_to(&b);
            eprintln!(
                "{mode}: failover seen at {a_at:?} s, kill's promotion at {:.2} s after spawn, seen at {b_at:?} s",
                promoted_at.as_secs_f64()
            );
            assert!(a_at.is_some() && b_at.is_some(), "{mode}: {changes:?}");
            // Times in the report count from tailrate's start, after the spawn.
            assert!(
                b_at.unwrap() <= promoted_at.as_secs_f64() + FOLLOW_LIMIT_SECS,
                "{mode}: the promotion at {promoted_at:?} was seen at {b_at:?} s"
            );
            assert!(text.contains("layout changed at "), "{text}");
            let nodes = node_counts(test);
            for new_master in [&a.1, &b.1] {
                let (sent, completed) = nodes.get(new_master).copied().unwrap_or_default();
                assert!(
                    sent > 0 && completed > 0,
                    "{mode}: the new master {new_master} got no traffic: {nodes:?}\n{label}\nlayout changes: {changes:?}\n{text}"
                );
            }
            // Every node alive executed exactly what tailrate says it completed there;
            // the killed one had executed, before it died, no more than tailrate saw end
            // there.
            let mut total = 0;
            for server in cluster.nodes.iter().filter(|n| n.child_running()) {
                let calls = server.commandstats().get("get").copied().unwrap_or(0);
                let (_, completed) = nodes.get(&server.addr()).copied().unwrap_or_default();
                assert_eq!(
                    calls,
                    completed,
                    "{mode}: {} calls against completed",
                    server.addr()
                );
                total += completed;
            }
            let (_, killed_completed) = nodes.get(&killed_addr).copied().unwrap_or_default();
            // The server counts a command when it executes it and sends the reply later in
            // its event loop, so a request executed just before the last reading may have
            // died with the master unanswered: then it failed on tailrate's connection.
            let killed_errors = test["nodes"]
                .as_array()
                .unwrap()
                .iter()
                .find(|n| n["node"] == killed_addr.as_str())
                .and_then(|n| n["errors"].as_u64())
                .unwrap_or(0);
            assert!(
                killed_completed + killed_errors >= before_kill,
                "{mode}: {killed_completed} completed and {killed_errors} failed < {before_kill} executed"
            );
            assert_eq!(
                total + killed_completed,
                c["completed"].as_u64().unwrap(),
                "{mode}"
            );
        }
    }
}
