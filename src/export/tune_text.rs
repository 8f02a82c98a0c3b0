//! `tailrate tune`'s text: a line per trial as it ends, and the best setting at the end
//! with the command line that runs it.

use std::fmt::Write as _;
use std::time::Duration;

use crate::report::tune::{Phase, Trial, TuneReport};

/// A delay as `--pipeline-delay` takes it: `0`, `50us`, `1ms`.
pub fn delay_arg(delay: Duration) -> String {
    if delay.is_zero() {
        "0".to_string()
    } else {
        humantime::format_duration(delay).to_string()
    }
}

/// One trial's line: what it was (`step` is its place, `n` of `of`, in its phase; the
/// baseline has none), its setting, throughput, response p50 and p99, requests per write
/// and errors. `connections` is the baseline's `-c`.
pub fn trial_line(trial: &Trial, step: (usize, usize), connections: usize) -> String {
    let (n, of) = step;
    let label = match trial.phase {
        Phase::Baseline => "baseline".to_string(),
        Phase::Search => format!("trial {n}/{of}"),
        Phase::Confirm => format!("confirm {n}/{of}"),
    };
    let setting = match (trial.workers, trial.pipeline_size, trial.pipeline_delay_ns) {
        (Some(w), Some(b), Some(d)) => {
            format!(
                "--workers {w:<5} --pipeline-size {b:<4} --pipeline-delay {:<5}",
                delay_arg(Duration::from_nanos(d))
            )
        }
        _ => format!("plain closed loop on -c {connections}"),
    };
    let ms = |ns: u64| ns as f64 / 1e6;
    let mut line = format!(
        "{label:<14} {setting:<62} {:>10.0} req/s  p50 {:.3} ms  p99 {:.3} ms",
        trial.throughput_per_sec,
        ms(trial.response_p50_ns),
        ms(trial.response_p99_ns)
    );
    if let Some(per_write) = trial.requests_per_write {
        let _ = write!(line, "  {per_write:.1} per write");
    }
    if trial.errors > 0 {
        let _ = write!(line, "  ({} errors)", trial.errors);
    }
    line.push('\n');
    line
}

/// The end of the search: the best setting's median and runs, how it compares with the
/// plain closed loop, and the command line to paste (or why there is nothing to recommend).
pub fn summary(report: &TuneReport) -> String {
    let Some(best) = &report.best else {
        return match report.max_p99_ns {
            Some(b) if report.complete => format!(
                "no setting kept its p99 within --max-p99 {:.3} ms: nothing to recommend (fewer workers, or a looser bound)\n",
                b as f64 / 1e6
            ),
            _ => "no setting was re-measured; nothing to recommend\n".to_string(),
        };
    };
    let runs: Vec<String> = best
        .runs_per_sec
        .iter()
        .map(|r| format!("{r:.0}"))
        .collect();
    let p99 = best
        .response_p99_ns
        .map(|p| format!(", p99 {:.3} ms", p as f64 / 1e6))
        .unwrap_or_default();
    let mut s = match runs.as_slice() {
        [_] => format!("best: {:.0} req/s (1 run{p99})\n", best.throughput_per_sec),
        _ => format!(
            "best: {:.0} req/s (median of {} runs: {}{p99})\n",
            best.throughput_per_sec,
            runs.len(),
            runs.join(", ")
        ),
    };
    if let Some(baseline) = report.baseline_per_sec.filter(|&b| b > 0.0) {
        let _ = writeln!(
            s,
            "  {:.1}x the plain closed loop on -c {} ({baseline:.0} req/s)",
            best.throughput_per_sec / baseline,
            report.connections
        );
    }
    let _ = writeln!(s, "  {}", best.command_line.join(" "));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trial(phase: Phase, workers: Option<usize>) -> Trial {
        Trial {
            phase,
            workers,
            pipeline_size: workers.map(|_| 64),
            pipeline_delay_ns: workers.map(|_| 50_000),
            throughput_per_sec: 1234.4,
            response_p50_ns: 1_500_000,
            response_p99_ns: 9_000_000,
            requests_per_write: workers.map(|_| 16.0),
            errors: 2,
        }
    }

    #[test]
    fn a_trial_line_names_its_phase_setting_and_results() {
        let line = trial_line(&trial(Phase::Search, Some(800)), (2, 9), 50);
        assert!(line.starts_with("trial 2/9      --workers 800   --pipeline-size 64   "));
        assert!(line.contains("--pipeline-delay 50us "));
        assert!(
            line.ends_with("1234 req/s  p50 1.500 ms  p99 9.000 ms  16.0 per write  (2 errors)\n")
        );
        let baseline = trial_line(&trial(Phase::Baseline, None), (0, 0), 50);
        assert!(baseline.starts_with("baseline       plain closed loop on -c 50 "));
    }

    #[test]
    fn the_best_settings_runs_are_counted_in_good_grammar() {
        let report = |runs_per_sec: Vec<f64>| TuneReport {
            header: crate::report::Header::new(1, Vec::new(), 7, Default::default()),
            test: "GET".into(),
            connections: 50,
            trial_secs: 1.0,
            trials: Vec::new(),
            baseline_per_sec: None,
            best: Some(crate::report::tune::Best {
                workers: 800,
                pipeline_size: 64,
                pipeline_delay_ns: 0,
                throughput_per_sec: 1000.0,
                runs_per_sec,
                response_p99_ns: None,
                command_line: vec!["tailrate".into()],
            }),
            max_p99_ns: None,
            interrupted: false,
            complete: true,
        };
        assert!(summary(&report(vec![1000.0])).starts_with("best: 1000 req/s (1 run)\n"));
        assert!(
            summary(&report(vec![900.0, 1000.0, 1100.0]))
                .starts_with("best: 1000 req/s (median of 3 runs: 900, 1000, 1100)\n")
        );
        let mut with_p99 = report(vec![1000.0]);
        if let Some(best) = with_p99.best.as_mut() {
            best.response_p99_ns = Some(4_070_000);
        }
        assert!(summary(&with_p99).starts_with("best: 1000 req/s (1 run, p99 4.070 ms)\n"));
        // A bound no setting met says so, and what to try.
        let none = TuneReport {
            best: None,
            max_p99_ns: Some(2_000_000),
            ..report(vec![1000.0])
        };
        assert!(
            summary(&none).contains("within --max-p99 2.000 ms"),
            "{}",
            summary(&none)
        );
    }

    #[test]
    fn delays_read_as_the_flag_takes_them() {
        assert_eq!(delay_arg(Duration::ZERO), "0");
        assert_eq!(delay_arg(Duration::from_millis(1)), "1ms");
    }
}
