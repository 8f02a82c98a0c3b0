//! Encoding of client commands: RESP arrays of bulk strings, and inline commands.

use bytes::BytesMut;

/// Widest decimal rendering of a `usize` (`u64::MAX` has 20 digits).
const MAX_DIGITS: usize = 20;

/// Appends `args` to `buf` as a RESP array of bulk strings (`*N\r\n$len\r\narg\r\n...`).
pub fn encode_command(buf: &mut BytesMut, args: &[&[u8]]) {
    // One reservation up front so the loop below never reallocates mid-command.
    buf.reserve(encoded_len(args));
    put_header(buf, b'*', args.len());
    for arg in args {
        put_header(buf, b'$', arg.len());
        buf.extend_from_slice(arg);
        buf.extend_from_slice(b"\r\n");
    }
}

/// Appends `line` followed by CRLF, the inline command form (used for `PING_INLINE`).
pub fn encode_inline(buf: &mut BytesMut, line: &[u8]) {
    buf.reserve(line.len() + 2);
    buf.extend_from_slice(line);
    buf.extend_from_slice(b"\r\n");
}

/// Number of bytes [`encode_command`] appends for `args`.
pub fn encoded_len(args: &[&[u8]]) -> usize {
    let header = 1 + decimal_len(args.len()) + 2;
    args.iter().fold(header, |total, arg| {
        total + 1 + decimal_len(arg.len()) + 2 + arg.len() + 2
    })
}

/// Appends `prefix`, `n` in decimal, and CRLF.
fn put_header(buf: &mut BytesMut, prefix: u8, n: usize) {
    let mut scratch = [0u8; MAX_DIGITS];
    buf.extend_from_slice(&[prefix]);
    buf.extend_from_slice(itoa(n, &mut scratch));
    buf.extend_from_slice(b"\r\n");
}

/// Writes `n` in decimal into the tail of `scratch` and returns the written digits.
///
/// Hand-written because this runs for every argument of every command on the hot
/// path: `format!`/`to_string` would allocate, and `write!` into the buffer goes
/// through the `fmt` machinery, which is measurably slower for tiny numbers.
fn itoa(mut n: usize, scratch: &mut [u8; MAX_DIGITS]) -> &[u8] {
    let mut start = MAX_DIGITS;
    loop {
        start -= 1;
        // `n % 10` is below 10, so the narrowing cannot lose information.
        scratch[start] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    &scratch[start..]
}

/// Number of decimal digits of `n`.
fn decimal_len(mut n: usize) -> usize {
    let mut digits = 1;
    while n >= 10 {
        n /= 10;
        digits += 1;
    }
    digits
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_command_is_an_array_of_bulk_strings() {
        let mut buf = BytesMut::new();
        encode_command(&mut buf, &[b"SET", b"key", b"value"]);
        assert_eq!(&buf[..], b"*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nvalue\r\n");
    }

    #[test]
    fn empty_and_binary_arguments_are_length_prefixed_verbatim() {
        let mut buf = BytesMut::new();
        encode_command(&mut buf, &[b"", b"\r\n\0"]);
        assert_eq!(&buf[..], b"*2\r\n$0\r\n\r\n$3\r\n\r\n\0\r\n");
    }

    #[test]
    fn an_empty_command_is_an_empty_array() {
        let mut buf = BytesMut::new();
        encode_command(&mut buf, &[]);
        assert_eq!(&buf[..], b"*0\r\n");
    }

    #[test]
    fn commands_append_after_existing_bytes() {
        let mut buf = BytesMut::from(&b"xx"[..]);
        encode_command(&mut buf, &[b"PING"]);
        assert_eq!(&buf[..], b"xx*1\r\n$4\r\nPING\r\n");
    }

    #[test]
    fn an_inline_command_is_the_line_and_crlf() {
        let mut buf = BytesMut::new();
        encode_inline(&mut buf, b"PING");
        assert_eq!(&buf[..], b"PING\r\n");
    }

    #[test]
    fn encoded_len_matches_what_encode_command_writes() {
        let big = vec![b'x'; 12_345];
        let cases: [&[&[u8]]; 4] = [&[], &[b""], &[b"GET", b"k"], &[b"SET", b"k", &big]];
        for args in cases {
            let mut buf = BytesMut::new();
            encode_command(&mut buf, args);
            assert_eq!(buf.len(), encoded_len(args));
        }
    }

    #[test]
    fn itoa_writes_every_digit_count_including_zero_and_the_maximum() {
        let mut scratch = [0u8; MAX_DIGITS];
        for n in [0, 9, 10, 99, 100, 123_456_789, usize::MAX] {
            assert_eq!(itoa(n, &mut scratch), n.to_string().as_bytes());
            assert_eq!(decimal_len(n), n.to_string().len());
        }
    }

    #[test]
    fn lengths_of_many_digits_are_written_correctly() {
        let arg = vec![b'a'; 1_000_000];
        let mut buf = BytesMut::new();
        encode_command(&mut buf, &[&arg]);
        assert!(buf.starts_with(b"*1\r\n$1000000\r\naaa"));
        assert!(buf.ends_with(b"a\r\n"));
    }
}
