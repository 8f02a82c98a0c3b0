//! The exceedance test's real error rates, measured by simulation: [`decide`] run as a
//! sweep runs it (one visit at a time, a decision at each look, stopping at the first
//! verdict or the last look) on the hosts of [`hosts`], beside the rule it replaced on the
//! same visits. [`LOOKS`] and their levels are what make the asserted rates hold; the table
//! the ignored test prints is the one in `bench/README.md`.
//!
//! What the rule claims, and the suite checks on every host model without rare large
//! stalls (the data and harsher hosts in weather of CV 0.3 and 0.6, mixed weather): a rate
//! at the bound passes at most 5% of the time and fails at most 5%; one at 0.6 of it passes
//! at least 80% of the time (75% for the harsher host in strong weather, 79% measured); one
//! at twice the bound fails at least 95% of the time. Under rare large server stalls no
//! rule that decides on a few dozen visits can claim 5%: a stall in one visit of ten is
//! missed by all of 16 visits 19% of the time (0.9^16), and a rate whose E sits at the
//! bound only because of such stalls then looks like one well under it. There the suite
//! checks that the rule passes a boundary rate far less often than the one it replaced,
//! and a rate a third over the bound (72.6k/s on this project's machine) at most 5% of the
//! time.

use super::*;

mod hosts;

use hosts::{Cell, DATA, LIMIT, MIXED, Simulation, WHOLE, WINDOWS_PER_VISIT, Weather};

/// The rule [`RULE`] replaced: looks at 4, 8 and 16 visits, one level of 0.55% for pass and
/// fail alike, no median bound.
const REPLACED: Rule = Rule {
    looks: &[
        Look {
            visits: 4,
            pass: Some(0.0055),
            fail: 0.0055,
        },
        Look {
            visits: 8,
            pass: Some(0.0055),
            fail: 0.0055,
        },
        Look {
            visits: 16,
            pass: Some(0.0055),
            fail: 0.0055,
        },
    ],
    median_bound: false,
};

/// The seed of the first cell; each cell adds its index, so cells are independent.
const SEED: u64 = 0x5eed_e0ce;
/// Sequential decisions per cell in the suite: a few seconds for the whole table.
const DECISIONS: usize = 2_000;
/// Sequential decisions per cell for the table in `bench/README.md`.
const TABLE_DECISIONS: usize = 20_000;

/// What one rule's decisions on a cell came to.
#[derive(Debug, Clone, Copy, Default)]
struct Tally {
    decisions: usize,
    holds: usize,
    broken: usize,
    /// Visits made over every decision.
    visits: usize,
}

impl Tally {
    fn holds(&self) -> f64 {
        self.holds as f64 / self.decisions as f64
    }

    fn broken(&self) -> f64 {
        self.broken as f64 / self.decisions as f64
    }

    fn mean_visits(&self) -> f64 {
        self.visits as f64 / self.decisions as f64
    }
}

/// Runs `decisions` sequential decisions of each of `rules` on a cell, every rule on the
/// same simulated visits.
fn run(cell: &Cell, rules: &[Rule], decisions: usize, seed: u64) -> Vec<Tally> {
    let mut sim = Simulation::new(cell, seed);
    let cap = rules
        .iter()
        .filter_map(|r| r.looks.last())
        .map(|l| l.visits)
        .max()
        .unwrap_or(0);
    let mut visits = vec![vec![Window::default(); WINDOWS_PER_VISIT]; cap];
    let mut tallies = vec![Tally::default(); rules.len()];
    for _ in 0..decisions {
        sim.new_decision();
        for visit in &mut visits {
            sim.visit(visit);
        }
        for (rule, tally) in rules.iter().zip(&mut tallies) {
            tally.decisions += 1;
            let mut used = rule.looks.last().map_or(0, |l| l.visits);
            for look in rule.looks {
                match decide_with(&visits[..look.visits], LIMIT, rule).0 {
                    Decision::Holds => tally.holds += 1,
                    Decision::Broken => tally.broken += 1,
                    Decision::Undecided => continue,
                }
                used = look.visits;
                break;
            }
            tally.visits += used;
        }
    }
    tallies
}

/// Every cell of the table, each in a thread of its own, with its seed: for each cell,
/// the tallies of `rules` in order.
fn table(cells: &[(&str, Cell)], rules: &[Rule], decisions: usize) -> Vec<Vec<Tally>> {
    std::thread::scope(|scope| {
        let handles: Vec<_> = cells
            .iter()
            .enumerate()
            .map(|(i, (_, cell))| scope.spawn(move || run(cell, rules, decisions, SEED + i as u64)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    })
}

/// The host models and true E of the table, each named.
fn cells() -> Vec<(&'static str, Cell)> {
    let mut cells = Vec::new();
    for (name, host, weather) in [
        ("data, weather CV 0.3", DATA, Weather::Lognormal(0.3)),
        ("data, weather CV 0.6", DATA, Weather::Lognormal(0.6)),
        ("harsher, weather CV 0.3", WHOLE, Weather::Lognormal(0.3)),
        ("harsher, weather CV 0.6", WHOLE, Weather::Lognormal(0.6)),
    ] {
        for times_limit in [0.6, 1.0, 2.0] {
            cells.push((name, Cell::at(host, weather, 10_000.0, times_limit)));
        }
    }
    for times_limit in [0.6, 1.0, 2.0] {
        cells.push((
            "mixed weather",
            Cell::at(DATA, MIXED, 65_000.0, times_limit),
        ));
    }
    let calm = Weather::Lognormal(0.3);
    for (name, base, per_visit) in [
        ("server stalls in 5% of runs", 0.00754, 0.05),
        ("server stalls in 10% of runs", 0.00508, 0.10),
        ("server stalls in 18% of runs", 0.0045, 0.18),
        ("server stalls in 4% of runs", 0.004, 0.04),
        ("server stalls in 50% of runs", 0.02, 0.5),
    ] {
        cells.push((name, Cell::stalling(base, per_visit, calm)));
    }
    cells
}

/// Whether a cell holds rare large server stalls.
fn stalls(cell: &Cell) -> bool {
    cell.server_stall.is_some()
}

/// The cell's true E over the limit.
fn times_limit(cell: &Cell) -> f64 {
    cell.truth() / LIMIT
}

fn print(cells: &[(&str, Cell)], tallies: &[Vec<Tally>], decisions: usize) {
    eprintln!(
        "exceedance test, runs of 2 s, limit {LIMIT}, {decisions} decisions per cell: \
         a rule, then the one it is compared with"
    );
    eprintln!(
        "| host model | true E / limit | P(pass) | P(fail) | mean runs | \
         compared: P(pass) | P(fail) | mean runs |"
    );
    eprintln!("|---|---|---|---|---|---|---|---|");
    for ((name, cell), t) in cells.iter().zip(tallies) {
        let (new, old) = (&t[0], &t[1]);
        eprintln!(
            "| {name} | {:.2} | {:.3} | {:.3} | {:.1} | {:.3} | {:.3} | {:.1} |",
            times_limit(cell),
            new.holds(),
            new.broken(),
            new.mean_visits(),
            old.holds(),
            old.broken(),
            old.mean_visits(),
        );
    }
}

/// `rate` is at most `claim`, within the sampling error of `decisions` decisions (2.5
/// standard errors): the claims are the table's, measured on ten times as many.
fn at_most(rate: f64, claim: f64, decisions: usize) -> bool {
    rate <= claim + 2.5 * (claim * (1.0 - claim) / decisions as f64).sqrt()
}

/// `rate` is at least `claim`, within the sampling error of `decisions` decisions.
fn at_least(rate: f64, claim: f64, decisions: usize) -> bool {
    rate >= claim - 2.5 * (claim * (1.0 - claim) / decisions as f64).sqrt()
}

#[test]
fn pass_and_fail_keep_their_error_rates_on_every_host_model_and_stalls_cost_the_old_rule_most() {
    let cells = cells();
    let tallies = table(&cells, &[RULE, REPLACED], DECISIONS);
    print(&cells, &tallies, DECISIONS);
    let n = DECISIONS;
    for ((name, cell), t) in cells.iter().zip(&tallies) {
        let (new, old) = (&t[0], &t[1]);
        let (x, holds, broken) = (times_limit(cell), new.holds(), new.broken());
        let at = format!("{name} at {x:.2} of the limit: {new:?}, replaced {old:?}");
        if (x - 1.0).abs() < 0.01 {
            assert!(
                at_most(broken, 0.05, n),
                "breaks a boundary rate too often: {at}"
            );
            if stalls(cell) {
                // The rare stall missed by every visit (see the module doc): far less
                // often than the replaced rule, which passed these 37-51% of the time.
                assert!(at_most(holds, 0.30, n), "{at}");
                assert!(holds < old.holds() * 0.75, "{at}");
            } else {
                assert!(
                    at_most(holds, 0.05, n),
                    "passes a boundary rate too often: {at}"
                );
            }
        } else if x < 1.0 && !stalls(cell) {
            let least = if name.starts_with("harsher, weather CV 0.6") {
                0.75
            } else {
                0.80
            };
            assert!(at_least(holds, least, n), "too little power: {at}");
            assert!(broken < 0.01, "breaks a met objective: {at}");
        } else if x < 1.0 {
            // A stall in 4% of the visits is missed by 16 visits half the time, and a
            // rule safe at the bound cannot tell the two apart then.
            assert!(at_least(holds, 0.5, n), "too little power: {at}");
        } else if x < 1.5 {
            assert!(
                at_most(holds, 0.05, n),
                "passes a rate a third over the bound: {at}"
            );
        } else {
            assert!(holds <= 0.01, "passes a broken objective: {at}");
            assert!(at_least(broken, 0.95, n), "too little power to fail: {at}");
            assert!(new.mean_visits() <= 12.0, "fails too slowly: {at}");
            assert!(broken > old.broken() || old.broken() > 0.99, "{at}");
        }
    }
}

#[test]
fn the_replaced_rule_passes_a_boundary_rate_held_up_by_rare_server_stalls_a_third_of_the_time() {
    // A sweep on this project's machine (Dec 6), its files re-analysed: with the stall it showed in 5-10% of
    // visits, the rule at 4, 8 and 16 visits passed a rate at the bound 38-51% of the time
    // (its first look, at 4 visits, sees no stall two times in three), and one at 1.33 of
    // it (72.6k/s there) 29-33%.
    let calm = Weather::Lognormal(0.3);
    let cells = [
        ("5%", Cell::stalling(0.00754, 0.05, calm)),
        ("10%", Cell::stalling(0.00508, 0.10, calm)),
        ("18%", Cell::stalling(0.0045, 0.18, calm)),
    ];
    let tallies = table(&cells, &[REPLACED], DECISIONS);
    let holds: Vec<f64> = tallies.iter().map(|t| t[0].holds()).collect();
    assert!((0.33..0.43).contains(&holds[0]), "{holds:?}");
    assert!((0.46..0.56).contains(&holds[1]), "{holds:?}");
    assert!((0.28..0.38).contains(&holds[2]), "{holds:?}");
}

#[test]
fn the_simulated_hosts_have_the_mean_they_are_scaled_to() {
    let cells = [
        Cell::at(DATA, Weather::Lognormal(0.6), 10_000.0, 1.0),
        Cell::at(WHOLE, Weather::Lognormal(0.6), 10_000.0, 1.0),
        Cell::at(DATA, MIXED, 65_000.0, 1.0),
        Cell::stalling(0.00508, 0.10, Weather::Lognormal(0.3)),
    ];
    for (i, cell) in cells.iter().enumerate() {
        let mut sim = Simulation::new(cell, SEED ^ i as u64);
        let mut visit = [Window::default(); WINDOWS_PER_VISIT];
        let (mut replies, mut over) = (0u64, 0u64);
        let mut shares = Vec::new();
        for v in 0..20_000 {
            if v % 24 == 0 {
                sim.new_decision();
            }
            sim.visit(&mut visit);
            let (n, k) = visit
                .iter()
                .fold((0, 0), |a, w| (a.0 + w.replies, a.1 + w.over));
            (replies, over) = (replies + n, over + k);
            shares.push(k as f64 / n as f64);
        }
        let fraction = over as f64 / replies as f64;
        assert!(
            (fraction / cell.truth() - 1.0).abs() < 0.03,
            "{}: {fraction} against {}",
            cell.host.name,
            cell.truth()
        );
        if cell.weather == MIXED {
            // The Dec 6 sweep's 65.3k/s runs: median 0.70%, mean 0.95%, CV 0.76.
            let mean = shares.iter().sum::<f64>() / shares.len() as f64;
            let sd = (shares.iter().map(|s| (s - mean).powi(2)).sum::<f64>() / shares.len() as f64)
                .sqrt();
            let median = crate::stats::median::median_f64(&shares);
            assert!((0.65..0.85).contains(&(sd / mean)), "CV {}", sd / mean);
            assert!((0.65..0.85).contains(&(median / mean)), "{median} {mean}");
        }
    }
}

/// The table in `bench/README.md`:
/// `cargo test --lib calibration_table -- --ignored --nocapture`
#[test]
#[ignore = "the table for bench/README.md, about a minute"]
fn calibration_table() {
    let cells = cells();
    print(
        &cells,
        &table(&cells, &[RULE, REPLACED], TABLE_DECISIONS),
        TABLE_DECISIONS,
    );
}

/// Looks at 4, 8, 12, 16, 24, ... up to `last` visits, a fail at [`FAIL_ALPHA`] at each,
/// a pass at the levels `pass` gives by visits.
fn plan(pass: &[(usize, f64)], last: usize) -> Rule {
    let visits = [4, 8, 12, 16, 24, 32].into_iter().filter(|&v| v <= last);
    let looks: Vec<Look> = visits
        .map(|visits| Look {
            visits,
            pass: pass.iter().find(|p| p.0 == visits).map(|p| p.1),
            fail: FAIL_ALPHA,
        })
        .collect();
    Rule {
        looks: Box::leak(looks.into_boxed_slice()),
        ..RULE
    }
}

/// The tables for other looks and levels: how [`LOOKS`] were chosen, and what a later
/// first pass, or a higher cap, would buy under rare large stalls.
/// `cargo test --lib other_looks -- --ignored --nocapture`
#[test]
#[ignore = "a search over plans, not a check; several minutes"]
fn other_looks_and_levels() {
    let cells = cells();
    let plans = [
        (
            "a pass from 8 runs",
            plan(&[(8, 0.0002), (16, 0.001), (24, 0.003)], 24),
        ),
        (
            "levels 0.1% and 0.25%",
            plan(&[(16, 0.001), (24, 0.0025)], 24),
        ),
        (
            "levels 0.2% and 0.2%",
            plan(&[(16, 0.002), (24, 0.002)], 24),
        ),
        (
            "a cap of 32 runs",
            plan(&[(16, 0.001), (24, 0.0015), (32, 0.002)], 32),
        ),
        ("a pass from 24 runs", plan(&[(24, 0.002), (32, 0.003)], 32)),
        ("a pass at 32 runs only", plan(&[(32, 0.01)], 32)),
    ];
    for (name, rule) in plans {
        eprintln!("{name}: {:?}", rule.looks);
        print(&cells, &table(&cells, &[rule, RULE], 10_000), 10_000);
    }
}
