//! A server that turns connections away (Redis at `--maxclients`: it writes
//! `-ERR max number of clients reached` as soon as it accepts, then closes): every mode
//! and every way of connecting ends with exit 1 and the server's own words, never as a
//! protocol error or a run of anonymous errors.

use super::*;

/// What Redis says to a connection past `maxclients`.
const FULL: &str = "turned the connection away: ERR max number of clients reached";

/// Runs tailrate with `args` and `--json`; asserts exit 1 with the server's words as the
/// one error line, and returns the report's first test when the run got as far as one
/// (a refusal while connecting ends it before).
fn turned_away(what: &str, args: &[&str]) -> Option<Value> {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let mut all = args.to_vec();
    all.extend(["--no-progress", "--json", json.to_str().unwrap()]);
    let run = run(&all);
    run.assert_no_panic();
    assert_eq!(run.code, Some(1), "{what}: exit 1\n{}", run.stderr);
    let line = error_line(&run);
    assert!(line.contains(FULL), "{what}: {line}");
    assert!(
        !run.stderr.contains("protocol error"),
        "{what}: {}",
        run.stderr
    );
    if !json.exists() {
        return None;
    }
    let test = read_json(&json)["tests"][0].clone();
    assert_balanced(&test);
    assert!(
        test["stopped_early"]
            .as_str()
            .is_some_and(|s| s.contains(FULL)),
        "{what}: the report says why it stopped: {}",
        test["stopped_early"]
    );
    Some(test)
}

#[test]
fn a_server_at_maxclients_is_named_in_its_own_words_in_closed_loop_open_loop_and_sweep() {
    let server = RedisServer::builder().arg("--maxclients", "5").start();
    let port = server.port().to_string();
    let p = ["-p", port.as_str(), "-c", "6", "-t", "get"];

    for pipeline in ["1", "16"] {
        let mut args = p.to_vec();
        args.extend(["-n", "20000", "-P", pipeline, "-q"]);
        let test = turned_away(&format!("closed loop -P {pipeline}"), &args)
            .expect("the connections open before the server's words are read");
        assert!(
            error_kind(&test, "connection_turned_away") + error_kind(&test, "ERR") > 0,
            "{}",
            test["counts"]
        );
    }

    let mut args = p.to_vec();
    args.extend(["--rate", "1000", "--duration", "2s", "-q"]);
    turned_away("open loop", &args);

    let out = tempfile::tempdir().unwrap();
    let swept = run(&[
        "sweep",
        "-p",
        &port,
        "-c",
        "6",
        "-t",
        "get",
        "--rates",
        "1000,2000",
        "--duration",
        "1s",
        "--no-progress",
        "--out",
        out.path().to_str().unwrap(),
    ]);
    swept.assert_no_panic();
    assert_eq!(swept.code, Some(1), "sweep: {}", swept.stderr);
    assert!(error_line(&swept).contains(FULL), "sweep: {}", swept.stderr);

    // A server full before tailrate comes: its first connection, the one that asks the
    // server about itself, is the one turned away.
    let held: Vec<TcpStream> = (0..5)
        .map(|_| TcpStream::connect(server.addr()).unwrap())
        .collect();
    thread::sleep(Duration::from_millis(100));
    let full = run(&["-p", &port, "-c", "1", "-n", "100", "-t", "get", "-q"]);
    full.assert_no_panic();
    assert_eq!(full.code, Some(1), "full server: {}", full.stderr);
    assert!(
        error_line(&full).contains(FULL),
        "full server: {}",
        full.stderr
    );
    assert!(!full.stderr.contains("note:"), "no notes: {}", full.stderr);
    drop(held);
}

#[test]
fn a_server_at_maxclients_is_named_in_its_own_words_over_auth_and_a_unix_socket() {
    let dir = tempfile::tempdir().unwrap();
    let sock = dir.path().join("redis.sock");
    let server = RedisServer::builder()
        .arg("--maxclients", "5")
        .arg("--requirepass", "pw")
        .arg("--unixsocket", sock.to_str().unwrap())
        .start();
    let port = server.port().to_string();
    // The refusal is read as the reply to AUTH: it is the server's words, not a refused
    // password.
    let args = [
        "-p", &port, "-a", "pw", "-c", "6", "-n", "20000", "-t", "get", "-q",
    ];
    turned_away("with AUTH", &args);
    let again = run(&args);
    assert!(!again.stderr.contains("refused AUTH"), "{}", again.stderr);

    turned_away(
        "unix socket",
        &[
            "-s",
            sock.to_str().unwrap(),
            "-a",
            "pw",
            "-c",
            "6",
            "--rate",
            "1000",
            "--duration",
            "2s",
            "-t",
            "get",
            "-q",
        ],
    );
}
