//! Unit tests of `resp/token/mod.rs`.

#![allow(clippy::unwrap_used)]

use super::super::{Frame, frame};
use super::*;

fn framed(bytes: &[u8]) -> Result<Option<Frame>, DecodeError> {
    frame(bytes, &Limits::default())
}

#[test]
fn a_bulk_length_of_ten_to_the_twelfth_is_rejected_before_its_payload() {
    assert_eq!(
        framed(b"$1000000000000\r\n"),
        Err(DecodeError::BulkTooLarge {
            offset: 0,
            len: 1_000_000_000_000,
            limit: 512 * 1024 * 1024
        })
    );
    // Even before the length line ends, once it is already over the limit.
    assert!(matches!(
        framed(b"$1000000000000"),
        Err(DecodeError::BulkTooLarge { .. })
    ));
    assert!(matches!(
        framed(b"*1\r\n=99999999999999999999999\r\n"),
        Err(DecodeError::BulkTooLarge {
            offset: 4,
            len: u64::MAX,
            ..
        })
    ));
}

#[test]
fn a_bulk_exactly_at_the_limit_is_accepted() {
    let limits = Limits {
        max_bulk_bytes: 3,
        ..Limits::default()
    };
    assert!(frame(b"$3\r\nabc\r\n", &limits).unwrap().is_some());
    assert!(matches!(
        frame(b"$4\r\n", &limits),
        Err(DecodeError::BulkTooLarge {
            len: 4,
            limit: 3,
            ..
        })
    ));
}

#[test]
fn a_hundred_kib_without_crlf_is_a_line_too_long() {
    let mut hostile = b"+".to_vec();
    hostile.extend(std::iter::repeat_n(b'a', 100 * 1024));
    assert_eq!(
        framed(&hostile),
        Err(DecodeError::LineTooLong {
            offset: 1,
            limit: 64 * 1024
        })
    );
}

#[test]
fn a_line_exactly_at_the_length_limit_is_accepted() {
    let limits = Limits {
        max_line_bytes: 4,
        ..Limits::default()
    };
    assert!(frame(b"+abcd\r\n", &limits).unwrap().is_some());
    assert_eq!(frame(b"+abcd", &limits), Ok(None));
    assert!(matches!(
        frame(b"+abcde", &limits),
        Err(DecodeError::LineTooLong { .. })
    ));
}

#[test]
fn a_bulk_without_crlf_after_its_payload_is_a_protocol_error() {
    assert_eq!(
        framed(b"$3\r\nabcXY"),
        Err(DecodeError::Protocol {
            offset: 7,
            byte: b'X',
            reason: "expected CRLF after the bulk payload"
        })
    );
    assert!(matches!(
        framed(b"$3\r\nabc\rX"),
        Err(DecodeError::Protocol { offset: 8, .. })
    ));
}

#[test]
fn negative_lengths_other_than_minus_one_are_protocol_errors() {
    for bytes in [
        &b"$-2\r\n"[..],
        b"$-12\r\n",
        b"*-0\r\n",
        b"$-\r\n",
        b"%-1\r\n",
        b"~-1\r\n",
        b">-1\r\n",
        b"!-1\r\n",
        b"=-1\r\n",
        b"|-1\r\n",
    ] {
        assert!(
            matches!(framed(bytes), Err(DecodeError::Protocol { .. })),
            "{:?}",
            bytes.escape_ascii().to_string()
        );
    }
}

#[test]
fn lengths_that_are_not_plain_digits_then_crlf_are_protocol_errors() {
    for bytes in [
        &b"$\r\n"[..],
        b"$+3\r\nabc\r\n",
        b"$ 3\r\n",
        b"$3 \r\n",
        b"$3x\r\n",
        b"$03\r\nabc\r\n",
        b"*1\n:1\r\n",
        b"$3\rXabc\r\n",
        b"*a\r\n",
        b"*00\r\n",
    ] {
        assert!(
            matches!(framed(bytes), Err(DecodeError::Protocol { .. })),
            "{:?}",
            bytes.escape_ascii().to_string()
        );
    }
}

#[test]
fn garbage_bytes_are_protocol_errors() {
    for bytes in [
        &b"HTTP/1.1 400 Bad Request\r\n"[..],
        b"\x16\x03\x01",
        b"\0",
        b"*1\r\n?\r\n",
        b"$?\r\n",
        b"+OK\n",
        b"+O\nK\r\n",
        b":12a\r\n",
        b":\r\n",
        b":-\r\n",
        b"_x\r\n",
        b"#x\r\n",
        b"#tf\r\n",
        b"(1.5\r\n",
        b"=3\r\ntxt\r\n",
        b"=5\r\ntxt_x\r\n",
    ] {
        assert!(
            matches!(framed(bytes), Err(DecodeError::Protocol { .. })),
            "{:?}",
            bytes.escape_ascii().to_string()
        );
    }
}

#[test]
fn an_unknown_type_byte_reports_its_offset_and_value() {
    assert_eq!(
        framed(b"*2\r\n+a\r\nX"),
        Err(DecodeError::Protocol {
            offset: 8,
            byte: b'X',
            reason: "not a RESP type byte"
        })
    );
}

#[test]
fn aggregate_counts_above_the_limit_are_rejected() {
    let limits = Limits {
        max_elements: 10,
        ..Limits::default()
    };
    assert_eq!(
        frame(b"*11\r\n", &limits),
        Err(DecodeError::TooManyElements {
            offset: 0,
            count: 11,
            limit: 10
        })
    );
    assert!(matches!(
        frame(b"%11\r\n", &limits),
        Err(DecodeError::TooManyElements { .. })
    ));
    assert!(matches!(
        framed(b"*99999999999999999999999\r\n"),
        Err(DecodeError::TooManyElements {
            count: u64::MAX,
            ..
        })
    ));
    assert_eq!(frame(b"*10\r\n", &limits), Ok(None));
}
