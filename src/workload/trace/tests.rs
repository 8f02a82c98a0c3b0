//! Unit tests of `workload/trace/`: each format's records, detection, bad lines and their
//! line numbers, skipping, and the line cap. Mutated input is `mutation_tests.rs`'s.

#![allow(clippy::unwrap_used)]
use super::*;

/// Every record of `input`, owned, with the reader's format.
fn read_all(input: &[u8], format: Option<TraceFormat>) -> (TraceFormat, Vec<TraceRecord>) {
    let mut reader = TraceReader::new(input, format, false).unwrap();
    let mut records = Vec::new();
    while let Some(record) = reader.next_record().unwrap() {
        records.push(record.clone());
    }
    (reader.format(), records)
}

/// The first error reading `input` in `format` hits, as (line, reason).
fn first_error(input: &[u8], format: TraceFormat) -> (u64, String) {
    let mut reader = TraceReader::new(input, Some(format), false).unwrap();
    loop {
        match reader.next_record() {
            Ok(Some(_)) => {}
            Ok(None) => panic!("no error in {:?}", String::from_utf8_lossy(input)),
            Err(TraceError::BadLine { line, reason }) => return (line, reason),
            Err(other) => panic!("not a bad line: {other}"),
        }
    }
}

fn args(record: &TraceRecord) -> Vec<&[u8]> {
    record.args.iter().map(|a| &a[..]).collect()
}

#[test]
fn monitor_lines_give_time_db_client_and_arguments() {
    let input = b"OK\n\
        1733400000.123456 [0 127.0.0.1:54321] \"SET\" \"key:1\" \"va\\\"lue\"\n\
        1733400000.123500 [3 lua] \"GET\" \"k\"\r\n\
        \n\
        1733400001.000001 [15 unix:/tmp/redis.sock] \"PING\"\n";
    let (format, records) = read_all(input, None);
    assert_eq!(format, TraceFormat::Monitor);
    assert_eq!(records.len(), 3);
    assert_eq!(records[0].at_us, 1_733_400_000_123_456);
    assert_eq!(records[0].db, Some(0));
    assert_eq!(records[0].client, b"127.0.0.1:54321");
    assert_eq!(args(&records[0]), [&b"SET"[..], b"key:1", b"va\"lue"]);
    assert_eq!(records[0].line, 2);
    assert_eq!(
        (records[1].db, &records[1].client[..]),
        (Some(3), &b"lua"[..])
    );
    assert_eq!(args(&records[1]), [&b"GET"[..], b"k"]);
    assert_eq!(records[1].line, 3);
    assert_eq!(records[2].client, b"unix:/tmp/redis.sock");
    assert_eq!((records[2].db, records[2].line), (Some(15), 5));
    assert_eq!(records[2].at_us, 1_733_400_001_000_001);
}

#[test]
fn monitor_unquotes_every_escape_and_keeps_non_utf8_bytes() {
    let line =
        br#"1.5 [0 1.2.3.4:5] "\\" "\"" "a\nb\rc\td" "\a\b" "\x00\xff\x7F" "" "plain words""#;
    let (_, records) = read_all(line, Some(TraceFormat::Monitor));
    assert_eq!(records[0].at_us, 1_500_000);
    assert_eq!(
        args(&records[0]),
        [
            &b"\\"[..],
            b"\"",
            b"a\nb\rc\td",
            b"\x07\x08",
            b"\x00\xff\x7f",
            b"",
            b"plain words"
        ]
    );
}

#[test]
fn monitor_reuses_argument_buffers_as_the_count_changes() {
    let input = b"1.0 [0 c] \"MSET\" \"a\" \"1\" \"b\" \"2\"\n\
        2.0 [0 c] \"GET\" \"a\"\n\
        3.0 [0 c] \"MSET\" \"x\" \"9\" \"y\"\n";
    let mut reader = TraceReader::new(&input[..], None, false).unwrap();
    assert_eq!(reader.next_record().unwrap().unwrap().args.len(), 5);
    assert_eq!(
        args(reader.next_record().unwrap().unwrap()),
        [&b"GET"[..], b"a"]
    );
    assert_eq!(reader.spare.len(), 3);
    let third = reader.next_record().unwrap().unwrap();
    assert_eq!(args(third), [&b"MSET"[..], b"x", b"9", b"y"]);
    assert_eq!(reader.spare.len(), 1);
    assert!(reader.next_record().unwrap().is_none());
    assert_eq!(reader.lines_read(), 3);
}

#[test]
fn monitor_bad_lines_name_their_line_and_what_was_expected() {
    let good = "1.0 [0 c] \"PING\"\n";
    let cases: &[(&str, &str)] = &[
        (
            "abc [0 c] \"GET\"",
            "timestamp 'abc' is not seconds.microseconds",
        ),
        ("1.0 0 c] \"GET\"", "expected '['"),
        ("1.0 [x c] \"GET\"", "database 'x' is not a number"),
        ("1.0 [0 c \"GET\"", "expected the client"),
        (
            "1.0 [0 c] \"GET",
            "an argument opens with '\"' but never closes",
        ),
        ("1.0 [0 c] \"GET\\", "never closes"),
        (
            "1.0 [0 c] \"GET\" \"\\x4\"",
            "\\x escape needs two hex digits",
        ),
        (
            "1.0 [0 c] \"GET\" \"\\xzz\"",
            "\\x escape needs two hex digits",
        ),
        ("1.0 [0 c] \"GET\" \"\\q\"", "unknown escape '\\q'"),
        ("1.0 [0 c] \"GET\"x", "expected a space and '\"'"),
        ("1.0 [0 c] \"GET\" k", "expected a space and '\"'"),
        ("1.1234567 [0 c] \"GET\"", "is not seconds.microseconds"),
    ];
    for (bad, expected) in cases {
        let input = format!("{good}{good}{bad}\n{good}");
        let (line, reason) = first_error(input.as_bytes(), TraceFormat::Monitor);
        assert_eq!(line, 3, "{bad}");
        assert!(reason.contains(expected), "{bad}: {reason}");
    }
}

#[test]
fn skipping_bad_lines_counts_them_and_keeps_the_first() {
    let input = b"1.0 [0 c] \"GET\" \"a\"\nnonsense\n2.0 [0 c] \"GET\n3.0 [0 c] \"GET\" \"b\"\n";
    let mut reader = TraceReader::new(&input[..], None, true).unwrap();
    let mut lines = Vec::new();
    while let Some(record) = reader.next_record().unwrap() {
        lines.push(record.line);
    }
    assert_eq!(lines, [1, 4]);
    assert_eq!(reader.bad_lines(), 2);
    let first = reader.first_bad().unwrap().to_string();
    assert!(first.starts_with("line 2: timestamp 'nonsense'"), "{first}");
}

#[test]
fn a_line_over_the_cap_is_a_bad_line_not_an_allocation() {
    let long = format!("1.0 [0 c] \"SET\" \"k\" \"{}\"", "v".repeat(200));
    let input = format!("1.0 [0 c] \"GET\" \"a\"\n{long}\n2.0 [0 c] \"GET\" \"b\"\n");
    let mut reader =
        TraceReader::with_max_line_bytes(input.as_bytes(), Some(TraceFormat::Monitor), true, 100)
            .unwrap();
    assert_eq!(reader.next_record().unwrap().unwrap().line, 1);
    assert_eq!(reader.next_record().unwrap().unwrap().line, 3);
    assert!(reader.next_record().unwrap().is_none());
    assert_eq!(reader.bad_lines(), 1);
    let error = reader.first_bad().unwrap().to_string();
    assert_eq!(error, "line 2: the line is longer than 100 bytes");

    let mut strict =
        TraceReader::with_max_line_bytes(input.as_bytes(), Some(TraceFormat::Monitor), false, 100)
            .unwrap();
    strict.next_record().unwrap();
    assert!(matches!(
        strict.next_record(),
        Err(TraceError::BadLine { line: 2, .. })
    ));
    // A line of exactly the cap is fine.
    let exact = "1.0 [0 c] \"GET\" \"a\"";
    let mut reader =
        TraceReader::with_max_line_bytes(exact.as_bytes(), None, false, exact.len()).unwrap();
    assert_eq!(reader.next_record().unwrap().unwrap().args.len(), 2);
}

#[test]
fn json_lines_give_time_db_client_and_arguments() {
    let input = br#"{"time": 12.5, "client": "c1", "db": 2, "args": ["SET", "k", "v\u00e9"]}

{"args": ["GET", "k"], "time": 0, "client": 7, "note": "ignored"}
{"time": 1e-6, "args": ["PING"], "client": null}
"#;
    let (format, records) = read_all(input, None);
    assert_eq!(format, TraceFormat::JsonLines);
    assert_eq!(records.len(), 3);
    assert_eq!((records[0].at_us, records[0].db), (12_500_000, Some(2)));
    assert_eq!(records[0].client, b"c1");
    assert_eq!(args(&records[0]), [&b"SET"[..], b"k", "vé".as_bytes()]);
    assert_eq!(
        (records[1].at_us, records[1].db, records[1].line),
        (0, None, 3)
    );
    assert_eq!(records[1].client, b"7");
    assert_eq!((records[2].at_us, &records[2].client[..]), (1, &b""[..]));
}

#[test]
fn json_bad_lines_name_their_line() {
    let good = r#"{"time": 1, "args": ["PING"]}"#;
    let cases: &[(&str, &str)] = &[
        (
            r#"{"time": -1, "args": ["GET"]}"#,
            "\"time\" -1 is not a number of seconds",
        ),
        (r#"{"time": 1, "args": []}"#, "\"args\" is empty"),
        (r#"{"args": ["GET"]}"#, "missing field `time`"),
        (r#"{"time": 1}"#, "missing field `args`"),
        (r#"{"time": 1, "args": ["GET", 5]}"#, "invalid type"),
        (r#"{"time": 1, "db": -1, "args": ["GET"]}"#, "invalid value"),
        (
            r#"{"time": 1, "client": [], "args": ["GET"]}"#,
            "a string or an integer",
        ),
        (r#"{"time": 1e999, "args": ["GET"]}"#, "expected an object"),
        (r#"{"time": 1, "args": ["GET"]"#, "EOF"),
    ];
    for (bad, expected) in cases {
        let input = format!("{good}\n{bad}\n{good}\n");
        let (line, reason) = first_error(input.as_bytes(), TraceFormat::JsonLines);
        assert_eq!(line, 2, "{bad}");
        assert!(reason.contains(expected), "{bad}: {reason}");
        assert!(!reason.contains("at line"), "{reason}");
    }
    let not_utf8 = b"{\"time\": 1, \"args\": [\"PING\"]}\n{\"time\": 1, \"args\": [\"\xff\"]}\n";
    let (line, reason) = first_error(not_utf8, TraceFormat::JsonLines);
    assert_eq!(line, 2);
    assert!(reason.contains("expected an object"), "{reason}");
}

#[test]
fn csv_with_client_and_db_columns() {
    let input = b"time,client,db,command\n\
        0.000,c1,0,SET,k,v\n\
        0.0005,c2,,GET,k\r\n\
        1.5,\"c,3\",9,\"SET\",\"two,\"\"parts\"\"\"\n\
        \n\
        2,c4,1,PING\n";
    let (format, records) = read_all(input, None);
    assert_eq!(format, TraceFormat::Csv);
    assert_eq!(records.len(), 4);
    assert_eq!(args(&records[0]), [&b"SET"[..], b"k", b"v"]);
    assert_eq!((records[0].at_us, records[0].line), (0, 2));
    assert_eq!((records[1].at_us, records[1].db), (500, None));
    assert_eq!(records[1].client, b"c2");
    assert_eq!(
        (records[2].db, &records[2].client[..]),
        (Some(9), &b"c,3"[..])
    );
    assert_eq!(args(&records[2]), [&b"SET"[..], b"two,\"parts\""]);
    assert_eq!((records[2].line, records[3].line), (4, 6));
    assert_eq!(records[3].at_us, 2_000_000);
}

#[test]
fn csv_line_numbers_survive_crlf_and_blank_lines() {
    let input =
        b"\r\ntime,command\r\n1,GET,a\r\n\r\n\n2,GET,b\r\nx,GET,c\r\n3,\"SET\r\n\",d\r\n4,PING\r\n";
    let mut reader = TraceReader::new(&input[..], None, true).unwrap();
    let mut lines = Vec::new();
    while let Some(record) = reader.next_record().unwrap() {
        lines.push((record.line, record.args.last().unwrap().clone()));
    }
    // Line 8's quote is open at its end (a row is a line): it and what its quote would
    // have taken in (line 9) are bad rows, as line 7 is.
    let expected: Vec<(u64, Vec<u8>)> = vec![
        (3, b"a".to_vec()),
        (6, b"b".to_vec()),
        (10, b"PING".to_vec()),
    ];
    assert_eq!(lines, expected);
    assert_eq!(reader.bad_lines(), 3);
    let first = reader.first_bad().unwrap().to_string();
    assert!(first.starts_with("line 7: time 'x'"), "{first}");
}

#[test]
fn csv_without_client_or_db_columns() {
    let input = b"\xef\xbb\xbfTime,Command\n1e-3,GET,k\n0.25,PING\n";
    let mut reader = TraceReader::new(&input[..], None, false).unwrap();
    assert_eq!(reader.format(), TraceFormat::Csv);
    let first = reader.next_record().unwrap().unwrap();
    assert_eq!(
        (first.at_us, first.db, &first.client[..]),
        (1000, None, &b""[..])
    );
    assert_eq!(args(first), [&b"GET"[..], b"k"]);
    let second = reader.next_record().unwrap().unwrap();
    assert_eq!((second.at_us, second.line), (250_000, 3));
    assert!(reader.next_record().unwrap().is_none());
    assert_eq!(reader.lines_read(), 3);
}

#[test]
fn csv_bad_rows_and_headers_name_their_line() {
    let good = "0.5,c,GET,k\n";
    let cases: &[(&str, &str)] = &[
        ("abc,c,GET", "time 'abc' is not a number of seconds"),
        ("-1,c,GET", "is not a number of seconds"),
        ("inf,c,GET", "is not a number of seconds"),
        ("1,c", "expected at least 3 fields"),
        ("1,c,,k", "the command field is empty"),
    ];
    for (bad, expected) in cases {
        let input = format!("time,client,command\n{good}{bad}\n{good}");
        let (line, reason) = first_error(input.as_bytes(), TraceFormat::Csv);
        assert_eq!(line, 3, "{bad}");
        assert!(reason.contains(expected), "{bad}: {reason}");
    }
    let db = "time,db,command\n1,x,GET\n";
    let (line, reason) = first_error(db.as_bytes(), TraceFormat::Csv);
    assert_eq!(
        (line, &reason[..]),
        (2, "db 'x' is not a number from 0 to 4294967295")
    );

    let headers: &[(&str, &str)] = &[
        ("time,client,extra,command", "unknown column 'extra'"),
        (
            "time,client,command,extra",
            "`command` must be the last column",
        ),
        ("time,command,client", "`command` must be the last column"),
        ("client,command", "no `time` column"),
        ("time,client", "the last column is not `command`"),
        ("time,time,command", "column 'time' appears twice"),
    ];
    for (header, expected) in headers {
        let input = format!("\n{header}\n1,GET\n");
        match TraceReader::new(input.as_bytes(), Some(TraceFormat::Csv), true) {
            Err(TraceError::BadLine { line, reason }) => {
                assert_eq!(line, 2, "{header}");
                assert!(reason.contains(expected), "{header}: {reason}");
            }
            other => panic!("{header}: {other:?}"),
        }
    }
}

#[test]
fn a_csv_row_longer_than_the_cap_stops_the_read() {
    let input = format!("time,command\n1,GET\n2,SET,{}\n3,GET\n", "x".repeat(100));
    let mut reader = TraceReader::with_max_line_bytes(input.as_bytes(), None, true, 64).unwrap();
    assert_eq!(reader.next_record().unwrap().unwrap().line, 2);
    match reader.next_record() {
        Err(TraceError::BadLine { line, reason }) => {
            assert_eq!(line, 3);
            assert!(reason.contains("longer than 64 bytes"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
    assert!(reader.next_record().unwrap().is_none());
}

/// A CSV trace of 2,000 `SET`s whose row 501 opens a quote it never closes.
fn unclosed_at_row_501() -> String {
    let mut input = String::from("time,client,db,command\n");
    for i in 0..2000 {
        if i == 500 {
            input.push_str("0.25,c1,0,SET,\"unclosed,v\n");
        } else {
            input.push_str(&format!("{}.5,c1,0,SET,k{i},v\n", i / 10));
        }
    }
    input
}

#[test]
fn a_csv_quote_open_at_its_lines_end_is_a_bad_row_named() {
    let input = unclosed_at_row_501();
    // Row 501 is line 502, after the header.
    let (line, reason) = first_error(input.as_bytes(), TraceFormat::Csv);
    assert_eq!(line, 502, "{reason}");
    assert!(reason.contains("runs past the end of its line"), "{reason}");

    // Skipped when asked: every other row is read, as written.
    let mut reader = TraceReader::new(input.as_bytes(), None, true).unwrap();
    let mut rows = 0;
    let mut last = (0, Vec::new());
    while let Some(record) = reader.next_record().unwrap() {
        rows += 1;
        last = (record.line, record.args.clone());
    }
    assert_eq!((rows, reader.bad_lines()), (1999, 1));
    assert_eq!(
        last,
        (
            2001,
            vec![b"SET".to_vec(), b"k1999".to_vec(), b"v".to_vec()]
        )
    );
    assert!(matches!(
        reader.first_bad(),
        Some(TraceError::BadLine { line: 502, .. })
    ));

    // A quoted field may hold commas and quotes within its line.
    let input = "time,command\n1,SET,k,\"a,\"\"b\"\"\"\n2,GET,k\n";
    let mut reader = TraceReader::new(input.as_bytes(), None, false).unwrap();
    let first = reader.next_record().unwrap().unwrap();
    assert_eq!(args(first), [&b"SET"[..], b"k", b"a,\"b\""]);
    assert_eq!(reader.next_record().unwrap().unwrap().line, 3);
    assert!(reader.next_record().unwrap().is_none());
}

#[test]
fn detection_reads_the_first_non_empty_line() {
    let cases: &[(&[u8], Option<TraceFormat>)] = &[
        (b"OK", Some(TraceFormat::Monitor)),
        (b"OK\r\n", Some(TraceFormat::Monitor)),
        (
            b"1733400000.123456 [0 127.0.0.1:1] \"GET\"",
            Some(TraceFormat::Monitor),
        ),
        (b"1733400000 [0 127.0.0.1:1] \"GET\"", None),
        (b"1733400000.1 \"GET\"", None),
        (b"{\"time\": 1}", Some(TraceFormat::JsonLines)),
        (b"  {", Some(TraceFormat::JsonLines)),
        (b"time,client,command\n", Some(TraceFormat::Csv)),
        (b"\"time\",\"command\"", Some(TraceFormat::Csv)),
        (b"\xef\xbb\xbfdb,time,command", Some(TraceFormat::Csv)),
        (b"time,client", None),
        (b"timestamp,command", None),
        (b"", None),
        (b"\xff\xfe", None),
    ];
    for (line, expected) in cases {
        assert_eq!(
            TraceFormat::detect(line),
            *expected,
            "{:?}",
            String::from_utf8_lossy(line)
        );
    }
}

#[test]
fn empty_and_unknown_traces_are_refused_up_front() {
    assert!(matches!(
        TraceReader::new(&b""[..], None, true),
        Err(TraceError::Empty)
    ));
    assert!(matches!(
        TraceReader::new(&b"\n \r\n\n"[..], Some(TraceFormat::Monitor), true),
        Err(TraceError::Empty)
    ));
    match TraceReader::new(&b"\n\nhello world\n"[..], None, true) {
        Err(TraceError::UnknownFormat { line: 3 }) => {}
        other => panic!("{other:?}"),
    }
    // Only `OK`: a MONITOR trace with no commands, not an error.
    let mut reader = TraceReader::new(&b"OK\r\n"[..], None, false).unwrap();
    assert!(reader.next_record().unwrap().is_none());
}

#[test]
fn a_format_given_overrides_detection() {
    let input = b"{\"time\": 1, \"args\": [\"GET\"]}\n";
    let (line, reason) = first_error(input, TraceFormat::Monitor);
    assert_eq!(line, 1);
    assert!(reason.contains("timestamp"), "{reason}");
}
