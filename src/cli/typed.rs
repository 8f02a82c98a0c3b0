//! Which flags the user typed, as against left at their defaults: read from clap's
//! value sources when the flags are parsed, so that a command that takes a flag only in
//! some of its forms can refuse it even when it was typed with its default value
//! (`tailrate sweep --replay FILE -c 50`: a sweep of rates takes `-c`, a sweep of a
//! replay does not).

use clap::parser::ValueSource;
use clap::{ArgMatches, Command, FromArgMatches};

/// Which of the connection flags a sweep of a replay does not take were typed: `-c`,
/// `--dbnum`, `--cluster` (its connections and databases are the trace's, and a cluster
/// would split a client's commands by key). Flattened into [`super::ConnectionArgs`]; it
/// adds no flag.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TypedConnection {
    /// `-c` was typed.
    pub clients: bool,
    /// `--dbnum` was typed.
    pub dbnum: bool,
    /// `--cluster` was typed.
    pub cluster: bool,
}

impl FromArgMatches for TypedConnection {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        // Flattened beside `ConnectionArgs`' own flags, so these ids are always defined.
        let typed = |id: &str| matches.value_source(id) == Some(ValueSource::CommandLine);
        Ok(TypedConnection {
            clients: typed("clients"),
            dbnum: typed("dbnum"),
            cluster: typed("cluster"),
        })
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}

impl clap::Args for TypedConnection {
    fn augment_args(cmd: Command) -> Command {
        cmd
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        cmd
    }
}
