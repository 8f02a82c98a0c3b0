//! Many inputs at once for `workload/trace/`: valid traces of each format mutated
//! byte by byte, which must never panic and whose errors must name a line, and the
//! parse speed of MONITOR output (ignored; run by hand in release).

#![allow(clippy::unwrap_used)]
use super::*;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

/// A valid line of each format, to mutate.
const SEEDS: &[(TraceFormat, &str)] = &[
    (
        TraceFormat::Monitor,
        "OK\n1733400000.123456 [0 127.0.0.1:54321] \"SET\" \"k\\x01\" \"va\\\"l\\nue\"\r\n\
         1733400000.123500 [3 lua] \"GET\" \"k\"\n",
    ),
    (
        TraceFormat::JsonLines,
        "{\"time\": 12.5, \"client\": \"c1\", \"db\": 0, \"args\": [\"SET\", \"k\", \"v\"]}\n\
         {\"time\": 13, \"client\": 4, \"args\": [\"GET\", \"k\\n\"]}\n",
    ),
    (
        TraceFormat::Csv,
        "time,client,db,command\n0.000,c1,0,SET,k,v\n0.0005,\"c\"\"2\",1,GET,\"k\nk\"\n",
    ),
];

/// Reads `input` to its end or first error, checking that every error names a line.
fn read_checking_lines(input: &[u8], format: Option<TraceFormat>, skip: bool) {
    let mut reader = match TraceReader::new(input, format, skip) {
        Ok(reader) => reader,
        Err(TraceError::BadLine { line, .. } | TraceError::UnknownFormat { line }) => {
            assert!(line >= 1);
            return;
        }
        Err(TraceError::Empty) => return,
        Err(other) => panic!("{other}"),
    };
    loop {
        match reader.next_record() {
            Ok(Some(record)) => {
                assert!(!record.args.is_empty());
                assert!(record.line >= 1);
            }
            Ok(None) => break,
            Err(TraceError::BadLine { line, .. }) => {
                assert!(line >= 1);
                break;
            }
            Err(other) => panic!("{other}"),
        }
    }
    if let Some(TraceError::BadLine { line, .. }) = reader.first_bad() {
        assert!(*line >= 1);
    }
}

#[test]
fn mutated_traces_never_panic_and_errors_name_a_line() {
    let mut rng = Pcg64::seed_from_u64(0x7ace);
    for i in 0..20_000 {
        let (format, seed) = SEEDS[i % SEEDS.len()];
        let mut bytes = seed.as_bytes().to_vec();
        for _ in 0..rng.random_range(1..=4) {
            let at = rng.random_range(0..=bytes.len());
            match rng.random_range(0..3) {
                0 if at < bytes.len() => bytes[at] ^= 1 << rng.random_range(0..8),
                1 => bytes.insert(at, rng.random()),
                _ if at < bytes.len() => {
                    bytes.remove(at);
                }
                _ => {}
            }
        }
        // Also with a tiny cap, so rows over it are met often.
        let cap = if i % 7 == 0 { 16 } else { MAX_LINE_BYTES };
        for skip in [false, true] {
            read_checking_lines(&bytes, Some(format), skip);
            read_checking_lines(&bytes, None, skip);
            let mut small = TraceReader::with_max_line_bytes(&bytes[..], Some(format), skip, cap);
            if let Ok(reader) = &mut small {
                while let Ok(Some(_)) = reader.next_record() {}
            }
        }
    }
}

/// Parse speed of MONITOR output, in release:
/// `cargo test --release --lib workload::trace::mutation_tests::monitor_parse_speed -- --ignored --nocapture`
#[test]
#[ignore = "a measurement, not a check"]
fn monitor_parse_speed() {
    let mut input = Vec::new();
    let mut i = 0u64;
    while input.len() < 200 * 1024 * 1024 {
        let line = match i % 4 {
            0 => format!(
                "1733400000.{:06} [0 127.0.0.1:54321] \"GET\" \"key:{i}\"\n",
                i % 1_000_000
            ),
            1 => format!(
                "1733400000.{:06} [0 127.0.0.1:54321] \"SET\" \"key:{i}\" \"{}\"\n",
                i % 1_000_000,
                "x".repeat(64)
            ),
            2 => format!(
                "1733400000.{:06} [1 lua] \"HSET\" \"h:{i}\" \"f\" \"v\\x00\\xff\\\"q\\\"\"\n",
                i % 1_000_000
            ),
            _ => format!(
                "1733400000.{:06} [0 unix:/tmp/redis.sock] \"PING\"\n",
                i % 1_000_000
            ),
        };
        input.extend_from_slice(line.as_bytes());
        i += 1;
    }
    let started = std::time::Instant::now();
    let mut reader = TraceReader::new(std::io::BufReader::new(&input[..]), None, false).unwrap();
    let mut records = 0u64;
    let mut arg_bytes = 0usize;
    while let Some(record) = reader.next_record().unwrap() {
        records += 1;
        arg_bytes += record.args.iter().map(Vec::len).sum::<usize>();
    }
    let secs = started.elapsed().as_secs_f64();
    let mb = input.len() as f64 / 1e6;
    println!(
        "{mb:.0} MB, {records} records ({arg_bytes} argument bytes) in {secs:.3} s: \
         {:.0} MB/s, {:.2} M records/s",
        mb / secs,
        records as f64 / secs / 1e6
    );
}
