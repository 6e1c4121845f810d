//! What the tools do inside a page: scripts evaluated for their JSON value, snapshots with refs,
//! input sent as real mouse and key events at an element found by its ref, waiting for the
//! page to settle after an action, history by entry, and screenshots at one image pixel per
//! CSS pixel.

use std::time::Duration;

use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::input::{
    DispatchKeyEventParams, DispatchKeyEventType, DispatchMouseEventParams, DispatchMouseEventType, MouseButton,
};
use chromiumoxide::cdp::browser_protocol::page::{
    CaptureScreenshotFormat, CaptureScreenshotParams, EventFrameStartedLoading, GetNavigationHistoryParams,
    NavigateToHistoryEntryParams, Viewport,
};
use chromiumoxide::cdp::js_protocol::runtime::EvaluateParams;
use futures::StreamExt;
use serde_json::Value;

use super::BrowserError;

const SNAPSHOT_SCRIPT: &str = include_str!("snapshot.js");
const LABELS_SCRIPT: &str = include_str!("labels.js");

/// Snapshots longer than this are cut, with a note.
pub const SNAPSHOT_CHARS: usize = 20_000;
/// How long an action waits for a navigation (or a new tab) to begin.
pub const NAVIGATION_START: Duration = Duration::from_millis(300);
/// How long a page may take to load after an action or a navigation.
const LOAD_WAIT: Duration = Duration::from_secs(15);
/// Full-page screenshots stop here: past it models shrink text beyond reading.
const FULL_PAGE_CSS_PIXELS: f64 = 5000.0;
/// Space around an element's screenshot.
const ELEMENT_PADDING: f64 = 8.0;

/// Evaluates `expression` (promises awaited) and returns its value as JSON; a thrown exception
/// is the error.
pub async fn evaluate(page: &Page, expression: &str) -> Result<Value, BrowserError> {
    let params = EvaluateParams::builder()
        .expression(expression)
        .return_by_value(true)
        .await_promise(true)
        .build()
        .map_err(BrowserError::Command)?;
    let answer = page.execute(params).await.map_err(BrowserError::not("the page did not answer"))?;
    if let Some(exception) = &answer.result.exception_details {
        let what = exception
            .exception
            .as_ref()
            .and_then(|object| object.description.clone())
            .unwrap_or_else(|| exception.text.clone());
        return Err(BrowserError::ScriptThrew(what));
    }
    Ok(answer.result.result.value.clone().unwrap_or(Value::Null))
}

/// An outline of the page (`title`, `url` and its lines), refs assigned, capped.
pub async fn snapshot(page: &Page) -> Result<String, BrowserError> {
    let outline = evaluate(page, SNAPSHOT_SCRIPT).await?;
    let lines: Vec<&str> = outline["lines"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
    let mut text = format!(
        "Page: {} ({})\n",
        outline["title"].as_str().unwrap_or_default(),
        outline["url"].as_str().unwrap_or_default()
    );
    if lines.is_empty() {
        text.push_str("(nothing visible)\n");
    }
    for (index, line) in lines.iter().enumerate() {
        // Room is kept for the note, so the whole stays within the cap.
        if text.len() + line.len() + 1 > SNAPSHOT_CHARS - 120 {
            text.push_str(&format!(
                "[snapshot cut at {SNAPSHOT_CHARS} characters: {} more lines; scroll, or act on what is shown]\n",
                lines.len() - index
            ));
            break;
        }
        text.push_str(line);
        text.push('\n');
    }
    Ok(text)
}

/// Runs `body` on the element with `reference`, as `el` in a function body; the refs come from
/// [`snapshot`], found across shadow roots.
pub async fn on_element(page: &Page, reference: &str, body: &str) -> Result<Value, BrowserError> {
    let reference_json = serde_json::to_string(reference).unwrap_or_default();
    let script = format!(
        "(async () => {{ const el = window.__larikFind ? window.__larikFind({reference_json}) : null; if (!el) return {{missing: true}}; {body} }})()"
    );
    let value = evaluate(page, &script).await?;
    if value.get("missing").is_some() {
        return Err(BrowserError::NotOnPage(format!(
            "No element has the ref {reference} on this page now; take a new browser_snapshot for current refs."
        )));
    }
    Ok(value)
}

/// Scrolls the element into view and returns its centre in viewport coordinates.
async fn centre(page: &Page, reference: &str) -> Result<(f64, f64), BrowserError> {
    let value = on_element(page, reference, "el.scrollIntoView({block: 'center', inline: 'center', behavior: 'instant'}); const r = el.getBoundingClientRect(); return {x: r.left + r.width / 2, y: r.top + r.height / 2, w: r.width, h: r.height};").await?;
    if value["w"].as_f64() == Some(0.0) && value["h"].as_f64() == Some(0.0) {
        return Err(BrowserError::NotOnPage(format!(
            "The element {reference} takes no space on the page (hidden?); nothing to click."
        )));
    }
    Ok((value["x"].as_f64().unwrap_or_default(), value["y"].as_f64().unwrap_or_default()))
}

/// A left click at the element's centre, as mouse events.
pub async fn click(page: &Page, reference: &str) -> Result<(), BrowserError> {
    let (x, y) = centre(page, reference).await?;
    for (kind, count) in [
        (DispatchMouseEventType::MouseMoved, 0),
        (DispatchMouseEventType::MousePressed, 1),
        (DispatchMouseEventType::MouseReleased, 1),
    ] {
        let mut event = DispatchMouseEventParams::builder().r#type(kind).x(x).y(y);
        if count > 0 {
            event = event.button(MouseButton::Left).buttons(1).click_count(count);
        }
        page.execute(event.build().map_err(BrowserError::Command)?)
            .await
            .map_err(BrowserError::not("the click was not delivered"))?;
    }
    Ok(())
}

/// Focuses the field and empties it through the native value setter (so frameworks that keep
/// their own copy of the value hear of it).
pub async fn focus_and_clear(page: &Page, reference: &str) -> Result<(), BrowserError> {
    on_element(
        page,
        reference,
        "el.scrollIntoView({block: 'center', behavior: 'instant'}); el.focus();
         if (el.isContentEditable) { document.execCommand('selectAll'); document.execCommand('delete'); return {}; }
         const proto = el instanceof HTMLTextAreaElement ? HTMLTextAreaElement.prototype : el instanceof HTMLSelectElement ? HTMLSelectElement.prototype : HTMLInputElement.prototype;
         const setter = Object.getOwnPropertyDescriptor(proto, 'value')?.set;
         if (!setter) return {notField: true};
         setter.call(el, ''); el.dispatchEvent(new Event('input', {bubbles: true}));
         return {};",
    )
    .await
    .and_then(|value| match value.get("notField") {
        Some(_) => Err(BrowserError::NotOnPage(format!("The element {reference} is not a text field."))),
        None => Ok(()),
    })
}

/// Types `text` into the focused element, one key event per character.
pub async fn type_text(page: &Page, text: &str) -> Result<(), BrowserError> {
    for character in text.chars() {
        if character == '\n' {
            press(page, "Enter").await?;
            continue;
        }
        let text = character.to_string();
        let key = chromiumoxide::keys::USKEYBOARD_LAYOUT.iter().find(|definition| definition.key == text);
        let mut down = DispatchKeyEventParams::builder()
            .r#type(DispatchKeyEventType::KeyDown)
            .key(text.clone())
            .text(text.clone())
            .unmodified_text(text.clone());
        if let Some(key) = key {
            down = down.code(key.code).windows_virtual_key_code(key.key_code);
        }
        send_key(page, down.build()).await?;
        send_key(page, DispatchKeyEventParams::builder().r#type(DispatchKeyEventType::KeyUp).key(text).build()).await?;
    }
    Ok(())
}

/// Presses a key by name (`Enter`, `Tab`, `Escape`, `ArrowDown`, `a`), with modifiers written
/// before it (`Control+a`, `Shift+Tab`).
pub async fn press(page: &Page, combination: &str) -> Result<(), BrowserError> {
    let mut parts: Vec<&str> = combination.split('+').collect();
    let name = match parts.pop() {
        Some("") | None => "+",
        Some(name) => name,
    };
    let mut modifiers = 0;
    for modifier in parts {
        modifiers |= match modifier.to_ascii_lowercase().as_str() {
            "alt" | "option" => 1,
            "control" | "ctrl" => 2,
            "meta" | "command" | "cmd" => 4,
            "shift" => 8,
            other => {
                return Err(BrowserError::NotOnPage(format!(
                    "`{other}` is not a modifier (Alt, Control, Meta, Shift)"
                )));
            }
        };
    }
    let name = if name.eq_ignore_ascii_case("space") { " " } else { name };
    let key = chromiumoxide::keys::USKEYBOARD_LAYOUT
        .iter()
        .find(|definition| definition.key == name || definition.key.eq_ignore_ascii_case(name) && name.len() > 1)
        .ok_or_else(|| {
            BrowserError::NotOnPage(format!(
                "`{name}` is not a key this tool knows (Enter, Tab, Escape, Backspace, ArrowDown, PageDown, a, ...)"
            ))
        })?;
    // Text is typed only for keys that make some, and not while Control, Alt or Meta are down.
    let text = key
        .text
        .map(str::to_owned)
        .or_else(|| (key.key.chars().count() == 1).then(|| key.key.to_owned()))
        .filter(|_| modifiers & 7 == 0);
    let mut down = DispatchKeyEventParams::builder()
        .r#type(if text.is_some() { DispatchKeyEventType::KeyDown } else { DispatchKeyEventType::RawKeyDown })
        .key(key.key)
        .code(key.code)
        .windows_virtual_key_code(key.key_code)
        .modifiers(modifiers);
    if let Some(text) = &text {
        down = down.text(text.clone()).unmodified_text(text.clone());
    }
    send_key(page, down.build()).await?;
    send_key(
        page,
        DispatchKeyEventParams::builder()
            .r#type(DispatchKeyEventType::KeyUp)
            .key(key.key)
            .code(key.code)
            .windows_virtual_key_code(key.key_code)
            .modifiers(modifiers)
            .build(),
    )
    .await
}

async fn send_key(page: &Page, event: Result<DispatchKeyEventParams, String>) -> Result<(), BrowserError> {
    page.execute(event.map_err(BrowserError::Command)?)
        .await
        .map(drop)
        .map_err(BrowserError::not("the key was not delivered"))
}

/// Waits until the document says it is complete, trying again while an old document is torn
/// down under the question; gives up quietly after [`LOAD_WAIT`].
pub async fn wait_for_load(page: &Page) {
    let deadline = tokio::time::Instant::now() + LOAD_WAIT;
    while tokio::time::Instant::now() < deadline {
        if let Ok(Value::String(state)) = evaluate(page, "document.readyState").await
            && state == "complete"
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Goes `step` entries through the tab's history (-1 back, 1 forward) by entry, which does not
/// wait for a load event a page from the back/forward cache never fires.
pub async fn go_in_history(page: &Page, step: i64) -> Result<String, BrowserError> {
    let history = page
        .execute(GetNavigationHistoryParams::default())
        .await
        .map_err(BrowserError::not("the history could not be read"))?;
    let target = history.result.current_index + step;
    let Some(entry) = usize::try_from(target).ok().and_then(|index| history.result.entries.get(index)) else {
        return Err(BrowserError::NotOnPage(if step < 0 {
            "There is no earlier page in this tab's history.".into()
        } else {
            "There is no later page in this tab's history.".into()
        }));
    };
    let url = entry.url.clone();
    let mut loading =
        page.event_listener::<EventFrameStartedLoading>().await.map_err(BrowserError::not("no page events"))?;
    page.execute(NavigateToHistoryEntryParams::new(entry.id)).await.map_err(BrowserError::not("could not go there"))?;
    // A page from the back/forward cache starts no load; any other does, soon.
    if tokio::time::timeout(NAVIGATION_START, loading.next()).await.is_ok() {
        wait_for_load(page).await;
    }
    Ok(url)
}

/// What a screenshot covers.
#[derive(Clone, Copy)]
pub enum Capture<'a> {
    Viewport,
    FullPage,
    Element(&'a str),
}

/// A JPEG of the viewport, the page (cut at 5000 CSS pixels) or one element (padded), at one
/// image pixel per CSS pixel; with `labels`, each ref in view outlined and tagged for the
/// capture only. Returns the image (base64) and its size in pixels.
pub async fn screenshot(page: &Page, capture: Capture<'_>, labels: bool) -> Result<(String, u32, u32), BrowserError> {
    let area = match capture {
        Capture::Viewport => evaluate(page, "({x: scrollX, y: scrollY, width: innerWidth, height: innerHeight, dpr: devicePixelRatio})").await?,
        Capture::FullPage => evaluate(page, "(() => { const d = document.documentElement; return {x: 0, y: 0, width: Math.max(d.scrollWidth, innerWidth), height: Math.max(d.scrollHeight, document.body ? document.body.scrollHeight : 0), dpr: devicePixelRatio}; })()").await?,
        Capture::Element(reference) => {
            let script = format!("el.scrollIntoView({{block: 'center', behavior: 'instant'}}); const r = el.getBoundingClientRect(); const p = {ELEMENT_PADDING}; return {{x: Math.max(0, r.left + scrollX - p), y: Math.max(0, r.top + scrollY - p), width: r.width + 2 * p, height: r.height + 2 * p, dpr: devicePixelRatio}};");
            on_element(page, reference, &script).await?
        }
    };
    let number = |key: &str| area[key].as_f64().unwrap_or_default();
    let (width, height) =
        (number("width").round().max(1.0), number("height").min(FULL_PAGE_CSS_PIXELS).round().max(1.0));
    let dpr = if number("dpr") > 0.0 { number("dpr") } else { 1.0 };
    if labels {
        snapshot(page).await?;
        evaluate(page, &format!("({LABELS_SCRIPT})(true)")).await?;
    }
    let clip = Viewport { x: number("x"), y: number("y"), width, height, scale: 1.0 / dpr };
    let params = CaptureScreenshotParams {
        format: Some(CaptureScreenshotFormat::Jpeg),
        quality: Some(80),
        clip: Some(clip),
        capture_beyond_viewport: Some(!matches!(capture, Capture::Viewport)),
        ..CaptureScreenshotParams::default()
    };
    let shot = page.execute(params).await;
    if labels {
        // The overlay goes whatever the capture did.
        evaluate(page, &format!("({LABELS_SCRIPT})(false)")).await?;
    }
    let shot = shot.map_err(BrowserError::not("the screenshot failed"))?;
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let size = (width as u32, height as u32);
    Ok((AsRef::<str>::as_ref(&shot.result.data).to_owned(), size.0, size.1))
}
