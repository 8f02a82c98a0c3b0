//! The host a test runs on, measured beside it: the generator's and the server's waits
//! for a CPU, the hypervisor's steal, CPU pressure and an idle thread's hiccups, per
//! batch. What they mean for the test's tail is `judge::host`'s; the model is
//! `report::host`.

mod figures;
mod meter;
mod owner;
mod procfs;

pub use figures::figures;
pub use meter::{HICCUP_PERIOD, Meter, Series};
pub use owner::server_process;
