//! Integration tests for `tailrate`: one test binary, one module per area.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;

mod allocations;
mod budget;
mod capacity_truth;
mod cli;
mod closed_loop;
mod cluster;
mod compare;
mod confidence;
mod deploy;
mod docs;
mod errors;
mod help;
mod host;
mod hostile_files;
mod html;
mod intervals;
mod layers;
mod limits;
mod metrics;
mod mutations;
mod objectives;
mod open_loop;
mod output;
mod outputs;
mod panel;
mod plots;
mod proxy;
mod reliability;
mod replay;
mod report;
mod server_view;
mod shard;
mod signals;
mod slurm;
mod stall;
mod sweep;
mod tls;
mod tune;
mod verdicts;
mod workers;
mod workload;

/// Checks that the harness itself works: a server starts, answers, counts
/// commands, restarts on the same port, and goes away on drop.
mod harness_smoke {
    use super::harness::{RedisServer, free_port, redis_benchmark_bin, send_command, tailrate_bin};

    #[test]
    fn server_starts_answers_and_counts_commands() {
        let server = RedisServer::builder().arg("--hz", "100").start();
        assert_ne!(server.port(), 0);
        assert_eq!(server.addr(), format!("127.0.0.1:{}", server.port()));
        assert_eq!(server.cmd(&["PING"]), "PONG");
        assert_eq!(server.cmd(&["SET", "k", "v"]), "OK");
        assert_eq!(server.cmd(&["GET", "k"]), "v");
        assert_eq!(server.cmd(&["GET", "missing"]), "(nil)");
        assert_eq!(server.cmd(&["INCR", "n"]), "1");
        assert!(server.cmd(&["NOSUCHCMD"]).starts_with("(error) ERR"));
        assert_eq!(server.config_get("hz"), "100");
        assert_eq!(server.config_get("save"), "");
        let stats = server.commandstats();
        assert_eq!(stats.get("set"), Some(&1));
        assert_eq!(stats.get("get"), Some(&2));
        assert!(
            server
                .info("server")
                .contains(&format!("process_id:{}", server.pid()))
        );
    }

    #[test]
    fn restart_same_port_gives_a_fresh_server() {
        let mut server = RedisServer::start();
        let port = server.port();
        let first_pid = server.pid();
        server.cmd(&["SET", "k", "v"]);
        server.kill();
        assert!(send_command(&server.addr(), &["PING"]).is_err());
        server.restart_same_port();
        assert_eq!(server.port(), port);
        assert_ne!(server.pid(), first_pid);
        assert_eq!(server.cmd(&["GET", "k"]), "(nil)");
        server.restart_same_port();
        assert_eq!(server.cmd(&["PING"]), "PONG");
    }

    #[test]
    fn drop_kills_the_server() {
        let addr = {
            let server = RedisServer::start();
            server.addr()
        };
        assert!(send_command(&addr, &["PING"]).is_err());
    }

    #[test]
    fn helpers_find_things() {
        assert_ne!(free_port(), 0);
        assert!(tailrate_bin().is_file());
        if let Some(bench) = redis_benchmark_bin() {
            assert!(bench.is_file());
        }
    }
}
