//! The binary: arguments, then one checked [`Command`], then the command's run, then an
//! exit code. The only place that exits: 0 done, 1 a failed run, 2 bad usage, 130
//! interrupted.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use clap::{CommandFactory, Parser};
use tailrate::app::{self, Io, Status};
use tailrate::cli::Args;
use tailrate::config::redact::redact;
use tailrate::config::{Command, RunConfig};
use tailrate::drive::Cancel;

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().collect();
    let args = match Args::try_parse_from(&argv) {
        Ok(args) => args,
        Err(e) => return usage_error(e),
    };
    let command = match Command::from_args(&args, &mut std::io::stdin()) {
        Ok(command) => command,
        Err(e) if e.exit_code() == 2 => return usage(&e.to_string()),
        Err(e) => return fail(&e.to_string()),
    };
    let cancel = Cancel::new();
    watch_signals(&cancel);
    let command_line = redact(&argv);
    let mut stdout = std::io::stdout().lock();
    let mut stderr = std::io::stderr();
    let runs = command.base_runs();
    if !runs.is_empty() {
        warn_about_password(&argv, &mut stderr);
        warn_about_insecure(&runs, &mut stderr);
    }
    let stderr_is_terminal = stderr.is_terminal();
    let io = Io {
        stdout: &mut stdout,
        stderr: &mut stderr,
        stderr_is_terminal,
    };
    let result = match &command {
        Command::Run(run) => app::run(run, command_line, &cancel, io),
        Command::Sweep(sweep) => tailrate::sweep::run(sweep, command_line, &cancel, io),
        Command::Tune(tune) => tailrate::tune::run(tune, command_line, &cancel, io),
        Command::Plot(plot) => tailrate::sweep::replot(plot, io.stdout).map(|()| Status::Completed),
        Command::Compare(compare) => tailrate::compare::run(compare, command_line, &cancel, io),
        Command::Completions(shell) => {
            clap_complete::generate(*shell, &mut Args::command(), "tailrate", io.stdout);
            Ok(Status::Completed)
        }
        Command::Man => clap_mangen::Man::new(Args::command())
            .render(io.stdout)
            .map(|()| Status::Completed)
            .map_err(anyhow::Error::from),
    };
    let _ = stdout.flush();
    match result {
        Ok(Status::Completed) => ExitCode::SUCCESS,
        Ok(Status::Invalid) => {
            fail("a self-check failed and --strict was given; the results above are marked invalid")
        }
        Ok(Status::Failed(reason)) => fail(&reason),
        Ok(Status::Interrupted) => ExitCode::from(130),
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) if is_bad_input(&e) => usage(&tailrate::text::printable(&format!("{e:#}"))),
        Err(e) => fail(&format!("{e:#}")),
    }
}
/// Prints clap's message without its usage block, keeping what names the problem: the
/// flag, the missing argument, the suggestion and the allowed values (help and version
/// print whole).
fn usage_error(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp
        | ErrorKind::DisplayVersion
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            ExitCode::SUCCESS
        }
        _ => usage(&clap_message(&e.render().to_string())),
    }
}

/// clap's rendered error up to its usage block, as one line when it is one sentence and
/// as `message: detail; detail` otherwise.
fn clap_message(rendered: &str) -> String {
    let mut parts = rendered
        .lines()
        .take_while(|l| !l.starts_with("Usage:"))
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("For more information"));
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

/// Input the user must fix (a report `compare` cannot read or compare): bad usage.
fn is_bad_input(e: &anyhow::Error) -> bool {
    e.chain().any(|c| c.is::<tailrate::compare::InputError>())
}

/// redis-cli's warning when a password is typed on the command line.
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

/// Ctrl+C and SIGTERM end the run; what was measured is still reported and written.
/// A second signal exits at once.
fn watch_signals(cancel: &Cancel) {
    let cancel = cancel.clone();
    std::thread::spawn(move || {
        let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        else {
            return;
        };
        runtime.block_on(async move {
            let Ok(mut term) =
                tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            else {
                return;
            };
            let mut seen = 0;
            loop {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
                seen += 1;
                if seen > 1 {
                    std::process::exit(130);
                }
                cancel.cancel();
            }
        });
    });
}
