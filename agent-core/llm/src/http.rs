//! HTTP clients for model calls and web tools. rustls needs its crypto provider installed once
//! per process before any client is built; every client comes from here so that cannot be missed.

pub fn client_builder() -> reqwest::ClientBuilder {
    // Installing twice fails harmlessly: another part of the process already chose ring.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder().user_agent(concat!("larik/", env!("CARGO_PKG_VERSION")))
}
