//! The binary: arguments, then a validated config, then `app::run`, then an exit code.
//! The only place that exits: 0 done, 1 a failed run, 2 bad usage, 130 interrupted.

use std::io::{IsTerminal, Read, Write};
use std::process::ExitCode;

use clap::Parser;
use tailrate::app::{self, Io, Status};
use tailrate::cli::{Args, Command};
use tailrate::config::RunConfig;
use tailrate::drive::Cancel;

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().collect();
    let args = match Args::try_parse_from(&argv) {
        Ok(args) => args,
        Err(e) => return usage_error(e),
    };
    let cancel = Cancel::new();
    watch_signals(&cancel);
    let command_line = app::redact(&argv);
    let mut stdout = std::io::stdout().lock();
    let mut stderr = std::io::stderr();
    let stderr_is_terminal = stderr.is_terminal();

    let result = match &args.subcommand {
        Some(Command::Sweep(sweep)) => {
            // Sweep flags (--rates, --slo, --out, ...) are usage errors too: exit 2.
            if let Err(e) = tailrate::sweep::check_args(sweep) {
                return usage(&e.to_string());
            }
            let config = match RunConfig::from_args(&tailrate::sweep::base_run_args(sweep), None) {
                Ok(c) => c,
                Err(e) => return usage(&e.to_string()),
            };
            warn_about_password(&argv, &mut stderr);
            warn_about_insecure(&config, &mut stderr);
            tailrate::sweep::run(
                sweep,
                &config,
                command_line,
                &cancel,
                Io {
                    stdout: &mut stdout,
                    stderr: &mut stderr,
                    stderr_is_terminal,
                },
            )
        }
        Some(Command::Tune(tune)) => {
            // Tune flags (--max-trials, and run flags tune cannot use) are usage errors too: exit 2.
            if let Err(e) = tailrate::tune::check_args(tune) {
                return usage(&e.to_string());
            }
            let config = match RunConfig::from_args(&tailrate::tune::base_run_args(tune), None) {
                Ok(c) => c,
                Err(e) => return usage(&e.to_string()),
            };
            warn_about_password(&argv, &mut stderr);
            warn_about_insecure(&config, &mut stderr);
            tailrate::tune::run(
                tune,
                &config,
                command_line,
                &cancel,
                Io {
                    stdout: &mut stdout,
                    stderr: &mut stderr,
                    stderr_is_terminal,
                },
            )
        }
        Some(Command::Plot(plot)) => {
            tailrate::sweep::replot(plot, &mut stdout).map(|()| Status::Completed)
        }
        None => {
            let stdin_arg = if args.run.stdin_last_arg {
                let mut buf = Vec::new();
                if let Err(e) = std::io::stdin().read_to_end(&mut buf) {
                    return fail(&format!("reading the last argument from stdin (-x): {e}"));
                }
                Some(buf)
            } else {
                None
            };
            let config = match RunConfig::from_args(&args.run, stdin_arg) {
                Ok(c) => c,
                Err(e) => return usage(&e.to_string()),
            };
            warn_about_password(&argv, &mut stderr);
            warn_about_insecure(&config, &mut stderr);
            app::run(
                &config,
                command_line,
                &cancel,
                Io {
                    stdout: &mut stdout,
                    stderr: &mut stderr,
                    stderr_is_terminal,
                },
            )
        }
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
        Err(e) => fail(&format!("{e:#}")),
    }
}

/// Prints clap's message as one line naming the flag (help and version print whole).
fn usage_error(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp
        | ErrorKind::DisplayVersion
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            ExitCode::SUCCESS
        }
        _ => {
            let text = e.render().to_string();
            let first = text
                .lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("invalid arguments");
            let first = first.strip_prefix("error: ").unwrap_or(first);
            usage(first)
        }
    }
}

fn usage(message: &str) -> ExitCode {
    eprintln!("tailrate: {message} (see --help)");
    ExitCode::from(2)
}

fn fail(message: &str) -> ExitCode {
    eprintln!("tailrate: error: {message}");
    ExitCode::from(1)
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
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
fn warn_about_insecure(config: &RunConfig, stderr: &mut dyn Write) {
    if config
        .plan
        .endpoint
        .tls()
        .is_some_and(|tls| tls.is_insecure())
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
