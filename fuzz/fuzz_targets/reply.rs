//! Fuzzes the reply decoder: `resp::frame`, `resp::parse`, `resp::error_kind` and the
//! resumable `resp::Framer` on arbitrary bytes, under the default limits and under
//! tiny ones that every input can reach. None may panic, and they must agree:
//! - `parse` frames exactly what `frame` frames (same length, same verdict);
//! - a `Framer` fed the input in two pieces (split at a point taken from the input)
//!   reaches the same verdict as one call to `frame`;
//! - a frame never claims more bytes than were given, and its first byte is consumed;
//! - a `Framer::scalar_run` frames what `resume` frames reply by reply, and marks its nulls.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tailrate::resp::{self, FrameKind, Framer, Limits};

/// Small enough that short inputs hit every limit branch (bulk, depth, line, count, reply).
const TINY: Limits = Limits { max_bulk_bytes: 16, max_depth: 3, max_line_bytes: 16, max_elements: 4 };

fuzz_target!(|data: &[u8]| {
    // The first byte picks the split point for the resumable framer; the rest is the stream.
    let Some((&split, bytes)) = data.split_first() else { return };
    for limits in [Limits::default(), TINY] {
        let framed = resp::frame(bytes, &limits);
        if let Ok(Some(f)) = framed {
            assert!(f.len > 0 && f.len <= bytes.len(), "frame of {} bytes in {}", f.len, bytes.len());
            // Every strict prefix of a frame is incomplete or (under tiny limits) an error.
            assert!(!matches!(resp::frame(&bytes[..f.len - 1], &limits), Ok(Some(_))), "a frame within a frame");
            let _ = resp::error_kind(&bytes[..f.len]);
        }
        match (resp::parse(bytes, &limits), &framed) {
            (Ok(Some((_, len))), Ok(Some(f))) => assert_eq!(len, f.len),
            (Ok(None), Ok(None)) | (Err(_), Err(_)) => {}
            // The tree may refuse what the framer accepts (a number out of i64 range).
            (Err(_), Ok(Some(_))) => {}
            (parsed, framed) => panic!("parse {parsed:?} vs frame {framed:?}"),
        }
        let cut = usize::from(split) * bytes.len() / 255;
        let mut framer = Framer::new();
        match framer.resume(&bytes[..cut], &limits) {
            Ok(None) => assert_eq!(framer.resume(bytes, &limits), framed, "resumed at {cut}"),
            early => assert_eq!(early, resp::frame(&bytes[..cut], &limits), "prefix of {cut}"),
        }
        let (count, len, nulls) = Framer::new().scalar_run(bytes, usize::MAX, &limits);
        let (mut framer, mut taken) = (Framer::new(), 0);
        for i in 0..count {
            match framer.resume(&bytes[taken..], &limits) {
                Ok(Some(f)) if !matches!(f.kind, FrameKind::Error | FrameKind::BulkError | FrameKind::Push) => {
                    if i < 64 {
                        assert_eq!(nulls >> i & 1 == 1, f.kind == FrameKind::Null, "reply {i} of a scalar run");
                    }
                    taken += f.len;
                }
                other => panic!("reply {i} of a scalar run: {other:?}"),
            }
        }
        assert_eq!(taken, len, "a scalar run of {count} replies");
    }
    let _ = resp::error_kind(bytes);
});
