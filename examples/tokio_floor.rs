//! tokio_floor: the least a closed-loop client built the way tailrate is (one tokio
//! task per connection on a current-thread runtime, a `LocalSet`, `try_write` and
//! `read_buf`) costs on this machine, for `scripts/bench-closed` to set beside
//! `scripts/floor.c` (the same client on raw epoll, in C) and tailrate itself.
//!
//! The difference to floor.c is what tokio's task and reactor machinery costs; the
//! difference to tailrate is what tailrate's own work costs (encoding, framing,
//! bookkeeping, two clock reads per batch and the histograms). Like floor.c it parses
//! nothing beyond counting bytes (every reply of a run has the same length) and
//! checking each batch's first byte, and measures nothing.
//!
//! Usage: tokio_floor -p PORT -c C -n N -P P -d SIZE -t get|set
//! Prints "GET: <rate> requests per second" like redis-benchmark -q.

use std::cell::Cell;
use std::rc::Rc;
use std::time::Instant;

use anyhow::{Context, bail};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

struct Args {
    port: u16,
    conns: usize,
    total: u64,
    pipeline: u64,
    size: usize,
    set: bool,
}

fn parse_args() -> anyhow::Result<Args> {
    let mut a = Args { port: 0, conns: 50, total: 100_000, pipeline: 1, size: 3, set: false };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().with_context(|| format!("{flag} needs a value"))?;
        let bad = || format!("{flag}: not a valid value: {value}");
        match flag.as_str() {
            "-p" => a.port = value.parse().with_context(bad)?,
            "-c" => a.conns = value.parse().with_context(bad)?,
            "-n" => a.total = value.parse().with_context(bad)?,
            "-P" => a.pipeline = value.parse().with_context(bad)?,
            "-d" => a.size = value.parse().with_context(bad)?,
            "-t" if value == "get" || value == "set" => a.set = value == "set",
            "-t" => bail!("-t: get or set"),
            _ => bail!("usage: tokio_floor -p PORT -c C -n N -P P -d SIZE -t get|set"),
        }
    }
    if a.port == 0 || a.conns == 0 || a.total == 0 || a.pipeline == 0 {
        bail!("-p, -c, -n and -P must be positive");
    }
    Ok(a)
}

fn main() -> std::process::ExitCode {
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("tokio_floor: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run() -> anyhow::Result<()> {
    let args = parse_args()?;
    let mut one = Vec::new();
    if args.set {
        one.extend_from_slice(format!("*3\r\n$3\r\nSET\r\n$16\r\nkey:__rand_int__\r\n${}\r\n", args.size).as_bytes());
        one.resize(one.len() + args.size, b'x');
        one.extend_from_slice(b"\r\n");
    } else {
        one.extend_from_slice(b"*2\r\n$3\r\nGET\r\n$16\r\nkey:__rand_int__\r\n");
    }
    let reply_len = if args.set { 5 } else { 1 + args.size.to_string().len() + 2 + args.size + 2 };
    let first = if args.set { b'+' } else { b'$' };

    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let local = tokio::task::LocalSet::new();
    let left = Rc::new(Cell::new(args.total));
    let started = local.block_on(&runtime, async {
        let mut streams = Vec::with_capacity(args.conns);
        for _ in 0..args.conns {
            let stream = TcpStream::connect(("127.0.0.1", args.port)).await.context("connect")?;
            stream.set_nodelay(true)?;
            streams.push(stream);
        }
        let started = Instant::now();
        let tasks: Vec<_> = streams
            .into_iter()
            .map(|stream| tokio::task::spawn_local(connection(stream, one.clone(), args.pipeline, reply_len, first, Rc::clone(&left))))
            .collect();
        for task in tasks {
            task.await??;
        }
        anyhow::Ok(started)
    })?;
    let rate = args.total as f64 / started.elapsed().as_secs_f64();
    println!("{}: {rate:.2} requests per second", if args.set { "SET" } else { "GET" });
    Ok(())
}

/// One connection: claim a batch, write it in one `try_write` (`write_all` for what the
/// socket did not take), as tailrate does, and read until its replies' bytes are in.
async fn connection(
    mut stream: TcpStream,
    one: Vec<u8>,
    pipeline: u64,
    reply_len: usize,
    first: u8,
    left: Rc<Cell<u64>>,
) -> anyhow::Result<()> {
    let batch = one.repeat(pipeline as usize);
    let mut buf = Vec::with_capacity(64 * 1024);
    loop {
        let n = left.get().min(pipeline);
        if n == 0 {
            return Ok(());
        }
        left.set(left.get() - n);
        let out = &batch[..one.len() * n as usize];
        match stream.try_write(out) {
            Ok(written) if written == out.len() => {}
            Ok(written) => stream.write_all(&out[written..]).await?,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => stream.write_all(out).await?,
            Err(e) => return Err(e.into()),
        }
        let want = reply_len * n as usize;
        buf.clear();
        while buf.len() < want {
            if stream.read_buf(&mut buf).await? == 0 {
                bail!("the server closed the connection");
            }
            if buf[0] != first {
                bail!("unexpected reply: {}", String::from_utf8_lossy(&buf[..buf.len().min(80)]));
            }
        }
        if buf.len() > want {
            bail!("more reply bytes than asked for");
        }
    }
}
