//! The few calls that differ between the systems Larik runs on, each behind one name: the
//! Linux variants where the `linux` feature is on (the default) and the system is Linux, the
//! portable ones elsewhere. A build with the feature off compiles and tests the portable ones on
//! Linux too, so code that would not build on macOS is found here.

#[cfg(all(target_os = "linux", feature = "linux"))]
mod linux;
#[cfg(all(target_os = "linux", feature = "linux"))]
pub use linux::*;

#[cfg(not(all(target_os = "linux", feature = "linux")))]
mod portable;
#[cfg(not(all(target_os = "linux", feature = "linux")))]
pub use portable::*;
