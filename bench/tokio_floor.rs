//! tokio_floor: the least a closed-loop client built the way tailrate is (one tokio
//! task per connection on a current-thread runtime, a `LocalSet`, `try_write` and
//! `read_buf`) costs on this machine, for `bench/closed` to set beside
//! `bench/floor.c` (the same client on raw epoll, in C) and tailrate itself.
//!
//! The difference to floor.c is what tokio's task and reactor machinery costs; the
//! difference to tailrate is what tailrate's own work costs (encoding, framing,
//! bookkeeping, two clock reads per batch and the histograms). Like floor.c it parses
//! nothing beyond counting bytes (every reply of a run has the same length) and
//! checking each batch's first byte, and measures nothing.
//!
//! Usage: tokio_floor -p PORT -c C -n N -P P -d SIZE -t get|set [-w none|spread|loop]
//! Prints "GET: <rate> requests per second" like redis-benchmark -q.
//!
//! `-w` adds work to every batch, to show what a client's own code costs after the
//! system calls of a batch: `spread` runs about 1,800 instructions of straight-line
//! code (about 180 cache lines of it, near tailrate's per-batch path), `loop` about
//! 3,300 instructions in a loop of a few lines. The kernel work of each batch evicts
//! much of the caches, so straight-line code costs more per instruction than a loop
//! that stays in them (`bench/closed --footprint-probe`; bench/README.md, "Closed loop
//! beside redis-benchmark").

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
    work: Work,
}

/// Extra work per batch (`-w`).
#[derive(Clone, Copy, PartialEq)]
enum Work {
    None,
    Spread,
    Loop,
}

fn parse_args() -> anyhow::Result<Args> {
    let mut a = Args {
        port: 0,
        conns: 50,
        total: 100_000,
        pipeline: 1,
        size: 3,
        set: false,
        work: Work::None,
    };
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
            "-w" => {
                a.work = match value.as_str() {
                    "none" => Work::None,
                    "spread" => Work::Spread,
                    "loop" => Work::Loop,
                    _ => bail!("-w: none, spread or loop"),
                }
            }
            _ => bail!(
                "usage: tokio_floor -p PORT -c C -n N -P P -d SIZE -t get|set [-w none|spread|loop]"
            ),
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
        one.extend_from_slice(
            format!(
                "*3\r\n$3\r\nSET\r\n$16\r\nkey:__rand_int__\r\n${}\r\n",
                args.size
            )
            .as_bytes(),
        );
        one.resize(one.len() + args.size, b'x');
        one.extend_from_slice(b"\r\n");
    } else {
        one.extend_from_slice(b"*2\r\n$3\r\nGET\r\n$16\r\nkey:__rand_int__\r\n");
    }
    let reply_len = if args.set {
        5
    } else {
        1 + args.size.to_string().len() + 2 + args.size + 2
    };
    let first = if args.set { b'+' } else { b'$' };

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let local = tokio::task::LocalSet::new();
    let left = Rc::new(Cell::new(args.total));
    let started = local.block_on(&runtime, async {
        let mut streams = Vec::with_capacity(args.conns);
        for _ in 0..args.conns {
            let stream = TcpStream::connect(("127.0.0.1", args.port))
                .await
                .context("connect")?;
            stream.set_nodelay(true)?;
            streams.push(stream);
        }
        let started = Instant::now();
        let tasks: Vec<_> = streams
            .into_iter()
            .map(|stream| {
                tokio::task::spawn_local(connection(
                    stream,
                    one.clone(),
                    args.pipeline,
                    reply_len,
                    first,
                    args.work,
                    Rc::clone(&left),
                ))
            })
            .collect();
        for task in tasks {
            task.await??;
        }
        anyhow::Ok(started)
    })?;
    let rate = args.total as f64 / started.elapsed().as_secs_f64();
    println!(
        "{}: {rate:.2} requests per second",
        if args.set { "SET" } else { "GET" }
    );
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
    work: Work,
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
        match work {
            Work::None => {}
            Work::Spread => _ = std::hint::black_box(spread(n)),
            Work::Loop => _ = std::hint::black_box(looped(n)),
        }
        let want = reply_len * n as usize;
        buf.clear();
        while buf.len() < want {
            if stream.read_buf(&mut buf).await? == 0 {
                bail!("the server closed the connection");
            }
            if buf[0] != first {
                bail!(
                    "unexpected reply: {}",
                    String::from_utf8_lossy(&buf[..buf.len().min(80)])
                );
            }
        }
        if buf.len() > want {
            bail!("more reply bytes than asked for");
        }
    }
}

/// Repeats its body (statements) 3 times.
macro_rules! x3 {
    ($($body:tt)*) => { $($body)* $($body)* $($body)* };
}
/// Repeats its body (statements) 10 times.
macro_rules! x10 {
    ($($body:tt)*) => { x3! { $($body)* } x3! { $($body)* } x3! { $($body)* } $($body)* };
}

/// About 1,800 instructions with no loop: 300 steps, each with its own constants
/// (the counter folds into each step), so the code is about 11 KB long.
#[inline(never)]
fn spread(mut x: u64) -> u64 {
    let mut i: u64 = 0x9E37_79B9_7F4A_7C15;
    x10! { x10! { x3! {
        x = std::hint::black_box(x ^ i).wrapping_add(i.rotate_left(29));
        i = i.wrapping_mul(0x2545_F491_4F6C_DD1D);
    } } }
    x
}

/// About 3,300 instructions in a loop whose body is a few cache lines.
#[inline(never)]
fn looped(mut x: u64) -> u64 {
    let mut i: u64 = 0x9E37_79B9_7F4A_7C15;
    for _ in 0..300 {
        x = std::hint::black_box(x ^ i).wrapping_add(i.rotate_left(29));
        i = i.wrapping_mul(0x2545_F491_4F6C_DD1D);
        x = std::hint::black_box(x ^ i);
    }
    x
}
