//! kueuesim-scenario: the simulator's input. Kubernetes manifests (YAML), workload traces and
//! generators come in and become a `World`; every output of a run is kueuesim-report's.

pub mod convert;
pub mod embedded;
pub mod error;
pub mod generator;
pub mod overlay;
pub mod source;
pub mod stream;
pub mod synthetic;
pub mod trace;
pub mod variation;
mod wire;

pub use convert::{LoadOptions, Loaded, load};
pub use error::{Pos, ScenarioError};
pub use source::SourceFile;
