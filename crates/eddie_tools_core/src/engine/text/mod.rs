//! Text: lossless decoding and encoding of files (encodings, BOM, line endings), UTF-8
//! helpers, the sparse line index, positioned reads and the `localeCompare` collation.

pub mod collate;
pub mod doc;
pub mod line_index;
pub mod pread;
pub mod utf8;
