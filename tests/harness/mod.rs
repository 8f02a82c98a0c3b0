//! Shared helpers for the integration tests: a throwaway `redis-server` on a
//! loopback port ([`RedisServer`]), a tiny blocking RESP client
//! ([`RedisServer::cmd`], [`send_command`]), and runners for the `tailrate`
//! binary and `redis-benchmark` with a hard timeout ([`run_tailrate`],
//! [`run_with_timeout`]).
//!
//! Only `std`, `tempfile` and `serde_json` (reading reports) are used. Every server gets its own temporary
//! directory (deleted on drop), binds 127.0.0.1 only, and persists nothing
//! (`--save '' --appendonly no`). Dropping a [`RedisServer`] SIGKILLs the
//! process and reaps it.
//!
//! `redis-server` is taken from `PATH` (or `/usr/bin/redis-server`);
//! `scripts/test` installs it when missing.
//!
//! A test that cannot check what it is for on this machine (every attempt disturbed by
//! the host, an external tool missing outside CI) does not pass in silence: it calls
//! [`skip`], which puts it on record for `scripts/test` to list after the run.
#![allow(dead_code)]

pub mod cluster;
pub mod slurm;

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::fmt;
use std::fs::OpenOptions;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// How long [`RedisServer::start`] waits for the server to answer `PING`.
pub const START_TIMEOUT: Duration = Duration::from_secs(10);

/// Default timeout of [`run_tailrate`]: the child is killed after this long.
pub const RUN_TIMEOUT: Duration = Duration::from_secs(120);

/// Read/write timeout of the sockets used by [`send_command`].
pub const IO_TIMEOUT: Duration = Duration::from_secs(10);

/// How many times [`RedisServerBuilder::start`] picks a new port when the
/// chosen one turns out to be taken.
const PORT_ATTEMPTS: usize = 5;

/// Runs tailrate with `--json` into a temporary file (and `--no-progress`) before
/// `args`, which may end in a custom command; asserts success and returns (stdout, report).
pub fn run_tailrate_json(args: &[&str]) -> (String, serde_json::Value) {
    let dir = match tempfile::tempdir() {
        Ok(d) => d,
        Err(e) => panic!("cannot create a temporary directory: {e}"),
    };
    let json = dir.path().join("report.json");
    let json_arg = json.to_string_lossy().into_owned();
    let mut all: Vec<&str> = vec!["--json", &json_arg, "--no-progress"];
    all.extend(args);
    let stdout = assert_success(&run_tailrate(&all));
    let bytes =
        std::fs::read(&json).unwrap_or_else(|e| panic!("tailrate wrote no {json_arg}: {e}"));
    let report =
        serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("{json_arg} is not JSON: {e}"));
    (stdout, report)
}

/// The JSON in `path`; panics naming the file when it is missing or not JSON.
pub fn read_json(path: &std::path::Path) -> serde_json::Value {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}

/// Path of the `tailrate` binary that Cargo built for this test run.
pub fn tailrate_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_tailrate"))
}

/// Finds an executable called `name` on `PATH`, then in `/usr/bin`, then in
/// `/usr/local/bin`.
pub fn find_in_path(name: &str) -> Option<PathBuf> {
    let from_path = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default();
    from_path
        .into_iter()
        .chain([PathBuf::from("/usr/bin"), PathBuf::from("/usr/local/bin")])
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
}

/// Environment variable naming the file [`skip`] appends to; `scripts/test` sets it and
/// lists the file's lines after the run.
pub const SKIP_LOG_ENV: &str = "TAILRATE_SKIP_LOG";

/// Records that `test_name` could not check what it is for, and why: prints
/// `SKIPPED: <test>: <reason>` on stderr and appends `<test>: <reason>` as one line to the
/// file named by [`SKIP_LOG_ENV`] when it is set. The caller then returns, so the test
/// passes (nextest has no run-time skip) but the skip is on record: nextest hides a
/// passing test's stderr, the file is what makes it visible. Panics if the file cannot
/// be written, so a skip is never lost.
pub fn skip(test_name: &str, reason: &str) {
    // One line per skip: the log is read line by line.
    let reason = reason.replace('\n', " ");
    eprintln!("SKIPPED: {test_name}: {reason}");
    let Some(path) = std::env::var_os(SKIP_LOG_ENV) else {
        return;
    };
    // One write of the whole line to a file opened for appending: tests in other
    // processes may record at the same time, and their lines must not interleave.
    let line = format!("{test_name}: {reason}\n");
    let written = OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut f| f.write_all(line.as_bytes()));
    if let Err(e) = written {
        panic!(
            "cannot record the skip of {test_name} in {SKIP_LOG_ENV}={}: {e}",
            Path::new(&path).display()
        );
    }
}

/// The running test's name (`module::test`), for [`skip`]: libtest runs each test on a
/// thread named after it, under `cargo test` and under nextest alike.
pub fn this_test() -> String {
    thread::current()
        .name()
        .unwrap_or("(unnamed test thread)")
        .to_owned()
}

/// Whether the tests run in CI (`CI=true`, as GitHub Actions and most CI systems set it,
/// or `CI=1`): there, a missing tool is a broken setup, not a reason to skip.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v.eq_ignore_ascii_case("true") || v == "1")
}

/// An external tool a test needs (`name` on `PATH`, in `/usr/bin`, `/usr/local/bin` or
/// `/usr/sbin`). When it is missing: in CI ([`in_ci`]) panics with `install` (how to get
/// it), since `scripts/test` installs it there; elsewhere records a [`skip`] of the running
/// test and returns `None`, and the caller returns.
pub fn require_tool(name: &str, install: &str) -> Option<PathBuf> {
    let found = find_in_path(name)
        .or_else(|| Some(Path::new("/usr/sbin").join(name)).filter(|p| p.is_file()));
    if found.is_none() {
        let missing = format!("{name} is not installed; {install}");
        if in_ci() {
            panic!("{missing} (CI is set: a missing tool fails the test instead of skipping it)");
        }
        skip(&this_test(), &missing);
    }
    found
}

/// Path of `redis-server`; panics with install advice when it is missing.
pub fn redis_server_bin() -> PathBuf {
    match find_in_path("redis-server") {
        Some(p) => p,
        None => panic!(
            "redis-server not found on PATH or in /usr/bin: \
             run scripts/test (or `apt-get install -y redis-server`)"
        ),
    }
}

/// Path of `redis-benchmark`, if installed (Debian package `redis-tools`).
pub fn redis_benchmark_bin() -> Option<PathBuf> {
    find_in_path("redis-benchmark")
}

/// A currently free TCP port on 127.0.0.1, found by binding port 0 and
/// dropping the listener. Another process may grab it before it is used, so
/// callers that bind it must be ready to retry.
pub fn free_port() -> u16 {
    match TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()) {
        Ok(addr) => addr.port(),
        Err(e) => panic!("cannot bind an ephemeral port on 127.0.0.1: {e}"),
    }
}

/// Runs `tailrate` with `args`, capturing stdout and stderr; panics (with
/// whatever output there was) if it runs longer than [`RUN_TIMEOUT`].
pub fn run_tailrate(args: &[&str]) -> Output {
    run_tailrate_with_timeout(args, RUN_TIMEOUT)
}

/// Like [`run_tailrate`] with an explicit timeout.
pub fn run_tailrate_with_timeout(args: &[&str], timeout: Duration) -> Output {
    let mut cmd = Command::new(tailrate_bin());
    cmd.args(args);
    run_with_timeout(cmd, timeout)
}

/// Runs `cmd` with stdin closed and stdout/stderr captured; SIGKILLs it and
/// panics with the partial output if it has not exited after `timeout`.
pub fn run_with_timeout(mut cmd: Command, timeout: Duration) -> Output {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let described = format!("{cmd:?}");
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => panic!("cannot spawn {described}: {e}"),
    };
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());
    let deadline = Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                let out = String::from_utf8_lossy(&join_drain(stdout)).into_owned();
                let err = String::from_utf8_lossy(&join_drain(stderr)).into_owned();
                panic!(
                    "{described} still running after {timeout:?}; killed it\n\
                     --- stdout ---\n{out}\n--- stderr ---\n{err}"
                );
            }
            Ok(None) => thread::sleep(Duration::from_millis(20)),
            Err(e) => panic!("waiting for {described}: {e}"),
        }
    };
    Output {
        status,
        stdout: join_drain(stdout),
        stderr: join_drain(stderr),
    }
}

/// Panics with the command's stdout and stderr unless it exited with status 0;
/// returns stdout as a (lossy) UTF-8 string.
pub fn assert_success(out: &Output) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    if !out.status.success() {
        panic!(
            "command failed: {}\n--- stdout ---\n{stdout}\n--- stderr ---\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    stdout
}

fn drain<R: Read + Send + 'static>(pipe: Option<R>) -> Option<thread::JoinHandle<Vec<u8>>> {
    pipe.map(|mut r| {
        thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = r.read_to_end(&mut buf);
            buf
        })
    })
}

fn join_drain(handle: Option<thread::JoinHandle<Vec<u8>>>) -> Vec<u8> {
    handle.and_then(|h| h.join().ok()).unwrap_or_default()
}

/// One RESP reply, as read by [`read_reply`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// `+OK`
    Simple(String),
    /// `-ERR ...` (the text after the `-`).
    Error(String),
    /// `:42`
    Integer(i64),
    /// `$3\r\nfoo` (lossy UTF-8).
    Bulk(String),
    /// `$-1` or `*-1`.
    Nil,
    /// `*N` followed by N replies.
    Array(Vec<Reply>),
}

impl fmt::Display for Reply {
    /// Simple strings, bulk strings and integers print as their text; errors
    /// as `(error) MSG`; nil as `(nil)`; arrays as their elements (flattened)
    /// joined with `\n`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reply::Simple(s) | Reply::Bulk(s) => f.write_str(s),
            Reply::Error(e) => write!(f, "(error) {e}"),
            Reply::Integer(i) => write!(f, "{i}"),
            Reply::Nil => f.write_str("(nil)"),
            Reply::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str("\n")?;
                    }
                    write!(f, "{item}")?;
                }
                Ok(())
            }
        }
    }
}

/// RESP-encodes `args` as an array of bulk strings.
pub fn encode_command(args: &[&str]) -> Vec<u8> {
    let mut buf = format!("*{}\r\n", args.len()).into_bytes();
    for a in args {
        buf.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
        buf.extend_from_slice(a.as_bytes());
        buf.extend_from_slice(b"\r\n");
    }
    buf
}

/// Reads one RESP2 reply (and RESP3 `_`, `#`, `,` scalars, as text) from `r`.
pub fn read_reply<R: BufRead>(r: &mut R) -> std::io::Result<Reply> {
    let line = read_line(r)?;
    let (kind, rest) = line.split_at(1.min(line.len()));
    let bad = |what: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_owned());
    let parse_len = |s: &str| {
        s.parse::<i64>()
            .map_err(|_| bad(&format!("bad length {s:?}")))
    };
    match kind {
        "+" => Ok(Reply::Simple(rest.to_owned())),
        "-" => Ok(Reply::Error(rest.to_owned())),
        ":" => Ok(Reply::Integer(parse_len(rest)?)),
        "_" => Ok(Reply::Nil),
        "#" | "," | "(" => Ok(Reply::Simple(rest.to_owned())),
        "$" => {
            let n = parse_len(rest)?;
            if n < 0 {
                return Ok(Reply::Nil);
            }
            let mut buf = vec![0u8; n as usize + 2];
            r.read_exact(&mut buf)?;
            buf.truncate(n as usize);
            Ok(Reply::Bulk(String::from_utf8_lossy(&buf).into_owned()))
        }
        "*" | "~" | ">" => {
            let n = parse_len(rest)?;
            if n < 0 {
                return Ok(Reply::Nil);
            }
            let mut items = Vec::with_capacity(n as usize);
            for _ in 0..n {
                items.push(read_reply(r)?);
            }
            Ok(Reply::Array(items))
        }
        "%" => {
            let n = parse_len(rest)?;
            let mut items = Vec::with_capacity(2 * n.max(0) as usize);
            for _ in 0..2 * n.max(0) {
                items.push(read_reply(r)?);
            }
            Ok(Reply::Array(items))
        }
        _ => Err(bad(&format!("unexpected RESP line {line:?}"))),
    }
}

fn read_line<R: BufRead>(r: &mut R) -> std::io::Result<String> {
    let mut line = String::new();
    if r.read_line(&mut line)? == 0 {
        return Err(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            "connection closed before a full reply",
        ));
    }
    while line.ends_with('\n') || line.ends_with('\r') {
        line.pop();
    }
    Ok(line)
}

/// Sends one command to `addr` over a fresh connection and returns the reply.
pub fn send_command(addr: &str, args: &[&str]) -> std::io::Result<Reply> {
    send_command_as(addr, None, args)
}

/// Like [`send_command`], first authenticating with `password` when given.
pub fn send_command_as(
    addr: &str,
    password: Option<&str>,
    args: &[&str],
) -> std::io::Result<Reply> {
    let stream = TcpStream::connect(addr)?;
    stream.set_read_timeout(Some(IO_TIMEOUT))?;
    stream.set_write_timeout(Some(IO_TIMEOUT))?;
    stream.set_nodelay(true)?;
    let mut reader = BufReader::new(&stream);
    if let Some(password) = password {
        (&stream).write_all(&encode_command(&["AUTH", password]))?;
        read_reply(&mut reader)?;
    }
    (&stream).write_all(&encode_command(args))?;
    read_reply(&mut reader)
}

/// Builder for [`RedisServer`]: extra `redis-server` options and, optionally,
/// a fixed port.
#[derive(Debug, Clone, Default)]
pub struct RedisServerBuilder {
    args: Vec<String>,
    port: Option<u16>,
}

impl RedisServerBuilder {
    /// Adds a `--name value` style option, e.g. `.arg("--hz", "100")` or
    /// `.arg("--maxclients", "64")`.
    pub fn arg(mut self, name: &str, value: &str) -> Self {
        self.args.push(name.to_owned());
        self.args.push(value.to_owned());
        self
    }

    /// Adds raw command-line words as they are.
    pub fn args<I, S>(mut self, words: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        self.args
            .extend(words.into_iter().map(|s| s.as_ref().to_owned()));
        self
    }

    /// Uses this port instead of a free ephemeral one (no retry on collision).
    pub fn port(mut self, port: u16) -> Self {
        self.port = Some(port);
        self
    }

    /// Starts the server and waits until it answers `PING`; panics with the
    /// server's log if it cannot start within [`START_TIMEOUT`].
    pub fn start(self) -> RedisServer {
        let dir = match tempfile::Builder::new().prefix("tailrate-redis-").tempdir() {
            Ok(d) => d,
            Err(e) => panic!("cannot create a temporary directory: {e}"),
        };
        let mut server = RedisServer {
            bin: redis_server_bin(),
            args: self.args,
            port: 0,
            pid: 0,
            child: None,
            dir,
        };
        let attempts = if self.port.is_some() {
            1
        } else {
            PORT_ATTEMPTS
        };
        let mut last_err = String::new();
        for _ in 0..attempts {
            let port = self.port.unwrap_or_else(free_port);
            match server.spawn_on(port) {
                Ok(()) => return server,
                Err(StartError::PortTaken(log)) => last_err = log,
                Err(StartError::Failed(msg)) => panic!("{msg}"),
            }
        }
        panic!("redis-server: no free port after {attempts} attempt(s); last log:\n{last_err}");
    }
}

enum StartError {
    /// The port was taken (by the server's own report or by another server
    /// answering on it); worth retrying on another port.
    PortTaken(String),
    /// Anything else: give up.
    Failed(String),
}

/// A `redis-server` child process on 127.0.0.1 with its own temporary
/// directory; killed (SIGKILL) and reaped on drop.
#[derive(Debug)]
pub struct RedisServer {
    bin: PathBuf,
    args: Vec<String>,
    port: u16,
    pid: u32,
    child: Option<Child>,
    dir: tempfile::TempDir,
}

impl RedisServer {
    /// The `--requirepass` the server was started with, used by the harness's own commands.
    fn password(&self) -> Option<&str> {
        self.args
            .iter()
            .position(|a| a == "--requirepass")
            .and_then(|i| self.args.get(i + 1))
            .map(String::as_str)
    }

    /// Starts a server with the default options on a free port.
    pub fn start() -> RedisServer {
        Self::builder().start()
    }

    /// A builder to add `redis-server` options before starting.
    pub fn builder() -> RedisServerBuilder {
        RedisServerBuilder::default()
    }

    /// The TCP port the server listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `"127.0.0.1:PORT"`.
    pub fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// The process id of the current (or last) server process.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// The server's temporary working directory (holds `redis.log`).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The server's log so far (empty if none was written).
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.log_path()).unwrap_or_default()
    }

    /// Whether the harness has a process for it (it was not killed with
    /// [`RedisServer::kill`]); unlike [`RedisServer::is_running`] it needs no `&mut`.
    pub fn child_running(&self) -> bool {
        self.child.is_some()
    }

    /// Whether the server process is still alive.
    pub fn is_running(&mut self) -> bool {
        match self.child.as_mut() {
            Some(c) => matches!(c.try_wait(), Ok(None)),
            None => false,
        }
    }

    /// Sends one command over a fresh connection and returns the reply as
    /// readable text (see [`Reply`]'s `Display`: errors come back as
    /// `(error) MSG`, nil as `(nil)`, arrays as lines). Panics on I/O errors.
    pub fn cmd(&self, args: &[&str]) -> String {
        self.cmd_reply(args).to_string()
    }

    /// Like [`RedisServer::cmd`] but returns the structured [`Reply`].
    pub fn cmd_reply(&self, args: &[&str]) -> Reply {
        match send_command_as(&self.addr(), self.password(), args) {
            Ok(r) => r,
            Err(e) => panic!(
                "{args:?} to redis at {}: {e}\nserver log:\n{}",
                self.addr(),
                self.log()
            ),
        }
    }

    /// `INFO section` as raw text (e.g. `info("stats")`).
    pub fn info(&self, section: &str) -> String {
        self.cmd(&["INFO", section])
    }

    /// One `field:value` of `INFO section`, if present.
    pub fn info_field(&self, section: &str, field: &str) -> Option<String> {
        let prefix = format!("{field}:");
        self.info(section)
            .lines()
            .find_map(|l| l.strip_prefix(&prefix).map(|v| v.trim().to_owned()))
    }

    /// Calls per command from `INFO commandstats`, e.g. `{"get": 10, "set": 10}`
    /// (lower-case names; subcommands look like `"config|get"`).
    pub fn commandstats(&self) -> BTreeMap<String, u64> {
        parse_commandstats(&self.info("commandstats"))
    }

    /// Resets `INFO commandstats` and the other stats (`CONFIG RESETSTAT`).
    pub fn reset_stats(&self) {
        let r = self.cmd(&["CONFIG", "RESETSTAT"]);
        assert_eq!(r, "OK", "CONFIG RESETSTAT");
    }

    /// The value of one configuration parameter (`CONFIG GET name`); panics if
    /// the server does not know it.
    pub fn config_get(&self, name: &str) -> String {
        match self.cmd_reply(&["CONFIG", "GET", name]) {
            Reply::Array(items) if items.len() >= 2 => items[1].to_string(),
            other => panic!("CONFIG GET {name}: unexpected reply {other:?}"),
        }
    }

    /// `CONFIG SET name value`; panics unless the server answers `OK`.
    pub fn config_set(&self, name: &str, value: &str) {
        let r = self.cmd(&["CONFIG", "SET", name, value]);
        assert_eq!(r, "OK", "CONFIG SET {name} {value}");
    }

    /// Kills the server (SIGKILL) and waits for it; does nothing if it is not
    /// running. The port and directory are kept for
    /// [`RedisServer::restart_same_port`].
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Kills the server if it is running and starts a new one with the same
    /// options on the same port (an empty data set, since nothing is saved).
    /// Retries for a few seconds if the port is briefly unavailable; panics
    /// with the log if it cannot start.
    pub fn restart_same_port(&mut self) {
        self.kill();
        let port = self.port;
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            match self.spawn_on(port) {
                Ok(()) => return,
                Err(StartError::PortTaken(log)) if Instant::now() >= deadline => {
                    panic!("redis-server: port {port} still taken on restart; log:\n{log}")
                }
                Err(StartError::PortTaken(_)) => thread::sleep(Duration::from_millis(100)),
                Err(StartError::Failed(msg)) => panic!("{msg}"),
            }
        }
    }

    fn log_path(&self) -> PathBuf {
        self.dir.path().join("redis.log")
    }

    /// Spawns `redis-server` on `port` and waits until it answers `PING` and
    /// reports our own pid in `INFO server`.
    fn spawn_on(&mut self, port: u16) -> Result<(), StartError> {
        let log_path = self.log_path();
        // Start each attempt with an empty log so messages are this attempt's.
        let _ = std::fs::write(&log_path, b"");
        let mut cmd = Command::new(&self.bin);
        cmd.arg("--port")
            .arg(port.to_string())
            .args(["--bind", "127.0.0.1"])
            .args(["--save", ""])
            .args(["--appendonly", "no"])
            .args(["--daemonize", "no"])
            .arg("--dir")
            .arg(self.dir.path())
            .arg("--logfile")
            .arg(&log_path)
            .args(self.args.iter().map(OsStr::new))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let described = format!("{cmd:?}");
        let mut child = cmd
            .spawn()
            .map_err(|e| StartError::Failed(format!("cannot spawn {described}: {e}")))?;
        let pid = child.id();
        let stderr = drain(child.stderr.take());
        let deadline = Instant::now() + START_TIMEOUT;
        let addr = format!("127.0.0.1:{port}");
        let mut last_err: String;
        loop {
            if let Ok(Some(status)) = child.try_wait() {
                let log = self.startup_log(join_drain(stderr));
                let msg = format!("{described} exited with {status} before answering PING\n{log}");
                return Err(if log.contains("Address already in use") {
                    StartError::PortTaken(msg)
                } else {
                    StartError::Failed(msg)
                });
            }
            match send_command_as(&addr, self.password(), &["PING"]) {
                Ok(Reply::Simple(s)) if s == "PONG" => {
                    // Make sure it is our server that answered, not another
                    // one that already had this port.
                    let info = send_command_as(&addr, self.password(), &["INFO", "server"])
                        .map(|r| r.to_string())
                        .unwrap_or_default();
                    let ours = format!("process_id:{pid}");
                    if info.lines().any(|l| l.trim() == ours) {
                        self.child = Some(child);
                        self.pid = pid;
                        self.port = port;
                        return Ok(());
                    }
                    last_err = format!("another process answers on {addr}");
                }
                Ok(other) => last_err = format!("PING answered {other:?}"),
                Err(e) => last_err = e.to_string(),
            }
            if Instant::now() >= deadline {
                let _ = child.kill();
                let _ = child.wait();
                let log = self.startup_log(join_drain(stderr));
                let msg = format!(
                    "{described} did not answer PING within {START_TIMEOUT:?} (last: {last_err})\n{log}"
                );
                return Err(if last_err.starts_with("another process") {
                    StartError::PortTaken(msg)
                } else {
                    StartError::Failed(msg)
                });
            }
            thread::sleep(Duration::from_millis(20));
        }
    }

    fn startup_log(&self, stderr: Vec<u8>) -> String {
        format!(
            "--- redis.log ---\n{}\n--- stderr ---\n{}",
            self.log(),
            String::from_utf8_lossy(&stderr)
        )
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Parses `INFO commandstats` text (`cmdstat_set:calls=10,usec=...`) into
/// `{"set": 10}`.
pub fn parse_commandstats(info: &str) -> BTreeMap<String, u64> {
    info.lines()
        .filter_map(|line| {
            let rest = line.trim().strip_prefix("cmdstat_")?;
            let (name, fields) = rest.split_once(':')?;
            let calls = fields
                .split(',')
                .find_map(|f| f.strip_prefix("calls="))?
                .parse()
                .ok()?;
            Some((name.to_owned(), calls))
        })
        .collect()
}

/// The self-check called `name` in a report's test (`tests[i]` of `--json`); `None`
/// when the run did not make it.
pub fn find_check<'a>(test: &'a serde_json::Value, name: &str) -> Option<&'a serde_json::Value> {
    test["checks"]
        .as_array()?
        .iter()
        .find(|c| c["name"] == name)
}

/// [`find_check`], failing the test with the checks it has when there is none.
pub fn check<'a>(test: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    find_check(test, name).unwrap_or_else(|| panic!("no {name} check in {}", test["checks"]))
}

/// A process's stderr as text.
pub fn stderr_of(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Runs tailrate with `args` and asserts a usage error: exit code 2 and one line on
/// stderr holding every needle (the flag's name, the bad value).
pub fn assert_usage_error(args: &[&str], needles: &[&str]) {
    let out = run_tailrate(args);
    let text = stderr_of(&out);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {text}");
    assert_eq!(
        text.trim_end().lines().count(),
        1,
        "one line for {args:?}: {text}"
    );
    for needle in needles {
        assert!(
            text.contains(needle),
            "{args:?}: {needle:?} missing in {text}"
        );
    }
}

/// A TCP relay on 127.0.0.1 that holds every chunk of bytes for a fixed time before
/// passing it on, in each direction: a server `2 x one_way` further away. Chunks keep
/// their order and several may be on their way at once, so pipelined requests stay
/// pipelined. Each accepted connection gets its own upstream connection and four threads
/// (a reader and a writer per direction). Stops accepting on drop; connections end when
/// either side closes.
pub struct DelayRelay {
    port: u16,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl DelayRelay {
    /// Relays connections on a free port to `upstream` (`host:port`), holding each chunk `one_way`.
    pub fn start(upstream: &str, one_way: Duration) -> DelayRelay {
        let listener = match TcpListener::bind("127.0.0.1:0") {
            Ok(l) => l,
            Err(e) => panic!("cannot bind a relay port: {e}"),
        };
        let port = listener.local_addr().map(|a| a.port()).unwrap_or(0);
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (upstream, flag) = (upstream.to_owned(), stop.clone());
        thread::spawn(move || {
            for client in listener.incoming() {
                if flag.load(std::sync::atomic::Ordering::SeqCst) {
                    return;
                }
                let (Ok(client), Ok(server)) = (client, TcpStream::connect(&upstream)) else {
                    continue;
                };
                let _ = client.set_nodelay(true);
                let _ = server.set_nodelay(true);
                let (Ok(client_read), Ok(server_read)) = (client.try_clone(), server.try_clone())
                else {
                    continue;
                };
                delayed_pipe(client_read, server, one_way);
                delayed_pipe(server_read, client, one_way);
            }
        });
        DelayRelay { port, stop }
    }

    /// The port clients connect to.
    pub fn port(&self) -> u16 {
        self.port
    }
}

impl Drop for DelayRelay {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        // Wake the accept loop so it sees the flag.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

/// Copies `from` to `to`, each chunk written `delay` after it was read.
fn delayed_pipe(mut from: TcpStream, mut to: TcpStream, delay: Duration) {
    let (tx, rx) = std::sync::mpsc::channel::<(Instant, Vec<u8>)>();
    thread::spawn(move || {
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            match from.read(&mut buf) {
                Ok(0) | Err(_) => return,
                Ok(n) => {
                    if tx
                        .send((Instant::now() + delay, buf[..n].to_vec()))
                        .is_err()
                    {
                        return;
                    }
                }
            }
        }
    });
    thread::spawn(move || {
        for (due, bytes) in rx {
            if let Some(wait) = due.checked_duration_since(Instant::now()) {
                thread::sleep(wait);
            }
            if to.write_all(&bytes).is_err() {
                break;
            }
        }
        let _ = to.shutdown(std::net::Shutdown::Write);
    });
}
