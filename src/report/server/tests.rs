//! Unit tests of the server's view: parsing, differences and the merged view.

#![allow(clippy::unwrap_used)]
use super::view::{difference, percentiles};
use super::*;
use crate::resp::Reply;

#[test]
fn commandstats_lines_parse_and_unknown_fields_are_ignored() {
    let text = "# Commandstats\r\ncmdstat_get:calls=2238545,usec=277292,usec_per_call=0.12,rejected_calls=3,failed_calls=0\r\ncmdstat_config|get:calls=40,usec=197\r\n";
    let stats = parse_commandstats(text);
    assert_eq!(
        stats["get"],
        CommandCounters {
            calls: 2238545,
            usec: 277292,
            rejected_calls: 3
        }
    );
    assert_eq!(stats["config|get"].calls, 40);
}

#[test]
fn cpu_is_system_plus_user_without_children() {
    let text = "# CPU\r\nused_cpu_sys:15.5\r\nused_cpu_user:2.5\r\nused_cpu_sys_children:9.0\r\nused_cpu_user_children:9.0\r\n";
    assert_eq!(parse_cpu_secs(text), Some(18.0));
    assert_eq!(parse_cpu_secs("# CPU\r\n"), None);
}

fn histogram_reply(calls: i64, buckets: &[(i64, i64)]) -> Reply {
    let flat = buckets
        .iter()
        .flat_map(|&(b, c)| [Reply::Integer(b), Reply::Integer(c)])
        .collect();
    Reply::Array(vec![
        Reply::Bulk(b"get".to_vec()),
        Reply::Array(vec![
            Reply::Bulk(b"calls".to_vec()),
            Reply::Integer(calls),
            Reply::Bulk(b"histogram_usec".to_vec()),
            Reply::Array(flat),
        ]),
    ])
}

#[test]
fn two_histogram_readings_subtract_to_the_calls_between_them() {
    let before = parse_latency_histogram(&histogram_reply(10, &[(1, 8), (2, 10)])).unwrap();
    // Since then: 90 calls at <= 1 µs, 9 at <= 2, 1 at <= 1024 (a bound new since).
    let after =
        parse_latency_histogram(&histogram_reply(110, &[(1, 98), (2, 109), (1024, 110)])).unwrap();
    assert_eq!(
        difference(&before["get"], &after["get"]),
        vec![(1, 90), (2, 9), (1024, 1)]
    );
    let p = percentiles(&difference(&before["get"], &after["get"])).unwrap();
    assert_eq!((p.p50, p.p90, p.p99, p.p99_9), (1, 1, 2, 1024));
}

#[test]
fn a_view_counts_calls_and_rejections_and_names_what_is_missing() {
    let reading = |calls, usec, rejected, cpu| Reading {
        commands: Some(BTreeMap::from([(
            "set".to_string(),
            CommandCounters {
                calls,
                usec,
                rejected_calls: rejected,
            },
        )])),
        cpu_secs: Some(cpu),
        latency: None,
        missing: vec!["LATENCY HISTOGRAM: unknown command".into()],
        run_ids: vec!["b".into(), "a".into()],
        process_ids: Vec::new(),
    };
    let v = view(
        &reading(5, 50, 0, 1.0),
        &reading(105, 1050, 2, 1.5),
        2.0,
        &[("SET".into(), 102)],
    );
    assert_eq!(v.commands[0].calls, 102);
    assert_eq!(v.commands[0].mean_exec_usec, Some(10.0));
    assert_eq!(v.commands[0].exec_usec_at_most, None);
    assert_eq!((v.cpu_secs, v.cpu_utilisation), (Some(0.5), Some(0.25)));
    assert_eq!(
        v.missing,
        vec!["LATENCY HISTOGRAM: unknown command".to_string()]
    );
}

/// A reading of server `run_id` at `at` (Unix seconds): GET's calls and usec, the
/// CPU, and GET's cumulative histogram.
fn reading(run_id: &str, calls: u64, usec: u64, cpu: f64, histogram: &[(u64, u64)]) -> Reading {
    Reading {
        commands: Some(BTreeMap::from([(
            "get".to_string(),
            CommandCounters {
                calls,
                usec,
                rejected_calls: 0,
            },
        )])),
        cpu_secs: Some(cpu),
        latency: Some(BTreeMap::from([("get".to_string(), histogram.to_vec())])),
        missing: Vec::new(),
        run_ids: vec![run_id.into()],
        process_ids: Vec::new(),
    }
}

/// A shard's view of `sent` GETs, with its readings kept.
fn shard(sent: u64, at: (f64, f64), before: Reading, after: Reading) -> ServerView {
    let mut v = view(&before, &after, at.1 - at.0, &[("GET".into(), sent)]);
    v.kept = Some(Box::new(KeptReadings {
        before_unix_secs: at.0,
        after_unix_secs: at.1,
        before,
        after,
    }));
    v
}

#[test]
fn shards_readings_give_the_view_from_the_earliest_before_to_the_latest_after() {
    // Shard 0 read at t=100 s and 102 s, shard 1 at 100.5 s and 103 s: the view is
    // of 100..103 s, each shard's own view counting some of the other's calls.
    let a = shard(
        80,
        (100.0, 102.0),
        reading("r1", 10, 100, 1.0, &[(1, 8), (2, 10)]),
        reading("r1", 150, 1500, 1.5, &[(1, 140), (2, 148), (4, 150)]),
    );
    let b = shard(
        80,
        (100.5, 103.0),
        reading("r1", 40, 400, 1.1, &[(1, 38), (2, 40)]),
        reading("r1", 170, 1700, 1.6, &[(1, 158), (2, 168), (4, 170)]),
    );
    let v = merged_view(&[&a, &b]).unwrap();
    let get = &v.commands[0];
    assert_eq!((get.calls, get.sent_by_tailrate), (160, 160));
    assert_eq!(get.mean_exec_usec, Some(10.0));
    // From the smallest histogram before, [(1, 8), (2, 10)], to the largest after,
    // [(1, 158), (2, 168), (4, 170)]: 150 calls at 1 µs, 8 at 2 µs, 2 at 4 µs.
    let p = get.exec_usec_at_most.unwrap();
    assert_eq!((p.p50, p.p90, p.p99, p.p99_9), (1, 1, 4, 4));
    assert_eq!(v.span_secs, 3.0);
    assert!((v.cpu_secs.unwrap() - 0.6).abs() < 1e-9, "{v:?}");
    assert!(v.missing.is_empty(), "{v:?}");
}

#[test]
fn shards_that_read_different_servers_or_kept_no_readings_are_not_combined() {
    let r = |id: &str, calls| reading(id, calls, 0, 1.0, &[]);
    let a = shard(80, (0.0, 1.0), r("r1", 0), r("r1", 80));
    let other = shard(80, (0.0, 1.0), r("r2", 0), r("r2", 80));
    let why = merged_view(&[&a, &other]).unwrap_err();
    assert!(
        why.contains("different servers") && why.contains("r2"),
        "{why}"
    );
    let mut forgot = shard(80, (0.0, 1.0), r("r1", 0), r("r1", 80));
    forgot.kept = None;
    assert!(merged_view(&[&a, &forgot]).is_err());
    let anonymous = shard(80, (0.0, 1.0), r("", 0), r("", 80));
    let mut anonymous = anonymous;
    if let Some(k) = anonymous.kept.as_mut() {
        k.before.run_ids.clear();
    }
    assert!(
        merged_view(&[&anonymous, &anonymous])
            .unwrap_err()
            .contains("run_id")
    );
}

#[test]
fn a_shards_reading_keeps_only_its_commands() {
    let mut r = reading("r1", 5, 50, 1.0, &[(1, 5)]);
    r.commands
        .as_mut()
        .unwrap()
        .insert("info".into(), CommandCounters::default());
    let kept = r.of_commands(&["GET".into()]);
    assert_eq!(kept.commands.unwrap().keys().collect::<Vec<_>>(), ["get"]);
    assert_eq!(kept.run_ids, ["r1"]);
}

#[test]
fn a_run_id_is_read_from_info_server() {
    let text = "# Server\r\nredis_version:7.0.15\r\nrun_id:9f2c\r\ntcp_port:6379\r\n";
    assert_eq!(parse_run_id(text).as_deref(), Some("9f2c"));
    assert_eq!(parse_run_id("# Server\r\nrun_id:\r\n"), None);
}

#[test]
fn nodes_histograms_add_at_the_union_of_their_bounds() {
    assert_eq!(
        add_cumulative(&[(1, 5), (4, 7)], &[(2, 3), (4, 4)]),
        vec![(1, 5), (2, 8), (4, 11)]
    );
}

#[test]
fn replies_of_the_wrong_shape_are_no_histogram_not_a_panic() {
    assert_eq!(parse_latency_histogram(&Reply::Integer(3)), None);
    assert_eq!(
        parse_latency_histogram(&Reply::Array(vec![Reply::Null])),
        None
    );
    assert!(
        parse_latency_histogram(&Reply::Array(vec![]))
            .unwrap()
            .is_empty()
    );
}

#[test]
fn counters_past_what_a_server_can_do_are_missing_not_believed() {
    let wrapped = reading("a", u64::MAX, 10, 1.0, &[(1, 5)]);
    let v = view(
        &reading("a", 5, 50, 1.0, &[(1, 5)]),
        &wrapped,
        2.0,
        &[("GET".into(), 100)],
    );
    assert!(
        v.missing
            .iter()
            .any(|m| m.contains("INFO commandstats") && m.contains("more than a server executes")),
        "{:?}",
        v.missing
    );
    assert_eq!(v.commands[0].calls, 0);
    assert_eq!(v.commands[0].mean_exec_usec, None);
    assert_eq!(v.cpu_utilisation, None);
    let busy_cpu = reading("a", 105, 1050, 1e9, &[(1, 5)]);
    let v = view(
        &reading("a", 5, 50, 1.0, &[(1, 5)]),
        &busy_cpu,
        2.0,
        &[("GET".into(), 100)],
    );
    assert!(
        v.missing.iter().any(|m| m.contains("INFO cpu")),
        "{:?}",
        v.missing
    );
    assert_eq!(
        parse_cpu_secs("used_cpu_sys:inf\nused_cpu_user:1.0\n"),
        None
    );
    assert_eq!(parse_cpu_secs("used_cpu_sys:-1\nused_cpu_user:1.0\n"), None);
    assert_eq!(
        parse_cpu_secs("used_cpu_sys:0.5\nused_cpu_user:1.0\n"),
        Some(1.5)
    );
}
