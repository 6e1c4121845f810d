use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tokio::sync::Barrier;

use super::*;
use crate::event::ToolKind;
use crate::permission::Mode;
use crate::tools::{CallDescription, Tool};
use crate::workspace::Workspace;

/// Shared by the probe tools: a log of starts and ends, and barriers that only open when
/// every call of a batch has arrived, so a batch that ran one call at a time would hang.
#[derive(Default)]
struct Lab {
    log: Mutex<Vec<String>>,
    barriers: Mutex<HashMap<String, Arc<Barrier>>>,
}

#[derive(Deserialize, JsonSchema)]
struct ProbeInput {
    name: String,
    #[serde(default)]
    barrier: Option<String>,
}

struct Parallel(Arc<Lab>);
struct Exclusive(Arc<Lab>);

impl Lab {
    async fn visit(&self, input: &ProbeInput) -> ToolOutput {
        self.log.lock().unwrap().push(format!("start {}", input.name));
        if let Some(name) = &input.barrier {
            let barrier =
                self.barriers.lock().unwrap().entry(name.clone()).or_insert_with(|| Arc::new(Barrier::new(2))).clone();
            barrier.wait().await;
        }
        self.log.lock().unwrap().push(format!("end {}", input.name));
        ToolOutput::text(format!("result of {}", input.name))
    }
}

impl Tool for Parallel {
    type Input = ProbeInput;
    const NAME: &'static str = "parallel";
    const DESCRIPTION: &'static str = "test";
    const KIND: ToolKind = ToolKind::Read;
    fn read_only(&self) -> bool {
        true
    }
    fn describe(&self, input: &ProbeInput, _ctx: &ToolContext) -> CallDescription {
        CallDescription::titled(input.name.clone())
    }
    async fn run(&self, input: ProbeInput, _ctx: &ToolContext) -> ToolOutput {
        self.0.visit(&input).await
    }
}

impl Tool for Exclusive {
    type Input = ProbeInput;
    const NAME: &'static str = "exclusive";
    const DESCRIPTION: &'static str = "test";
    const KIND: ToolKind = ToolKind::Execute;
    fn read_only(&self) -> bool {
        false
    }
    fn describe(&self, input: &ProbeInput, _ctx: &ToolContext) -> CallDescription {
        CallDescription::titled(input.name.clone())
    }
    async fn run(&self, input: ProbeInput, _ctx: &ToolContext) -> ToolOutput {
        self.0.visit(&input).await
    }
}

fn call(id: &str, tool: &str, name: &str, barrier: Option<&str>) -> ToolCall {
    ToolCall {
        id: crate::tools::ToolCallId(id.into()),
        name: tool.into(),
        input: json!({"name": name, "barrier": barrier}),
    }
}

#[tokio::test]
async fn parallel_safe_runs_share_a_batch_and_results_keep_their_order() {
    let lab = Arc::new(Lab::default());
    let dir = tempfile::tempdir().unwrap();
    let mut env = SessionEnv::standalone(Arc::new(Workspace::new(dir.path())));
    let registry = crate::tools::Registry::default();
    registry.add(Arc::new(Parallel(Arc::clone(&lab))));
    registry.add(Arc::new(Exclusive(Arc::clone(&lab))));
    env.registry = Arc::new(registry);
    env.permissions.set_mode(Mode::Yolo).unwrap();
    let env = Arc::new(env);
    let cancel = CancellationToken::new();
    let (events, mut received) = mpsc::channel(256);
    tokio::spawn(async move { while received.recv().await.is_some() {} });
    let dispatch = Dispatch { env: &env, events: &events, cancel: &cancel, asking: Asking::User };
    let calls = vec![
        call("1", "parallel", "a", Some("first")),
        call("2", "parallel", "b", Some("first")),
        call("3", "exclusive", "x", None),
        call("4", "nonexistent", "?", None),
        call("5", "parallel", "c", Some("second")),
        call("6", "parallel", "d", Some("second")),
    ];
    let message = tokio::time::timeout(Duration::from_secs(10), dispatch.run(&calls))
        .await
        .expect("batches ran concurrently")
        .results;
    let ids: Vec<&str> = message
        .content
        .iter()
        .map(|part| match part {
            Part::ToolResult { tool_use_id, .. } => tool_use_id.as_str(),
            _ => "",
        })
        .collect();
    assert_eq!(ids, ["1", "2", "3", "4", "5", "6"]);
    let Part::ToolResult { content, is_error, .. } = &message.content[3] else { panic!() };
    assert!(*is_error && matches!(&content[0], ResultPart::Text { text } if text.contains("unknown tool")));
    let log = lab.log.lock().unwrap().clone();
    let position = |entry: &str| log.iter().position(|logged| logged == entry).unwrap();
    assert!(position("start x") > position("end a") && position("start x") > position("end b"), "{log:?}");
    assert!(position("end x") < position("start c") && position("end x") < position("start d"), "{log:?}");
}
