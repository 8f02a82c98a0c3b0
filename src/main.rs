//! The binary: arguments, then one checked [`Command`], then the command's run, then an
//! exit code. The only place that exits: 0 done, 1 a failed run, 2 bad usage, 130
//! interrupted.
//!
//! Signals: SIGINT (Ctrl+C), SIGTERM, SIGHUP (a closed terminal or SSH session) and SIGQUIT
//! are one request to stop. Before a command starts (while its flags are read, or `-x`
//! reads standard input), one exits at once, with nothing to write. Once it runs, the
//! first signal ends it as interrupted (what was measured is written), the second skips
//! waiting for replies still in flight (and still writes), the third exits at once. A
//! sweep or tune whose last run has ended is complete: a signal while it writes its files
//! lets them be written and the exit is 0, as its report says.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Context;
use clap::{CommandFactory, Parser};
use tailrate::app::{self, Io, Status};
use tailrate::cli::{Args, NOT_A_REPLAYS_FLAGS};
use tailrate::config::redact::{hide_in_message, redact};
use tailrate::config::{Command, RunConfig};
use tailrate::drive::Cancel;

fn main() -> ExitCode {
    let cancel = Cancel::new();
    // Watched from the start, so that no signal meets the default action (a death by
    // signal, no exit code); `armed` says whether a command has outputs to write yet.
    let armed = Arc::new(AtomicBool::new(false));
    watch_signals(&cancel, &armed);
    // `args_os`: a key, a value or a file name need not be UTF-8 (`args` would panic).
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let mut args = match Args::try_parse_from(&argv) {
        Ok(args) => args,
        Err(e) => return usage_error(e, &argv),
    };
    if let Some(link) = args.link_mut()
        && link.askpass
    {
        match ask_password() {
            Ok(password) => link.password = Some(password),
            Err(why) => return usage(&format!("--askpass: {why}")),
        }
    }
    let command = match Command::from_args(&args, &mut std::io::stdin()) {
        Ok(command) => command,
        Err(e) if e.exit_code() == 2 => return usage(&hide_in_message(&e.to_string(), &argv)),
        Err(e) => return fail(&e.to_string()),
    };
    let runs = command.base_runs();
    // Before anything connects: room for a descriptor per connection (both sides' of a
    // live compare), or an error.
    let connections: usize = runs.iter().map(|r| r.plan.connections).sum();
    let threads: usize = runs.iter().map(|r| r.plan.threads).sum();
    if !runs.is_empty() {
        let flag = runs[0].connections_flag();
        if let Err(e) = tailrate::net::fds::ensure_for(flag, connections, 1, threads) {
            return fail(&e.to_string());
        }
        // Only a command that measures has something to write when interrupted.
        armed.store(true, Ordering::SeqCst);
    }
    let command_line = redact(&argv);
    let mut stdout = std::io::stdout().lock();
    let mut stderr = std::io::stderr();
    if !runs.is_empty() {
        warn_about_password(&command_line, &mut stderr);
        warn_about_insecure(&runs, &mut stderr);
    }
    // Bound before any load, so that a port in use ends the command before it starts.
    let metrics = match runs.first().and_then(|r| r.output.metrics.as_ref()) {
        Some(config) => match app::metrics::Metrics::serve(config) {
            Ok(metrics) => Some(metrics),
            Err(e) => return fail(&format!("{e:#}")),
        },
        None => None,
    };
    let stderr_is_terminal = stderr.is_terminal();
    let io = Io {
        stdout: &mut stdout,
        stderr: &mut stderr,
        stderr_is_terminal,
        metrics: metrics.as_ref(),
    };
    let result = match &command {
        Command::Run(run) => app::run(run, command_line, &cancel, io),
        Command::Sweep(sweep) => tailrate::sweep::run(sweep, command_line, &cancel, io),
        Command::Tune(tune) => tailrate::tune::run(tune, command_line, &cancel, io),
        Command::Plot(plot) => tailrate::sweep::replot(plot, io.stdout).map(|()| Status::Completed),
        Command::Compare(compare) => tailrate::compare::run(compare, command_line, &cancel, io),
        Command::Merge(merge) => tailrate::merge::run(merge, io.stdout).map(|()| Status::Completed),
        Command::Report(report) => {
            tailrate::reread::run(report, io.stdout, io.stderr).map(|()| Status::Completed)
        }
        Command::Completions(shell) => {
            clap_complete::generate(*shell, &mut Args::command(), "tailrate", io.stdout);
            Ok(Status::Completed)
        }
        Command::Man { page, out } => man_pages(page.as_deref(), out.as_deref(), io.stdout),
    };
    let _ = stdout.flush();
    // The final figures stay up for a last scrape; a command that ended on an error has
    // its message printed at once instead.
    if let (Some(metrics), Ok(_)) = (metrics, &result) {
        metrics.linger(&cancel);
    }
    // A sweep or tune ends as its saved report says: 130 exactly when the report says
    // `interrupted`. Once its last run has ended it is complete, and a signal during the
    // final write lets the write finish; reading the signal again here would exit 130
    // beside a report that says `complete: true`.
    let ends_as_reported = matches!(command, Command::Sweep(_) | Command::Tune(_));
    match result {
        // A signal that came after a run's last test ended still asked to interrupt.
        Ok(
            Status::Completed
            | Status::Invalid
            | Status::NothingSucceeded(_)
            | Status::ObjectiveMissed(_),
        ) if cancel.is_cancelled() && !ends_as_reported => ExitCode::from(130),
        Ok(Status::Completed) => ExitCode::SUCCESS,
        Ok(Status::Invalid) => {
            fail("a self-check failed and --strict was given; the results above are marked invalid")
        }
        Ok(Status::NothingSucceeded(reason) | Status::ObjectiveMissed(reason)) => fail(&reason),
        Ok(Status::Failed(reason)) => fail(&reason),
        Ok(Status::Interrupted) => ExitCode::from(130),
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) if is_bad_input(&e) => usage(&tailrate::text::printable(&format!("{e:#}"))),
        Err(e) => fail(&format!("{e:#}")),
    }
}
/// `tailrate man`: one page on standard output, or every page into `out`.
fn man_pages(
    page: Option<&str>,
    out: Option<&std::path::Path>,
    stdout: &mut dyn Write,
) -> anyhow::Result<Status> {
    use tailrate::cli::man;
    match out {
        Some(dir) => {
            for path in man::write_all(Args::command(), dir)
                .with_context(|| format!("writing the man pages into {}", dir.display()))?
            {
                writeln!(stdout, "wrote {}", path.display())?;
            }
        }
        None => match man::render(Args::command(), page, stdout) {
            Some(result) => result?,
            None => anyhow::bail!("no man page {page:?}"),
        },
    }
    Ok(Status::Completed)
}

/// Prints clap's message without its usage block, keeping what names the problem: the
/// flag, the missing argument, the suggestion and the allowed values (help and version
/// print whole).
fn usage_error(e: clap::Error, argv: &[std::ffi::OsString]) -> ExitCode {
    let usage = |message: &str| usage(&hide_in_message(message, argv));
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp
        | ErrorKind::DisplayVersion
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            ExitCode::SUCCESS
        }
        // A missing flag is often required by another one typed (`compare --rounds 3`
        // requires `--live`), and a flag a subcommand does not take is refused as unknown
        // to it: the usage line clap writes with them names the flags typed and the
        // subcommand.
        ErrorKind::MissingRequiredArgument | ErrorKind::UnknownArgument => {
            let rendered = e.render().to_string();
            let hint = usage_hint(&rendered);
            // Where this names the fix, clap's tips ("to pass '-c' as a value, use '-- -c'",
            // "a similar argument exists: '--exclude'") point away from it, and so does the
            // usage line clap writes for the flag it guessed.
            let guessed = hint.is_some() && rendered.contains("a similar argument exists");
            let usage_line = rendered
                .lines()
                .find_map(|l| l.strip_prefix("Usage: "))
                .map(str::trim)
                .filter(|_| !guessed)
                .filter(|u| {
                    e.kind() == ErrorKind::MissingRequiredArgument
                        || u.split(' ')
                            .nth(1)
                            .is_some_and(|w| !w.starts_with(['[', '-', '<']))
                });
            let mut message = clap_message(&rendered, hint.is_none());
            if let Some(hint) = hint {
                message = format!("{message}; {hint}");
            }
            match usage_line {
                Some(u) => usage(&format!("{message} (usage: {u})")),
                None => usage(&message),
            }
        }
        _ => {
            let rendered = e.render().to_string();
            let message = clap_message(&rendered, true);
            match usage_hint(&rendered) {
                Some(hint) => usage(&format!("{message}; {hint}")),
                None => usage(&message),
            }
        }
    }
}

/// A line that names the fix for the mistakes clap's own message cannot: `-h` alone
/// (it is the host, as redis-benchmark's), and flags that belong to another job.
fn usage_hint(message: &str) -> Option<&'static str> {
    if message.contains("a value is required for '-h <HOST>'") {
        return Some("-h is the server's host, as redis-benchmark's; help is --help");
    }
    if message.contains("unexpected argument '--contrast'") && message.contains("sweep") {
        return Some(
            "a sweep sets closed loops beside its steps with --rate-capped and --closed-loop-points",
        );
    }
    // -n counts a closed loop's requests; an open loop is as long as its schedule.
    if message.contains("'--rate <RATE>' cannot be used with '-n")
        || message.contains("'-n <REQUESTS>' cannot be used with '--rate")
    {
        return Some(
            "an open loop runs for a time: give --duration (e.g. --duration 10s) instead of -n",
        );
    }
    // A replay's connections and databases are the trace's: clap refuses these flags as
    // unknown to it, and this says why and what to give instead.
    if message.contains("Usage: tailrate replay") {
        let refused = NOT_A_REPLAYS_FLAGS
            .iter()
            .find(|(flag, _)| message.contains(&format!("unexpected argument '{flag}'")));
        if let Some((_, why)) = refused {
            return Some(why);
        }
    }
    if message.contains("unexpected argument '--slo'") {
        return Some(
            "an objective is judged on a run (`tailrate --slo ...`) or searched by `tailrate sweep --rates ... --slo ...`",
        );
    }
    None
}

/// clap's rendered error up to its usage block, as one line when it is one sentence and
/// as `message: detail; detail` otherwise; its `tip:` lines only with `tips`.
fn clap_message(rendered: &str, tips: bool) -> String {
    let mut parts = rendered
        .lines()
        .take_while(|l| !l.starts_with("Usage:"))
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("For more information"))
        .filter(|l| tips || !l.starts_with("tip:"));
    let first = parts.next().unwrap_or("invalid arguments");
    let first = first.strip_prefix("error: ").unwrap_or(first);
    let rest: Vec<&str> = parts.collect();
    match (first.strip_suffix(':'), rest.is_empty()) {
        (_, true) => first.to_string(),
        (Some(head), false) => format!("{head}: {}", rest.join(", ")),
        (None, false) => format!("{first}; {}", rest.join("; ")),
    }
}

fn usage(message: &str) -> ExitCode {
    eprintln!("tailrate: {message} (see --help)");
    ExitCode::from(2)
}

fn fail(message: &str) -> ExitCode {
    // Each layer escapes the server's words it quotes; this catches any a layer missed,
    // and changes nothing in text already escaped.
    eprintln!("tailrate: error: {}", tailrate::text::printable(message));
    ExitCode::from(1)
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// Input the user must fix (a report `compare` cannot read or compare, shards `merge`
/// refuses, a file `plot` cannot draw or `report` cannot render): bad usage.
fn is_bad_input(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.is::<tailrate::compare::InputError>()
            || c.is::<tailrate::merge::MergeError>()
            || c.is::<tailrate::reread::InputError>()
            || c.is::<tailrate::export::text::NoSuchForm>()
            || c.is::<tailrate::sweep::PlotInputError>()
            || c.is::<tailrate::report::sweep::ParseError>()
            || c.is::<tailrate::report::compare::ComparisonError>()
    })
}

/// redis-cli's warning when a password is typed on the command line. `argv` may be the
/// redacted command line: redacting keeps the flag and the URI's `://` and `@`.
fn warn_about_password(argv: &[String], stderr: &mut dyn Write) {
    let typed = argv.iter().skip(1).any(|a| {
        a == "-a"
            || (a.starts_with("-a") && !a.starts_with("--"))
            || (a.contains("://") && a.contains('@'))
    });
    if typed {
        let _ = writeln!(
            stderr,
            "Warning: Using a password with '-a' or '-u' option on the command line interface may not be safe."
        );
    }
}

/// `--askpass`: the password typed at the terminal without echo, as redis-cli asks for
/// it, or the first line of standard input when that is not a terminal (a pipe, a
/// file; `-x` then reads what follows it).
fn ask_password() -> Result<String, String> {
    let stdin = std::io::stdin();
    let line = if stdin.is_terminal() {
        rpassword::prompt_password("Please input password: ").map_err(|e| e.to_string())?
    } else {
        let mut line = String::new();
        stdin
            .read_line(&mut line)
            .map_err(|e| format!("standard input: {e}"))?;
        line
    };
    let password = line.trim_end_matches(['\r', '\n']);
    if password.is_empty() {
        return Err("no password given".into());
    }
    Ok(password.to_string())
}

/// `--insecure` on every run, before connecting: the server is not authenticated.
fn warn_about_insecure(configs: &[&RunConfig], stderr: &mut dyn Write) {
    if configs
        .iter()
        .any(|c| c.plan.endpoint.tls().is_some_and(|tls| tls.is_insecure()))
    {
        let _ = writeln!(
            stderr,
            "WARNING: --insecure: the server's certificate is not verified"
        );
    }
}

/// SIGINT, SIGTERM, SIGHUP and SIGQUIT: at once exit 130 while `armed` is false (nothing
/// to write yet); once it is, the first ends the run (what was measured is still reported
/// and written), the second hurries it (no waiting for replies in flight), the third exits
/// at once. Returns when the handlers are in place.
fn watch_signals(cancel: &Cancel, armed: &Arc<AtomicBool>) {
    let (cancel, armed) = (cancel.clone(), armed.clone());
    let (ready, installed) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        else {
            let _ = ready.send(());
            return;
        };
        runtime.block_on(async move {
            use tokio::signal::unix::{SignalKind, signal};
            // A hangup or a quit left to its default action would kill the run with
            // nothing written, which is what a closed SSH session sends.
            let (Ok(mut interrupt), Ok(mut term), Ok(mut hangup), Ok(mut quit)) = (
                signal(SignalKind::interrupt()),
                signal(SignalKind::terminate()),
                signal(SignalKind::hangup()),
                signal(SignalKind::quit()),
            ) else {
                let _ = ready.send(());
                return;
            };
            let _ = ready.send(());
            let mut seen = 0;
            loop {
                tokio::select! {
                    _ = interrupt.recv() => {}
                    _ = term.recv() => {}
                    _ = hangup.recv() => {}
                    _ = quit.recv() => {}
                }
                seen += 1;
                if !armed.load(Ordering::SeqCst) || seen > 2 {
                    std::process::exit(130);
                }
                if seen == 1 {
                    cancel.cancel();
                } else {
                    cancel.hurry();
                }
            }
        });
    });
    // The handlers are registered (or failed to be) before the program goes on.
    let _ = installed.recv();
}
