//! The file readers against seeded mutations of real files, in process: a run's report,
//! a sweep's `sweep.json` and a run's `.hlog`, each changed hundreds of ways (a number
//! made huge, negative, fractional or a string; a string made huge or a number; a
//! field removed; bytes flipped; the file cut), then read as `compare`, `plot`,
//! `report` and `merge` read them. Each must read or refuse: none may panic. The
//! suite's stand-in for the fuzz targets `fuzz/fuzz_targets/report.rs` and `hlog.rs`
//! (`scripts/fuzz`), which run for longer than a test can.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use serde_json::Value;
use tailrate::judge::compare;
use tailrate::report::compare::{Metrics, Options, Report};

use super::harness::{RedisServer, assert_success, run_tailrate, run_tailrate_with_timeout};

/// Mutations of each file.
const MUTATIONS: usize = 400;

#[test]
fn hundreds_of_mutated_reports_sweeps_and_logs_are_read_or_refused_without_a_panic() {
    let server = RedisServer::start();
    let dir = tempfile::tempdir().unwrap();
    let port = server.port().to_string();
    let (json, hlog) = (dir.path().join("run.json"), dir.path().join("run.hlog"));
    assert_success(&run_tailrate(&[
        "-p",
        &port,
        "-t",
        "get,set",
        "--rate",
        "2000",
        "--duration",
        "1s",
        "--no-progress",
        "-q",
        "--json",
        json.to_str().unwrap(),
        "--hdr-log",
        hlog.to_str().unwrap(),
    ]));
    let sweep_dir = dir.path().join("sweep");
    assert_success(&run_tailrate_with_timeout(
        &[
            "sweep",
            "-p",
            &port,
            "-t",
            "get",
            "--rates",
            "1k,2k",
            "--duration",
            "300ms",
            "--settle",
            "0s",
            // A p50 far under its bound passes on 4 runs (a p99 waits for 16), so the
            // search that writes the fields to mutate stays short on a busy host.
            "--slo",
            "p50<=100ms",
            "--no-progress",
            "--out",
            sweep_dir.to_str().unwrap(),
        ],
        std::time::Duration::from_secs(120),
    ));
    let mut rng = Pcg64::seed_from_u64(0x5eed);
    let mut read = [0usize; 3];
    let watchdog = Watchdog::start();
    for (k, path) in [json, sweep_dir.join("sweep.json")].iter().enumerate() {
        let base: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
        let leaves = leaves(&base);
        for i in 0..MUTATIONS {
            let bytes = mutate_json(&base, &leaves, &mut rng);
            watchdog.reading(&format!("{}, mutation {i}", path.display()), &bytes);
            if read_report(&bytes) {
                read[k] += 1;
            }
        }
    }
    let log = std::fs::read(dir.path().join("run.hlog")).unwrap();
    for i in 0..MUTATIONS {
        let bytes = mutate_log(&log, &mut rng);
        watchdog.reading(&format!("run.hlog, mutation {i}"), &bytes);
        if let Ok(shard) = tailrate::merge::hlog::read_log(Path::new("mutated.hlog"), &bytes) {
            read[2] += 1;
            for interval in &shard.intervals {
                let _ = interval.histogram().len();
            }
        }
    }
    println!(
        "of {MUTATIONS} mutations each, read: run report {}, sweep {}, log {}; the rest refused",
        read[0], read[1], read[2]
    );
    // Some mutations leave a file readable (a count changed within reason): the readers
    // were reached past their first check, not only refused at the door.
    assert!(read.iter().all(|&n| n > 0), "{read:?}");
}

/// The case being read, for a thread that watches it: one a reader spends minutes on
/// (its base file is a real run's, so the mutations differ from run to run) is written
/// to a file and named, and the test ends there rather than at the suite's timeout.
struct Watchdog {
    current: std::sync::Arc<std::sync::Mutex<(String, Vec<u8>, std::time::Instant)>>,
}

impl Watchdog {
    /// The longest one case may take: every case takes milliseconds.
    const CASE_LIMIT: std::time::Duration = std::time::Duration::from_secs(30);

    fn start() -> Watchdog {
        let current = std::sync::Arc::new(std::sync::Mutex::new((
            String::new(),
            Vec::new(),
            std::time::Instant::now(),
        )));
        let watched = std::sync::Arc::downgrade(&current);
        std::thread::spawn(move || {
            while let Some(current) = watched.upgrade() {
                let (case, bytes, since) = current.lock().unwrap().clone();
                drop(current);
                if since.elapsed() > Self::CASE_LIMIT {
                    let kept = std::env::temp_dir()
                        .join(format!("tailrate-mutation-{}", std::process::id()));
                    let _ = std::fs::write(&kept, &bytes);
                    eprintln!(
                        "{case} still read after {:?}: its bytes are in {}",
                        Self::CASE_LIMIT,
                        kept.display()
                    );
                    std::process::abort();
                }
                std::thread::sleep(std::time::Duration::from_millis(200));
            }
        });
        Watchdog { current }
    }

    /// Starts the clock on `case`, whose bytes are `bytes`.
    fn reading(&self, case: &str, bytes: &[u8]) {
        *self.current.lock().unwrap() = (case.into(), bytes.to_vec(), std::time::Instant::now());
    }
}

/// Reads `bytes` as `compare` does and, when it reads, compares it with itself and
/// renders its HTML page as `tailrate report` does (a sweep's with the plots `plot`
/// draws).
fn read_report(bytes: &[u8]) -> bool {
    let Ok(report) = tailrate::report::compare::parse(bytes) else {
        return false;
    };
    let entries = report.entries();
    let options = Options {
        metrics: Metrics::All,
        fail_if_slower: Some(0.05),
        margin: tailrate::report::compare::DEFAULT_MARGIN,
        same_file: None,
    };
    let _ = compare::compare(
        (report.side("A".into()), &entries),
        (report.side("B".into()), &entries),
        &options,
    );
    match &report {
        Report::Sweep(sweep) => {
            let _ = tailrate::export::html::sweep_with_plots(sweep);
        }
        Report::Run(run) => {
            let _ = tailrate::export::html::run(run);
        }
    }
    true
}

/// Paths to every number and string in `v`, as JSON pointers.
fn leaves(v: &Value) -> Vec<String> {
    fn walk(v: &Value, at: String, out: &mut Vec<String>) {
        match v {
            Value::Object(map) => {
                for (k, x) in map {
                    walk(
                        x,
                        format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")),
                        out,
                    );
                }
            }
            Value::Array(items) => {
                for (i, x) in items.iter().enumerate() {
                    walk(x, format!("{at}/{i}"), out);
                }
            }
            Value::Number(_) | Value::String(_) | Value::Bool(_) => out.push(at),
            Value::Null => {}
        }
    }
    let mut out = Vec::new();
    walk(v, String::new(), &mut out);
    out
}

/// Values no run writes, or writes only elsewhere.
fn hostile(rng: &mut Pcg64) -> Value {
    match rng.random_range(0..12) {
        0 => Value::from(-1),
        1 => Value::from(u64::MAX),
        2 => Value::from(1e308),
        3 => Value::from(-1e308),
        4 => Value::from(0.5),
        5 => Value::from(0),
        6 => Value::from((1u64 << 53) + 1),
        7 => Value::from("x".repeat(rng.random_range(0..5000))),
        8 => Value::from(""),
        9 => Value::Null,
        10 => Value::from(vec![1, 2, 3]),
        _ => Value::from(rng.random_range(0..1_000_000_000u64)),
    }
}

/// `base` with one to three leaves changed, a field removed, or its bytes flipped or cut.
fn mutate_json(base: &Value, leaves: &[String], rng: &mut Pcg64) -> Vec<u8> {
    let mut v = base.clone();
    match rng.random_range(0..10) {
        0..=6 => {
            for _ in 0..rng.random_range(1..=3) {
                let at = &leaves[rng.random_range(0..leaves.len())];
                if let Some(slot) = v.pointer_mut(at) {
                    *slot = hostile(rng);
                }
            }
        }
        7 => {
            let at = &leaves[rng.random_range(0..leaves.len())];
            if let Some((parent, key)) = at.rsplit_once('/')
                && let Some(Value::Object(map)) = v.pointer_mut(parent)
            {
                map.remove(&key.replace("~1", "/").replace("~0", "~"));
            }
        }
        8 => {
            let mut bytes = serde_json::to_vec(&v).unwrap();
            for _ in 0..rng.random_range(1..8) {
                let i = rng.random_range(0..bytes.len());
                bytes[i] = rng.random();
            }
            return bytes;
        }
        _ => {
            let bytes = serde_json::to_vec(&v).unwrap();
            return bytes[..rng.random_range(0..bytes.len())].to_vec();
        }
    }
    serde_json::to_vec(&v).unwrap()
}

/// `log` with a field of an interval line replaced, bytes of its histograms flipped, a
/// header line changed, or the file cut.
fn mutate_log(log: &[u8], rng: &mut Pcg64) -> Vec<u8> {
    let text = String::from_utf8_lossy(log);
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let i = rng.random_range(0..lines.len());
    match rng.random_range(0..4) {
        0 => {
            let mut fields: Vec<String> = lines[i].split(',').map(str::to_string).collect();
            let f = rng.random_range(0..fields.len());
            fields[f] = match rng.random_range(0..7) {
                0 => "-1".into(),
                1 => "1e19".into(),
                2 => "18446744073709551616".into(),
                3 => "NaN".into(),
                4 => String::new(),
                5 => "inf".into(),
                _ => "0.001".into(),
            };
            lines[i] = fields.join(",");
        }
        1 => {
            let mut bytes = lines[i].clone().into_bytes();
            for _ in 0..rng.random_range(1..6) {
                let j = rng.random_range(0..bytes.len().max(1));
                if let Some(b) = bytes.get_mut(j) {
                    *b = b"AZaz09+/=,.-"[rng.random_range(0..12)];
                }
            }
            lines[i] = String::from_utf8_lossy(&bytes).into_owned();
        }
        2 => {
            let header = [
                "#[StartTime: -5 (seconds since epoch)]",
                "#[StartTime: 1e300 (seconds since epoch)]",
                "#[BaseTime: nan (seconds since epoch)]",
                "#tailrate 0.1.0 seed 1 shard 4294967295/0",
                "#tailrate 0.1.0 seed x shard 1/2",
            ];
            lines[i] = header[rng.random_range(0..header.len())].to_string();
        }
        _ => {
            let all = lines.join("\n");
            return all.as_bytes()[..rng.random_range(0..all.len())].to_vec();
        }
    }
    let mut out = lines.join("\n");
    out.push('\n');
    out.into_bytes()
}
