//! kueuesim-scenario: the outside world of the simulator. Kubernetes manifests (YAML) come in
//! and become a `World`; simulation outcomes go out as JSON and human summaries.

pub mod convert;
pub mod embedded;
pub mod error;
pub mod export;
pub mod generator;
pub mod kubectl;
pub mod metrics;
pub mod output;
pub mod report;
pub mod source;
pub mod stream;
pub mod synthetic;
pub mod trace;
mod wire;

pub use convert::{LoadOptions, Loaded, load};
pub use error::{Pos, ScenarioError};
pub use source::SourceFile;
