//! Larik's wire protocol: ACP v1 as the official schema crate defines it, plus Larik's documented
//! extensions. Extensions ride only on ACP's extension points (`_meta` fields and `_larik/` methods),
//! so a v1 client that knows nothing of them works unchanged.

/// The ACP v1 types, from the official schema crate (pinned exactly in the workspace).
pub mod acp {
    pub use agent_client_protocol_schema::ProtocolVersion;
    pub use agent_client_protocol_schema::v1::*;
}

pub mod extensions;
pub mod spec;
