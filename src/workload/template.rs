//! A command encoded once, with the byte offsets of its random fields, written per
//! request by copying and patching digits in place (no allocation, no re-encoding).

use bytes::BytesMut;

use crate::resp::{encode_command, encode_inline};

/// The placeholder replaced by a random key index when `-r` is given.
pub const RAND_INT: &[u8] = b"__rand_int__";
/// Digits a replaced placeholder has (redis-benchmark's zero-padded width).
pub const RAND_INT_WIDTH: usize = 12;

/// A pre-encoded request and where its random fields sit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    /// Command name in lower case (`set`), as `INFO commandstats` names it.
    pub name: String,
    /// The request's bytes with every random field as twelve zeros.
    bytes: Vec<u8>,
    /// Offsets in `bytes` of each 12-digit random field.
    rand_fields: Vec<usize>,
}

impl Template {
    /// Encodes `argv` as a RESP array; with `randomize`, each `__rand_int__` becomes a 12-digit field.
    pub fn command(argv: &[&[u8]], randomize: bool) -> Self {
        let zeros = [b'0'; RAND_INT_WIDTH];
        let patched: Vec<Vec<u8>> =
            argv.iter().map(|arg| if randomize { replace_all(arg, RAND_INT, &zeros) } else { arg.to_vec() }).collect();
        let refs: Vec<&[u8]> = patched.iter().map(Vec::as_slice).collect();
        let mut buf = BytesMut::new();
        encode_command(&mut buf, &refs);
        let bytes = buf.to_vec();
        // Find the fields in the encoded bytes by the positions of the placeholders in
        // the arguments, not by searching for zeros (an argument may contain zeros).
        let mut rand_fields = Vec::new();
        if randomize {
            let mut offset = 0usize;
            let header_len = digits(argv.len()) + 3;
            offset += header_len;
            for arg in argv {
                let patched_len = arg.len() - count(arg, RAND_INT) * (RAND_INT.len() - RAND_INT_WIDTH);
                offset += digits(patched_len) + 3; // "$" len "\r\n"
                let mut start = 0;
                let mut patched_pos = 0;
                while let Some(found) = find(&arg[start..], RAND_INT) {
                    let pos = patched_pos + found;
                    rand_fields.push(offset + pos);
                    patched_pos = pos + RAND_INT_WIDTH;
                    start += found + RAND_INT.len();
                }
                offset += patched_len + 2;
            }
        }
        let name = argv.first().map(|n| String::from_utf8_lossy(n).to_ascii_lowercase()).unwrap_or_default();
        Template { name, bytes, rand_fields }
    }

    /// An inline command (`PING\r\n`), as redis-benchmark's PING_INLINE sends.
    pub fn inline(line: &[u8]) -> Self {
        let mut buf = BytesMut::new();
        encode_inline(&mut buf, line);
        let name = line.split(|&b| b == b' ').next().map(|n| String::from_utf8_lossy(n).to_ascii_lowercase()).unwrap_or_default();
        Template { name, bytes: buf.to_vec(), rand_fields: Vec::new() }
    }

    /// Appends one request to `buf`, each random field drawn by `next_index` (below the keyspace).
    #[inline]
    pub fn write(&self, buf: &mut BytesMut, mut next_index: impl FnMut() -> u64) {
        let start = buf.len();
        buf.extend_from_slice(&self.bytes);
        for &field in &self.rand_fields {
            let at = start + field;
            write_padded(&mut buf[at..at + RAND_INT_WIDTH], next_index());
        }
    }

    /// Bytes one request takes.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// True for a template with no bytes (never built by this module).
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// Whether any field is random.
    pub fn has_random_fields(&self) -> bool {
        !self.rand_fields.is_empty()
    }
}

/// Writes `value` as zero-padded decimal into `field` (hand-written: once per field per
/// request on the hot path, and a formatter would need a temporary buffer).
#[inline]
fn write_padded(field: &mut [u8], mut value: u64) {
    for slot in field.iter_mut().rev() {
        *slot = b'0' + (value % 10) as u8;
        value /= 10;
    }
}

fn digits(mut n: usize) -> usize {
    let mut d = 1;
    while n >= 10 {
        n /= 10;
        d += 1;
    }
    d
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn count(haystack: &[u8], needle: &[u8]) -> usize {
    let mut n = 0;
    let mut start = 0;
    while let Some(found) = find(&haystack[start..], needle) {
        n += 1;
        start += found + needle.len();
    }
    n
}

fn replace_all(haystack: &[u8], needle: &[u8], with: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(haystack.len());
    let mut start = 0;
    while let Some(found) = find(&haystack[start..], needle) {
        out.extend_from_slice(&haystack[start..start + found]);
        out.extend_from_slice(with);
        start += found + needle.len();
    }
    out.extend_from_slice(&haystack[start..]);
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn random_fields_are_patched_in_place_with_twelve_digits() {
        let t = Template::command(&[b"SET", b"key:__rand_int__", b"v__rand_int__x"], true);
        let mut buf = BytesMut::new();
        let mut values = [42u64, 999_999].into_iter();
        t.write(&mut buf, || values.next().unwrap());
        assert_eq!(&buf[..], b"*3\r\n$3\r\nSET\r\n$16\r\nkey:000000000042\r\n$14\r\nv000000999999x\r\n");
        assert_eq!(t.name, "set");
    }

    #[test]
    fn without_keyspace_the_placeholder_is_sent_as_typed() {
        let t = Template::command(&[b"GET", b"key:__rand_int__"], false);
        let mut buf = BytesMut::new();
        t.write(&mut buf, || unreachable!());
        assert_eq!(&buf[..], b"*2\r\n$3\r\nGET\r\n$16\r\nkey:__rand_int__\r\n");
    }

    #[test]
    fn zeros_in_arguments_are_not_taken_for_fields() {
        let t = Template::command(&[b"SET", b"000000000000", b"__rand_int__"], true);
        let mut buf = BytesMut::new();
        t.write(&mut buf, || 7);
        assert_eq!(&buf[..], b"*3\r\n$3\r\nSET\r\n$12\r\n000000000000\r\n$12\r\n000000000007\r\n");
    }

    #[test]
    fn long_argument_lists_offset_fields_correctly() {
        let mut argv: Vec<Vec<u8>> = vec![b"MSET".to_vec()];
        for _ in 0..10 {
            argv.push(b"key:__rand_int__".to_vec());
            argv.push(b"xxx".to_vec());
        }
        let refs: Vec<&[u8]> = argv.iter().map(Vec::as_slice).collect();
        let t = Template::command(&refs, true);
        let mut buf = BytesMut::new();
        let mut n = 0;
        t.write(&mut buf, || {
            n += 1;
            n
        });
        let text = String::from_utf8(buf.to_vec()).unwrap();
        assert!(text.starts_with("*21\r\n$4\r\nMSET\r\n$16\r\nkey:000000000001\r\n$3\r\nxxx\r\n"), "{text}");
        assert!(text.contains("key:000000000010"), "{text}");
    }

    #[test]
    fn inline_commands_end_in_crlf() {
        let t = Template::inline(b"PING");
        let mut buf = BytesMut::new();
        t.write(&mut buf, || 0);
        assert_eq!(&buf[..], b"PING\r\n");
        assert_eq!(t.name, "ping");
    }
}
