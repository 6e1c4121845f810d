//! What Larik touches on the user's machine, below everything that decides anything: the
//! project's files through one layer (`workspace`, with the names no write may touch in
//! `protected_names`), hunks of a change (`review`), checkpoints of the project's files
//! (`checkpoints`), the programs it starts (`child_process`), the calls that differ between
//! systems (`platform`), the grammar that splits a shell line into its commands (`shell`), and
//! the clock.
//!
//! It imports no other Larik crate: the settings, the models, the tools and the session are all
//! above it.

pub mod checkpoints;
pub mod child_process;
pub mod clock;
pub mod editor;
pub mod platform;
pub mod protected_names;
pub mod review;
pub mod shell;
pub mod workspace;
