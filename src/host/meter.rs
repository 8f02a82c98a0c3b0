//! The host meter: one thread, started before a test and stopped after it, that sleeps
//! a fixed period and records how late each wake-up was (a hiccup meter, as jHiccup's
//! idle thread: what any thread of this machine waits before it runs), and at every
//! batch reads the scheduling counters of the generator's threads, of the server's
//! process where it runs here, the machine's steal and its CPU pressure.
//!
//! It reads files, so it costs a few syscalls per thread per batch, on its own thread:
//! the generator's threads do nothing for it.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

use super::procfs::{self, TaskTimes};

/// How long the hiccup meter sleeps between wake-ups. A stall of this length or more
/// always covers one of its wake-ups, a shorter one in proportion. Each wake-up takes
/// the CPU from whatever runs there, a spinning generator thread sharing its core
/// included: at 1 ms that doubled such a thread's schedule lag at p99, at 5 ms it is
/// lost in the lag's spread.
pub const HICCUP_PERIOD: Duration = Duration::from_millis(5);

/// How often the counters are read: the drive's batch, so the figures line up with the
/// latency's.
pub const SAMPLE_PERIOD: Duration = crate::drive::BATCH;

/// Every how many samples the costlier files are read: `/proc/stat` (which the kernel
/// writes whole, every interrupt's count included, to give its first line) and each
/// thread's `status`. Steal is counted in 10 ms ticks and the switches are reported for
/// the whole test, so neither needs every batch.
const SLOW_EVERY: u64 = 10;

use crate::drive::GENERATOR_THREAD;

/// The first samples, in which the threads are listed each time.
const FIRST_SAMPLES: u64 = 4;

/// What the meter read at one instant, every counter cumulative.
#[derive(Debug, Clone, Copy)]
pub struct Sample {
    /// When it was read.
    pub at: Instant,
    /// The generator's threads together; `None` without procfs.
    pub generator: Option<TaskTimes>,
    /// The server's threads together, where its process is known here.
    pub server: Option<TaskTimes>,
    /// The machine's stolen and total CPU time, clock ticks.
    pub steal_ticks: Option<(u64, u64)>,
    /// `/proc/pressure/cpu`'s `some` total, µs.
    pub pressure_some_us: Option<u64>,
    /// The latest wake-up of the hiccup meter since the previous sample, ns late.
    pub hiccup_max_ns: u64,
}

/// Everything the meter read over a test.
#[derive(Debug)]
pub struct Series {
    /// The samples, in time order.
    pub samples: Vec<Sample>,
    /// How late every wake-up of the hiccup meter was, ns.
    pub hiccups: Histogram<u64>,
    /// The server's process here, or why it is not known.
    pub server: Result<u32, String>,
    /// CPU the meter's own thread used, ns: its cost, reported.
    pub own_cpu_ns: Option<u64>,
}

/// The running meter.
pub struct Meter {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<Series>>,
}

impl Meter {
    /// Starts metering; `server` is the server's process here, or why it is not known.
    /// `None` when the meter's thread could not start.
    pub fn start(server: Result<u32, String>) -> Option<Meter> {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let handle = std::thread::Builder::new()
            .name("tailrate-host".into())
            .spawn(move || run(&flag, server))
            .ok()?;
        Some(Meter {
            stop,
            handle: Some(handle),
        })
    }

    /// Stops it (within one period) and gives what it read.
    pub fn stop(mut self) -> Option<Series> {
        self.stop.store(true, Ordering::Relaxed);
        self.handle.take()?.join().ok()
    }
}

impl Drop for Meter {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// The meter's loop: sleep to each deadline, record the lateness, and read the counters
/// when a sample is due.
fn run(stop: &AtomicBool, server: Result<u32, String>) -> Series {
    let mut tasks = Tasks::new(server.as_ref().ok().copied());
    let mut hiccups = crate::record::new_histogram();
    let mut samples = Vec::new();
    let mut latest = 0;
    let mut next_sample = Instant::now();
    let mut deadline = Instant::now() + HICCUP_PERIOD;
    while !stop.load(Ordering::Relaxed) {
        if let Some(wait) = deadline.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
        let now = Instant::now();
        let late_ns =
            u64::try_from(now.saturating_duration_since(deadline).as_nanos()).unwrap_or(u64::MAX);
        let _ = hiccups.record(late_ns.max(1));
        latest = latest.max(late_ns);
        deadline += HICCUP_PERIOD;
        if now >= next_sample {
            samples.push(tasks.sample(now, latest, false));
            latest = 0;
            next_sample = now + SAMPLE_PERIOD;
            // Reading the counters took time of this thread's own: the next sleep starts
            // after it, so that it is not counted as the machine's lateness.
            deadline = Instant::now() + HICCUP_PERIOD;
        } else if deadline < now {
            deadline = now + HICCUP_PERIOD;
        }
    }
    samples.push(tasks.sample(Instant::now(), latest, true));
    let own = rustix::thread::gettid().as_raw_nonzero().get();
    Series {
        samples,
        hiccups,
        server,
        own_cpu_ns: procfs::Reader::default()
            .task("self", own.unsigned_abs(), false, None)
            .map(|t| t.cpu_ns),
    }
}

/// The threads read at each sample, each with its latest counters: a thread that ends
/// keeps them, so the sums never run backwards. Which threads there are is listed again
/// in the first samples (the generator's threads start then) and at every slow one, so
/// that a sample in between allocates nothing.
struct Tasks {
    reader: procfs::Reader,
    /// This process's threads, as last listed.
    own_ids: Vec<u32>,
    /// Whether each is the generator's (by name), as last looked up.
    own: BTreeMap<u32, bool>,
    generator: BTreeMap<u32, TaskTimes>,
    /// The server's process, and its threads as last listed.
    server_pid: Option<String>,
    server_ids: Vec<u32>,
    server: BTreeMap<u32, TaskTimes>,
    /// Whether this process's threads could be listed at all.
    procfs: bool,
    /// Samples taken so far.
    taken: u64,
    /// The latest `/proc/stat` steal reading.
    steal_ticks: Option<(u64, u64)>,
}

impl Tasks {
    fn new(server_pid: Option<u32>) -> Self {
        Tasks {
            reader: procfs::Reader::default(),
            own_ids: Vec::new(),
            own: BTreeMap::new(),
            generator: BTreeMap::new(),
            server_pid: server_pid.map(|p| p.to_string()),
            server_ids: Vec::new(),
            server: BTreeMap::new(),
            procfs: false,
            taken: 0,
            steal_ticks: None,
        }
    }

    /// Reads the counters now; the costlier files every [`SLOW_EVERY`] samples, and when
    /// `last`.
    fn sample(&mut self, at: Instant, hiccup_max_ns: u64, last: bool) -> Sample {
        let slow = last || self.taken.is_multiple_of(SLOW_EVERY);
        let early = self.taken < FIRST_SAMPLES;
        self.taken += 1;
        if slow || early {
            let listed = procfs::task_ids("self");
            self.procfs = listed.is_some();
            self.own_ids = listed.unwrap_or_default();
            if let Some(pid) = &self.server_pid {
                self.server_ids = procfs::task_ids(pid).unwrap_or_default();
            }
        }
        for &tid in &self.own_ids {
            // A new thread names itself once it runs: until then it has its parent's
            // name, so a thread not (yet) the generator's is looked at again whenever
            // the threads are listed.
            let is_generator = match self.own.get(&tid) {
                Some(true) => true,
                Some(false) if !(slow || early) => false,
                _ => {
                    let named = self
                        .reader
                        .read(format_args!("/proc/self/task/{tid}/comm"))
                        .is_some_and(|c| c.starts_with(GENERATOR_THREAD));
                    self.own.insert(tid, named);
                    named
                }
            };
            if is_generator
                && let Some(t) =
                    self.reader
                        .task("self", tid, slow, self.generator.get(&tid).copied())
            {
                self.generator.insert(tid, t);
            }
        }
        crate::drive::share_core();
        if let Some(pid) = &self.server_pid {
            for &tid in &self.server_ids {
                if let Some(t) = self
                    .reader
                    .task(pid, tid, slow, self.server.get(&tid).copied())
                {
                    self.server.insert(tid, t);
                }
            }
        }
        crate::drive::share_core();
        if slow {
            self.steal_ticks = self
                .reader
                .read(format_args!("/proc/stat"))
                .and_then(procfs::parse_steal);
        }
        Sample {
            at,
            generator: self.procfs.then(|| sum(&self.generator)),
            server: (!self.server.is_empty()).then(|| sum(&self.server)),
            steal_ticks: self.steal_ticks,
            pressure_some_us: self
                .reader
                .read(format_args!("/proc/pressure/cpu"))
                .and_then(procfs::parse_pressure_some_us),
            hiccup_max_ns,
        }
    }
}

fn sum(tasks: &BTreeMap<u32, TaskTimes>) -> TaskTimes {
    tasks.values().fold(TaskTimes::default(), |a, &b| a.plus(b))
}
