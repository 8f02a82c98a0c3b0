//! Unit tests of `resp/reply/mod.rs`.

#![allow(clippy::unwrap_used)]

use super::*;
use crate::resp::{Frame, encode_command, error_kind};
use bytes::BytesMut;
use proptest::prelude::*;

fn parsed(bytes: &[u8]) -> Reply {
    let (reply, len) = parse(bytes, &Limits::default()).unwrap().unwrap();
    assert_eq!(len, bytes.len());
    reply
}

fn bulk(s: &str) -> Reply {
    Reply::Bulk(s.as_bytes().to_vec())
}

fn simple(s: &str) -> Reply {
    Reply::Simple(s.to_owned())
}

#[test]
fn every_scalar_type_parses_to_its_value() {
    assert_eq!(parsed(b"+OK\r\n"), simple("OK"));
    assert_eq!(parsed(b"-ERR no\r\n"), Reply::Error("ERR no".into()));
    assert_eq!(parsed(b":-42\r\n"), Reply::Integer(-42));
    assert_eq!(parsed(b":+7\r\n"), Reply::Integer(7));
    assert_eq!(parsed(b"$5\r\nhe\r\no\r\n"), bulk("he\r\no"));
    assert_eq!(parsed(b"$0\r\n\r\n"), bulk(""));
    assert_eq!(parsed(b"$-1\r\n"), Reply::Null);
    assert_eq!(parsed(b"*-1\r\n"), Reply::Null);
    assert_eq!(parsed(b"_\r\n"), Reply::Null);
    assert_eq!(parsed(b",1.5\r\n"), Reply::Double(1.5));
    assert_eq!(parsed(b",-inf\r\n"), Reply::Double(f64::NEG_INFINITY));
    assert_eq!(parsed(b",1e3\r\n"), Reply::Double(1000.0));
    assert!(matches!(parsed(b",nan\r\n"), Reply::Double(d) if d.is_nan()));
    assert_eq!(parsed(b"#t\r\n"), Reply::Boolean(true));
    assert_eq!(parsed(b"#f\r\n"), Reply::Boolean(false));
    assert_eq!(
        parsed(b"(-123456789012345678901234567890\r\n"),
        Reply::BigNumber("-123456789012345678901234567890".into())
    );
    assert_eq!(
        parsed(b"=15\r\ntxt:Some string\r\n"),
        Reply::Verbatim {
            format: "txt".into(),
            text: b"Some string".to_vec()
        }
    );
    assert_eq!(
        parsed(b"!21\r\nSYNTAX invalid syntax\r\n"),
        Reply::BulkError("SYNTAX invalid syntax".into())
    );
}

#[test]
fn nested_aggregates_and_a_map_of_arrays_parse_to_trees() {
    assert_eq!(
        parsed(b"*3\r\n:1\r\n*2\r\n+a\r\n*0\r\n$-1\r\n"),
        Reply::Array(vec![
            Reply::Integer(1),
            Reply::Array(vec![simple("a"), Reply::Array(vec![])]),
            Reply::Null,
        ])
    );
    assert_eq!(
        parsed(b"%2\r\n+a\r\n*2\r\n:1\r\n:2\r\n+b\r\n*0\r\n"),
        Reply::Map(vec![
            (
                simple("a"),
                Reply::Array(vec![Reply::Integer(1), Reply::Integer(2)])
            ),
            (simple("b"), Reply::Array(vec![])),
        ])
    );
    assert_eq!(
        parsed(b"~2\r\n+x\r\n#f\r\n"),
        Reply::Set(vec![simple("x"), Reply::Boolean(false)])
    );
    assert_eq!(
        parsed(b">2\r\n+message\r\n$2\r\nhi\r\n"),
        Reply::Push(vec![simple("message"), bulk("hi")])
    );
}

#[test]
fn attributes_are_dropped_wherever_they_appear() {
    assert_eq!(
        parsed(b"|1\r\n+key-popularity\r\n%1\r\n$1\r\na\r\n,0.19\r\n*2\r\n:1\r\n:2\r\n"),
        Reply::Array(vec![Reply::Integer(1), Reply::Integer(2)])
    );
    assert_eq!(
        parsed(b"*2\r\n|1\r\n+ttl\r\n:3600\r\n:1\r\n|0\r\n:2\r\n"),
        Reply::Array(vec![Reply::Integer(1), Reply::Integer(2)])
    );
    assert_eq!(
        parsed(b"%1\r\n|1\r\n+a\r\n+b\r\n+k\r\n|1\r\n+c\r\n+d\r\n+v\r\n"),
        Reply::Map(vec![(simple("k"), simple("v"))])
    );
}

#[test]
fn values_the_framer_accepts_but_cannot_be_represented_are_errors() {
    assert!(matches!(
        parse(b":99999999999999999999\r\n", &Limits::default()),
        Err(DecodeError::Protocol { offset: 1, .. })
    ));
    assert!(matches!(
        parse(b",abc\r\n", &Limits::default()),
        Err(DecodeError::Protocol { .. })
    ));
    assert!(matches!(
        parse(b"*1\r\n,\r\n", &Limits::default()),
        Err(DecodeError::Protocol { offset: 5, .. })
    ));
}

#[test]
fn incomplete_replies_parse_to_none_and_trailing_bytes_are_left() {
    assert_eq!(parse(b"*2\r\n+a\r\n", &Limits::default()), Ok(None));
    assert_eq!(
        parse(b"+a\r\n+b\r\n", &Limits::default()),
        Ok(Some((simple("a"), 4)))
    );
}

#[test]
fn encode_command_round_trips_through_parse() {
    let mut buf = BytesMut::new();
    encode_command(&mut buf, &[b"SET", b"k\r\ney", b"", b"\xff\x00"]);
    assert_eq!(
        parsed(&buf),
        Reply::Array(vec![
            bulk("SET"),
            bulk("k\r\ney"),
            bulk(""),
            Reply::Bulk(vec![0xff, 0]),
        ])
    );
}

#[test]
fn helpers_extract_strings_integers_and_errors() {
    assert_eq!(bulk("abc").as_bytes(), Some(&b"abc"[..]));
    assert_eq!(simple("OK").as_str(), Some("OK"));
    assert_eq!(Reply::Bulk(vec![0xff]).as_str(), None);
    assert_eq!(Reply::Integer(3).as_str(), None);
    assert_eq!(Reply::Integer(3).as_int(), Some(3));
    assert_eq!(bulk("1024").as_int(), Some(1024));
    assert_eq!(Reply::BigNumber("-5".into()).as_int(), Some(-5));
    assert_eq!(bulk("x").as_int(), None);
    assert!(Reply::Error("ERR x".into()).is_error());
    assert!(Reply::BulkError("ERR x".into()).is_error());
    assert!(!simple("ERR").is_error());
    assert_eq!(
        Reply::Error("NOAUTH needed".into()).error_message(),
        Some("NOAUTH needed")
    );
    assert_eq!(bulk("x").error_message(), None);
}

/// Test-only encoder: writes `reply` as RESP3, putting an attribute before each
/// value whose preorder index has its flag set in `attrs` (cycled).
fn encode(reply: &Reply, out: &mut Vec<u8>, attrs: &[bool], index: &mut usize) {
    if attrs.get(*index % attrs.len().max(1)) == Some(&true) {
        out.extend_from_slice(b"|1\r\n+meta\r\n*1\r\n:1\r\n");
    }
    *index += 1;
    let blob = |out: &mut Vec<u8>, tag: u8, bytes: &[u8]| {
        out.push(tag);
        out.extend_from_slice(format!("{}\r\n", bytes.len()).as_bytes());
        out.extend_from_slice(bytes);
        out.extend_from_slice(b"\r\n");
    };
    let line = |out: &mut Vec<u8>, tag: u8, text: &str| {
        out.push(tag);
        out.extend_from_slice(text.as_bytes());
        out.extend_from_slice(b"\r\n");
    };
    let mut list = |out: &mut Vec<u8>, tag: u8, items: &[Reply]| {
        line(out, tag, &items.len().to_string());
        for item in items {
            encode(item, out, attrs, index);
        }
    };
    match reply {
        Reply::Simple(s) => line(out, b'+', s),
        Reply::Error(s) => line(out, b'-', s),
        Reply::Integer(n) => line(out, b':', &n.to_string()),
        Reply::Bulk(b) => blob(out, b'$', b),
        Reply::Null => line(out, b'_', ""),
        Reply::Array(items) => list(out, b'*', items),
        Reply::Set(items) => list(out, b'~', items),
        Reply::Push(items) => list(out, b'>', items),
        Reply::Map(pairs) => {
            line(out, b'%', &pairs.len().to_string());
            for (key, value) in pairs {
                encode(key, out, attrs, index);
                encode(value, out, attrs, index);
            }
        }
        Reply::Double(d) => line(out, b',', &d.to_string()),
        Reply::Boolean(b) => line(out, b'#', if *b { "t" } else { "f" }),
        Reply::BigNumber(n) => line(out, b'(', n),
        Reply::Verbatim { format, text } => {
            blob(out, b'=', &[format.as_bytes(), b":", text].concat());
        }
        Reply::BulkError(s) => blob(out, b'!', s.as_bytes()),
    }
}

fn encoded(reply: &Reply, attrs: &[bool]) -> Vec<u8> {
    let mut out = Vec::new();
    encode(reply, &mut out, attrs, &mut 0);
    out
}

fn kind_of(reply: &Reply) -> FrameKind {
    match reply {
        Reply::Simple(_) => FrameKind::Simple,
        Reply::Error(_) => FrameKind::Error,
        Reply::Integer(_) => FrameKind::Integer,
        Reply::Bulk(_) => FrameKind::Bulk,
        Reply::Null => FrameKind::Null,
        Reply::Array(_) => FrameKind::Array,
        Reply::Map(_) => FrameKind::Map,
        Reply::Set(_) => FrameKind::Set,
        Reply::Push(_) => FrameKind::Push,
        Reply::Double(_) => FrameKind::Double,
        Reply::Boolean(_) => FrameKind::Boolean,
        Reply::BigNumber(_) => FrameKind::BigNumber,
        Reply::Verbatim { .. } => FrameKind::Verbatim,
        Reply::BulkError(_) => FrameKind::BulkError,
    }
}

fn leaf() -> impl Strategy<Value = Reply> {
    prop_oneof![
        "[^\r\n]{0,12}".prop_map(Reply::Simple),
        "[A-Z]{1,9}( [^\r\n]{0,12})?".prop_map(Reply::Error),
        any::<i64>().prop_map(Reply::Integer),
        proptest::collection::vec(any::<u8>(), 0..24).prop_map(Reply::Bulk),
        Just(Reply::Null),
        prop_oneof![
            any::<f64>().prop_filter("NaN never equals itself", |d| !d.is_nan()),
            Just(f64::INFINITY),
            Just(f64::NEG_INFINITY),
        ]
        .prop_map(Reply::Double),
        any::<bool>().prop_map(Reply::Boolean),
        "-?[1-9][0-9]{0,40}|0".prop_map(Reply::BigNumber),
        ("[a-z]{3}", proptest::collection::vec(any::<u8>(), 0..24))
            .prop_map(|(format, text)| Reply::Verbatim { format, text }),
        "[A-Z]{1,9} .{0,12}".prop_map(Reply::BulkError),
    ]
}

fn tree() -> impl Strategy<Value = Reply> {
    leaf().prop_recursive(5, 48, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Reply::Array),
            proptest::collection::vec((inner.clone(), inner.clone()), 0..4).prop_map(Reply::Map),
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Reply::Set),
            proptest::collection::vec(inner, 0..6).prop_map(Reply::Push),
        ]
    })
}

/// Limits small enough that mutated inputs hit every limit branch.
const TINY: Limits = Limits {
    max_bulk_bytes: 16,
    max_depth: 3,
    max_line_bytes: 16,
    max_elements: 4,
};

proptest! {
    #[test]
    fn random_trees_frame_exactly_and_round_trip_at_every_split(
        reply in tree(),
        attrs in proptest::collection::vec(prop::bool::weighted(0.15), 0..8),
        split in any::<prop::sample::Index>(),
        trailing in proptest::collection::vec(any::<u8>(), 0..8),
    ) {
        let bytes = encoded(&reply, &attrs);
        let limits = Limits::default();
        let cut = split.index(bytes.len());
        prop_assert_eq!(frame(&bytes[..cut], &limits), Ok(None));
        prop_assert_eq!(parse(&bytes[..cut], &limits), Ok(None));
        let expected = Frame { len: bytes.len(), kind: kind_of(&reply) };
        prop_assert_eq!(frame(&bytes, &limits), Ok(Some(expected)));
        prop_assert_eq!(parse(&bytes, &limits), Ok(Some((reply.clone(), bytes.len()))));
        let mut followed = bytes.clone();
        followed.extend_from_slice(&trailing);
        prop_assert_eq!(frame(&followed, &limits), Ok(Some(expected)));
        prop_assert_eq!(parse(&followed, &limits), Ok(Some((reply, bytes.len()))));
    }

    #[test]
    fn a_framer_fed_in_pieces_frames_exactly_what_one_call_frames(
        reply in tree(),
        attrs in proptest::collection::vec(prop::bool::weighted(0.15), 0..8),
        cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..6),
        trailing in proptest::collection::vec(any::<u8>(), 0..8),
    ) {
        let mut bytes = encoded(&reply, &attrs);
        let len = bytes.len();
        bytes.extend_from_slice(&trailing);
        let mut cuts: Vec<usize> = cuts.iter().map(|c| c.index(len)).collect();
        cuts.sort_unstable();
        for limits in [Limits::default(), TINY] {
            let mut framer = crate::resp::Framer::new();
            for &cut in &cuts {
                let partial = framer.resume(&bytes[..cut], &limits);
                // An error may come early (TINY limits); then it is the one-shot error too.
                if partial != Ok(None) {
                    prop_assert_eq!(partial, frame(&bytes[..cut], &limits));
                    framer = crate::resp::Framer::new();
                }
            }
            prop_assert_eq!(framer.resume(&bytes, &limits), frame(&bytes, &limits));
            // After a frame it starts over: the same bytes frame the same way again.
            prop_assert_eq!(framer.resume(&bytes, &limits), frame(&bytes, &limits));
        }
    }

    #[test]
    fn mutated_encodings_never_panic(
        reply in tree(),
        attrs in proptest::collection::vec(any::<bool>(), 0..4),
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0..3u8), 1..6),
    ) {
        let mut bytes = encoded(&reply, &attrs);
        for (at, byte, op) in edits {
            let i = at.index(bytes.len() + 1);
            match op {
                0 if i < bytes.len() => bytes[i] = byte,
                1 if i < bytes.len() => { bytes.remove(i); }
                _ => bytes.insert(i, byte),
            }
        }
        for limits in [Limits::default(), TINY] {
            let framed = frame(&bytes, &limits);
            if let Ok(Some(f)) = framed {
                prop_assert!(f.len <= bytes.len());
            }
            let _ = parse(&bytes, &limits);
            let _ = error_kind_of(&bytes, &limits);
        }
    }

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
        for limits in [Limits::default(), TINY] {
            let _ = frame(&bytes, &limits);
            let _ = parse(&bytes, &limits);
            let _ = error_kind(&bytes);
        }
    }

    #[test]
    fn random_bytes_after_a_valid_type_byte_never_panic(
        tag in prop::sample::select(b"+-:$*_,#!=(%~>|".to_vec()),
        rest in proptest::collection::vec(prop::sample::select(b"0123456789-+\r\n:tf*$".to_vec()), 0..32),
    ) {
        let bytes = [&[tag][..], &rest].concat();
        for limits in [Limits::default(), TINY] {
            let _ = frame(&bytes, &limits);
            let _ = parse(&bytes, &limits);
        }
    }
}

/// Runs `error_kind` on a frame, as callers do.
fn error_kind_of<'a>(bytes: &'a [u8], limits: &Limits) -> &'a [u8] {
    match frame(bytes, limits) {
        Ok(Some(f)) => error_kind(&bytes[..f.len]),
        _ => &[],
    }
}
