//! What Larik tells a language server in the handshake: who it is, the project's root, and what
//! it can take (versioned and pulled diagnostics, hierarchical symbols, markdown hover, location
//! links, code action literals resolved lazily). It takes `workspace/applyEdit`, but only while a
//! code action's own command runs (see `server.rs`).

use std::path::Path;

use lsp_types::{
    ClientCapabilities, ClientInfo, CodeActionCapabilityResolveSupport, CodeActionClientCapabilities, CodeActionKind,
    CodeActionKindLiteralSupport, CodeActionLiteralSupport, DiagnosticClientCapabilities,
    DocumentSymbolClientCapabilities, DynamicRegistrationClientCapabilities, GotoCapability, HoverClientCapabilities,
    InitializeParams, MarkupKind, PublishDiagnosticsClientCapabilities, TextDocumentClientCapabilities,
    TextDocumentSyncClientCapabilities, WindowClientCapabilities, WorkspaceClientCapabilities, WorkspaceFolder,
};
use serde_json::Value;

use super::connection::LspError;
use super::uri;

/// The `initialize` request for a server of the project at `root`.
pub fn initialize(root: &Path, initialization_options: Option<Value>) -> Result<InitializeParams, LspError> {
    let root_uri = uri::document(root).ok_or_else(|| LspError::Gone(format!("{} has no URI", root.display())))?;
    let name = root.file_name().and_then(|name| name.to_str()).unwrap_or("project").to_owned();
    // rootPath and rootUri: servers that predate workspace folders still read them.
    #[allow(deprecated)]
    Ok(InitializeParams {
        process_id: Some(std::process::id()),
        client_info: Some(ClientInfo { name: "larik".into(), version: Some(env!("CARGO_PKG_VERSION").into()) }),
        root_path: Some(root.display().to_string()),
        root_uri: Some(root_uri.clone()),
        workspace_folders: Some(vec![WorkspaceFolder { uri: root_uri, name }]),
        initialization_options,
        capabilities: client(),
        ..InitializeParams::default()
    })
}

fn client() -> ClientCapabilities {
    ClientCapabilities {
        workspace: Some(WorkspaceClientCapabilities {
            configuration: Some(true),
            workspace_folders: Some(true),
            apply_edit: Some(true),
            ..WorkspaceClientCapabilities::default()
        }),
        window: Some(WindowClientCapabilities {
            work_done_progress: Some(true),
            ..WindowClientCapabilities::default()
        }),
        text_document: Some(text_document()),
        ..ClientCapabilities::default()
    }
}

fn text_document() -> TextDocumentClientCapabilities {
    TextDocumentClientCapabilities {
        synchronization: Some(TextDocumentSyncClientCapabilities {
            dynamic_registration: Some(false),
            did_save: Some(false),
            ..TextDocumentSyncClientCapabilities::default()
        }),
        publish_diagnostics: Some(PublishDiagnosticsClientCapabilities {
            version_support: Some(true),
            related_information: Some(false),
            ..PublishDiagnosticsClientCapabilities::default()
        }),
        diagnostic: Some(DiagnosticClientCapabilities {
            dynamic_registration: Some(true),
            related_document_support: Some(false),
        }),
        document_symbol: Some(DocumentSymbolClientCapabilities {
            hierarchical_document_symbol_support: Some(true),
            ..DocumentSymbolClientCapabilities::default()
        }),
        hover: Some(HoverClientCapabilities {
            content_format: Some(vec![MarkupKind::Markdown, MarkupKind::PlainText]),
            ..HoverClientCapabilities::default()
        }),
        definition: Some(GotoCapability { link_support: Some(true), ..GotoCapability::default() }),
        references: Some(DynamicRegistrationClientCapabilities::default()),
        code_action: Some(code_actions()),
        ..TextDocumentClientCapabilities::default()
    }
}

fn code_actions() -> CodeActionClientCapabilities {
    let kinds = [
        CodeActionKind::QUICKFIX,
        CodeActionKind::REFACTOR,
        CodeActionKind::REFACTOR_EXTRACT,
        CodeActionKind::REFACTOR_INLINE,
        CodeActionKind::REFACTOR_REWRITE,
        CodeActionKind::SOURCE,
        CodeActionKind::SOURCE_ORGANIZE_IMPORTS,
        CodeActionKind::SOURCE_FIX_ALL,
    ];
    CodeActionClientCapabilities {
        code_action_literal_support: Some(CodeActionLiteralSupport {
            code_action_kind: CodeActionKindLiteralSupport {
                value_set: kinds.iter().map(|kind| kind.as_str().to_owned()).collect(),
            },
        }),
        is_preferred_support: Some(true),
        disabled_support: Some(true),
        resolve_support: Some(CodeActionCapabilityResolveSupport { properties: vec!["edit".into()] }),
        ..CodeActionClientCapabilities::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The handshake says what the code relies on: versioned publishes, pulled diagnostics that
    /// may be registered late, and edits of the server's own (taken during an action's command).
    #[test]
    fn the_handshake_names_the_project_and_what_larik_relies_on() {
        let root = Path::new("/work/my project");
        let params = serde_json::to_value(initialize(root, None).unwrap()).unwrap();
        assert_eq!(params["rootUri"], "file:///work/my%20project");
        assert_eq!(params["workspaceFolders"][0]["name"], "my project");
        let capabilities = &params["capabilities"];
        assert_eq!(capabilities["workspace"]["applyEdit"], true);
        assert_eq!(capabilities["textDocument"]["publishDiagnostics"]["versionSupport"], true);
        assert_eq!(capabilities["textDocument"]["diagnostic"]["dynamicRegistration"], true);
        assert_eq!(capabilities["textDocument"]["codeAction"]["resolveSupport"]["properties"][0], "edit");
        assert!(
            capabilities["textDocument"]["codeAction"]["codeActionLiteralSupport"]["codeActionKind"]["valueSet"]
                .as_array()
                .unwrap()
                .contains(&"source.organizeImports".into())
        );
    }
}
