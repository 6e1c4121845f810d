#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The sandbox's network by domain, with the real binary and real tools: sandboxed `curl`,
//! Python's urllib, `git clone` from `git http-backend`, `pip download` and `npm view` against
//! local servers on `*.localhost` names (HTTP and HTTPS with a certificate the test trusts) reach
//! the allowed domains without a prompt; a denied one, an IP address, a name mapped to a private
//! address and every way around the proxy fail, and the server never hears of them; an
//! unlisted domain asks while the command waits. The refused ranges are played by 127.0.0.2
//! and 127.0.0.3 (the test build reads them from the environment); nothing leaves this machine.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use larik_tests::harness::{Agent, Sandbox, git, message_text, write_file};
use larik_tests::mock_llm::{MockLlm, Scenario, Step};
use serde_json::{Value, json};

/// A running test server; killed when dropped.
struct Server {
    child: Child,
    port: u16,
    log: PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    fn start(root: &Path, log: PathBuf, address: &str, tls: Option<(&Path, &Path)>) -> Server {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/network/serve.py");
        let mut command = Command::new("python3");
        command.arg(script).arg("--root").arg(root).arg("--log").arg(&log).arg("--address").arg(address);
        if let Some((cert, key)) = tls {
            command.arg("--cert").arg(cert).arg("--key").arg(key);
        }
        let mut child = command.stdout(Stdio::piped()).spawn().expect("python3 runs");
        let mut line = String::new();
        std::io::BufRead::read_line(&mut std::io::BufReader::new(child.stdout.take().unwrap()), &mut line).unwrap();
        Server { child, port: line.trim().parse().expect("the server's port"), log }
    }

    /// The requests that reached the server, as "HOST PATH" lines.
    fn heard(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

/// The files every server serves: a page, a git repository, a Python package index with one
/// wheel, an npm packument.
fn site(dir: &Path) -> PathBuf {
    let root = dir.join("site");
    write_file(&root.join("hello.txt"), "hello from the test server\n");
    let source = dir.join("source");
    std::fs::create_dir_all(&source).unwrap();
    git(&source, &["init", "-q", "-b", "main"]);
    write_file(&source.join("README"), "cloned through the proxy\n");
    git(&source, &["add", "-A"]);
    git(&source, &["commit", "-qm", "first"]);
    git(dir, &["clone", "-q", "--bare", source.to_str().unwrap(), root.join("repo.git").to_str().unwrap()]);
    let wheel = root.join("packages/tinypkg-1.0-py3-none-any.whl");
    std::fs::create_dir_all(wheel.parent().unwrap()).unwrap();
    let made = Command::new("python3")
        .arg("-c")
        .arg(
            "import sys, zipfile\n\
             z = zipfile.ZipFile(sys.argv[1], 'w')\n\
             z.writestr('tinypkg/__init__.py', 'VALUE = 1\\n')\n\
             z.writestr('tinypkg-1.0.dist-info/METADATA', 'Metadata-Version: 2.1\\nName: tinypkg\\nVersion: 1.0\\n')\n\
             z.writestr('tinypkg-1.0.dist-info/WHEEL', 'Wheel-Version: 1.0\\nGenerator: test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n')\n\
             z.writestr('tinypkg-1.0.dist-info/RECORD', '')\n\
             z.close()",
        )
        .arg(&wheel)
        .status()
        .unwrap();
    assert!(made.success());
    write_file(
        &root.join("simple/tinypkg/index.html"),
        "<html><body><a href=\"../../packages/tinypkg-1.0-py3-none-any.whl\">tinypkg-1.0-py3-none-any.whl</a></body></html>\n",
    );
    write_file(
        &root.join("tinypkg"),
        &json!({
            "name": "tinypkg",
            "dist-tags": {"latest": "1.0.0"},
            "versions": {"1.0.0": {"name": "tinypkg", "version": "1.0.0", "dist": {"tarball": "http://npm.localhost/tinypkg-1.0.0.tgz"}}}
        })
        .to_string(),
    );
    root
}

/// A certificate for `secure.localhost`, made with openssl; the test trusts it.
fn certificate(dir: &Path) -> (PathBuf, PathBuf) {
    let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
    let made = Command::new("openssl")
        .args(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=secure.localhost"])
        .args(["-addext", "subjectAltName=DNS:secure.localhost"])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(made.success());
    (cert, key)
}

/// The environment of a test: the refused ranges played on loopback addresses, two names
/// mapped onto them, and the test's certificate trusted by every tool.
fn network_env(sandbox: &Sandbox, model: &str, cert: &Path) -> Vec<(String, String)> {
    let mut env = sandbox.env(model);
    let cert = cert.display().to_string();
    env.extend(
        [
            ("LARIK_SANDBOX_REFUSED_ADDRESSES", "127.0.0.2/32,127.0.0.3/32,10.0.0.0/8,169.254.0.0/16"),
            ("LARIK_SANDBOX_HOSTS", "metadata.test=127.0.0.2,intranet.test=127.0.0.3"),
            ("CURL_CA_BUNDLE", cert.as_str()),
            ("SSL_CERT_FILE", cert.as_str()),
            ("GIT_SSL_CAINFO", cert.as_str()),
        ]
        .map(|(key, value)| (key.to_owned(), value.to_owned())),
    );
    env
}

fn bash(id: usize, command: &str) -> Step {
    Step::tool(&format!("t{id}"), "bash", json!({"command": command}))
}

/// Runs the commands as one turn, answering each prompt with `answer`; returns each call's
/// result, the prompts asked, and the agent with its session for more.
async fn run(
    sandbox: &Sandbox,
    env: &[(String, String)],
    mock: &MockLlm,
    mut answer: impl FnMut(&Value) -> &'static str,
) -> (Vec<String>, Vec<Value>, (Agent, String)) {
    let mut agent = Agent::spawn(&sandbox.project_path(), env);
    agent.initialize().await;
    let session = agent.new_session(&sandbox.project_path()).await;
    let mut asked = Vec::new();
    let (response, _) = agent
        .prompt(&session, "try", |params| {
            asked.push(params.clone());
            answer(params)
        })
        .await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    (mock.tool_result_texts(), asked, (agent, session))
}

async fn mock_for(commands: &[String]) -> MockLlm {
    let mut steps: Vec<Step> = commands.iter().enumerate().map(|(index, command)| bash(index, command)).collect();
    steps.push(Step::text("done"));
    MockLlm::start(Scenario { responses: steps }).await.unwrap()
}

#[tokio::test]
async fn allowed_domains_work_without_a_prompt_and_everything_else_is_refused() {
    let sandbox = Sandbox::new();
    let scratch = tempfile::tempdir().unwrap();
    let root = site(scratch.path());
    let (cert, key) = certificate(scratch.path());
    let plain = Server::start(&root, scratch.path().join("plain.log"), "127.0.0.1", None);
    let secure = Server::start(&root, scratch.path().join("secure.log"), "127.0.0.1", Some((&cert, &key)));
    let private = Server::start(&root, scratch.path().join("private.log"), "127.0.0.2", None);
    sandbox.write_user_settings(&json!({"sandbox": {"network": {
        "allowedDomains": ["files.localhost", "secure.localhost", "git.localhost", "pypi.localhost", "npm.localhost", "*.test"],
        "deniedDomains": ["blocked.localhost"]
    }}}));
    let (p, s, q) = (plain.port, secure.port, private.port);
    let allowed = [
        format!("curl -sS http://files.localhost:{p}/hello.txt"),
        format!("curl -sS https://secure.localhost:{s}/hello.txt"),
        format!(
            "python3 -c \"import urllib.request; print(urllib.request.urlopen('http://files.localhost:{p}/hello.txt').read().decode().upper())\""
        ),
        format!("git clone -q http://git.localhost:{p}/git/repo.git cloned && cat cloned/README"),
        format!(
            "pip download -q --disable-pip-version-check --no-deps --trusted-host pypi.localhost --index-url http://pypi.localhost:{p}/simple/ -d wheels tinypkg && ls wheels"
        ),
        format!("npm view --no-update-notifier --registry http://npm.localhost:{p}/ tinypkg dist-tags.latest"),
        // SOCKS5 with the name resolved by the proxy, as ALL_PROXY's socks5h:// asks.
        format!("curl -sS --noproxy '' --socks5-hostname 127.0.0.1:1080 http://files.localhost:{p}/hello.txt?socks"),
    ];
    let refused = [
        // On the denied list.
        format!("curl -sS http://blocked.localhost:{p}/denied"),
        // An IP address through the proxy, and past it straight to the host's loopback.
        format!("curl -sS --noproxy '' --proxy http://127.0.0.1:3128 http://127.0.0.1:{p}/by-address"),
        format!("curl -sS --noproxy '*' http://127.0.0.1:{p}/direct"),
        // A name the wildcard allows but that resolves to a refused address.
        format!("curl -sS http://metadata.test:{q}/metadata"),
        // A Host header naming another host than the one decided on.
        format!("curl -sS -H 'Host: blocked.localhost' http://files.localhost:{p}/spoofed"),
        // SOCKS for an address.
        format!("curl -sS --noproxy '' --socks5 127.0.0.1:1080 http://127.0.0.1:{p}/socks-address"),
        // Allowed, but nothing listens there.
        "curl -sS http://files.localhost:1/closed".to_owned(),
        // Other ways out: a Unix socket, UDP.
        "python3 -c \"import socket; s = socket.socket(socket.AF_UNIX); s.connect('/run/larik-test.sock')\"".to_owned(),
        "python3 -c \"import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'x', ('127.0.0.1', 53))\"".to_owned(),
    ];
    let commands: Vec<String> = allowed.iter().chain(&refused).cloned().collect();
    let mock = mock_for(&commands).await;
    let env = network_env(&sandbox, mock.url(), &cert);
    let (results, asked, (mut agent, session)) = run(&sandbox, &env, &mock, |_| "reject_once").await;
    assert!(asked.is_empty(), "nothing asks: {asked:?}");
    assert!(results[0].contains("hello from the test server"), "{}", results[0]);
    assert!(results[0].contains("[network: 1 request to files.localhost]"), "{}", results[0]);
    assert!(results[1].contains("hello from the test server"), "https: {}", results[1]);
    assert!(results[2].contains("HELLO FROM THE TEST SERVER"), "urllib: {}", results[2]);
    assert!(results[3].contains("cloned through the proxy"), "git: {}", results[3]);
    assert!(results[4].contains("tinypkg-1.0-py3-none-any.whl"), "pip: {}", results[4]);
    assert!(results[5].contains("1.0.0"), "npm: {}", results[5]);
    assert!(results[6].contains("hello from the test server"), "socks: {}", results[6]);
    for (command, result) in refused.iter().zip(&results[allowed.len()..]) {
        // A refused plain-HTTP request gets the proxy's answer as its response (curl exits 0).
        assert!(result.contains("[exit code") || result.contains("larik sandbox:"), "`{command}` must fail: {result}");
    }
    let denied = &results[allowed.len()];
    assert!(denied.contains("deniedDomains") && denied.contains("1 refused: blocked.localhost"), "{denied}");
    assert!(results[allowed.len() + 1].contains("an IP address"), "{}", results[allowed.len() + 1]);
    assert!(results[allowed.len() + 3].contains("1 refused: metadata.test"), "{}", results[allowed.len() + 3]);
    assert!(results[allowed.len() + 4].contains("another host"), "{}", results[allowed.len() + 4]);
    assert!(results[allowed.len() + 6].contains("1 unreachable: files.localhost"), "{}", results[allowed.len() + 6]);
    assert!(results[allowed.len() + 7].contains("Permission denied"), "{}", results[allowed.len() + 7]);
    let heard = plain.heard();
    for path in ["/denied", "/by-address", "/direct", "/spoofed", "/socks-address"] {
        assert!(!heard.contains(&format!(" {path}")), "{path} reached the server: {heard}");
    }
    assert!(private.heard().is_empty(), "the private address heard: {}", private.heard());
    assert!(heard.contains("files.localhost"), "{heard}");
    assert!(secure.heard().contains("secure.localhost"), "{}", secure.heard());
    // The session's record, for the user.
    let (_, updates) = agent.prompt(&session, "/sandbox", |_| "reject_once").await;
    let report = message_text(&updates);
    assert!(report.contains("only through Larik's proxy") && report.contains("Denied: blocked.localhost"), "{report}");
    assert!(
        report.contains("- files.localhost: 3 reached") && report.contains("- npm.localhost: 1 reached"),
        "{report}"
    );
    assert!(report.contains("- blocked.localhost: 0 reached, 1 refused (`blocked.localhost` is in"), "{report}");
    assert!(report.contains("- metadata.test: 0 reached, 1 refused (it resolves to 127.0.0.2"), "{report}");
}

#[tokio::test]
async fn an_unlisted_domain_asks_while_the_command_waits() {
    let sandbox = Sandbox::new();
    let scratch = tempfile::tempdir().unwrap();
    let root = site(scratch.path());
    let (cert, _) = certificate(scratch.path());
    let server = Server::start(&root, scratch.path().join("plain.log"), "127.0.0.1", None);
    let port = server.port;
    let fetch = |path: &str| format!("curl -sS http://ask.localhost:{port}/hello.txt?{path}");
    let commands = [fetch("once"), fetch("refused"), fetch("always"), fetch("remembered")];
    let mut steps: Vec<Step> = commands.iter().enumerate().map(|(index, command)| bash(index, command)).collect();
    // A background command has no one to ask: an unlisted domain is refused, and recorded.
    let background = format!("curl -sS http://background.localhost:{port}/hello.txt?background");
    steps.push(Step::tool("bg", "bash", json!({"command": background, "run_in_background": true})));
    steps.push(bash(9, "sleep 1"));
    steps.push(Step::text("done"));
    let mock = MockLlm::start(Scenario { responses: steps }).await.unwrap();
    let env = network_env(&sandbox, mock.url(), &cert);
    let mut answers = ["allow_once", "reject_once", "allow_always"].into_iter();
    let (results, asked, (mut agent, session)) =
        run(&sandbox, &env, &mock, |_| answers.next().unwrap_or("reject_once")).await;
    assert_eq!(asked.len(), 3, "the fourth command is allowed by the saved answer: {asked:?}");
    let title = asked[0]["toolCall"]["title"].as_str().unwrap_or_default();
    assert!(title.contains("curl") && title.contains("ask.localhost"), "{title}");
    assert!(results[0].contains("hello from the test server"), "{}", results[0]);
    assert!(results[1].contains("was refused") && results[1].contains("1 refused: ask.localhost"), "{}", results[1]);
    assert!(results[2].contains("hello from the test server") && results[3].contains("hello from the test server"));
    // Saved where "always allow" saves any rule: the project's private settings in the user's
    // config directory.
    let saved = saved_files(&sandbox.home.path().join(".config/larik"));
    assert!(saved.contains("web_fetch(domain:ask.localhost)"), "{saved}");
    let heard = server.heard();
    assert!(heard.contains("?once") && heard.contains("?always") && !heard.contains("?refused"), "{heard}");
    assert!(!heard.contains("?background"), "{heard}");
    let (_, updates) = agent.prompt(&session, "/sandbox", |_| "reject_once").await;
    let report = message_text(&updates);
    assert!(report.contains("- ask.localhost: 3 reached, 1 refused"), "{report}");
    assert!(report.contains("- background.localhost: 0 reached, 1 refused"), "{report}");
}

/// Every file under `dir`, concatenated.
fn saved_files(dir: &Path) -> String {
    let mut text = String::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            text.push_str(&saved_files(&path));
        } else {
            text.push_str(&std::fs::read_to_string(&path).unwrap_or_default());
        }
    }
    text
}

#[tokio::test]
async fn headless_mode_refuses_an_unlisted_domain_and_says_which() {
    let sandbox = Sandbox::new();
    let scratch = tempfile::tempdir().unwrap();
    let root = site(scratch.path());
    let (cert, _) = certificate(scratch.path());
    let server = Server::start(&root, scratch.path().join("plain.log"), "127.0.0.1", None);
    let commands = [format!("curl -sS http://unlisted.localhost:{}/hello.txt", server.port)];
    let mock = mock_for(&commands).await;
    let env = network_env(&sandbox, mock.url(), &cert);
    // Awaited, so the mock model on this runtime can answer.
    let output = tokio::process::Command::new(larik_tests::harness::larik_bin())
        .args(["-p", "fetch it"])
        .current_dir(sandbox.project_path())
        .env_clear()
        .envs(env)
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("unlisted.localhost"), "{stderr}");
    let results = mock.tool_result_texts();
    assert!(results[0].contains("1 refused: unlisted.localhost"), "{}", results[0]);
    assert!(server.heard().is_empty(), "{}", server.heard());
}
