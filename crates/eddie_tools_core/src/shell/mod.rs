//! Shell tools. `bash` runs `/bin/sh -c` in its own process group, so a timeout, an output
//! overflow, an abort or the end of the command kills every process it started.

pub mod bash;
