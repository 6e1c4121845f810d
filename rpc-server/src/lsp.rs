//! `larik lsp`: the agent as a language server, for editors whose only extension point is LSP
//! (Helix). Asking happens through code actions and `workspace/executeCommand`; answers stream
//! as `$/progress` and messages, or into a chat file (`*.larik.md`); proposed edits are offered
//! hunk by hunk as code actions and applied with `workspace/applyEdit`; permission prompts use
//! `window/showMessageRequest`, or code actions on a diagnostic where the client lacks it.
//!
//! The transport is rust-analyzer's `lsp-server` (its own reader and writer threads); two small
//! threads bridge it to tokio, and exactly one of them writes to the client.

mod bridge;
mod chat;
mod client;
mod command;
mod documents;
mod proposal;
mod question;
mod story;

use std::collections::HashMap;
use std::sync::Arc;

use lsp_server::{Connection, Message};
use lsp_types::{
    CodeActionKind, CodeActionOptions, CodeActionProviderCapability, ExecuteCommandOptions, InitializeParams,
    InitializeResult, SaveOptions, ServerCapabilities, ServerInfo, TextDocumentSyncCapability, TextDocumentSyncKind,
    TextDocumentSyncOptions, TextDocumentSyncSaveOptions,
};
use serde_json::Value;

pub use command::NAMES as COMMANDS;

/// Serves LSP on stdin/stdout until the client shuts down or stdin closes.
pub async fn serve_stdio(env: HashMap<String, String>) -> anyhow::Result<()> {
    let (connection, io_threads) = Connection::stdio();
    let (init_id, init_params) = tokio::task::block_in_place(|| connection.initialize_start())?;
    // Full sync, and a notification on save: an applied edit waits for the user's `:w`.
    let sync = TextDocumentSyncOptions {
        open_close: Some(true),
        change: Some(TextDocumentSyncKind::FULL),
        save: Some(TextDocumentSyncSaveOptions::SaveOptions(SaveOptions { include_text: Some(false) })),
        ..TextDocumentSyncOptions::default()
    };
    let code_actions = CodeActionOptions {
        code_action_kinds: Some(vec![CodeActionKind::QUICKFIX, CodeActionKind::REFACTOR, CodeActionKind::SOURCE]),
        ..CodeActionOptions::default()
    };
    let capabilities = ServerCapabilities {
        text_document_sync: Some(TextDocumentSyncCapability::Options(sync)),
        code_action_provider: Some(CodeActionProviderCapability::Options(code_actions)),
        execute_command_provider: Some(ExecuteCommandOptions {
            commands: COMMANDS.map(str::to_owned).to_vec(),
            ..ExecuteCommandOptions::default()
        }),
        ..ServerCapabilities::default()
    };
    let result = InitializeResult {
        capabilities,
        server_info: Some(ServerInfo { name: "larik".into(), version: Some(env!("CARGO_PKG_VERSION").into()) }),
    };
    let result = serde_json::to_value(result)?;
    tokio::task::block_in_place(|| connection.initialize_finish(init_id, result))?;
    // An editor whose `initialize` strays from the protocol still gets a session, with defaults.
    let init_params: InitializeParams = serde_json::from_value(init_params).unwrap_or_else(|error| {
        tracing::warn!(%error, "initialize params are not LSP's; using defaults");
        InitializeParams::default()
    });

    let (outbox, mut outgoing) = tokio::sync::mpsc::unbounded_channel::<Message>();
    let sender = connection.sender.clone();
    // The one writer: everything for the client goes through this thread, in order.
    let writer = std::thread::spawn(move || {
        while let Some(message) = outgoing.blocking_recv() {
            if sender.send(message).is_err() {
                return;
            }
        }
    });
    let (inbox, mut incoming) = tokio::sync::mpsc::unbounded_channel::<Message>();
    let receiver = connection.receiver.clone();
    std::thread::spawn(move || {
        for message in receiver {
            if inbox.send(message).is_err() {
                return;
            }
        }
    });

    let client = client::Client::new(outbox);
    let bridge = Arc::new(bridge::Bridge::new(env, &init_params, client.clone()));
    while let Some(message) = incoming.recv().await {
        match message {
            Message::Request(request) if request.method == "shutdown" => {
                bridge.end().await;
                client.respond(request.id, Ok(Value::Null));
            }
            Message::Request(request) => {
                let bridge = Arc::clone(&bridge);
                let client = client.clone();
                // Each request runs on its own: a command may wait on the client meanwhile.
                tokio::spawn(async move {
                    let result = bridge.request(&request.method, request.params).await;
                    client.respond(request.id, result);
                });
            }
            Message::Notification(notification) if notification.method == "exit" => break,
            Message::Notification(notification) => bridge.notification(notification).await,
            Message::Response(response) => client.deliver(response),
        }
    }
    bridge.shutdown();
    drop(client);
    drop(bridge);
    // Turns still winding down may hold a sender; wait briefly for the queue to drain, no longer.
    let _ = tokio::time::timeout(std::time::Duration::from_secs(2), tokio::task::spawn_blocking(move || writer.join()))
        .await;
    drop(connection);
    // The reader thread ends with stdin; joining it would wait for the client to close it.
    drop(io_threads);
    Ok(())
}
