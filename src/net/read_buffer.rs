//! [`ReadBuffer`]: a connection's received bytes, from the socket read that brought them
//! to the reply framing that takes them.
//!
//! Hand-written rather than a `BytesMut`: its free space is kept initialized (zeroed when
//! the buffer grows, never again), so a read goes straight into it as a `&mut [u8]`
//! (rustix's `recv`, or tokio's `ReadBuf::new` for TLS), with no unsafe code and without
//! tokio's `read_buf` future, which the connection loop would poll twice a batch, once
//! to wait and once to read (see bench/).
//! It starts at one page and grows only when a read fills it, so a connection that only
//! ever sees small replies keeps 4 KB.

/// Size of a new buffer.
const START_BYTES: usize = 4 * 1024;
/// The free space a buffer grows to at most (more only while one reply is longer).
const MAX_FREE_BYTES: usize = 64 * 1024;

/// Bytes read and not yet taken, in a buffer whose free space is initialized.
#[derive(Debug)]
pub(super) struct ReadBuffer {
    /// `[start, end)` are unread; `[end, len)` is free (initialized) space.
    bytes: Vec<u8>,
    start: usize,
    end: usize,
    /// The free space to offer the next read: doubled (up to `MAX_FREE_BYTES`) each
    /// time a read fills all it was offered, as a socket with more to give does.
    want_free: usize,
}

impl ReadBuffer {
    /// An empty buffer of one page.
    pub(super) fn new() -> Self {
        ReadBuffer {
            bytes: vec![0; START_BYTES],
            start: 0,
            end: 0,
            want_free: START_BYTES,
        }
    }

    /// The bytes received and not yet taken.
    #[inline]
    pub(super) fn unread(&self) -> &[u8] {
        &self.bytes[self.start..self.end]
    }

    /// How many bytes are unread.
    #[inline]
    pub(super) fn len(&self) -> usize {
        self.end - self.start
    }

    /// Takes the next `n` unread bytes; a buffer emptied this way starts over from its
    /// beginning (no copy).
    #[inline]
    pub(super) fn take(&mut self, n: usize) {
        debug_assert!(n <= self.len(), "taking {n} of {} unread bytes", self.len());
        self.start += n;
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
        }
    }

    /// The free space for a read, made first: unread bytes are moved to the front (a
    /// reply begun by the last read, usually short), and the buffer grows to offer
    /// `want_free` bytes.
    #[inline]
    pub(super) fn free_space(&mut self) -> &mut [u8] {
        if self.start > 0 {
            self.bytes.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        if self.bytes.len() - self.end < self.want_free {
            std::hint::cold_path();
            self.bytes.resize(self.end + self.want_free, 0);
        }
        &mut self.bytes[self.end..]
    }

    /// Marks `n` bytes of the free space as read into.
    #[inline]
    pub(super) fn filled(&mut self, n: usize) {
        debug_assert!(self.end + n <= self.bytes.len(), "filled past the buffer");
        if self.end + n == self.bytes.len() {
            std::hint::cold_path();
            self.want_free = (self.want_free * 2).min(MAX_FREE_BYTES);
        }
        self.end += n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(buf: &mut ReadBuffer, data: &[u8]) -> usize {
        let free = buf.free_space();
        let n = data.len().min(free.len());
        free[..n].copy_from_slice(&data[..n]);
        buf.filled(n);
        n
    }

    #[test]
    fn bytes_come_out_in_order_across_reads_and_takes() {
        let mut buf = ReadBuffer::new();
        assert_eq!(read(&mut buf, b"+OK\r\n$3\r\nx"), 10);
        assert_eq!(buf.unread(), b"+OK\r\n$3\r\nx");
        buf.take(5);
        assert_eq!(buf.unread(), b"$3\r\nx");
        read(&mut buf, b"yz\r\n");
        assert_eq!(buf.unread(), b"$3\r\nxyz\r\n");
        buf.take(9);
        assert_eq!(
            (buf.len(), buf.start, buf.end),
            (0, 0, 0),
            "an emptied buffer starts over"
        );
    }

    #[test]
    fn a_small_reply_stream_keeps_one_page() {
        let mut buf = ReadBuffer::new();
        for _ in 0..1000 {
            read(&mut buf, &[b'x'; 144]);
            buf.take(144);
        }
        assert_eq!(buf.bytes.len(), START_BYTES);
    }

    #[test]
    fn reads_that_fill_the_buffer_make_it_offer_more_up_to_the_limit() {
        let mut buf = ReadBuffer::new();
        let big = vec![7u8; 1 << 20];
        let mut offered = Vec::new();
        let mut got = 0;
        while got < big.len() {
            offered.push(buf.free_space().len());
            got += read(&mut buf, &big[got..]);
        }
        assert_eq!(&offered[..5], &[4096, 8192, 16384, 32768, 65536]);
        assert!(
            offered[5..].iter().all(|&n| n == MAX_FREE_BYTES),
            "{offered:?}"
        );
        assert_eq!(
            buf.len(),
            big.len(),
            "a reply longer than the limit is held whole"
        );
        assert!(buf.unread().iter().all(|&b| b == 7));
    }
}
