//! What Linux's procfs says of a task's scheduling and of the machine, parsed from the
//! files' text (pure), and read from them (`None` where a file is absent or unreadable:
//! another kernel, no procfs, a process of another user).

/// A task's scheduling counters, cumulative since it started.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TaskTimes {
    /// Time on a CPU, ns (`schedstat`'s first field).
    pub cpu_ns: u64,
    /// Time runnable but waiting on a run queue, ns (its second field, `run_delay`):
    /// behind another task, or while an idle CPU woke up to run it.
    pub run_delay_ns: u64,
    /// Times it was put on a CPU (its third field): each wait above ends in one.
    pub slices: u64,
    /// Times it was taken off a CPU it still wanted (`nonvoluntary_ctxt_switches`).
    pub involuntary_switches: u64,
}

impl TaskTimes {
    /// The sum of two tasks' counters.
    pub fn plus(self, other: TaskTimes) -> TaskTimes {
        TaskTimes {
            cpu_ns: self.cpu_ns + other.cpu_ns,
            run_delay_ns: self.run_delay_ns + other.run_delay_ns,
            slices: self.slices + other.slices,
            involuntary_switches: self.involuntary_switches + other.involuntary_switches,
        }
    }

    /// What happened between `earlier` and `self` (a counter never runs backwards; a
    /// task that ended keeps its last values, so the sums only grow).
    pub fn since(self, earlier: TaskTimes) -> TaskTimes {
        TaskTimes {
            cpu_ns: self.cpu_ns.saturating_sub(earlier.cpu_ns),
            run_delay_ns: self.run_delay_ns.saturating_sub(earlier.run_delay_ns),
            slices: self.slices.saturating_sub(earlier.slices),
            involuntary_switches: self
                .involuntary_switches
                .saturating_sub(earlier.involuntary_switches),
        }
    }
}

/// `/proc/.../schedstat`: `cpu_ns run_delay_ns slices`.
pub fn parse_schedstat(text: &str) -> Option<(u64, u64, u64)> {
    let mut fields = text.split_ascii_whitespace().map(|f| f.parse::<u64>().ok());
    Some((fields.next()??, fields.next()??, fields.next()??))
}

/// `nonvoluntary_ctxt_switches` of `/proc/.../status`.
pub fn parse_involuntary(status: &str) -> Option<u64> {
    status
        .lines()
        .find_map(|l| l.strip_prefix("nonvoluntary_ctxt_switches:"))
        .and_then(|v| v.trim().parse().ok())
}

/// The machine's CPU time stolen by the hypervisor and its total CPU time, in clock
/// ticks, from the first line of `/proc/stat` (`cpu user nice system idle iowait irq
/// softirq steal ...`).
pub fn parse_steal(stat: &str) -> Option<(u64, u64)> {
    let line = stat.lines().next()?;
    let mut fields = line.split_ascii_whitespace();
    if fields.next()? != "cpu" {
        return None;
    }
    let ticks: Vec<u64> = fields.map_while(|f| f.parse().ok()).collect();
    let steal = *ticks.get(7)?;
    // guest and guest_nice (fields 9 and 10) are already counted in user and nice.
    let total = ticks.iter().take(8).sum();
    Some((steal, total))
}

/// The `total=` of the `some` line of `/proc/pressure/cpu`: µs during which at least
/// one runnable task waited for a CPU.
pub fn parse_pressure_some_us(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("some "))?;
    line.split_ascii_whitespace()
        .find_map(|f| f.strip_prefix("total="))
        .and_then(|v| v.parse().ok())
}

/// Reads procfs files into buffers it keeps, so that a read allocates nothing once the
/// buffers have grown (the meter reads every batch, beside a generator that allocates
/// nothing per request).
#[derive(Debug, Default)]
pub struct Reader {
    path: String,
    text: String,
}

impl Reader {
    /// The text of the file at `path`, or `None` where it cannot be read.
    pub fn read(&mut self, path: std::fmt::Arguments) -> Option<&str> {
        use std::fmt::Write as _;
        use std::io::Read as _;
        self.path.clear();
        self.path.write_fmt(path).ok()?;
        self.text.clear();
        std::fs::File::open(&self.path)
            .ok()?
            .read_to_string(&mut self.text)
            .ok()?;
        Some(&self.text)
    }

    /// The counters of task `tid` of process `pid` (`self` for this one); `status` (a
    /// longer file, for the involuntary switches) only when `with_status`, else the
    /// switches are `earlier`'s.
    pub fn task(
        &mut self,
        pid: &str,
        tid: u32,
        with_status: bool,
        earlier: Option<TaskTimes>,
    ) -> Option<TaskTimes> {
        let (cpu_ns, run_delay_ns, slices) =
            parse_schedstat(self.read(format_args!("/proc/{pid}/task/{tid}/schedstat"))?)?;
        let involuntary_switches = if with_status {
            self.read(format_args!("/proc/{pid}/task/{tid}/status"))
                .and_then(parse_involuntary)
        } else {
            None
        };
        Some(TaskTimes {
            cpu_ns,
            run_delay_ns,
            slices,
            involuntary_switches: involuntary_switches
                .or(earlier.map(|e| e.involuntary_switches))
                .unwrap_or(0),
        })
    }
}

/// The thread ids under `/proc/<pid>/task` (`self` for this process).
pub fn task_ids(pid: &str) -> Option<Vec<u32>> {
    let dir = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?;
    Some(
        dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn schedstat_status_stat_and_pressure_parse_as_the_kernel_writes_them() {
        assert_eq!(
            parse_schedstat("953115 53763 2\n"),
            Some((953_115, 53_763, 2))
        );
        assert_eq!(parse_schedstat("1 2"), None);
        let status =
            "Name:\tredis-server\nvoluntary_ctxt_switches:\t120\nnonvoluntary_ctxt_switches:\t7\n";
        assert_eq!(parse_involuntary(status), Some(7));
        let stat = "cpu  1521012 55373 147027 492093 4492 0 23469 1303 0 0\ncpu0 1 2 3\n";
        assert_eq!(
            parse_steal(stat),
            Some((
                1303,
                1521012 + 55373 + 147027 + 492093 + 4492 + 23469 + 1303
            ))
        );
        assert_eq!(parse_steal("intr 1 2 3\n"), None);
        let psi = "some avg10=0.00 avg60=0.41 avg300=3.35 total=2603342794\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n";
        assert_eq!(parse_pressure_some_us(psi), Some(2_603_342_794));
        assert_eq!(parse_pressure_some_us("full total=3\n"), None);
    }

    #[test]
    fn this_thread_reads_its_own_counters() {
        let tid = rustix::thread::gettid().as_raw_nonzero().get();
        let mut reader = Reader::default();
        let before = reader.task("self", tid as u32, true, None).unwrap();
        let spin = std::time::Instant::now();
        while spin.elapsed() < std::time::Duration::from_millis(5) {}
        let after = reader
            .task("self", tid as u32, false, Some(before))
            .unwrap();
        assert_eq!(after.involuntary_switches, before.involuntary_switches);
        assert!(
            after.since(before).cpu_ns >= 1_000_000,
            "{before:?} {after:?}"
        );
        assert!(task_ids("self").unwrap().contains(&(tid as u32)));
    }
}
