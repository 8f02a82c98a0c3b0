//! The frame of a command of many runs (`sweep`, `tune`): run its plan, and save what it
//! measured however it ends (done, interrupted, failed), then print its summary.

use anyhow::Result;

use super::Status;

/// Why a command of many runs (`sweep`, `tune`) ended before its plan.
pub(crate) enum Halt {
    /// A signal: SIGINT (Ctrl+C), SIGTERM, SIGHUP or SIGQUIT.
    Interrupted,
    /// A run stopped on an error (exit-on-error, a lost server).
    Failed(String),
    /// Something else went wrong (writing a file, connecting).
    Error(anyhow::Error),
    /// The time the command was given (`--budget`) is spent: the runs so far are the
    /// result, complete as far as it goes.
    Budget,
}

impl From<anyhow::Error> for Halt {
    fn from(e: anyhow::Error) -> Self {
        Halt::Error(e)
    }
}

impl From<std::io::Error> for Halt {
    fn from(e: std::io::Error) -> Self {
        Halt::Error(e.into())
    }
}

/// A command of many runs whose report is saved however it ends.
pub(crate) trait Campaign {
    /// Every planned run, in order.
    fn run_all(&mut self) -> Result<(), Halt>;
    /// Marks the report: every phase ran (`complete`), or Ctrl+C ended it (`interrupted`).
    fn mark_end(&mut self, complete: bool, interrupted: bool);
    /// Hands the report to its outputs, which write it.
    fn save_report(&mut self) -> Result<()>;
    /// Prints the closing summary.
    fn print_summary(&mut self) -> Result<()>;
    /// Whether `--strict` was given and a run of the campaign failed a self-check.
    fn strict_and_invalid(&self) -> bool;
    /// Why the campaign failed although every run ended: every rate lost its server.
    fn lost_server(&self) -> Option<String> {
        None
    }
}

/// Runs `campaign` to its end and saves what it measured, also when it ends on an
/// error (which is then returned), then prints its summary. The status returned is the
/// one the saved report states (`main` exits by it alone).
pub(crate) fn run_campaign(campaign: &mut impl Campaign) -> Result<Status> {
    let status = match campaign.run_all() {
        // Every run ended: the campaign is complete, and a signal from here on lets its
        // files be written rather than contradict them.
        Ok(()) | Err(Halt::Budget) => {
            campaign.mark_end(true, false);
            if let Some(reason) = campaign.lost_server() {
                Status::Failed(reason)
            } else if campaign.strict_and_invalid() {
                Status::Invalid
            } else {
                Status::Completed
            }
        }
        Err(Halt::Interrupted) => {
            campaign.mark_end(false, true);
            Status::Interrupted
        }
        Err(Halt::Failed(reason)) => Status::Failed(reason),
        Err(Halt::Error(e)) => {
            // Keep what was measured before the error, then report it.
            let _ = campaign.save_report();
            return Err(e);
        }
    };
    campaign.save_report()?;
    campaign.print_summary()?;
    Ok(status)
}
