//! A throwaway single-node Slurm cluster for the tests ([`Slurm`]): its own `munged`,
//! `slurmctld` and `slurmd`, children of the test, with every file (configuration, munge
//! key and socket, state, spool, pid files, logs) in one temporary directory, and ports
//! from [`free_port`]. The clients (`srun`, `sbatch`, `sinfo`, ...) reach it through
//! `SLURM_CONF` ([`Slurm::command`]); nothing of the host's Slurm or munge is used, no
//! system service is started, and the node and controller are addressed on 127.0.0.1.
//!
//! Dropping a [`Slurm`] cancels what is still queued or running, stops the daemons
//! (SIGTERM, then SIGKILL), reaps them and deletes the directory.
//!
//! The daemons run as root (`SlurmUser=root`), as they do in CI and on the test machine;
//! the tools come from Debian's `slurm-wlm` and `munge` packages, which `scripts/test`
//! installs when missing.

use std::fs;
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use super::{free_port, require_tool, run_with_timeout};

/// How long [`Slurm::start`] waits for munge's socket, then for the node to be idle.
pub const SLURM_START_TIMEOUT: Duration = Duration::from_secs(30);

/// How many lines of each daemon's log a failure message carries.
const LOG_TAIL_LINES: usize = 30;

/// How to get the tools when they are missing.
const INSTALL: &str = "scripts/test installs it (`apt-get install -y slurm-wlm munge`)";

/// The tools a [`Slurm`] needs, found on `PATH` or in `/usr/sbin`.
struct Tools {
    munged: PathBuf,
    slurmctld: PathBuf,
    slurmd: PathBuf,
    sinfo: PathBuf,
    scancel: PathBuf,
}

/// One daemon of the cluster: its process and the files its output goes to.
struct Daemon {
    name: &'static str,
    child: Child,
    logs: Vec<PathBuf>,
}

/// A running single-node Slurm cluster; see the module documentation.
pub struct Slurm {
    dir: tempfile::TempDir,
    conf: PathBuf,
    scancel: PathBuf,
    daemons: Vec<Daemon>,
}

impl Slurm {
    /// Starts munge, the controller and the node, and waits until `sinfo` shows the node
    /// idle. Returns `None` when a tool is missing outside CI (the running test's
    /// [`super::skip`] is recorded, and the caller returns); in CI a missing tool panics.
    /// Panics, with the tail of the daemons' logs, when a daemon exits or the node is not
    /// idle within [`SLURM_START_TIMEOUT`].
    pub fn start() -> Option<Slurm> {
        let tools = Tools {
            munged: require_tool("munged", INSTALL)?,
            slurmctld: require_tool("slurmctld", INSTALL)?,
            slurmd: require_tool("slurmd", INSTALL)?,
            sinfo: require_tool("sinfo", INSTALL)?,
            scancel: require_tool("scancel", INSTALL)?,
        };
        // The clients the tests run are looked up here too, so that a missing one skips
        // (or fails in CI) before anything starts.
        require_tool("srun", INSTALL)?;
        require_tool("sbatch", INSTALL)?;
        let dir = tempfile::Builder::new()
            .prefix("tailrate-slurm.")
            .tempdir()
            .unwrap_or_else(|e| panic!("cannot create a temporary directory: {e}"));
        let conf = dir.path().join("slurm.conf");
        let mut slurm = Slurm {
            dir,
            conf,
            scancel: tools.scancel.clone(),
            daemons: Vec::new(),
        };
        slurm.start_munge(&tools);
        slurm.write_conf();
        let conf = slurm.conf.clone();
        slurm.spawn("slurmctld", &tools.slurmctld, &["-D", "-f"], &conf);
        slurm.spawn("slurmd", &tools.slurmd, &["-D", "-f"], &conf);
        slurm.wait_idle(&tools.sinfo);
        Some(slurm)
    }

    /// The cluster's temporary directory (deleted on drop): a place for a job's files.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The cluster's `slurm.conf`.
    pub fn conf(&self) -> &Path {
        &self.conf
    }

    /// A command for one of Slurm's clients (`srun`, `sbatch`, ...) talking to this
    /// cluster: `SLURM_CONF` names its configuration, and the `SLURM_*` variables of any
    /// job the tests themselves run in are removed, so that the client does not take
    /// that job's allocation for its own.
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut cmd = Command::new(program);
        for (name, _) in std::env::vars_os() {
            if name.to_string_lossy().starts_with("SLURM_") {
                cmd.env_remove(name);
            }
        }
        cmd.env("SLURM_CONF", &self.conf);
        cmd
    }

    /// Every daemon's state and the tail of its logs, for a failure message.
    pub fn diagnostics(&mut self) -> String {
        let mut out = String::new();
        for d in &mut self.daemons {
            let state = match d.child.try_wait() {
                Ok(Some(status)) => format!("exited: {status}"),
                Ok(None) => "running".to_string(),
                Err(e) => format!("unknown: {e}"),
            };
            out.push_str(&format!("--- {} ({state}) ---\n", d.name));
            for log in &d.logs {
                out.push_str(&format!("[{}]\n{}\n", log.display(), tail(log)));
            }
        }
        out
    }

    /// Starts `munged` in the foreground with a fresh key, its socket and every other
    /// file in the directory, and waits for the socket.
    fn start_munge(&mut self, tools: &Tools) {
        let munge = self.dir.path().join("munge");
        fs::create_dir(&munge).unwrap_or_else(|e| panic!("mkdir {}: {e}", munge.display()));
        // munged checks that its key is the owner's alone.
        let key = munge.join("munge.key");
        let mut bytes = [0u8; 1024];
        fs::File::open("/dev/urandom")
            .and_then(|mut f| f.read_exact(&mut bytes))
            .unwrap_or_else(|e| panic!("cannot read /dev/urandom for a munge key: {e}"));
        fs::write(&key, bytes).unwrap_or_else(|e| panic!("write {}: {e}", key.display()));
        fs::set_permissions(&key, fs::Permissions::from_mode(0o400))
            .unwrap_or_else(|e| panic!("chmod {}: {e}", key.display()));
        let socket = self.munge_socket();
        let arg = |flag: &str, file: &str| format!("--{flag}={}", munge.join(file).display());
        let args = [
            "-F".to_string(),
            // Force: munged refuses a socket directory or key it finds too open for
            // root, which a temporary directory may be.
            "-f".to_string(),
            format!("--socket={}", socket.display()),
            format!("--key-file={}", key.display()),
            arg("pid-file", "munged.pid"),
            arg("log-file", "munged.log"),
            arg("seed-file", "munged.seed"),
        ];
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let log = munge.join("munged.log");
        self.spawn_with_logs("munged", &tools.munged, &args, None, vec![log]);
        let deadline = Instant::now() + SLURM_START_TIMEOUT;
        while !socket.exists() {
            self.assert_all_running("munged: waiting for its socket");
            if Instant::now() >= deadline {
                panic!(
                    "munged made no socket {} within {SLURM_START_TIMEOUT:?}\n{}",
                    socket.display(),
                    self.diagnostics()
                );
            }
            thread::sleep(Duration::from_millis(20));
        }
    }

    fn munge_socket(&self) -> PathBuf {
        self.dir.path().join("munge").join("munge.socket")
    }

    /// Writes `slurm.conf`: one node of this host's CPUs in one partition, every file in
    /// the directory, fresh ports, munge through the socket of [`Self::start_munge`].
    fn write_conf(&self) {
        let d = self.dir.path();
        for sub in ["state", "spool"] {
            fs::create_dir(d.join(sub)).unwrap_or_else(|e| panic!("mkdir {sub}: {e}"));
        }
        let host = short_hostname();
        let cpus = thread::available_parallelism().map_or(1, |n| n.get());
        let (ctld_port, slurmd_port) = two_free_ports();
        let p = |name: &str| d.join(name).display().to_string();
        let conf = format!(
            "# A one-node cluster for one test; every path is in this directory.\n\
             ClusterName=tailrate\n\
             SlurmctldHost={host}(127.0.0.1)\n\
             SlurmctldPort={ctld_port}\n\
             SlurmdPort={slurmd_port}\n\
             SlurmUser=root\n\
             SlurmdUser=root\n\
             AuthType=auth/munge\n\
             CredType=cred/munge\n\
             AuthInfo=socket={munge}\n\
             StateSaveLocation={state}\n\
             SlurmdSpoolDir={spool}\n\
             SlurmctldPidFile={ctld_pid}\n\
             SlurmdPidFile={d_pid}\n\
             SlurmctldLogFile={ctld_log}\n\
             SlurmdLogFile={d_log}\n\
             ProctrackType=proctrack/linuxproc\n\
             TaskPlugin=task/none\n\
             SelectType=select/cons_tres\n\
             SelectTypeParameters=CR_CPU\n\
             SchedulerType=sched/builtin\n\
             MpiDefault=none\n\
             JobAcctGatherType=jobacct_gather/none\n\
             AccountingStorageType=accounting_storage/none\n\
             # Nothing to mail, and no mail program installed.\n\
             MailProg=/bin/true\n\
             ReturnToService=2\n\
             NodeName={host} NodeAddr=127.0.0.1 CPUs={cpus} State=UNKNOWN\n\
             PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n",
            munge = self.munge_socket().display(),
            state = p("state"),
            spool = p("spool"),
            ctld_pid = p("slurmctld.pid"),
            d_pid = p("slurmd.pid"),
            ctld_log = p("slurmctld.log"),
            d_log = p("slurmd.log"),
        );
        fs::write(&self.conf, conf)
            .unwrap_or_else(|e| panic!("write {}: {e}", self.conf.display()));
    }

    /// Starts a Slurm daemon with `args` and the configuration file after them.
    fn spawn(&mut self, name: &'static str, program: &Path, args: &[&str], conf: &Path) {
        let log = self.dir.path().join(format!("{name}.log"));
        self.spawn_with_logs(name, program, args, Some(conf), vec![log]);
    }

    /// Starts a daemon with its stdout and stderr in `NAME.out`, which its failure
    /// messages show with `logs`.
    fn spawn_with_logs(
        &mut self,
        name: &'static str,
        program: &Path,
        args: &[&str],
        conf: Option<&Path>,
        mut logs: Vec<PathBuf>,
    ) {
        let out_path = self.dir.path().join(format!("{name}.out"));
        let out = fs::File::create(&out_path)
            .unwrap_or_else(|e| panic!("create {}: {e}", out_path.display()));
        let err = out
            .try_clone()
            .unwrap_or_else(|e| panic!("dup {}: {e}", out_path.display()));
        let mut cmd = self.command(program);
        cmd.args(args);
        if let Some(conf) = conf {
            cmd.arg(conf);
        }
        let child = cmd
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", program.display()));
        logs.push(out_path);
        self.daemons.push(Daemon { name, child, logs });
    }

    /// Panics with the logs when a daemon has exited.
    fn assert_all_running(&mut self, while_doing: &str) {
        let exited = self
            .daemons
            .iter_mut()
            .find_map(|d| (!matches!(d.child.try_wait(), Ok(None))).then_some(d.name));
        if let Some(name) = exited {
            panic!("{name} exited ({while_doing})\n{}", self.diagnostics());
        }
    }

    /// Waits until `sinfo` reports the node idle.
    fn wait_idle(&mut self, sinfo: &Path) {
        let deadline = Instant::now() + SLURM_START_TIMEOUT;
        loop {
            self.assert_all_running("waiting for the node to be idle");
            let mut cmd = self.command(sinfo);
            cmd.args(["-h", "-N", "-o", "%T"]);
            let out = run_with_timeout(cmd, Duration::from_secs(10));
            let last = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout).trim(),
                String::from_utf8_lossy(&out.stderr).trim()
            );
            if out.status.success() && last == "idle" {
                return;
            }
            if Instant::now() >= deadline {
                panic!(
                    "the node was not idle within {SLURM_START_TIMEOUT:?}; sinfo: {last:?}\n{}",
                    self.diagnostics()
                );
            }
            thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Slurm {
    fn drop(&mut self) {
        // Jobs first, while the controller runs: a test that failed halfway leaves no
        // step (and no tailrate it started) behind the daemons.
        if self
            .daemons
            .iter_mut()
            .all(|d| matches!(d.child.try_wait(), Ok(None)))
        {
            let mut cancel = self.command(&self.scancel);
            cancel.args(["--quiet", "--partition=debug"]);
            let _ = cancel
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
        // The node, then the controller, then munge, which both still talk to.
        for d in self.daemons.iter_mut().rev() {
            let pid = d.child.id().to_string();
            let _ = Command::new("kill").args(["-TERM", &pid]).status();
            let deadline = Instant::now() + Duration::from_secs(3);
            while matches!(d.child.try_wait(), Ok(None)) && Instant::now() < deadline {
                thread::sleep(Duration::from_millis(20));
            }
            let _ = d.child.kill();
            let _ = d.child.wait();
        }
    }
}

/// The last [`LOG_TAIL_LINES`] lines of `path`, or why there are none.
fn tail(path: &Path) -> String {
    match fs::read(path) {
        Ok(bytes) => {
            let text = String::from_utf8_lossy(&bytes);
            let lines: Vec<&str> = text.lines().collect();
            lines[lines.len().saturating_sub(LOG_TAIL_LINES)..].join("\n")
        }
        Err(e) => format!("(not readable: {e})"),
    }
}

/// This host's short name (`hostname -s`): slurmd finds its node by it.
fn short_hostname() -> String {
    let out = Command::new("hostname")
        .arg("-s")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .filter(|h| !h.is_empty());
    out.or_else(|| {
        fs::read_to_string("/proc/sys/kernel/hostname")
            .ok()
            .map(|h| h.trim().split('.').next().unwrap_or_default().to_string())
    })
    .unwrap_or_else(|| panic!("cannot tell this host's name (hostname -s)"))
}

/// Two different free ports.
fn two_free_ports() -> (u16, u16) {
    let first = free_port();
    loop {
        let second = free_port();
        if second != first {
            return (first, second);
        }
    }
}
