//! JSON-RPC 2.0 as every Larik connection speaks it: the ACP server and its clients
//! (newline-delimited), the core's language-server client and the Helix test client
//! (Content-Length framed). One reader and writer per framing ([`framing`]), one reading of a
//! message into its kind with the protocol's errors for what is malformed ([`message`]), one
//! table of requests awaiting answers ([`pending`]). What a connection does with each message
//! (tasks, cancellation, back-pressure) stays with the connection.
//!
//! It imports no other Larik crate.

pub mod framing;
pub mod message;
pub mod pending;

pub use framing::{Frame, Framing};
pub use message::{Incoming, RpcError};
pub use pending::Pending;
