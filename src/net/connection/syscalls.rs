//! The system calls of the hot path on plain sockets: one `send(2)` per batch and one
//! `recv(2)` per read, rustix's rather than glibc's, made through tokio's readiness so
//! that tokio still knows when to wait; and a TLS read beside them, out of line.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use tokio::io::{AsyncRead, ReadBuf};
use tokio::net::{TcpStream, UnixStream};

use crate::net::tls::TlsStream;

/// One `send(2)` of `bytes` on a socket tokio has registered, made through tokio's
/// `try_io` (so a full socket clears its write readiness, as `try_write` would). The
/// system call is rustix's own rather than glibc's `send`: tailrate is multi-threaded
/// (the signal watcher, the generator threads), and in such a process glibc wraps every
/// `send` in the thread-cancellation bookkeeping of a cancellation point (two atomic
/// updates of the thread's cancel state per call; see bench/), for a cancellation
/// tailrate never uses.
#[inline]
pub(super) fn try_send<S: TryIo>(s: &S, bytes: &[u8]) -> io::Result<usize> {
    s.try_io_as(tokio::io::Interest::WRITABLE, || {
        rustix::net::send(s, bytes, rustix::net::SendFlags::NOSIGNAL).map_err(io::Error::from)
    })
}

/// One `recv(2)` into `free` once the socket is readable, as tokio's `poll_read` makes
/// it, with rustix's system call rather than glibc's `recv` (see [`try_send`]). A short
/// read drained the socket: like `poll_read`, it then clears the socket's read
/// readiness, so the next read waits for the next reply instead of making a `recv` that
/// returns `EAGAIN`. `try_io` clears it when its closure says `WouldBlock`, so the closure
/// says that after a short read, and hands the bytes over apart.
#[inline]
pub(super) fn poll_recv<S: TryIo>(
    s: &S,
    cx: &mut Context<'_>,
    free: &mut [u8],
) -> Poll<io::Result<usize>> {
    loop {
        ready!(s.poll_readable(cx))?;
        let mut short = None;
        let read = s.try_io_as(tokio::io::Interest::READABLE, || {
            let (n, _) = rustix::net::recv(s, &mut *free, rustix::net::RecvFlags::empty())?;
            if n > 0 && n < free.len() {
                short = Some(n);
                return Err(io::ErrorKind::WouldBlock.into());
            }
            Ok(n)
        });
        if let Some(n) = short {
            return Poll::Ready(Ok(n));
        }
        match read {
            // Readable no longer (readiness cleared): wait again.
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
            done => return Poll::Ready(done),
        }
    }
}

/// A TLS read: at most one TLS record's plaintext (`tls/` buffers the socket read under
/// it). Out of line: plain sockets are the hot path.
#[inline(never)]
pub(super) fn poll_read_tls(
    s: &mut TlsStream,
    cx: &mut Context<'_>,
    free: &mut [u8],
) -> Poll<io::Result<usize>> {
    let mut free = ReadBuf::new(free);
    ready!(Pin::new(s).poll_read(cx, &mut free))?;
    Poll::Ready(Ok(free.filled().len()))
}

/// What [`try_send`] and [`poll_recv`] need of both kinds of plain socket.
pub(super) trait TryIo: std::os::fd::AsFd {
    /// tokio's `try_io`.
    fn try_io_as<R>(
        &self,
        interest: tokio::io::Interest,
        f: impl FnOnce() -> io::Result<R>,
    ) -> io::Result<R>;
    /// tokio's `poll_read_ready`.
    fn poll_readable(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>>;
}

/// Both kinds of plain socket have the same tokio methods, inherent to each.
macro_rules! impl_try_io {
    ($($socket:ty),*) => {$(
        impl TryIo for $socket {
            #[inline]
            fn try_io_as<R>(&self, interest: tokio::io::Interest, f: impl FnOnce() -> io::Result<R>) -> io::Result<R> {
                self.try_io(interest, f)
            }
            #[inline]
            fn poll_readable(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                self.poll_read_ready(cx)
            }
        }
    )*};
}
impl_try_io!(TcpStream, UnixStream);
