//! Shell tools. `bash` runs `/bin/sh -c` as a supervised tree ([`crate::supervisor`]), so a timeout, an output
//! overflow, an abort or the end of the command kills every process it started.

pub mod bash;
