//! Unit tests of `config/sweep/`.

#![allow(clippy::unwrap_used)]
use super::*;
use clap::Parser;

fn err(text: &str) -> String {
    parse_rates(text).unwrap_err().to_string()
}

#[test]
fn a_range_includes_its_end_when_a_step_lands_on_it() {
    assert_eq!(
        parse_rates("10k..50k:10k").unwrap(),
        Rates::Absolute(vec![10e3, 20e3, 30e3, 40e3, 50e3])
    );
    assert_eq!(
        parse_rates("10k..55k:10k").unwrap(),
        Rates::Absolute(vec![10e3, 20e3, 30e3, 40e3, 50e3])
    );
    assert_eq!(
        parse_rates("5k..5k:1k").unwrap(),
        Rates::Absolute(vec![5e3])
    );
    assert_eq!(parse_rates("0.1k..0.3k:0.1k").unwrap().values().len(), 3);
}

#[test]
fn a_list_keeps_its_rates() {
    assert_eq!(
        parse_rates("5k, 10k,20000").unwrap(),
        Rates::Absolute(vec![5e3, 10e3, 20e3])
    );
}

#[test]
fn percentages_are_fractions_of_the_closed_loop_max() {
    let Rates::OfClosedLoopMax(v) = parse_rates("10%..120%:10%").unwrap() else {
        panic!()
    };
    assert_eq!(v.len(), 12);
    assert!(
        (v[0] - 0.1).abs() < 1e-12 && (v[11] - 1.2).abs() < 1e-12,
        "{v:?}"
    );
    assert_eq!(
        parse_rates("50%,100%").unwrap(),
        Rates::OfClosedLoopMax(vec![0.5, 1.0])
    );
}

#[test]
fn bad_rates_are_refused_naming_the_flag() {
    for bad in [
        "",
        "20k..10k:1k",
        "10k..20k:0",
        "10k..20k:0k",
        "10k..20k",
        "..:1k",
        "10k..20k:-1k",
        "fast",
        "20k,10k",
        "10%..50k:5%",
    ] {
        let e = err(bad);
        assert!(e.contains("--rates"), "{bad}: {e}");
    }
    assert!(err("20k..10k:1k").contains("reversed"));
    assert!(err("10k..20k:0").contains("zero"));
    assert!(err("1..1M:1").contains("at most"));
    assert!(
        err("5k-20k").contains("write 5k..20k:STEP"),
        "{}",
        err("5k-20k")
    );
}

fn sweep_args(extra: &[&str]) -> Result<SweepPlan, ConfigError> {
    let mut argv = vec!["tailrate", "sweep", "--rates", "1k..2k:1k"];
    argv.extend_from_slice(extra);
    let args = crate::cli::Args::try_parse_from(argv).unwrap();
    match args.subcommand {
        Some(crate::cli::Command::Sweep(s)) => plan(&s, None),
        _ => panic!("not a sweep"),
    }
}

#[test]
fn flags_a_sweep_cannot_use_are_refused_naming_them() {
    for flags in [
        &["-n", "100"][..],
        &["-P", "16"],
        &["--workers", "100"],
        &["--pipeline-delay", "1ms"],
        &["--rate", "1k"],
        &["--hdr-log", "x.hlog"],
        &["-l"],
    ] {
        let mut argv = vec!["tailrate", "sweep", "--rates", "1k"];
        argv.extend_from_slice(flags);
        let e = crate::cli::Args::try_parse_from(argv)
            .unwrap_err()
            .to_string();
        assert!(e.contains(flags[0]), "{flags:?}: {e}");
    }
    for (flags, name) in [
        (&["-t", "get,set"][..], "-t"),
        (&["-t", "ping"][..], "-t"),
        (&["--resolution", "0"][..], "--resolution"),
        (&["--resolution", "0.6"][..], "--resolution"),
        (&["--slo", "p99<1ms"][..], "--slo"),
    ] {
        let e = sweep_args(flags).unwrap_err().to_string();
        assert!(
            e.starts_with(&format!("invalid value for {name}:"))
                || e.starts_with(&format!("{name} cannot")),
            "{flags:?}: {e}"
        );
    }
    let plan = sweep_args(&["-t", "get", "--slo", "p99<=1ms", "--slo", "p99.9<=5ms"]).unwrap();
    assert_eq!(plan.slos.len(), 2);
    assert_eq!(
        (plan.warmup, plan.duration),
        (DEFAULT_WARMUP, DEFAULT_DURATION)
    );
}

#[test]
fn an_out_dir_under_a_file_is_refused_naming_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("f");
    std::fs::write(&file, b"x").unwrap();
    let e = check_out_dir(&file.join("sub")).unwrap_err().to_string();
    assert!(e.contains("--out"), "{e}");
    check_out_dir(&dir.path().join("a/b")).unwrap();
    assert_eq!(
        std::fs::read_dir(dir.path().join("a/b")).unwrap().count(),
        0
    );
}

#[test]
fn repeats_and_order_are_checked_and_kept() {
    let plan = sweep_args(&["--repeat", "3", "--order", "shuffle"]).unwrap();
    assert_eq!((plan.repeat, plan.order), (3, Order::Shuffle));
    let plan = sweep_args(&[]).unwrap();
    assert_eq!((plan.repeat, plan.order), (1, Order::Ascending));
    // 0 is refused by the flag itself (a usage error before any check here).
    let e = sweep_args(&["--repeat", "101"]).unwrap_err().to_string();
    assert!(e.starts_with("invalid value for --repeat:"), "{e}");
}
