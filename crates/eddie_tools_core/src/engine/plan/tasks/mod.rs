//! Task-list tools (`agent__*`): named lists stored as `.tasks/<name>.json` in the workspace.

pub mod store;
