//! A command encoded once, written per request by copying its static bytes, patching
//! its fixed-width digit fields in place, and (for `__data__`) writing the value's
//! `$len` header and a slice of the value buffer: no allocation, no re-encoding.
//!
//! Arguments are first read into [`Token`]s (`tokens.rs`): literal bytes, a digit field
//! (a key index in a fixed number of digits) or the value. Placeholders in typed commands:
//! `__rand_int__` (the key index in 12 digits, as redis-benchmark), `__key__`
//! (`--key-prefix` and the index in the key format's width), `__data__` (a value),
//! `__sha_N__` (the SHA1 of the N-th `--script-load`). Any other `__word__` is an error.

mod tokens;

use bytes::BytesMut;

use crate::resp::encode_inline;

pub use self::tokens::{Placeholders, RAND_INT_WIDTH, Token, rand_int_tokens};

/// Where a request's per-request fields come from (the sampler, in the driver).
pub trait Fill {
    /// The next key index.
    fn index(&mut self) -> u64;
    /// The size of the next value.
    fn value_len(&mut self) -> usize;
    /// A value of `len` bytes.
    fn value(&mut self, len: usize) -> &[u8];
}

/// A run of a template's output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Piece {
    /// `bytes[start..end]`, with the digit fields that fall inside it patched.
    Static { start: usize, end: usize },
    /// `$<fixed + value length>\r\n` of an argument holding `__data__`; draws the length.
    Header { fixed: usize },
    /// The value whose length the last header drew.
    Value,
}

/// Whether a command named `name` (lower case) reads one value, whose reply is a bulk
/// string when the value is there and a null when it is not (a miss): memtier's hits and
/// misses. `MGET` and `HMGET` are not counted: their reply is an array, and counting the
/// null elements in it would take the reply framer's per-element path apart from the
/// counts it keeps now. Commands that remove what they return (`GETDEL`, `LPOP`) are
/// writes, not counted.
pub fn counts_hits(name: &str) -> bool {
    matches!(name, "get" | "getex" | "hget" | "lindex" | "zscore")
}

/// A pre-encoded request and where its per-request fields sit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    /// Command name in lower case (`set`), as `INFO commandstats` names it; mixes make names
    /// unique (`get_2`).
    pub name: String,
    /// The command as the server names it (`get` for a mix's `get_2`).
    pub server_name: String,
    /// Whether its replies are counted as hits and misses: a read of one value (see the
    /// function `counts_hits` here), decided from the command's name once, when it is built.
    pub counts_hits: bool,
    /// The static bytes, every digit field as zeros.
    bytes: Vec<u8>,
    /// What to write, in order.
    pieces: Vec<Piece>,
    /// Offsets in `bytes` and widths of the digit fields, ascending.
    fields: Vec<(usize, usize)>,
    /// `bytes[start..end]`: the key a cluster routes by (the first argument with a key
    /// field, else the first argument), when the command has one.
    route: Option<(usize, usize)>,
}

impl Template {
    /// Encodes `argv` as a RESP array; with `randomize`, each `__rand_int__` becomes a
    /// 12-digit field (other text is sent as typed, as redis-benchmark does).
    pub fn command(argv: &[&[u8]], randomize: bool) -> Self {
        let tokens: Vec<Vec<Token>> = argv
            .iter()
            .map(|arg| rand_int_tokens(arg, randomize))
            .collect();
        Template::build(&tokens)
    }

    /// Encodes arguments made of tokens as a RESP array; the name is the first argument's text.
    pub fn build(argv: &[Vec<Token>]) -> Self {
        let mut b = Builder::default();
        b.bytes.push(b'*');
        b.bytes.extend_from_slice(argv.len().to_string().as_bytes());
        b.bytes.extend_from_slice(b"\r\n");
        let mut route = None;
        let mut fallback_route = None;
        for (i, arg) in argv.iter().enumerate() {
            let fixed: usize = arg
                .iter()
                .map(|t| match t {
                    Token::Lit(l) => l.len(),
                    Token::Digits(w) => *w,
                    Token::Data => 0,
                })
                .sum();
            if arg.contains(&Token::Data) {
                b.cut();
                b.pieces.push(Piece::Header { fixed });
            } else {
                b.bytes.push(b'$');
                b.bytes.extend_from_slice(fixed.to_string().as_bytes());
                b.bytes.extend_from_slice(b"\r\n");
            }
            let arg_start = b.bytes.len();
            for token in arg {
                match token {
                    Token::Lit(l) => b.bytes.extend_from_slice(l),
                    Token::Digits(w) => {
                        b.fields.push((b.bytes.len(), *w));
                        b.bytes.resize(b.bytes.len() + w, b'0');
                    }
                    Token::Data => {
                        b.cut();
                        b.pieces.push(Piece::Value);
                    }
                }
            }
            if i > 0 && !arg.contains(&Token::Data) {
                let span = Some((arg_start, b.bytes.len()));
                if route.is_none() && arg.iter().any(|t| matches!(t, Token::Digits(_))) {
                    route = span;
                }
                fallback_route = fallback_route.or(span);
            }
            b.bytes.extend_from_slice(b"\r\n");
        }
        b.cut();
        let name = argv
            .first()
            .map(|arg| {
                let text: Vec<u8> = arg
                    .iter()
                    .flat_map(|t| {
                        if let Token::Lit(l) = t {
                            l.clone()
                        } else {
                            Vec::new()
                        }
                    })
                    .collect();
                String::from_utf8_lossy(&text).to_ascii_lowercase()
            })
            .unwrap_or_default();
        Template {
            counts_hits: counts_hits(&name),
            server_name: name.clone(),
            name,
            bytes: b.bytes,
            pieces: b.pieces,
            fields: b.fields,
            route: route.or(fallback_route),
        }
    }

    /// An inline command (`PING\r\n`), as redis-benchmark's PING_INLINE sends.
    pub fn inline(line: &[u8]) -> Self {
        let mut buf = BytesMut::new();
        encode_inline(&mut buf, line);
        let name = line
            .split(|&b| b == b' ')
            .next()
            .map(|n| String::from_utf8_lossy(n).to_ascii_lowercase())
            .unwrap_or_default();
        let bytes = buf.to_vec();
        let pieces = vec![Piece::Static {
            start: 0,
            end: bytes.len(),
        }];
        Template {
            counts_hits: counts_hits(&name),
            server_name: name.clone(),
            name,
            bytes,
            pieces,
            fields: Vec::new(),
            route: None,
        }
    }

    /// Appends one request to `buf`, drawing key indices and values from `fill` in order.
    #[inline]
    pub fn write<F: Fill>(&self, buf: &mut BytesMut, fill: &mut F) {
        // A request with nothing drawn per request is its bytes: one copy, where the loop
        // below would walk its pieces for the same result, per request on the hot path
        // (see bench/).
        if let Some(bytes) = self.fixed_bytes() {
            buf.extend_from_slice(bytes);
            return;
        }
        self.write_pieces(buf, fill);
    }

    /// Every request's bytes, when nothing in them is drawn per request (no key field, no
    /// value): what [`write`](Self::write) writes, whatever it is given to draw from.
    #[inline]
    pub fn fixed_bytes(&self) -> Option<&[u8]> {
        match self.pieces[..] {
            [Piece::Static { start, end }] if self.fields.is_empty() => {
                Some(&self.bytes[start..end])
            }
            _ => None,
        }
    }

    /// [`write`](Self::write) piece by piece, patching the drawn fields; kept out of line so
    /// that `write`'s one-copy case inlines into the driver's loop.
    #[inline(never)]
    fn write_pieces<F: Fill>(&self, buf: &mut BytesMut, fill: &mut F) {
        let mut fields = self.fields.iter().peekable();
        let mut value_len = 0;
        for piece in &self.pieces {
            match *piece {
                Piece::Static { start, end } => {
                    let base = buf.len();
                    buf.extend_from_slice(&self.bytes[start..end]);
                    while let Some(&&(at, width)) = fields.peek() {
                        if at >= end {
                            break;
                        }
                        let from = base + at - start;
                        write_padded(&mut buf[from..from + width], fill.index());
                        fields.next();
                    }
                }
                Piece::Header { fixed } => {
                    value_len = fill.value_len();
                    buf.extend_from_slice(b"$");
                    write_decimal(buf, fixed + value_len);
                    buf.extend_from_slice(b"\r\n");
                }
                Piece::Value => buf.extend_from_slice(fill.value(value_len)),
            }
        }
    }

    /// The cluster hash slot of this command's key when every key field holds `index`;
    /// `None` for a command without a key (`PING`).
    pub fn slot(&self, index: u64) -> Option<u16> {
        let (start, end) = self.route?;
        // Keys are short: render into the stack, and only a long one onto the heap.
        let mut stack = [0u8; 256];
        let mut heap = Vec::new();
        let key: &mut [u8] = if end - start <= stack.len() {
            &mut stack[..end - start]
        } else {
            heap.resize(end - start, 0);
            &mut heap
        };
        self.render_key(key, index);
        Some(crate::net::cluster::key_slot(key))
    }

    /// The key this command reads or writes (the argument [`slot`](Self::slot) routes by)
    /// when every key field holds `index`; `None` for a command without a key.
    pub fn key(&self, index: u64) -> Option<Vec<u8>> {
        let (start, end) = self.route?;
        let mut key = vec![0; end - start];
        self.render_key(&mut key, index);
        Some(key)
    }

    /// Writes the routed argument into `key` (its length) with every key field in it
    /// holding `index`.
    fn render_key(&self, key: &mut [u8], index: u64) {
        let Some((start, end)) = self.route else {
            return;
        };
        key.copy_from_slice(&self.bytes[start..end]);
        for &(at, width) in self
            .fields
            .iter()
            .filter(|&&(at, _)| at >= start && at < end)
        {
            write_padded(&mut key[at - start..at - start + width], index);
        }
    }

    /// Whether any field is drawn per request.
    pub fn has_random_fields(&self) -> bool {
        !self.fields.is_empty() || self.pieces.contains(&Piece::Value)
    }

    /// Whether the command has a key field of `width` digits (a `__key__` or `__rand_int__`).
    pub fn has_field_of_width(&self, width: usize) -> bool {
        self.fields.iter().any(|&(_, w)| w == width)
    }

    /// Whether the command has a `__data__` value.
    pub fn has_value(&self) -> bool {
        self.pieces.contains(&Piece::Value)
    }

    /// The most bytes one request can take when no value is above `largest_value` bytes:
    /// its static bytes, and for each value the value and its `$len` header.
    #[cfg(test)]
    pub(crate) fn most_bytes(&self, largest_value: usize) -> u64 {
        let values = self.pieces.iter().filter(|p| **p == Piece::Value).count() as u64;
        // `$`, up to 20 digits, CRLF; the value's own CRLF is among the static bytes.
        let per_value = largest_value as u64 + 23;
        self.bytes.len() as u64 + values.saturating_mul(per_value)
    }
}

#[derive(Default)]
struct Builder {
    bytes: Vec<u8>,
    pieces: Vec<Piece>,
    fields: Vec<(usize, usize)>,
    /// Start of the static run not yet made a piece.
    open: usize,
}

impl Builder {
    /// Ends the current static run (if any bytes) as a piece.
    fn cut(&mut self) {
        if self.bytes.len() > self.open {
            self.pieces.push(Piece::Static {
                start: self.open,
                end: self.bytes.len(),
            });
            self.open = self.bytes.len();
        }
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

/// Appends `n` in decimal (a stack buffer: nothing allocated).
#[inline]
fn write_decimal(buf: &mut BytesMut, mut n: usize) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    buf.extend_from_slice(&digits[i..]);
}

#[cfg(test)]
mod tests;
