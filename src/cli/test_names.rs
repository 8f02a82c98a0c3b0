//! `-t`'s value parser: the list as written, the test names offered to completion.

/// `-t`'s value, taken as written (the workload checks each name, with a suggestion for a
/// misspelt one); the test names are its possible values only so that shell completion
/// offers them instead of file names.
#[derive(Clone, Copy)]
pub(super) struct TestNames;

impl clap::builder::TypedValueParser for TestNames {
    type Value = String;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<String, clap::Error> {
        clap::builder::TypedValueParser::parse_ref(
            &clap::builder::StringValueParser::new(),
            cmd,
            arg,
            value,
        )
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        let mut names: Vec<&str> = Vec::new();
        for name in crate::workload::DEFAULT_TESTS
            .iter()
            .flat_map(|t| t.selectors)
        {
            if !names.contains(name) {
                names.push(name);
            }
        }
        Some(Box::new(
            names.into_iter().map(clap::builder::PossibleValue::new),
        ))
    }
}
